"""Run the front ends' test kernels on a real GPU and on warpsim, and compare the bits (not run in CI: needs a CUDA
GPU, CuPy, torch with CUDA, Triton and numba-cuda).

``python tests/pyfronts/gpu_check.py [--arch sm_80]`` from the repository root: each Triton kernel of
triton_kernels.py runs through its host wrapper on CUDA torch tensors and, unchanged, inside
``warpsim.triton.simulate()`` on numpy copies; each Numba kernel of numba_kernels.py on device arrays and through
``warpsim.numba``; each CuPy source of cupy_kernels.py through ``cupy.RawKernel`` and ``warpsim.cupy.RawKernel``.
One line per kernel: ``same bits`` or the first differing element (index, GPU bits, warpsim bits). Exit status 1
when any differs. The float atomic sum runs on integer-valued floats (every partial sum exact, so the GPU's order
cannot change its bits); other order-dependent results are left out.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2])]


def compare(name, gpu, sim):
    gpu, sim = np.ascontiguousarray(gpu), np.ascontiguousarray(sim)
    a, b = gpu.reshape(-1).view(np.uint8), sim.reshape(-1).view(np.uint8)
    bad = np.flatnonzero(a != b)
    if bad.size == 0:
        print(f"{name}: same bits")
        return True
    i = bad[0] // gpu.itemsize
    print(f"{name}: {bad.size} bytes differ; first element {i}: GPU {gpu.reshape(-1)[i]!r}, warpsim "
          f"{sim.reshape(-1)[i]!r}")
    return False


def triton_checks(arch):
    import torch
    import triton_kernels as tk
    import warpsim.triton as wt
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 100)).astype(np.float32)
    a, b = (rng.standard_normal((64, 80)) / 4).astype(np.float16), (rng.standard_normal((80, 48)) / 4).astype(np.float16)
    cases = {
        "triton add": (tk.run_add, [x[0], x[1], np.zeros(100, np.float32)], 2, {}),
        "triton softmax": (tk.run_softmax, [x, np.zeros_like(x)], 1, {}),
        "triton matmul": (tk.run_matmul, [a, b, np.zeros((64, 48), np.float16)], 2, {}),
        "triton transpose": (tk.run_transpose, [x, np.zeros((100, 37), np.float32)], 1, {}),
        "triton float atomic sum": (tk.run_sum_atomic, [rng.integers(-1000, 1000, 3000).astype(np.float32),
                                                        np.zeros(1, np.float32)], 1, {}),
    }
    ok = True
    for name, (run, arrays, out, kw) in cases.items():
        dev = [torch.from_numpy(v.copy()).cuda() for v in arrays]
        run(*dev, **kw)
        torch.cuda.synchronize()
        host = [v.copy() for v in arrays]
        with wt.simulate(arch=arch):
            run(*host, **kw)
        ok &= compare(name, dev[out].cpu().numpy(), host[out])
    return ok


def numba_checks(arch):
    from numba import cuda
    import numba_kernels as nk
    import warpsim.numba as wn
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    s = rng.standard_normal((40, 50)).astype(np.float32)
    cases = {"numba saxpy": (nk.saxpy, (8, 128), [np.float32(0.75), x, y, np.zeros_like(x)], 3),
             "numba block_sum": (nk.block_sum, (4, 256), [x, np.zeros(4, np.float32)], 1),
             "numba softmax_rows": (nk.softmax_rows, (1, 64), [s, np.zeros_like(s)], 1),
             "numba float atomic histogram": (nk.weighted_histogram, (4, 256),
                                              [rng.integers(0, 10_000, 1000).astype(np.int32),
                                               rng.integers(-50, 50, 1000).astype(np.float32),
                                               np.zeros(10, np.float32)], 2)}
    ok = True
    for name, (kernel, (g, b), args, out) in cases.items():
        dev = [cuda.to_device(v) if isinstance(v, np.ndarray) else v for v in args]
        kernel[g, b](*dev)
        host = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        wn.launch(kernel, g, b, *host, arch=arch, quiet=True)
        ok &= compare(name, dev[out].copy_to_host(), host[out])
    return ok


def cupy_checks(arch):
    import cupy
    import cupy_kernels as ck
    from warpsim.cupy import RawKernel
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    d = rng.standard_normal(300)
    cases = {"cupy vector_add": (ck.ADD, "vector_add", (4,), (256,), [x, x[::-1].copy(), np.zeros_like(x), np.int32(1000)], 2),
             "cupy block_sum": (ck.BLOCK_SUM, "block_sum", (4,), (256,), [x, np.zeros(4, np.float32), np.int32(1000)], 1),
             "cupy poly": (ck.POLY, "poly", (2,), (256,), [d, np.zeros_like(d), 1.5, -0.25, 300], 1)}
    ok = True
    for name, (code, kname, g, b, args, out) in cases.items():
        dev = [cupy.asarray(v) if isinstance(v, np.ndarray) else v for v in args]
        cupy.RawKernel(code, kname)(g, b, tuple(dev))
        host = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        k = RawKernel(code, kname, arch=arch)
        k.quiet = True
        k(g, b, tuple(host))
        ok &= compare(name, cupy.asnumpy(dev[out]), host[out])
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_80", help="the model to compare with (the GPU's: sm_80 or sm_90)")
    args = parser.parse_args(argv)
    ok = True
    for check in (triton_checks, numba_checks, cupy_checks):
        ok &= check(args.arch)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
