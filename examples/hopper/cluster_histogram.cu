// warpsim: nvcc-flags -arch=sm_90a
//
// A histogram spread over the distributed shared memory of a cluster of two CTAs, written the way the CUDA
// Programming Guide teaches clusters: cooperative_groups' this_cluster(), each CTA holding half of the bins in its
// shared memory, every thread adding its values into whichever CTA holds their bin (map_shared_rank + atomicAdd:
// mapa and a generic atom on another CTA's shared memory), cluster.sync() before and after; then each CTA adds its
// half into the cluster's row of `bins`. Thread 0 of each CTA also records query_shared_rank (getctarank) of the
// peer's bins and of its own.
//
//   warpsim run examples/hopper/cluster_histogram.cu --kernel cluster_histogram --grid 4 --block 128 \
//       --smem 1024 --arg input=random:i32:3000 --arg bins=zeros:i32:2x256 --arg ranks=zeros:u32:8 \
//       --arg n=3000 --arg nbins=256

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

extern "C" __global__ void __cluster_dims__(2, 1, 1)
cluster_histogram(int const* input, int* bins, unsigned* ranks, int n, int nbins) {
    extern __shared__ int part[];                        // this CTA's bins: nbins / 2 of them
    cg::cluster_group cluster = cg::this_cluster();
    int const per_cta = nbins / int(cluster.num_blocks());
    unsigned const me = cluster.block_rank();
    for (int i = threadIdx.x; i < per_cta; i += blockDim.x) {
        part[i] = 0;
    }
    cluster.sync();                                      // every CTA's bins are zero before anyone adds
    int const cluster_id = blockIdx.x / int(cluster.num_blocks());
    int const clusters = gridDim.x / int(cluster.num_blocks());
    int const stride = blockDim.x * int(cluster.num_blocks());
    for (int i = cluster_id * (n / clusters) + int(me * blockDim.x + threadIdx.x);
         i < (cluster_id + 1) * (n / clusters); i += stride) {
        int bin = input[i] % nbins;
        bin += bin < 0 ? nbins : 0;
        int* owner = cluster.map_shared_rank(part, bin / per_cta);
        atomicAdd(owner + bin % per_cta, 1);
    }
    if (threadIdx.x == 0) {
        ranks[2 * blockIdx.x] = cluster.query_shared_rank(cluster.map_shared_rank(part, me ^ 1));
        ranks[2 * blockIdx.x + 1] = cluster.query_shared_rank(part);
    }
    cluster.sync();                                      // every add has landed before the bins are read
    int* row = bins + cluster_id * nbins + me * per_cta;
    for (int i = threadIdx.x; i < per_cta; i += blockDim.x) {
        row[i] = part[i];
    }
}
