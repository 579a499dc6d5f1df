"""The debugger's step: 100 steps through the seed program, each with the register view rendered as text.

Run from the repository root: ``PYTHONPATH=. python bench/bench_debug.py [--steps 100] [--fmt hex] [--quick]``
(``--quick``: 3 steps and 3 timed executions: a check that it runs, for CI).

Measured in one process, after a warm-up (Numba cache populated, one step and one view rendered):

- the simulator's own time per instruction: the njit executor over the whole stream
  (``execute``), divided by its 372 instructions, best of 20 on fresh machines;
- one debugger step: ``Session.step()`` (the executor on one instruction, breakpoint and
  checkpoint bookkeeping), then ``register_view(session, registers="all").text()``: the warp the instruction ran
  in, 32 lanes x all 116 registers (the most the view shows; by default it shows the registers
  written so far), the written registers highlighted, wrapped; over the first and over
  the last ``--steps`` positions (at the start most registers hold 0, which formats fastest);
- the overhead: debugger step / simulator instruction, without and with the view.

Target (issue 7): under 50 ms per step including the register view.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hostinfo import host_line                                     # noqa: E402

from warpsim.debug.session import Session                          # noqa: E402
from warpsim.debug.views import register_view                      # noqa: E402
from warpsim.machine import Machine                                # noqa: E402
from warpsim.program import load_program                           # noqa: E402
from warpsim.program.execute import execute                        # noqa: E402


def fresh(machine):
    out = Machine(machine.warps, machine.regs_per_thread, machine.smem.size, machine.gmem.size)
    out.gmem[:] = machine.gmem
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--fmt", default="hex", choices=("hex", "f16x2", "bf16x2", "f32"))
    parser.add_argument("--quick", action="store_true", help="3 steps, 3 timed executions: a check that it runs (CI)")
    args = parser.parse_args(argv)
    runs = 3 if args.quick else 20
    if args.quick:
        args.steps = 3
    program = load_program(ROOT / "examples" / "gemm_smem.py")
    session = Session(program)
    n = len(session)
    print(host_line())
    print(f"program: examples/gemm_smem.py, {n} instructions, {session.trace.warps} warps x {session.machine.regs_per_thread} registers")

    initial = fresh(session.machine)
    times = []
    for _ in range(runs + 3):
        m = fresh(initial)
        start = time.perf_counter()
        execute(session.stream, session.encoded, m, arch=session.arch)
        times.append(time.perf_counter() - start)
    per_instr = min(times[3:]) / n

    session.step()                                    # warm-up: one step, one view
    register_view(session, fmt=args.fmt, registers="all").text()

    def show(name, xs):
        return (f"  {name:<34} mean {statistics.mean(xs) * 1e3:8.3f} ms  median {statistics.median(xs) * 1e3:8.3f} ms"
                f"  max {max(xs) * 1e3:8.3f} ms")

    print(f"simulator per instruction (execute over the stream / {n}): {per_instr * 1e6:.2f} us")
    worst = 0.0
    for first in (0, max(0, n - args.steps)):        # the start (registers mostly 0) and the end (all written)
        session.goto(first)
        steps, views, chars = [], [], 0
        for _ in range(min(args.steps, n - first)):
            start = time.perf_counter()
            session.step()
            middle = time.perf_counter()
            text = register_view(session, fmt=args.fmt, registers="all").text()
            end = time.perf_counter()
            steps.append(middle - start)
            views.append(end - middle)
            chars += len(text)
        total = [a + b for a, b in zip(steps, views)]
        worst = max(worst, max(total))
        print(f"{len(steps)} debugger steps (positions {first}-{first + len(steps) - 1}), register view {args.fmt}, "
              f"{chars // len(steps)} characters per view:")
        print(show("Session.step()", steps))
        print(show("register_view(...).text()", views))
        print(show("step + view", total))
        print(f"  overhead vs the simulator's instruction: step {statistics.mean(steps) / per_instr:.0f}x, "
              f"step + view {statistics.mean(total) / per_instr:.0f}x")
    verdict = "under" if worst < 0.050 else "OVER"
    print(f"target: 50 ms per step including the view: {verdict} (worst {worst * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
