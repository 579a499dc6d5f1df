// warpsim: nvcc-flags -arch=sm_90a
//
// A Hopper GEMM the way CUTLASS's kernels are built, at CuTe's arch level: TMA loads into 128-byte-swizzled
// shared memory, a ring of STAGES buffers guarded by mbarriers (full: the TMA's transaction bytes; empty: the
// consumer's release), a producer warpgroup (one thread issues the copies) and a consumer warpgroup that runs
// wgmma on the swizzled tiles through matrix descriptors.
//
//   C (M x N, f32) = A (M x K, f16, row-major) * B^T (B: N x K, f16, row-major): "TN", both operands K-major.
//
// One CTA computes a 64 x 64 tile of C (grid ceil(N/64), ceil(M/64)), block 256: warps 0-3 consume, warp 4's lane 0
// produces. gemm_tn writes C from the accumulators; gemm_tn_tma_store stages the tile in shared memory and writes it
// with a TMA store, which leaves out the part of a partial tile outside C. gemm_tn_ws is warp-specialised the way
// CUTLASS's sm90 kernels are: a four-stage ring, the producer warpgroup gives registers back (setmaxnreg.dec) and
// elects its issuing thread (elect.sync), the consumer warpgroup takes them (setmaxnreg.inc). M, N, K need not be multiples of 64: the
// TMA fills what lies outside A and B with zeros (the row strides must be multiples of 16 bytes: K of 8, N of 4).
//
//   warpsim run examples/hopper/tma_gemm.cu --kernel gemm_tn --grid 2,2 --block 256 --smem 50176 \
//       --arg tma_a=tensormap:64x64:128B:random:f16:128x256 --arg tma_b=tensormap:64x64:128B:random:f16:128x256 \
//       --arg c=zeros:f32:128x128 --arg M=128 --arg N=128 --arg K=256

#include <cstdint>
#include <cuda.h>

#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/arch/mma_sm90_desc.hpp>
#include <cute/arch/mma_sm90_gmma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

using namespace cute::SM90::GMMA;
using Barrier = cutlass::arch::ClusterTransactionBarrier;

constexpr int BM = 64, BN = 64, BK = 64;
constexpr int TILE_BYTES = BM * BK * 2;                 // one 64 x 64 f16 tile: 64 rows of 128 bytes
using Mma = MMA_64x64x16_F32F16F16_SS<Major::K, Major::K>;
// the L2 cache policy of the TMA loads: CuTe's default (a policy of 0 is not one; see the closing note of issue 28)
constexpr uint64_t HINT = static_cast<uint64_t>(cute::TMA::CacheHintSm90::EVICT_NORMAL);

template <int STAGES>
struct Shared {
    alignas(1024) uint16_t a[STAGES][BM * BK];
    alignas(1024) uint16_t b[STAGES][BN * BK];
    alignas(8) uint64_t full[STAGES];
    alignas(8) uint64_t empty[STAGES];
};

// a K-major 128-byte-swizzled tile: rows of 128 bytes, 8-row groups 1024 bytes apart (SBO); LBO unused
__device__ uint64_t tile_descriptor(void const* tile) {
    cute::GmmaDescriptor desc;
    desc.bitfield.start_address_ = static_cast<uint16_t>(cute::cast_smem_ptr_to_uint(tile) >> 4);
    desc.bitfield.leading_byte_offset_ = 1;
    desc.bitfield.stride_byte_offset_ = 1024 >> 4;
    desc.bitfield.base_offset_ = 0;
    desc.bitfield.layout_type_ = static_cast<uint8_t>(LayoutType::B128);
    return desc.desc_;
}

template <size_t... I>
__device__ void mma(uint64_t da, uint64_t db, float* d, ScaleOut scale, std::index_sequence<I...>) {
    Mma::fma(da, db, d[I]..., scale);
}

