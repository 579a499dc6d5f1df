"""``warpsim.numba``: Numba CUDA kernels (numba_kernels.py), unchanged, on numpy arrays, checked against numpy
(exactly where the math is exact) and bit for bit against the same PTX launched directly. Skipped without
numba-cuda."""

import re

import numpy as np
import pytest

pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (pip install 'warpsim[numba]')")

import numba_kernels as nk  # noqa: E402

import warpsim.numba as wn  # noqa: E402
from warpsim import ptx as core  # noqa: E402
from warpsim.frontends.numba_cuda import compile_dispatcher  # noqa: E402

RNG = np.random.default_rng(31)


def direct(kernel, grid, block, *args):
    """The same PTX (the switch's compile) loaded afresh and launched through ``warpsim.ptx`` with Numba's array
    arguments spelled out by hand (``meminfo, parent, nitems, itemsize, data, shape..., strides...``)."""
    k = compile_dispatcher(kernel, args)
    values = []
    for a in args:
        values += [0, 0, a.size, a.itemsize, a.copy(), *a.shape, *a.strides] if isinstance(a, np.ndarray) else [a]
    res = core.load(k.ptx, arch="sm_80").launch(k.entry, grid=grid, block=block, args=values, arch="sm80", quiet=True)
    return [res.buffers[p] for p, _ in k.module.params(k.entry) if p in res.buffers], res


def test_saxpy_exact_and_as_direct():
    n = 1000
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    with wn.simulate():
        nk.saxpy[8, 128](np.float32(0.75), x, y, out)
    fused = (0.75 * x.astype(np.float64) + y).astype(np.float32)      # ptxas fuses a*x + y into one fma.rn
    np.testing.assert_array_equal(out, fused)
    bufs, _ = direct(nk.saxpy, (8, 1, 1), (128, 1, 1), np.float32(0.75), x, y, np.zeros(n, np.float32))
    np.testing.assert_array_equal(out.view(np.uint32), bufs[2].view(np.uint32))


def test_grid_stride_loop_exact():
    x = RNG.standard_normal(1000) * 2
    out = np.zeros_like(x)
    wn.launch(nk.clamp_scale, 2, 128, x, out, -1.0, 1.5)
    np.testing.assert_array_equal(out, np.minimum(np.maximum(x, -1.0), 1.5) * 0.5)


def test_shared_memory_block_sum_as_direct():
    x = RNG.standard_normal(1000).astype(np.float32)
    partial = np.zeros(4, np.float32)
    with wn.simulate():
        nk.block_sum[4, 256](x, partial)
    np.testing.assert_allclose(partial, np.add.reduceat(x.astype(np.float64), [0, 256, 512, 768]), atol=1e-5)
    bufs, _ = direct(nk.block_sum, (4, 1, 1), (256, 1, 1), x, np.zeros(4, np.float32))
    np.testing.assert_array_equal(partial.view(np.uint32), bufs[1].view(np.uint32))


