// __shfl_sync whose member mask leaves out a lane that executes it.
__global__ void shfl_mask_omits_lane(const int *in, int *out)
{
    int v = in[threadIdx.x];
#ifdef FIXED
    unsigned mask = 0xffffffffu;
#else
    unsigned mask = 0x7fffffffu;
#endif
    v = __shfl_sync(mask, v, 0);  // A
    out[threadIdx.x] = v;
}
