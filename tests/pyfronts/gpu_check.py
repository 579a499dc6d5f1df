"""Run the front ends' test kernels on a real GPU and on warpsim, and compare the bits (not run in CI: needs a CUDA
GPU, CuPy, torch with CUDA, Triton and numba-cuda).

``python tests/pyfronts/gpu_check.py [--arch sm_90] [--report FILE]`` from the repository root. Every kernel of
triton_kernels.py (12 cases), numba_kernels.py (8) and cupy_kernels.py (4) runs twice, unchanged: on the GPU (Triton's
host wrapper on CUDA torch tensors, ``kernel[grid, block]`` on Numba device arrays, ``cupy.RawKernel``) and on
warpsim (the same wrapper inside ``warpsim.triton.simulate()`` on numpy copies, ``warpsim.numba.launch``,
``warpsim.cupy.RawKernel``; a C++ kernel through ``RawModule`` with ``name_expressions``, as CuPy wants it).
Every output array is compared byte for byte, and printf text as the multiset of its
lines (the GPU's lines are read from file descriptor 1). One line per kernel: ``same bits`` or the first
differing element; ``--report`` writes the lines as JSON. Exit status 1 when any differs.

``--arch`` is the model warpsim runs and the target it compiles for: the GPU's own (sm_90 on an H100), so both
sides run the same compiler's output and the same arithmetic. The ``tl.dot`` kernel runs twice: with 32-row tiles,
for which Triton builds ``mma.sync`` on sm_90 too, and with 64x64 tiles, for which it builds ``wgmma`` (its
operands in swizzled shared memory through matrix descriptors; on sm_80 both are ``mma.sync``). ``--offline`` replaces the GPU
by warpsim at sm_80 (a check of this harness, and of sm_80 and sm_90 builds agreeing, on a machine without a
GPU; the ``tl.dot`` kernel then differs in 3 bytes, the A100's and the H100's tensor-core arithmetic). A kernel that raises is reported as an error and the others still run. Order-dependent results are left out or made exact: the
float atomic sums run on integer-valued floats (every partial sum exact, so the GPU's order cannot change them).
"""

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2])]
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


@contextlib.contextmanager
def captured_stdout(lines):
    """Append what is written to file descriptor 1 inside (C printf from the GPU's driver included) to ``lines``."""
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            lines.extend(tmp.read().decode(errors="replace").splitlines())


