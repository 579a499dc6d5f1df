// Every lane of a warp stores its own value to one shared word: which value stays is undefined.
__global__ void waw_same_instruction(int *out)
{
    __shared__ int s[1];
#ifdef FIXED
    if (threadIdx.x == 0)
        s[0] = threadIdx.x;
#else
    s[0] = threadIdx.x;  // A
#endif
    __syncwarp();
    out[threadIdx.x] = s[0];
}
