"""One warp, one ``mma.sync.m16n8k16`` fed by ``ldmatrix``, in CuTe DSL.

``c[m, n] = sum_k a[m, k] * b[n, k]`` (f16 inputs, f32 accumulator starting at +0): ``a`` is 16x16 and
``b`` 8x16, both row-major (K-major, the ``.row.col`` operand order), ``c`` is 16x8 row-major f32.
The warp stages A and B in shared memory, loads them with ``ldmatrix.x4`` (A) and ``ldmatrix.x2`` (B)
through ``make_tiled_copy_A/B`` of an ``LdMatrix8x8x16bOp`` copy atom, and issues one
``MmaF16BF16Op(f16, f32, (16, 8, 16))``. Launch: grid 1, block 32, shared memory
``SMEM_BYTES`` (768).

    warpsim run examples/cute_dsl/mma_ldmatrix_dsl.py --kernel mma_kernel --block 32 --smem 768 \\
        --arg a=a.npy --arg b=b.npy --arg c=zeros:f32:16x8 --dump c --out out
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

M, N, K = 16, 8, 16
SMEM_BYTES = (M * K + N * K) * 2


@cute.kernel
def mma_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    lane, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, cute.make_layout((M, K), stride=(K, 1)), 16)   # (m,k) -> elem
    sB = smem.allocate_tensor(cutlass.Float16, cute.make_layout((N, K), stride=(K, 1)), 16)   # (n,k) -> elem

    # global -> shared: lane l copies row l // 2 (A) / l // 4 (B), 8 / 4 halves each, element by element
    for i in cutlass.range_constexpr(8):
        sA[lane // 2, (lane % 2) * 8 + i] = a[lane // 2, (lane % 2) * 8 + i]
    for i in cutlass.range_constexpr(4):
        sB[lane // 4, (lane % 4) * 4 + i] = b[lane // 4, (lane % 4) * 4 + i]
    cute.arch.sync_threads()

    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (M, N, K)))
    thr_mma = tiled_mma.get_slice(lane)
    tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
    tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
    tCrC = tiled_mma.make_fragment_C(thr_mma.partition_C(c))
    tCrC.fill(0.0)

    copy_A = cute.make_tiled_copy_A(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4),
                                                         cutlass.Float16), tiled_mma)
    copy_B = cute.make_tiled_copy_B(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 2),
                                                         cutlass.Float16), tiled_mma)
    thr_copy_A = copy_A.get_slice(lane)
    thr_copy_B = copy_B.get_slice(lane)
    cute.copy(copy_A, thr_copy_A.partition_S(sA), thr_copy_A.retile(tCrA))
    cute.copy(copy_B, thr_copy_B.partition_S(sB), thr_copy_B.retile(tCrB))

    cute.gemm(tiled_mma, tCrC, tCrA, tCrB, tCrC)
    cute.autovec_copy(tCrC, thr_mma.partition_C(c))


@cute.jit
def mma_host(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    mma_kernel(a, b, c).launch(grid=(1, 1, 1), block=(32, 1, 1), smem=SMEM_BYTES)


# warpsim: compile mma_host on static 16x16 / 8x16 f16 and 16x8 f32 row-major tensors
WARPSIM = dict(jit=mma_host, args=lambda: (make_fake_compact_tensor(cutlass.Float16, (M, K), stride_order=(1, 0)),
                                           make_fake_compact_tensor(cutlass.Float16, (N, K), stride_order=(1, 0)),
                                           make_fake_compact_tensor(cutlass.Float32, (M, N), stride_order=(1, 0))))
