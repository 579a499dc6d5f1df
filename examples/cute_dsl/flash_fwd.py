"""FlashAttention-2 forward in CuTe DSL: the recipe shared with ``examples/cute_cpp/flash_fwd.cu`` and
``examples/flash_fwd.py``, so that the three run the same instruction sequence.

``O = softmax(Q K^T * softmax_scale) V`` and ``LSE = log(sum exp(Q K^T * softmax_scale))`` per row, with
Q, K, V, O row-major contiguous ``[B, H, N, d]`` in ``T`` (f16 or bf16) and LSE f32 ``[B, H, N]``.
One CTA per (64-row Q block, head, batch): grid ``(ceil(N / 64), H, B)``, 128 threads (warp w owns Q rows
16w..16w+15 of the block), dynamic shared memory ``smem_bytes(d)`` (Q, and two stages of K and V).

Kernel parameters (in order): pointers ``q, k, v, o, lse``; ``s32 N`` (any N >= 1, a run-time value);
``f32 scale_log2`` (= ``np.float32(1/np.sqrt(d)) * np.float32(log2(e))``) and ``f32 softmax_scale``.
T, d and causal are compile-time: :data:`VARIANTS` names one kernel per combination,
``flash_fwd_{f16|bf16}_d{64|128}[_causal]``, each its own ``WARPSIM`` entry (one PTX module each).

Per CTA (README, "Flash attention forward in CuTe DSL"):

1. Q (64 x d) global -> shared by ``cp.async`` 16 bytes per thread into ``Swizzle<3,3,3>`` tiles (rows >= N
   zero-filled by ``st.shared``), then to registers by ``ldmatrix`` (the A fragments of m16n8k16).
2. K/V tiles of 64 rows, double-buffered: tile j+1 is in flight (``cp.async`` group) while tile j is used.
3. ``S = Q K^T`` by ``mma.sync.m16n8k16`` from +0, K by ``ldmatrix`` as the B operand.
4. ``S = -inf`` where column >= N and (causal) where column > row.
5. Row max: ``max.f32`` over the thread's elements of the row in fragment order from m_old, then
   ``shfl.sync.bfly`` 2 and 1 with ``max.f32``.
6. ``m_use = m_new == -inf ? 0 : m_new``; ``alpha = ex2((m_old - m_use) * scale_log2)``; l and O scaled by alpha.
7. ``p = ex2(fma(s, scale_log2, -(m_use * scale_log2)))``; 8. ``l += p`` thread-locally in fragment order.
9. P packed to T by ``cvt.rn.{f16x2,bf16x2}.f32`` in the A-fragment order, ``O += P V`` with V by
   ``ldmatrix.trans``.
10. ``l_row`` = l summed over the quad (``shfl.sync.bfly`` 2, 1); ``O = O * (1 / l_row)`` (``div.rn.f32``,
    1 where l_row is 0 or NaN) stored as T; ``LSE = m * softmax_scale + lg2(l_row) * 0.69314718``
    (+inf where l_row is 0 or NaN) stored by the thread holding column 0. Rows >= N are not stored.

The float arithmetic is written as inline PTX (``ex2.approx.ftz.f32``, ``fma.rn.f32``, ``mul.rn.f32``, ...):
the DSL's own ``a * b + c`` becomes an ``fma`` by LLVM's contraction, and its ``mul.f32`` / ``add.f32``
without a rounding mode may be fused by ``ptxas`` -- both would change bits against the recipe.

Launch from Python (simulator; ``launch_args`` makes the grid, shared bytes and arguments)::

    kern = open_kernel("examples/cute_dsl/flash_fwd.py", "flash_fwd_f16_d64")
    grid, smem, args = launch_args(q, k, v)            # [B, H, N, d] each
    out = kern.buffers(kern.launch(grid=grid, block=128, smem=smem, args=args))    # out["o"], out["lse"]

From the command line (scalars as ``NAME=VALUE``; the f32 scales written exactly, as ``repr`` of the float)::

    warpsim run examples/cute_dsl/flash_fwd.py --kernel flash_fwd_f16_d64 --arch sm_80 --grid 2,1,1 \\
        --block 128 --smem 40960 --arg q=q.npy --arg k=k.npy --arg v=v.npy --arg o=zeros:f16:1x1x80x64 \\
        --arg lse=zeros:f32:1x1x80 --arg N=80 --arg scale_log2=0.1803368777036667 --arg softmax_scale=0.125 \\
        --dump o,lse --out out
"""