def compare(name, arch, gpu, sim, gpu_lines=None, sim_lines=None):
    """One result line's dict: ``same bits`` or the first differing element (or printf line)."""
    gpu, sim = np.ascontiguousarray(gpu), np.ascontiguousarray(sim)
    a, b = gpu.reshape(-1).view(np.uint8), sim.reshape(-1).view(np.uint8)
    row = {"kernel": name, "warpsim_arch": arch, "elements": int(gpu.size), "dtype": str(gpu.dtype)}
    bad = np.flatnonzero(a != b) if a.size == b.size else np.arange(max(a.size, b.size))
    if bad.size:
        i = int(bad[0] // gpu.itemsize)
        row["differing_bytes"] = int(bad.size)
        row["first"] = f"element {i}: GPU {gpu.reshape(-1)[i]!r}, warpsim {sim.reshape(-1)[i]!r}"
    if gpu_lines is not None:
        row["printf_lines"] = len(gpu_lines)
        if sorted(gpu_lines) != sorted(sim_lines):
            extra = sorted(set(gpu_lines) ^ set(sim_lines)) or ["(same lines, other counts)"]
            row["printf_differs"] = f"{len(gpu_lines)} GPU lines, {len(sim_lines)} warpsim lines; e.g. {extra[0]!r}"
    row["same"] = "differing_bytes" not in row and "printf_differs" not in row
    print(f"{name} (warpsim {arch}): " + ("same bits" if row["same"] else
                                         "; ".join(row[k] if k != "differing_bytes" else f"{row[k]} bytes differ"
                                                   for k in ("differing_bytes", "first", "printf_differs")
                                                   if k in row)))
    return row


def run_case(name, arch, arrays, out, gpu_run, sim_run, printf=False):
    """Run one kernel on both sides on copies of ``arrays``; compare ``arrays[out]`` (and printf when asked). An
    exception on either side is the row's ``error`` (its last line), not the end of the check."""
    gpu_lines, sim_lines = [], []
    side = "GPU"
    try:
        with captured_stdout(gpu_lines) if printf else contextlib.nullcontext():
            gpu = gpu_run([v.copy() if isinstance(v, np.ndarray) else v for v in arrays])
        side = "warpsim"
        host = [v.copy() if isinstance(v, np.ndarray) else v for v in arrays]
        with captured_stdout(sim_lines) if printf else contextlib.nullcontext():
            sim_run(host)
    except Exception as e:        # noqa: BLE001 - one kernel's failure is reported, the rest still run
        error = f"{side}: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
        print(f"{name} (warpsim {arch}): error: {error}")
        return {"kernel": name, "warpsim_arch": arch, "error": error, "same": False}
    return compare(name, arch, gpu[out], host[out], gpu_lines if printf else None, sim_lines if printf else None)


def _e4m3_bytes(rng, shape):
    """e4m3 codes of values near 1 (exponents 5..9 of bias 7), a sixteenth zero, no NaN."""
    sign = rng.integers(0, 2, shape, dtype=np.uint8) << 7
    x = sign | (rng.integers(5, 10, shape).astype(np.uint8) << 3) | rng.integers(0, 8, shape, dtype=np.uint8)
    x[rng.integers(0, 16, shape) == 0] = 0
    return x


def triton_cases(arch):
    import triton_kernels as tk
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 100)).astype(np.float32)
    ln_x = rng.standard_normal((24, 300)).astype(np.float32)
    a, b = (rng.standard_normal((64, 80)) / 4).astype(np.float16), (rng.standard_normal((80, 48)) / 4).astype(np.float16)
    ints = rng.integers(0, 1000, 1000).astype(np.int32)
    wa, wb = (rng.standard_normal((128, 96)) / 4).astype(np.float16), (rng.standard_normal((96, 128)) / 4).astype(np.float16)
    f8a, f8b = (_e4m3_bytes(rng, (128, 96)), _e4m3_bytes(rng, (64, 96)))
    return [  # name, run(arrays), arrays, output index, warpsim arch, printf
        ("triton add", tk.run_add, [x[0], x[1], np.zeros(100, np.float32)], 2, arch, False),
        ("triton fused softmax", tk.run_softmax, [x, np.zeros_like(x)], 1, arch, False),
        ("triton layer norm", tk.run_layer_norm,
         [ln_x, rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32),
          np.zeros_like(ln_x), np.zeros(24, np.float32), np.zeros(24, np.float32)], 3, arch, False),
        ("triton matmul (tl.dot)", tk.run_matmul, [a, b, np.zeros((64, 48), np.float16)], 2, arch, False),
        ("triton matmul 64x64 tiles (wgmma on sm_90)", lambda a_, b_, c_: tk.run_matmul(a_, b_, c_, block=64),
         [wa, wb, np.zeros((128, 128), np.float16)], 2, arch, False),
        ("triton fp8 matmul (e4m3 wgmma on sm_90)", tk.run_matmul_fp8, [f8a, f8b, np.zeros((128, 64), np.float32)], 2,
         arch, False),
        ("triton float atomic sum", tk.run_sum_atomic,
         [rng.integers(-1000, 1000, 3000).astype(np.float32), np.zeros(1, np.float32)], 1, arch, False),
        ("triton atomic histogram", tk.run_histogram, [ints, np.zeros(16, np.int32)], 1, arch, False),
        ("triton device_print", tk.run_print, [np.arange(8, dtype=np.int32)], 0, arch, True),
        ("triton masked shift", tk.run_shift, [ints - 500, np.zeros_like(ints)], 1, arch, False),
        ("triton 2-D transpose", tk.run_transpose, [x, np.zeros((100, 37), np.float32)], 1, arch, False),
        ("triton autotuned scale", lambda x_, o: tk.run_scale(x_, o, 2.5),
         [x[2], np.zeros(100, np.float32)], 1, arch, False),
        ("triton heuristics relu", tk.run_relu, [x.reshape(-1)[:250], np.zeros(250, np.float32)], 1, arch, False),
    ]


