"""One warp's bf16 attention tile in CuTe DSL, for the type-provenance check (``warpsim check``).

S = Q K^T (16x16, f32 accumulators) and O = P V (16x8) by bf16 ``mma.m16n8k16``; P is S converted to
``p_type`` and its registers re-used as the A fragment of P V. Two kernels, one per ``WARPSIM`` entry:
``p_type = BFloat16`` (right) and ``p_type = Float16`` (the mistake: P packed as f16, read as bf16).
q, k: 16x16, vt: 8x16 (d x N), all bf16 row-major; o: 16x8 f32 row-major. Launch: grid 1, block 32.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor


@cute.kernel
def attn_kernel(q: cute.Tensor, k: cute.Tensor, vt: cute.Tensor, o: cute.Tensor, p_type: cutlass.Constexpr):
    lane, _, _ = cute.arch.thread_idx()
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.BFloat16, cutlass.Float32, (16, 8, 16)),
                              permutation_mnk=(16, 16, 16))
    thr = mma.get_slice(lane)
    tSrQ = mma.make_fragment_A(thr.partition_A(q))
    tSrK = mma.make_fragment_B(thr.partition_B(k))
    cute.autovec_copy(thr.partition_A(q), tSrQ)
    cute.autovec_copy(thr.partition_B(k), tSrK)
    acc_s = cute.make_rmem_tensor(mma.partition_shape_C((16, 16)), cutlass.Float32)
    acc_s.fill(0.0)
    cute.gemm(mma, acc_s, tSrQ, tSrK, acc_s)

    mma_o = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.BFloat16, cutlass.Float32, (16, 8, 16)))
    thr_o = mma_o.get_slice(lane)
    tOrP = mma_o.make_fragment_A(thr_o.partition_A(q))
    p = cute.make_rmem_tensor(acc_s.layout, p_type)
    p.store(acc_s.load().to(p_type))                                        # P
    tOrP.store(cute.recast_tensor(p, cutlass.BFloat16).load())
    tOrV = mma_o.make_fragment_B(thr_o.partition_B(vt))
    cute.autovec_copy(thr_o.partition_B(vt), tOrV)
    acc_o = mma_o.make_fragment_C(thr_o.partition_C(o))
    acc_o.fill(0.0)
    cute.gemm(mma_o, acc_o, tOrP, tOrV, acc_o)                             # P V
    cute.autovec_copy(acc_o, thr_o.partition_C(o))


@cute.jit
def attn_host(q: cute.Tensor, k: cute.Tensor, vt: cute.Tensor, o: cute.Tensor, p_type: cutlass.Constexpr):
    attn_kernel(q, k, vt, o, p_type).launch(grid=(1, 1, 1), block=(32, 1, 1))


def _args(p_type):
    return lambda: (make_fake_compact_tensor(cutlass.BFloat16, (16, 16), stride_order=(1, 0)),
                    make_fake_compact_tensor(cutlass.BFloat16, (16, 16), stride_order=(1, 0)),
                    make_fake_compact_tensor(cutlass.BFloat16, (8, 16), stride_order=(1, 0)),
                    make_fake_compact_tensor(cutlass.Float32, (16, 8), stride_order=(1, 0)), p_type)


WARPSIM = [dict(jit=attn_host, args=_args(cutlass.BFloat16)), dict(jit=attn_host, args=_args(cutlass.Float16))]
