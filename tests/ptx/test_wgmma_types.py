"""examples/hopper/wgmma_types.cu in the core: every kernel (tf32, e4m3/e5m2 into f32 and f16, s8/u8 into s32 with and
without .satfinite), on the campaign's input classes, gives what hwcheck.campaigns.wgmma_types computes from the same
bytes with its own layout tables (A/B offsets in shared memory, the D map): the descriptor decoding, the element
sizes, the fragment and the scale-d path of the interpreter, checked apart from the arithmetic they share."""

import os

import numpy as np
import pytest

from hwcheck.campaigns.wgmma_types import CLASSES, KERNELS, expected, inputs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "examples", "hopper", "wgmma_types.cu")


@pytest.fixture(scope="module")
def module():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (examples/hopper/wgmma_types.cu is CUDA C++)")
    pytest.importorskip("cutlass_library", reason="the CuTe headers (pip install -e '.[cute]')")
    from warpsim import ptx
    from warpsim.frontends.source import compile_source
    return ptx.load(compile_source(SOURCE, "sm_90").modules[0], filename="wgmma_types.ptx")


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_the_interpreter_gives_the_campaigns_model(module, kernel):
    for cls in CLASSES:
        x, c, _ = inputs(kernel, cls, 8, seed=1)
        params = {f"{kernel}_param_0": x, f"{kernel}_param_1": c, f"{kernel}_param_2": np.zeros_like(c)}
        y = module.launch(kernel, grid=(8, 1, 1), block=(128, 1, 1), args=params, quiet=True).buffers[
            f"{kernel}_param_2"]
        want = expected(kernel, x, c)
        assert (y == want).all(), f"{kernel} {cls}: {int((y != want).sum())} of {y.size} differ"
        assert want.any()


def test_inputs_are_the_same_bytes_for_a_seed_and_differ_between_seeds():
    x0, c0, d0 = inputs("e4m3_f32", "narrow", 4, seed=7)
    x1, c1, d1 = inputs("e4m3_f32", "narrow", 4, seed=7)
    assert d0 == d1 and (x0 == x1).all() and (c0 == c1).all()
    assert inputs("e4m3_f32", "narrow", 4, seed=8)[2] != d0
