// A 2x2-warp CuTe C++ GEMM with the m16n8k8 atom and a run-time K loop.
//
// c[m, n] = sum_k a[m, k] * b[n, k] for a 32x32 tile: a is 32xK, b is 32xK (both f16, row-major,
// K-major), c is 32x32 f32 row-major; K (a multiple of 16) is a run-time argument.
// TiledMMA: MMA_Atom<SM80_16x8x8_F32F16F16F32_TN> tiled Layout<Shape<_2,_2,_1>> (4 warps) over
// Tile<_32,_32,_8>. Per 16-wide k-tile the 128 threads copy a and b to shared memory with 64-bit
// UniversalCopy (row-major, no swizzle), then each warp loads its fragments with ldmatrix.x2
// (SM75_U32x2_LDSM_N) for A and ldmatrix.x1 (SM75_U32x1_LDSM_N) for B, and issues the mmas of the
// tile's two k-blocks. The accumulator starts at +0 and takes k-blocks of 8 in increasing k.
// Launch: grid 1, block 128.

#include <cute/tensor.hpp>

using namespace cute;

extern "C" __global__ void __launch_bounds__(128) gemm_k8_warps2x2(half_t const* a, half_t const* b, float* c, int K) {
    using TileShape = Shape<_32, _16>;                           // (rows, k) of one k-tile of a or b
    __shared__ alignas(128) half_t smem_a[32 * 16];
    __shared__ alignas(128) half_t smem_b[32 * 16];
    int tid = threadIdx.x;

    Tensor gA = make_tensor(make_gmem_ptr(a), make_layout(make_shape(_32{}, K), make_stride(K, _1{})));
    Tensor gB = make_tensor(make_gmem_ptr(b), make_layout(make_shape(_32{}, K), make_stride(K, _1{})));
    Tensor gC = make_tensor(make_gmem_ptr(c), make_layout(Shape<_32, _32>{}, LayoutRight{}));
    Tensor sA = make_tensor(make_smem_ptr(smem_a), make_layout(TileShape{}, LayoutRight{}));   // (m,k) -> elem
    Tensor sB = make_tensor(make_smem_ptr(smem_b), make_layout(TileShape{}, LayoutRight{}));   // (n,k) -> elem
    Tensor gA_tiles = local_tile(gA, TileShape{}, make_coord(0, _));                          // (32,16,k-tiles)
    Tensor gB_tiles = local_tile(gB, TileShape{}, make_coord(0, _));

    // global -> shared: (32,4) threads, 4 halves (64 bits) each
    auto g2s = make_tiled_copy(Copy_Atom<UniversalCopy<uint64_t>, half_t>{},
                               Layout<Shape<_32, _4>, Stride<_4, _1>>{}, Layout<Shape<_1, _4>>{});
    auto thr_g2s = g2s.get_slice(tid);
    Tensor tAgA = thr_g2s.partition_S(gA_tiles);
    Tensor tAsA = thr_g2s.partition_D(sA);
    Tensor tBgB = thr_g2s.partition_S(gB_tiles);
    Tensor tBsB = thr_g2s.partition_D(sB);

    auto tiled_mma = make_tiled_mma(SM80_16x8x8_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _8>{});
    auto thr_mma = tiled_mma.get_slice(tid);
    Tensor acc = partition_fragment_C(tiled_mma, Shape<_32, _32>{});
    clear(acc);
    Tensor tCrA = thr_mma.partition_fragment_A(sA);              // (MMA, MMA_M, MMA_K)
    Tensor tCrB = thr_mma.partition_fragment_B(sB);              // (MMA, MMA_N, MMA_K)
    auto s2r_A = make_tiled_copy_A(Copy_Atom<SM75_U32x2_LDSM_N, half_t>{}, tiled_mma);
    auto s2r_B = make_tiled_copy_B(Copy_Atom<SM75_U32x1_LDSM_N, half_t>{}, tiled_mma);
    auto thr_s2r_A = s2r_A.get_slice(tid);
    auto thr_s2r_B = s2r_B.get_slice(tid);
    Tensor tCsA = thr_s2r_A.partition_S(sA);
    Tensor tCrA_view = thr_s2r_A.retile_D(tCrA);
    Tensor tCsB = thr_s2r_B.partition_S(sB);
    Tensor tCrB_view = thr_s2r_B.retile_D(tCrB);

    int k_tiles = size<2>(gA_tiles);
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {           // run-time trip count: K / 16
        copy(g2s, tAgA(_, _, _, k_tile), tAsA);
        copy(g2s, tBgB(_, _, _, k_tile), tBsB);
        __syncthreads();
        copy(s2r_A, tCsA, tCrA_view);
        copy(s2r_B, tCsB, tCrB_view);
        CUTE_UNROLL
        for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
            gemm(tiled_mma, tCrA(_, _, k_block), tCrB(_, _, k_block), acc);
        }
        __syncthreads();                                         // the tile is read before the next is written
    }
    Tensor tCgC = thr_mma.partition_C(gC);
    copy(acc, tCgC);
}
