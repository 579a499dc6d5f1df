"""FlashAttention-2 forward, one CTA, as a warpsim program: the recipe shared with the CuTe C++ and CuTe DSL
versions (issue 15; ``examples/cute_cpp/flash_fwd.cu``).

Run: ``warpsim run examples/flash_fwd.py --param dtype=bf16 --param d=128 --param causal=yes --param n=100``

Q, K, V, O are row-major ``[n, d]`` in ``dtype`` (one batch, one head), LSE is f32 ``[n]``. The program is
the CTA of the last 64-row Q block (block ``ceil(n/64) - 1``; the recipe's grid is ``(ceil(n/64), H, B)``
of such CTAs): 4 warps, warp ``w`` owning rows ``16w .. 16w+15`` of the block. Params: ``dtype`` f16 or
bf16, ``d`` (head dim) 64 or 128, ``causal`` no or yes, ``n`` (sequence length) 128, 100 or 512 (100: a tail:
rows and columns past ``n`` are predicated). ``scale_log2 = f32(1/sqrt(d)) * f32(log2 e)`` and
``softmax_scale = f32(1/sqrt(d))`` are f32 constants of the program (the kernel arguments of the C++).

Per CTA, as the recipe says:

1. Q (64 x d) global -> shared (``Swizzle<3,3,3>`` layout, 128-bit, rows >= n zero-filled by
   ``copy_if``), then to registers with ldmatrix (the A fragments of ``mma.m16n8k16``, f32 accumulate).
2. ``m = -inf``, ``l = 0`` per row, ``acc_o = 0``; for each K/V tile ``j`` (causal: ``j <= block``): K, V
   global -> shared (rows >= n zero-filled), S = Q K^T (K by ldmatrix), masked to -inf where
   ``column >= n`` or (causal) ``column > row`` on the tiles that have such columns; the online softmax
   row by row (row max from ``m_old`` in fragment order, ``shfl.sync.bfly`` 2 then 1; ``m_use``;
   ``alpha = ex2((m_old - m_use) * scale_log2)``; ``l *= alpha``, ``acc_o *= alpha``; ``p = ex2(fma(s,
   scale_log2, -(m_use * scale_log2)))``; ``l += p``); P converted to ``dtype`` (``cvt.rn.*x2.f32``) and
   viewed as the A operand (two 16x8 C tiles are one 16x16 A tile); ``acc_o += P V`` (V by ldmatrix.trans).
3. ``l`` summed over the quad; ``inv = (l == 0 or NaN) ? 1 : 1 / l`` (``div.rn.f32``); O = ``acc_o * inv``
   in ``dtype``, stored (rows >= n not); ``LSE = (l == 0 or NaN) ? +inf : m * softmax_scale + lg2(l) *
   0.69314718`` (the fast-math C++ form of ``ln``), stored by the thread holding column 0 of the row.

``reference`` (what ``warpsim run`` checks against) applies the same arithmetic to whole arrays with the
ISA's batched models, without fragments, layouts or instructions; O and LSE agree bit for bit.

Differences from the C++ version: the K/V tiles are not double-buffered (one buffer each, filled between
two barriers: the simulator runs warps in a fixed order, so prefetching changes no result), and global ->
shared goes through registers (``ld.global.v4`` + ``st.shared.v4``; the zero fill by clearing the
registers first) where the C++ uses ``cp.async`` with a source size of 0 for the fill. The arithmetic, in
order, is the recipe's.
"""

import operator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import warpsim
from warpsim.cute import (
    Copy_Atom, SM75_U16x8_LDSM_T, SM75_U32x4_LDSM_N, SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x16_F32F16F16F32_TN,
    Swizzle, UniversalCopy, _, composition, get, logical_divide, make_fragment_like, make_gmem_ptr,
    make_identity_tensor, make_layout, make_smem_ptr, make_tensor, make_tiled_copy, make_tiled_copy_A,
    make_tiled_copy_B, make_tiled_mma, partition_fragment_C, size, tile_to_shape,
)
from warpsim.isa.cvt import cvt_convert
from warpsim.isa.fpbatch import float_arith, float_minmax, float_setp, float_sign
from warpsim.isa.mufu32 import mufu_batch
from warpsim.program.reference import gemm_reference
from warpsim.program import (
    allreduce, clear, convert, copy, copy_if, equ, exp2, fma, fmax, gemm, log2, reduce_max, reduce_sum, syncthreads,
    where,
)

