"""A shared-memory operand of a ``wgmma.mma_async`` overwritten before the ``wgmma.wait_group`` that covers it is a race
(the GPU's tensor cores may read the new bytes): warpsim stops there, naming the write. The kernel is CuTe DSL's
Hopper GEMM tile (examples/cute_dsl/wgmma_gemm_dsl.py) with its in-loop ``wgmma.wait_group 0`` taken out, as a
pipeline that releases a stage too early would be; with it in place the same launch is clean."""

import os
import re

import numpy as np
import pytest

from warpsim.errors import SimulatorFault

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _dsl_text():
    pytest.importorskip("cutlass.cute", reason="CuTe DSL is not installed (pip install 'warpsim[dsl]')")
    from warpsim.frontends.kernel import open_kernel
    k = open_kernel(os.path.join(ROOT, "examples", "cute_dsl", "wgmma_gemm_dsl.py"), "wgmma_kernel", arch="sm_90")
    return k.module.text, k.name


def _args(depth):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, depth)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, depth)).astype(np.float16)
    return {"a": [("u64", a), ("s32", depth), ("s32", depth)], "b": [("u64", b), ("s32", depth), ("s32", depth)],
            "c": np.zeros((64, 64), np.float32)}


def _params(module, name, args):
    """The arguments by PTX parameter name; the DSL passes ``c`` too as a struct (its pointer alone)."""
    values = [[("u64", v)] if isinstance(v, np.ndarray) else v for v in args.values()]
    return dict(zip([p[0] for p in module.params(name)], values))


def test_a_stage_overwritten_before_wait_group_is_a_race_naming_the_write():
    from warpsim import ptx
    text, name = _dsl_text()
    waits = re.findall(r"^\s*wgmma\.wait_group\.sync\.aligned\s+0;.*$", text, flags=re.MULTILINE)
    assert waits                                     # the K loop's, unrolled by two, and its remainder's
    good = ptx.load(text)
    good.launch(name, grid=1, block=128, smem=16384, args=_params(good, name, _args(128)))     # clean
    bad = ptx.load(text.replace(waits[0], "", 1))     # the first k-tile's wait: the second's cp.async comes too soon
    with pytest.raises(SimulatorFault, match=r"cp\.async.*: writes shared 0x[0-9a-f]+ \(16 bytes\), which a "
                                             r"wgmma\.mma_async not yet waited for reads"):
        bad.launch(name, grid=1, block=128, smem=16384, args=_params(bad, name, _args(128)))
