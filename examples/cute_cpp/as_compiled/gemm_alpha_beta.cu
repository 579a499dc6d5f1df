// GEMM with an alpha/beta epilogue, C = alpha * A B^T + beta * C, written as in CuTe's sgemm_sm80 tutorial and
// compiled with nvcc's DEFAULTS.
//
// a: [M, K] half, b: [N, K] half (both K-major: "TN"), f32 accumulation; c: [M, N] row-major, read and
// overwritten in place, f32 (gemm_tn_f32) or half (gemm_tn_f16). M and N multiples of 64, K a multiple of 32.
// - CTA tile 64x64x32, 3-stage cp.async pipeline (16-byte SM80_CP_ASYNC_CACHEALWAYS, 32x4 threads x 8 halves),
//   shared tiles Swizzle<2,3,3> over (8,32) rows;
// - TiledMMA: SM80_16x8x16_F32F16F16F32_TN tiled Layout<Shape<_2,_2,_1>> (4 warps) over Tile<_32,_32,_16>;
//   A and B fragments by ldmatrix (SM75_U32x4_LDSM_N), the next k-block loaded while the current one multiplies;
// - epilogue: cute::axpby(alpha, acc, beta, C) for f32; for half, the same arithmetic in f32 then rounded.
//
// Compiled with nvcc's default flags ON PURPOSE (no rounding intrinsics, no -fmad=false, no flags line): the
// epilogue's alpha * acc + beta * c is what nvcc and ptxas may contract into an FMA in a user's build.
//
// Kernels: gemm_tn_f32(a, b, c, M, N, K, alpha, beta), gemm_tn_f16(a, b, c, M, N, K, alpha, beta)
// Launch: grid (M/64, N/64), block 128, no dynamic shared memory (24 KiB static).
//
//   warpsim run examples/cute_cpp/as_compiled/gemm_alpha_beta.cu --kernel gemm_tn_f32 --grid 2,2 --block 128 \
//       --arg a=a.npy --arg b=b.npy --arg c=c.npy --arg M=128 --arg N=128 --arg K=64 --arg alpha=1.5 --arg beta=-0.5

#include <cute/tensor.hpp>

using namespace cute;

namespace {

using TA = half_t;
using TB = half_t;
using CtaTiler = Shape<_64, _64, _32>;                    // (BLK_M, BLK_N, BLK_K)
using Pipe = _3;
using SmemLayoutAtom = decltype(composition(Swizzle<2, 3, 3>{}, Layout<Shape<_8, _32>, Stride<_32, _1>>{}));
using SmemLayoutA = decltype(tile_to_shape(SmemLayoutAtom{}, make_shape(_64{}, _32{}, Pipe{})));   // (m, k, pipe)
using SmemLayoutB = decltype(tile_to_shape(SmemLayoutAtom{}, make_shape(_64{}, _32{}, Pipe{})));   // (n, k, pipe)
using G2SCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, half_t>{},
                                         Layout<Shape<_32, _4>, Stride<_4, _1>>{},    // (32,4) threads, k fastest
                                         Layout<Shape<_1, _8>>{}));                   // 8 halves each
using TiledMma = decltype(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{},
                                         Tile<_32, _32, _16>{}));
using S2RAtom = Copy_Atom<SM75_U32x4_LDSM_N, half_t>;

struct SharedStorage {
    cute::array_aligned<TA, cosize_v<SmemLayoutA>> A;
    cute::array_aligned<TB, cosize_v<SmemLayoutB>> B;
};