def triton_checks(arch, offline):
    import warpsim.triton as wt
    rows = []
    for name, run, arrays, out, sim_arch, printf in triton_cases(arch):
        def sim(host, run=run, sim_arch=sim_arch):
            with wt.simulate(arch=sim_arch):
                run(*host)

        def gpu(values, run=run):
            if offline:
                with wt.simulate(arch="sm_80"):
                    run(*values)
                return values
            import torch
            dev = [torch.from_numpy(v).cuda() for v in values]
            run(*dev)
            torch.cuda.synchronize()
            return [d.cpu().numpy() for d in dev]
        rows.append(run_case(name, sim_arch, arrays, out, gpu, sim, printf))
    return rows


def numba_cases():
    import numba_kernels as nk
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    s = rng.standard_normal((40, 50)).astype(np.float32)
    m = rng.standard_normal((33, 47)).astype(np.float32)
    return [  # name, kernel, grid, block, arguments, output index, printf
        ("numba saxpy", nk.saxpy, 8, 128, [np.float32(0.75), x, y, np.zeros_like(x)], 3, False),
        ("numba grid-stride clamp_scale", nk.clamp_scale, 2, 64, [x, np.zeros_like(x), np.float32(-0.5),
                                                                  np.float32(1.25)], 1, False),
        ("numba shared block_sum", nk.block_sum, 4, 256, [x, np.zeros(4, np.float32)], 1, False),
        ("numba atomic histogram", nk.histogram, 4, 256, [rng.integers(0, 10_000, 1000).astype(np.int32),
                                                          np.zeros(10, np.int32)], 1, False),
        ("numba float atomic histogram", nk.weighted_histogram, 4, 256,
         [rng.integers(0, 10_000, 1000).astype(np.int32), rng.integers(-50, 50, 1000).astype(np.float32),
          np.zeros(10, np.float32)], 2, False),
        ("numba 2-D matrix_add", nk.matrix_add_2d, (3, 4), (16, 16), [m, m[::-1].copy(), np.zeros_like(m)], 2,
         False),
        ("numba softmax_rows", nk.softmax_rows, 1, 64, [s, np.zeros_like(s)], 1, False),
        ("numba print", nk.hello, 1, 40, [np.arange(37, dtype=np.int32)], 0, True),
    ]


def numba_checks(arch, offline):
    if not hasattr(np, "row_stack"):      # numba-cuda 0.2x still registers np.row_stack, which numpy 2.4 removed
        np.row_stack = np.vstack
    import warpsim.numba as wn
    rows = []
    for name, kernel, g, b, args, out, printf in numba_cases():
        def sim(host, kernel=kernel, g=g, b=b):
            wn.launch(kernel, g, b, *host, arch=arch)

        def gpu(values, kernel=kernel, g=g, b=b):
            if offline:
                wn.launch(kernel, g, b, *values, arch="sm_80")
                return values
            from numba import cuda
            dev = [cuda.to_device(v) if isinstance(v, np.ndarray) else v for v in values]
            kernel[g, b](*dev)
            cuda.synchronize()
            return [d.copy_to_host() if hasattr(d, "copy_to_host") else d for d in dev]
        rows.append(run_case(name, arch, args, out, gpu, sim, printf))
    return rows


