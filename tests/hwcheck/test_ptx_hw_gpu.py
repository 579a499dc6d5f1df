"""hwcheck for PTX programs on a real GPU: the hand-written and directed kernels, buffers, every register (inside
called .func bodies too) and each CTA's final shared memory."""

import json
import os

import pytest

from hwcheck.errors import HwcheckError
from hwcheck.runs.ptx_examples import PTX_EXAMPLES, ptx_jobs

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    from hwcheck.device.gpu import Gpu
    try:
        return Gpu.open()
    except HwcheckError as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("kernel", ["add_index", "warp_ops", "func_smem", "calls", "atomics", "cp_async"])
def test_ptx_kernel_matches_the_gpu(gpu, kernel, tmp_path):
    from hwcheck.arch import model_arch
    from hwcheck.runs.ptx_run import CupyPtx, check_ptx
    example = next(e for e in PTX_EXAMPLES if e[1] == kernel)
    report = tmp_path / "r.json"
    runs, status, error, code = check_ptx(CupyPtx(gpu), ptx_jobs([example]), seeds=2,
                                          arch=model_arch(gpu.info.compute_capability), report=str(report),
                                          gpu_info=gpu.info.as_dict())
    assert (status, error, code) == ("pass", None, 0), json.dumps(runs[0].records[:3] if runs else [])
    assert runs[0].seeds[0].records > 0 and os.path.exists(report)
    if kernel != "add_index" and kernel != "warp_ops":
        assert all(s.shared_words > 0 for s in runs[0].seeds)


def test_a_wrong_shared_word_on_the_gpu_is_caught(gpu):
    """The GPU's own capture, one word changed after the run, is reported: the comparison reads real GPU data."""
    from hwcheck.arch import model_arch
    from hwcheck.runs.ptx_run import CupyPtx, check_ptx
    from hwcheck.device.shared_capture import SHARED_PARAM

    class Changed(CupyPtx):
        def launch(self, module, decoded, kernel, grid, block, smem, args):
            res = super().launch(module, decoded, kernel, grid, block, smem, args)
            if SHARED_PARAM in res.buffers:
                res.buffers[SHARED_PARAM].reshape(2, -1)[1, 4 + 3] ^= 1      # CTA 1, tile word 3
            return res
    example = next(e for e in PTX_EXAMPLES if e[1] == "func_smem")
    runs, status, _error, _code = check_ptx(Changed(gpu), ptx_jobs([example]), seeds=1,
                                            arch=model_arch(gpu.info.compute_capability))
    assert status == "fail" and runs[0].seeds[0].shared_bad == 1
    assert runs[0].records[0]["variable"] == "func_smem_tile" and runs[0].records[0]["offset"] == 12