BLOCK_M = BLOCK_N = 64
THREADS = 128
LN2 = 0.69314718          # ln(x) = lg2(x) * LN2, as __logf computes it


@dataclass(frozen=True)
class FlashTraits:
    """The C++ version's ``FlashTraits<T, kHeadDim>``, built once per (dtype, d)."""

    tiled_mma: object
    smem_layout_q: object          # (row, d) -> smem element
    smem_layout_kv: object         # (key, d) -> smem element
    smem_layout_vt: object         # (d, key) -> smem element: V read transposed
    smem_layout_vt_shape: object   # (d, key): only the shape, for the B fragment of P V
    gmem_tiled_copy: object
    smem_copy_atom: object
    smem_copy_atom_transposed: object
    smem_q: int                    # byte addresses of sQ, sK, sV
    smem_k: int
    smem_v: int
    smem_bytes: int


@lru_cache(maxsize=None)
def flash_traits(dtype, d):
    mma_op = SM80_16x8x16_F32F16F16F32_TN() if dtype == "f16" else SM80_16x8x16_F32BF16BF16F32_TN()
    tiled_mma = make_tiled_mma(mma_op, make_layout((4, 1, 1)), (64, 16, 16))
    # (8,64) -> smem element: 8 rows of 64 elements, XOR-swizzled in 16-byte chunks
    atom = composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1)))
    smem_layout_kv = tile_to_shape(atom, (BLOCK_N, d))
    tile_bytes = BLOCK_N * d * 2
    return FlashTraits(
        tiled_mma=tiled_mma,
        smem_layout_q=tile_to_shape(atom, (BLOCK_M, d)),
        smem_layout_kv=smem_layout_kv,
        smem_layout_vt=composition(smem_layout_kv, make_layout((d, BLOCK_N), (BLOCK_N, 1))),
        smem_layout_vt_shape=make_layout((d, BLOCK_N)),
        gmem_tiled_copy=make_tiled_copy(Copy_Atom(UniversalCopy(128), dtype),
                                        make_layout((16, 8), (8, 1)),   # (16,8) -> thread: 8 threads per row
                                        make_layout((1, 8))),           # (1,8) -> value: 8 elements, 128 bits
        smem_copy_atom=Copy_Atom(SM75_U32x4_LDSM_N(), dtype),
        smem_copy_atom_transposed=Copy_Atom(SM75_U16x8_LDSM_T(), dtype),
        smem_q=0, smem_k=tile_bytes, smem_v=2 * tile_bytes, smem_bytes=3 * tile_bytes,
    )


def rowcol(acc):
    """An accumulator layout (MMA=(2,2), MMA_M, MMA_N) as rows x columns: ((2, MMA_M), (2, MMA_N))."""
    l = logical_divide(acc, (2,))                                  # ((2, 2), MMA_M, MMA_N)
    return make_layout(make_layout(get(l, 0, 1), get(l, 1)), make_layout(get(l, 0, 0), get(l, 2)))


def c_to_a(acc):
    """An accumulator layout (MMA=4, MMA_M, MMA_N) as the A operand of the next m16n8k16:
    ((4, 2), MMA_M, MMA_N/2); A value v + 4h of k-block kk is C value v of tile 2kk + h."""
    l = logical_divide(acc, (_, _, 2))                             # (MMA, MMA_M, (2, MMA_N/2))
    return make_layout(make_layout(get(l, 0), get(l, 2, 0)), get(l, 1), get(l, 2, 1))


def pairs(acc):
    """An accumulator layout (MMA=(2,2), MMA_M, MMA_N) as (2, ((2, MMA_M), MMA_N)): mode 0 the two
    adjacent columns of one register pair, mode 1 the pairs (row half fastest)."""
    rc = rowcol(acc)                                               # ((2, MMA_M), (2, MMA_N))
    return make_layout(get(rc, 1, 0), make_layout(get(rc, 0), get(rc, 1, 1)))


