"""Batched float instructions on ONE core, as ratios against numpy float32 in the same run.

Usage (not part of CI):

    PYTHONPATH=. python bench/bench_float.py [--count 4000000] [--quick]

Every library is held to one thread (environment set before the imports). warpsim runs its serial
entry (``parallel=False``) of ``warpsim.isa.fpbatch.float_arith``: ``fma.rn.f32`` (the host binary32
path), ``fma.rz.f32`` and ``fma.rn.ftz.sat.f32`` (the integer model and the host path with its bit
fix-ups), ``fma.rn.f16x2`` and ``add.rn.f32``. numpy computes ``a * b + c`` in float32 on the same
inputs (two roundings: a baseline of speed only). The 16-bit MUFU forms (``ex2.approx.f16x2``,
``tanh.approx.bf16``: ``warpsim.isa.mufu16.float_mufu16``, a table lookup) count each 32-bit
register as one lane-op; the f32 MUFU forms (``ex2.approx.ftz.f32``, ``ex2.approx.f32``, ``rcp.approx.f32``,
``lg2.approx.ftz.f32``: ``warpsim.isa.mufu32.mufu_batch``; rcp a key and table lookup, ex2 and lg2 the SFU's
quadratics of ``warpsim.isa.sfu_exp``; ``sin.approx.f32``, ``cos.approx.f32``: ``warpsim.isa.sfu_sincos.sincos_batch``,
the datapath in integers) one per f32. The issue's targets are ``fma.rn.f32`` at 100 M lane-ops/s or more per core
and MUFU at 50 M; the printed ratio to numpy is the figure to compare between machines.
``--quick``: 200,000 elements, best of 2.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import platform
import sys
import time

import numpy as np

from warpsim.isa.fpbatch import float_arith
from warpsim.isa.mufu16 import float_mufu16
from warpsim.isa.mufu32 import mufu_batch
from warpsim.isa.sfu_sincos import sincos_batch


def best_rate(fn, count, repeats):
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return count / best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=4_000_000, help="elements per timing (default 4,000,000)")
    parser.add_argument("--quick", action="store_true", help="200,000 elements, best of 2")
    args = parser.parse_args(argv)
    count, repeats = (200_000, 2) if args.quick else (args.count, 5)
    rng = np.random.default_rng(0)
    a, b, c = (rng.uniform(-1, 1, count).astype(np.float32) for _ in range(3))
    ua, ub, uc = (x.view(np.uint32) for x in (a, b, c))
    h = [rng.uniform(-1, 1, 2 * count).astype(np.float16).view(np.uint32) for _ in range(3)]
    hb = ub >> np.uint32(16)                  # bf16 bits in the low half
    out = sys.stdout
    out.write(f"machine: {platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}, "
              f"numpy {np.__version__}; {count:,} elements, best of {repeats}, one thread\n")
    numpy_rate = best_rate(lambda: a * b + c, count, repeats)
    runs = [
        ("fma.rn.f32", lambda: float_arith("fma", ua, ub, uc, parallel=False)),
        ("fma.rn.ftz.sat.f32", lambda: float_arith("fma", ua, ub, uc, ftz=True, sat=True, parallel=False)),
        ("add.rn.f32", lambda: float_arith("add", ua, ub, parallel=False)),
        ("fma.rz.f32", lambda: float_arith("fma", ua, ub, uc, rnd="rz", parallel=False)),
        ("fma.rn.f16x2", lambda: float_arith("fma", *h, type="f16x2", parallel=False)),
        ("ex2.approx.f16x2", lambda: float_mufu16("ex2", h[0], type="f16x2")),
        ("tanh.approx.bf16", lambda: float_mufu16("tanh", hb, type="bf16")),
        ("ex2.approx.ftz.f32", lambda: mufu_batch("ex2", ua, ftz=True)),
        ("ex2.approx.f32", lambda: mufu_batch("ex2", ua)),
        ("rcp.approx.f32", lambda: mufu_batch("rcp", ua)),
        ("lg2.approx.ftz.f32", lambda: mufu_batch("lg2", ua & np.uint32(0x7FFFFFFF), ftz=True)),
        ("sin.approx.f32", lambda: sincos_batch("sin", ua)),
        ("cos.approx.f32", lambda: sincos_batch("cos", ua)),
    ]
    rows = [("numpy float32 a * b + c (two roundings)", numpy_rate)]
    for name, fn in runs:
        fn()   # compile or load the cache
        rows.append((f"warpsim {name}", best_rate(fn, count, repeats)))
    out.write("\n| operation | M lane-ops / s (1 core) | vs numpy |\n|---|---|---|\n")
    for name, rate in rows:
        out.write(f"| {name} | {rate / 1e6:,.1f} | {rate / numpy_rate:.3g}x |\n")
    fma = rows[1][1]
    out.write(f"\nfma.rn.f32: {fma / 1e6:,.1f} M lane-ops/s per core "
              f"({'meets' if fma >= 100e6 else 'below'} the 100 M target on this machine)\n")
    mufu = min(rate for name, rate in rows if ".approx." in name)
    out.write(f"MUFU (slowest form): {mufu / 1e6:,.1f} M lane-ops/s per core "
              f"({'meets' if mufu >= 50e6 else 'below'} the 50 M target on this machine)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
