"""PTX interpreter speed: warp instructions per second on one core, beside the Python-traced stream's executor.

Run from the repository root: ``PYTHONPATH=. python bench/bench_ptx.py [--quick] [--repeat N]``.

Three workloads, each run by one CTA of 4 warps (all 32 lanes active), timed after warm-up (the
kernel parsed and decoded once, Numba's cache warm), best and median of N launches:

- integer: a loop of integer/bit instructions (``add mad xor shl shr and prmt popc setp bra``),
  the instruction mix of address arithmetic;
- float: a loop of float instructions (``fma.rn add.rz mul.rn min setp.lt selp cvt.rni cvt.rn.f16x2 add.rn.f16x2``),
  each computed by warpsim.isa's bit-exact integer models, beside the integer loop of the same run;
- memory: ``mov``, ``ld.shared.u32``, ``st.shared.u32`` — the kinds of instruction the stream
  executor (:mod:`warpsim.program.execute`) also has, so that the two can be compared on the same
  work: the stream executes the same number of warp instructions of that mix, encoded once.

The figures are warp instructions / second (one warp instruction = 32 lanes) and the ratio of
the PTX interpreter to the stream executor measured in the same run; and the lower bound of issue 29 (item 5) for
the integer and float loops: the loop body as straight Numba code lane by lane, calling the same isa functions as the
interpreter, no decode, no dispatch, no program counters (checked to write the kernel's bits), counted in the same
warp instructions, with the ratio interpreter / lower bound. The PTX figure includes
what the stream has decided ahead of time (per-thread program counters, the choice of the lanes
at the smallest pc, guard predicates, address arithmetic).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

import warpsim.ptx                                                 # noqa: E402
from hostinfo import host_line                                     # noqa: E402
import timing                                                      # noqa: E402
from warpsim.machine import Machine                                # noqa: E402
from warpsim.program.encode import encode                          # noqa: E402
from warpsim.program.execute import execute                        # noqa: E402
from warpsim.program.instr import Instr, Op                        # noqa: E402
from warpsim.isa.cvt import cvt_float_to_int, cvt_int_to_float, cvt_pack_x2  # noqa: E402
from warpsim.isa.fparith import f16x2_add, f32_add                  # noqa: E402
from warpsim.isa.fpcompare import CMP, f32_min, f32_setp            # noqa: E402
from warpsim.isa.hostfloat import host_f32_fma, host_f32_mul        # noqa: E402
from warpsim.isa.rounding import RN, RZ                             # noqa: E402
from warpsim.ptx.alu import popc, prmt                              # noqa: E402

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

INTEGER = HEADER + """
.visible .entry integer(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>; .reg .b32 %r<16>; .reg .b64 %rd<4>;
  ld.param.u32 %r10, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0; mov.u32 %r3, 12345;
LOOP:
  add.u32 %r3, %r3, %r1;
  mad.lo.u32 %r4, %r3, 747796405, %r2;
  xor.b32 %r5, %r4, %r3;
  shl.b32 %r6, %r5, 3;
  shr.u32 %r7, %r5, 7;
  and.b32 %r8, %r6, %r7;
  prmt.b32 %r9, %r8, %r4, 0x3210;
  popc.b32 %r11, %r9;
  add.u32 %r3, %r9, %r11;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r10;
  @%p1 bra LOOP;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""

FLOAT = HEADER + """
.visible .entry float(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<3>; .reg .b32 %r<16>; .reg .f32 %f<12>; .reg .b64 %rd<4>;
  ld.param.u32 %r10, [n];
  mov.u32 %r1, %tid.x;
  cvt.rn.f32.u32 %f1, %r1;
  mov.f32 %f2, 0f3F9E0419;
  mov.u32 %r2, 0;
LOOP:
  fma.rn.f32 %f3, %f1, %f2, 0f3F000000;
  add.rz.f32 %f4, %f3, %f1;
  mul.rn.f32 %f5, %f4, 0f3F7FF000;
  min.f32 %f6, %f5, %f3;
  setp.lt.f32 %p2, %f6, 0f42C80000;
  selp.f32 %f1, %f6, %f2, %p2;
  cvt.rni.s32.f32 %r3, %f1;
  cvt.rn.f16x2.f32 %r4, %f4, %f5;
  add.rn.f16x2 %r5, %r4, %r4;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r10;
  @%p1 bra LOOP;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  xor.b32 %r6, %r5, %r3;
  st.global.u32 [%rd3], %r6;
  ret;
}
"""

MEMORY = HEADER + """
.visible .entry memory(.param .u32 n)
{
  .shared .align 4 .b8 sm[512];
  .reg .pred %p<2>; .reg .b32 %r<16>;
  ld.param.u32 %r10, [n];
  mov.u32 %r1, %tid.x;
  shl.b32 %r1, %r1, 2;
  mov.u32 %r11, sm;
  add.u32 %r1, %r1, %r11;
  mov.u32 %r2, 0;
LOOP:
  mov.u32 %r3, 7;
  ld.shared.u32 %r4, [%r1];
  st.shared.u32 [%r1], %r3;
  mov.u32 %r5, 9;
  ld.shared.u32 %r6, [%r1];
  st.shared.u32 [%r1], %r5;
  mov.u32 %r7, 11;
  ld.shared.u32 %r8, [%r1];
  st.shared.u32 [%r1], %r7;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r10;
  @%p1 bra LOOP;
  ret;
}
"""


def timed(fn, repeat):
    """(best, median) CPU seconds of this process for ``fn()`` (CPU time, not wall time: both executors are
    single-threaded, and the figure then does not depend on other work on a shared machine)."""
    return timing.timed(fn, repeat, time.process_time)


def ptx_rate(text, kernel, args, repeat):
    mod = warpsim.ptx.load(text)
    run = lambda: mod.launch(kernel, block=128, args=args(), quiet=True)    # noqa: E731
    steps = run().stats["warp_instructions"]
    best, median = timed(run, repeat)
    return steps, steps / best, steps / median


# The lower bound (issue 29, item 5): each loop body as straight Numba code, lane by lane, the same arithmetic
# (the same isa functions as the interpreter's), no decode, no dispatch, no program counters: what is left of a
# warp instruction's cost when nothing but its 32 lanes' operation is paid.


@njit(cache=True)
def _integer_straight(out, n):
    for w in range(4):
        for lane in range(32):
            r1 = np.int64(32 * w + lane)
            r2 = np.int64(0)
            r3 = np.int64(12345)
            while True:
                r3 = (r3 + r1) & 0xFFFFFFFF
                r4 = (r3 * 747796405 + r2) & 0xFFFFFFFF
                r5 = r4 ^ r3
                r6 = (r5 << 3) & 0xFFFFFFFF
                r7 = r5 >> 7
                r8 = r6 & r7
                r9 = prmt(r8, r4, 0x3210, 0)
                r11 = popc(r9, 32)
                r3 = (r9 + r11) & 0xFFFFFFFF
                r2 += 1
                if not r2 < n:
                    break
            out[32 * w + lane] = r3


_LT = CMP["lt"]


@njit(cache=True)
def _float_straight(out, n):
    for w in range(4):
        for lane in range(32):
            f1 = cvt_int_to_float(np.int64(32 * w + lane), 32, False, 8, 23, 0, RN)
            f2 = np.int64(0x3F9E0419)
            r2 = np.int64(0)
            r5 = np.int64(0)
            r3 = np.int64(0)
            while True:
                f3 = host_f32_fma(f1, f2, np.int64(0x3F000000), False, False)
                f4 = f32_add(f3, f1, RZ, False, False)
                f5 = host_f32_mul(f4, np.int64(0x3F7FF000), False, False)
                f6 = f32_min(f5, f3, False, False, False)
                p2 = f32_setp(f6, np.int64(0x42C80000), _LT, False)
                f1 = f6 if p2 else f2
                r3 = np.int64(cvt_float_to_int(f1, 8, 23, 32, True, RN, False))
                r4 = np.int64(cvt_pack_x2(f4, f5, 5, 10, RN, False, False))
                r5 = f16x2_add(r4, r4, RN, False, False)
                r2 += 1
                if not r2 < n:
                    break
            out[32 * w + lane] = np.uint32((r5 ^ r3) & 0xFFFFFFFF)


def straight_rate(fn, kernel_text, kernel, steps, n, repeat):
    """The lower bound's warp instructions per second (the PTX launch's count ``steps``), checked to write the same
    bits as the PTX kernel."""
    out = np.zeros(128, np.uint32)
    fn(out, n)
    want = warpsim.ptx.load(kernel_text).launch(kernel, block=128, args={"out": np.zeros(128, np.uint32), "n": n},
                                                quiet=True).buffers["out"]
    if not np.array_equal(out, want):
        raise SystemExit(f"bench_ptx: the straight {kernel} loop does not give the kernel's bits")
    best, median = timed(lambda: fn(out, n), repeat)
    return steps / best, steps / median


def stream_rate(count, repeat):
    """The stream executor on ``count`` warp instructions of the memory mix (mov, ld, st), 4 warps."""
    addr = (np.arange(32, dtype=np.int64) * 4)
    mix = []
    for k in range(count // 3):
        w = k % 4
        mix.append(Instr(Op.MOV, w, dst=(0,), imm=7))
        mix.append(Instr(Op.LD, w, dst=(1,), addr=addr + 128 * w, space="shared", bits=32))
        mix.append(Instr(Op.ST, w, src=(0,), addr=addr + 128 * w, space="shared", bits=32))
    encoded = encode(mix)
    machine = Machine(warps=4, regs_per_thread=4, smem_bytes=512)
    execute(mix, encoded, machine)
    best, median = timed(lambda: execute(mix, encoded, machine), repeat)
    return len(mix), len(mix) / best, len(mix) / median


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads (seconds)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    n = 200 if args.quick else 5000
    repeat = 2 if args.quick else args.repeat
    print(host_line())
    print(f"loop trips {n}, best of {repeat} (CPU time)")
    steps, best, median = ptx_rate(INTEGER, "integer", lambda: {"out": np.zeros(128, np.uint32), "n": n}, repeat)
    print(f"  ptx integer: {best:,.0f} warp instr/s (median {median:,.0f}; {steps:,} warp instructions)")
    fsteps, fbest, fmedian = ptx_rate(FLOAT, "float", lambda: {"out": np.zeros(128, np.uint32), "n": n}, repeat)
    print(f"  ptx float (fma/add/mul/min/setp/selp/cvt/f16x2): {fbest:,.0f} warp instr/s (median {fmedian:,.0f}; "
          f"{fsteps:,} warp instructions)")
    print(f"  ratio ptx float / ptx integer: {fbest / best:.2f}x")
    lbest, lmedian = straight_rate(_integer_straight, INTEGER, "integer", steps, n, repeat)
    print(f"  lower bound, integer loop as straight code: {lbest:,.0f} warp instr/s (median {lmedian:,.0f}); "
          f"ptx / lower bound {best / lbest:.3f}x")
    lfbest, lfmedian = straight_rate(_float_straight, FLOAT, "float", fsteps, n, repeat)
    print(f"  lower bound, float loop as straight code: {lfbest:,.0f} warp instr/s (median {lfmedian:,.0f}); "
          f"ptx / lower bound {fbest / lfbest:.3f}x")
    msteps, mbest, mmedian = ptx_rate(MEMORY, "memory", lambda: {"n": n}, repeat)
    print(f"  ptx memory (mov/ld.shared/st.shared): {mbest:,.0f} warp instr/s (median {mmedian:,.0f}; "
          f"{msteps:,} warp instructions)")
    ssteps, sbest, smedian = stream_rate(msteps, repeat)
    print(f"  stream executor, same mix: {sbest:,.0f} warp instr/s (median {smedian:,.0f}; {ssteps:,} instructions)")
    print(f"  ratio ptx / stream on the memory mix: {mbest / sbest:.2f}x; ptx integer / stream: {best / sbest:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
