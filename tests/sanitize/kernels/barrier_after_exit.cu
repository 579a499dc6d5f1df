// Threads past the end return early, and the others then meet at a __syncthreads() the returned ones never reach.
__global__ void barrier_after_exit(const float *in, float *out, int n)
{
    __shared__ float s[64];
    int tid = threadIdx.x;
#ifdef FIXED
    s[tid] = tid < n ? in[tid] : 0.0f;
    __syncthreads();
    if (tid < n)
        out[tid] = s[(tid + 1) % n];
#else
    if (tid >= n)
        return;
    s[tid] = in[tid];
    __syncthreads();  // A
    out[tid] = s[(tid + 1) % n];
#endif
}
