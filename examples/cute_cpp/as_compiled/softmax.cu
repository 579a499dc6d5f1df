// Row softmax, one warp per row, written as CuTe users write it and compiled with nvcc's DEFAULTS.
//
// y[r, :] = exp(x[r, :] - max(x[r, :])) / sum(exp(x[r, :] - max(x[r, :]))) for x, y: [rows, cols] f32
// row-major, 1 <= cols <= 1024 (any: the tail is masked).
// Lane l of the row's warp holds columns l, l + 32, l + 64, ... in registers (a CuTe fragment of 32 values,
// the row read once): the row max and the sum of expf(x - max) by butterfly shuffles (__shfl_xor_sync
// 16, 8, 4, 2, 1), then y = e * (1 / sum).
//
// Compiled with nvcc's default flags ON PURPOSE (no rounding intrinsics, no -fmad=false, no flags line): expf is
// the library's (range reduction by FMAs, then ex2.approx), as in a user's build.
//
// Kernel: softmax_rows(x, y, rows, cols)
// Launch: grid ceil(rows / 4), block 128 (4 warps, 4 rows per CTA), no shared memory.
//
//   warpsim run examples/cute_cpp/as_compiled/softmax.cu --kernel softmax_rows --grid 2 --block 128 \
//       --arg x=x.npy --arg y=zeros:f32:8x500 --arg rows=8 --arg cols=500

#include <cute/tensor.hpp>

using namespace cute;

namespace {

constexpr int kWarpSize = 32;
constexpr int kMaxCols = 1024;
constexpr int kPerLane = kMaxCols / kWarpSize;

__device__ float warp_max(float x) {
    CUTE_UNROLL
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, offset));
    }
    return x;
}

__device__ float warp_sum(float x) {
    CUTE_UNROLL
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        x += __shfl_xor_sync(0xffffffff, x, offset);
    }
    return x;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128) softmax_rows(float const* x, float* y, int rows, int cols) {
    int const lane = threadIdx.x % kWarpSize;
    int const row = blockIdx.x * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
    if (row >= rows) {
        return;
    }
    Tensor mX = make_tensor(make_gmem_ptr(x), make_layout(make_shape(rows, cols), LayoutRight{}));
    Tensor mY = make_tensor(make_gmem_ptr(y), make_layout(make_shape(rows, cols), LayoutRight{}));
    // this lane's columns of the row: (kPerLane) -> element, lane + 32 i
    auto lane_cols = make_layout(Int<kPerLane>{}, Int<kWarpSize>{});
    Tensor gX = make_tensor(mX(row, _).data() + lane, lane_cols);
    Tensor gY = make_tensor(mY(row, _).data() + lane, lane_cols);

    Tensor rX = make_tensor<float>(Int<kPerLane>{});
    float row_max = -INFINITY;
    CUTE_UNROLL
    for (int i = 0; i < kPerLane; ++i) {
        rX(i) = lane + i * kWarpSize < cols ? gX(i) : -INFINITY;
        row_max = fmaxf(row_max, rX(i));
    }
    row_max = warp_max(row_max);

    float row_sum = 0.f;
    CUTE_UNROLL
    for (int i = 0; i < kPerLane; ++i) {
        rX(i) = expf(rX(i) - row_max);
        row_sum += rX(i);
    }
    row_sum = warp_sum(row_sum);

    float const inv_sum = 1.f / row_sum;
    CUTE_UNROLL
    for (int i = 0; i < kPerLane; ++i) {
        if (lane + i * kWarpSize < cols) {
            gY(i) = rX(i) * inv_sum;
        }
    }
}
