// A 1x2-warp CuTe C++ GEMM accumulating in f16, fragments read from shared memory without ldmatrix.
//
// c[m, n] = sum_k a[m, k] * b[n, k] for a 16x32 tile: a is 16xK, b is 32xK (f16, row-major), c is
// 16x32 f16 row-major (its raw bits); K (a multiple of 32) is a run-time argument.
// TiledMMA: MMA_Atom<SM80_16x8x16_F16F16F16F16_TN> tiled Layout<Shape<_1,_2,_1>> (2 warps, 64
// threads) over Tile<_16,_32,_16>. Per 32-wide k-tile the threads copy a and b into shared memory
// element by element (a column-major-by-k16 blocked layout, to use other strides), then each thread
// copies its A and B fragments from shared memory with plain 16-bit loads (the MMA's own
// partition_A/partition_B views, no copy atom) and issues the tile's two k-blocks. The f16
// accumulator starts at +0 and takes k-blocks of 16 in increasing k, rounding each to nearest even.
// Launch: grid 1, block 64.

#include <cute/tensor.hpp>

using namespace cute;

extern "C" __global__ void __launch_bounds__(64) gemm_f16acc_warps1x2(half_t const* a, half_t const* b, half_t* c,
                                                                      int K) {
    __shared__ alignas(128) half_t smem_a[16 * 32];
    __shared__ alignas(128) half_t smem_b[32 * 32];
    int tid = threadIdx.x;

    Tensor gA = make_tensor(make_gmem_ptr(a), make_layout(make_shape(_16{}, K), make_stride(K, _1{})));
    Tensor gB = make_tensor(make_gmem_ptr(b), make_layout(make_shape(_32{}, K), make_stride(K, _1{})));
    Tensor gC = make_tensor(make_gmem_ptr(c), make_layout(Shape<_16, _32>{}, LayoutRight{}));
    // (m, k) -> element: two 16-column blocks, each row-major
    Tensor sA = make_tensor(make_smem_ptr(smem_a), Layout<Shape<_16, Shape<_16, _2>>, Stride<_16, Stride<_1, _256>>>{});
    Tensor sB = make_tensor(make_smem_ptr(smem_b), Layout<Shape<_32, Shape<_16, _2>>, Stride<_16, Stride<_1, _512>>>{});
    Tensor gA_tiles = local_tile(gA, Shape<_16, _32>{}, make_coord(0, _));     // (16,32,k-tiles)
    Tensor gB_tiles = local_tile(gB, Shape<_32, _32>{}, make_coord(0, _));     // (32,32,k-tiles)

    auto tiled_mma = make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_1, _2, _1>>{}, Tile<_16, _32, _16>{});
    auto thr_mma = tiled_mma.get_slice(tid);
    Tensor acc = partition_fragment_C(tiled_mma, Shape<_16, _32>{});
    clear(acc);
    Tensor tCsA = thr_mma.partition_A(sA);                       // (MMA, MMA_M, MMA_K) views of shared memory
    Tensor tCsB = thr_mma.partition_B(sB);
    Tensor tCrA = thr_mma.make_fragment_A(tCsA);
    Tensor tCrB = thr_mma.make_fragment_B(tCsB);

    int k_tiles = size<2>(gA_tiles);
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {           // run-time trip count: K / 32
        for (int i = tid; i < 16 * 32; i += 64) {
            sA(i / 32, i % 32) = gA_tiles(i / 32, i % 32, k_tile);
        }
        for (int i = tid; i < 32 * 32; i += 64) {
            sB(i / 32, i % 32) = gB_tiles(i / 32, i % 32, k_tile);
        }
        __syncthreads();
        copy(tCsA, tCrA);
        copy(tCsB, tCrB);
        gemm(tiled_mma, tCrA, tCrB, acc);                        // the k-blocks in order
        __syncthreads();
    }
    copy(acc, thr_mma.partition_C(gC));
}
