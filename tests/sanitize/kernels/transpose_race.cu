// A shared-memory transpose of a 32x32 tile: the __syncthreads() between the write and the read is missing.
#define TILE 32

__global__ void transpose_race(const float *in, float *out)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = threadIdx.x, y = threadIdx.y;
    for (int j = y; j < TILE; j += blockDim.y)
        tile[j][x] = in[j * TILE + x];  // A
#ifdef FIXED
    __syncthreads();
#endif
    for (int j = y; j < TILE; j += blockDim.y)
        out[j * TILE + x] = tile[x][j];  // B
}
