"""Run warpsim's instructions on a real GPU with CuPy and count bit mismatches (until hwcheck exists).

Usage on a machine with a CUDA GPU (sm_90 for arch="sm90"; sm_80/sm_89 for "sm80") and CuPy:

    PYTHONPATH=. python tools/gpu_check_isa.py [--count 12500] [--arch sm90] [--seed 1]

For every mma type combination and shape (m16n8k16, m16n8k8 x .f32.f16.f16.f32, .f32.bf16.bf16.f32,
.f16.f16.f16.f16) it runs ``count`` instructions of every input class of ``warpsim.isa.inputs``
(8 classes: 8 * count per type and shape) through inline-PTX ``mma.sync``; every ldmatrix variant on
random shared memory and random row addresses; and ``cvt.rn.{f16,bf16}x2.f32`` on random and
adversarial f32 bits. Prints one line per check with its mismatch count and the first mismatch.
``--emit-source FILE`` writes the CUDA source (to compile-check it without a GPU:
``nvcc -arch=sm_90 -cubin -o /dev/null FILE``). Exit status 1 when anything mismatches.
"""

import argparse
import sys

import numpy as np

from warpsim.isa import cvt_pack, ldmatrix, mma_m16n8k8, mma_m16n8k16
from warpsim.isa.inputs import MMA_CLASSES, ldmatrix_inputs, mma_inputs
from warpsim.isa.mma import TYPE_COMBOS

SHAPES = {"m16n8k16": (4, 2), "m16n8k8": (2, 1)}   # A regs, B regs


def _mma_kernel(shape, ab, cd):
    na, nb = SHAPES[shape]
    nc = 4 if cd == "f32" else 2
    name = f"mma_{shape}_{ab}_{cd}"
    ptx = f"mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd}"
    ops, n, groups = [], 0, []
    for count in (nc, na, nb, nc):
        groups.append("{" + ", ".join(f"%{n + i}" for i in range(count)) + "}")
        n += count
    if cd == "f32":
        outs = ", ".join(f'"=f"(d[{i}])' for i in range(nc))
        c_ins = ", ".join(f'"f"(c[{i}])' for i in range(nc))
        decl = f"float d[{nc}], c[{nc}];\n    for (int i = 0; i < {nc}; ++i) c[i] = __uint_as_float(C[base * {nc} + i]);"
        store = f"for (int i = 0; i < {nc}; ++i) D[base * {nc} + i] = __float_as_uint(d[i]);"
    else:
        outs = ", ".join(f'"=r"(d[{i}])' for i in range(nc))
        c_ins = ", ".join(f'"r"(c[{i}])' for i in range(nc))
        decl = f"unsigned d[{nc}], c[{nc}];\n    for (int i = 0; i < {nc}; ++i) c[i] = C[base * {nc} + i];"
        store = f"for (int i = 0; i < {nc}; ++i) D[base * {nc} + i] = d[i];"
    a_ins = ", ".join(f'"r"(A[base * {na} + {i}])' for i in range(na))
    b_ins = ", ".join(f'"r"(B[base * {nb} + {i}])' for i in range(nb))
    ops.append(f'''
extern "C" __global__ void {name}(const unsigned* A, const unsigned* B, const unsigned* C, unsigned* D, long long count)
{{
    long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= count) return;
    long long base = warp * 32 + lane;
    {decl}
    asm volatile("{ptx} {groups[0]}, {groups[1]}, {groups[2]}, {groups[3]};"
                 : {outs}
                 : {a_ins}, {b_ins}, {c_ins});
    {store}
}}''')
    return name, "".join(ops)


def _ldmatrix_kernel(num, trans):
    name = f"ldsm_x{num}{'_trans' if trans else ''}"
    ptx = f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
    regs = "{" + ", ".join(f"%{i}" for i in range(num)) + "}"
    outs = ", ".join(f'"=r"(r[{i}])' for i in range(num))
    return name, f'''
extern "C" __global__ void {name}(const unsigned char* S, const long long* addrs, unsigned* out, int smem_bytes)
{{
    extern __shared__ __align__(16) unsigned char sm[];
    long long e = blockIdx.x;
    int lane = threadIdx.x;
    for (int i = lane; i < smem_bytes; i += 32) sm[i] = S[e * smem_bytes + i];
    __syncwarp();
    unsigned addr = (unsigned)__cvta_generic_to_shared(sm) + (unsigned)addrs[e * 32 + lane];
    unsigned r[{num}];
    asm volatile("{ptx} {regs}, [%{num}];" : {outs} : "r"(addr));
    for (int i = 0; i < {num}; ++i) out[(e * 32 + lane) * {num} + i] = r[i];
}}'''


CVT_SOURCE = '''
extern "C" __global__ void cvt_pack(const unsigned* a, const unsigned* b, unsigned* f16, unsigned* bf16, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned d, e;
    float x = __uint_as_float(a[i]), y = __uint_as_float(b[i]);
    asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(x), "f"(y));
    asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(e) : "f"(x), "f"(y));
    f16[i] = d;
    bf16[i] = e;
}'''