def row_predicates(coord, row0, rows_left):
    """One entry per atom call of a (CPY, CPY_M, CPY_K) partition, in copy order (CPY_M fastest): whether
    the call's row (``coord``: the partition of an identity tensor, offset by ``row0``) is < ``rows_left``."""
    return [get_row(coord[0, m, k]) + row0 < rows_left
            for k in range(size(coord, 2)) for m in range(size(coord, 1))]


def get_row(c):
    return c[0]


def gmem_tile(t, row0, d, dtype):
    """Rows ``row0 .. row0+63`` of a row-major (n, d) global tensor as a (64, d) tile (it may reach past
    the buffer's end: those rows are predicated off)."""
    return make_tensor(make_gmem_ptr(t.address(0, 0) + row0 * d * 2, dtype), make_layout((BLOCK_M, d), (d, 1)))


def kernel(tid, *, dtype, d, causal, n, q, k, v, o, lse):
    """One thread of the CTA of the last Q block (see the module docstring)."""
    traits = flash_traits(dtype, d)
    tiled_mma = traits.tiled_mma
    block = (n + BLOCK_M - 1) // BLOCK_M - 1
    row0 = block * BLOCK_M
    scale = np.float32(1 / np.sqrt(d))
    scale_log2 = make_tensor("f32", (1,))                          # the kernel arguments, in registers
    softmax_scale = make_tensor("f32", (1,))
    scale_log2[0] = float(scale * np.float32(1.4426950408889634))  # f32 * f32, rounded once
    softmax_scale[0] = float(scale)
    n_tiles = block + 1 if causal == "yes" else (n + BLOCK_N - 1) // BLOCK_N

    sQ = make_tensor(make_smem_ptr(traits.smem_q, dtype), traits.smem_layout_q)
    sK = make_tensor(make_smem_ptr(traits.smem_k, dtype), traits.smem_layout_kv)
    sV = make_tensor(make_smem_ptr(traits.smem_v, dtype), traits.smem_layout_kv)
    sVt = make_tensor(make_smem_ptr(traits.smem_v, dtype), traits.smem_layout_vt)

    # 1. Q: global -> shared (rows >= n zero-filled) -> registers
    gmem_thr_copy = traits.gmem_tiled_copy.get_slice(tid)
    tQcQ = gmem_thr_copy.partition_S(make_identity_tensor((BLOCK_M, d)))      # (CPY, CPY_M, CPY_K) -> (row, col)
    tQgQ = gmem_thr_copy.partition_S(gmem_tile(q, row0, d, dtype))
    copy_if(traits.gmem_tiled_copy, row_predicates(tQcQ, row0, n), tQgQ, gmem_thr_copy.partition_D(sQ))
    tKsK, tVsV = gmem_thr_copy.partition_D(sK), gmem_thr_copy.partition_D(sV)
    syncthreads()

    thr_mma = tiled_mma.get_slice(tid)
    tSrQ = thr_mma.partition_fragment_A(sQ)                                    # (MMA, MMA_M, MMA_K)
    tSrK = thr_mma.partition_fragment_B(sK)                                    # (MMA, MMA_N, MMA_K)
    tOrVt = thr_mma.partition_fragment_B(make_tensor(make_smem_ptr(traits.smem_v, dtype), traits.smem_layout_vt_shape))
    acc_o = partition_fragment_C(tiled_mma, (BLOCK_M, d))                      # (MMA, MMA_M, MMA_N) f32
    acc_s = partition_fragment_C(tiled_mma, (BLOCK_M, BLOCK_N))
    clear(acc_o)
    smem_tiled_copy_Q = make_tiled_copy_A(traits.smem_copy_atom, tiled_mma)
    smem_thr_copy_Q = smem_tiled_copy_Q.get_slice(tid)
    copy(smem_tiled_copy_Q, smem_thr_copy_Q.partition_S(sQ), smem_thr_copy_Q.retile_D(tSrQ))
    smem_tiled_copy_K = make_tiled_copy_B(traits.smem_copy_atom, tiled_mma)
    smem_thr_copy_K = smem_tiled_copy_K.get_slice(tid)
    tSsK, tSrK_view = smem_thr_copy_K.partition_S(sK), smem_thr_copy_K.retile_D(tSrK)
    smem_tiled_copy_V = make_tiled_copy_B(traits.smem_copy_atom_transposed, tiled_mma)
    smem_thr_copy_V = smem_tiled_copy_V.get_slice(tid)
    tOsVt, tOrVt_view = smem_thr_copy_V.partition_S(sVt), smem_thr_copy_V.retile_D(tOrVt)

    # (row, col) in the 64x64 tile of each S element this thread holds, as rows x columns
    cS = thr_mma.partition_C(make_identity_tensor((BLOCK_M, BLOCK_N)))
    tScS = cS.with_layout(rowcol(cS.layout))
    s = make_tensor(acc_s.engine, rowcol(acc_s.layout))                       # (rows, cols) of S, then P
    o_rows = make_tensor(acc_o.engine, rowcol(acc_o.layout))                  # (rows, d cols)
    rows = size(s, 0)                                                          # g and g + 8
    m, m_new = make_tensor("f32", (rows,)), make_tensor("f32", (rows,))
    l, neg_max_scaled = make_tensor("f32", (rows,)), make_tensor("f32", (rows,))
    m_use, alpha = make_tensor("f32", (rows,)), make_tensor("f32", (rows,))
    for r in range(rows):
        m[r] = -np.inf
        l[r] = 0.0
    rP = make_fragment_like(acc_s, dtype)
    tOrP = make_tensor(rP.engine, c_to_a(rP.layout))                           # (MMA, MMA_M, MMA_K)

    # 2. the K/V tiles
    for j in range(n_tiles):
        syncthreads()                                                          # sK, sV free again
        kv_rows = row_predicates(tQcQ, j * BLOCK_N, n)
        copy_if(traits.gmem_tiled_copy, kv_rows, gmem_thr_copy.partition_S(gmem_tile(k, j * BLOCK_N, d, dtype)), tKsK)
        copy_if(traits.gmem_tiled_copy, kv_rows, gmem_thr_copy.partition_S(gmem_tile(v, j * BLOCK_N, d, dtype)), tVsV)
        syncthreads()

        # S = Q K^T
        clear(acc_s)
        copy(smem_tiled_copy_K, tSsK, tSrK_view)
        for kk in range(size(tSrQ, 2)):
            gemm(tiled_mma, tSrQ[_, _, kk], tSrK[_, _, kk], acc_s)

        # mask: -inf at column >= n and, causal, at column > row (only the last tile has such columns)
        tail = (j + 1) * BLOCK_N > n
        diagonal = causal == "yes" and j == block
        if tail or diagonal:
            for r in range(rows):
                for c in range(size(s, 1)):
                    row, col = row0 + tScS[r, c][0], j * BLOCK_N + tScS[r, c][1]
                    keep = col < n
                    if diagonal:
                        keep = keep & (col <= row)
                    s[r, c] = where(keep, s[r, c], -np.inf)

        # online softmax (m and m_new swap roles after each tile)
        reduce_max(s, m_new, init=m)                                           # from m_old, in fragment order
        allreduce(m_new, fmax, 4)                                              # shfl.sync.bfly 2, then 1
        for r in range(rows):
            m_use[r] = where(m_new[r] == -np.inf, 0.0, m_new[r])
            alpha[r] = exp2((m[r] - m_use[r]) * scale_log2[0])
            l[r] = l[r] * alpha[r]
            for c in range(size(o_rows, 1)):
                o_rows[r, c] = o_rows[r, c] * alpha[r]
            neg_max_scaled[r] = -(m_use[r] * scale_log2[0])
            for c in range(size(s, 1)):
                s[r, c] = exp2(fma(s[r, c], scale_log2[0], neg_max_scaled[r]))
        reduce_sum(s, l)                                                       # l += p, thread-local
        m, m_new = m_new, m

        # P in dtype, re-laid out as the A operand; O += P V
        convert(acc_s, rP)
        copy(smem_tiled_copy_V, tOsVt, tOrVt_view)
        for kk in range(size(tOrP, 2)):
            gemm(tiled_mma, tOrP[_, _, kk], tOrVt[_, _, kk], acc_o)

    # 3. O = acc_o / l in dtype; LSE = m * softmax_scale + ln l; rows >= n not stored
    allreduce(l, operator.add, 4)
    inv = make_tensor("f32", (rows,))
    lse_r = make_tensor("f32", (rows,))
    for r in range(rows):
        inv[r] = where(equ(l[r], 0.0), 1.0, 1.0 / l[r])
        for c in range(size(o_rows, 1)):
            o_rows[r, c] = o_rows[r, c] * inv[r]
        lse_r[r] = where(equ(l[r], 0.0), np.inf, m[r] * softmax_scale[0] + log2(l[r]) * LN2)
    rO = make_fragment_like(acc_o, dtype)
    convert(acc_o, rO)
    tOgO = thr_mma.partition_C(gmem_tile(o, row0, d, dtype))                  # (MMA, MMA_M, MMA_N) -> global
    tOcO = thr_mma.partition_C(make_identity_tensor((BLOCK_M, d)))
    tOcO_pairs = tOcO.with_layout(pairs(tOcO.layout))
    o_pred = [tOcO_pairs[0, i][0] + row0 < n for i in range(size(tOcO_pairs, 1))]
    store = make_tiled_copy(Copy_Atom(UniversalCopy(32), dtype), make_layout(1), make_layout(2))   # a pair per st
    copy_if(store, o_pred, rO.with_layout(pairs(rO.layout)), tOgO.with_layout(pairs(tOgO.layout)))
    gLSE = make_tensor(make_gmem_ptr(lse.address(0) + row0 * 4, "f32"), make_layout((BLOCK_M, d), (1, 0)))
    tLgL = thr_mma.partition_C(gLSE)                                           # each row's LSE, at every column
    lse_dst = tLgL.with_layout(rowcol(tLgL.layout))[_, 0]                      # (rows,): the thread's rows
    lse_pred = [(tScS[r, 0][1] == 0) & (tScS[r, 0][0] + row0 < n) for r in range(rows)]
    copy_if(Copy_Atom(UniversalCopy(32), "f32"), lse_pred, lse_r.compose(make_layout((1, rows))),
            lse_dst.compose(make_layout((1, rows))))


