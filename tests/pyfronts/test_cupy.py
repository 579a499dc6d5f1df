"""``warpsim.cupy.RawKernel``: CuPy RawKernel sources (cupy_kernels.py), CuPy's call convention, numpy arrays;
checked against numpy and bit for bit against the same PTX launched directly. Skipped without nvcc."""

import numpy as np
import pytest

from warpsim import ptx as core
from warpsim.cupy import RawKernel, RawModule, scalar_bits
from warpsim.toolchain import find_nvcc

import cupy_kernels as ck

pytestmark = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not found on PATH or under CUDA_HOME")
RNG = np.random.default_rng(31)


def direct(kernel, grid, block, values):
    """The same PTX loaded afresh and launched through ``warpsim.ptx`` (arrays copied)."""
    module = core.load(kernel.ptx, arch="sm_80")
    entry = kernel._entry
    args = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    return module.launch(entry, grid=grid, block=block, args=args, arch="sm80", quiet=True).buffers


def test_vector_add_exact():
    n = 1000
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    k = RawKernel(ck.ADD, "vector_add")
    k(((n + 255) // 256,), (256,), (x, y, z, np.int32(n)))
    np.testing.assert_array_equal(z, x + y)
    k((4,), (256,), (x, y, z, n))                     # a Python int: CuPy passes int64, the int reads its low bytes
    np.testing.assert_array_equal(z, x + y)


def test_shared_block_sum_close_and_as_direct():
    x = RNG.standard_normal(1000).astype(np.float32)
    partial = np.zeros(4, np.float32)
    k = RawKernel(ck.BLOCK_SUM, "block_sum")
    k((4,), (256,), (x, partial, np.int32(1000)))
    np.testing.assert_allclose(partial, np.add.reduceat(x.astype(np.float64), [0, 256, 512, 768]), atol=1e-5)
    want = direct(k, (4, 1, 1), (256, 1, 1), [x, np.zeros(4, np.float32), 1000])
    np.testing.assert_array_equal(partial.view(np.uint32), list(want.values())[1].view(np.uint32))


def test_cpp_name_2d_grid_atomics_exact():
    img = RNG.integers(0, 1000, (30, 50)).astype(np.int32)
    bins = np.zeros(7, np.uint32)
    k = RawModule(code=ck.HISTOGRAM_2D, name_expressions=["histogram_2d"]).get_function("histogram_2d")
    k((4, 2), (16, 16), (img, np.int32(50), np.int32(30), bins, np.int32(7)))
    np.testing.assert_array_equal(bins, np.bincount(img.ravel() % 7, minlength=7))


def test_a_cpp_name_is_not_found_by_raw_kernel_as_on_a_gpu():
    """CuPy's RawKernel looks the name up as the driver does: a C++ function's plain name is not its symbol (the H100
    said CUDA_ERROR_NOT_FOUND for this very call: conformance/h100/h100-80gb-hbm3-pyfronts-gpu-check.json)."""
    k = RawKernel(ck.HISTOGRAM_2D, "histogram_2d")
    with pytest.raises(ValueError, match=r"no kernel 'histogram_2d': CUDA_ERROR_NOT_FOUND on a GPU too, as "
                                         r"histogram_2d is a C\+\+ function \(its symbol is _Z12histogram_2d\w+\); "
                                         r"declare it extern \"C\", or use RawModule"):
        k((4, 2), (16, 16), (np.zeros(4, np.int32), 2, 2, np.zeros(7, np.uint32), 7))
    with pytest.raises(ValueError, match=r"no kernel 'nope' in the module \(CUDA_ERROR_NOT_FOUND on a GPU; it has: "):
        RawModule(code=ck.HISTOGRAM_2D, name_expressions=["histogram_2d"]).get_function("nope")


def test_doubles_long_long_and_printf():
    x = RNG.standard_normal(300)
    y = np.zeros_like(x)
    k = RawKernel(ck.POLY, "poly")
    k.quiet = True
    res = k((2,), (256,), (x, y, 1.5, -0.25, 300))
    np.testing.assert_allclose(y, 1.5 * x * x - 0.25, rtol=1e-15, atol=1e-15)
    want = direct(k, (2, 1, 1), (256, 1, 1), [x, np.zeros_like(x), 1.5, -0.25, 300])
    np.testing.assert_array_equal(y.view(np.uint64), list(want.values())[1].view(np.uint64))
    assert [t for _, _, t in res.printf] == ["poly: n=300 a=1.5\n"]


def test_scalar_bits_follow_cupy():
    assert scalar_bits(7, "s32", "n") == 7 and scalar_bits(-1, "u32", "n") == 0xFFFFFFFF
    assert scalar_bits(np.float32(0.1), "f32", "a") == float(np.float32(0.1))
    with pytest.raises(ValueError, match="reads 8"):
        scalar_bits(np.float32(1), "f64", "a")


def test_wrong_argument_count_and_gpu_arrays():
    k = RawKernel(ck.ADD, "vector_add")
    with pytest.raises(ValueError, match="takes 4 arguments"):
        k((1,), (32,), (np.zeros(4, np.float32),))

    class FakeCuda:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}

    with pytest.raises(TypeError, match="GPU array"):
        k((1,), (32,), (FakeCuda(), np.zeros(4, np.float32), np.zeros(4, np.float32), 4))
