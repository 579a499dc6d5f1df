"""``warpsim.triton.simulate()``: Triton kernels of users' shape (triton_kernels.py), unchanged, on numpy arrays.

Each is checked twice: against numpy (exactly where the math is exact: integers, moves, float adds of two terms;
closely for float reductions and exp), and bit for bit against the same PTX launched directly through
``warpsim.ptx`` (the switch adds nothing). Skipped without Triton.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

triton = pytest.importorskip("triton", reason="Triton is not installed (pip install 'warpsim[triton]')")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")      # Triton 3.9's default, said explicitly: no warning

import triton_kernels as tk  # noqa: E402

import warpsim.triton as wt  # noqa: E402
from warpsim import ptx as core  # noqa: E402
from warpsim.frontends.triton import TritonError, compile_jit, grid_dims  # noqa: E402

if wt.active() is not None or ".".join(triton.__version__.split(".")[:2]) not in wt.SUPPORTED_TRITON:
    pytest.skip(f"Triton {triton.__version__} is not a version warpsim.triton supports", allow_module_level=True)

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(31)


def direct(fn, grid, *args, arch="sm_80", **kwargs):
    """The same kernel's PTX (the switch's compile, cached) loaded afresh and launched through ``warpsim.ptx``, on
    copies of the arrays; ``{param name: array after the run}`` and the result."""
    kernel, bound = compile_jit(fn, args, kwargs, arch)
    dims = grid_dims(grid, bound)
    module = core.load(kernel.ptx, arch=arch)
    core_args, names = {}, {}
    for name, pname in zip(kernel.runtime, kernel.ptx_params):
        value = bound[name]
        core_args[pname] = value.copy() if isinstance(value, np.ndarray) else value
        names[pname] = name
    for pname in kernel.ptx_params[len(kernel.runtime):]:
        core_args[pname] = 0
    res = module.launch(kernel.entry, grid=dims, block=kernel.block, args=core_args, smem=kernel.shared,
                        arch=arch.replace("_", ""), quiet=True)
    return {names[k]: v for k, v in res.buffers.items() if k in names}, res


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    diff = np.flatnonzero(a.reshape(-1).view(np.uint8) != b.reshape(-1).view(np.uint8))
    assert diff.size == 0, f"{diff.size} bytes differ, first at byte {diff[0]}"


def test_vector_add_exact_and_as_direct():
    n = 3000
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    with wt.simulate(arch="sm_80"):
        tk.run_add(x, y, out)
    np.testing.assert_array_equal(out, x + y)                    # one rounding: numpy's is the same
    want, _ = direct(tk.add_kernel, (3,), x, y, np.zeros(n, np.float32), n, BLOCK_SIZE=1024)
    same_bits(out, want["output_ptr"])


def test_fused_softmax_close_and_as_direct():
    x = RNG.standard_normal((37, 100)).astype(np.float32)
    y = np.zeros_like(x)
    with wt.simulate():
        tk.run_softmax(x, y)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)
    want, _ = direct(tk.softmax_kernel, (4,), np.zeros_like(x), x, 100, 100, 37, 100, BLOCK_SIZE=128, num_warps=4)
    same_bits(y, want["output_ptr"])


def test_layer_norm_close_and_as_direct():
    M, N = 6, 300
    x = RNG.standard_normal((M, N)).astype(np.float32)
    w, b = RNG.standard_normal(N).astype(np.float32), RNG.standard_normal(N).astype(np.float32)
    y, mean, rstd = np.zeros_like(x), np.zeros(M, np.float32), np.zeros(M, np.float32)
    with wt.simulate():
        tk.run_layer_norm(x, w, b, y, mean, rstd)
    x64 = x.astype(np.float64)
    mu, var = x64.mean(axis=1), x64.var(axis=1)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(var + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(y, (x64 - mu[:, None]) / np.sqrt(var[:, None] + 1e-5) * w + b, rtol=1e-4, atol=1e-4)
    want, _ = direct(tk.layer_norm_fwd, (M,), x, np.zeros_like(x), w, b, np.zeros(M, np.float32),
                     np.zeros(M, np.float32), N, N, 1e-5, BLOCK_SIZE=128, num_warps=4)
    for got, name in ((y, "Y"), (mean, "Mean"), (rstd, "Rstd")):
        same_bits(got, want[name])


def test_matmul_tl_dot_sm80_close_and_as_direct():
    M, N, K = 64, 48, 80                                          # ragged: the masks and the modulo wrap matter
    a = (RNG.standard_normal((M, K)) / 4).astype(np.float16)
    b = (RNG.standard_normal((K, N)) / 4).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    with wt.simulate(arch="sm_80"):
        tk.run_matmul(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3)   # the f16 store's rounding
    kernel, _ = compile_jit(tk.matmul_kernel, (a, b, c, M, N, K, K, 1, N, 1, N, 1),
                            dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=2, num_warps=4,
                                 num_stages=2), "sm_80")
    assert "mma.sync.aligned.m16n8k16" in kernel.ptx
    want, _ = direct(tk.matmul_kernel, (4,), a, b, np.zeros_like(c), M, N, K, K, 1, N, 1, N, 1, BLOCK_SIZE_M=32,
                     BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=2, num_warps=4, num_stages=2)
    same_bits(c, want["c_ptr"])


def test_atomics_histogram_and_sum_exact():
    x = RNG.integers(0, 1000, 1000).astype(np.int32)
    hist = np.zeros(16, np.int32)
    with wt.simulate():
        tk.run_histogram(x, hist)
    np.testing.assert_array_equal(hist, np.bincount(x % 16, minlength=16))
    total = np.zeros(1, np.int32)
    with wt.simulate():
        tk.run_sum_atomic(x, total)                          # one atomic add per program of its block's sum
    assert int(total[0]) == int(x.sum())


def test_float_atomic_sum_exact_in_any_order_and_as_direct():
    """``tl.atomic_add`` of a float (``atom.global.gpu.acq_rel.add.f32``): each program adds its block's sum. With
    integer-valued floats every partial sum is exact, so any order the GPU takes gives these bits."""
    x = RNG.integers(-1000, 1000, 3000).astype(np.float32)
    total = np.zeros(1, np.float32)
    with wt.simulate():
        tk.run_sum_atomic(x, total)
    assert total[0] == np.float32(x.astype(np.float64).sum())
    want, _ = direct(tk.sum_atomic_kernel, (12,), x, np.zeros(1, np.float32), 3000, BLOCK=256)
    same_bits(total, want["total_ptr"])


def test_device_print_is_printf(capfd):
    x = np.arange(8, dtype=np.int32)
    with wt.simulate():
        tk.run_print(x)
    lines = [line for line in capfd.readouterr().out.splitlines() if " x: " in line]
    assert len(lines) == 64            # as on a GPU: 4 elements over 32 threads, each printed by the 8 holding it
    assert sorted(set(lines)) == sorted(f"pid ({p}, 0, 0) idx ({i}) x: {4 * p + i}" for p in (0, 1) for i in range(4))
    res = wt.launch(tk.print_kernel, (2,), x, BLOCK=4, num_warps=1, quiet=True)
    assert len(res.printf) == 64 and capfd.readouterr().out == ""


def test_masked_loads_with_other_exact():
    x = RNG.integers(-50, 50, 200).astype(np.int32)
    out = np.zeros_like(x)
    with wt.simulate():
        tk.run_shift(x, out, shift=3)
    want = np.concatenate([np.full(3, -1, np.int32), x[:-3]]) * 3 + 1
    np.testing.assert_array_equal(out, want)


def test_2d_grid_transpose_exact():
    x = RNG.standard_normal((40, 70)).astype(np.float32)
    y = np.zeros((70, 40), np.float32)
    with wt.simulate():
        tk.run_transpose(x, y)
    np.testing.assert_array_equal(y, x.T)


def test_strided_view_is_addressed_as_on_a_gpu():
    base = RNG.standard_normal((40, 140)).astype(np.float32)
    x = base[:, 10:80]                                             # a view: row stride 140 elements
    y = np.zeros((70, 40), np.float32)
    with wt.simulate():
        tk.run_transpose(x, y)
    np.testing.assert_array_equal(y, x.T)


def test_autotune_takes_the_first_config_unless_pinned():
    x = RNG.standard_normal(500).astype(np.float32)
    out = np.zeros_like(x)
    with wt.simulate():
        tk.run_scale(x, out, 2.5)
    np.testing.assert_array_equal(out, x * np.float32(2.5))
    assert tk.scale_kernel.best_config.kwargs == {"BLOCK": 128}
    out[:] = 0
    with wt.simulate(config=1):
        tk.run_scale(x, out, 2.5)
    np.testing.assert_array_equal(out, x * np.float32(2.5))
    assert tk.scale_kernel.best_config.kwargs == {"BLOCK": 64} and tk.scale_kernel.best_config.num_warps == 2


def test_heuristics_pick_the_branch():
    for n in (256, 250):
        x = RNG.standard_normal(n).astype(np.float32)
        out = np.full_like(x, 7)
        with wt.simulate():
            tk.run_relu(x, out)
        np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_specialisation_is_tritons():
    x = np.zeros(64, np.float32)
    k16, _ = compile_jit(tk.add_kernel, (x, x, x, 64), {"BLOCK_SIZE": 64}, "sm_80")
    k1, _ = compile_jit(tk.add_kernel, (x, x, x, 1), {"BLOCK_SIZE": 64}, "sm_80")
    k7, _ = compile_jit(tk.add_kernel, (x, x, x, 7), {"BLOCK_SIZE": 64}, "sm_80")
    assert "n_elements" in k16.runtime and "n_elements" not in k1.runtime      # an int equal to 1 is a constant
    assert k16 is not k7                                                        # 64 is divisible by 16, 7 is not
    y = np.zeros(4096, np.float32)
    aligned, _ = compile_jit(tk.add_kernel, (y[4:], y, y, 4096), {"BLOCK_SIZE": 1024}, "sm_80")
    unaligned, _ = compile_jit(tk.add_kernel, (y[1:], y, y, 4096), {"BLOCK_SIZE": 1024}, "sm_80")  # 4-byte aligned
    assert aligned.ptx.count("ld.global.v4.b32") > unaligned.ptx.count("ld.global.v4.b32")     # vector loads
    assert compile_jit(tk.add_kernel, (x, x, x, 48), {"BLOCK_SIZE": 64}, "sm_80")[0] is k16   # cached
    k4, _ = compile_jit(tk.add_kernel, (x, x, x, 64), {"BLOCK_SIZE": 64, "num_warps": 8}, "sm_80")
    assert k4.block == (256, 1, 1) and k16.block == (128, 1, 1)


def test_sm90_tl_dot_of_64_row_tiles_is_wgmma_as_the_warpgroup_reference():
    """64x64 tiles: Triton builds wgmma for sm_90, A and B in swizzled shared memory; the result must be the
    reference wgmma chained over k16 steps in order, then rounded to f16 (the layouts decide it: a wrong element
    order gives other sums)."""
    from warpsim.isa.wgmma import wgmma
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((64, 96)) / 4).astype(np.float16)
    b = (rng.standard_normal((96, 64)) / 4).astype(np.float16)
    c = np.zeros((64, 64), np.float16)
    kernel, _ = compile_jit(tk.matmul_kernel, (a, b, c, 64, 64, 96, 96, 1, 64, 1, 64, 1),
                            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2,
                             "num_warps": 4, "num_stages": 2}, "sm_90")
    assert "wgmma.mma_async" in kernel.ptx
    with wt.simulate(arch="sm_90"):
        tk.run_matmul(a, b, c, block=64)
    acc = None
    for k0 in range(0, 96, 16):
        acc = wgmma(a[:, k0:k0 + 16].view(np.uint16), b[k0:k0 + 16].view(np.uint16), acc)
    assert np.array_equal(c.view(np.uint16), acc.view(np.float32).astype(np.float16).view(np.uint16))


def test_sm90_fp8_tl_dot_is_the_e4m3_wgmma_chained_over_k32():
    """An FP8 GEMM (e4m3 bytes bit-cast, B K-major): Triton builds wgmma .e4m3 with A from registers for sm_90; the
    result must be the dot-add reference chained over k32 steps, with the TMA-less masked loads' zeros (K = 80)."""
    from warpsim.isa.dot_add import dot_add_matrix
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (128, 80), dtype=np.uint8)
    b = rng.integers(0, 256, (64, 80), dtype=np.uint8)
    a[(a & 0x7F) == 0x7F] = 0x38                                     # no NaN codes: 1.0 instead
    b[(b & 0x7F) == 0x7F] = 0x38
    c = np.zeros((128, 64), np.float32)
    kernel, _ = compile_jit(tk.matmul_fp8_kernel, (a, b, c, 128, 64, 80),
                            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}, "sm_90")
    assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3" in kernel.ptx
    with wt.simulate(arch="sm_90"):
        tk.run_matmul_fp8(a, b, c)
    ap = np.zeros((128, 96), np.uint8)
    bp = np.zeros((64, 96), np.uint8)
    ap[:, :80], bp[:, :80] = a, b
    acc = None
    for k0 in range(0, 96, 32):
        acc = dot_add_matrix(ap[:, k0:k0 + 32], bp[:, k0:k0 + 32].T, acc, "e4m3", "e4m3", "f32")
    assert np.array_equal(c.view(np.uint32), acc)


