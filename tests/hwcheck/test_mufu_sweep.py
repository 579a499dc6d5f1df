"""``hwcheck sweep`` offline: form names, the div pairs, the 16-bit and f64 paths' comparisons and their reports."""

import io
import json

import numpy as np
import pytest

import hwcheck.campaigns.mufu
from fake_gpu import INFO, FakeCupy, sweep_module
from hwcheck.campaigns.mufu_sweep import (DIV_FORMS, HALF_FORMS, SWEEP_FORMS, div_pairs, low_words, parse_forms, sweep,
                                          sweep_source)
from warpsim.isa.mufu16 import float_mufu16
from warpsim.isa.mufu_recip import rcp64h_range


def test_every_form_parses_and_has_a_kernel():
    forms = parse_forms(SWEEP_FORMS + DIV_FORMS + HALF_FORMS)
    src = sweep_source(forms)
    for text in SWEEP_FORMS + DIV_FORMS:
        assert f'"{text} %0, %1' in src
    assert ("div.full", True) in forms and ("tanh.approx.bf16x2", False) in forms


def test_an_unknown_form_is_named():
    with pytest.raises(ValueError, match=r"--forms: 'tan.approx.f32' is not one of the swept forms"):
        parse_forms(["tan.approx.f32"])


def test_div_pairs_are_reproducible_and_cover_the_classes():
    a, b = div_pairs(7, 1 << 16)
    a2, b2 = div_pairs(7, 1 << 16)
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    e = (b >> np.uint32(23)) & np.uint32(0xFF)
    assert np.mean(e >= 252) > 0.15 and np.mean(e <= 2) > 0.15
    assert np.isin(b, [0, 0x7F800000, 0x7FC00000]).any()


class _Gpu:
    info = INFO


@pytest.mark.parametrize("corrupt", [False, True])
def test_the_16_bit_path_counts_what_differs(monkeypatch, tmp_path, corrupt):
    def fake_collect(gpu, forms):
        form = forms[0]
        x = np.arange(65536, dtype=np.uint32)
        y = float_mufu16("tanh", x, type="bf16")
        if corrupt:
            y[100:103] ^= np.uint32(1)
        return {form.text: (x, y)}
    monkeypatch.setattr(hwcheck.campaigns.mufu, "collect", fake_collect)
    report = tmp_path / "r.json"
    code = sweep(_Gpu(), parse_forms(["tanh.approx.bf16"]), report=str(report), log=io.StringIO())
    data = json.loads(report.read_text())["forms"]["tanh.approx.bf16"]
    assert (code, data["inputs"], data["mismatches"]) == ((1, 65536, 3) if corrupt else (0, 65536, 0))
    if corrupt:
        assert data["first_mismatches"][0]["input"] == "0x00000064"


# ---- rcp.approx.ftz.f64: every high word, each with its own low word (the model is UNPROVEN) ----------------

def test_the_f64_kernel_compiles_and_reads_both_words(nvrtc):
    from hwcheck.device.nvrtc import compile_cuda
    c = compile_cuda(sweep_source(parse_forms(["rcp.approx.ftz.f64", "rcp.approx.f32"])), arch="sm_90",
                     name="sweep.cu")
    assert "rcp.approx.ftz.f64" in c.ptx and "rcp.approx.f32" in c.ptx


class _F64Gpu(_Gpu):
    """A GPU whose rcp.approx.ftz.f64 is the model, with ``bad`` high words given a wrong high or low word."""
    cupy = FakeCupy

    def __init__(self, bad=()):
        self.bad = dict(bad)

    def module(self, source):
        assert "sweep_rcp64" in source
        gpu = self

        def run(grid, block, args):
            hi, lo, start, n = args
            rcp64h_range(int(start), hi[:int(n)])
            lo[:int(n)] = 0
            for h, (dhi, dlo) in gpu.bad.items():
                if int(start) <= h < int(start) + int(n):
                    hi[h - int(start)] ^= dhi
                    lo[h - int(start)] ^= dlo
        return sweep_module(lambda name: run)


@pytest.mark.parametrize("bad", [(), ((0x3FF00005, (1, 0)), (0x40000000 + 70000, (0, 4)))])
def test_the_f64_path_counts_high_and_low_word_differences(tmp_path, bad):
    report = tmp_path / "r.json"
    code = sweep(_F64Gpu(bad), parse_forms(["rcp.approx.ftz.f64"]), start=0x3FF00000, count=1 << 21,
                 chunk_bits=19, report=str(report), log=io.StringIO())
    data = json.loads(report.read_text())["forms"]["rcp.approx.ftz.f64"]
    assert (code, data["inputs"], data["mismatches"]) == (1 if bad else 0, 1 << 21, len(bad))
    if bad:
        first = data["first_mismatches"]
        assert first[0]["input"].startswith("0x3ff00005") and first[1]["gpu"].endswith("00000004")
        assert int(first[0]["input"], 16) & 0xFFFFFFFF == int(low_words(np.array([0x3FF00005], np.uint32))[0])
