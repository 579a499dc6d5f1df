"""Bit-exact mma.m16n8k16 throughput on ONE core, beside numpy float32 and PyPI mmasim.

Usage (not part of CI; mmasim needs torch, kept out of the project's venv):

    python3 -m venv /tmp/venv-bench && /tmp/venv-bench/bin/pip install numpy numba torch==2.13.0 mmasim
    PYTHONPATH=. /tmp/venv-bench/bin/python bench/bench_mma.py [--count 200000] [--mmasim-count 200]

Every library is held to one thread (environment set before the imports). warpsim runs its serial
entry (``parallel=False``) for every PTX type combination on sm_90 and sm_80; numpy computes
``A @ B + C`` in float32 for the same shapes (inexact: a baseline of speed only); mmasim runs
``MMA("Hopper", "m16n8k16.f32.f16.f16.f32")`` per instruction and batched through its ``dpa``, and
its results are compared bit for bit with warpsim's on the same inputs. The breakdown times the
kernel's stages cumulatively (the same inlined helpers, stopped after each stage).
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import platform
import sys
import time

import numpy as np

from warpsim.isa import MMA_FRAGMENTS, from_fragment, mma_m16n8k16
from warpsim.isa import arith
from warpsim.isa.inputs import mma_inputs
from warpsim.isa.mma import _A16_AT, _B16_BT, _CF32_CT, _gather16
from warpsim.isa.scratch import stack_array


def best_rate(fn, count, repeats=3):
    best = float("inf")
    for _ in range(repeats):
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
          "column sums", "c term and rounding")


def breakdown(count, rng, out, arch="sm90"):
    """Where the time goes (.f32.f16.f16.f32): the kernel's stages timed cumulatively."""
    from numba import njit

    i32 = np.int32
    a, b, c = mma_inputs("ordinary", count, rng=rng)
    model = arith.get_arch(arch)
    frac_bits, ez, step = model.frac_bits, model.ez_f32, model.block

    @njit
    def stages(a, b, c, n, upto, frac_bits, ez, step):
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
        s = 0
        for i in range(n):
            _gather16(a[i], regs, _A16_AT, at)
            _gather16(b[i], regs, _B16_BT, bt)
            for r in range(4):
                for lane in range(32):
                    ct[_CF32_CT[lane, r, 0]] = np.int32(c[i, lane, r])
            if upto >= 1:
                s += arith._decode_operand(at, 16, 16, arith.AB_F16, frac_bits - 20, a_sig, a_exp, a_neg)
                s += arith._decode_operand(bt, 8, 16, arith.AB_F16, 0, b_sig, b_exp, b_neg)
            for k0 in range(0, 16, step):
                src = ct if k0 == 0 else dt
                if upto >= 2:
                    s += arith._decode_c(src, 128, 8, 23, frac_bits - 23, ez, c_bits, c_sig, c_exp, c_neg, emax)
                if upto >= 3:
                    for n0 in range(0, 8, 4):
                        arith._column_maxima(a_exp, b_exp, emax, n0, 8, k0, k0 + step)
                for col in range(8 if upto >= 4 else 0):
                    arith._column_sums(a_sig, a_exp, a_neg, b_sig, b_exp, b_neg, emax, acc, col, k0, k0 + step)
                    for m in range(16 if upto >= 5 else 0):
                        j = col * 16 + m
                        tc = i32(c_sig[j] >> (min(i32(emax[j] - c_exp[j]), i32(31)) & i32(31)))
                        tc = i32(i32(tc ^ c_neg[j]) - c_neg[j])
                        dt[j] = arith._round_sum(acc[m], tc, i32(emax[j] - frac_bits), arith.CD_F32)
                    s += acc[col]
            s += at[5] + bt[7] + ct[9] + dt[11] + emax[13]
        return s

    full = best_rate(lambda: mma_m16n8k16(a, b, c, arch=arch, parallel=False), count)[1]
    per = 1e6 / count
    parts, prev = [], 0.0
    for upto, name in enumerate(STAGES):
        stages(a, b, c, 2, upto, frac_bits, ez, step)
        t = best_rate(lambda: stages(a, b, c, count, upto, frac_bits, ez, step), count)[1] * per
        parts.append(f"{name} {t - prev:.2f}")
        prev = t
    out.write(f"  per mma ({arch}): total {full * per:.2f} us; " + "; ".join(parts)
              + f"; the rest (scatter D, output array, calls) {full * per - prev:.2f} us\n")


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
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=200_000, help="mma instructions per warpsim/numpy timing")
    p.add_argument("--mmasim-count", type=int, default=200, help="mma instructions per mmasim timing")
    args = p.parse_args(argv)
    out = sys.stdout
    rng = np.random.default_rng(2026)
    out.write(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
              f"python {platform.python_version()}, numpy {np.__version__}\n")
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