def test_gpu_arrays_are_refused_in_one_line():
    class FakeCuda:                                                # what CuPy arrays and CUDA tensors carry
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}
        dtype = np.dtype(np.float32)

        def data_ptr(self):
            return 0

    x = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="GPU array") as e, wt.simulate():
        tk.add_kernel[(1,)](FakeCuda(), x, x.copy(), 4, BLOCK_SIZE=4)
    assert "\n" not in str(e.value)


def test_aliased_arrays_read_only_or_refused():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    with wt.simulate():
        tk.add_kernel[(1,)](x, x, out, 64, BLOCK_SIZE=64)          # read twice: fine
    np.testing.assert_array_equal(out, 2 * np.arange(64, dtype=np.float32))
    with pytest.raises(ValueError, match="share memory") as e, wt.simulate():
        tk.add_kernel[(1,)](x, out, x, 64, BLOCK_SIZE=64)          # written through one of two: refused
    assert "\n" not in str(e.value) and x[1] == 1                  # nothing written back


def test_unknown_version_and_missing_triton(monkeypatch):
    monkeypatch.setattr(triton, "__version__", "2.1.0")
    with pytest.raises(TritonError, match="Triton 2.1.0 is not a version"):
        with wt.simulate():
            pass
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "triton", None)
    with pytest.raises(TritonError, match=r"pip install warpsim\[triton\]"):
        with wt.simulate():
            pass
    assert wt.active() is None


