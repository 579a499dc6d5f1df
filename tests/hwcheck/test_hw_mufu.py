"""``hwcheck collect``: the MUFU kernels compile, and a sweep's inputs and results reach the .npz file
in order (through a fake GPU that returns each input's bits as its result: no model exists yet)."""

import io

import numpy as np
import pytest

from fake_gpu import FakeGpu
from hwcheck.cli.main import EXIT_OK, EXIT_USAGE, main
from hwcheck.device.kernels import module_source
from hwcheck.campaigns.mufu import MUFU_FORMS, collect, mufu_forms, mufu_kernel, sweep_inputs
from hwcheck.device.nvrtc import NvrtcError, compile_cuda
from hwcheck.progress import Progress


def test_every_mufu_kernel_compiles_for_sm90_and_bf16_needs_it(nvrtc):
    forms = mufu_forms()
    assert len(forms) == len(MUFU_FORMS) == 24
    c = compile_cuda(module_source([mufu_kernel(f) for f in forms]), arch="sm_90", name="mufu.cu")
    assert c.log == ""
    for f in forms:
        assert f"{f.text} " in c.ptx, f.text
    with pytest.raises(NvrtcError, match="sm_90"):
        compile_cuda(mufu_kernel(mufu_forms(["tanh.approx.bf16x2"])[0]).source, arch="sm_80", name="bf16.cu")


def test_sweeps_cover_what_they_say():
    f16, f32, f64 = mufu_forms(["ex2.approx.f16", "sin.approx.f32", "rcp.approx.ftz.f64"])
    assert np.array_equal(sweep_inputs(f16, 0, 65536, 1), np.arange(65536, dtype=np.uint32))
    assert sweep_inputs(f32, 0xFFFFFFFE, 3, 1).tolist() == [0xFFFFFFFE, 0xFFFFFFFF, 0]
    assert sweep_inputs(f64, 5, 2, 7).tolist() == [5 << 32, 12 << 32]
    x2 = sweep_inputs(mufu_forms(["ex2.approx.f16x2"])[0], 0, 65536, 1)
    assert sorted(set((x2 >> 16).tolist())) == list(range(65536)) == sorted(set((x2 & 0xFFFF).tolist()))


def test_collect_keeps_inputs_and_results_in_order():
    forms = mufu_forms(["ex2.approx.ftz.f32", "rcp.approx.ftz.f64", "tanh.approx.bf16x2"])
    gpu = FakeGpu()
    data = collect(gpu, forms, start=3, count=1000, stride=4099, chunk=256, progress=Progress(io.StringIO(), tty=False))
    assert len(gpu.modules) == 1 and len(gpu.launches) == 2 * 4 + 65536 // 256
    for f in forms:
        x, r = data[f.text]
        n = 65536 if f.type == "bf16x2" else 1000          # 16-bit forms: every pattern
        assert x.shape == r.shape == (n,) and r.dtype == x.dtype and np.array_equal(x, r), f.text


def test_collect_command_writes_npz(tmp_path, monkeypatch, capsys):
    import hwcheck.device.gpu
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", staticmethod(lambda: FakeGpu()))
    out = tmp_path / "mufu.npz"
    status = main(["collect", "--variants", "lg2.approx.f32,ex2.approx.f16", "--count", "640", "--stride", "3",
                   "--out", str(out)])
    assert status == EXIT_OK, capsys.readouterr()
    data = np.load(out)
    assert data["lg2.approx.f32:inputs"].tolist() == [3 * k for k in range(640)]
    assert data["ex2.approx.f16:results"].shape == (65536,) and "stride" in str(data["meta"])
    assert "lg2.approx.f32: 640" in capsys.readouterr().out


def test_collect_rejects_unknown_forms(capsys):
    assert main(["collect", "--variants", "exp.approx.f32", "--out", "x.npz"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("hwcheck collect: --variants: 'exp.approx.f32' is not one of the MUFU forms")
    assert err.count("\n") == 1
