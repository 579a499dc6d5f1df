// warpsim: nvcc-flags -arch=sm_90a
//
// Directed wgmma kernels for hwcheck: one warpgroup (block 128) per CTA issues one
// wgmma.mma_async through CuTe's SM90 GMMA atoms (cute/arch/mma_sm90_gmma.hpp), on shared memory
// filled with the random 16-bit values of x, with matrix descriptors that differ from CTA to CTA:
//
//   blockIdx.x = layout_a + 4 * layout_b + 16 * start + 48 * zero_c      (grid 96)
//
//   layout_a, layout_b: the descriptor's layout field (0 interleaved, 1 128B, 2 64B, 3 32B swizzle);
//   start: A and B start at their region's base (0), 32 bytes further (1: the next k16 of a swizzled
//          row, as a k loop steps a descriptor) or 256 bytes further (2: a swizzle row other than 0);
//   zero_c: scale-d false (D = A B) instead of D = A B + C.
//
// LBO is 2048 and SBO 1024 bytes everywhere (so that a layout that ignores LBO shows it). Each thread
// writes its accumulator registers to y. Kernels: the atom's name, K or MN-major for A and B:
//
//   hwcheck run examples/hopper/wgmma_probe.cu --kernel ss_f32_f16_n64_k_mn --grid 96 --block 128 \
//       --arg x=random:f16:24576 --arg c=random:f32:393216 --arg y=zeros:u32:393216
//
// (c and y hold 96 * 128 * R words, R the atom's accumulator registers: N/2 for f32, N/4 for f16.)

#include <cstdint>
#include <type_traits>
#include <utility>

#include <cute/arch/mma_sm90_gmma.hpp>
#include <cute/arch/mma_sm90_gmma_ext.hpp>

using namespace cute::SM90::GMMA;   // the atoms and Major, ScaleIn, ScaleOut

constexpr int SMEM_BYTES = 48 * 1024;
constexpr unsigned B_REGION = 8192;

__device__ uint64_t descriptor(unsigned start, unsigned leading, unsigned stride, unsigned layout) {
    return (uint64_t(start >> 4) & 0x3FFF) | (uint64_t(leading >> 4) & 0x3FFF) << 16 |
           (uint64_t(stride >> 4) & 0x3FFF) << 32 | uint64_t(layout & 3) << 62;
}

template <class Op, class C, size_t... I>
__device__ void issue(uint64_t da, uint64_t db, C* d, ScaleOut scale, std::index_sequence<I...>) {
    Op::fma(da, db, d[I]..., scale);
}

template <class Op, class C, size_t... I>
__device__ void issue(uint32_t const* a, uint64_t db, C* d, ScaleOut scale, std::index_sequence<I...>) {
    Op::fma(a[0], a[1], a[2], a[3], db, d[I]..., scale);
}

// RS: A from registers (four per thread, from x), else from shared memory through its descriptor
template <class Op, bool RS = false>
__device__ void probe(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    using Regs = typename Op::CRegisters;
    using C = std::remove_extent_t<Regs>;
    constexpr int R = std::extent_v<Regs>;
    __shared__ alignas(1024) uint4 s[SMEM_BYTES / 16];
    uint4 const* x4 = reinterpret_cast<uint4 const*>(x);
    for (int i = threadIdx.x; i < SMEM_BYTES / 16; i += blockDim.x) {
        s[i] = x4[i];
    }
    unsigned const cta = blockIdx.x;
    unsigned const shift = (cta / 16) % 3 == 0 ? 0 : (cta / 16) % 3 == 1 ? 32 : 256;
    unsigned const base = static_cast<unsigned>(__cvta_generic_to_shared(s));
    uint64_t const da = descriptor(base + shift, 2048, 1024, cta & 3);
    uint64_t const db = descriptor(base + B_REGION + shift, 2048, 1024, (cta >> 2) & 3);
    ScaleOut const scale = cta >= 48 ? ScaleOut::Zero : ScaleOut::One;
    size_t const me = size_t(cta) * blockDim.x + threadIdx.x;
    C d[R];
    for (int i = 0; i < R; ++i) {
        uint32_t bits = c[me * R + i];
        d[i] = *reinterpret_cast<C*>(&bits);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    cute::warpgroup_arrive();
    if constexpr (RS) {
        uint32_t a[4];
        for (int i = 0; i < 4; ++i) {
            a[i] = reinterpret_cast<uint32_t const*>(x)[(cta * 128 + threadIdx.x) * 4 % 12288 + i];
        }
        issue<Op>(a, db, d, scale, std::make_index_sequence<R>{});
    } else {
        issue<Op>(da, db, d, scale, std::make_index_sequence<R>{});
    }
    cute::warpgroup_commit_batch();
    cute::warpgroup_wait<0>();
    for (int i = 0; i < R; ++i) {
        y[me * R + i] = *reinterpret_cast<uint32_t*>(&d[i]);
    }
}

extern "C" __global__ void ss_f32_f16_n64_k_k(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x64x16_F32F16F16_SS<Major::K, Major::K>>(x, c, y);
}

extern "C" __global__ void ss_f32_f16_n64_k_mn(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x64x16_F32F16F16_SS<Major::K, Major::MN>>(x, c, y);
}

extern "C" __global__ void ss_f32_f16_n64_mn_k(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x64x16_F32F16F16_SS<Major::MN, Major::K>>(x, c, y);
}

extern "C" __global__ void ss_f32_f16_n64_mn_mn(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x64x16_F32F16F16_SS<Major::MN, Major::MN>>(x, c, y);
}

extern "C" __global__ void ss_f32_f16_n256_k_mn(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x256x16_F32F16F16_SS<Major::K, Major::MN>>(x, c, y);
}

extern "C" __global__ void ss_f32_f16_n24_mn_k(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x24x16_F32F16F16_SS<Major::MN, Major::K>>(x, c, y);
}

extern "C" __global__ void ss_f32_bf16_n64_k_mn(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x64x16_F32BF16BF16_SS<Major::K, Major::MN>>(x, c, y);
}

extern "C" __global__ void ss_f16_f16_n64_k_k(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x64x16_F16F16F16_SS<Major::K, Major::K>>(x, c, y);
}

extern "C" __global__ void ss_f32_f16_n16_neg(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x16_F32F16F16_SS<Major::K, Major::K, ScaleIn::Neg, ScaleIn::Neg>>(x, c, y);
}

extern "C" __global__ void rs_f32_f16_n32_k_mn(uint16_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x32x16_F32F16F16_RS<Major::K, Major::MN>, true>(x, c, y);
}
