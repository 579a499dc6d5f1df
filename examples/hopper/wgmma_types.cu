// warpsim: nvcc-flags -arch=sm_90a
//
// wgmma with the input types beyond f16/bf16, one instruction per CTA (block 128, one warpgroup), through CuTe's SM90
// GMMA atoms: tf32 (k8), e4m3/e5m2 (k32) into f32 or f16, s8/u8 (k32) into s32. For the hardware campaign of their
// arithmetic (hwcheck campaign --instr wgmma) and as hwcheck probes.
//
// CTA i copies x[4096 i ..] (bytes) into shared memory: A (64 x 32 bytes, K-major, no swizzle: core matrices of
// 8 rows x 16 bytes, the second 16 bytes of k at LBO 128, the next 8 rows at SBO 256) at 0, B (16 x 32 bytes, the
// same layout) at 2048 (the _rs kernels take A from registers, loaded from that A). Its threads start from their accumulators in c (R registers a thread: N/2 for f32 and s32,
// N/4 for f16), scale-d is false for every eighth CTA (i % 8 == 7), and they write their final accumulators to y.
//
//   hwcheck run examples/hopper/wgmma_types.cu --kernel e4m3_f32 --grid 64 --block 128 \
//       --arg x=random:u8:262144 --arg c=random:f32:65536 --arg y=zeros:u32:65536

#include <cstdint>
#include <type_traits>
#include <utility>

#include <cute/arch/mma_sm90_gmma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

using namespace cute::SM90::GMMA;

constexpr int X_BYTES = 4096;

__device__ uint64_t descriptor(unsigned start) {
    return (uint64_t(start >> 4) & 0x3FFF) | uint64_t(128 >> 4) << 16 | uint64_t(256 >> 4) << 32;
}

template <class Op, class C, size_t... I>
__device__ void issue(uint64_t da, uint64_t db, C* d, ScaleOut scale, std::index_sequence<I...>) {
    Op::fma(da, db, d[I]..., scale);
}

template <class Op, class C, size_t... I>
__device__ void issue(uint32_t const* a, uint64_t db, C* d, ScaleOut scale, std::index_sequence<I...>) {
    Op::fma(a[0], a[1], a[2], a[3], db, d[I]..., scale);
}

// A's four registers of this thread, read from the same shared-memory A as the SS kernels use: CuTe's
// GMMA::ALayout_64x8 (tf32) / ALayout_64x32 (8-bit) map (thread, value) to the column-major index m + 64 k of A;
// register r holds value r (tf32) or values 4 r .. 4 r + 3 (8-bit, consecutive in k)
template <int ElemBytes>
__device__ void a_registers(unsigned char const* s, uint32_t* a) {
    using ALayout = std::conditional_t<ElemBytes == 4, cute::GMMA::ALayout_64x8, cute::GMMA::ALayout_64x32>;
    for (int r = 0; r < 4; ++r) {
        int const index = ALayout{}(int(threadIdx.x), ElemBytes == 4 ? r : 4 * r);
        unsigned const m = index % 64, kbyte = (index / 64) * ElemBytes;
        a[r] = *reinterpret_cast<uint32_t const*>(s + (m / 8) * 256 + (m % 8) * 16 + (kbyte / 16) * 128 + kbyte % 16);
    }
}

template <class Op, int RS = 0>
__device__ void probe(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    using Regs = typename Op::CRegisters;
    using C = std::remove_extent_t<Regs>;
    constexpr int R = std::extent_v<Regs>;
    __shared__ alignas(128) uint4 s[X_BYTES / 16];
    uint4 const* x4 = reinterpret_cast<uint4 const*>(x) + size_t(blockIdx.x) * (X_BYTES / 16);
    for (int i = threadIdx.x; i < X_BYTES / 16; i += blockDim.x) {
        s[i] = x4[i];
    }
    unsigned const base = static_cast<unsigned>(__cvta_generic_to_shared(s));
    ScaleOut const scale = blockIdx.x % 8 == 7 ? ScaleOut::Zero : ScaleOut::One;
    size_t const me = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    C d[R];
    for (int i = 0; i < R; ++i) {
        uint32_t bits = c[me * R + i];
        d[i] = *reinterpret_cast<C*>(&bits);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    cute::warpgroup_arrive();
    if constexpr (RS) {                          // RS: the element bytes of A (4: tf32, 1: 8-bit)
        uint32_t a[4];
        a_registers<RS>(reinterpret_cast<unsigned char const*>(s), a);
        issue<Op>(a, descriptor(base + 2048), d, scale, std::make_index_sequence<R>{});
    } else {
        issue<Op>(descriptor(base), descriptor(base + 2048), d, scale, std::make_index_sequence<R>{});
    }
    cute::warpgroup_commit_batch();
    cute::warpgroup_wait<0>();
    for (int i = 0; i < R; ++i) {
        y[me * R + i] = *reinterpret_cast<uint32_t*>(&d[i]);
    }
}

extern "C" __global__ void tf32_f32(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x8_F32TF32TF32_SS_TN<>>(x, c, y);
}

extern "C" __global__ void e4m3_f32(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_F32E4M3E4M3_SS_TN<>>(x, c, y);
}

extern "C" __global__ void e5m2_f32(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_F32E5M2E5M2_SS_TN<>>(x, c, y);
}

extern "C" __global__ void e4m3_e5m2_f32(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_F32E4M3E5M2_SS_TN<>>(x, c, y);
}

extern "C" __global__ void e4m3_f16(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_F16E4M3E4M3_SS_TN<>>(x, c, y);
}

extern "C" __global__ void e5m2_f16(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_F16E5M2E5M2_SS_TN<>>(x, c, y);
}

extern "C" __global__ void s8_s32(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_S32S8S8_SS_TN>(x, c, y);
}

extern "C" __global__ void u8_s8_s32(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_S32U8S8_SS_TN>(x, c, y);
}

extern "C" __global__ void s8_s32_satfinite(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_S32S8S8_SS_TN_SATURATE>(x, c, y);
}

extern "C" __global__ void tf32_f32_rs(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x8_F32TF32TF32_RS_TN<>, 4>(x, c, y);
}

extern "C" __global__ void e4m3_f32_rs(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_F32E4M3E4M3_RS_TN<>, 1>(x, c, y);
}

extern "C" __global__ void s8_s32_rs(uint8_t const* x, uint32_t const* c, uint32_t* y) {
    probe<MMA_64x16x32_S32S8S8_RS_TN, 1>(x, c, y);
}
