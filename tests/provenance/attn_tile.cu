// One warp's attention tile in bf16, for the type-provenance check: S = Q K^T (16x16, f32 accumulators),
// P = S converted to the input type, O = P V (16x8). Built with -DP_AS_HALF it is the classic mistake:
// P is packed as f16 (cvt.rn.f16x2.f32) and fed to the bf16 mma as if it were bf16.
// q: 16x16, k: 16x16 (N x d), vt: 8x16 (d x N), all bf16 row-major; o: 16x8 f32 row-major. Block 32.

#include <cute/tensor.hpp>
#include <cutlass/numeric_conversion.h>

using namespace cute;

#ifdef P_AS_HALF
using PType = half_t;          // wrong: the mma below reads bf16
#else
using PType = bfloat16_t;
#endif

extern "C" __global__ void __launch_bounds__(32) attn_tile(bfloat16_t const* q, bfloat16_t const* k,
                                                          bfloat16_t const* vt, float* o) {
    Tensor gQ = make_tensor(make_gmem_ptr(q), Layout<Shape<_16, _16>, Stride<_16, _1>>{});    // (M,K)
    Tensor gK = make_tensor(make_gmem_ptr(k), Layout<Shape<_16, _16>, Stride<_16, _1>>{});    // (N,K)
    Tensor gVt = make_tensor(make_gmem_ptr(vt), Layout<Shape<_8, _16>, Stride<_16, _1>>{});   // (D,N)
    Tensor gO = make_tensor(make_gmem_ptr(o), Layout<Shape<_16, _8>, Stride<_8, _1>>{});      // (M,D)
    auto mma_s = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, Layout<Shape<_1, _1, _1>>{}, Tile<_16, _16, _16>{});
    auto mma_o = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{});
    auto thr_s = mma_s.get_slice(threadIdx.x);
    auto thr_o = mma_o.get_slice(threadIdx.x);

    Tensor tSgQ = thr_s.partition_A(gQ);
    Tensor tSgK = thr_s.partition_B(gK);
    Tensor tSrQ = thr_s.make_fragment_A(tSgQ);
    Tensor tSrK = thr_s.make_fragment_B(tSgK);
    copy(tSgQ, tSrQ);
    copy(tSgK, tSrK);
    Tensor acc_s = partition_fragment_C(mma_s, Shape<_16, _16>{});                              // ((2,2),1,2) f32
    clear(acc_s);
    gemm(mma_s, tSrQ, tSrK, acc_s);

    // P: the C fragment of S, converted pairwise to the input type; its 8 values are the A fragment of P V
    cutlass::NumericArrayConverter<PType, float, size(acc_s)> convert;
    auto p = convert(*reinterpret_cast<cutlass::Array<float, size(acc_s)> const*>(acc_s.data()));   // PRODUCER
    Tensor tOrP = make_tensor(make_rmem_ptr<bfloat16_t>(&p), Layout<Shape<Shape<_2, _2, _2>, _1, _1>>{});

    Tensor tOgV = thr_o.partition_B(gVt);
    Tensor tOrV = thr_o.make_fragment_B(tOgV);
    copy(tOgV, tOrV);
    Tensor acc_o = partition_fragment_C(mma_o, Shape<_16, _8>{});
    clear(acc_o);
    gemm(mma_o, tOrP, tOrV, acc_o);                                                               // CONSUMER
    copy(acc_o, thr_o.partition_C(gO));
}
