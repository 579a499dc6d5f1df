// __syncthreads() in a branch that whole warps take or skip: the warps meet at different barriers.
__global__ void divergent_syncthreads_warps(const float *in, float *out)
{
    __shared__ float s[128];
    int tid = threadIdx.x;
    s[tid] = in[tid];
#ifdef FIXED
    __syncthreads();
#else
    if (tid < 64)
        __syncthreads();  // A
#endif
    float v = s[127 - tid];
    __syncthreads();  // B
    out[tid] = v;
}
