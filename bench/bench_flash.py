"""The CuTe C++ flash-attention forward (``examples/cute_cpp/flash_fwd.cu``) on the simulator, one core.

Run from the repository root: ``PYTHONPATH=. python bench/bench_flash.py [--repeat N] [--quick]`` (needs nvcc;
the PTX is compiled once and cached). Every library is held to one thread.

Measured after warm-up (best and median of N), f16, d = 64, not causal, sm_90:

- one CTA: 64 Q rows against N = 512 keys (``--grid 1`` of a launch with N = 512): the issue bounds it by 100 ms;
- the whole forward of B = 1, H = 2, N = 512 (16 CTAs): the issue bounds it by 2 s;
- the baseline, in the same run: numpy's float64 attention of the same inputs (``flash_fwd_check.reference``),
  and the ratio simulator / numpy;
- warp instructions executed per CTA and per second.

A GPU's time for the same launch is not measured here (no GPU in CI); bench/RESULTS.md quotes the H200's from
``hwcheck``'s reports. ``--quick`` (N = 128, one repeat) is what tests/test_bench.py runs: it checks that the
benchmark runs, never a time.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "bench"))

import flash_fwd_check as flash  # noqa: E402
from hostinfo import host_line  # noqa: E402
from warpsim.ptx.front import open_kernel  # noqa: E402


def timed(fn, repeat):
    """(best, median) seconds of ``fn()`` over ``repeat`` runs after one warm-up run."""
    fn()
    times = sorted(_once(fn) for _ in range(repeat))
    return times[0], times[len(times) // 2]


def _once(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="N = 128, one repeat (what the tests run)")
    args = parser.parse_args(argv)
    n, repeat = (128, 1) if args.quick else (512, args.repeat)
    d, dtype = 64, "f16"
    print(host_line())
    kernel = open_kernel(flash.SOURCES[False], flash.kernel_name(dtype, d, False), arch="sm_90")
    scale_log2, softmax_scale = flash.scales(d)

    def launch(B, H, cta=None):
        q, k, v = flash.random_inputs(B, H, n, d, dtype, seed=1)
        a = {"q": q, "k": k, "v": v, "o": np.zeros_like(q), "lse": np.zeros((B, H, n), np.float32), "N": n,
             "scale_log2": float(scale_log2), "softmax_scale": float(softmax_scale)}
        return kernel.launch(grid=flash.grid(B, H, n), block=flash.THREADS, args=a, smem=flash.smem_bytes(d),
                             cta=cta)

    one = timed(lambda: launch(1, 1, cta=0), repeat)
    whole = timed(lambda: launch(1, 2), max(1, repeat // 2))
    q, k, v = flash.random_inputs(1, 2, n, d, dtype, seed=1)
    base = timed(lambda: flash.reference(q, k, v, dtype=dtype, causal=False), repeat)
    steps = launch(1, 1, cta=0).stats["warp_instructions"]
    print(f"flash_fwd_f16_d64, N = {n}, sm_90, one thread")
    print(f"one CTA (64 rows x {n} keys): {one[0] * 1e3:9.1f} ms (median {one[1] * 1e3:.1f}); target < 100 ms")
    print(f"B=1 H=2 N={n} forward ({2 * flash.grid(1, 1, n)[0]} CTAs): {whole[0]:8.3f} s (median {whole[1]:.3f}); "
          f"target < 2 s")
    print(f"baseline: numpy float64 attention of B=1 H=2: {base[0] * 1e3:.2f} ms; simulator / numpy: "
          f"{whole[0] / base[0]:.0f}x")
    print(f"warp instructions per CTA: {steps:,}; {steps / one[0] / 1e6:.2f} M per second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
