"""Hopper's tensor-core pipeline in the simulator: one GEMM CTA with wgmma, beside the same tile with mma.sync.

Run from the repository root: ``PYTHONPATH=. python bench/bench_hopper.py [--repeat N] [--quick]`` (needs Triton;
the TMA GEMM also nvcc and the CuTe headers).

Measured after warm-up (the kernel compiled, parsed and decoded, Numba's cache warm), best and median of N launches
of one CTA on one core:

- Triton's matmul of a 128 x 128 x 64 tile, 8 warps, compiled for sm_90: two warpgroups, each four
  ``wgmma.m64n128k16`` from swizzled shared memory (issue 28's target: < 50 ms);
- the baseline, in the same run: the same kernel and tile compiled for sm_80, where Triton writes ``mma.sync``
  (``m16n8k16``), and the ratio of the two;
- ``examples/hopper/tma_gemm.cu``'s 64 x 64 CTA over K = 256 (TMA loads, the mbarrier ring, wgmma).

``--quick`` (3 repeats) is what CI runs through ``tests/test_bench.py``: the benchmark runs and the wgmma tile
equals the reference; never a time.
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests" / "pyfronts")]
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

from hostinfo import host_line                                     # noqa: E402
from timing import timed                                           # noqa: E402

TARGET_MS = 50.0




def triton_tile(arch, a, b):
    """``(launch, warp instructions, C)``: one CTA of Triton's matmul for ``arch``, ready to launch again."""
    import triton_kernels as tk
    from warpsim.frontends.triton import launch_jit
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), np.float16)
    captured = {}

    def keep(module, entry, launch, names):
        captured.update(module=module, entry=entry, launch=launch)
        result = module.launch(entry, **launch)
        return result, result
    result = launch_jit(tk.matmul_kernel, (1,), (a, b, c, m, n, k, k, 1, n, 1, n, 1),
                        {"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8, "num_warps": 8,
                         "num_stages": 2}, arch=arch, quiet=True, launcher=keep)
    module, entry, launch = captured["module"], captured["entry"], captured["launch"]
    ops = result.stats["by_opcode"]
    return (lambda: module.launch(entry, **launch)), result.stats["warp_instructions"], ops, c   # c: written back


def tma_tile(repeat):
    from warpsim.frontends.kernel import open_kernel
    from warpsim.isa.tma import TensorMap
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None:
        return None
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (64, 256)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 256)).astype(np.float16)
    kernel = open_kernel(ROOT / "examples/hopper/tma_gemm.cu", "gemm_tn", arch="sm_90")
    args = {"tma_a": TensorMap(a, (64, 64), "128B"), "tma_b": TensorMap(b, (64, 64), "128B"),
            "c": np.zeros((64, 64), np.float32), "M": 64, "N": 64, "K": 256}
    run = lambda: kernel.launch(grid=(1, 1, 1), block=(256, 1, 1), smem=50176, args=args)   # noqa: E731
    return timed(run, repeat), run().stats["warp_instructions"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench_hopper.py")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3 repeats (CI: runs, never timed)")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    from warpsim.isa.wgmma import wgmma
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((128, 64)) / 4).astype(np.float16)
    b = (rng.standard_normal((64, 128)) / 4).astype(np.float16)
    print(host_line())
    rows = {}
    for arch in ("sm_90", "sm_80"):
        run, count, ops, out = triton_tile(arch, a, b)
        rows[arch] = (timed(run, repeat), count, ops, out)
    (best, median), count, ops, out = rows["sm_90"]
    assert ops.get("wgmma", 0) > 0, ops
    want = np.zeros((128, 128), np.uint16)
    for m0 in range(0, 128, 64):
        acc = None
        for k0 in range(0, 64, 16):
            acc = wgmma(a[m0:m0 + 64, k0:k0 + 16].view(np.uint16), b[k0:k0 + 16].view(np.uint16), acc)
        want[m0:m0 + 64] = acc.view(np.float32).astype(np.float16).view(np.uint16)
    assert np.array_equal(out.view(np.uint16), want), "the wgmma tile differs from the reference"
    (base, base_median), base_count, base_ops, _ = rows["sm_80"]
    print(f"Triton matmul, one CTA of 128 x 128 x 64, 8 warps, {repeat} launches after 2 warm-up:")
    print(f"  sm_90 (wgmma: {ops['wgmma']} warp instructions of {count}): {best * 1e3:8.3f} ms "
          f"(median {median * 1e3:8.3f})")
    print(f"  sm_80 (mma.sync: {base_ops.get('mma', 0)} of {base_count}):  {base * 1e3:8.3f} ms "
          f"(median {base_median * 1e3:8.3f})")
    print(f"ratio wgmma tile / mma.sync tile (best): {best / base:.2f}x")
    print(f"target: < {TARGET_MS:.0f} ms warm for the wgmma tile: {'under' if best * 1e3 < TARGET_MS else 'OVER'}")
    tma = tma_tile(repeat)
    if tma is None:
        print("TMA GEMM: skipped (nvcc not found)")
    else:
        (tbest, tmedian), tcount = tma
        print(f"TMA + mbarrier + wgmma GEMM (examples/hopper/tma_gemm.cu), one 64 x 64 CTA, K = 256: "
              f"{tbest * 1e3:8.3f} ms (median {tmedian * 1e3:8.3f}), {tcount} warp instructions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