def test_switch_is_off_outside_and_nests():
    from triton.runtime.jit import JITFunction
    original = JITFunction.run
    with wt.simulate(arch="sm_80"):
        with wt.simulate(arch="sm_90"):
            assert wt.active()["arch"] == "sm_90"
        assert wt.active()["arch"] == "sm_80"
    assert wt.active() is None and JITFunction.run is original


def test_torch_cpu_tensors_in_place():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x, y = torch.randn(1000), torch.randn(1000)
    out = torch.zeros(1000)
    with wt.simulate():
        tk.run_add(x, y, out)
    assert torch.equal(out, x + y)


def test_env_switch_at_import():
    code = ("import numpy as np, triton_kernels as tk, warpsim.triton as wt\n"
            "x = np.arange(100, dtype=np.float32); out = np.zeros_like(x)\n"
            "tk.run_add(x, x.copy(), out); assert wt.active()['arch'] == 'sm_80'\n"
            "print('ok', (out == 2 * x).all())\n")
    env = {**os.environ, "WARPSIM_TRITON": "1",
           "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.stdout.strip() == "ok True", done.stderr[-2000:]


def test_the_sanitizer_finds_a_race_between_programs_on_the_kernels_own_line():
    """Every program of ``sum_store_kernel`` stores its block's sum to one word (the bug; ``sum_atomic_kernel`` is
    the fix): a WAW race in global memory between CTAs, named by the ``tl.store`` line and Triton's own parameter
    name; the atomic version is clean."""
    x = RNG.integers(-50, 50, 1000).astype(np.float32)
    line = next(i for i, text in enumerate((HERE / "triton_kernels.py").read_text().splitlines(), 1)
                if "every program stores to one word" in text)
    total = np.zeros(1, np.float32)
    report = wt.sanitize(tk.sum_store_kernel, (4,), x, total, 1000, BLOCK=256, tools="race")
    (finding,) = report.findings
    assert (finding.tool, finding.kind) == ("race", "WAW")
    assert [s["source"] for s in finding.sites] == [f"triton_kernels.py:{line}"] * 2
    assert "buffer total_ptr (sum_store_kernel_param_1) bytes [0, 4)" in report.text()
    assert total[0] in [np.float32(x[k:k + 256].astype(np.float64).sum()) for k in range(0, 1000, 256)]
    assert not wt.sanitize(tk.sum_atomic_kernel, (4,), x, np.zeros(1, np.float32), 1000, BLOCK=256).findings
    with pytest.raises(AssertionError, match=r"(?s)warpsim sanitizer: sum_store_kernel:\n.*WAW hazard, global memory"):
        with wt.simulate(sanitize="race"):
            tk.sum_store_kernel[(4,)](x, total, 1000, BLOCK=256)
    with wt.simulate(sanitize="all"):
        tk.run_sum_atomic(x, np.zeros(1, np.float32))              # clean: nothing raised
    with pytest.raises(ValueError, match="unknown tool racecheck"):
        with wt.simulate(sanitize="racecheck"):
            pass


def test_debug_steps_a_kernel_by_its_python_lines(capsys):
    x = np.arange(64, dtype=np.float32)
    status = wt.debug(tk.add_kernel, (1,), x, x, np.zeros(64, np.float32), 64, BLOCK_SIZE=64,
                      commands=["next", "next", "print $r4"])
    out = capsys.readouterr().out
    lines = (HERE / "triton_kernels.py").read_text().splitlines()
    pid = next(i for i, text in enumerate(lines, 1) if "pid = tl.program_id(axis=0)" in text)
    assert status == 0
    assert f"triton_kernels.py:{pid}: pid = tl.program_id(axis=0)" in out
    assert "warpsim debug: add_kernel (add_kernel), grid (1, 1, 1), block (128, 1, 1), sm_80." in out


def test_the_plugins_option_sanitizes_every_triton_launch(monkeypatch):
    """``pytest --warpsim-sanitize=race`` sets WARPSIM_SANITIZE for the session; a plain ``simulate()`` then runs
    each launch under the sanitizer."""
    from types import SimpleNamespace
    from warpsim.testing import pytest_configure
    monkeypatch.setenv("WARPSIM_SANITIZE", "")          # recorded, so the variable is gone again after the test
    pytest_configure(SimpleNamespace(getoption=lambda name, default=None: "race"))
    assert os.environ["WARPSIM_SANITIZE"] == "race"
    x = RNG.integers(-50, 50, 1000).astype(np.float32)
    with pytest.raises(AssertionError, match="WAW hazard, global memory"):
        with wt.simulate():
            tk.sum_store_kernel[(4,)](x, np.zeros(1, np.float32), 1000, BLOCK=256)


def test_every_core_gives_the_launch_s_own_bits(monkeypatch):
    """Under the switch a launch spreads its programs over ``$WARPSIM_JOBS`` processes (here from the first slice of
    64 warp instructions on): softmax's programs are independent, the histogram's share atomic counters (the spans
    after the first then run again in sequence); both equal the one-process launch bit for bit."""
    from warpsim.ptx import jobs, launch
    monkeypatch.setattr(jobs, "FAN_OUT_AFTER", 0.0)
    monkeypatch.setattr(launch, "_FIRST_SLICE", 64)
    monkeypatch.setenv(jobs.ENV_JOBS, "2")
    fans = []
    real = jobs.Fan.at_boundary
    monkeypatch.setattr(jobs.Fan, "at_boundary", lambda self, progress=None: fans.append(self) or real(self, progress))
    x = RNG.standard_normal((37, 100)).astype(np.float32)
    y = np.zeros_like(x)
    with wt.simulate():
        tk.run_softmax(x, y)
    want, _ = direct(tk.softmax_kernel, (4,), np.zeros_like(x), x, 100, 100, 37, 100, BLOCK_SIZE=128, num_warps=4)
    same_bits(y, want["output_ptr"])
    assert fans and fans[-1].jobs == 2 and fans[-1].sequential_from is None
    v = RNG.integers(0, 1000, 1000).astype(np.int32)
    hist = np.zeros(16, np.int32)
    with wt.simulate():
        tk.run_histogram(v, hist)
    np.testing.assert_array_equal(hist, np.bincount(v % 16, minlength=16))
    assert fans[-1].sequential_from == 1


def test_warpsim_jobs_is_checked(monkeypatch):
    from warpsim.ptx import jobs
    monkeypatch.setenv(jobs.ENV_JOBS, "lots")
    with pytest.raises(ValueError, match="WARPSIM_JOBS='lots': must be an int from 1 to 1024"):
        jobs.default_jobs()
    monkeypatch.setenv(jobs.ENV_JOBS, "3")
    assert jobs.default_jobs() == 3
