// Two warps write the same shared words in the same barrier interval.
__global__ void waw_two_warps(int *out)
{
    __shared__ int s[64];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#ifdef FIXED
    s[warp * 32 + lane] = warp;
#else
    if (warp == 0)
        s[lane] = 1;  // A
    __syncwarp();
    if (warp == 1)
        s[lane] = 2;  // B
#endif
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x % 32];
}
