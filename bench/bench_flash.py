"""The CuTe C++ flash-attention forward (``examples/cute_cpp/flash_fwd.cu``) on the simulator, one core.

Run from the repository root: ``PYTHONPATH=. python bench/bench_flash.py [--repeat N] [--quick] [--profile]`` (needs
nvcc; the PTX is compiled once and cached). Every library is held to one thread.

Measured after warm-up (best and median of N), f16, d = 64, not causal, sm_90:

- one CTA: 64 Q rows against N = 512 keys (``--grid 1`` of a launch with N = 512): the issue bounds it by 100 ms;
- the whole forward of B = 1, H = 2, N = 512 (16 CTAs): the issue bounds it by 2 s;
- the baseline, in the same run: numpy's float64 attention of the same inputs (``flash_fwd_check.reference``),
  and the ratio simulator / numpy;
- warp instructions executed per CTA and per second;
- the same figures in CPU time of this process (``time.process_time``), which a loaded host inflates less
  than wall time;
- the GPU's time for the same launch, where a committed hwcheck report has it
  (``hwcheck.runs.ptx_examples.reported_gpu_time``: CUDA events, the median of several launches), and the ratio
  simulator / GPU; else the command that measures it.

``--profile``: where one CTA's time goes, per PTX instruction form (``PtxModule.launch(profile=True)``: host
cycles from each warp instruction's scheduling to the next one's; per form the least over 5 runs, as a loaded
host adds the time other processes hold the core to whichever instruction was running): warp instructions
executed, share of the time, milliseconds (the share of the fastest run's CPU time) and microseconds per warp
instruction.

``--quick`` (N = 128, one repeat) is what tests/test_bench.py runs: it checks that the benchmark runs, never
a time.
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
from hwcheck.runs.ptx_examples import flash_bench_command, reported_gpu_time  # noqa: E402
from warpsim.frontends.kernel import open_kernel  # noqa: E402

def timed(fn, repeat, clock=time.perf_counter):
    """(best, median) seconds of ``fn()`` over ``repeat`` runs after one warm-up run, by ``clock``."""
    fn()
    times = sorted(_once(fn, clock) for _ in range(repeat))
    return times[0], times[len(times) // 2]


def _once(fn, clock):
    start = clock()
    fn()
    return clock() - start


def profile(launch, repeat=5):
    """Print where one CTA's time goes, per PTX instruction form (see the module docstring)."""
    cycles, counts, cpu = {}, {}, []
    launch(profile=True)
    for _ in range(repeat):
        start = time.process_time()
        res = launch(profile=True)
        cpu.append(time.process_time() - start)
        for form, (n, c) in res.stats["host_cycles"].items():
            counts[form] = n
            cycles[form] = min(cycles.get(form, c), c)
    total, cpu = sum(cycles.values()), min(cpu)
    print(f"profile of one CTA (host cycles per instruction form, the least of {repeat} runs, which leaves out most "
          f"of the time another process held the core; CPU {cpu * 1e3:.1f} ms, the fastest run):")
    print(f"  {'instruction form':48s} {'warp instr':>10s} {'share':>7s} {'ms':>7s} {'us each':>8s}")
    for form, c in sorted(cycles.items(), key=lambda kv: -kv[1]):
        ms = cpu * 1e3 * c / total
        print(f"  {form:48s} {counts[form]:10,d} {100 * c / total:6.2f}% {ms:7.2f} {1e3 * ms / counts[form]:8.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="N = 128, one repeat (what the tests run)")
    parser.add_argument("--profile", action="store_true", help="also print where one CTA's time goes, per PTX "
                                                                  "instruction form")
    args = parser.parse_args(argv)
    n, repeat = (128, 1) if args.quick else (512, args.repeat)
    d, dtype = 64, "f16"
    print(host_line())
    kernel = open_kernel(flash.SOURCES[False], flash.kernel_name(dtype, d, False), arch="sm_90")
    scale_log2, softmax_scale = flash.scales(d)

    def launch(B, H, cta=None, profile=False):
        q, k, v = flash.random_inputs(B, H, n, d, dtype, seed=1)
        a = {"q": q, "k": k, "v": v, "o": np.zeros_like(q), "lse": np.zeros((B, H, n), np.float32), "N": n,
             "scale_log2": float(scale_log2), "softmax_scale": float(softmax_scale)}
        return kernel.launch(grid=flash.grid(B, H, n), block=flash.THREADS, args=a, smem=flash.smem_bytes(d),
                             cta=cta, profile=profile)

    one = timed(lambda: launch(1, 1, cta=0), repeat)
    whole = timed(lambda: launch(1, 2), max(1, repeat // 2))
    one_cpu = timed(lambda: launch(1, 1, cta=0), repeat, time.process_time)
    whole_cpu = timed(lambda: launch(1, 2), max(1, repeat // 2), time.process_time)
    q, k, v = flash.random_inputs(1, 2, n, d, dtype, seed=1)
    base = timed(lambda: flash.reference(q, k, v, dtype=dtype, causal=False), repeat)
    steps = launch(1, 1, cta=0).stats["warp_instructions"]
    print(f"flash_fwd_f16_d64, N = {n}, sm_90, one thread, load average {os.getloadavg()[0]:.1f}")
    print(f"one CTA (64 rows x {n} keys): {one[0] * 1e3:9.1f} ms (median {one[1] * 1e3:.1f}); target < 100 ms")
    print(f"B=1 H=2 N={n} forward ({2 * flash.grid(1, 1, n)[0]} CTAs): {whole[0]:8.4f} s (median {whole[1]:.4f}); "
          f"target < 2 s")
    print(f"CPU time of this process: one CTA {one_cpu[0] * 1e3:.1f} ms (median {one_cpu[1] * 1e3:.1f}); "
          f"B=1 H=2 {whole_cpu[0]:.3f} s (median {whole_cpu[1]:.3f})")
    print(f"baseline: numpy float64 attention of B=1 H=2: {base[0] * 1e3:.2f} ms; simulator / numpy: "
          f"{whole[0] / base[0]:.0f}x")
    print(f"warp instructions per CTA: {steps:,}; {steps / one[0] / 1e6:.2f} M per second")
    gpu = reported_gpu_time() if n == 512 else None
    if n != 512:
        print("GPU time of the B=1 H=2 N=512 launch: not for --quick (N = 128)")
    elif gpu is None:
        print(f"GPU time of the B=1 H=2 N=512 launch: not in a committed report; measure it on the GPU with "
              f"`{flash_bench_command()}`")
    else:
        ms, path, name, launches = gpu
        print(f"GPU time of the B=1 H=2 N=512 launch: {ms:.4f} ms on {name} (median of {launches} launches, "
              f"{path}); simulator / GPU: {whole[0] * 1e3 / ms:,.0f}x")
    if args.profile:
        profile(lambda profile: launch(1, 1, cta=0, profile=profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
