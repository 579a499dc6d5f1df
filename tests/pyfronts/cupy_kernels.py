"""CuPy RawKernel sources as CuPy's users write them (``extern "C"`` or a C++ name), with the argument tuples their
host code passes. Nothing here knows warpsim: gpu_check.py hands the same sources to ``cupy.RawKernel``."""

ADD = r'''
extern "C" __global__ void vector_add(const float* x, const float* y, float* z, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}
'''

BLOCK_SUM = r'''
extern "C" __global__ void block_sum(const float* x, float* partial, int n) {
    __shared__ float tile[256];
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    tile[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s) tile[t] += tile[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = tile[0];
}
'''

HISTOGRAM_2D = r'''
__global__ void histogram_2d(const int* img, int width, int height, unsigned int* bins, int nbins) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) atomicAdd(&bins[img[y * width + x] % nbins], 1u);
}
'''

POLY = r'''
extern "C" __global__ void poly(const double* x, double* y, double a, double b, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] * x[i] + b;
        if (i == 0) printf("poly: n=%lld a=%g\n", n, a);
    }
}
'''
