"""``hwcheck sweep`` offline: form names, the div pairs, the 16-bit path's comparison and its report."""

import io
import json

import numpy as np
import pytest

import hwcheck.mufu
from hwcheck.mufu_sweep import DIV_FORMS, HALF_FORMS, SWEEP_FORMS, div_pairs, parse_forms, sweep, sweep_source
from warpsim.isa.mufu16 import float_mufu16


def test_every_form_parses_and_has_a_kernel():
    forms = parse_forms(SWEEP_FORMS + DIV_FORMS + HALF_FORMS)
    src = sweep_source(forms)
    for text in SWEEP_FORMS + DIV_FORMS:
        assert f'"{text} %0, %1' in src
    assert ("div.full", True) in forms and ("tanh.approx.bf16x2", False) in forms


def test_an_unknown_form_is_named():
    with pytest.raises(ValueError, match=r"--forms: 'sin.approx.f32' is not one of the swept forms"):
        parse_forms(["sin.approx.f32"])


def test_div_pairs_are_reproducible_and_cover_the_classes():
    a, b = div_pairs(7, 1 << 16)
    a2, b2 = div_pairs(7, 1 << 16)
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    e = (b >> np.uint32(23)) & np.uint32(0xFF)
    assert np.mean(e >= 252) > 0.15 and np.mean(e <= 2) > 0.15
    assert np.isin(b, [0, 0x7F800000, 0x7FC00000]).any()


class _Gpu:
    info = type("Info", (), {"as_dict": lambda self: {"name": "fake"}})()


@pytest.mark.parametrize("corrupt", [False, True])
def test_the_16_bit_path_counts_what_differs(monkeypatch, tmp_path, corrupt):
    def fake_collect(gpu, forms):
        form = forms[0]
        x = np.arange(65536, dtype=np.uint32)
        y = float_mufu16("tanh", x, type="bf16")
        if corrupt:
            y[100:103] ^= np.uint32(1)
        return {form.text: (x, y)}
    monkeypatch.setattr(hwcheck.mufu, "collect", fake_collect)
    report = tmp_path / "r.json"
    code = sweep(_Gpu(), parse_forms(["tanh.approx.bf16"]), report=str(report), log=io.StringIO())
    data = json.loads(report.read_text())["forms"]["tanh.approx.bf16"]
    assert (code, data["inputs"], data["mismatches"]) == ((1, 65536, 3) if corrupt else (0, 65536, 0))
    if corrupt:
        assert data["first_mismatches"][0]["input"] == "0x00000064"
