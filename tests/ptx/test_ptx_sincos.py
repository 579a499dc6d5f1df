"""``{sin,cos}.approx{.ftz}.f32`` in the PTX interpreter: refused until the H200 proof is recorded, then
``warpsim.isa.sfu_sincos`` element by element (the proof's flag is set by the test alone)."""

import pytest
from ptx_helpers import kernel
from test_ptx_float import LOADS, STORES, _PARAMS, check, operands, run

import warpsim.ptx
from warpsim.errors import UnsupportedType
from warpsim.isa import sfu_sincos
from warpsim.isa.sfu_sincos import sincos_batch

FORMS = ["sin.approx.f32", "sin.approx.ftz.f32", "cos.approx.f32", "cos.approx.ftz.f32"]


@pytest.mark.parametrize("form", FORMS)
def test_refused_while_the_proof_is_pending(form):
    assert sfu_sincos.HARDWARE_PROOF is None
    with pytest.raises(UnsupportedType, match=rf"{form.replace('.', chr(92) + '.')}: modelled .*"
                                              r"pending `PYTHONPATH=\. python -m hwcheck\.sincos_probe --out DIR`"):
        warpsim.ptx.load(kernel(LOADS + f"{form} %r20, %r10;" + STORES, params=_PARAMS))


@pytest.mark.parametrize("form", FORMS)
def test_once_proven_the_interpreter_gives_the_model(monkeypatch, form):
    monkeypatch.setattr(sfu_sincos, "HARDWARE_PROOF", "test: the flag alone")
    a = operands(("f32",), "sin", 3)[0]
    a[:8] = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3F800000, 0xC0490FDB, 0x00000001]
    got, _ = run(f"{form} %r20, %r10;", a=a)
    check(got, sincos_batch(form.split(".")[0], a, ftz=".ftz" in form), form)


def test_a_modifier_sin_does_not_take_is_named(monkeypatch):
    monkeypatch.setattr(sfu_sincos, "HARDWARE_PROOF", "test: the flag alone")
    with pytest.raises(UnsupportedType, match=r"sin\.approx\.sat\.f32: \.sat is not a modifier of sin\.approx\.f32"):
        warpsim.ptx.load(kernel(LOADS + "sin.approx.sat.f32 %r20, %r10;" + STORES, params=_PARAMS))
