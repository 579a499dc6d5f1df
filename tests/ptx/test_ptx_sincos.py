"""``{sin,cos}.approx{.ftz}.f32`` in the PTX interpreter: ``warpsim.isa.sfu_sincos`` element by element, decoded
because ``sfu_sincos.HARDWARE_PROOF`` names a committed H200 report that proves the model at every input;
refused, naming the command that proves it, when that flag is withdrawn (a regenerated coefficient file)."""

import json
import os

import pytest
from ptx_helpers import kernel
from test_ptx_float import LOADS, STORES, _PARAMS, check, operands, run

import warpsim.ptx
from warpsim.errors import UnsupportedType
from warpsim.isa import sfu_sincos
from warpsim.isa.sfu_sincos import sincos_batch

FORMS = ["sin.approx.f32", "sin.approx.ftz.f32", "cos.approx.f32", "cos.approx.ftz.f32"]


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_proof_is_a_committed_passing_h200_report():
    with open(os.path.join(ROOT, sfu_sincos.HARDWARE_PROOF)) as f:
        report = json.load(f)
    assert report["status"] == "pass" and "H200" in report["gpu"]["name"]
    assert report["derivation"]["equal_to_shipped"], "the coefficients derived on the GPU are not the shipped ones"
    for op in ("sin", "cos"):
        assert report["key_tables"][op]["exceptions"] == 0
        assert report["derivation"]["model_vs_keys"][op]["mismatches"] == 0
    assert {form: (r["inputs"], r["mismatches"]) for form, r in report["sweep"].items()} == {
        form: (1 << 32, 0) for form in FORMS}


@pytest.mark.parametrize("form", FORMS)
def test_refused_when_the_proof_is_withdrawn(monkeypatch, form):
    monkeypatch.setattr(sfu_sincos, "HARDWARE_PROOF", None)
    with pytest.raises(UnsupportedType, match=rf"{form.replace('.', chr(92) + '.')}: modelled .*"
                                              r"pending `PYTHONPATH=\. python -m hwcheck\.campaigns\.sincos_probe --out DIR`"):
        warpsim.ptx.load(kernel(LOADS + f"{form} %r20, %r10;" + STORES, params=_PARAMS))


@pytest.mark.parametrize("form", FORMS)
def test_the_interpreter_gives_the_model(form):
    a = operands(("f32",), "sin", 3)[0]
    a[:8] = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3F800000, 0xC0490FDB, 0x00000001]
    got, _ = run(f"{form} %r20, %r10;", a=a)
    check(got, sincos_batch(form.split(".")[0], a, ftz=".ftz" in form), form)


def test_a_modifier_sin_does_not_take_is_named():
    with pytest.raises(UnsupportedType, match=r"sin\.approx\.sat\.f32: \.sat is not a modifier of sin\.approx\.f32"):
        warpsim.ptx.load(kernel(LOADS + "sin.approx.sat.f32 %r20, %r10;" + STORES, params=_PARAMS))
