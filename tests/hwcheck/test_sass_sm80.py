"""What carries from the H200 to sm_80: ptxas makes the same SASS of every SFU form for sm_80 as for sm_90.

warpsim's MUFU models come from the H200 (sm_90). On an A100 (sm_80) they hold only if (1) ptxas emits
the same instructions around the SFU and (2) the A100's SFU gives the same bits. This file proves (1)
offline for every form the models cover (docs/numerics.md, "What carries to sm_80"); (2) needs an A100.
Needs ptxas (CUDA toolkit) and nvdisasm (PyPI ``nvidia-cuda-nvdisasm``, a test dependency); in CI both must
be present, elsewhere the tests skip and say which is missing.
"""

import os

import pytest

from hwcheck.device.sass import arithmetic, find_tool, form_arithmetic

MISSING = [t for t in ("ptxas", "nvdisasm") if find_tool(t) is None]
pytestmark = pytest.mark.skipif(bool(MISSING) and os.environ.get("CI") != "true",
                                reason=f"needs {' and '.join(MISSING)} (nvdisasm: pip install nvidia-cuda-nvdisasm)")

# (PTX instruction, operand type, operands): every form warpsim models from the H200's SFU
SFU_FORMS = [(f"{op}.approx{ftz}.f32", "f32", 1) for op in ("ex2", "rcp", "rsqrt", "sqrt", "lg2", "sin", "cos")
             for ftz in (".ftz", "")]
SFU_FORMS += [("tanh.approx.f32", "f32", 1), ("rcp.approx.ftz.f64", "f64", 1)]
SFU_FORMS += [(f"div.{kind}{ftz}.f32", "f32", 2) for kind in ("approx", "full") for ftz in (".ftz", "")]
SFU_FORMS += [(f"{op}.approx.{t}", t, 1) for op in ("ex2", "tanh") for t in ("f16", "f16x2")]


@pytest.mark.parametrize("form, operand_type, arity", SFU_FORMS, ids=[f[0] for f in SFU_FORMS])
def test_sm80_runs_the_same_sass_as_sm90(form, operand_type, arity):
    sm90 = form_arithmetic(form, operand_type, arity, "sm_90")
    sm80 = form_arithmetic(form, operand_type, arity, "sm_80")
    assert any(s.startswith("MUFU.") for s in sm90), f"{form}: no MUFU in the sm_90 SASS {sm90}"
    assert sm80 == sm90, f"{form}: sm_80 SASS {sm80} differs from sm_90 {sm90}"


def test_the_comparison_sees_a_difference():
    """The renaming keeps what matters: a different modifier or constant is a different sequence."""
    one = arithmetic(["FMUL.RZ R2, R2, 0.15915493667125701904 ;", "MUFU.SIN R3, R2 ;"])
    assert one == ["FMUL.RZ r0, r0, 0.15915493667125701904", "MUFU.SIN r1, r0"]
    assert one != arithmetic(["FMUL R2, R2, 0.15915493667125701904 ;", "MUFU.SIN R3, R2 ;"])
    assert one != arithmetic(["FMUL.RZ R2, R2, 0.15915493667125701904 ;", "MUFU.COS R3, R2 ;"])
    assert one == arithmetic(["FMUL.RZ R7, R7, 0.15915493667125701904 ;", "MUFU.SIN R9, R7 ;"])


def test_the_probe_records_the_sass_through_this_module():
    """``hwcheck.campaigns.mufu32_probe`` writes each form's SASS (its sass.txt) with :mod:`hwcheck.device.sass`."""
    from hwcheck.campaigns.mufu32_probe import _sass
    logged = []
    text = _sass(("rcp.approx.ftz.f32", "div.full.f32"), logged.append)
    assert "== rcp.approx.ftz.f32\n" in text and "MUFU.RCP" in text and "== div.full.f32\n" in text
    assert not logged
