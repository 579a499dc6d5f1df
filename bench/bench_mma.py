"""Bit-exact mma.m16n8k16 throughput on ONE core, beside numpy float32 and PyPI mmasim.

Usage (not part of CI; mmasim needs torch, kept out of the project's venv):

    python3 -m venv /tmp/venv-bench && /tmp/venv-bench/bin/pip install numpy numba torch==2.13.0 mmasim
    PYTHONPATH=. /tmp/venv-bench/bin/python bench/bench_mma.py [--count 200000] [--mmasim-count 200] [--quick]

Every library is held to one thread (environment set before the imports). warpsim runs its serial
entry (``parallel=False``) for every PTX type combination on sm_90 and sm_80; numpy computes
``A @ B + C`` in float32 for the same shapes (inexact: a baseline of speed only); mmasim runs
``MMA("Hopper", "m16n8k16.f32.f16.f16.f32")`` per instruction and batched through its ``dpa``, and
its results are compared bit for bit with warpsim's on the same inputs. The breakdown runs a copy
of the kernel (the same inlined helpers, checked to give the same bits) that reads the CPU's cycle
counter after each stage. ``--quick`` checks in seconds that it all runs (tests/test_bench.py).
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import sys
import time

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from hostinfo import host_line
from warpsim.isa import MMA_FRAGMENTS, from_fragment, mma_m16n8k16
from warpsim.isa import arith
from warpsim.isa.inputs import mma_inputs
from warpsim.isa.mma import _A16_AT, _B16_BT, _CF32_CT, _gather16
from warpsim.isa.scratch import stack_array


REPEATS = 3   # timings are the best of REPEATS runs (--quick: 1)


def best_rate(fn, count):
    best = float("inf")
    for _ in range(REPEATS):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return count / best, best


def bench_warpsim(count, rng, out):
    rows = []
    for ab, cd, arch in (("f16", "f32", "sm90"), ("bf16", "f32", "sm90"), ("f16", "f16", "sm90"),
                         ("f16", "f32", "sm80"), ("bf16", "f32", "sm80"), ("f16", "f16", "sm80")):
        a, b, c = mma_inputs("ordinary", count, ab=ab, cd=cd, rng=rng)
        mma_m16n8k16(a[:4], b[:4], c[:4], ab=ab, cd=cd, arch=arch, parallel=False)   # compile / load cache
        rate, secs = best_rate(lambda: mma_m16n8k16(a, b, c, ab=ab, cd=cd, arch=arch, parallel=False), count)
        rows.append((f"warpsim .{cd}.{ab}.{ab}.{cd} {arch}", rate, secs))
        out.write(f"  warpsim {ab}->{cd} {arch}: {rate:,.0f} mma/s ({secs:.3f} s for {count})\n")
    return rows


def bench_numpy(count, rng, out):
    A = rng.uniform(-1, 1, (count, 16, 16)).astype(np.float32)
    B = rng.uniform(-1, 1, (count, 16, 8)).astype(np.float32)
    C = rng.uniform(-1, 1, (count, 16, 8)).astype(np.float32)
    rate, secs = best_rate(lambda: np.matmul(A, B) + C, count)
    out.write(f"  numpy float32 A @ B + C: {rate:,.0f} mma/s ({secs:.3f} s for {count})\n")
    return ("numpy float32 matmul (inexact)", rate, secs)


STAGES = ("gather A, B, C fragments into tables", "decode A, B", "decode C", "column maxima",
          "column sums", "c term and rounding", "scatter D")


@intrinsic
def cycle_counter(typingctx):
    """The CPU's cycle counter (``rdtsc`` on x86-64): monotone, so differences are never negative."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@njit
def _stamp(ticks, stage, last):
    """Adds the cycles since ``last`` to ``ticks[stage]``; returns the new stamp."""
    now = cycle_counter()
    ticks[stage] += now - last
    return now


