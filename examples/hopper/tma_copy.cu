// warpsim: nvcc-flags -arch=sm_90a
//
// The TMA on its own, through CuTe's copy atoms: where a tensor map's box lands in shared memory (each swizzle
// mode), what fills the part of a box outside the tensor, and what a TMA store writes back.
//
// tile_load: CTA (x, y) loads the box at element coordinates (x * box0, y * box1) into shared memory (an mbarrier
// counts its bytes), then copies the shared bytes as they lie, swizzled, to its slice of `out` (`bytes` a CTA).
// tile_store: CTA (x, y) fills shared memory with its slice of `in` and stores it through the map as the box at
// (x * box0, y * box1); the TMA clips what lies outside the tensor. tile_reduce_add: the same, but the box is added
// into the tensor element by element (CuTe's SM90_TMA_REDUCE_ADD: cp.reduce.async.bulk.tensor).
//
//   warpsim run examples/hopper/tma_copy.cu --kernel tile_load --grid 2,3 --block 128 --smem 8192 \
//       --arg map=tensormap:64x32:64B:random:f16:96x128 --arg out=zeros:u32:12288 \
//       --arg box0=32 --arg box1=64 --arg bytes=4096

#include <cstdint>
#include <cuda.h>

#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>

using Barrier = cutlass::arch::ClusterTransactionBarrier;
constexpr uint64_t HINT = static_cast<uint64_t>(cute::TMA::CacheHintSm90::EVICT_FIRST);

extern "C" __global__ void tile_load(const __grid_constant__ CUtensorMap map, uint32_t* out, int box0, int box1,
                                     int bytes) {
    extern __shared__ __align__(1024) unsigned char raw[];
    __shared__ alignas(8) uint64_t full;
    if (threadIdx.x == 0) {
        Barrier::init(&full, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        Barrier::arrive_and_expect_tx(&full, bytes);
        cute::SM90_TMA_LOAD_2D::copy(&map, &full, HINT, raw, blockIdx.x * box0, blockIdx.y * box1);
    }
    Barrier::wait(&full, 0);
    uint32_t const* words = reinterpret_cast<uint32_t const*>(raw);
    size_t const cta = blockIdx.y * gridDim.x + blockIdx.x;
    for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x) {
        out[cta * (bytes / 4) + i] = words[i];
    }
}

// CTA (x, y) stages its slice of `in` in shared memory and hands the box at (x * box0, y * box1) to the TMA: Copy is
// SM90_TMA_STORE_2D (the box written) or SM90_TMA_REDUCE_ADD_2D (added into the tensor)
template <class Copy>
__device__ void box_out(CUtensorMap const& map, uint32_t const* in, int box0, int box1, int bytes) {
    extern __shared__ __align__(1024) unsigned char staged[];
    uint32_t* words = reinterpret_cast<uint32_t*>(staged);
    size_t const cta = blockIdx.y * gridDim.x + blockIdx.x;
    for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x) {
        words[i] = in[cta * (bytes / 4) + i];
    }
    cutlass::arch::fence_view_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        Copy::copy(&map, staged, blockIdx.x * box0, blockIdx.y * box1);
        cute::tma_store_arrive();
        cute::tma_store_wait<0>();
    }
}

extern "C" __global__ void tile_store(const __grid_constant__ CUtensorMap map, uint32_t const* in, int box0,
                                      int box1, int bytes) {
    box_out<cute::SM90_TMA_STORE_2D>(map, in, box0, box1, bytes);
}

extern "C" __global__ void tile_reduce_add(const __grid_constant__ CUtensorMap map, uint32_t const* in, int box0,
                                           int box1, int bytes) {
    box_out<cute::SM90_TMA_REDUCE_ADD_2D>(map, in, box0, box1, bytes);
}
