// Row softmax, one warp per row, as in many hand-written CUDA softmax kernels: each lane keeps a strided slice
// of the row, the row's maximum and the sum of exponentials go through __shfl_xor_sync butterflies.
//
//   softmax_rows: y[r, c] = exp(x[r, c] - max_c x[r, :]) / sum_c exp(x[r, c] - max)
//   x, y: (rows, cols) row-major f32; block (128): four rows per block; grid ceil(rows / 4)
//
// Built several ways (tests/corpus/generate.py): nvcc's defaults (expf and the division accurate), with
// --use_fast_math (ex2.approx and an approximate division), -G (device debug) and -lineinfo.

#include <cfloat>

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;
    float m = -FLT_MAX;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[c]);
    m = warp_max(m);
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += expf(in[c] - m);
    s = warp_sum(s);
    for (int c = lane; c < cols; c += 32) out[c] = expf(in[c] - m) / s;
}
