// Warp 1 loads with ldmatrix the 8x8 tile warp 0 stores, with no barrier between.
#include <cstdint>

__global__ void ldmatrix_race(const unsigned short *in, unsigned *out)
{
    __shared__ alignas(16) unsigned short tile[64];
    int tid = threadIdx.x;
    if (tid < 32) {
        tile[2 * tid] = in[2 * tid]; tile[2 * tid + 1] = in[2 * tid + 1];  // A
    }
#ifdef FIXED
    __syncthreads();
#endif
    if (tid >= 32) {
        int lane = tid - 32;
        unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(lane % 8) * 8]);
        unsigned r;
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(addr));  // B
        out[lane] = r;
    }
}