def cuda_source():
    parts = [CVT_SOURCE]
    for shape in SHAPES:
        for ab, cd in TYPE_COMBOS:
            parts.append(_mma_kernel(shape, ab, cd)[1])
    for num in (1, 2, 4):
        for trans in (False, True):
            parts.append(_ldmatrix_kernel(num, trans)[1])
    return "\n".join(parts)


def report(what, got, want, detail):
    bad = np.flatnonzero(got.ravel() != want.ravel())
    line = f"{what}: {bad.size} mismatches of {want.size}"
    if bad.size:
        i = int(bad[0])
        line += f"; first at flat index {i}: expected {int(want.ravel()[i]):#010x}, got {int(got.ravel()[i]):#010x} {detail(i)}"
    sys.stdout.write(line + "\n")
    return bad.size


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=12_500, help="mma instructions per input class")
    p.add_argument("--ldmatrix-count", type=int, default=20_000)
    p.add_argument("--cvt-count", type=int, default=1_000_000)
    p.add_argument("--arch", default="sm90")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--emit-source", metavar="FILE")
    args = p.parse_args(argv)
    if args.emit_source:
        with open(args.emit_source, "w") as f:
            f.write(cuda_source())
        return 0
    import cupy as cp

    cc = cp.cuda.Device().compute_capability
    module = cp.RawModule(code=cuda_source(), options=(f"--gpu-architecture=sm_{cc}",))
    rng = np.random.default_rng(args.seed)
    total = 0
    for shape, (na, nb) in SHAPES.items():
        run = mma_m16n8k16 if shape == "m16n8k16" else mma_m16n8k8
        for ab, cd in TYPE_COMBOS:
            kernel = module.get_function(f"mma_{shape}_{ab}_{cd}")
            for cls in MMA_CLASSES:
                a, b, c = mma_inputs(cls, args.count, shape=shape, ab=ab, cd=cd, rng=rng)
                want = run(a, b, c, ab=ab, cd=cd, arch=args.arch)
                ga, gb, gc = cp.asarray(a), cp.asarray(b), cp.asarray(c)
                gd = cp.zeros_like(gc)
                threads = 128
                blocks = (args.count * 32 + threads - 1) // threads
                kernel((blocks,), (threads,), (ga, gb, gc, gd, np.int64(args.count)))
                got = cp.asnumpy(gd)
                total += report(f"mma.{shape}.{cd}.{ab}.{ab}.{cd} {cls} x{args.count}", got, want,
                                lambda i, w=want: f"(instruction {i // w[0].size}, lane {(i // w.shape[-1]) % 32}, "
                                                  f"reg {i % w.shape[-1]})")
    for num in (1, 2, 4):
        for trans in (False, True):
            name = f"ldsm_x{num}{'_trans' if trans else ''}"
            smem, addrs = ldmatrix_inputs(args.ldmatrix_count, num=num, trans=trans, smem_bytes=1024, rng=rng)
            want = ldmatrix(smem, addrs, num=num, trans=trans)
            gout = cp.zeros(want.shape, cp.uint32)
            module.get_function(name)((args.ldmatrix_count,), (32,),
                                      (cp.asarray(smem), cp.asarray(addrs), gout, np.int32(1024)),
                                      shared_mem=1024)
            total += report(f"ldmatrix x{num} trans={trans} x{args.ldmatrix_count}", cp.asnumpy(gout), want,
                            lambda i: f"(entry {i // (32 * num)}, lane {(i // num) % 32}, reg {i % num})")
    n = args.cvt_count
    a = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    near = rng.integers(100, 145, n).astype(np.uint32) << 23      # f16 range and its edges
    a[::2] = (a[::2] & 0x807FFFFF) | near[::2]
    b[1::2] = (b[1::2] & 0x807FFFFF) | near[1::2]
    b[::7] &= 0xFFFFE000                                          # exact and tie cases
    a[::11] = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x477FF000, 0x33000000, 0x80000000, 0x7F800000,
                        0x3F801000, 0x3F803000, 0x387FC000, 0xFF800000], np.uint32)[np.arange(a[::11].size) % 11]
    g16, gbf = cp.zeros(n, cp.uint32), cp.zeros(n, cp.uint32)
    module.get_function("cvt_pack")(((n + 255) // 256,), (256,), (cp.asarray(a), cp.asarray(b), g16, gbf, np.int64(n)))
    for to, g in (("f16", g16), ("bf16", gbf)):
        want = cvt_pack(a, b, to=to)
        total += report(f"cvt.rn.{to}x2.f32 x{n}", cp.asnumpy(g), want,
                        lambda i: f"(a={int(a[i]):#010x}, b={int(b[i]):#010x})")
    sys.stdout.write(f"total mismatches: {total}\n")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
