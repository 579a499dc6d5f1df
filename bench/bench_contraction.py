"""What deciding FMA contraction costs: a cold decision (ptxas + nvdisasm) and a warm one (the disk cache).

Run from the repository root: ``PYTHONPATH=. python bench/bench_contraction.py [--repeat N] [--quick]`` (needs
nvcc, ptxas and nvdisasm; the PTX is compiled once by nvcc and cached).

The kernel is the CuTe C++ FlashAttention-2 forward compiled with nvcc's defaults
(``examples/cute_cpp/as_compiled/flash_attn_fwd.cu``), whose PTX holds the unrounded ``mul``/``add``/``sub`` that
ptxas fuses. Measured in one run, best and median of N (each cold run in a new, empty cache folder):

- ``load none``: ``warpsim.ptx.load(text, ptxas="none")`` -- parse and decode, no contraction: the baseline;
- ``load cold``: ``warpsim.ptx.load(text)`` with an empty decision cache: ptxas on the line-annotated copy and on the
  PTX itself and nvdisasm run while the text is parsed; what it adds to the baseline is bounded by 0.5 s (issue 26);
- ``load warm``: the same load again (the cache hit), with the number of ptxas/nvdisasm processes it started
  (must be 0);
- ``decide alone``: :func:`warpsim.ptx.contraction.decide` cold, not overlapped with parsing.

``--quick`` (one repeat) is what tests/test_bench.py runs: it checks that the benchmark runs, never a time.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hostinfo import host_line  # noqa: E402
from warpsim import ptx, toolchain  # noqa: E402
from warpsim.frontends.nvcc import compile_cuda  # noqa: E402
from warpsim.ptx import contraction  # noqa: E402

KERNEL = ROOT / "examples" / "cute_cpp" / "as_compiled" / "flash_attn_fwd.cu"


def best_median(times):
    times = sorted(times)
    return times[0], times[len(times) // 2]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    print(host_line())
    text = compile_cuda(KERNEL, "sm_90")
    tree = ptx.syntax.parse_module(text)
    path = toolchain.find_ptxas()
    print(f"kernel: {KERNEL.relative_to(ROOT)} (nvcc defaults, sm_90), {len(text.splitlines())} PTX lines; "
          f"ptxas {toolchain.ptxas_version(path)} at {path}")

    base, cold, warm, alone, started, pairs = [], [], [], [], [], set()
    for _ in range(repeat):
        t = time.perf_counter()
        ptx.load(text, ptxas="none")
        base.append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory(prefix="bench-fma-") as cache:
            os.environ["WARPSIM_CACHE"] = cache
            t = time.perf_counter()
            pairs.add(ptx.load(text).contraction.pairs)
            cold.append(time.perf_counter() - t)
            calls = []
            real = toolchain.run_tool
            toolchain.run_tool = lambda cmd, what: calls.append(cmd) or real(cmd, what)
            t = time.perf_counter()
            pairs.add(ptx.load(text).contraction.pairs)
            warm.append(time.perf_counter() - t)
            toolchain.run_tool = real
            started.append(len(calls))
        with tempfile.TemporaryDirectory(prefix="bench-fma-") as cache:
            os.environ["WARPSIM_CACHE"] = cache
            t = time.perf_counter()
            contraction.decide(text, tree)
            alone.append(time.perf_counter() - t)
    assert len(pairs) == 1
    (b0, b1), (c0, c1), (w0, w1), (a0, a1) = (best_median(x) for x in (base, cold, warm, alone))
    print(f"pairs fused: {len(pairs.pop())}")
    print(f"load none: best {b0:.3f} s, median {b1:.3f} s (parse and decode, no contraction)")
    print(f"load cold: best {c0:.3f} s, median {c1:.3f} s: the contraction adds {c1 - b1:+.3f} s (target < 0.5 s), "
          f"{c1 / b1:.2f}x load none")
    print(f"load warm: best {w0:.3f} s, median {w1:.3f} s: adds {w1 - b1:+.3f} s, {w1 / b1:.2f}x load none, "
          f"tool processes started: {max(started)}")
    print(f"decide alone, cold: best {a0:.3f} s, median {a1:.3f} s (ptxas twice at once, nvdisasm once, resolving; "
          f"load runs it while it parses)")


if __name__ == "__main__":
    main()
