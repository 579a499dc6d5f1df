// A named barrier waiting for 64 threads that only one warp reaches.
__global__ void named_barrier_deadlock(const int *in, int *out)
{
    __shared__ int s[32];
    int tid = threadIdx.x;
    if (tid < 32) {
        s[tid] = in[tid];
#ifdef FIXED
        asm volatile("bar.sync 1, 32;");
#else
        asm volatile("bar.sync 1, 64;");  // A
#endif
        out[tid] = s[31 - tid];
    }
}
