// A tiled loop over one shared buffer: the barrier before the next tile overwrites it is missing.
__global__ void loop_missing_second_sync(const float *in, float *out, int tiles)
{
    __shared__ float s[64];
    int tid = threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < tiles; ++k) {
        s[tid] = in[k * 64 + tid];  // B
        __syncthreads();
        acc += s[63 - tid];  // A
#ifdef FIXED
        __syncthreads();
#endif
    }
    out[tid] = acc;
}
