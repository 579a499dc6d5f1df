"""hwcheck for PTX programs on a real GPU: the hand-written and a directed kernel, buffers and every register."""

import json
import os

import pytest

from hwcheck.errors import HwcheckError
from hwcheck.ptx_examples import PTX_EXAMPLES, ptx_jobs

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    from hwcheck.gpu import Gpu
    try:
        return Gpu.open()
    except HwcheckError as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("kernel", ["add_index", "warp_ops"])
def test_ptx_kernel_matches_the_gpu(gpu, kernel, tmp_path):
    from hwcheck.campaign import model_arch
    from hwcheck.ptx_run import CupyPtx, check_ptx
    example = next(e for e in PTX_EXAMPLES if e[1] == kernel)
    report = tmp_path / "r.json"
    runs, status, error, code = check_ptx(CupyPtx(gpu), ptx_jobs([example]), seeds=2,
                                          arch=model_arch(gpu.info.compute_capability), report=str(report),
                                          gpu_info=gpu.info.as_dict())
    assert (status, error, code) == ("pass", None, 0), json.dumps(runs[0].records[:3] if runs else [])
    assert runs[0].seeds[0].records > 0 and os.path.exists(report)
