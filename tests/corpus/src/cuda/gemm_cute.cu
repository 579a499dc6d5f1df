// A CuTe GEMM in the style of CuTe's sgemm_sm80 tutorial: C = alpha * A * B^T + beta * C.
//
// A (M, K) and B (N, K) are f16, row-major (K-major); C (M, N) is f32 row-major. One 128-thread CTA computes a
// 64x64 tile of C: per 32-wide k-tile, cp.async (SM80_CP_ASYNC_CACHEALWAYS, 128-bit) into swizzled shared
// memory, then ldmatrix (SM75_U32x4_LDSM_N) into the fragments of a 2x2-warp TiledMMA of
// SM80_16x8x16_F32F16F16F32_TN over Tile<_32,_32,_16>; the epilogue is CuTe's axpby.
// M and N are multiples of 64, K of 32 (no predication). Launch: grid (M / 64, N / 64), block (128).

#include <cute/tensor.hpp>
#include <cute/algorithm/axpby.hpp>

using namespace cute;

constexpr int kBM = 64, kBN = 64, kBK = 32;

__global__ void __launch_bounds__(128) gemm_tn(int M, int N, int K, float alpha, half_t const* A, half_t const* B,
                                               float beta, float* C) {
    Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));   // (M,K)
    Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, Int<1>{}));   // (N,K)
    Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));   // (M,N)

    auto cta_tiler = make_shape(Int<kBM>{}, Int<kBN>{}, Int<kBK>{});
    auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
    Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});    // (BM,BK,k)
    Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});    // (BN,BK,k)
    Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});    // (BM,BN)

    // shared tiles: (8,32) row atoms, 16-byte chunks XOR-swizzled, tiled to (64,32)
    auto atom = composition(Swizzle<2, 3, 3>{}, Layout<Shape<_8, Int<kBK>>, Stride<Int<kBK>, _1>>{});
    auto sA_layout = tile_to_shape(atom, make_shape(Int<kBM>{}, Int<kBK>{}));
    auto sB_layout = tile_to_shape(atom, make_shape(Int<kBN>{}, Int<kBK>{}));
    __shared__ alignas(128) half_t smemA[kBM * kBK];
    __shared__ alignas(128) half_t smemB[kBN * kBK];
    Tensor sA = make_tensor(make_smem_ptr(smemA), sA_layout);                // (BM,BK)
    Tensor sB = make_tensor(make_smem_ptr(smemB), sB_layout);                // (BN,BK)

    // global -> shared: (32,4) threads x 8 halves (16 bytes) each, cp.async
    TiledCopy copy_g2s = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, half_t>{},
                                         Layout<Shape<_32, _4>, Stride<_4, _1>>{}, Layout<Shape<_1, _8>>{});
    ThrCopy thr_g2s = copy_g2s.get_slice(threadIdx.x);
    Tensor tAgA = thr_g2s.partition_S(gA);                                   // (CPY,CPY_M,CPY_K,k)
    Tensor tAsA = thr_g2s.partition_D(sA);
    Tensor tBgB = thr_g2s.partition_S(gB);
    Tensor tBsB = thr_g2s.partition_D(sB);

    TiledMMA mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _16>{});
    ThrMMA thr_mma = mma.get_slice(threadIdx.x);
    Tensor tCgC = thr_mma.partition_C(gC);                                   // (MMA,MMA_M,MMA_N)
    Tensor tCrA = thr_mma.partition_fragment_A(sA);                          // (MMA,MMA_M,MMA_K)
    Tensor tCrB = thr_mma.partition_fragment_B(sB);                          // (MMA,MMA_N,MMA_K)
    Tensor tCrC = thr_mma.make_fragment_C(tCgC);
    clear(tCrC);

    // shared -> registers: ldmatrix
    TiledCopy s2r_A = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);
    TiledCopy s2r_B = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);
    ThrCopy thr_s2r_A = s2r_A.get_slice(threadIdx.x);
    ThrCopy thr_s2r_B = s2r_B.get_slice(threadIdx.x);
    Tensor tXsA = thr_s2r_A.partition_S(sA);
    Tensor tXrA = thr_s2r_A.retile_D(tCrA);
    Tensor tXsB = thr_s2r_B.partition_S(sB);
    Tensor tXrB = thr_s2r_B.retile_D(tCrB);

    int k_tiles = size<3>(tAgA);
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
        copy(copy_g2s, tAgA(_, _, _, k_tile), tAsA);
        copy(copy_g2s, tBgB(_, _, _, k_tile), tBsB);
        cp_async_fence();
        cp_async_wait<0>();
        __syncthreads();
        CUTE_UNROLL
        for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
            copy(s2r_A, tXsA(_, _, k_block), tXrA(_, _, k_block));
            copy(s2r_B, tXsB(_, _, k_block), tXrB(_, _, k_block));
            gemm(mma, tCrA(_, _, k_block), tCrB(_, _, k_block), tCrC);
        }
        __syncthreads();                                                      // read before the next tile lands
    }
    axpby(alpha, tCrC, beta, tCgC);
}
