// warpsim: nvcc-flags -arch=sm_90a
//
// Hopper's bulk asynchronous reductions, as CUDA C++ writes them with libcu++'s cuda::ptx (cp.reduce.async.bulk):
// each CTA stages its slice of `in` in shared memory and reduces it, element by element, into its slice of `out`
// in global memory (`.bulk_group`), or into the shared memory of the other CTA of its cluster
// (`.shared::cluster ... .mbarrier::complete_tx::bytes`), which then writes what it holds to `out`.
//
//   warpsim run examples/hopper/bulk_reduce.cu --kernel reduce_add_f32 --grid 4 --block 64 \
//       --arg out=random:f32:1024 --arg in=random:u32:1024 --arg n=256

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_fp16.h>
#include <cstdint>

namespace ptx = cuda::ptx;

// CTA b: shared <- in[b n ..], then out[b n ..] op= shared (n elements, n * sizeof(T) a multiple of 16)
template <class T, class Op>
__device__ void reduce_into_global(T* out, T const* in, int n, Op op) {
    extern __shared__ __align__(16) unsigned char raw[];
    T* stage = reinterpret_cast<T*>(raw);
    size_t const base = size_t(blockIdx.x) * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        stage[i] = in[base + i];
    }
    ptx::fence_proxy_async(ptx::space_shared);          // the generic proxy's writes, seen by the bulk copy
    __syncthreads();
    if (threadIdx.x == 0) {
        ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, op, out + base, stage,
                                  uint32_t(n * sizeof(T)));
        ptx::cp_async_bulk_commit_group();
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
    }
}

extern "C" __global__ void reduce_add_f32(float* out, float const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_add);
}

extern "C" __global__ void reduce_add_f64(double* out, double const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_add);
}

extern "C" __global__ void reduce_add_f16(__half* out, __half const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_add);
}

extern "C" __global__ void reduce_add_u32(uint32_t* out, uint32_t const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_add);
}

extern "C" __global__ void reduce_min_s32(int32_t* out, int32_t const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_min);
}

extern "C" __global__ void reduce_max_u64(uint64_t* out, uint64_t const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_max);
}

extern "C" __global__ void reduce_inc_u32(uint32_t* out, uint32_t const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_inc);
}

extern "C" __global__ void reduce_xor_b64(uint64_t* out, uint64_t const* in, int n) {
    reduce_into_global(out, in, n, ptx::op_xor_op);
}

// clusters of two: CTA b holds out[b n ..] in shared memory; its peer reduces its slice of `in` into it, completing
// the bytes on b's mbarrier, which b waits for before writing its shared memory to out (n u32, 4 n a multiple of 16)
extern "C" __global__ void __cluster_dims__(2, 1, 1) reduce_add_peer(uint32_t* out, uint32_t const* in, int n) {
    namespace cg = cooperative_groups;
    extern __shared__ __align__(16) uint32_t words[];
    __shared__ alignas(8) uint64_t landed;
    uint32_t* mine = words;                                       // what the peer reduces into
    uint32_t* stage = mine + n;                                   // what this CTA reduces into the peer
    cg::cluster_group cluster = cg::this_cluster();
    size_t const base = size_t(blockIdx.x) * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        mine[i] = out[base + i];
        stage[i] = in[base + i];
    }
    if (threadIdx.x == 0) {
        ptx::mbarrier_init(&landed, 1);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &landed,
                                       uint32_t(4 * n));
    }
    ptx::fence_proxy_async(ptx::space_shared);
    cluster.sync();                                                // both barriers armed, both stages written
    if (threadIdx.x == 0) {
        unsigned const peer = cluster.block_rank() ^ 1;
        ptx::cp_reduce_async_bulk(ptx::space_cluster, ptx::space_shared, ptx::op_add,
                                  cluster.map_shared_rank(mine, peer), stage, uint32_t(4 * n),
                                  cluster.map_shared_rank(&landed, peer));
    }
    while (!ptx::mbarrier_try_wait_parity(&landed, 0)) {
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[base + i] = mine[i];
    }
    cluster.sync();                                                // the peer's shared memory outlives its use
}
