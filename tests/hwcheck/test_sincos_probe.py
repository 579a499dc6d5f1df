"""``hwcheck.campaigns.sincos_probe`` offline: the whole device command against a fake SFU, its kernels through NVRTC.

The fake GPU's SFU *is* ``warpsim.isa.sfu_sincos`` with coefficients the test chooses (the shipped ones, or
others), optionally broken at chosen keys or inputs: the probe must derive the fake's coefficients, prove
them, or name what broke. Its key kernel fills the keys real inputs reach (quadrants 2 and 3: even keys
only), every ``stride``-th of them, so that the derivation runs in seconds; the slow test fills them all.
"""

import io
import json
import os

import numpy as np
import pytest

from fake_gpu import INFO, FakeCupy, HostMemory, sweep_module
from hwcheck.device.gpu import GpuModule
from hwcheck.campaigns.sincos_probe import OPS, SWEEP_FORMS, main, probe, probe_source, sample_keys
from warpsim.isa.sfu_sincos import coefficients, load_coefficients, mufu_from_keys, sincos_range


class FakeSfu(HostMemory):
    """``hwcheck.device.gpu.Gpu``'s interface; kernels computed with the model and the coefficients ``c``."""

    def __init__(self, c, stride=61, bad_keys=(), bad_inputs=()):
        self.c, self.stride = c, stride
        self.bad_keys, self.bad_inputs = dict(bad_keys), set(bad_inputs)
        self.launched = []

    def module(self, source):
        self.source = source
        return GpuModule(source, "fake", 0.0)

    def launch(self, module, name, grid, block, args, shared_mem=0):
        assert f"void {name}(" in module.raw, name           # the kernel exists in the module launched
        self.launched.append(name)
        if name.startswith("sincos_keys_"):
            table, counts, first, p = args
            is_cos = name.endswith("cos")
            keys = np.arange(0, 1 << 25, self.stride, dtype=np.uint32)
            keys = keys[(keys < (1 << 24)) | (keys % 2 == 0)]      # t >= 0.5 has no bit of weight 2**-25
            if p == 0:
                table[keys] = mufu_from_keys(keys, is_cos, self.c)
                for key, bits in self.bad_keys.items():
                    table[key] = bits
            else:
                counts[0] = keys.size
        else:
            out, start, n = args
            form = next(f for f in SWEEP_FORMS if name == f"sincos_sweep_{f.replace('.', '_')}")
            sincos_range(form.split(".")[0], int(start), out[:int(n)], ftz=".ftz" in form, c=self.c)
            for x in self.bad_inputs:
                i = (x - int(start)) & 0xFFFFFFFF
                if i < int(n):
                    out[i] ^= np.uint32(1)


def _run(tmp_path, gpu, **kw):
    log = io.StringIO()
    code = probe(gpu, str(tmp_path), sweep_start=0x3F000000, sweep_count=1 << 16, chunk_bits=14,
                 command="python -m hwcheck.campaigns.sincos_probe --out DIR", log=log, **kw)
    report = json.loads((tmp_path / "sincos-probe.json").read_text())
    return code, report, log.getvalue()


def test_a_gpu_that_follows_the_shipped_model_passes(tmp_path):
    code, report, log = _run(tmp_path, FakeSfu(coefficients()))
    assert code == 0 and report["status"] == "pass", log
    d = report["derivation"]
    assert d["equal_to_shipped"] and d["rows_differing_from_shipped"] == []
    assert all(v["mismatches"] == 0 for v in d["model_vs_keys"].values())
    assert set(report["sweep"]) == set(SWEEP_FORMS)
    assert all(v == {"inputs": 1 << 16, "start": "0x3f000000", "mismatches": 0, "first_mismatches": []}
               for v in report["sweep"].values())
    assert np.array_equal(load_coefficients(str(tmp_path / "sfu_sincos_sm90.json")), coefficients())
    with np.load(tmp_path / "sincos_keys_sample.npz") as s:
        assert np.array_equal(s["keys"], sample_keys()) and s["sin_keys"].size == s["keys"].size
    assert report["gpu"]["name"] == INFO.name and "PASS" in log


def test_other_coefficients_are_derived_and_proven(tmp_path):
    c = coefficients().copy()
    c[7] += (3, -2, 1)
    c[50] += (-1, 1, 2)
    code, report, _ = _run(tmp_path, FakeSfu(c))
    assert code == 0
    assert report["derivation"]["rows_differing_from_shipped"] == [7, 50]
    assert np.array_equal(load_coefficients(str(tmp_path / "sfu_sincos_sm90.json")), c)


def test_a_sweep_mismatch_is_named(tmp_path):
    code, report, log = _run(tmp_path, FakeSfu(coefficients(), bad_inputs=[0x3F000123]))
    assert code == 1 and report["status"] == "fail" and "FAIL" in log
    for form in SWEEP_FORMS:
        s = report["sweep"][form]
        assert s["mismatches"] == 1 and s["first_mismatches"][0]["input"] == "0x3f000123", form
        assert int(s["first_mismatches"][0]["gpu"], 16) ^ int(s["first_mismatches"][0]["model"], 16) == 1


