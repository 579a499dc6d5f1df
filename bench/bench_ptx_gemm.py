"""The seed CTA from real CuTe C++: ``examples/cute_cpp/gemm_smem.cu`` run from its PTX, beside the
Python-traced stream of ``examples/gemm_smem.py`` on the same inputs.

Run from the repository root: ``PYTHONPATH=. python bench/bench_ptx_gemm.py [--repeat N] [--quick]``
(needs nvcc; the PTX is compiled once and cached).

Measured after warm-up, best and median of N, for the f16 qk swizzled kernel on sm_90:

- parse: ``warpsim.ptx.load`` of the module's PTX text (8 kernels, ~600 KB) and the decode of one kernel;
- launch: ``kernel.launch(...)`` of one CTA (machine, arguments, the interpreter, buffers read back):
  the figure the issue bounds by 5 ms;
- traced execute: the Python-traced program's njit executor over its stream (the baseline, measured
  in the same run), and the ratio launch / traced execute;
- warp instructions: executed by the PTX kernel, and per second of launch.

``--quick`` (3 repeats) is what CI runs through ``tests/ptx_front/test_bench.py``: it checks that the
benchmark runs and the two front ends agree, never a time.
"""

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from timing import timed                                           # noqa: E402
from warpsim import ptx                                            # noqa: E402
from warpsim.frontends.kernel import open_kernel                   # noqa: E402
from warpsim.frontends.source import compile_source                # noqa: E402
from warpsim.program import load_program                           # noqa: E402
from warpsim.program.execute import execute                        # noqa: E402
from warpsim.program.run import prepare, run_program               # noqa: E402

SOURCE = ROOT / "examples/cute_cpp/gemm_smem.cu"
KERNEL = "gemm_smem_f16_qk_swizzle"
PARAMS = {"dtype": "f16", "product": "qk", "swizzle": "yes"}




def ms(pair):
    return f"{pair[0] * 1e3:8.3f} ms (median {pair[1] * 1e3:8.3f})"


def measure(repeat, arch="sm_90"):
    """The figures as a dict (seconds as (best, median) pairs); raises AssertionError if the two disagree."""
    program = load_program(ROOT / "examples/gemm_smem.py")
    traced = run_program(program, PARAMS, seed=0, arch=arch.replace("_", ""))
    k = open_kernel(SOURCE, KERNEL, arch=arch)
    args = {"q": traced.inputs["q"], "k": traced.inputs["k"], "s": np.zeros((64, 64), np.float32)}
    result = k.launch(grid=1, block=128, args=args)
    got = k.buffers(result)["s"].view(np.uint32).reshape(64, 64)
    assert np.array_equal(got, traced.outputs["s"].reshape(64, 64)), "the PTX and the traced program disagree"

    text = compile_source(SOURCE, arch).ptx
    parse = timed(lambda: ptx.load(text, filename="gemm_smem.ptx").decoded(KERNEL), max(1, repeat // 4))
    launch = timed(lambda: k.launch(grid=1, block=128, args=args), repeat)

    trace, machine, _loaded, _ = prepare(program, PARAMS, None, seed=0)
    traced_execute = timed(lambda: execute(trace.stream, trace.encoded, machine, arch=arch.replace("_", "")), repeat)
    instructions = int(result.stats.get("warp_instructions", 0))
    return {"parse": parse, "launch": launch, "traced_execute": traced_execute, "instructions": instructions,
            "traced_instructions": len(trace.stream)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="3 repeats (CI)")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    f = measure(repeat)
    print(f"gemm_smem CTA from CuTe C++ PTX ({KERNEL}, sm_90); {platform.processor() or platform.machine()}, "
          f"{repeat} repeats")
    print(f"  parse + decode           {ms(f['parse'])}")
    print(f"  launch (one CTA)         {ms(f['launch'])}   bound: 5 ms")
    print(f"  traced execute           {ms(f['traced_execute'])}   (examples/gemm_smem.py, same inputs)")
    print(f"  launch / traced execute  {f['launch'][0] / f['traced_execute'][0]:8.1f} x")
    print(f"  warp instructions        {f['instructions']:8d} PTX ({f['instructions'] / f['launch'][0] / 1e6:.2f} M/s), "
          f"{f['traced_instructions']} traced stream entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
