"""The integer instruction-form campaign (``hwcheck campaign --instr int``) offline, and on a GPU where there is one.

Offline: every form ``hwcheck fuzz`` emits has a kernel; the module of every form assembles with ``ptxas`` for
sm_90 and loads in the PTX interpreter; a stand-in GPU that runs the interpreter agrees on every class; a
planted disagreement is counted and its records name the operands; the command writes its report and refuses
bad options with exit status 2. On a GPU (``-m gpu``): a few forms run end to end.
"""

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from fake_gpu import HostMemory
from hwcheck.campaigns.campaign import build_cases, make_runner, run_campaign
from hwcheck.cli.main import EXIT_USAGE, main
from hwcheck.errors import HwcheckError
from hwcheck.device.gpu import GpuModule
from hwcheck.campaigns.int_cases import (EDGE32, FIELDS, INT_FORMS, IntCase, form_ptx, module_ptx, select_forms,
                                         simulator_module)
from hwcheck.campaigns.ptx_fuzz import program

IN_CI = os.environ.get("CI") == "true"
_FEW = ["bfe.s32", "bfi.b64", "prmt.b32.f4e", "setp.lt.and.s32 p|q", "cvt.sat.u8.s32", "mul.wide.s32", "shr.s64",
        "selp.b64", "popc.b64"]


class PtxStandIn(HostMemory):
    """A stand-in for :class:`hwcheck.device.gpu.Gpu` that runs the PTX module in the interpreter; ``corrupt(name, inp,
    out)`` may change a launch's output in place."""

    def __init__(self, corrupt=None):
        self.corrupt = corrupt
        self.launches = []

    def ptx_module(self, text):
        from warpsim import ptx
        return GpuModule(ptx.load(text, filename="<stand-in>"), "fake", 0.0)

    def launch(self, module, name, grid, block, args, shared_mem=0):
        inp, out, count = args
        assert isinstance(count, np.uint32) and grid * block >= int(count) and inp.dtype == np.uint64
        self.launches.append(name)
        res = module.raw.launch(name, grid=(grid, 1, 1), block=(block, 1, 1),
                                args={"inp": inp, "out": out, "count": int(count)}, quiet=True)
        out[:] = res.buffers["out"]
        if self.corrupt is not None:
            self.corrupt(name, inp, out)


def _form_of(line: str):
    """The form name of one instruction line of a fuzz program, or None for what the campaign leaves out."""
    m = re.match(r"\s*(?:@!?%\w+\s+)?([a-z][\w.]*)\s+(.*);", line)
    if not m:
        return None
    op, rest = m.groups()
    if op.split(".")[0] in ("ld", "st", "mov", "cvta", "bra", "ret", "shfl", "vote"):
        return None
    return f"{op} p|q" if op.startswith("setp") and "|" in rest.split(",")[0] else op


def test_every_form_the_fuzz_generator_emits_has_a_kernel():
    seen = {f for s in range(400) for line in program(s).text.splitlines() if (f := _form_of(line))}
    assert len(seen) > 100
    assert sorted(seen - set(INT_FORMS)) == []


def test_forms_and_globs():
    assert len(INT_FORMS) > 400
    assert select_forms(["bfe.??2", "bfe.??4"]) == ["bfe.u32", "bfe.s32", "bfe.u64", "bfe.s64"]
    assert INT_FORMS["bfe.s32 imm 40,7"].kernel == "int_bfe_s32_imm_40_7"
    assert "bfe.s32 %r7, %r0, 40, 7;" in form_ptx(INT_FORMS["bfe.s32 imm 40,7"])
    assert "cvt.sat.u32.u8" not in INT_FORMS and "cvt.sat.u8.u32" in INT_FORMS   # ptxas: .sat only where it can act
    with pytest.raises(ValueError, match="'nope.*' matches no integer form"):
        select_forms(["nope.*"])
    assert [c.cls for c in build_cases("int", forms=["bfe.u32"])] == ["directed", "random"]


def test_each_kernel_holds_its_instruction_once():
    for name, form in INT_FORMS.items():
        body = form_ptx(form)
        dest = re.escape(f"  {form.text} ") + r"(%r7|%rd7|%p7|%p6\|%p7), "
        assert len(re.findall(dest, body)) == 1, name


