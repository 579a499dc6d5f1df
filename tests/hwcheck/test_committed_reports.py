"""The hardware evidence committed in ``conformance/h200/`` is whole, sound and current.

Each report there was written by ``hwcheck/gpu_acceptance.sh`` on an H200. These tests read them with
no GPU and check each one whole (``report_checks``): every case of ``hwcheck.campaigns.acceptance.ACCEPTANCE``
at full scale and every example program in every params combination with ``PROGRAM_SEEDS`` seeds;
totals that are the sums of their parts; registers compared = count x registers per instruction;
zero mismatches everywhere; a real GPU; module keys of today's generated code; a plausible date.
Adding a case, a type or an example, or changing generated code, without re-running the acceptance
set on hardware fails here, naming what is missing. The planted-edit tests below change one field of
a copy of a report and check that the checker rejects it.
"""

import copy
import json
import os

import pytest

from fake_gpu import FakeGpu
from hwcheck.campaigns.acceptance import ACCEPTANCE, PROGRAM_SEEDS, example_programs, run_one
from hwcheck.campaigns.campaign import build_cases
from hwcheck.device.gpu import GpuInfo, module_key
from hwcheck.device.kernels import module_source
from hwcheck.progress import Progress
from hwcheck.runs.run import KEYS, keyed_text, param_choices
from report_checks import FAKE_GPU_NAME, campaign_problems, programs_problems
from warpsim.program import load_program

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORTS = os.path.join(ROOT, "conformance", "h200")
# Reports of acceptance campaigns added after the last H200 run: until the lead commits them, their
# test is an expected failure naming the command; remove the name here with the report committed.
AWAITING_HARDWARE = set()     # reports of the acceptance set not yet run on an H200
GPU_COMMAND = "bash hwcheck/gpu_acceptance.sh conformance/h200 1.0 all"
# Example programs (or new params choices of one) added after the last H200 run of the programs report: until a
# report with their runs is committed, the report is checked without the runs it lacks of these programs, and the
# test is an expected failure naming the command. (flash_fwd's n = 512 ran on 2026-12-02: none awaits now.)
PROGRAMS_AWAITING_HARDWARE = set()
PROGRAMS_GPU_COMMAND = "python3 -m hwcheck acceptance --out OUT --only programs"
# The programs report checked against today's code: since the GPU side of `hwcheck run` is the program's PTX
# lowering (the text the simulator runs), module keys are the PTX's; the H100's run of 2026-12-06 made it. The H200's
# reports (h200-programs.json, h200-rerun-programs.json) are the CUDA lowering's, kept as the record of that path.
PROGRAMS_REPORT = os.path.join(ROOT, "conformance", "h100", "h100-80gb-hbm3-programs.json")
# Its module keys hashed the lowered PTX with the device checkout's absolute paths in its .file lines, which the
# report does not record: they are not checked (reports made since hash portable text: settings.module_keys).


def _path(name):
    return os.path.join(REPORTS, f"h200-{name}.json")


def _load(name):
    path = _path(name)
    if not os.path.exists(path) and name in AWAITING_HARDWARE:
        pytest.xfail(f"{path}: not yet run on an H200; run {GPU_COMMAND} and commit the report")
    assert os.path.exists(path), f"{path}: missing; run {GPU_COMMAND} on an H200 and commit its reports"
    with open(path) as f:
        return json.load(f)


def _expected_programs():
    expected = {}
    for path in example_programs():
        program = load_program(path)
        for params in param_choices(program, {}, sweep=True):
            expected[(program.name, tuple(sorted((k, str(v)) for k, v in params.items())))] = (program, params)
    return expected


@pytest.mark.parametrize("name, instr, options, count", ACCEPTANCE, ids=[a[0] for a in ACCEPTANCE])
def test_campaign_report_is_whole_and_sound(name, instr, options, count):
    problems = campaign_problems(_load(name), f"h200-{name}", instr, options, count)
    assert not problems, "\n".join(problems)


def _checked_programs(report):
    """``(expected runs, runs awaiting hardware)``: today's example runs less those of the programs in
    ``PROGRAMS_AWAITING_HARDWARE`` that the report does not hold."""
    expected = _expected_programs()
    held = {(run["name"], tuple(sorted((k, str(v)) for k, v in (run.get("params") or {}).items())))
            for run in report["runs"]}
    awaiting = {key for key in expected if key[0] in PROGRAMS_AWAITING_HARDWARE and key not in held}
    return {key: value for key, value in expected.items() if key not in awaiting}, awaiting


