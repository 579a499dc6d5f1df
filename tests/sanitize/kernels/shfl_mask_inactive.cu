// __shfl_sync(0xffffffff) inside a branch only half the warp takes: the mask names lanes that never come.
__global__ void shfl_mask_inactive(const int *in, int *out)
{
    int lane = threadIdx.x % 32;
    int v = in[threadIdx.x];
    if (lane < 16) {
#ifdef FIXED
        v = __shfl_sync(0x0000ffffu, v, 0);
#else
        v = __shfl_sync(0xffffffffu, v, 0);  // A
#endif
    }
    out[threadIdx.x] = v;
}