def test_atomic_histogram_exact():
    x = RNG.integers(0, 10_000, 3000).astype(np.int32)
    bins = np.zeros(10, np.int32)
    with wn.simulate():
        nk.histogram[(3000 + 255) // 256, 256](x, bins)
    np.testing.assert_array_equal(bins, np.bincount(x % 10, minlength=10))


def test_float_atomic_weighted_histogram_exact():
    """``cuda.atomic.add`` of float32 (``atom.global.add.f32``) with integer weights: every partial sum is exact, so
    the order of the atomics (lane order here, the GPU's own there) does not change the bits."""
    x = RNG.integers(0, 10_000, 3000).astype(np.int32)
    w = RNG.integers(-50, 50, 3000).astype(np.float32)
    bins = np.zeros(10, np.float32)
    with wn.simulate():
        nk.weighted_histogram[(3000 + 255) // 256, 256](x, w, bins)
    np.testing.assert_array_equal(bins, np.bincount(x % 10, weights=w, minlength=10).astype(np.float32))


def test_2d_grid_and_strided_view_exact():
    a = RNG.standard_normal((50, 70)).astype(np.float32)
    base = RNG.standard_normal((50, 100)).astype(np.float32)
    b = base[:, 5:75]                                            # a view: Numba's 'A' layout, byte strides
    c = np.zeros((50, 70), np.float32)
    with wn.simulate():
        nk.matrix_add_2d[(4, 5), (16, 16)](a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_softmax_rows_close_and_as_direct():
    x = RNG.standard_normal((40, 50)).astype(np.float32)
    y = np.zeros_like(x)
    with wn.simulate():
        nk.softmax_rows[1, 64](x, y)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    bufs, _ = direct(nk.softmax_rows, (1, 1, 1), (64, 1, 1), x, np.zeros_like(x))
    np.testing.assert_array_equal(y.view(np.uint32), bufs[1].view(np.uint32))


def test_print_is_printf():
    x = np.arange(3, dtype=np.int64) * 10
    res = wn.launch(nk.hello, 1, 32, x, quiet=True)
    assert [text for _, _, text in res.printf] == [f"thread {i} has {10 * i}\n" for i in range(3)]


def test_switch_is_off_outside_and_restores():
    from numba.cuda.dispatcher import CUDADispatcher
    original = CUDADispatcher.__getitem__
    with wn.simulate():
        assert wn.active()["arch"] == "sm_80"
    assert wn.active() is None and CUDADispatcher.__getitem__ is original


def test_gpu_arrays_are_refused_in_one_line():
    class FakeCuda:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}

    with pytest.raises(TypeError, match="GPU array"), wn.simulate():
        nk.saxpy[1, 32](np.float32(1), FakeCuda(), np.zeros(4, np.float32), np.zeros(4, np.float32))


def test_a_numba_cuda_that_numpy_outgrew_is_one_line(monkeypatch):
    """The device image's numba-cuda read ``np.row_stack`` while typing (numpy 2.4 removed it): a one-line error
    naming both, not numba-cuda's traceback."""
    import warpsim.frontends.numba_cuda as front

    def old_numba_cuda(*args, **kwargs):
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")
    monkeypatch.setattr(front, "_COMPILED", {})
    import numba.cuda
    monkeypatch.setattr(numba.cuda, "compile_ptx", old_numba_cuda)
    with pytest.raises(wn.NumbaError, match=r"numba-cuda \(numba .*\) does not run with numpy .*row_stack.*upgrade "
                                            r"numba-cuda"):
        wn.launch(nk.saxpy, 1, 32, np.float32(1), np.zeros(32, np.float32), np.zeros(32, np.float32),
                  np.zeros(32, np.float32))


def test_the_sanitizer_finds_a_race_between_blocks_on_the_kernels_line():
    """Thread 0 of every block stores to ``total[0]``: a WAW race in global memory between CTAs, on the store's
    Python line (``lineinfo=True``) with the kernel's argument name; ``block_sum`` is clean."""
    x = np.arange(256, dtype=np.float32)
    line = next(i for i, text in enumerate(open(nk.__file__).read().splitlines(), 1)
                if "every block stores to one word" in text)
    report = wn.sanitize(nk.racy_total, 4, 64, x, np.zeros(1, np.float32), tools="race")
    (finding,) = report.findings
    assert (finding.tool, finding.kind) == ("race", "WAW")
    assert {s["source"] for s in finding.sites} == {f"numba_kernels.py:{line}"}
    assert re.search(r"= buffer total \(\w+_param_\d+\) bytes \[0, 4\)", report.text()) and report.text().startswith("========= WARPSIM SANITIZER: "
                                                                                         "racy_total\n")
    assert not wn.sanitize(nk.block_sum, 1, 256, x, np.zeros(1, np.float32)).findings
    with pytest.raises(AssertionError, match="WAW hazard, global memory"):
        with wn.simulate(sanitize="race"):
            nk.racy_total[4, 64](x, np.zeros(1, np.float32))