NEG_INF, POS_INF, ONE = np.uint32(0xFF800000), np.uint32(0x7F800000), np.uint32(0x3F800000)


def reference(params, inputs, arch):
    """The expected O and LSE bits: the recipe's arithmetic on whole arrays, from the ISA's batched
    models (``gemm_reference`` for the mma chains, ``float_arith``, ``mufu_batch``, ``cvt_convert``), with
    no fragments, registers or instructions. A row's values live in the 4 lanes of a quad, lane ``t``
    holding columns ``8i + 2t, 8i + 2t + 1``: the row max and sum are taken per lane in that order, then
    combined over the quad (lane ``t`` with ``t ^ 2``, then ``t ^ 1``), as the program does."""
    dtype, d, causal, n = params["dtype"], params["d"], params["causal"] == "yes", params["n"]
    block = (n + BLOCK_M - 1) // BLOCK_M - 1
    row0 = block * BLOCK_M
    n_tiles = block + 1 if causal else (n + BLOCK_N - 1) // BLOCK_N
    scale = np.float32(1 / np.sqrt(d))
    sl2 = np.uint32(np.float32(scale * np.float32(1.4426950408889634)).view(np.uint32))
    ss = np.uint32(scale.view(np.uint32))

    def rows_of(x, start):                                       # 64 rows from ``start``, zero past n
        out = np.zeros((BLOCK_M, d), np.uint16)
        take = max(0, min(BLOCK_M, n - start))
        out[:take] = np.asarray(x, np.uint16)[start:start + take]
        return out

    def f(op, *xs):
        return float_arith(op, *(np.asarray(x, np.uint32) for x in xs), rnd="rn")

    lane = (np.arange(BLOCK_N) % 8) // 2                         # the quad lane holding each column
    order = [np.flatnonzero(lane == t) for t in range(4)]        # its columns, in fragment order
    q = rows_of(inputs["q"], row0)
    rows = row0 + np.arange(BLOCK_M)
    m = np.full((BLOCK_M, 4), NEG_INF, np.uint32)                # per row and quad lane
    l = np.zeros((BLOCK_M, 4), np.uint32)
    acc_o = np.zeros((BLOCK_M, d), np.uint32)
    for j in range(n_tiles):
        k_t, v_t = rows_of(inputs["k"], j * BLOCK_N), rows_of(inputs["v"], j * BLOCK_N)
        s = gemm_reference(q, k_t, ab=dtype, cd="f32", arch=arch)
        cols = j * BLOCK_N + np.arange(BLOCK_N)
        masked = (cols[None, :] >= n) | (causal & (cols[None, :] > rows[:, None]))
        s = np.where(masked, NEG_INF, s).astype(np.uint32)
        m_new = m.copy()
        for t in range(4):
            for c in order[t]:
                m_new[:, t] = float_minmax("max", m_new[:, t], s[:, c])
        for k in (2, 1):
            m_new = float_minmax("max", m_new, m_new[:, np.arange(4) ^ k])
        m_use = np.where(float_setp("eq", m_new, np.full_like(m_new, NEG_INF)), np.uint32(0), m_new)
        alpha = mufu_batch("ex2", f("mul", f("sub", m, m_use), np.full_like(m, sl2)), ftz=True)
        l = f("mul", l, alpha)
        acc_o = f("mul", acc_o, alpha[:, (np.arange(d) % 8) // 2])
        neg_max_scaled = float_sign("neg", f("mul", m_use, np.full_like(m_use, sl2)))
        p = mufu_batch("ex2", f("fma", s, np.full_like(s, sl2), neg_max_scaled[:, lane]), ftz=True)
        for t in range(4):
            for c in order[t]:
                l[:, t] = f("add", l[:, t], p[:, c])
        p16 = cvt_convert(p, dst=dtype, src="f32", rnd="rn").astype(np.uint16)
        acc_o = gemm_reference(p16, v_t.T, ab=dtype, cd="f32", arch=arch, c=acc_o)
        m = m_new
    for k in (2, 1):
        l = f("add", l, l[:, np.arange(4) ^ k])
    empty = float_setp("equ", l, np.zeros_like(l))
    inv = np.where(empty, ONE, f("div", np.full_like(l, ONE), l))
    o_block = cvt_convert(f("mul", acc_o, inv[:, (np.arange(d) % 8) // 2]), dst=dtype, src="f32", rnd="rn")
    ln_l = f("mul", mufu_batch("lg2", l, ftz=True), np.full_like(l, np.float32(LN2).view(np.uint32)))
    lse_block = np.where(empty, POS_INF, f("add", f("mul", m, np.full_like(m, ss)), ln_l))[:, 0]
    o = np.zeros((n, d), np.uint16)
    lse = np.zeros(n, np.uint32)
    take = n - row0
    o[row0:] = o_block[:take]
    lse[row0:] = lse_block[:take]
    return {"o": o, "lse": lse}


def _inputs(p):
    return {name: ((p["n"], p["d"]), p["dtype"]) for name in ("q", "k", "v")}


def _outputs(p):
    return {"o": ((p["n"], p["d"]), p["dtype"]), "lse": ((p["n"],), "f32")}


program = warpsim.Program(
    kernel,
    threads=THREADS,
    params={"dtype": ("f16", "bf16"), "d": (64, 128), "causal": ("no", "yes"), "n": (128, 100, 512)},
    inputs=_inputs,
    outputs=_outputs,
    smem_bytes=lambda p: flash_traits(p["dtype"], p["d"]).smem_bytes,
    reference=reference,
    name="flash_fwd",
)
