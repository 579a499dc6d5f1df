// __syncwarp(mask) executed by a lane outside its mask.
__global__ void syncwarp_mask(const int *in, int *out)
{
    __shared__ int s[32];
    int lane = threadIdx.x;
    s[lane] = in[lane];
#ifdef FIXED
    __syncwarp();
#else
    __syncwarp(0xfffffffeu);  // A
#endif
    out[lane] = s[31 - lane];
}