def test_a_key_that_breaks_the_structure_fails_the_derivation(tmp_path):
    key = 61 * 1000
    good = int(mufu_from_keys(np.array([key], np.uint32), False, coefficients())[0])
    code, report, _ = _run(tmp_path, FakeSfu(coefficients(), bad_keys={key: good ^ 0x80000000}))
    assert code == 1 and report["sweep_coefficients"] == "shipped"
    assert f"sin key 0x{key:07x}" in report["derivation"]["error"]
    assert not (tmp_path / "sfu_sincos_sm90.json").exists()
    with np.load(tmp_path / "sincos_failed_segments.npz") as f:   # broken before any segment: no segment
        assert f["segments"].size == 0 and f["sin_keys_at"].size == 0


def test_a_key_off_by_one_unit_is_found(tmp_path):
    key = (5 << 17) + 61 * 7                     # a multiple of the stride, inside segment 5
    key -= key % 61
    good = int(mufu_from_keys(np.array([key], np.uint32), False, coefficients())[0])
    code, report, _ = _run(tmp_path, FakeSfu(coefficients(), bad_keys={key: good + 1}))
    assert code == 1
    d = report["derivation"]
    assert ("error" in d and "segment 5" in d["error"]) or d["model_vs_keys"]["sin"]["mismatches"] >= 1
    if "error" in d:                             # the fake breaks the key in both tables: cos reads it as segment 58
        assert d["failed_segments"] == [5, 58]
        with np.load(tmp_path / "sincos_failed_segments.npz") as f:
            assert list(f["segments"]) == [5, 58]
            at = f["sin_keys_at"]
            assert int(f["sin_keys"][np.searchsorted(at, key)]) == good + 1 and at[np.searchsorted(at, key)] == key
            assert f["sin_keys"].size == f["cos_keys"].size == 2 * 2 * (1 << 17)


@pytest.mark.slow
def test_every_key_filled_derives_the_shipped_coefficients(tmp_path):
    code, report, log = _run(tmp_path, FakeSfu(coefficients(), stride=1))
    assert code == 0, log
    assert report["derivation"]["segments_with_one_triple"] == 64
    assert report["key_tables"]["sin"]["keys_filled"] == (1 << 24) + (1 << 23)


def test_the_kernels_compile_for_sm90(nvrtc):
    from hwcheck.device.nvrtc import compile_cuda
    c = compile_cuda(probe_source(), arch="sm_90", name="sincos_probe.cu")
    for op in OPS:
        assert f"sincos_keys_{op}".encode() in c.cubin
        assert c.ptx.count(f"{op}.approx.ftz.f32") >= 2          # the key kernel and the ftz sweep
        assert f"{op}.approx.f32" in c.ptx
    assert c.ptx.count("mul.rz.f32 %f") == 2 and "0f3E22F983" in c.ptx and c.log == ""


def test_an_out_folder_that_cannot_be_made_is_named_in_one_line(tmp_path):
    from warpsim.files import WriteError
    taken = tmp_path / "a-file"
    taken.write_text("")
    with pytest.raises(WriteError,
                       match=r"^python -m hwcheck.campaigns.sincos_probe: cannot make the folder .*a-file: .*$"):
        probe(FakeSfu(coefficients()), str(taken))


def test_without_cupy_the_command_says_so_in_one_line(tmp_path, capsys):
    import importlib.util
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    assert main(["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwcheck: no CUDA GPU visible") and err.count("\n") == 1
    assert not os.listdir(tmp_path)


# ---- `hwcheck sweep --forms sin.approx.f32,...`: the shipped model against the GPU, swept only when named ------

class _SweepGpu:
    """``hwcheck sweep``'s f32 path on a GPU whose sin/cos are the model, ``bad`` inputs with the lowest bit flipped."""
    info = INFO
    cupy = FakeCupy

    def __init__(self, bad=()):
        self.bad = set(bad)

    def module(self, source):
        gpu = self

        def get_function(name):
            op, ftz = name.split("_")[1], name.endswith("_1")

            def run(grid, block, args):
                out, start, n = args
                sincos_range(op, int(start), out[:int(n)], ftz=ftz)
                for x in gpu.bad:
                    if int(start) <= x < int(start) + int(n):
                        out[x - int(start)] ^= np.uint32(1)
            return run
        return sweep_module(get_function)


@pytest.mark.parametrize("bad", [(), (0x40490FDB + 3,)])
def test_hwcheck_sweep_takes_the_sin_cos_forms_when_named(tmp_path, bad):
    from hwcheck.campaigns.mufu_sweep import SINCOS_FORMS, parse_forms, sweep, sweep_source
    forms = parse_forms(list(SINCOS_FORMS))
    assert forms == [("sin", False), ("sin", True), ("cos", False), ("cos", True)]
    assert all(f'"{f} %0, %1' in sweep_source(forms) for f in SINCOS_FORMS)
    report = tmp_path / "r.json"
    code = sweep(_SweepGpu(bad), forms, start=0x40490FDB - 1000, count=1 << 14, chunk_bits=12, report=str(report),
                 log=io.StringIO())
    data = json.loads(report.read_text())["forms"]
    assert code == (1 if bad else 0) and set(data) == set(SINCOS_FORMS)
    for form in SINCOS_FORMS:
        assert data[form]["mismatches"] == len(bad), form
        if bad:
            assert data[form]["first_mismatches"][0]["input"] == f"0x{bad[0]:08x}"
