// The classic shared-memory tiled matrix multiply (a bench kernel of the sanitizer, correct: it reports nothing).
#define TILE 16

__global__ void matmul_tiled(const float *a, const float *b, float *c, int n)
{
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        as[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
