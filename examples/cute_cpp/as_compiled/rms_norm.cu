// RMSNorm forward, one warp per row, written as CuTe users write it and compiled with nvcc's DEFAULTS.
//
// For x, y: [rows, cols] f32 row-major, weight: [cols] f32, cols a multiple of 4 (128-bit loads), cols <= 2048:
//   y[r, c] = x[r, c] * rsqrtf(sum(x[r, :]^2) / cols + eps) * weight[c].
// Lane l of the row's warp holds the 4-float chunks l, l + 32, ... of the row in registers (a CuTe fragment,
// the row read once with 128-bit loads), the sum of squares by butterfly shuffles (__shfl_xor_sync 16 .. 1).
//
// Compiled with nvcc's default flags ON PURPOSE (no rounding intrinsics, no -fmad=false, no flags line): the sum
// of squares is where nvcc contracts x * x + acc into an FMA in a user's build.
//
// Kernel: rms_norm_fwd(x, weight, y, rows, cols, eps)
// Launch: grid ceil(rows / 4), block 128 (4 warps, 4 rows per CTA), no shared memory.
//
//   warpsim run examples/cute_cpp/as_compiled/rms_norm.cu --kernel rms_norm_fwd --grid 2 --block 128 \
//       --arg x=x.npy --arg weight=w.npy --arg y=zeros:f32:8x512 --arg rows=8 --arg cols=512 --arg eps=1e-6

#include <cute/tensor.hpp>

using namespace cute;

namespace {

constexpr int kWarpSize = 32;
constexpr int kVec = 4;                                   // floats per 128-bit load
constexpr int kMaxCols = 2048;
constexpr int kChunks = kMaxCols / (kWarpSize * kVec);    // 4-float chunks per lane

}  // namespace

extern "C" __global__ void __launch_bounds__(128)
rms_norm_fwd(float const* x, float const* weight, float* y, int rows, int cols, float eps) {
    int const lane = threadIdx.x % kWarpSize;
    int const row = blockIdx.x * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
    if (row >= rows) {
        return;
    }
    // (vec, chunk) -> column of this lane: chunk j holds columns 4 (l + 32 j) .. 4 (l + 32 j) + 3
    auto lane_layout = Layout<Shape<Int<kVec>, Int<kChunks>>, Stride<_1, Int<kWarpSize * kVec>>>{};
    Tensor gX = make_tensor(make_gmem_ptr(x + row * cols + lane * kVec), lane_layout);
    Tensor gY = make_tensor(make_gmem_ptr(y + row * cols + lane * kVec), lane_layout);
    Tensor gW = make_tensor(make_gmem_ptr(weight + lane * kVec), lane_layout);
    Tensor rX = make_tensor_like(gX);                     // (vec, chunk) in registers
    Tensor rW = make_tensor_like(gW);
    clear(rX);

    int const chunks = cols / kVec;
    CUTE_UNROLL
    for (int j = 0; j < kChunks; ++j) {
        if (lane + j * kWarpSize < chunks) {
            copy(AutoVectorizingCopyWithAssumedAlignment<128>{}, gX(_, j), rX(_, j));
            copy(AutoVectorizingCopyWithAssumedAlignment<128>{}, gW(_, j), rW(_, j));
        }
    }

    float sum_sq = 0.f;
    CUTE_UNROLL
    for (int i = 0; i < size(rX); ++i) {
        sum_sq += rX(i) * rX(i);
    }
    CUTE_UNROLL
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        sum_sq += __shfl_xor_sync(0xffffffff, sum_sq, offset);
    }
    float const inv_rms = rsqrtf(sum_sq / cols + eps);

    CUTE_UNROLL
    for (int j = 0; j < kChunks; ++j) {
        if (lane + j * kWarpSize < chunks) {
            CUTE_UNROLL
            for (int v = 0; v < kVec; ++v) {
                rX(v, j) = rX(v, j) * inv_rms * rW(v, j);
            }
            copy(AutoVectorizingCopyWithAssumedAlignment<128>{}, rX(_, j), gY(_, j));
        }
    }
}