import math

import cutlass
import numpy as np
import cutlass.cute as cute
from cutlass._mlir.dialects import llvm
from cutlass.cute.nvgpu import cpasync, warp
from cutlass.cutlass_dsl import T, dsl_user_op
from cutlass.cute.runtime import make_ptr

BLOCK_M = BLOCK_N = 64                  # Q rows per CTA, K/V rows per tile
THREADS = 128                           # 4 warps along M
STAGES = 2                              # K/V tiles in shared memory: one used, one in flight
LN2 = 0.69314718                        # ln(x) = lg2(x) * LN2 (f32 0x3F317218)
DTYPES = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16}
CVT_PACK = {"f16": "cvt.rn.f16x2.f32", "bf16": "cvt.rn.bf16x2.f32"}


def smem_bytes(d):
    """Dynamic shared memory of one CTA: Q (64 x d) and STAGES tiles of K and V (64 x d), 2 bytes each.

    smem_bytes(64) == 40960
    """
    return (BLOCK_M + 2 * STAGES * BLOCK_N) * d * 2


def scales(d):
    """``(scale_log2, softmax_scale)`` as the recipe computes them on the host (numpy float32)."""
    softmax_scale = np.float32(1 / np.sqrt(d))
    return softmax_scale * np.float32(1.4426950408889634), softmax_scale


