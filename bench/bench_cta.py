"""One seed CTA (4 warps, 64x64x64, examples/gemm_smem.py): tracing, execution, lower bound, cold start.

Run from the repository root: ``PYTHONPATH=. python bench/bench_cta.py [--repeat N] [--quick]``
(``--quick``: one timing of each after one warm-up, one cold start: a check that it runs, for CI).

Measured after warm-up (Numba cache populated, CuTe's caches warm), best and median of N:

- trace: the Python tracing of the 128 threads (``trace_program``: the kernel once per warp with
  lane vectors, lowering, register allocation, schedule) and the encoding of the stream;
- execute: the njit stream executor over the whole stream (on a fresh copy of the loaded machine): the
  debugger's engine, and the baseline of
- PTX core: ``execute_trace``, what ``run_program`` runs: the stream lowered to PTX (once per trace) and
  launched on the PTX interpreter, state copied back; ``lower + load``: lowering the stream to PTX text
  and parsing and decoding it (paid once per trace); the ratio PTX core / execute is the target (<= 1.2);
- lower bound: the same instructions issued straight through the batched ISA API: all of the
  CTA's mma in one ``mma_m16n8k16`` call (one thread, and parallel), all ldmatrix in one
  ``ldmatrix`` call, and the ld/st bytes moved by one numpy gather/scatter each;
- run_program: the whole thing from an uncached program (trace + encode + machine + inputs +
  execute + read back);
- a single step: ``execute(..., start=i, stop=i + 1)`` from Python, averaged over the stream;
- cold start: wall time of ``python -m warpsim run examples/gemm_smem.py`` in a new process.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WARMUP = 3   # runs before the timed ones (--quick: 1)

from hostinfo import host_line                                     # noqa: E402

from warpsim.isa import ldmatrix, mma_m16n8k16                     # noqa: E402
from warpsim.isa.inputs import mma_inputs                          # noqa: E402
from warpsim.machine import Machine                                # noqa: E402
from warpsim.program import load_program                           # noqa: E402
from warpsim.program.execute import execute                        # noqa: E402
from warpsim.program.instr import Op                               # noqa: E402
from warpsim.program.run import execute_trace, prepare, run_program  # noqa: E402
from warpsim.program.trace import trace_program                    # noqa: E402


def timed(fn, repeat, setup=None):
    """(best, median) seconds of ``fn(setup())`` over ``repeat`` runs after ``WARMUP`` warm-up runs."""
    times = []
    for k in range(repeat + WARMUP):
        arg = setup() if setup else None
        start = time.perf_counter()
        fn(arg)
        if k >= WARMUP:
            times.append(time.perf_counter() - start)
    times.sort()
    return times[0], times[len(times) // 2]


def ms(pair):
    return f"{pair[0] * 1e3:7.3f} ms (median {pair[1] * 1e3:7.3f})"


def copy_machine(m):
    out = Machine(m.warps, m.regs_per_thread, m.smem.size, m.gmem.size)
    out.regs[:] = m.regs
    out.smem[:] = m.smem
    out.gmem[:] = m.gmem
    return out


def trace_breakdown(program, params, repeat):
    """Trace time with the program's operations replaced: by nothing (the CuTe partitioning in the
    kernel), and by CuTe's call tables only (``copy_calls`` / ``gemm_calls``, no lowering)."""
    from warpsim.cute.calls import copy_calls, gemm_calls
    from warpsim.cute.tiled_copy import TiledCopy, make_tiled_copy
    names = ("copy", "gemm", "clear", "syncthreads")
    module = program.fn.__globals__
    saved = {n: module[n] for n in names}

    def calls_copy(tc, src, dst):
        copy_calls(tc if isinstance(tc, TiledCopy) else make_tiled_copy(tc), src, dst)

    try:
        module.update(copy=lambda *a: None, gemm=lambda *a: None, clear=lambda *a: None, syncthreads=lambda: None)
        nothing = timed(lambda _: trace_program(program, params), repeat)
        module.update(copy=calls_copy, gemm=lambda m, a, b, c: gemm_calls(m, a, b, c))
        tables = timed(lambda _: trace_program(program, params), repeat)
    finally:
        module.update(saved)
    return nothing, tables


