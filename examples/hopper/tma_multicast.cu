// A cluster of two CTAs shares one TMA tile: each CTA loads half of its cluster's rows with
// cp.async.bulk.tensor ... .multicast::cluster to both CTAs (CuTe's SM90_TMA_LOAD_MULTICAST_2D), so each CTA's
// mbarrier counts the bytes of both halves (one arrive.expect_tx for the whole tile). Then
//   - each CTA copies its whole tile, as it lies in shared memory, to its slice of `out`;
//   - each CTA reads its peer's first tile word through distributed shared memory (mapa + ld.shared::cluster) into
//     `peer[cta]`;
//   - each CTA's thread 0 arrives on CTA 0's `done` mbarrier (a remote arrive, as CUTLASS's consumers release a
//     producer's stage) and CTA 0 waits for both before it writes `arrivals[cluster]`;
//   - barrier.cluster (cute::cluster_sync) before the loads (every mbarrier initialised) and at the end (no CTA
//     leaves while its peer may still touch its shared memory).
//
//   warpsim run examples/hopper/tma_multicast.cu --kernel tile_multicast --grid 4 --block 128 --smem 4096 \
//       --arg map=tensormap:16x32:none:random:f32:64x40 --arg out=zeros:u32:4096 --arg peer=zeros:u32:4 \
//       --arg arrivals=zeros:u32:2 --arg box_rows=16 --arg bytes=4096

#include <cstdint>
#include <cuda.h>

#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>

using Barrier = cutlass::arch::ClusterTransactionBarrier;
constexpr uint64_t HINT = static_cast<uint64_t>(cute::TMA::CacheHintSm90::EVICT_NORMAL);

extern "C" __global__ void __cluster_dims__(2, 1, 1)
tile_multicast(const __grid_constant__ CUtensorMap map, uint32_t* out, uint32_t* peer, uint32_t* arrivals,
               int box_rows, int bytes) {
    extern __shared__ __align__(1024) unsigned char raw[];
    __shared__ alignas(8) uint64_t full;
    __shared__ alignas(8) uint64_t done;
    uint32_t const rank = cute::block_rank_in_cluster();
    uint32_t const cluster = blockIdx.x / 2;
    if (threadIdx.x == 0) {
        Barrier::init(&full, 1);
        cutlass::arch::ClusterBarrier::init(&done, 2);
        cutlass::arch::fence_barrier_init();
    }
    cute::cluster_sync();
    if (threadIdx.x == 0) {
        Barrier::arrive_and_expect_tx(&full, bytes);
        cute::SM90_TMA_LOAD_MULTICAST_2D::copy(&map, &full, uint16_t(0x3), HINT, raw + rank * (bytes / 2), 0,
                                               (cluster * 2 + rank) * box_rows);
    }
    Barrier::wait(&full, 0);
    uint32_t const* words = reinterpret_cast<uint32_t const*>(raw);
    for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x) {
        out[blockIdx.x * (bytes / 4) + i] = words[i];
    }
    if (threadIdx.x == 0) {
        uint32_t remote = cute::set_block_rank(static_cast<uint32_t>(__cvta_generic_to_shared(raw)), rank ^ 1);
        uint32_t v;
        asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(remote) : "memory");
        peer[blockIdx.x] = v;
        cutlass::arch::ClusterBarrier::arrive(&done, 0, 1);
    }
    if (rank == 0 && threadIdx.x == 0) {
        cutlass::arch::ClusterBarrier::wait(&done, 0);
        arrivals[cluster] = 2;
    }
    cute::cluster_sync();
}