@njit
def staged_mma(a, b, c, d, frac_bits, ez, step, ticks):
    """``d = mma(a, b, c)`` (.f32.f16.f16.f32) as the kernel computes it, the cycle counter read
    between its stages: ``ticks[j]`` += the cycles of stage ``STAGES[j]``. Returns the cycles from
    the first stamp to the last."""
    i32 = np.int32
    at = stack_array(256, np.int32)
    bt = stack_array(256, np.int32)
    ct = stack_array(256, np.int32)
    dt = stack_array(256, np.int32)
    a_sig = stack_array(256, np.int32)
    a_exp = stack_array(256, np.int32)
    a_neg = stack_array(256, np.int32)
    b_sig = stack_array(256, np.int32)
    b_exp = stack_array(256, np.int32)
    b_neg = stack_array(256, np.int32)
    c_bits = stack_array(256, np.int32)
    c_sig = stack_array(256, np.int32)
    c_exp = stack_array(256, np.int32)
    c_neg = stack_array(256, np.int32)
    emax = stack_array(256, np.int32)
    acc = stack_array(16, np.int32)
    regs = np.arange(4)
    first = t = cycle_counter()
    for i in range(a.shape[0]):
        _gather16(a[i], regs, _A16_AT, at)
        _gather16(b[i], regs, _B16_BT, bt)
        for r in range(4):
            for lane in range(32):
                ct[_CF32_CT[lane, r, 0]] = np.int32(c[i, lane, r])
        t = _stamp(ticks, 0, t)
        arith._decode_operand(at, 16, 16, arith.AB_F16, frac_bits - 20, a_sig, a_exp, a_neg)
        arith._decode_operand(bt, 8, 16, arith.AB_F16, 0, b_sig, b_exp, b_neg)
        t = _stamp(ticks, 1, t)
        for k0 in range(0, 16, step):
            arith._decode_c(ct if k0 == 0 else dt, 128, 8, 23, frac_bits - 23, ez, c_bits, c_sig, c_exp, c_neg, emax)
            t = _stamp(ticks, 2, t)
            for n0 in range(0, 8, 4):
                arith._column_maxima(a_exp, b_exp, emax, n0, 8, k0, k0 + step)
            t = _stamp(ticks, 3, t)
            for n in range(8):
                arith._column_sums(a_sig, a_exp, a_neg, b_sig, b_exp, b_neg, emax, acc, n, k0, k0 + step)
                t = _stamp(ticks, 4, t)
                col = slice(n * 16, (n + 1) * 16)
                sig, exp, neg, e_max, d_col = c_sig[col], c_exp[col], c_neg[col], emax[col], dt[col]
                for m in range(16):
                    tc = i32(sig[m] >> (min(i32(e_max[m] - exp[m]), i32(31)) & i32(31)))
                    tc = i32(i32(tc ^ neg[m]) - neg[m])
                    d_col[m] = arith._round_sum(acc[m], tc, i32(e_max[m] - frac_bits), arith.CD_F32)
                t = _stamp(ticks, 5, t)
        for r in range(4):
            for lane in range(32):
                d[i, lane, r] = np.uint32(dt[_CF32_CT[lane, r, 0]])
        t = _stamp(ticks, 6, t)
    return t - first


def breakdown(count, rng, out, arch="sm90"):
    """Where the time goes (.f32.f16.f16.f32): the kernel's stages, timed by the cycle counter.

    One run of ``staged_mma`` reads the counter after each stage of each mma: every stage's time is
    a sum of differences of a monotone counter (never negative), and the stages add up to the
    instrumented run's whole. The counter's cycles become microseconds through that run's wall time;
    the counter reads themselves (about 30 per mma) make the instrumented run slower than the kernel.
    Returns ``(kernel_us, instrumented_us, [stage_us, ...])`` per mma.
    """
    a, b, c = mma_inputs("ordinary", count, rng=rng)
    model = arith.get_arch(arch)
    args = (model.frac_bits, model.ez_f32, model.block)
    d = np.empty_like(c)
    staged_mma(a[:2], b[:2], c[:2], d[:2], *args, np.zeros(len(STAGES), np.int64))   # compile
    best = None
    for _ in range(REPEATS):
        ticks = np.zeros(len(STAGES), np.int64)
        start = time.perf_counter()
        cycles = staged_mma(a, b, c, d, *args, ticks)
        wall = time.perf_counter() - start
        if best is None or wall < best[0]:
            best = (wall, cycles, ticks)
    wall, cycles, ticks = best
    if not (d == mma_m16n8k16(a, b, c, arch=arch, parallel=False)).all():
        raise AssertionError(f"bench_mma: the staged copy of the kernel differs from mma_m16n8k16 ({arch})")
    kernel = best_rate(lambda: mma_m16n8k16(a, b, c, arch=arch, parallel=False), count)[1] * 1e6 / count
    us_per_cycle = wall * 1e6 / cycles
    stages = [int(t) * us_per_cycle / count for t in ticks]   # they add up to wall / count
    out.write(f"  per mma ({arch}): kernel {kernel:.2f} us; instrumented run {sum(stages):.2f} us = "
              + "; ".join(f"{name} {t:.2f}" for name, t in zip(STAGES, stages)) + " us\n")
    return kernel, sum(stages), stages