def cupy_cases():
    import cupy_kernels as ck
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    d = rng.standard_normal(300)
    img = rng.integers(0, 1000, (30, 50)).astype(np.int32)
    return [  # name, source, entry, grid, block, arguments, output index, printf
        ("cupy vector_add", ck.ADD, "vector_add", (4,), (256,), [x, x[::-1].copy(), np.zeros_like(x),
                                                                   np.int32(1000)], 2, False),
        ("cupy shared block_sum", ck.BLOCK_SUM, "block_sum", (4,), (256,), [x, np.zeros(4, np.float32),
                                                                             np.int32(1000)], 1, False),
        ("cupy 2-D histogram (C++ name)", ck.HISTOGRAM_2D, "histogram_2d", (4, 2), (16, 16),
         [img, np.int32(50), np.int32(30), np.zeros(7, np.uint32), np.int32(7)], 3, False),
        ("cupy double poly + printf", ck.POLY, "poly", (2,), (256,),
         [d, np.zeros_like(d), 1.5, -0.25, 300], 1, True),
    ]


def _cupy_kernel(module, code, entry, arch=None):
    """The kernel as CuPy's users get it: ``RawKernel`` for an ``extern "C"`` one, ``RawModule`` with
    ``name_expressions`` for a C++ one (``module``: ``cupy`` or ``warpsim.cupy``)."""
    kw = {} if arch is None else {"arch": arch}
    if f'extern "C" __global__ void {entry}(' in code:
        return module.RawKernel(code, entry, **kw)
    return module.RawModule(code=code, name_expressions=[entry], **kw).get_function(entry)


def cupy_checks(arch, offline):
    import warpsim.cupy as wc
    rows = []
    for name, code, entry, g, b, args, out, printf in cupy_cases():
        def sim(host, code=code, entry=entry, g=g, b=b, sim_arch=arch):
            _cupy_kernel(wc, code, entry, sim_arch)(g, b, tuple(host))

        def gpu(values, code=code, entry=entry, g=g, b=b):
            if offline:
                sim(values, code, entry, g, b, "sm_80")
                return values
            import cupy
            dev = [cupy.asarray(v) if isinstance(v, np.ndarray) else v for v in values]
            _cupy_kernel(cupy, code, entry)(g, b, tuple(dev))
            cupy.cuda.Device().synchronize()
            return [cupy.asnumpy(v) if isinstance(v, cupy.ndarray) else v for v in dev]
        rows.append(run_case(name, arch, args, out, gpu, sim, printf))
    return rows


def device_facts(offline):
    facts = {"date": time.strftime("%Y-%m-%d"), "python": sys.version.split()[0]}
    for module in ("triton", "torch", "numba", "cupy"):
        try:
            facts[module] = __import__(module).__version__
        except ImportError:
            facts[module] = None
    if not offline:
        import cupy
        props = cupy.cuda.runtime.getDeviceProperties(0)
        facts["gpu"] = props["name"].decode()
        facts["cc"] = f"{props['major']}.{props['minor']}"
        facts["driver"] = cupy.cuda.runtime.driverGetVersion()
    return facts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90", help="the model warpsim runs (the GPU's: sm_90 on an H100)")
    parser.add_argument("--report", help="write the results as JSON to this file")
    parser.add_argument("--offline", action="store_true", help="no GPU: warpsim at sm_80 stands in for it")
    parser.add_argument("--only", choices=("triton", "numba", "cupy"), action="append",
                        help="run these front ends only (repeatable)")
    args = parser.parse_args(argv)
    rows = []
    checks = {"triton": triton_checks, "numba": numba_checks, "cupy": cupy_checks}
    for front in args.only or checks:
        rows += checks[front](args.arch, args.offline)
    same = sum(r["same"] for r in rows)
    print(f"gpu_check: {len(rows)} kernels, {same} same bits, {len(rows) - same} differ")
    if args.report:
        report = {"check": "tests/pyfronts/gpu_check.py", "argv": sys.argv[1:], **device_facts(args.offline),
                  "kernels": len(rows), "same": same, "differ": len(rows) - same, "results": rows}
        tmp = args.report + ".tmp"
        Path(tmp).write_text(json.dumps(report, indent=1) + "\n")
        os.replace(tmp, args.report)
    return 0 if same == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
