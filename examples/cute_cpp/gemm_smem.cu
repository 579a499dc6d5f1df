// The seed's gemm_smem in real CuTe C++: one 4-warp CTA computes a 64x64 f32 tile.
//
// The same program as examples/gemm_smem.py, written as in the CuTe flash-attention tutorial
// (kernel_traits.h): MMA_Atom<SM80_16x8x16_F32F16F16F32_TN> (bf16: ..._F32BF16BF16F32_TN) tiled
// Layout<Shape<_4,_1,_1>> over Tile<_64,_16,_16>; shared layouts
// tile_to_shape(composition(Swizzle<3,3,3>, (8,64):(64,1)), (64,64)); SM75_U32x4_LDSM_N for Q and K;
// V read through the transposed layout with SM75_U16x8_LDSM_T; the retile_D loop.
//
// Eight kernels, one per combination: gemm_smem_<f16|bf16>_<qk|pv>_<swizzle|plain>
//   qk: s[m, n] = sum_k q[m, k] * k[n, k]   (params q, k, s)
//   pv: o[m, n] = sum_k q[m, k] * v[k, n]   (params q, v, o; v is (key, d) row-major)
// Inputs are 64x64 row-major 16-bit tensors, the output a 64x64 row-major f32 tensor.
// Launch: grid (1,1,1), block (128,1,1), no dynamic shared memory.
//
//   warpsim run examples/cute_cpp/gemm_smem.cu --kernel gemm_smem_f16_qk_swizzle --block 128 \
//       --arg q=q.npy --arg k=k.npy --arg s=s.npy --dump s --out DIR

#include <cute/tensor.hpp>

using namespace cute;

template <class T, bool kSwizzle>
struct KernelTraits {
    using MmaOp = conditional_t<is_same_v<T, half_t>, SM80_16x8x16_F32F16F16F32_TN,
                                SM80_16x8x16_F32BF16BF16F32_TN>;
    using TiledMma = decltype(make_tiled_mma(MmaOp{}, Layout<Shape<_4, _1, _1>>{}, Tile<_64, _16, _16>{}));

    // (8,64) -> smem element: 8 rows of 64 elements, XOR-swizzled in 16-byte chunks (or not)
    using RowAtom = Layout<Shape<_8, _64>, Stride<_64, _1>>;
    using SmemLayoutAtom = conditional_t<kSwizzle, decltype(composition(Swizzle<3, 3, 3>{}, RowAtom{})), RowAtom>;
    // (key, d) -> smem element
    using SmemLayoutKV = decltype(tile_to_shape(SmemLayoutAtom{}, Shape<_64, _64>{}));
    // (d, key) -> smem element: the same bytes as SmemLayoutKV, read column-major
    using ColAtom = Layout<Shape<_64, _64>, Stride<_1, _64>>;
    using SmemLayoutVtAtom = conditional_t<kSwizzle, decltype(composition(Swizzle<3, 3, 3>{}, ColAtom{})), ColAtom>;
    using SmemLayoutVt = decltype(tile_to_shape(SmemLayoutVtAtom{}, Shape<_64, _64>{}));
    using SmemLayoutVtNoSwizzle = ColAtom;   // (d, key) -> element: the transposed layout's un-swizzled twin

    using GmemTiledCopy = decltype(make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, T>{},
                                                   Layout<Shape<_16, _8>, Stride<_8, _1>>{},   // (16,8) -> thread
                                                   Layout<Shape<_1, _8>>{}));                  // (1,8) -> value
    using SmemCopyAtom = Copy_Atom<SM75_U32x4_LDSM_N, T>;
    using SmemCopyAtomTransposed = Copy_Atom<SM75_U16x8_LDSM_T, T>;
    using StoreCopyAtom = Copy_Atom<UniversalCopy<uint64_t>, float>;
};

// The tutorial's gemm_smem: load k-block i+1 through the copy views while computing k-block i.
template <class TiledMma, class TensorC, class TensorA, class TensorB, class TensorSA, class TensorSB,
          class TiledCopyA, class TiledCopyB, class ThrCopyA, class ThrCopyB>
