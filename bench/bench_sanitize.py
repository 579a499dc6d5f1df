"""What the sanitizer costs: a plain launch against the same launch under ``warpsim sanitize`` (every tool), in
the same run, on kernels that are correct (so the sanitized run reports nothing and does all its checking).

Run from the repository root: ``PYTHONPATH=. python bench/bench_sanitize.py [--repeat N] [--quick]`` (needs nvcc;
compiles are cached). The bound (issue 30): the sanitized run costs at most 3x the plain one.

Kernels:

- ``examples/cute_cpp/gemm_smem.cu`` (``gemm_smem_f16_qk_swizzle``, one CTA of 128 threads): CuTe C++ with
  ``cp.async``, ``ldmatrix`` and ``mma.sync``;
- ``tests/sanitize/kernels/matmul_tiled.cu``: the shared-memory tiled SGEMM of the CUDA guide, 64x64, 16 CTAs of 16x16;
- ``tests/sanitize/kernels/reduce_missing_barrier.cu -DFIXED``: a shared-memory tree reduction, 8 CTAs of 128.

Each figure is the best of N after two warm-up runs (``--quick``: 3, what ``tests/test_bench.py`` runs).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hostinfo import host_line                                      # noqa: E402
from timing import timed                                            # noqa: E402
from warpsim.frontends.kernel import open_kernel                   # noqa: E402
from warpsim.sanitize import sanitize_launch                       # noqa: E402

KERNELS = ROOT / "tests/sanitize/kernels"
BOUND = 3.0


def best(fn, repeat):
    return timed(fn, repeat)[0]


def cases():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((64, 64)).astype(np.float16)
    k = rng.standard_normal((64, 64)).astype(np.float16)
    yield ("gemm_smem (CuTe C++, cp.async + ldmatrix + mma)", ROOT / "examples/cute_cpp/gemm_smem.cu",
           "gemm_smem_f16_qk_swizzle", (), (1, 1, 1), (128, 1, 1), {"q": q, "k": k, "s": np.zeros((64, 64), np.float32)})
    a = rng.standard_normal((64, 64)).astype(np.float32)
    yield ("matmul_tiled (shared-memory SGEMM, 16 CTAs)", KERNELS / "matmul_tiled.cu", "matmul_tiled", (), (4, 4, 1),
           (16, 16, 1), {"a": a, "b": a.T.copy(), "c": np.zeros((64, 64), np.float32), "n": 64})
    yield ("reduce (shared-memory tree reduction, 8 CTAs)", KERNELS / "reduce_missing_barrier.cu",
           "reduce_missing_barrier", ("-DFIXED",), (8, 1, 1), (128, 1, 1),
           {"in": rng.standard_normal(1024).astype(np.float32), "out": np.zeros(8, np.float32)})


def measure(repeat, arch="sm_80"):
    rows = []
    for title, path, name, flags, grid, block, args in cases():
        kern = open_kernel(path, name, arch=arch, nvcc_flags=flags)
        core = kern.core_args(args)
        smem = 512 if name == "reduce_missing_barrier" else 0
        model = arch.replace("_", "")
        plain = best(lambda: kern.module.launch(kern.name, grid, block, core, smem=smem, arch=model, quiet=True), repeat)
        report = sanitize_launch(kern.module, kern.name, grid, block, core, smem, model)
        assert not report.findings, report.text()
        sanitized = best(lambda: sanitize_launch(kern.module, kern.name, grid, block, core, smem, model), repeat)
        rows.append((title, report.stats["warp_instructions"], plain, sanitized))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3 repeats (CI)")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    print(host_line())
    print(f"sanitizer cost: plain launch vs warpsim sanitize --tool all, best of {repeat}, sm_80")
    worst = 0.0
    for title, steps, plain, sanitized in measure(repeat):
        ratio = sanitized / plain
        worst = max(worst, ratio)
        print(f"  {title}: {steps} warp instructions; plain {plain * 1e3:.2f} ms, sanitized {sanitized * 1e3:.2f} ms, "
              f"ratio {ratio:.2f}x")
    print(f"worst ratio: {worst:.2f}x (bound {BOUND:.0f}x: {'within' if worst <= BOUND else 'OVER'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
