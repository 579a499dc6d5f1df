// What a cluster's special registers and shared::cluster addresses hold on the GPU: a grid of CTAs in clusters of
// two (__cluster_dims__: launched like any kernel); each CTA's thread 0 writes, to its 16 words of `out`:
//   0 %cluster_ctarank   1 %cluster_nctarank  2 %clusterid.x  3 %nclusterid.x  4 %cluster_ctaid.x
//   5 %cluster_nctaid.x  6 %is_explicit_cluster  7 the shared::cta address of `cell` (cvta)
//   8 mapa.shared::cluster of it for rank 0   9 ... for rank 1
//  10, 11 the generic address of `cell` (low, high word)  12, 13 mapa (generic) of it for the other rank (low, high)
//  14 what the other CTA stored into `cell` through distributed shared memory (its rank + 100), read after
//     barrier.cluster  15 %ctaid.x
//
//   warpsim run examples/hopper/cluster_probe.cu --kernel cluster_probe --grid 4 --block 32 \
//       --arg out=zeros:u32:64

#include <cstdint>

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_probe(uint32_t* out) {
    __shared__ uint32_t cell;
    uint32_t v[16];
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[0]));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[1]));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(v[2]));
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(v[3]));
    asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v[4]));
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v[5]));
    asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v[6]));
    uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(&cell));
    v[7] = s;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(v[8]) : "r"(s));
    asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(v[9]) : "r"(s));
    uint64_t g = reinterpret_cast<uint64_t>(&cell);
    v[10] = static_cast<uint32_t>(g);
    v[11] = static_cast<uint32_t>(g >> 32);
    uint64_t peer;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(peer) : "l"(g), "r"(v[0] ^ 1));
    v[12] = static_cast<uint32_t>(peer);
    v[13] = static_cast<uint32_t>(peer >> 32);
    asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;");    // both CTAs have started
    if (threadIdx.x == 0) {
        asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(v[0] ? v[8] : v[9]), "r"(v[0] + 100) : "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
    v[14] = cell;
    v[15] = blockIdx.x;
    if (threadIdx.x == 0) {
        for (int i = 0; i < 16; ++i) {
            out[blockIdx.x * 16 + i] = v[i];
        }
    }
}
