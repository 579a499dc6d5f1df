"""The float instruction campaign (``hwcheck campaign --instr float``) without a GPU.

Every float form's kernel compiles with NVRTC for sm_90 and holds its instruction once; the forms
sm_80 lacks are exactly those ``FloatForm.first_sm`` names; a fake GPU that runs the
simulator agrees on every form and class; a flipped bit is reported with its warp, lane and form.
"""

import io
import re

import numpy as np
import pytest

from fake_gpu import FakeGpu
from hwcheck.campaigns.campaign import GpuRunner, build_cases, run_campaign
from hwcheck.cli.main import EXIT_USAGE, main
from hwcheck.campaigns.float_cases import F64_FORMS, FLOAT_CLASSES, FLOAT_FORMS, float_kernel, parse_form, simulate_form
from hwcheck.device.kernels import module_source
from hwcheck.device.nvrtc import NvrtcError, compile_cuda
from hwcheck.progress import Progress


def _functions(ptx):
    parts = re.split(r"\.visible \.entry ", ptx)[1:]
    return {p[:p.index("(")]: p for p in parts}


def test_every_float_kernel_compiles_for_sm90(nvrtc):
    kernels = [float_kernel(parse_form(f)) for f in FLOAT_FORMS]
    assert len({k.name for k in kernels}) == len(FLOAT_FORMS) >= 150
    c = compile_cuda(module_source(kernels), arch="sm_90", name="float_campaign.cu")
    assert c.log == "", c.log
    functions = _functions(c.ptx)
    for k in kernels:
        body = functions[k.name]
        assert body.count(k.ptx + " ") == 1, f"{k.name}: {k.ptx} appears {body.count(k.ptx + ' ')} times"
        assert k.name.encode() in c.cubin


def test_first_sm_is_where_ptxas_accepts_the_form(nvrtc):
    on80 = [parse_form(f) for f in FLOAT_FORMS if parse_form(f).first_sm == 80]
    later = [parse_form(f) for f in FLOAT_FORMS if parse_form(f).first_sm > 80]
    assert len(later) >= 10
    assert compile_cuda(module_source([float_kernel(f) for f in on80]), arch="sm_80", name="f80.cu").log == ""
    for form in later:
        with pytest.raises(NvrtcError):
            compile_cuda(float_kernel(form).source, arch="sm_80", name="later.cu")
    at86 = [f for f in later if f.first_sm == 86]
    assert compile_cuda(module_source([float_kernel(f) for f in at86]), arch="sm_86", name="f86.cu").log == ""


def test_every_case_matches_when_the_gpu_is_the_simulator():
    cases = build_cases("float")
    assert len(cases) == len(FLOAT_FORMS) * len(FLOAT_CLASSES)
    gpu = FakeGpu()
    results = run_campaign(cases, GpuRunner(gpu, cases), count=64, chunk=32,
                           progress=Progress(io.StringIO(), tty=False))
    assert len(gpu.modules) == 1 and len(gpu.launches) == 2 * len(cases)
    for r in results:
        assert r.count == 64 and r.mismatched == 0, (r.case, r.records[:1])
        assert r.compared == 2 * 32 * r.case.regs


def test_a_flipped_bit_names_the_form_warp_and_lane():
    cases = build_cases("float", variants=["cvt.rni.s64.f32", "fma.rm.f32"], classes=["ties"])
    calls = {"n": 0}

    def corrupt(name, out):
        if name == "hwcheck_float_fma_rm_f32":
            calls["n"] += 1
            if calls["n"] == 2:
                out[32 * 1 + 9] ^= 0x400000
    results = run_campaign(cases, GpuRunner(FakeGpu(corrupt=corrupt), cases), count=128, chunk=64,
                           progress=Progress(io.StringIO(), tty=False))
    assert results[0].mismatched == 0 and results[0].case.regs == 2
    rec, = results[1].records
    assert (rec.warp, rec.lane, rec.instruction) == (2 + 1, 9, "fma.rm.f32")   # chunk 1 starts at warp 2
    assert rec.actual == rec.expected ^ 0x400000
    assert set(results[1].failing_inputs[0]) == {"warp", "chunk", "a", "b", "c"}


def test_the_16bit_mufu_forms_are_campaign_forms_simulated_by_the_h200_tables():
    texts = ["ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2",
             "tanh.approx.f16", "tanh.approx.f16x2", "tanh.approx.bf16", "tanh.approx.bf16x2"]
    assert set(texts) <= set(FLOAT_FORMS)
    assert [parse_form(t).first_sm for t in texts] == [80, 80, 90, 90, 80, 80, 90, 90]
    x = np.array([0x3C00BC00, 0x7C00FC00, 0x00000001], np.uint32)   # (1, -1), (inf, -inf), (+0, 2**-24)
    assert simulate_form(parse_form("ex2.approx.f16x2"), (x,)).tolist() == [0x40003800, 0x7C000000, 0x3C003C00]
    tanh = simulate_form(parse_form("tanh.approx.f16"), (x & 0xFFFF,))
    assert tanh.tolist() == [0xBA17, 0xBC00, 0x0001]    # tanh(-1): the H200's 0xBA17; the nearest is 0xBA18


