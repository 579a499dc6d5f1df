// The last warp of a reduction, warp-synchronous without __syncwarp(): lanes read what other lanes overwrite.
__global__ void warp_reduce_nosyncwarp(const int *in, int *out)
{
    __shared__ int s[64];
    int tid = threadIdx.x;
    s[tid] = in[tid];
    s[tid + 32] = in[tid + 32];
    __syncwarp();
    int v = s[tid];
    for (int off = 32; off > 0; off >>= 1) {
        v += s[tid + off];  // A
#ifdef FIXED
        __syncwarp();
#endif
        s[tid] = v;  // B
#ifdef FIXED
        __syncwarp();
#endif
    }
    if (tid == 0)
        out[0] = v;
}
