"""Bit-exact mma.m16n8k16 throughput on ONE core, beside numpy float32 and PyPI mmasim.

Usage (not part of CI; mmasim needs torch, kept out of the project's venv):

    python3 -m venv /tmp/venv-bench && /tmp/venv-bench/bin/pip install numpy numba torch==2.13.0 mmasim
    PYTHONPATH=. /tmp/venv-bench/bin/python bench/bench_mma.py [--count 200000] [--mmasim-count 200]

Every library is held to one thread (environment set before the imports). warpsim runs its serial
entry (``parallel=False``); numpy computes ``A @ B + C`` in float32 for the same shapes (inexact:
a baseline of speed only); mmasim runs ``MMA("Hopper", "m16n8k16.f32.f16.f16.f32")`` per
instruction and batched through its ``dpa``, and its results are compared bit for bit with
warpsim's on the same inputs.
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
from warpsim.isa.arith import _decode_rows
from warpsim.isa.inputs import mma_inputs
from warpsim.isa.mma import _A16_COL, _A16_ROW, _B16_COL, _B16_ROW, _unpack16


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
                         ("f16", "f32", "sm80")):
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


def breakdown(count, rng, out):
    """Where the time goes: fragment unpacking and operand decoding timed alone (njit loops)."""
    from numba import njit

    a, b, c = mma_inputs("ordinary", count, rng=rng)

    @njit
    def unpack_only(a, b, n):
        t = np.zeros((4, 16, 16), np.int64)
        regs = np.arange(4)
        s = 0
        for i in range(n):
            _unpack16(a[i], regs, _A16_ROW, _A16_COL, t[0], False)
            _unpack16(b[i], regs, _B16_ROW, _B16_COL, t[1], True)
            s += t[0, 1, 1]
        return s

    @njit
    def unpack_decode(a, b, n):
        t = np.zeros((4, 16, 16), np.int64)
        w = np.empty((8, 16, 16), np.int32)
        regs = np.arange(4)
        s = 0
        for i in range(n):
            _unpack16(a[i], regs, _A16_ROW, _A16_COL, t[0], False)
            _unpack16(b[i], regs, _B16_ROW, _B16_COL, t[1], True)
            s += _decode_rows(t[0], 16, 16, 5, 10, w[0], w[1], w[2], w[3])
            s += _decode_rows(t[1], 8, 16, 5, 10, w[4], w[5], w[6], w[7])
        return s

    unpack_only(a, b, 2)
    unpack_decode(a, b, 2)
    full = best_rate(lambda: mma_m16n8k16(a, b, c, parallel=False), count)[1]
    t_unpack = best_rate(lambda: unpack_only(a, b, count), count)[1]
    t_decode = best_rate(lambda: unpack_decode(a, b, count), count)[1] - t_unpack
    per = 1e6 / count
    out.write(f"  per mma: total {full * per:.2f} us; unpack A,B fragments {t_unpack * per:.2f} us; "
              f"decode A,B {t_decode * per:.2f} us; the rest (128 block sums with alignment, "
              f"rounding, C/D) {(full - t_unpack - t_decode) * per:.2f} us\n")


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
    breakdown(min(args.count, 100_000), rng, out)
    rows += bench_mmasim(args.mmasim_count, rng, out)
    ref = rows[0][1]
    out.write("\n| implementation | mma.m16n8k16 / s (1 core) | vs warpsim f16->f32 sm90 |\n|---|---|---|\n")
    for name, rate, _ in rows:
        out.write(f"| {name} | {rate:,.0f} | {rate / ref:.3g}x |\n")


if __name__ == "__main__":
    main()
