// Directed kernels for hwcheck's PTX route: each exercises one kind of warp behaviour whose registers
// hwcheck compares with the GPU's, register by register. Launch each with grid 2, block 64.
//
//   hwcheck run examples/ptx/directed.cu --kernel diverge --grid 2 --block 64 \
//       --arg x=random:u32:128 --arg y=zeros:u32:128
//
// diverge:   lane-dependent branches and a lane-dependent loop (Collatz steps, at most 40), reconverging
// warp_ops:  shfl.sync (bfly, up, down, idx), vote.sync (ballot, any, all), match.any, redux.sync
// atomics:   red.global.add/min/max/or on shared counters, then atom.shared results that do not depend on
//            the order of the lanes (atomicAdd of 0 reads, atomicCAS that only one lane can win per CTA)
// cp_async:  cp.async 4/8/16 bytes into shared memory, commit_group, wait_all, bar.sync, neighbours read
// say:       device printf of a few lanes' values
// calls:     a __noinline__ function (a .func: nvcc declares the kernel's __shared__ array in its body) that
//            writes registers and shared memory, and for one lane per warp leaves the kernel (exit) from inside
// sfu:       the SFU's approximations on each lane's random bits (NaN, infinities, subnormals included) and on
//            a moderate argument made from them: sin/cos/ex2/lg2/rsqrt/rcp/sqrt/tanh .approx.f32 (.ftz and
//            not), rcp.approx.ftz.f64 of a double built from two lanes' words, div.approx and div.full

#include <cstdio>

extern "C" __global__ void diverge(unsigned const* x, unsigned* y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    unsigned steps = 0;
    if (v & 1) {
        v = v * 3 + 1;
    } else {
        v >>= 1;
    }
    unsigned w = (v & 0xFFFF) | 1;
    while (w != 1 && steps < 40) {
        w = (w & 1) ? 3 * w + 1 : w >> 1;
        ++steps;
    }
    if (threadIdx.x % 3 == 0) {
        y[i] = v ^ (steps << 24);
    } else {
        y[i] = w + steps;
    }
}

extern "C" __global__ void warp_ops(unsigned const* x, unsigned* y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    unsigned a = __shfl_xor_sync(0xFFFFFFFFu, v, 5);
    unsigned b = __shfl_up_sync(0xFFFFFFFFu, v, 3);
    unsigned c = __shfl_down_sync(0xFFFFFFFFu, v, 7, 16);
    unsigned d = __shfl_sync(0xFFFFFFFFu, v, v & 31);
    unsigned ballot = __ballot_sync(0xFFFFFFFFu, v & 4);
    int any = __any_sync(0xFFFFFFFFu, (v & 0xFF) == 0);
    int all = __all_sync(0xFFFFFFFFu, v != 0);
    unsigned same = __match_any_sync(0xFFFFFFFFu, v & 3);
    unsigned sum = __reduce_add_sync(0xFFFFFFFFu, v & 0xFFFF);
    y[i] = a ^ (b << 1) ^ (c << 2) ^ (d << 3) ^ ballot ^ (any << 30) ^ (all << 31) ^ same ^ sum;
}

extern "C" __global__ void atomics(unsigned const* x, unsigned* counts, unsigned* y) {
    __shared__ unsigned s[4];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    if (threadIdx.x < 4) s[threadIdx.x] = threadIdx.x == 2 ? 0xFFFFFFFFu : 0;
    __syncthreads();
    atomicAdd(&s[0], v & 0xFF);
    atomicMin(&s[2], v);
    atomicMax(&s[1], v);
    atomicOr(&s[3], 1u << (v & 31));
    atomicAdd(&counts[0], 1u);
    atomicMax(&counts[1], v);
    __syncthreads();
    unsigned seen = atomicAdd(&s[0], 0u);       // every lane reads the same total: order-free
    y[i] = seen ^ s[1] ^ s[2] ^ s[3];
}

extern "C" __global__ void cp_async(unsigned const* x, unsigned* y) {
    __shared__ alignas(16) unsigned s[64 * 4];
    unsigned t = threadIdx.x;
    unsigned const* src = x + blockIdx.x * 64 * 4;
    unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&s[4 * t]));
    if (t % 3 == 0) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src + 4 * t));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(dst), "l"(src + 4 * t));
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst + 8), "l"(src + 4 * t + 2));
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst + 12), "l"(src + 4 * t + 3));
    }
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    unsigned n = (t + 1) % 64;
    for (int k = 0; k < 4; ++k) {
        y[blockIdx.x * 64 * 4 + 4 * t + k] = s[4 * n + k] + s[4 * t + (k + 1) % 4];
    }
}

extern "C" __global__ void say(unsigned const* x, unsigned* y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    if (threadIdx.x % 16 == 5) {
        printf("cta %d thread %d: x = %u, x/7 = %u\n", blockIdx.x, threadIdx.x, v, v / 7);
    }
    y[i] = v / 7;
}

__device__ __noinline__ unsigned collatz_into(unsigned v, unsigned t, unsigned* s) {
    unsigned r = (v & 1) ? 3 * v + 1 : v >> 1;
    s[t] = r;
    if (t % 32 == 7) {
        asm volatile("exit;");
    }
    return r ^ t;
}

extern "C" __global__ void calls(unsigned const* x, unsigned* y) {
    __shared__ unsigned s[64];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r = collatz_into(x[i], threadIdx.x, s);
    y[i] = r;
}

// Each approximation as one PTX instruction (inline asm: nvcc would otherwise pick the forms itself).
#define SFU_F32(op, out, in) asm(op " %0, %1;" : "=f"(out) : "f"(in))

__device__ unsigned mix(unsigned h, float v) {
    unsigned b = __float_as_uint(v);
    return (h ^ b) * 0x9E3779B1u + (b >> 7);
}

extern "C" __global__ void sfu(unsigned const* x, unsigned* y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = __uint_as_float(x[i]);                                   // any bits: specials, subnormals
    float m = __uint_as_float((x[i] & 0x807FFFFFu) | 0x40000000u);     // +-[2, 4): a moderate argument
    float r[16];
    SFU_F32("sin.approx.f32", r[0], a);
    SFU_F32("sin.approx.ftz.f32", r[1], m);
    SFU_F32("cos.approx.f32", r[2], m);
    SFU_F32("cos.approx.ftz.f32", r[3], a);
    SFU_F32("ex2.approx.f32", r[4], a);
    SFU_F32("ex2.approx.ftz.f32", r[5], m);
    SFU_F32("lg2.approx.f32", r[6], a);
    SFU_F32("lg2.approx.ftz.f32", r[7], m);
    SFU_F32("rsqrt.approx.f32", r[8], a);
    SFU_F32("rcp.approx.f32", r[9], a);
    SFU_F32("rcp.approx.ftz.f32", r[10], m);
    SFU_F32("sqrt.approx.f32", r[11], a);
    SFU_F32("tanh.approx.f32", r[12], m);
    asm("div.approx.f32 %0, %1, %2;" : "=f"(r[13]) : "f"(m), "f"(a));
    asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(r[14]) : "f"(a), "f"(m));
    double d = __hiloint2double(x[i], x[i ^ 1]), q;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(q) : "d"(d));
    r[15] = __uint_as_float(__double2hiint(q) ^ __double2loint(q));
    unsigned h = 0;
    for (int k = 0; k < 16; ++k) {
        h = mix(h, r[k]);
    }
    y[i] = h;
}
