// cp.async (the pipeline primitives) into shared memory, read before __pipeline_wait_prior.
#include <cuda_pipeline.h>

__global__ void cp_async_before_wait(const float *in, float *out)
{
    __shared__ float s[64];
    int tid = threadIdx.x;
    __pipeline_memcpy_async(&s[tid], &in[tid], sizeof(float));  // A
    __pipeline_commit();
#ifdef FIXED
    __pipeline_wait_prior(0);
#endif
    float v = s[tid];  // B
    __pipeline_wait_prior(0);
    out[tid] = v;
}