__device__ void gemm_smem(TensorC& acc, TensorA& tCrA, TensorB& tCrB, TensorSA const& tCsA, TensorSB const& tCsB,
                          TiledMma const& tiled_mma, TiledCopyA const& smem_tiled_copy_A,
                          TiledCopyB const& smem_tiled_copy_B, ThrCopyA const& smem_thr_copy_A,
                          ThrCopyB const& smem_thr_copy_B) {
    Tensor tCrA_copy_view = smem_thr_copy_A.retile_D(tCrA);
    Tensor tCrB_copy_view = smem_thr_copy_B.retile_D(tCrB);
    copy(smem_tiled_copy_A, tCsA(_, _, _0{}), tCrA_copy_view(_, _, _0{}));
    copy(smem_tiled_copy_B, tCsB(_, _, _0{}), tCrB_copy_view(_, _, _0{}));
    CUTE_UNROLL
    for (int i = 0; i < size<2>(tCrA); ++i) {
        if (i < size<2>(tCrA) - 1) {
            copy(smem_tiled_copy_A, tCsA(_, _, i + 1), tCrA_copy_view(_, _, i + 1));
            copy(smem_tiled_copy_B, tCsB(_, _, i + 1), tCrB_copy_view(_, _, i + 1));
        }
        cute::gemm(tiled_mma, tCrA(_, _, i), tCrB(_, _, i), acc);
    }
}

template <class T, bool kPV, bool kSwizzle>
__device__ void gemm_smem_cta(T const* q, T const* kv, float* out) {
    using Traits = KernelTraits<T, kSwizzle>;
    __shared__ alignas(128) uint8_t smem[2 * 64 * 64 * sizeof(T)];
    T* smem_q = reinterpret_cast<T*>(smem);
    T* smem_kv = smem_q + 64 * 64;
    int tid = threadIdx.x;

    Tensor gQ = make_tensor(make_gmem_ptr(q), make_layout(Shape<_64, _64>{}, LayoutRight{}));
    Tensor gKV = make_tensor(make_gmem_ptr(kv), make_layout(Shape<_64, _64>{}, LayoutRight{}));
    Tensor gOut = make_tensor(make_gmem_ptr(out), make_layout(Shape<_64, _64>{}, LayoutRight{}));
    Tensor sQ = make_tensor(make_smem_ptr(smem_q), typename Traits::SmemLayoutKV{});
    Tensor sK = make_tensor(make_smem_ptr(smem_kv), typename Traits::SmemLayoutKV{});   // K, or V (key, d)

    // global -> shared: 128-bit loads and stores, 4 per thread per tensor
    typename Traits::GmemTiledCopy gmem_tiled_copy;
    auto gmem_thr_copy = gmem_tiled_copy.get_slice(tid);
    copy(gmem_tiled_copy, gmem_thr_copy.partition_S(gQ), gmem_thr_copy.partition_D(sQ));
    copy(gmem_tiled_copy, gmem_thr_copy.partition_S(gKV), gmem_thr_copy.partition_D(sK));
    __syncthreads();

    typename Traits::TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(tid);
    Tensor acc = partition_fragment_C(tiled_mma, Shape<_64, _64>{});   // (MMA, MMA_M, MMA_N) f32
    clear(acc);
    Tensor tSrQ = thr_mma.partition_fragment_A(sQ);                    // (MMA, MMA_M, MMA_K)
    auto smem_tiled_copy_Q = make_tiled_copy_A(typename Traits::SmemCopyAtom{}, tiled_mma);
    auto smem_thr_copy_Q = smem_tiled_copy_Q.get_slice(tid);
    Tensor tSsQ = smem_thr_copy_Q.partition_S(sQ);
    if constexpr (!kPV) {
        Tensor tSrK = thr_mma.partition_fragment_B(sK);                // (MMA, MMA_N, MMA_K)
        auto smem_tiled_copy_K = make_tiled_copy_B(typename Traits::SmemCopyAtom{}, tiled_mma);
        auto smem_thr_copy_K = smem_tiled_copy_K.get_slice(tid);
        Tensor tSsK = smem_thr_copy_K.partition_S(sK);
        gemm_smem(acc, tSrQ, tSrK, tSsQ, tSsK, tiled_mma, smem_tiled_copy_Q, smem_tiled_copy_K,
                  smem_thr_copy_Q, smem_thr_copy_K);
    } else {
        Tensor sVt = make_tensor(make_smem_ptr(smem_kv), typename Traits::SmemLayoutVt{});   // (d, key): V^T
        Tensor sVtNoSwizzle = make_tensor(make_smem_ptr(smem_kv), typename Traits::SmemLayoutVtNoSwizzle{});
        Tensor tOrVt = thr_mma.partition_fragment_B(sVtNoSwizzle);    // (MMA, MMA_N, MMA_K)
        auto smem_tiled_copy_V = make_tiled_copy_B(typename Traits::SmemCopyAtomTransposed{}, tiled_mma);
        auto smem_thr_copy_V = smem_tiled_copy_V.get_slice(tid);
        Tensor tOsVt = smem_thr_copy_V.partition_S(sVt);
        gemm_smem(acc, tSrQ, tOrVt, tSsQ, tOsVt, tiled_mma, smem_tiled_copy_Q, smem_tiled_copy_V,
                  smem_thr_copy_Q, smem_thr_copy_V);
    }

    // the accumulator -> global memory: 64-bit stores of (row g, columns 2t, 2t+1) pairs
    auto store_tiled_copy = make_tiled_copy_C(typename Traits::StoreCopyAtom{}, tiled_mma);
    auto store_thr_copy = store_tiled_copy.get_slice(tid);
    copy(store_tiled_copy, store_thr_copy.retile_S(acc), store_thr_copy.partition_D(gOut));
}