template <class TC>
__device__ void gemm_device(TA const* A, TB const* B, TC* C, int M, int N, int K, float alpha, float beta) {
    auto shape_MNK = make_shape(M, N, K);
    Tensor mA = make_tensor(make_gmem_ptr(A), select<0, 2>(shape_MNK), make_stride(K, _1{}));   // (M, K)
    Tensor mB = make_tensor(make_gmem_ptr(B), select<1, 2>(shape_MNK), make_stride(K, _1{}));   // (N, K)
    Tensor mC = make_tensor(make_gmem_ptr(C), select<0, 1>(shape_MNK), make_stride(N, _1{}));   // (M, N)

    auto cta_tiler = CtaTiler{};
    auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
    Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});    // (BLK_M, BLK_K, k)
    Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});    // (BLK_N, BLK_K, k)
    Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});    // (BLK_M, BLK_N)

    __shared__ SharedStorage smem;
    Tensor sA = make_tensor(make_smem_ptr(smem.A.data()), SmemLayoutA{});   // (BLK_M, BLK_K, PIPE)
    Tensor sB = make_tensor(make_smem_ptr(smem.B.data()), SmemLayoutB{});   // (BLK_N, BLK_K, PIPE)

    G2SCopy copy_a, copy_b;
    ThrCopy thr_copy_a = copy_a.get_slice(threadIdx.x);
    Tensor tAgA = thr_copy_a.partition_S(gA);                                // (CPY, CPY_M, CPY_K, k)
    Tensor tAsA = thr_copy_a.partition_D(sA);                                // (CPY, CPY_M, CPY_K, PIPE)
    ThrCopy thr_copy_b = copy_b.get_slice(threadIdx.x);
    Tensor tBgB = thr_copy_b.partition_S(gB);                                // (CPY, CPY_N, CPY_K, k)
    Tensor tBsB = thr_copy_b.partition_D(sB);                                // (CPY, CPY_N, CPY_K, PIPE)

    auto K_PIPE_MAX = size<3>(tAsA);
    int k_tile_count = size<3>(tAgA);
    int k_tile_next = 0;

    // start the loads of all stages but the last
    CUTE_UNROLL
    for (int k_pipe = 0; k_pipe < K_PIPE_MAX - 1; ++k_pipe) {
        copy(copy_a, tAgA(_, _, _, k_tile_next), tAsA(_, _, _, k_pipe));
        copy(copy_b, tBgB(_, _, _, k_tile_next), tBsB(_, _, _, k_pipe));
        cp_async_fence();
        --k_tile_count;
        if (k_tile_count > 0) {
            ++k_tile_next;
        }
    }

    TiledMma mma;
    ThrMMA thr_mma = mma.get_slice(threadIdx.x);
    Tensor tCgC = thr_mma.partition_C(gC);                                   // (MMA, MMA_M, MMA_N)
    Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));                 // (MMA, MMA_M, MMA_K)
    Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));                 // (MMA, MMA_N, MMA_K)
    Tensor tCrC = thr_mma.make_fragment_C(tCgC);                             // (MMA, MMA_M, MMA_N) f32
    clear(tCrC);

    TiledCopy s2r_copy_a = make_tiled_copy_A(S2RAtom{}, mma);
    ThrCopy s2r_thr_copy_a = s2r_copy_a.get_slice(threadIdx.x);
    Tensor tXsA = s2r_thr_copy_a.partition_S(sA);                            // (CPY, MMA_M, MMA_K, PIPE)
    Tensor tXrA = s2r_thr_copy_a.retile_D(tCrA);                             // (CPY, MMA_M, MMA_K)
    TiledCopy s2r_copy_b = make_tiled_copy_B(S2RAtom{}, mma);
    ThrCopy s2r_thr_copy_b = s2r_copy_b.get_slice(threadIdx.x);
    Tensor tXsB = s2r_thr_copy_b.partition_S(sB);                            // (CPY, MMA_N, MMA_K, PIPE)
    Tensor tXrB = s2r_thr_copy_b.retile_D(tCrB);                             // (CPY, MMA_N, MMA_K)

    int smem_pipe_read = 0;
    int smem_pipe_write = K_PIPE_MAX - 1;
    Tensor tXsA_p = tXsA(_, _, _, smem_pipe_read);
    Tensor tXsB_p = tXsB(_, _, _, smem_pipe_read);

    auto K_BLOCK_MAX = size<2>(tCrA);
    if (K_BLOCK_MAX > 1) {
        cp_async_wait<K_PIPE_MAX - 2>();     // the first stage has landed
        __syncthreads();
        copy(s2r_copy_a, tXsA_p(_, _, Int<0>{}), tXrA(_, _, Int<0>{}));
        copy(s2r_copy_b, tXsB_p(_, _, Int<0>{}), tXrB(_, _, Int<0>{}));
    }

    CUTE_NO_UNROLL
    while (k_tile_count > -(K_PIPE_MAX - 1)) {
        CUTE_UNROLL
        for (int k_block = 0; k_block < K_BLOCK_MAX; ++k_block) {
            if (k_block == K_BLOCK_MAX - 1) {
                tXsA_p = tXsA(_, _, _, smem_pipe_read);
                tXsB_p = tXsB(_, _, _, smem_pipe_read);
                cp_async_wait<K_PIPE_MAX - 2>();
                __syncthreads();
            }
            // shared -> registers of the next k-block
            auto k_block_next = (k_block + Int<1>{}) % K_BLOCK_MAX;
            copy(s2r_copy_a, tXsA_p(_, _, k_block_next), tXrA(_, _, k_block_next));
            copy(s2r_copy_b, tXsB_p(_, _, k_block_next), tXrB(_, _, k_block_next));
            // global -> shared of the next k-tile
            if (k_block == 0) {
                copy(copy_a, tAgA(_, _, _, k_tile_next), tAsA(_, _, _, smem_pipe_write));
                copy(copy_b, tBgB(_, _, _, k_tile_next), tBsB(_, _, _, smem_pipe_write));
                cp_async_fence();
                --k_tile_count;
                if (k_tile_count > 0) {
                    ++k_tile_next;
                }
                smem_pipe_write = smem_pipe_read;
                smem_pipe_read = (smem_pipe_read == K_PIPE_MAX - 1) ? 0 : smem_pipe_read + 1;
            }
            gemm(mma, tCrA(_, _, k_block), tCrB(_, _, k_block), tCrC);
        }
    }

    // the loop above issues a copy per k-tile also in its last K_PIPE_MAX - 1 trips (of the last k-tile again):
    // let them land before the CTA exits (the tutorial leaves them in flight)
    cp_async_wait<0>();

    if constexpr (is_same_v<TC, float>) {
        axpby(alpha, tCrC, beta, tCgC);
    } else {
        CUTE_UNROLL
        for (int i = 0; i < size(tCrC); ++i) {
            tCgC(i) = TC(alpha * tCrC(i) + beta * float(tCgC(i)));
        }
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128)
gemm_tn_f32(half_t const* a, half_t const* b, float* c, int M, int N, int K, float alpha, float beta) {
    gemm_device(a, b, c, M, N, K, alpha, beta);
}

extern "C" __global__ void __launch_bounds__(128)
gemm_tn_f16(half_t const* a, half_t const* b, half_t* c, int M, int N, int K, float alpha, float beta) {
    gemm_device(a, b, c, M, N, K, alpha, beta);
}
