"""A Hopper GEMM tile in CuTe DSL: one warpgroup, ``wgmma`` from 128-byte swizzled shared memory, a run-time K loop.

``c[m, n] = sum_k a[m, k] * b[n, k]`` with ``a`` (64, K) and ``b`` (64, K) f16 row-major (K-major), ``c`` (64, 64) f32
row-major; K is a run-time value, a multiple of ``BLOCK_K`` (64). Per k-tile the 128 threads ``cp.async`` 16 bytes at a
time into ``K_SW128`` tiles (the GMMA layout atom: 8 rows of 64 halves, ``Swizzle<3,4,3>``), wait, make the writes
visible to the tensor cores' async proxy (``fence.proxy.async.shared::cta``), and issue the tile's four
``wgmma.mma_async.m64n64k16.f32.f16.f16`` (``warpgroup.MmaF16BF16Op``, both operands from shared memory through
matrix descriptors), then ``commit_group`` and ``wait_group 0`` before the next tile overwrites shared memory. The
accumulator starts at +0 and takes k16 steps in increasing k. Launch: grid 1, block 128, shared memory
``SMEM_BYTES`` (16384), ``-arch sm_90a``.

K is dynamic, so ``a`` and ``b`` are 16-byte ``.param`` structs: ``(u64 pointer, s32 K, s32 row stride K)``; ``c`` is
static (its pointer alone). From Python::

    kernel.launch(grid=1, block=128, smem=16384,
                  args={"a": [("u64", a), ("s32", K), ("s32", K)], "b": [("u64", b), ("s32", K), ("s32", K)],
                        "c": c})
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup
from cutlass.cute.runtime import make_fake_compact_tensor

BLOCK_M = BLOCK_N = 64
BLOCK_K = 64
THREADS = 128
SMEM_BYTES = (BLOCK_M + BLOCK_N) * BLOCK_K * 2


def smem_layout(rows):
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cutlass.Float16)
    return cute.tile_to_shape(atom, (rows, BLOCK_K), (0, 1))


@cute.kernel
def wgmma_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    la, lb = smem_layout(BLOCK_M), smem_layout(BLOCK_N)         # the swizzle on the pointer, as the GMMA atoms want
    sA = smem.allocate_tensor(cutlass.Float16, la.outer, 1024, swizzle=la.inner)     # (m, k) of one k-tile
    sB = smem.allocate_tensor(cutlass.Float16, lb.outer, 1024, swizzle=lb.inner)     # (n, k) of one k-tile
    gA = cute.local_tile(a, (BLOCK_M, BLOCK_K), (0, None))                     # (64, 64, k-tiles)
    gB = cute.local_tile(b, (BLOCK_N, BLOCK_K), (0, None))

    # cp.async: 8 threads per 64-element row, 8 halves (16 bytes) each; 16 rows per pass
    async_atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float16, num_bits_per_copy=128)
    g2s = cute.make_tiled_copy_tv(async_atom, cute.make_layout((16, 8), stride=(8, 1)), cute.make_layout((1, 8)))
    thr_g2s = g2s.get_slice(tid)
    tAgA, tAsA = thr_g2s.partition_S(gA), thr_g2s.partition_D(sA)
    tBgB, tBsB = thr_g2s.partition_S(gB), thr_g2s.partition_D(sB)

    op = warpgroup.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (64, BLOCK_N, 16), warpgroup.OperandSource.SMEM,
                                warpgroup.OperandMajorMode.K, warpgroup.OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(op)
    thr_mma = tiled_mma.get_slice(tid)
    tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))                  # matrix descriptors
    tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
    tCgC = thr_mma.partition_C(c)
    acc = tiled_mma.make_fragment_C(tCgC)
    acc.fill(0.0)
    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

    for k_tile in range(cute.size(gA, mode=[2])):                              # run-time trip count: K // 64
        cute.copy(g2s, tAgA[None, None, None, k_tile], tAsA)
        cute.copy(g2s, tBgB[None, None, None, k_tile], tBsB)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.fence_proxy("async.shared", space="cta")
        cute.arch.sync_threads()
        warpgroup.fence()
        for k_block in cutlass.range_constexpr(BLOCK_K // 16):
            cute.gemm(tiled_mma, acc, tCrA[None, None, k_block], tCrB[None, None, k_block], acc)
        warpgroup.commit_group()
        warpgroup.wait_group(0)
        cute.arch.sync_threads()                                               # read before the next tile lands

    cute.autovec_copy(acc, tCgC)


@cute.jit
def wgmma_host(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    wgmma_kernel(a, b, c).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), smem=SMEM_BYTES)


def _args():
    k = cute.sym_int32(divisibility=BLOCK_K, symbol="K")
    return (make_fake_compact_tensor(cutlass.Float16, (BLOCK_M, k), stride_order=(1, 0), assumed_align=16,
                                     use_32bit_stride=True),
            make_fake_compact_tensor(cutlass.Float16, (BLOCK_N, k), stride_order=(1, 0), assumed_align=16,
                                     use_32bit_stride=True),
            make_fake_compact_tensor(cutlass.Float32, (BLOCK_M, BLOCK_N), stride_order=(1, 0), assumed_align=16))


# warpsim: arch sm_90a
# (wgmma exists only there) wgmma_host is compiled with a run-time K (a multiple of 64) for a and b, a static 64x64 c
WARPSIM = dict(jit=wgmma_host, args=_args)
