"""A launch's CTAs on every core (``jobs``, issue 29): the default-flags CuTe C++ flash-attention forward
(``examples/cute_cpp/as_compiled/flash_attn_fwd.cu``, f16, d = 64, not causal, sm_90) with ``jobs=1`` and with more
processes, in one run.

Run from the repository root: ``PYTHONPATH=. python bench/bench_jobs.py [--repeat N] [--jobs N] [--quick]`` (needs
nvcc; the PTX is compiled once and cached). Every library is held to one thread, so ``jobs`` is the only parallelism.

The launch is issue 29's: B = 2, H = 4, N = 1024 (128 CTAs of 4 warps, about 3.6 M warp instructions); ``--shape
B,H,N`` another (``--shape 1,2,512 --jobs 1``: 16 CTAs on one core, the figure of the interpreter's own speed). For each of
``jobs = 1`` (the baseline) and ``jobs = 2 .. --jobs`` (default: every CPU) it prints the best and median wall time of
``--repeat`` launches, warp instructions per second, the speed-up over ``jobs = 1`` measured in the same run, and the
SHA-1 of the O and LSE bytes, which must be the same for every ``jobs`` (the benchmark exits 1 otherwise). The launch
spreads its CTAs only after it has run :data:`warpsim.ptx.jobs.FAN_OUT_AFTER` seconds, as a user's launch does.

``--quick`` (B = 1, H = 2, N = 256: 8 CTAs, one repeat, the fan-out after 0 s) is what tests/test_bench.py runs: it
checks that the benchmark runs and the bits agree, never a time.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hostinfo import host_line  # noqa: E402
from warpsim.frontends.kernel import open_kernel  # noqa: E402
from warpsim.ptx import jobs as fan  # noqa: E402

KERNEL = ROOT / "examples" / "cute_cpp" / "as_compiled" / "flash_attn_fwd.cu"
D = 64


def _shape(text):
    """``--shape B,H,N``: three positive integers (argparse reports anything else in one line, exit 2)."""
    try:
        shape = tuple(int(x) for x in text.split(","))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"expected B,H,N (three positive integers), got {text!r}")
    return shape


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--jobs", type=int, default=fan.default_jobs(), help="the most processes (default: every CPU)")
    p.add_argument("--quick", action="store_true", help="8 CTAs, one repeat (what the tests run)")
    p.add_argument("--shape", default="2,4,1024", type=_shape,
                   help="B,H,N of the launch (default 2,4,1024: issue 29's)")
    args = p.parse_args(argv)
    B, H, N = (1, 2, 256) if args.quick else args.shape
    repeat = 1 if args.quick else args.repeat
    if args.quick:
        fan.FAN_OUT_AFTER = 0.0
    print(host_line())
    kernel = open_kernel(str(KERNEL), "flash_fwd_f16_d64", arch="sm_90")
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-2, 2, (B, H, N, D)).astype(np.float16) for _ in range(3))
    scale = np.float32(1 / np.sqrt(D))
    grid = (-(-N // 64), H, B)

    def launch(jobs):
        a = {"q": q, "k": k, "v": v, "o": np.zeros_like(q), "lse": np.zeros((B, H, N), np.float32), "N": N,
             "scale_log2": float(np.float32(scale * np.log2(np.e))), "softmax_scale": float(scale)}
        return kernel.launch(grid=grid, block=128, args=a, smem=40960, jobs=jobs)

    launch(1)                                   # warm: compile, caches
    ctas = grid[0] * grid[1] * grid[2]
    print(f"flash_fwd_f16_d64, B = {B}, H = {H}, N = {N}: {ctas} CTAs, sm_90, load average {os.getloadavg()[0]:.1f}")
    base, digests = None, set()
    for jobs in [1] + list(range(2, args.jobs + 1)):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            result = launch(jobs)
            times.append(time.perf_counter() - start)
        times.sort()
        best, median = times[0], times[len(times) // 2]
        buffers = kernel.buffers(result)
        digest = hashlib.sha1(buffers["o"].tobytes() + buffers["lse"].tobytes()).hexdigest()[:12]
        digests.add(digest)
        steps = result.stats["warp_instructions"]
        base = base or best
        print(f"jobs {jobs}: {best:8.3f} s (median {median:.3f}), {steps:,} warp instructions, "
              f"{steps / best / 1e6:.2f} M/s, {base / best:.2f}x jobs 1, O+LSE sha1 {digest}")
    if len(digests) != 1:
        print(f"DIFFERENT BITS: {sorted(digests)}")
        return 1
    print("the same bits for every jobs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
