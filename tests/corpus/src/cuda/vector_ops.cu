// Vector operations as CUDA C++ users write them: one element per thread (or a grid-stride loop), a bounds check.
//
//   saxpy:    y[i] = a * x[i] + y[i]                        (f32; n need not be a multiple of the block)
//   axpby4:   out[i] = a * x[i] + b * y[i] over float4s      (128-bit loads and stores; n4 float4s)
//   mix_u32:  y[i] = a hash of x[i] and i (murmur3's finaliser, popc, clz, brev, byte_perm, funnel shift,
//             mulhi, a division by a constant), over a grid-stride loop: integer results, bit for bit

#include <cstdint>

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void axpby4(const float4* __restrict__ x, const float4* __restrict__ y, float4* __restrict__ out,
                       float a, float b, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 u = x[i], v = y[i];
        out[i] = make_float4(a * u.x + b * v.x, a * u.y + b * v.y, a * u.z + b * v.z, a * u.w + b * v.w);
    }
}

__global__ void mix_u32(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        uint32_t v = x[i];
        uint32_t h = v ^ (uint32_t)i;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
        h += __popc(v) + __clz(v) + __umulhi(v, 0x9e3779b9u);
        h ^= __brev(v) + __byte_perm(v, h, 0x5140);
        h = __funnelshift_l(h, h, i & 31);
        y[i] = h + v / 7u + (uint32_t)((int32_t)v >> 3) % 1000u;
    }
}