// the K loop; leaves this consumer thread's 32 accumulators in d. WS: warp-specialised (setmaxnreg, elect.sync)
template <int STAGES, bool WS = false>
__device__ void mainloop(Shared<STAGES>& s, CUtensorMap const* tma_a, CUtensorMap const* tma_b, int K, float* d) {
    int const warp = threadIdx.x / 32;
    int const m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    int const tiles = (K + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int st = 0; st < STAGES; ++st) {
            Barrier::init(&s.full[st], 1);
            Barrier::init(&s.empty[st], 1);
        }
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    if (WS) {           // the CTA's pool is what it was launched with (ptxas's count, 58 here, x 256): 24 + 80 fit
        if (warp >= 4) {
            cutlass::arch::warpgroup_reg_dealloc<24>();
        } else {
            cutlass::arch::warpgroup_reg_alloc<80>();
        }
    }
    if (warp == 4 && (WS ? cute::elect_one_sync() : threadIdx.x % 32 == 0)) {     // the producer
        for (int kt = 0; kt < tiles; ++kt) {
            int const st = kt % STAGES;
            if (kt >= STAGES) {
                Barrier::wait(&s.empty[st], (kt / STAGES - 1) & 1);
            }
            Barrier::arrive_and_expect_tx(&s.full[st], 2 * TILE_BYTES);
            cute::SM90_TMA_LOAD_2D::copy(tma_a, &s.full[st], HINT, s.a[st], kt * BK, m0);
            cute::SM90_TMA_LOAD_2D::copy(tma_b, &s.full[st], HINT, s.b[st], kt * BK, n0);
        }
    } else if (warp < 4) {                                          // the consumer warpgroup
        for (int kt = 0; kt < tiles; ++kt) {
            int const st = kt % STAGES;
            Barrier::wait(&s.full[st], (kt / STAGES) & 1);
            uint64_t const da = tile_descriptor(s.a[st]), db = tile_descriptor(s.b[st]);
            cute::warpgroup_arrive();
            for (int kk = 0; kk < BK / 16; ++kk) {                  // k16 steps: 32 bytes along the swizzled rows
                mma(da + 2 * kk, db + 2 * kk, d, kt == 0 && kk == 0 ? ScaleOut::Zero : ScaleOut::One,
                    std::make_index_sequence<32>{});
            }
            cute::warpgroup_commit_batch();
            cute::warpgroup_wait<0>();
            if (threadIdx.x == 0) {
                Barrier::arrive(&s.empty[st]);
            }
        }
    }
}

// (row, column) in the CTA's 64 x 64 tile of accumulator i of this consumer thread, as CuTe's GMMA atom states it:
// GMMA::CLayout_64x64 maps (thread, value) to the column-major index of the tile
__device__ void place(int i, int& row, int& col) {
    int const index = CLayout_64x64{}(int(threadIdx.x), i);
    row = index % BM;
    col = index / BM;
}

// the consumer threads' accumulators into C (row-major M x N), clipped to C
__device__ void store(float const* d, float* c, int M, int N) {
    if (threadIdx.x < 128) {
        for (int i = 0; i < 32; ++i) {
            int row, col;
            place(i, row, col);
            row += blockIdx.y * BM;
            col += blockIdx.x * BN;
            if (row < M && col < N) {
                c[size_t(row) * N + col] = d[i];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) gemm_tn(const __grid_constant__ CUtensorMap tma_a,
                                                          const __grid_constant__ CUtensorMap tma_b,
                                                          float* c, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char raw[];
    float d[32];
    mainloop(*reinterpret_cast<Shared<2>*>(raw), &tma_a, &tma_b, K, d);
    store(d, c, M, N);
}

extern "C" __global__ void __launch_bounds__(256, 1) gemm_tn_ws(const __grid_constant__ CUtensorMap tma_a,
                                                               const __grid_constant__ CUtensorMap tma_b,
                                                               float* c, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char raw[];
    float d[32];
    mainloop<4, true>(*reinterpret_cast<Shared<4>*>(raw), &tma_a, &tma_b, K, d);
    store(d, c, M, N);
}

extern "C" __global__ void __launch_bounds__(256) gemm_tn_tma_store(const __grid_constant__ CUtensorMap tma_a,
                                                                    const __grid_constant__ CUtensorMap tma_b,
                                                                    const __grid_constant__ CUtensorMap tma_c,
                                                                    int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char raw[];
    Shared<2>& s = *reinterpret_cast<Shared<2>*>(raw);
    float d[32];
    mainloop(s, &tma_a, &tma_b, K, d);
    __syncthreads();                                                // every stage consumed: reuse them for C
    float* tile = reinterpret_cast<float*>(s.a);                    // 64 x 64 f32, row-major: 16 KB
    if (threadIdx.x < 128) {
        for (int i = 0; i < 32; ++i) {
            int row, col;
            place(i, row, col);
            tile[row * BN + col] = d[i];
        }
    }
    cutlass::arch::fence_view_async_shared();                       // the generic stores, visible to the TMA
    __syncthreads();
    if (threadIdx.x == 0) {
        cute::SM90_TMA_STORE_2D::copy(&tma_c, tile, blockIdx.x * BN, blockIdx.y * BM);
        cute::tma_store_arrive();
        cute::tma_store_wait<0>();
    }
}