@pytest.fixture(scope="module")
def programs():
    """The committed programs report, the runs it should hold, those awaiting hardware, and the problems the checker
    finds in it as committed: found once for the tests below (the same report, the same answer; tracing and lowering
    every run took ~9 s a time)."""
    with open(PROGRAMS_REPORT) as f:
        report = json.load(f)
    expected, awaiting = _checked_programs(report)
    return report, expected, awaiting, programs_problems(report, expected, PROGRAM_SEEDS)


def test_programs_report_is_whole_and_sound(programs):
    _report, _expected, awaiting, problems = programs
    assert not problems, "\n".join(problems)
    if awaiting:
        names = sorted({f"{name} " + " ".join(f"{k}={v}" for k, v in params) for name, params in awaiting})
        pytest.xfail(f"{len(names)} program runs not yet made on an H200 ({names[0]}, ...); run "
                     f"{PROGRAMS_GPU_COMMAND} and commit its OUT/*-programs.json as {PROGRAMS_REPORT}")


def _set(report, path, value):
    """``report`` with the field at ``path`` (keys and list indices) replaced by ``value(old)``."""
    out = copy.deepcopy(report)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value(node[path[-1]])
    return out


CAMPAIGN_EDITS = {
    "halved instruction total": (("totals", "instructions"), lambda v: v // 2),
    "halved registers total": (("totals", "registers_compared"), lambda v: v // 2),
    "a case compares one register": (("cases", 0, "registers_compared"), lambda v: 1),
    "a case's count": (("cases", 0, "count"), lambda v: v - 1),
    "a case mismatches": (("cases", 3, "mismatched_registers"), lambda v: 7),
    "a case mismatches a warp": (("cases", 3, "mismatched_warps"), lambda v: 1),
    "a case keeps a record": (("cases", 1, "mismatches"), lambda v: [{"lane": 0}]),
    "an instruction mismatches": (("instructions", 0, "mismatched_registers"), lambda v: 7),
    "an instruction's count": (("instructions", 1, "count"), lambda v: v + 1),
    "the total mismatches": (("totals", "mismatched_registers"), lambda v: 7),
    "a case missing": (("cases",), lambda v: v[1:]),
    "cases run": (("totals", "cases_run"), lambda v: v - 1),
    "status": (("status",), lambda v: "fail"),
    "an error": (("error",), lambda v: "hwcheck: boom"),
    "a 2019 date": (("date",), lambda v: "2019-05-01T00:00:00+00:00"),
    "a date in the future": (("date",), lambda v: "2031-01-01T00:00:00+00:00"),
    "no date": (("date",), lambda v: "yesterday"),
    "a garbage module key": (("settings", "module_key"), lambda v: "0123456789abcdef"),
    "count per case": (("settings", "count_per_case"), lambda v: v + 1),
    "simulator model": (("settings", "simulator_arch"), lambda v: "sm80"),
    "arch sm_80": (("gpu", "arch"), lambda v: "sm_80"),
    "compute capability 80": (("gpu", "compute_capability"), lambda v: "80"),
    "the offline fake": (("gpu", "name"), lambda v: FAKE_GPU_NAME),
    "no driver": (("gpu", "driver_version"), lambda v: None),
    "no GPU memory": (("gpu", "memory_bytes"), lambda v: 0),
}


@pytest.mark.parametrize("edit", sorted(CAMPAIGN_EDITS))
def test_a_planted_edit_of_a_campaign_report_is_caught(edit):
    name, instr, options, count = ACCEPTANCE[0]
    report = _load(name)
    assert not campaign_problems(report, name, instr, options, count)
    path, value = CAMPAIGN_EDITS[edit]
    assert campaign_problems(_set(report, path, value), name, instr, options, count), f"{edit} was not caught"


PROGRAM_EDITS = {
    "a run with 5 mismatches under totals of 0": (("runs", 0, "mismatched_registers"), lambda v: 5),
    "a seed with a mismatch": (("runs", 1, "seeds", 4, "mismatched_registers"), lambda v: 5),
    "a seed's smem mismatch": (("runs", 1, "seeds", 4, "mismatched_smem_words"), lambda v: 1),
    "a seed compares fewer registers": (("runs", 2, "seeds", 0, "registers_compared"), lambda v: v - 1),
    "a seed missing": (("runs", 0, "seeds"), lambda v: v[1:]),
    "seeds run": (("runs", 0, "seeds_run"), lambda v: v - 1),
    "a run's module key": (("runs", 0, "module_key"), lambda v: "0123456789abcdef"),
    "a run missing": (("runs",), lambda v: v[1:]),
    "halved register total": (("totals", "registers_compared"), lambda v: v // 2),
    "total runs": (("totals", "runs"), lambda v: v + 1),
    "global mismatch total": (("totals", "mismatched_global_elements"), lambda v: 3),
    "the offline fake": (("gpu", "name"), lambda v: FAKE_GPU_NAME),
    "a 2019 date": (("date",), lambda v: "2019-05-01T00:00:00+00:00"),
    "status": (("status",), lambda v: "fail"),
    "a kept record": (("runs", 0, "mismatches"), lambda v: [{"seed": 0}]),
}


def test_portable_module_keys_are_checked(programs):
    """A report with portable keys (what ``hwcheck run`` writes now) has each run's key checked against today's
    lowering: the committed report re-keyed so passes, and a garbage key in it is caught."""
    from report_checks import _lowered
    report, expected, _awaiting, _problems = programs
    rekeyed = copy.deepcopy(report)
    rekeyed["settings"]["module_keys"] = KEYS
    gpu = rekeyed["gpu"]
    for run in rekeyed["runs"]:
        program, params = expected[(run["name"], tuple(sorted((k, str(v)) for k, v in run["params"].items())))]
        low = _lowered(program.trace(params, mode="vector"))
        run["module_key"] = module_key(keyed_text(low.text), gpu["arch"], gpu["cupy_version"])
    assert not programs_problems(rekeyed, expected, PROGRAM_SEEDS)
    rekeyed["runs"][0]["module_key"] = "0123456789abcdef"
    assert any("module_key" in p for p in programs_problems(rekeyed, expected, PROGRAM_SEEDS))


@pytest.mark.parametrize("edit", sorted(PROGRAM_EDITS))
def test_a_planted_edit_of_the_programs_report_is_caught(edit, programs):
    report, expected, _awaiting, problems = programs
    assert not problems
    path, value = PROGRAM_EDITS[edit]
    if edit == "a run's module key" and report["settings"].get("module_keys") != KEYS:
        pytest.skip("the committed report's module keys hash the device checkout's paths: not checked (see above)")
    assert programs_problems(_set(report, path, value), expected, PROGRAM_SEEDS), f"{edit} was not caught"


@pytest.fixture(scope="module")
def evidence_report(tmp_path_factory):
    """A small evidence campaign on the fake GPU (the sm90 model), dressed as the H200 run would write
    it: the checker must pass it (so it passes the real one) and reject planted edits of its variants."""
    gpu_info = dict(_load("mma-m16n8k16")["gpu"])
    info = GpuInfo(**gpu_info)
    options = {"shapes": ["m16n8k16"], "classes": ["frac-bits", "block", "floor"]}
    cases = build_cases("mma", **options)
    path = str(tmp_path_factory.mktemp("evidence") / "evidence.json")
    run_one(FakeGpu(info=info), cases, count=64, chunk=64, report=path,
            progress=Progress(open(os.devnull, "w"), tty=False))
    with open(path) as f:
        report = json.load(f)
    source = module_source([c.kernel for c in cases])
    report["settings"]["module_key"] = module_key(source, info.arch, info.cupy_version)   # the fake's is "fake"
    return report, options


EVIDENCE_EDITS = {
    "a variant's count": (("model_variants", "mismatched_registers", "ez_f32=-134"), lambda v: v + 1),
    "a variant not ruled out": (("model_variants", "ruled_out"), lambda v: v[1:]),
    "a case's variant count": (("cases", 0, "variant_mismatched_registers", "block=8"), lambda v: v + 5),
    "a variant missing": (("cases", 0, "variant_mismatched_registers"),
                          lambda v: {k: n for k, n in v.items() if k != "frac_bits=24"}),
}


def test_the_checker_passes_an_evidence_report_that_rules_out_every_neighbour(evidence_report):
    report, options = evidence_report
    assert not campaign_problems(report, "evidence", "mma", options, 64)
    assert report["model_variants"]["not_ruled_out"] == []


@pytest.mark.parametrize("edit", sorted(EVIDENCE_EDITS))
def test_a_planted_edit_of_an_evidence_report_is_caught(edit, evidence_report):
    report, options = evidence_report
    path, value = EVIDENCE_EDITS[edit]
    assert campaign_problems(_set(report, path, value), "evidence", "mma", options, 64), f"{edit} was not caught"


def test_a_variant_the_gpu_does_not_rule_out_fails(evidence_report):
    report, options = evidence_report
    zeroed = copy.deepcopy(report)
    for row in zeroed["cases"]:
        row["variant_mismatched_registers"]["ez_f16=-22"] = 0
    zeroed["model_variants"]["mismatched_registers"]["ez_f16=-22"] = 0
    zeroed["model_variants"]["ruled_out"].remove("ez_f16=-22")
    zeroed["model_variants"]["not_ruled_out"] = ["ez_f16=-22"]
    problems = campaign_problems(zeroed, "evidence", "mma", options, 64)
    assert problems == ["evidence.json: the GPU does not rule out ['ez_f16=-22']"]