def test_forms_parse_and_reject():
    assert parse_form("cvt.rz.relu.f16x2.f32").sources == ("f32", "f32")
    assert parse_form("testp.normal.f32").dest == "pred"
    assert parse_form("tanh.approx.bf16x2").sources == ("b32",) and parse_form("ex2.approx.f16").dest == "b16"
    for bad in ("fma.rn.f128", "cvt.rn.f32.tf32", "setp.lg.f32", "ex2.approx.f32", "ex2.approx.bf16",
                "tanh.approx.ftz.f16", "cvt"):
        with pytest.raises(ValueError, match="not one warpsim models"):
            parse_form(bad)


@pytest.mark.parametrize("argv, message", [
    (["--types", "f32"], "hwcheck campaign: --shapes and --types do not apply to --instr float"),
    (["--variants", "fma.rn.f64"], "hwcheck campaign: --variants: 'fma.rn.f64' is not a form of the float campaign"),
    (["--classes", "ordinary"], "hwcheck campaign: --classes: 'ordinary' is not one of random-bits"),
])
def test_cli_float_usage_errors(capsys, argv, message):
    status = main(["campaign", "--instr", "float", "--count", "32", *argv])
    err = capsys.readouterr().err
    assert status == EXIT_USAGE and err.startswith(message) and err.count("\n") == 1, err


def test_inputs_are_reproducible_and_of_each_class():
    case = build_cases("float", variants=["add.rn.f32"], classes=["ties"])[0]
    a1 = case.inputs(64, np.random.default_rng([1, 2]))
    a2 = case.inputs(64, np.random.default_rng([1, 2]))
    assert all(np.array_equal(x, y) for x, y in zip(a1, a2))
    a, b = a1
    ea, eb = (a >> 23) & 0xFF, (b >> 23) & 0xFF
    assert np.mean((eb > 0) & (ea.astype(int) - eb.astype(int) >= 22)) > 0.5   # b is about half an ulp of a


# ---- the f64 family: hwcheck campaign --instr f64 ----------------------------------------------------------

def test_every_f64_kernel_compiles_and_sm80_lacks_only_bf16(nvrtc):
    kernels = [float_kernel(parse_form(f)) for f in F64_FORMS]
    assert len({k.name for k in kernels}) == len(F64_FORMS) >= 85 and not set(F64_FORMS) & set(FLOAT_FORMS)
    c = compile_cuda(module_source(kernels), arch="sm_90", name="f64_campaign.cu")
    assert c.log == "", c.log
    functions = _functions(c.ptx)
    for k in kernels:
        assert functions[k.name].count(k.ptx + " ") == 1, k.name
    on80 = [parse_form(f) for f in F64_FORMS if parse_form(f).first_sm == 80]
    later = [parse_form(f) for f in F64_FORMS if parse_form(f).first_sm > 80]
    assert [f.text for f in later] == ["cvt.f64.bf16", "cvt.rn.bf16.f64", "cvt.rz.bf16.f64"]
    assert compile_cuda(module_source([float_kernel(f) for f in on80]), arch="sm_80", name="d80.cu").log == ""
    for form in later:
        with pytest.raises(NvrtcError):
            compile_cuda(float_kernel(form).source, arch="sm_80", name="later.cu")


def test_every_f64_case_matches_when_the_gpu_is_the_simulator():
    cases = build_cases("f64")
    assert len(cases) == len(F64_FORMS) * len(FLOAT_CLASSES) and {c.instr for c in cases} == {"f64"}
    gpu = FakeGpu()
    results = run_campaign(cases, GpuRunner(gpu, cases), count=64, chunk=64,
                           progress=Progress(io.StringIO(), tty=False))
    for r in results:
        assert r.count == 64 and r.mismatched == 0, (r.case, r.records[:1])
        assert r.compared == 64 * r.case.regs
    assert {r.case.regs for r in results} == {1, 2}


def test_an_f64_difference_names_the_form_and_the_word():
    cases = build_cases("f64", variants=["fma.rz.f64"], classes=["specials"])

    def corrupt(name, out):
        out.view(np.uint32)[2 * 5 + 1] ^= 0x80000000           # lane 5's high word: the sign
    results = run_campaign(cases, GpuRunner(FakeGpu(corrupt=corrupt), cases), count=32, chunk=32,
                           progress=Progress(io.StringIO(), tty=False))
    rec, = results[0].records
    assert (rec.lane, rec.instruction, rec.actual) == (5, "fma.rz.f64", rec.expected ^ 0x80000000)


def test_f64_simulation_is_the_isa_model():
    x = np.array([0x3FF0000000000000, 0x7FF0000000000001], np.uint64)
    assert simulate_form(parse_form("add.rm.f64"), (x, x)).tolist() == [0x4000000000000000, 0x7FF8000000000001]
    assert simulate_form(parse_form("setp.nan.f64"), (x, x)).tolist() == [0, 1]
    assert simulate_form(parse_form("cvt.rn.f32.f64"), (x,)).tolist() == [0x3F800000, 0x7FC00000]  # NaN: quietened
    one = np.array([0x3F800000], np.uint32)
    assert simulate_form(parse_form("cvt.f64.f32"), (one,)).tolist() == [0x3FF0000000000000]


def test_cli_f64_usage_errors(capsys):
    status = main(["campaign", "--instr", "f64", "--count", "32", "--variants", "fma.rn.f32"])
    err = capsys.readouterr().err
    assert status == EXIT_USAGE and "'fma.rn.f32' is not a form of the f64 campaign" in err, err

