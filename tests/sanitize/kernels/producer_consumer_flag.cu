// A producer thread publishes data through a flag in global memory; without __threadfence() on both sides the
// consumer's read of the data is not ordered after the producer's write.
__global__ void producer_consumer_flag(int *data, int *flag, int *out)
{
    if (threadIdx.x == 0) {
        data[0] = 42;  // A
#ifdef FIXED
        __threadfence();
#endif
        atomicExch(flag, 1);
    } else if (threadIdx.x == 32) {
        while (atomicAdd(flag, 0) == 0) {
        }
#ifdef FIXED
        __threadfence();
#endif
        out[0] = data[0];  // B
    }
}
