// Layer norm forward, one CTA per row, written as CuTe users write it and compiled with nvcc's DEFAULTS.
//
// For x, y: [rows, cols] half row-major, gamma, beta: [cols] half, mean, rstd: [rows] f32, cols >= 1 (any):
//   mean[r] = sum(x[r, :]) / cols,  var = sum((x[r, :] - mean)^2) / cols,  rstd[r] = rsqrtf(var + eps),
//   y[r, c] = (x[r, c] - mean) * rstd * gamma[c] + beta[c]   (f32 arithmetic, y rounded to half).
// Two passes over the row (the second reads it again): each thread strides over the columns (c = tid + 128 i),
// then a block reduction: butterfly shuffles inside each warp, the 4 warp sums through shared memory.
//
// Compiled with nvcc's default flags ON PURPOSE (no rounding intrinsics, no -fmad=false, no flags line): the
// centred squares and the affine output are where nvcc and ptxas may contract mul+add into FMAs.
//
// Kernel: layer_norm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps)
// Launch: grid rows, block 128, no dynamic shared memory.
//
//   warpsim run examples/cute_cpp/as_compiled/layer_norm.cu --kernel layer_norm_fwd --grid 4 --block 128 \
//       --arg x=x.npy --arg gamma=g.npy --arg beta=b.npy --arg y=zeros:f16:4x768 --arg mean=zeros:f32:4 \
//       --arg rstd=zeros:f32:4 --arg rows=4 --arg cols=768 --arg eps=1e-5

#include <cute/tensor.hpp>

using namespace cute;

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;

// the sum of v over the CTA, returned to every thread
__device__ float block_sum(float v, float* partials) {
    CUTE_UNROLL
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(0xffffffff, v, offset);
    }
    int const warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) {
        partials[warp] = v;
    }
    __syncthreads();
    float total = 0.f;
    CUTE_UNROLL
    for (int w = 0; w < kWarps; ++w) {
        total += partials[w];
    }
    __syncthreads();     // partials may be written again by the next reduction
    return total;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
layer_norm_fwd(half_t const* x, half_t const* gamma, half_t const* beta, half_t* y, float* mean, float* rstd,
               int rows, int cols, float eps) {
    __shared__ float partials[kWarps];
    int const row = blockIdx.x;
    Tensor mX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(rows, cols), LayoutRight{}));
    Tensor mY = make_tensor(make_gmem_ptr(y), make_layout(make_shape(rows, cols), LayoutRight{}));
    Tensor gGamma = make_tensor(make_gmem_ptr(gamma), make_shape(cols));
    Tensor gBeta = make_tensor(make_gmem_ptr(beta), make_shape(cols));
    Tensor gX = mX(row, _);
    Tensor gY = mY(row, _);

    float sum = 0.f;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        sum += float(gX(c));
    }
    float const mu = block_sum(sum, partials) / cols;

    float sq = 0.f;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        float const d = float(gX(c)) - mu;
        sq += d * d;
    }
    float const var = block_sum(sq, partials) / cols;
    float const rs = rsqrtf(var + eps);

    for (int c = threadIdx.x; c < cols; c += kThreads) {
        gY(c) = half_t((float(gX(c)) - mu) * rs * float(gGamma(c)) + float(gBeta(c)));
    }
    if (threadIdx.x == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
}