def test_directed_operands_cross_edges_with_every_field():
    rows = IntCase("bfe.s32", "directed").inputs(None, None)
    assert len(rows) == len(EDGE32) * len(FIELDS) ** 2
    assert set(range(71)) | set(range(250, 261)) <= set(rows[:, 1].tolist()) == set(rows[:, 2].tolist())
    assert {0x7FFFFFFF, 0x80000000, 0xFFFFFFFF} <= set(rows[:, 0].tolist())
    # past the end the last row repeats, so that a chunk fills whole warps
    case = IntCase("add.u32", "directed")
    tail = case.inputs(40, None, first=case.planned(0) - 8)
    assert (tail[8:] == tail[7]).all()


def test_the_module_of_every_form_assembles_for_sm90(tmp_path):
    if shutil.which("ptxas") is None:
        if IN_CI:
            pytest.fail("ptxas not found (required in CI)")
        pytest.skip("ptxas (CUDA toolkit) not found on PATH")
    path = tmp_path / "int_forms.ptx"
    path.write_text(module_ptx(list(INT_FORMS)))
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", os.devnull], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[:2000]


def test_the_interpreter_loads_every_form():
    assert sorted(simulator_module(tuple(INT_FORMS)).kernels) == sorted(f.kernel for f in INT_FORMS.values())


def test_stand_in_gpu_agrees_on_every_class(request):
    """Every class of a few forms; bfi.b64's directed class, exhaustive over its fields (462,400 operand sets: ~10 s
    of the test's 17 on 2 cores), with --slow (bfe.s32's directed class stands for the bit fields by default)."""
    cases = [c for c in build_cases("int", forms=_FEW)
             if request.config.getoption("--slow") or (c.form_name, c.cls) != ("bfi.b64", "directed")]
    assert len(cases) >= 2 * len(_FEW) - 1
    results = run_campaign(cases, make_runner(PtxStandIn(), cases), count=64, chunk=4096)
    assert [r.mismatched for r in results] == [0] * len(cases)
    assert all(r.compared == r.count * r.case.regs for r in results)
    directed = {r.case.form_name: r.count for r in results if r.case.cls == "directed"}
    assert directed["bfe.s32"] == len(EDGE32) * len(FIELDS) ** 2 // 32 * 32 + 32 * bool(len(EDGE32) % 32)


def test_a_disagreement_names_the_operands():
    def flip(name, inp, out):   # the "GPU" differs wherever operand a is 7
        if name == INT_FORMS["shr.s64"].kernel:
            words = out.reshape(-1, 2)
            words[inp[:, 0] == 7, 0] ^= 1
    cases = build_cases("int", forms=["shr.s64"], classes=["directed"])
    [r] = run_campaign(cases, make_runner(PtxStandIn(flip), cases), count=1, chunk=1024)
    assert r.mismatched == len(FIELDS)
    record = r.records[0].as_dict()
    assert record["operands"].startswith("a=0x0000000000000007 b=0x00000000") and record["instruction"] == "shr.s64"
    assert "[a=0x0000000000000007" in str(r.records[0])


def test_cli_report_and_usage_errors(monkeypatch, tmp_path, capsys):
    import hwcheck.device.gpu
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: PtxStandIn()))
    report = tmp_path / "int.json"
    assert main(["campaign", "--instr", "int", "--forms", "bfe.s32,clz.*", "--classes", "random", "--count", "64",
                 "--report", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["settings"]["instr"] == "int"
    assert [c["instruction"] for c in data["cases"]] == ["clz.b32", "clz.b64", "bfe.s32"]   # table order
    assert "bfe.s32" in capsys.readouterr().out
    for argv in (["--instr", "float", "--forms", "bfe.*", "--count", "32"],
                 ["--instr", "int", "--forms", "nope.*"],
                 ["--instr", "int", "--variants", "x1"],
                 ["--instr", "mma"]):
        assert main(["campaign", *argv]) == EXIT_USAGE
        assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.gpu
def test_a_few_forms_on_the_gpu():
    from hwcheck.device.gpu import Gpu
    try:
        gpu = Gpu.open()
    except HwcheckError as e:
        pytest.skip(str(e))
    cases = build_cases("int", forms=["add.u32", "prmt.b32", "setp.lt.s32", "cvt.s8.s32", "mul.hi.u64"])
    results = run_campaign(cases, make_runner(gpu, cases), count=1024)
    assert [(r.case.label, r.case.cls, r.mismatched) for r in results] == \
        [(c.label, c.cls, 0) for c in cases]
