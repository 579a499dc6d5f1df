"""Numba's compile on a cold cache: one specialisation per argument type (warpsim.isa.specialize) against Numba's own
typing, which compiles a callee once per constant it is called with.

Run from the repository root: ``PYTHONPATH=. python bench/bench_compile.py [--quick]``.

Each side runs in a new process with an empty ``NUMBA_CACHE_DIR``, so everything it calls is compiled: the whole
workload is a first launch of a CTA (``warpsim.run_program`` of a one-warp program, which compiles the PTX
interpreter and every instruction family, some 265 functions: minutes per side), or with ``--quick`` the f32
``fma``/``mul``/``add`` models called from Python (seconds). Printed per side: wall seconds and the number of
specialisations compiled; then the ratio of warpsim's typing to the baseline (``WARPSIM_NUMBA_LITERALS=1``, Numba's
own) measured in the same run. Target: a ratio of at most 0.8 for the first launch.

``--cores``: the first launch compiled in one process (``WARPSIM_JOBS=1``) against the default, where helper processes
compile the interpreter's families on the other CPUs first (:mod:`warpsim.ptx.precompile`), both with warpsim's typing,
and the ratio of their wall times (issue 29: a first run in seconds; on two CPUs at best 0.5).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hostinfo import host_line                                      # noqa: E402

WORKLOAD = {
    "launch": """
from warpsim import Program, run_program
def nothing(tid, **_):
    pass
run_program(Program(nothing, threads=32), arch="sm90")
""",
    "quick": """
from warpsim.isa import fparith
fparith.f32_fma(0x3F800000, 0x40000000, 0x3F800000, 0, False, False)
fparith.f32_mul(0x3F800000, 0x40000000, 0, True, False)
fparith.f32_add(0x3F800000, 0x40000000, 0, False, False)
""",
}

MEASURE = """
import gc, json, sys, time
t = time.perf_counter()
exec(sys.argv[1])
seconds = time.perf_counter() - t
from numba.core.registry import CPUDispatcher
ours = [o for o in gc.get_objects() if isinstance(o, CPUDispatcher) and o.py_func.__module__.startswith("warpsim.")]
print(json.dumps({"seconds": seconds, "functions": sum(1 for d in ours if d.signatures),
                  "specialisations": sum(len(d.signatures) for d in ours)}))
"""


def measure(code, literals, jobs=None):
    with tempfile.TemporaryDirectory(prefix="warpsim-bench-compile-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        if literals:
            env["WARPSIM_NUMBA_LITERALS"] = "1"
        else:
            env.pop("WARPSIM_NUMBA_LITERALS", None)
        if jobs is None:
            env.pop("WARPSIM_JOBS", None)
        else:
            env["WARPSIM_JOBS"] = str(jobs)
        out = subprocess.run([sys.executable, "-c", MEASURE, code], env=env, capture_output=True, text=True,
                             check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the f32 models alone (seconds)")
    parser.add_argument("--cores", action="store_true",
                        help="the first launch on one process against every CPU (warpsim.ptx.precompile)")
    args = parser.parse_args()
    print(host_line())
    if args.cores:
        from warpsim.ptx.precompile import jobs_wanted
        one = measure(WORKLOAD["launch"], literals=False, jobs=1)
        every = measure(WORKLOAD["launch"], literals=False)
        print(f"  one process (WARPSIM_JOBS=1): {one['seconds']:.1f} s")
        print(f"  every CPU ({jobs_wanted()} processes): {every['seconds']:.1f} s")
        print(f"  ratio every CPU / one process: {every['seconds'] / one['seconds']:.2f}x")
        return
    code = WORKLOAD["quick" if args.quick else "launch"]
    base = measure(code, literals=True)
    ours = measure(code, literals=False)
    for name, r in (("numba's typing (baseline)", base), ("warpsim's typing", ours)):
        print(f"  {name}: {r['seconds']:.1f} s, {r['specialisations']} specialisations of {r['functions']} functions")
    print(f"  ratio warpsim / baseline: {ours['seconds'] / base['seconds']:.2f}x time, "
          f"{ours['specialisations'] / base['specialisations']:.2f}x specialisations")


if __name__ == "__main__":
    main()
