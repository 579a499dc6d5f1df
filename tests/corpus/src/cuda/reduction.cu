// Reductions as CUDA C++ users write them: CUB's BlockReduce for a row sum, warp shuffles and an atomicAdd for a
// total.
//
//   row_sum:  out[r] = sum_c x[r, c] for an (R, C) row-major f32 array, one 256-thread block per row
//             (each thread sums a strided slice, then cub::BlockReduce); grid (R), block (256)
//   sum_u32:  *total += sum_i x[i] (u64 atomics: order-free, so bit for bit): a grid-stride loop, a
//             __shfl_down_sync tree per warp, one atomicAdd per warp

#include <cstdint>
#include <cub/block/block_reduce.cuh>

constexpr int kBlock = 256;

__global__ void row_sum(const float* __restrict__ x, float* __restrict__ out, int cols) {
    using BlockReduce = cub::BlockReduce<float, kBlock>;
    __shared__ typename BlockReduce::TempStorage temp;
    const float* row = x + (size_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kBlock) acc += row[c];
    float total = BlockReduce(temp).Sum(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

__global__ void sum_u32(const uint32_t* __restrict__ x, unsigned long long* __restrict__ total, int n) {
    unsigned long long acc = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += x[i];
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, acc);
}