def main(argv=None):
    global WARMUP
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--params", default="dtype=f16,product=qk")
    parser.add_argument("--quick", action="store_true", help="one timing of each: a check that it runs (CI)")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, WARMUP = 1, 1
    params = dict(p.split("=") for p in args.params.split(","))
    program = load_program(ROOT / "examples" / "gemm_smem.py")
    params = program.resolve_params(params)
    print(host_line())
    print(f"program: examples/gemm_smem.py {params}")

    trace, machine, _inputs, _t = prepare(program, params, seed=0)
    stream = trace.stream
    kinds = {}
    for i in stream:
        kinds[i.ptx] = kinds.get(i.ptx, 0) + 1
    print(f"stream: {len(stream)} warp instructions: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))

    t_trace = timed(lambda _: trace_program(program, params), args.repeat)
    t_partition, t_tables = trace_breakdown(program, params, args.repeat)
    t_encode = timed(lambda t: t.encoded, args.repeat, setup=lambda: trace_program(program, params))
    t_exec = timed(lambda m: execute(stream, trace.encoded, m), args.repeat, setup=lambda: copy_machine(machine))
    execute_trace(trace, copy_machine(machine))                          # lowered and loaded once per trace
    t_core = timed(lambda m: execute_trace(trace, m), args.repeat, setup=lambda: copy_machine(machine))

    def lower_load(t):
        return t.kernel
    t_lower = timed(lower_load, args.repeat, setup=lambda: trace_program(program, params))

    # lower bound: the same instructions through the batched ISA API
    mmas = [i for i in stream if i.op == Op.MMA]
    a, b, c = mma_inputs("ordinary", len(mmas), rng=np.random.default_rng(0))
    c[:] = 0
    lb_mma1 = timed(lambda _: mma_m16n8k16(a, b, c, parallel=False), args.repeat)
    lb_mmap = timed(lambda _: mma_m16n8k16(a, b, c), args.repeat)
    ldsm = [i for i in stream if i.op == Op.LDMATRIX]
    smem = np.random.default_rng(1).integers(0, 256, trace.smem_bytes, dtype=np.uint8)
    by_variant = {}
    for i in ldsm:
        by_variant.setdefault((i.num, i.trans), []).append(i.addr)
    lb_ldsm = timed(lambda _: [ldmatrix(smem, np.array(v), num=n, trans=t) for (n, t), v in by_variant.items()],
                    args.repeat)
    mem = [i for i in stream if i.op in (Op.LD, Op.ST)]
    gather = np.concatenate([(i.addr[:, None] + np.arange(i.bits // 8)).ravel() for i in mem])
    flat = np.zeros(max(machine.gmem.size, machine.smem.size), np.uint8)

    def memory(_):
        moved = flat[gather]
        flat[gather] = moved
    lb_mem = timed(memory, args.repeat)
    lower1 = lb_mma1[0] + lb_ldsm[0] + lb_mem[0]
    lowerp = lb_mmap[0] + lb_ldsm[0] + lb_mem[0]

    def whole(_):
        program._traces.clear()
        run_program(program, params, seed=0)
    t_run = timed(whole, args.repeat)

    step_machine = copy_machine(machine)
    start = time.perf_counter()
    for k in range(len(stream)):
        execute(stream, trace.encoded, step_machine, start=k, stop=k + 1)
    step = (time.perf_counter() - start) / len(stream)

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "warpsim", "run", "examples/gemm_smem.py"]
    subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, check=True)       # populates the Numba cache
    colds = []
    for _ in range(1 if args.quick else 3):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, check=True)
        colds.append(time.perf_counter() - t0)

    print(f"trace (128 threads, 4 warp passes):     {ms(t_trace)}")
    print(f"  of which the kernel's CuTe partitioning (operations replaced by nothing): {ms(t_partition)}")
    print(f"  of which + CuTe's copy_calls/gemm_calls (no lowering):                  {ms(t_tables)}")
    print(f"encode:                                 {ms(t_encode)}")
    print(f"execute ({len(stream)} instructions):          {ms(t_exec)}")
    print(f"PTX core (execute_trace):               {ms(t_core)}")
    print(f"lower + load (once per trace):          {ms(t_lower)}")
    print(f"PTX core / execute = {t_core[0] / t_exec[0]:.2f}x (best), {t_core[1] / t_exec[1]:.2f}x (median); "
          f"target <= 1.2x")
    print(f"trace + encode + execute (best):        {(t_trace[0] + t_encode[0] + t_exec[0]) * 1e3:7.3f} ms")
    print(f"run_program, uncached trace:            {ms(t_run)}")
    print(f"lower bound, {len(mmas)} mma batched, 1 thread:  {ms(lb_mma1)}")
    print(f"lower bound, {len(mmas)} mma batched, parallel:  {ms(lb_mmap)}")
    print(f"lower bound, {len(ldsm)} ldmatrix batched:        {ms(lb_ldsm)}")
    print(f"lower bound, {len(mem)} ld/st as numpy gather:   {ms(lb_mem)}")
    print(f"lower bound total: {lower1 * 1e3:.3f} ms (1 thread), {lowerp * 1e3:.3f} ms (parallel mma); "
          f"execute / lower bound = {t_exec[0] / lower1:.2f}x (1 thread), {t_exec[0] / lowerp:.2f}x (parallel)")
    print(f"single step from Python (execute(start=i, stop=i+1)), mean over the stream: {step * 1e6:.1f} us")
    print(f"cold start `python -m warpsim run examples/gemm_smem.py`: best {min(colds):.2f} s "
          f"(runs: {', '.join(f'{c:.2f}' for c in colds)})")


if __name__ == "__main__":
    main()
