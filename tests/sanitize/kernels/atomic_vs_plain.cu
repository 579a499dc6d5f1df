// One thread sets a shared counter with a plain store while the others add to it atomically.
__global__ void atomic_vs_plain(int *out)
{
    __shared__ int count;
    if (threadIdx.x == 0)
        count = 0;
    __syncthreads();
    atomicAdd(&count, 1);  // A
#ifdef FIXED
    __syncthreads();
#endif
    if (threadIdx.x == 32)
        count = 100;  // B
    __syncthreads();
    if (threadIdx.x == 0)
        out[0] = count;
}
