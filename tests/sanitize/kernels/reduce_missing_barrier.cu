// A shared-memory tree reduction missing the barrier after the first load.
__global__ void reduce_missing_barrier(const float *in, float *out)
{
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];  // A
#ifdef FIXED
    __syncthreads();
#endif
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];  // B
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}
