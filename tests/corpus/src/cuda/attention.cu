// Attention forward, written plainly (no tensor cores): one 64-thread block per query row.
//
//   o[bh, i, :] = softmax_j(scale * q[bh, i, :] . k[bh, j, :]) @ v[bh, :, :]
//   q, k, v, o: (BH, n, 64) row-major f32, n <= kMaxKeys; launch: grid (n, BH), block (64)
//
// Each thread scores keys j = tid, tid + 64, ... into shared memory; the block's maximum and sum go through
// shared-memory trees; thread t then accumulates output column t.

constexpr int kD = 64;
constexpr int kMaxKeys = 256;

__device__ float block_reduce(float v, float* scratch, bool take_max) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (int half = kD / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            float other = scratch[threadIdx.x + half];
            scratch[threadIdx.x] = take_max ? fmaxf(scratch[threadIdx.x], other) : scratch[threadIdx.x] + other;
        }
        __syncthreads();
    }
    float r = scratch[0];
    __syncthreads();
    return r;
}

__global__ void __launch_bounds__(kD) attention_fwd(const float* __restrict__ q, const float* __restrict__ k,
                                                    const float* __restrict__ v, float* __restrict__ o, int n,
                                                    float scale) {
    __shared__ float p[kMaxKeys];
    __shared__ float qrow[kD];
    __shared__ float scratch[kD];
    size_t base = (size_t)blockIdx.y * n * kD;
    int i = blockIdx.x;
    qrow[threadIdx.x] = q[base + (size_t)i * kD + threadIdx.x];
    __syncthreads();
    float m = -INFINITY;
    for (int j = threadIdx.x; j < n; j += kD) {
        const float* kj = k + base + (size_t)j * kD;
        float s = 0.0f;
        for (int c = 0; c < kD; ++c) s += qrow[c] * kj[c];
        p[j] = s * scale;
        m = fmaxf(m, p[j]);
    }
    m = block_reduce(m, scratch, true);
    float l = 0.0f;
    for (int j = threadIdx.x; j < n; j += kD) {
        p[j] = __expf(p[j] - m);
        l += p[j];
    }
    l = block_reduce(l, scratch, false);
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += p[j] * v[base + (size_t)j * kD + threadIdx.x];
    o[base + (size_t)i * kD + threadIdx.x] = acc / l;
}
