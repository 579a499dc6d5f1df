"""hwcheck.device.tma_check without a GPU: the boxes it expects the GPU to write are what warpsim's tile_load
writes for the same tensor and launch (so a variant that matches on the GPU agrees with the simulator too)."""

import os

import numpy as np
import pytest

import warpsim
from hwcheck.device.tma_check import BOX_COLS, BOX_ROWS, COLS, ROWS, expected_boxes, main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_expected_boxes_are_the_simulators():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (examples/hopper/tma_copy.cu is CUDA C++)")
    pytest.importorskip("cutlass_library", reason="the CuTe headers (pip install -e '.[cute]')")
    from warpsim.frontends.kernel import open_kernel
    t, want = expected_boxes()
    gx, gy = -(-COLS // BOX_COLS), -(-ROWS // BOX_ROWS)
    kernel = open_kernel(os.path.join(ROOT, "examples", "hopper", "tma_copy.cu"), "tile_load", arch="sm_90")
    nbytes = BOX_ROWS * BOX_COLS * 4
    res = kernel.launch(grid=(gx, gy, 1), block=(128, 1, 1), smem=nbytes,
                        args={"map": warpsim.TensorMap(t, box=(BOX_ROWS, BOX_COLS), swizzle="none"),
                              "out": np.zeros(want.size, np.uint32), "box0": BOX_COLS, "box1": BOX_ROWS,
                              "bytes": nbytes})
    assert np.array_equal(res.buffers["tile_load_param_1"], want)


def test_usage_is_one_line(capsys):
    assert main([]) == 2 and capsys.readouterr().err == "usage: python -m hwcheck.device.tma_check DIR\n"
