// An output-only buffer read (accumulated into) before anything wrote it.
__global__ void output_read_before_write(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef FIXED
    out[i] = 2.0f * in[i];
#else
    out[i] += 2.0f * in[i];  // A
#endif
}