def bench_mmasim(count, rng, out):
    try:
        import torch
        from mmasim.nv_ptx import MMA
    except ImportError as e:
        out.write(f"  mmasim: not installed ({e})\n")
        return []
    torch.set_num_threads(1)
    op = MMA("Hopper", "m16n8k16.f32.f16.f16.f32")
    rows = []
    for cls in ("ordinary", "wide-exp", "cancellation", "subnormal", "ties"):
        a, b, c = mma_inputs(cls, count, rng=rng)
        A = from_fragment(MMA_FRAGMENTS[("m16n8k16", "A")], a).astype(np.uint16)
        B = from_fragment(MMA_FRAGMENTS[("m16n8k16", "B")], b).astype(np.uint16)
        C = from_fragment(MMA_FRAGMENTS[("m16n8k16", "C.f32")], c).astype(np.uint32)
        tA = torch.from_numpy(A.view(np.float16).copy())
        tB = torch.from_numpy(B.view(np.float16).copy())
        tC = torch.from_numpy(C.view(np.float32).copy())
        t = time.perf_counter()
        D = torch.stack([op(tA[i], tB[i], tC[i]) for i in range(count)])
        per_call = count / (time.perf_counter() - t)
        av = tA[:, :, None, :].expand(-1, -1, 8, -1)
        bv = tB.transpose(1, 2)[:, None, :, :].expand(-1, 16, -1, -1)
        t = time.perf_counter()
        D2 = op.dpa(av, bv, tC)
        batched = count / (time.perf_counter() - t)
        ours = from_fragment(MMA_FRAGMENTS[("m16n8k16", "C.f32")], mma_m16n8k16(a, b, c))
        theirs = D.numpy().view(np.uint32)
        mism = int((theirs != ours).sum())
        mism2 = int((D2.numpy().view(np.uint32) != ours).sum())
        out.write(f"  mmasim {cls}: {per_call:,.0f} mma/s per call, {batched:,.0f} mma/s batched dpa; "
                  f"bit mismatches vs warpsim: {mism} (per call), {mism2} (dpa) of {ours.size} outputs\n")
        if cls == "ordinary":
            rows = [("mmasim per call", per_call, None), ("mmasim batched dpa", batched, None)]
    return rows


def main(argv=None):
    global REPEATS
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=200_000, help="mma instructions per warpsim/numpy timing")
    p.add_argument("--mmasim-count", type=int, default=200, help="mma instructions per mmasim timing")
    p.add_argument("--quick", action="store_true",
                   help="a check that the benchmark runs (CI): 2,000 mma, 20 for mmasim, one timing each")
    args = p.parse_args(argv)
    if args.quick:
        args.count, args.mmasim_count, REPEATS = 2_000, 20, 1
    out = sys.stdout
    rng = np.random.default_rng(2026)
    out.write(host_line() + "\n")
    rows = bench_warpsim(args.count, rng, out)
    rows.append(bench_numpy(args.count, rng, out))
    for arch in ("sm90", "sm80"):
        breakdown(min(args.count, 100_000), rng, out, arch)
    rows += bench_mmasim(args.mmasim_count, rng, out)
    ref = rows[0][1]
    out.write("\n| implementation | mma.m16n8k16 / s (1 core) | vs warpsim f16->f32 sm90 |\n|---|---|---|\n")
    for name, rate, _ in rows:
        out.write(f"| {name} | {rate:,.0f} | {rate / ref:.3g}x |\n")


if __name__ == "__main__":
    main()
