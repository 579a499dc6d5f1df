"""A 4-warp 64x64 tile in CuTe DSL: ``cp.async`` into swizzled shared memory and a run-time K loop.

``c[m, n] = sum_k a[m, k] * b[n, k]`` with ``a`` (64, K) and ``b`` (64, K) f16 row-major (K-major),
``c`` (64, 64) f32 row-major; K is a run-time value, a multiple of ``BLOCK_K`` (32). Per k-tile the 128
threads ``cp.async`` 16 bytes each (``CopyG2SOp``, two rows of A and two of B per thread) into
``Swizzle<2,3,3> o (8,32):(32,1)`` tiles, wait (``cp.async.wait_group 0``, then ``bar.sync``), load
fragments with ``ldmatrix.x4`` and issue the m16n8k16 mma of a 2x2-warp tiled MMA
(``MmaF16BF16Op(f16, f32, (16, 8, 16))``, permutation 32x32x16) for each of the tile's two k-blocks.
The accumulator starts at +0 and takes k-blocks in increasing k. Launch: grid 1, block 128,
shared memory ``SMEM_BYTES`` (8192).

K is dynamic, so ``a`` and ``b`` are 16-byte ``.param`` structs: ``(u64 pointer, s32 K, s32 row
stride K)``; ``c`` is static (its pointer alone). From Python::

    kernel.launch(grid=1, block=128, smem=8192,
                  args={"a": [("u64", a), ("s32", K), ("s32", K)], "b": [("u64", b), ("s32", K), ("s32", K)],
                        "c": c})
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

BLOCK_M = BLOCK_N = 64
BLOCK_K = 32
THREADS = 128
SMEM_BYTES = (BLOCK_M + BLOCK_N) * BLOCK_K * 2


def smem_layout():
    # (8,32) -> element, 16-byte chunks XOR-swizzled by row; tiled to (64,32) -> element
    atom = cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 0, cute.make_layout((8, BLOCK_K), stride=(BLOCK_K, 1)))
    return cute.tile_to_shape(atom, (BLOCK_M, BLOCK_K), (0, 1))


@cute.kernel
def tile_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, smem_layout(), 128)     # (m, k) of one k-tile
    sB = smem.allocate_tensor(cutlass.Float16, smem_layout(), 128)     # (n, k) of one k-tile
    gA = cute.local_tile(a, (BLOCK_M, BLOCK_K), (0, None))             # (64, 32, k-tiles)
    gB = cute.local_tile(b, (BLOCK_N, BLOCK_K), (0, None))

    # cp.async: 4 threads per 32-element row, 8 halves (16 bytes) each; 32 rows per pass
    async_atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float16, num_bits_per_copy=128)
    g2s = cute.make_tiled_copy_tv(async_atom, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((1, 8)))
    thr_g2s = g2s.get_slice(tid)
    tAgA, tAsA = thr_g2s.partition_S(gA), thr_g2s.partition_D(sA)
    tBgB, tBsB = thr_g2s.partition_S(gB), thr_g2s.partition_D(sB)

    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                    cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))
    thr_mma = tiled_mma.get_slice(tid)
    tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
    tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
    tCgC = thr_mma.partition_C(c)
    tCrC = tiled_mma.make_fragment_C(tCgC)
    tCrC.fill(0.0)

    ldsm = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
    s2r_A, s2r_B = cute.make_tiled_copy_A(ldsm, tiled_mma), cute.make_tiled_copy_B(ldsm, tiled_mma)
    thr_s2r_A, thr_s2r_B = s2r_A.get_slice(tid), s2r_B.get_slice(tid)
    tCsA, tCrA_view = thr_s2r_A.partition_S(sA), thr_s2r_A.retile(tCrA)
    tCsB, tCrB_view = thr_s2r_B.partition_S(sB), thr_s2r_B.retile(tCrB)

    for k_tile in range(cute.size(gA, mode=[2])):                      # run-time trip count: K // 32
        cute.copy(g2s, tAgA[None, None, None, k_tile], tAsA)
        cute.copy(g2s, tBgB[None, None, None, k_tile], tBsB)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.sync_threads()
        for k_block in cutlass.range_constexpr(BLOCK_K // 16):
            cute.copy(s2r_A, tCsA[None, None, k_block], tCrA_view[None, None, k_block])
            cute.copy(s2r_B, tCsB[None, None, k_block], tCrB_view[None, None, k_block])
            cute.gemm(tiled_mma, tCrC, tCrA[None, None, k_block], tCrB[None, None, k_block], tCrC)
        cute.arch.sync_threads()                                       # the tile is read before the next lands

    cute.autovec_copy(tCrC, tCgC)


@cute.jit
def tile_host(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    tile_kernel(a, b, c).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), smem=SMEM_BYTES)


def _args():
    k = cute.sym_int32(divisibility=BLOCK_K, symbol="K")
    return (make_fake_compact_tensor(cutlass.Float16, (BLOCK_M, k), stride_order=(1, 0), assumed_align=16,
                                     use_32bit_stride=True),
            make_fake_compact_tensor(cutlass.Float16, (BLOCK_N, k), stride_order=(1, 0), assumed_align=16,
                                     use_32bit_stride=True),
            make_fake_compact_tensor(cutlass.Float32, (BLOCK_M, BLOCK_N), stride_order=(1, 0), assumed_align=16))


# warpsim: compile tile_host with a run-time K (a multiple of 32) for a and b, a static 64x64 c
WARPSIM = dict(jit=tile_host, args=_args)
