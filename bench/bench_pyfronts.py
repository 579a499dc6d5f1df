"""What the Python front ends' switches cost: a launch through ``warpsim.triton.simulate()``, ``warpsim.numba`` and
``warpsim.cupy.RawKernel`` against the same PTX launched directly through ``warpsim.ptx`` (warm: compiled and
loaded once before timing), measured in the same run, interleaved, best of N each.

``python bench/bench_pyfronts.py [--quick]``: one line per kernel, ``ratio = switch / direct`` (the goal: at
most 1.2). A front end whose tool is missing (Triton, numba-cuda, nvcc) is skipped with a line saying so.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests" / "pyfronts")]

from hostinfo import host_line  # noqa: E402

from warpsim import ptx as core  # noqa: E402
from warpsim.toolchain import find_nvcc  # noqa: E402


def best_pair(switch, direct, repeats):
    """Best seconds of each, timed alternately."""
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        for k, fn in enumerate((switch, direct)):
            t = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def triton_cases(n):
    import triton_kernels as tk
    import warpsim.triton as wt
    from warpsim.frontends.triton import compile_jit
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    k, _ = compile_jit(tk.add_kernel, (x, y, out, n), {"BLOCK_SIZE": 1024}, "sm_80")
    module = core.load(k.ptx, arch="sm_80")
    grid = ((n + 1023) // 1024, 1, 1)

    def switch():
        with wt.simulate():
            tk.run_add(x, y, out)

    def direct():
        module.launch(k.entry, grid=grid, block=k.block, args=[x, y, out, n, 0, 0], arch="sm80")

    rows, cols = 64, 256
    s_in = rng.standard_normal((rows, cols)).astype(np.float32)
    s_out = np.zeros_like(s_in)
    ks, _ = compile_jit(tk.softmax_kernel, (s_out, s_in, cols, cols, rows, cols),
                        {"BLOCK_SIZE": cols, "num_warps": 4}, "sm_80")
    ms = core.load(ks.ptx, arch="sm_80")
    run_args = [s_out, s_in, *[v for v in (cols, cols, rows, cols) if v != 1]]

    def s_switch():
        with wt.simulate():
            tk.run_softmax(s_in, s_out)

    def s_direct():
        ms.launch(ks.entry, grid=(4, 1, 1), block=ks.block, args=[*run_args, 0, 0], smem=ks.shared, arch="sm80")

    return [(f"triton add_kernel n={n:,}", switch, direct), (f"triton softmax {rows}x{cols}", s_switch, s_direct)]


def numba_cases(n):
    import numba_kernels as nk
    import warpsim.numba as wn
    from warpsim.frontends.numba_cuda import compile_dispatcher
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    a = np.float32(0.75)
    k = compile_dispatcher(nk.saxpy, (a, x, y, out))
    module = core.load(k.ptx, arch="sm_80")
    blocks = (n + 127) // 128
    flat = [a] + [v for arr in (x, y, out) for v in (0, 0, arr.size, arr.itemsize, arr, arr.shape[0], arr.strides[0])]

    def switch():
        with wn.simulate():
            nk.saxpy[blocks, 128](a, x, y, out)

    def direct():
        module.launch(k.entry, grid=(blocks, 1, 1), block=(128, 1, 1), args=flat, arch="sm80")

    return [(f"numba saxpy n={n:,}", switch, direct)]


def cupy_cases(n):
    import cupy_kernels as ck
    from warpsim.cupy import RawKernel
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    k = RawKernel(ck.ADD, "vector_add")
    k((1,), (32,), (x, y, z, np.int32(n)))
    module = core.load(k.ptx, arch="sm_80")
    blocks = (n + 255) // 256

    def switch():
        k((blocks,), (256,), (x, y, z, np.int32(n)))

    def direct():
        module.launch(k._entry, grid=(blocks, 1, 1), block=(256, 1, 1), args=[x, y, z, n], arch="sm80")

    return [(f"cupy vector_add n={n:,}", switch, direct)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, best of 3")
    args = parser.parse_args(argv)
    n, repeats = (8192, 3) if args.quick else (65536, 7)
    print(host_line())
    print(f"warm launches, best of {repeats}, switch and direct alternately; ratio = switch / direct (goal <= 1.2)")
    makers = (("triton", lambda: importlib.util.find_spec("triton"), triton_cases),
              ("numba-cuda", lambda: importlib.util.find_spec("numba_cuda"), numba_cases),
              ("nvcc", find_nvcc, cupy_cases))
    worst = 0.0
    for tool, present, make in makers:
        if not present():
            print(f"{tool}: not installed, skipped")
            continue
        for name, switch, direct in make(n):
            switch()                                   # compile, load, JIT: not timed
            direct()
            s, d = best_pair(switch, direct, repeats)
            worst = max(worst, s / d)
            print(f"  {name}: switch {s * 1e3:.2f} ms, direct {d * 1e3:.2f} ms, ratio {s / d:.3f}")
    print(f"worst ratio {worst:.3f}")


if __name__ == "__main__":
    main()
