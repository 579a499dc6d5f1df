// Layer norm forward, one block per row, as in hand-written CUDA kernels: a shared-memory tree for the mean, then
// for the variance (two passes over the row), rsqrtf, then the affine map.
//
//   layernorm: y[r, c] = (x[r, c] - mean_r) * rstd_r * gamma[c] + beta[c], rstd_r = 1 / sqrt(var_r + eps)
//              and mean[r], rstd[r] written too; x, y: (rows, cols) row-major f32
//   launch: grid (rows), block (128); the block size is fixed at compile time (kThreads)

constexpr int kThreads = 128;

__device__ float block_sum(float v, float* scratch) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) scratch[threadIdx.x] += scratch[threadIdx.x + half];
        __syncthreads();
    }
    float total = scratch[0];
    __syncthreads();
    return total;
}

__global__ void __launch_bounds__(kThreads) layernorm(const float* __restrict__ x, const float* __restrict__ gamma,
                                                      const float* __restrict__ beta, float* __restrict__ y,
                                                      float* __restrict__ mean, float* __restrict__ rstd,
                                                      int cols, float eps) {
    __shared__ float scratch[kThreads];
    const float* in = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) s += in[c];
    float mu = block_sum(s, scratch) / cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        float d = in[c] - mu;
        q += d * d;
    }
    float r = rsqrtf(block_sum(q, scratch) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += kThreads) out[c] = (in[c] - mu) * r * gamma[c] + beta[c];
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = r;
    }
}
