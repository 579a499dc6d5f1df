// A shared-memory histogram incremented without atomics.
__global__ void histogram_shared(const int *in, int *out)
{
    __shared__ int hist[8];
    int tid = threadIdx.x;
    if (tid < 8)
        hist[tid] = 0;
    __syncthreads();
#ifdef FIXED
    atomicAdd(&hist[in[tid] & 7], 1);
#else
    hist[in[tid] & 7] += 1;  // A
#endif
    __syncthreads();
    if (tid < 8)
        out[tid] = hist[tid];
}