def launch_args(q, k, v):
    """``(grid, smem, args)`` of one launch on Q, K, V ``[B, H, N, d]`` (16-bit patterns or float16 arrays):
    O zeroed in their dtype, LSE zeroed f32, N and the scales as the recipe computes them.

    launch_args(*[np.zeros((1, 2, 80, 64), np.uint16)] * 3)[:2] == ((2, 2, 1), 40960)
    """
    batches, heads, n, d = q.shape
    scale_log2, softmax_scale = scales(d)
    args = {"q": q, "k": k, "v": v, "o": np.zeros_like(q), "lse": np.zeros((batches, heads, n), np.float32),
            "N": n, "scale_log2": scale_log2, "softmax_scale": softmax_scale}
    return ((n + BLOCK_M - 1) // BLOCK_M, heads, batches), smem_bytes(d), args


# ---------------------------------------------------------------------------------------------- inline PTX
# One instruction each, so that the PTX says exactly what the recipe says (no contraction, no fast math).

def _f32_asm(text, *operands, loc=None, ip=None):
    values = [cutlass.Float32(x).ir_value(loc=loc, ip=ip) for x in operands]
    constraints = ",".join(["=f"] + ["f"] * len(values))
    return cutlass.Float32(llvm.inline_asm(T.f32(), values, text, constraints, has_side_effects=False,
                                           is_align_stack=False, asm_dialect=llvm.AsmDialect.AD_ATT))


@dsl_user_op
def ex2(x, *, loc=None, ip=None):
    """``ex2.approx.ftz.f32``."""
    return _f32_asm("ex2.approx.ftz.f32 $0, $1;", x, loc=loc, ip=ip)


@dsl_user_op
def lg2(x, *, loc=None, ip=None):
    """``lg2.approx.ftz.f32``."""
    return _f32_asm("lg2.approx.ftz.f32 $0, $1;", x, loc=loc, ip=ip)


@dsl_user_op
def add_rn(a, b, *, loc=None, ip=None):
    """``add.rn.f32`` (never fused)."""
    return _f32_asm("add.rn.f32 $0, $1, $2;", a, b, loc=loc, ip=ip)


@dsl_user_op
def sub_rn(a, b, *, loc=None, ip=None):
    """``sub.rn.f32`` (never fused)."""
    return _f32_asm("sub.rn.f32 $0, $1, $2;", a, b, loc=loc, ip=ip)


@dsl_user_op
def mul_rn(a, b, *, loc=None, ip=None):
    """``mul.rn.f32`` (never fused)."""
    return _f32_asm("mul.rn.f32 $0, $1, $2;", a, b, loc=loc, ip=ip)


@dsl_user_op
def fma_rn(a, b, c, *, loc=None, ip=None):
    """``fma.rn.f32``: a * b + c rounded once."""
    return _f32_asm("fma.rn.f32 $0, $1, $2, $3;", a, b, c, loc=loc, ip=ip)


@dsl_user_op
def div_rn(a, b, *, loc=None, ip=None):
    """``div.rn.f32``."""
    return _f32_asm("div.rn.f32 $0, $1, $2;", a, b, loc=loc, ip=ip)


@dsl_user_op
def cvt_pack(instruction, lo, hi, *, loc=None, ip=None):
    """``cvt.rn.{f16x2,bf16x2}.f32 d, hi, lo``: two f32 rounded into one 32-bit register, ``lo`` in bits 0..15."""
    values = [cutlass.Float32(x).ir_value(loc=loc, ip=ip) for x in (hi, lo)]
    return cutlass.Uint32(llvm.inline_asm(T.i32(), values, f"{instruction} $0, $1, $2;", "=r,f,f",
                                          has_side_effects=False, is_align_stack=False,
                                          asm_dialect=llvm.AsmDialect.AD_ATT))


# ---------------------------------------------------------------------------------------------- the kernel

def smem_layout(d, depth):
    """``Swizzle<3,3,3> o (8,64):(64,1)`` tiled to ``(depth, d)`` -> element: 16-byte chunks XOR-swizzled by row."""
    atom = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
    return cute.tile_to_shape(atom, (depth, d), (0, 1))


@cute.jit
def copy_rows(g2s: cute.TiledCopy, src: cute.Tensor, dst: cute.Tensor, coords: cute.Tensor, first_row: cutlass.Int32,
              N: cutlass.Int32):
    """One thread's rows of a 64-row tile, global -> shared by ``g2s`` (cp.async); rows ``first_row + r >= N`` are
    zero-filled (``st.shared`` of +0) instead. ``coords``: the thread's (row, col) of each value, its partition of
    an identity tensor."""
    for r in cutlass.range_constexpr(cute.size(dst, mode=[1])):
        if first_row + coords[0, r, 0][0] < N:
            cute.copy(g2s, src[None, r, None], dst[None, r, None])
        else:
            dst[None, r, None].fill(0)


@cute.kernel
def flash_fwd(q: cute.Pointer, k: cute.Pointer, v: cute.Pointer, o: cute.Pointer, lse: cute.Pointer,
              N: cutlass.Int32, scale_log2: cutlass.Float32, softmax_scale: cutlass.Float32,
              dtype_name: cutlass.Constexpr, d: cutlass.Constexpr, causal: cutlass.Constexpr):
    """The kernel of one variant (the module doc); T, d, causal are compile-time."""
    dtype = DTYPES[dtype_name]
    cvt = CVT_PACK[dtype_name]
    k_blocks = d // 16                     # k-blocks of S = Q K^T
    pv_blocks = BLOCK_N // 16              # k-blocks of O = P V
    chunks = d // 8                        # 16-byte chunks per row

    tid, _, _ = cute.arch.thread_idx()
    m_block, head, batch = cute.arch.block_idx()
    _, heads, _ = cute.arch.grid_dim()
    head_offset = cute.assume((batch * heads + head) * N * d, divby=d)     # elements: keeps 16-byte alignment
    row0 = m_block * BLOCK_M

    # (N, d) -> element of this (batch, head); (N,) -> LSE element
    head_layout = cute.make_layout((N, d), stride=(d, 1))
    mQ = cute.make_tensor(q + head_offset, head_layout)
    mK = cute.make_tensor(k + head_offset, head_layout)
    mV = cute.make_tensor(v + head_offset, head_layout)
    mO = cute.make_tensor(o + head_offset, head_layout)
    mL = cute.make_tensor(lse + (batch * heads + head) * N, cute.make_layout((N,)))
    gQ = cute.local_tile(mQ, (BLOCK_M, d), (m_block, 0))             # (64, d)
    gK = cute.local_tile(mK, (BLOCK_N, d), (None, 0))                # (64, d, tiles)
    gV = cute.local_tile(mV, (BLOCK_N, d), (None, 0))

    smem = cutlass.utils.SmemAllocator()
    sQ = smem.allocate_tensor(dtype, smem_layout(d, BLOCK_M), 128)                     # (64, d)
    sK = smem.allocate_tensor(dtype, smem_layout(d, BLOCK_N * STAGES), 128)            # (64*stages, d)
    sV = smem.allocate_tensor(dtype, smem_layout(d, BLOCK_N * STAGES), 128)
    sK = cute.logical_divide(sK, (BLOCK_N, None))                                      # ((64, stages), d)
    sV = cute.logical_divide(sV, (BLOCK_N, None))

    # global -> shared: 16 bytes per thread, `chunks` threads per row
    g2s = cute.make_tiled_copy_tv(
        cute.make_copy_atom(cpasync.CopyG2SOp(), dtype, num_bits_per_copy=128),
        cute.make_layout((THREADS // chunks, chunks), stride=(chunks, 1)), cute.make_layout((1, 8)))
    thr_g2s = g2s.get_slice(tid)
    tQgQ, tQsQ = thr_g2s.partition_S(gQ), thr_g2s.partition_D(sQ)                      # (CPY, rows, 1)
    tKgK, tVgV = thr_g2s.partition_S(gK), thr_g2s.partition_S(gV)                      # (CPY, rows, 1, tiles)
    tcQ = thr_g2s.partition_S(cute.make_identity_tensor((BLOCK_M, d)))                  # -> (row, col)

    # MMA: 4 warps along M; the N tile of 16 lets ldmatrix.x4 load two n-blocks of B at once
    tiled_mma = cute.make_tiled_mma(warp.MmaF16BF16Op(dtype, cutlass.Float32, (16, 8, 16)),
                                    cute.make_layout((THREADS // 32, 1, 1)), permutation_mnk=(BLOCK_M, 16, 16))
    thr_mma = tiled_mma.get_slice(tid)
    tSrQ = tiled_mma.make_fragment_A(thr_mma.partition_A(sQ))                          # (MMA, 1, d/16)
    tSrK = tiled_mma.make_fragment_B(thr_mma.partition_B(sK[(None, 0), None]))         # (MMA, 8, d/16)
    sVt0 = cute.composition(sV[(None, 0), None], cute.make_layout((d, BLOCK_N), stride=(BLOCK_N, 1)))
    tOrV = tiled_mma.make_fragment_B(thr_mma.partition_B(sVt0))                        # (MMA, d/8, 4)
    acc_S = cute.make_rmem_tensor(thr_mma.partition_shape_C((BLOCK_M, BLOCK_N)), cutlass.Float32)  # ((2,2),1,8)
    acc_O = cute.make_rmem_tensor(thr_mma.partition_shape_C((BLOCK_M, d)), cutlass.Float32)        # ((2,2),1,d/8)
    tScS = thr_mma.partition_C(cute.make_identity_tensor((BLOCK_M, BLOCK_N)))          # -> (row, col)
    acc_O.fill(0.0)

    ldsm = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), dtype)
    ldsm_t = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(True, 4), dtype)
    s2r_Q, s2r_K = cute.make_tiled_copy_A(ldsm, tiled_mma), cute.make_tiled_copy_B(ldsm, tiled_mma)
    s2r_V = cute.make_tiled_copy_B(ldsm_t, tiled_mma)
    thr_s2r_Q, thr_s2r_K, thr_s2r_V = s2r_Q.get_slice(tid), s2r_K.get_slice(tid), s2r_V.get_slice(tid)
    tSrQ_view, tSrK_view, tOrV_view = thr_s2r_Q.retile(tSrQ), thr_s2r_K.retile(tSrK), thr_s2r_V.retile(tOrV)

    # P in T, packed pairs: the C fragments of S ((2,2), 1, 8) and the A fragments of P V ((2,2,2), 1, 4)
    # list the same values in the same register order, so one buffer serves as both
    rP = cute.make_rmem_tensor((cute.size(acc_S) // 2,), cutlass.Uint32)
    tOrP = cute.make_tensor(cute.recast_ptr(rP.iterator, dtype=dtype),
                            cute.make_layout(((2, 2, 2), 1, pv_blocks), stride=((1, 2, 4), 0, 8)))

    row_max = cute.make_rmem_tensor((2,), cutlass.Float32)     # rows g and g+8 of the thread's quad
    row_sum = cute.make_rmem_tensor((2,), cutlass.Float32)
    row_max.fill(-math.inf)
    row_sum.fill(0.0)

    n_tiles = (N + BLOCK_N - 1) // BLOCK_N
    if cutlass.const_expr(causal):
        n_tiles = cutlass.min(n_tiles, m_block + 1)            # tiles whose first column <= the last row

    # prologue: Q in its own group, then K/V tile 0
    copy_rows(g2s, tQgQ, tQsQ, tcQ, row0, N)
    cute.arch.cp_async_commit_group()
    copy_rows(g2s, tKgK[None, None, None, 0], thr_g2s.partition_D(sK[(None, 0), None]), tcQ, 0, N)
    copy_rows(g2s, tVgV[None, None, None, 0], thr_g2s.partition_D(sV[(None, 0), None]), tcQ, 0, N)
    cute.arch.cp_async_commit_group()
    cute.arch.cp_async_wait_group(1)
    cute.arch.sync_threads()
    cute.copy(s2r_Q, thr_s2r_Q.partition_S(sQ), tSrQ_view)

    for j in range(n_tiles):
        stage = j % STAGES
        if j + 1 < n_tiles:
            nxt = 1 - stage
            copy_rows(g2s, tKgK[None, None, None, j + 1], thr_g2s.partition_D(sK[(None, nxt), None]), tcQ,
                      (j + 1) * BLOCK_N, N)
            copy_rows(g2s, tVgV[None, None, None, j + 1], thr_g2s.partition_D(sV[(None, nxt), None]), tcQ,
                      (j + 1) * BLOCK_N, N)
        cute.arch.cp_async_commit_group()                      # maybe empty: wait_group(1) stays right
        cute.arch.cp_async_wait_group(1)
        cute.arch.sync_threads()

        # 3. S = Q K^T
        acc_S.fill(0.0)
        tSsK = thr_s2r_K.partition_S(sK[(None, stage), None])
        for kb in cutlass.range_constexpr(k_blocks):
            cute.copy(s2r_K, tSsK[None, None, kb], tSrK_view[None, None, kb])
            cute.gemm(tiled_mma, acc_S, tSrQ[None, None, kb], tSrK[None, None, kb], acc_S)

        # 4. mask
        for i in cutlass.range_constexpr(cute.size(acc_S)):
            row, col = tScS[i]
            col = col + j * BLOCK_N
            masked = col >= N
            if cutlass.const_expr(causal):
                masked = masked | (col > row + row0)
            acc_S[i] = cutlass.Float32(cutlass.select_(masked, -math.inf, acc_S[i]))

        # 5.-8. online softmax, row by row (value mode (col % 2, row half))
        for half in cutlass.range_constexpr(2):
            m_old = row_max[half]
            m_new = m_old
            for n in cutlass.range_constexpr(cute.size(acc_S, mode=[2])):
                for c in cutlass.range_constexpr(2):
                    m_new = cute.arch.fmax(m_new, acc_S[(c, half), 0, n])
            m_new = cute.arch.fmax(m_new, cute.arch.shuffle_sync_bfly(m_new, offset=2))
            m_new = cute.arch.fmax(m_new, cute.arch.shuffle_sync_bfly(m_new, offset=1))
            m_use = cutlass.Float32(cutlass.select_(m_new == -math.inf, 0.0, m_new))
            alpha = ex2(mul_rn(sub_rn(m_old, m_use), scale_log2))
            l = mul_rn(row_sum[half], alpha)
            for n in cutlass.range_constexpr(cute.size(acc_O, mode=[2])):
                for c in cutlass.range_constexpr(2):
                    acc_O[(c, half), 0, n] = mul_rn(acc_O[(c, half), 0, n], alpha)
            neg_m_scaled = -mul_rn(m_use, scale_log2)
            for n in cutlass.range_constexpr(cute.size(acc_S, mode=[2])):
                for c in cutlass.range_constexpr(2):
                    p = ex2(fma_rn(acc_S[(c, half), 0, n], scale_log2, neg_m_scaled))
                    acc_S[(c, half), 0, n] = p
                    l = add_rn(l, p)
            row_max[half] = m_new
            row_sum[half] = l

        # 9. P to T, O += P V
        for i in cutlass.range_constexpr(cute.size(rP)):
            rP[i] = cvt_pack(cvt, acc_S[2 * i], acc_S[2 * i + 1])
        tOsV = thr_s2r_V.partition_S(
            cute.composition(sV[(None, stage), None], cute.make_layout((d, BLOCK_N), stride=(BLOCK_N, 1))))
        for kb in cutlass.range_constexpr(pv_blocks):
            cute.copy(s2r_V, tOsV[None, None, kb], tOrV_view[None, None, kb])
            cute.gemm(tiled_mma, acc_O, tOrP[None, None, kb], tOrV[None, None, kb], acc_O)
        cute.arch.sync_threads()                               # this stage is read before it is refilled

    # 10. normalise, store O and LSE
    tOcO = thr_mma.partition_C(cute.make_identity_tensor((BLOCK_M, d)))
    for half in cutlass.range_constexpr(2):
        l = row_sum[half]
        l = add_rn(l, cute.arch.shuffle_sync_bfly(l, offset=2))
        l = add_rn(l, cute.arch.shuffle_sync_bfly(l, offset=1))
        empty = (l == 0.0) | (l != l)
        inv = cutlass.Float32(cutlass.select_(empty, 1.0, div_rn(1.0, l)))
        row = row0 + tOcO[(0, half), 0, 0][0]
        if row < N:
            for n in cutlass.range_constexpr(cute.size(acc_O, mode=[2])):
                for c in cutlass.range_constexpr(2):
                    col = tOcO[(c, half), 0, n][1]
                    mO[row, col] = mul_rn(acc_O[(c, half), 0, n], inv).to(dtype)
            if tOcO[(0, half), 0, 0][1] == 0:
                lse_value = add_rn(mul_rn(row_max[half], softmax_scale), mul_rn(lg2(l), LN2))
                mL[row] = cutlass.Float32(cutlass.select_(empty, math.inf, lse_value))


def make_launcher(dtype_name, d, causal):
    """The ``@cute.jit`` launcher of one variant: grid (ceil(N/64), heads, batches). The kernel's PTX name is
    ``<variant_name>_<n>`` (n: the DSL's count of kernels traced before it in this process)."""
    name = variant_name(dtype_name, d, causal)

    @cute.jit
    def launch(q: cute.Pointer, k: cute.Pointer, v: cute.Pointer, o: cute.Pointer, lse: cute.Pointer,
               N: cutlass.Int32, scale_log2: cutlass.Float32, softmax_scale: cutlass.Float32,
               batches: cutlass.Int32, heads: cutlass.Int32):
        flash_fwd.set_name_prefix(name, remove_cutlass_symbol=True, keep_mangled_name=False)
        flash_fwd(q, k, v, o, lse, N, scale_log2, softmax_scale, dtype_name, d, causal).launch(
            grid=((N + BLOCK_M - 1) // BLOCK_M, heads, batches), block=(THREADS, 1, 1), smem=smem_bytes(d))

    return launch


def variant_name(dtype_name, d, causal):
    """``flash_fwd_bf16_d128_causal`` and the like."""
    return f"flash_fwd_{dtype_name}_d{d}" + ("_causal" if causal else "")


VARIANTS = {variant_name(t, d, c): (t, d, c) for t in DTYPES for d in (64, 128) for c in (False, True)}
LAUNCHERS = {name: make_launcher(*spec) for name, spec in VARIANTS.items()}


def _compile_args(dtype_name):
    dtype = DTYPES[dtype_name]
    pointers = [make_ptr(dtype, 16, cute.AddressSpace.gmem, assumed_align=16) for _ in range(4)]
    return (*pointers, make_ptr(cutlass.Float32, 16, cute.AddressSpace.gmem, assumed_align=4),
            cutlass.Int32(64), cutlass.Float32(1.0), cutlass.Float32(1.0), cutlass.Int32(1), cutlass.Int32(1))


# warpsim: one PTX module per variant (see warpsim.frontends.cute_dsl)
WARPSIM = [dict(jit=LAUNCHERS[name], args=lambda t=spec[0]: _compile_args(t)) for name, spec in VARIANTS.items()]
