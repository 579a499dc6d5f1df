"""The debugger's step: 100 steps through the seed program, each with the register view rendered as text.

Run from the repository root: ``PYTHONPATH=. python bench/bench_debug.py [--steps 100] [--fmt hex] [--quick]``
(``--quick``: 3 steps and 3 timed executions: a check that it runs, for CI).

The seed program is debugged as its lowered kernel on the PTX core (``Session.program``). Measured in one
process, after a warm-up (Numba cache populated, one step and one view rendered):

- the simulator's own time per warp instruction: ``execute_trace`` (the lowered kernel launched on the PTX
  core, as ``run_program`` runs it) divided by the launch's warp instructions, best of 20 on fresh machines;
- one debugger step: ``Session.step()`` (the focus warp to its next source line: one interpreter call per
  warp instruction, breakpoint and checkpoint bookkeeping), then ``register_view(session,
  "%r0..%r115").text()``: the focus warp, 32 lanes x all 116 registers of the program, the ones the last
  instruction wrote highlighted, wrapped; from the start and from ``--steps`` line steps before the end;
- the overhead: debugger step / simulator warp instruction, without and with the view.

Target (issue 7): under 50 ms per step including the register view.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostinfo import host_line                                     # noqa: E402

from warpsim.debug.session import Session                          # noqa: E402
from warpsim.debug.views import register_view                      # noqa: E402
from warpsim.program import load_program                           # noqa: E402
from warpsim.program.run import execute_trace, prepare             # noqa: E402


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
    session = Session.program(program)
    trace = session.traced.trace
    regs = f"%r0..%r{trace.regs_per_thread - 1}"
    lines = [0]                                        # the position before each line step, to the end
    while not session.finished:
        session.step()
        lines.append(session.position)
    n = session.position
    print(host_line())
    print(f"program: examples/gemm_smem.py, {len(trace.stream)} stream instructions lowered to a kernel of {n} warp "
          f"instructions, {trace.warps} warps x {trace.regs_per_thread} registers")

    times = []
    for _ in range(runs + 3):
        _trace, machine, _inputs, _s = prepare(program)
        start = time.perf_counter()
        execute_trace(trace, machine)
        times.append(time.perf_counter() - start)
    per_instr = min(times[3:]) / n

    session.goto(0)
    session.step()                                    # warm-up: one step, one view
    register_view(session, regs, fmt=args.fmt).text()

    def show(name, xs):
        return (f"  {name:<34} mean {statistics.mean(xs) * 1e3:8.3f} ms  median {statistics.median(xs) * 1e3:8.3f} ms"
                f"  max {max(xs) * 1e3:8.3f} ms")

    print(f"simulator per warp instruction (execute_trace / {n}): {per_instr * 1e6:.2f} us")
    worst = 0.0
    for first in (0, lines[max(0, len(lines) - 1 - args.steps)]):   # the start, and the last line steps
        session.goto(first)
        steps, views, chars, executed = [], [], 0, 0
        while len(steps) < args.steps and not session.finished:
            start = time.perf_counter()
            stop = session.step()
            middle = time.perf_counter()
            text = register_view(session, regs, fmt=args.fmt).text()
            end = time.perf_counter()
            steps.append(middle - start)
            views.append(end - middle)
            chars += len(text)
            executed += stop.executed
        total = [a + b for a, b in zip(steps, views)]
        worst = max(worst, max(total))
        print(f"{len(steps)} debugger steps (positions {first}-{session.position}, {executed / len(steps):.1f} warp "
              f"instructions each), register view {args.fmt}, {chars // len(steps)} characters per view:")
        print(show("Session.step()", steps))
        print(show("register_view(...).text()", views))
        print(show("step + view", total))
        print(f"  overhead vs the simulator's warp instruction: step {statistics.mean(steps) / per_instr:.0f}x, "
              f"step + view {statistics.mean(total) / per_instr:.0f}x")
    verdict = "under" if worst < 0.050 else "OVER"
    print(f"target: 50 ms per step including the view: {verdict} (worst {worst * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
