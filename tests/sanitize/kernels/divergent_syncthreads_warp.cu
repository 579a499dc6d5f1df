// __syncthreads() inside a branch that splits a warp.
__global__ void divergent_syncthreads_warp(const float *in, float *out)
{
    __shared__ float s[64];
    int tid = threadIdx.x;
    s[tid] = in[tid];
#ifdef FIXED
    __syncthreads();
#else
    if (tid % 32 < 16)
        __syncthreads();  // A
#endif
    out[tid] = s[63 - tid];
}
