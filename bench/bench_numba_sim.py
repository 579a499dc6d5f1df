"""Numba CUDA kernels on warpsim against Numba's own CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), side by side.

Run from the repository root: ``PYTHONPATH=. python bench/bench_numba_sim.py [--quick] [--repeat N]``.

The kernels are written as Numba's users write them (``@cuda.jit``, ``cuda.grid``, shared memory and
``syncthreads``, ``math.exp``) and launched the same way on both: ``kernel[blocks, threads](numpy arrays)``.
warpsim runs them under ``warpsim.numba.simulate(arch="sm_80")`` (Numba's PTX, ptxas's contraction, bit-exact) in
this process, timed by ``bench/timing.py``'s one rule (best of ``--repeat`` after 2 warm-up launches: the PTX
compiled and cached; every kernel writes its whole output, so one set of arrays serves every launch); Numba's
simulator runs them in a child
process started with ``NUMBA_ENABLE_CUDASIM=1`` (the variable must be set before Numba is imported), where each
thread is a Python thread interpreting the kernel's Python code. For each kernel: the best of ``--repeat`` launches
on warpsim's side and one launch of the simulator's (seconds to minutes each), the ratio simulator / warpsim, and
whether the two gave the same bits (Numba's simulator computes in numpy's float32 without contracting ``a * x + y``
into one FMA, as ptxas and the GPU do, and its ``math.exp`` is numpy's, so a float kernel may differ by an ulp;
warpsim gives the GPU's bits, checked on the H100 by ``tests/pyfronts/gpu_check.py``).

``--quick`` (one small launch per kernel) is what tests/test_bench.py runs: that the benchmark runs and prints its
rows, never a time. Needs numba-cuda (``pip install numba-cuda``).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import cuda, float32

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


# The kernels are written here, not imported from tests/pyfronts/numba_kernels.py: that module's
# @cuda.jit(lineinfo=True) is refused by Numba's simulator (its jit takes no lineinfo), so it does not import there.


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def block_sum(x, partial):
    tile = cuda.shared.array(256, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tile[t] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            tile[t] += tile[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]


@cuda.jit
def matrix_add_2d(a, b, c):
    row, col = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = a[row, col] + b[row, col]


@cuda.jit
def softmax_rows(x, out):
    """One block of 128 threads a row: the row's maximum and the sum of exponentials by shared-memory reductions."""
    buf = cuda.shared.array(128, float32)
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    n = x.shape[1]
    m = float32(-math.inf)
    for j in range(t, n, 128):
        m = max(m, x[row, j])
    buf[t] = m
    cuda.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            buf[t] = max(buf[t], buf[t + s])
        cuda.syncthreads()
        s //= 2
    m = buf[0]
    cuda.syncthreads()
    total = float32(0)
    for j in range(t, n, 128):
        e = math.exp(x[row, j] - m)
        out[row, j] = e
        total += e
    buf[t] = total
    cuda.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    for j in range(t, n, 128):
        out[row, j] = out[row, j] / buf[0]


def cases(quick):
    """``[(name, kernel, grid, block, args, output index)]``, the inputs seeded: the same on both sides."""
    rng = np.random.default_rng(3)
    n = 512 if quick else 16384
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    side = 16 if quick else 128
    a2, b2 = (rng.standard_normal((side, side)).astype(np.float32) for _ in range(2))
    rows = 2 if quick else 32
    s = rng.standard_normal((rows, 512)).astype(np.float32) * 4
    return [
        ("saxpy", saxpy, n // 256, 256, [np.float32(1.5), x, y, np.zeros(n, np.float32)], 3),
        ("block_sum", block_sum, n // 256, 256, [x, np.zeros(n // 256, np.float32)], 1),
        ("matrix_add_2d", matrix_add_2d, (side // 16, side // 16), (16, 16), [a2, b2, np.zeros_like(a2)], 2),
        ("softmax_rows", softmax_rows, rows, 128, [s, np.zeros_like(s)], 1),
    ]


def timed_launches(kernel, grid, block, args, repeat):
    """Numba's simulator side: (best seconds, the output arrays after the last launch) of ``repeat`` launches on
    fresh copies (one launch there takes seconds to minutes: no warm-up)."""
    best, out = math.inf, None
    for _ in range(repeat):
        fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        start = time.perf_counter()
        kernel[grid, block](*fresh)
        best = min(best, time.perf_counter() - start)
        out = fresh
    return best, out


def child(quick, repeat):
    """Numba's simulator side (NUMBA_ENABLE_CUDASIM=1): one JSON line per kernel with its time and output bits."""
    for name, kernel, grid, block, args, index in cases(quick):
        seconds, out = timed_launches(kernel, grid, block, args, repeat)
        print(json.dumps({"name": name, "seconds": seconds, "bits": out[index].view(np.uint32).tolist()}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small launches, one repeat (what the tests run)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    if args.child:
        child(args.quick, repeat)
        return 0
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        print("bench_numba_sim: run it without NUMBA_ENABLE_CUDASIM (the child process sets it)", file=sys.stderr)
        return 2
    from hostinfo import host_line
    from timing import timed
    import warpsim.numba
    print(host_line())
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    sim = subprocess.run([sys.executable, __file__, "--child", "--repeat", "1"] + (["--quick"] * args.quick),
                         env=env, capture_output=True, text=True, check=True)
    simulated = {r["name"]: r for r in map(json.loads, sim.stdout.strip().splitlines())}
    ratios = []
    with warpsim.numba.simulate(arch="sm_80", quiet=True):
        for name, kernel, grid, block, launch_args, index in cases(args.quick):
            seconds, _ = timed(lambda: kernel[grid, block](*launch_args), repeat)
            other = simulated[name]
            same = launch_args[index].view(np.uint32).tolist() == other["bits"]
            ratios.append(other["seconds"] / seconds)
            print(f"  {name:14s} grid {str(grid):9s} warpsim {seconds * 1e3:9.2f} ms   Numba's simulator "
                  f"{other['seconds'] * 1e3:10.2f} ms   {ratios[-1]:7.1f}x   same bits: {'yes' if same else 'no'}")
    print(f"slowest ratio: {min(ratios):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