// The eight kernels, written out so that their parameter names (q, k / v, s / o) are in the source.

extern "C" __global__ void __launch_bounds__(128) gemm_smem_f16_qk_swizzle(half_t const* q, half_t const* k, float* s) {
    gemm_smem_cta<half_t, false, true>(q, k, s);
}

extern "C" __global__ void __launch_bounds__(128) gemm_smem_f16_qk_plain(half_t const* q, half_t const* k, float* s) {
    gemm_smem_cta<half_t, false, false>(q, k, s);
}

extern "C" __global__ void __launch_bounds__(128) gemm_smem_f16_pv_swizzle(half_t const* q, half_t const* v, float* o) {
    gemm_smem_cta<half_t, true, true>(q, v, o);
}

extern "C" __global__ void __launch_bounds__(128) gemm_smem_f16_pv_plain(half_t const* q, half_t const* v, float* o) {
    gemm_smem_cta<half_t, true, false>(q, v, o);
}

extern "C" __global__ void __launch_bounds__(128) gemm_smem_bf16_qk_swizzle(bfloat16_t const* q, bfloat16_t const* k, float* s) {
    gemm_smem_cta<bfloat16_t, false, true>(q, k, s);
}

extern "C" __global__ void __launch_bounds__(128) gemm_smem_bf16_qk_plain(bfloat16_t const* q, bfloat16_t const* k, float* s) {
    gemm_smem_cta<bfloat16_t, false, false>(q, k, s);
}

extern "C" __global__ void __launch_bounds__(128) gemm_smem_bf16_pv_swizzle(bfloat16_t const* q, bfloat16_t const* v, float* o) {
    gemm_smem_cta<bfloat16_t, true, true>(q, v, o);
}

extern "C" __global__ void __launch_bounds__(128) gemm_smem_bf16_pv_plain(bfloat16_t const* q, bfloat16_t const* v, float* o) {
    gemm_smem_cta<bfloat16_t, true, false>(q, v, o);
}
