"""The one debugger's step over two front ends: the CuTe C++ gemm_smem kernel and the Python program
examples/gemm_smem.py (as its lowered kernel), each step with the register view as text, in one run.

Run from the repository root: ``PYTHONPATH=. python bench/bench_ptx_debug.py [--steps 100] [--quick]``
(``--quick``: 3 steps: a check that it runs, for CI). Needs nvcc (the .cu is compiled once, then cached).

Measured in one process, after a warm-up (Numba cache populated, one step and one view rendered):

- one step of the .cu kernel: ``Session.stepi()`` (one warp instruction of the schedule: the interpreter on
  one instruction, plus the schedule, breakpoint and checkpoint bookkeeping), then
  ``register_view(session).text()``: 32 lanes x the registers of the last and the next instruction, typed;
  and the same with ``%f0..%f63`` (64 accumulator registers x 32 lanes);
- the Python program's ``Session.stepi()`` + ``register_view(session, "%r0..%r115").text()`` (all its registers);
- the ratio .cu step + view / Python step + view (means).

Target (issue 13): under 50 ms per step including the register view.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hostinfo import host_line                                     # noqa: E402

from warpsim.debug.session import Session                          # noqa: E402
from warpsim.debug.views import register_view                      # noqa: E402
from warpsim.frontends.kernel import open_kernel                   # noqa: E402
from warpsim.program import load_program                           # noqa: E402


def timed(steps, step, view):
    out = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        middle = time.perf_counter()
        view()
        out.append((middle - start, time.perf_counter() - middle))
    return out


def show(name, xs):
    return (f"  {name:<34} mean {statistics.mean(xs) * 1e3:8.3f} ms  median {statistics.median(xs) * 1e3:8.3f} ms"
            f"  max {max(xs) * 1e3:8.3f} ms")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="3 steps: a check that it runs (CI)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps = 3
    print(host_line())
    kernel = open_kernel(ROOT / "examples" / "cute_cpp" / "gemm_smem.cu", "gemm_smem_f16_qk_swizzle", arch="sm_80")
    rng = np.random.default_rng(0)
    q, k = (rng.uniform(-1, 1, (64, 64)).astype(np.float16) for _ in range(2))
    session = Session(kernel.module, kernel.name, block=128, source=kernel.source,
                      args=kernel.core_args({"q": q, "k": k, "s": np.zeros((64, 64), np.float32)}))
    python = Session.program(load_program(ROOT / "examples" / "gemm_smem.py"))
    print(f"kernel: examples/cute_cpp/gemm_smem.cu gemm_smem_f16_qk_swizzle, {session.decoded.code.shape[0]} "
          f"instructions, {session.warps} warps x {len(session.regs_by_name)} registers")
    session.stepi()                                           # warm-up: one step and one view each
    register_view(session).text()
    python.stepi()
    register_view(python, "%r0..%r115").text()

    ptx = timed(args.steps, session.stepi, lambda: register_view(session).text())
    wide = timed(args.steps, session.stepi, lambda: register_view(session, ["%f0..%f63"]).text())
    py = timed(args.steps, python.stepi, lambda: register_view(python, "%r0..%r115").text())
    results = {}
    for name, rows, step_name, view_name in (
            ("PTX debugger", ptx, "Session.stepi()", "register_view(session).text()"),
            ("PTX debugger, %f0..%f63", wide, "Session.stepi()", "register_view(session, %f0..%f63)"),
            ("Python-program debugger", py, "Session.stepi()", "register_view(%r0..%r115).text()")):
        steps, views = [a for a, _ in rows], [b for _, b in rows]
        total = [a + b for a, b in rows]
        results[name] = total
        print(f"{name}: {len(rows)} steps")
        print(show(step_name, steps))
        print(show(view_name, views))
        print(show("step + view", total))
    base = statistics.mean(results["Python-program debugger"])
    for name, label in (("PTX debugger", "default view"), ("PTX debugger, %f0..%f63", "%f0..%f63 view")):
        print(f"ratio PTX step + {label} / Python step + view (means): {statistics.mean(results[name]) / base:.2f}x")
    worst = max(max(results["PTX debugger"]), max(results["PTX debugger, %f0..%f63"]))
    print(f"target: 50 ms per step including the view: {'under' if worst < 0.050 else 'OVER'} "
          f"(worst {worst * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
