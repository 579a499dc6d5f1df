"""The hardware evidence committed in ``conformance/h200/`` is whole and current.

Each report there was written by ``hwcheck/gpu_acceptance.sh`` on an H200. These tests read them with
no GPU and check that they still cover what the code defines today: every case of
``hwcheck.acceptance.ACCEPTANCE`` at full scale, every example program in every params combination
with ``PROGRAM_SEEDS`` seeds, all passed with zero mismatches. Adding a case, a type or an example
without re-running the acceptance set on hardware fails here, naming what is missing.
"""

import json
import os

import pytest

from hwcheck.acceptance import ACCEPTANCE, PROGRAM_SEEDS, example_programs
from hwcheck.campaign import build_cases
from hwcheck.cases import LDMATRIX_CLASS
from hwcheck.run import param_choices
from warpsim.program import load_program

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORTS = os.path.join(ROOT, "conformance", "h200")


def _load(name):
    path = os.path.join(REPORTS, f"h200-{name}.json")
    assert os.path.exists(path), f"{path}: missing; run hwcheck/gpu_acceptance.sh on an H200 and commit its reports"
    with open(path) as f:
        return json.load(f)


@pytest.mark.parametrize("name, instr, options, count", ACCEPTANCE, ids=[a[0] for a in ACCEPTANCE])
def test_campaign_report_covers_the_acceptance_set(name, instr, options, count):
    report = _load(name)
    assert report["status"] == "pass" and report["error"] is None, f"h200-{name}.json: {report['status']}"
    assert "H200" in report["gpu"]["name"], report["gpu"]
    assert report["totals"]["mismatched_registers"] == 0
    assert report["totals"]["cases_run"] == report["totals"]["cases_planned"]
    ran = {(case["label"], case["class"]): case for case in report["cases"]}
    for case in build_cases(instr, **options):
        # ldmatrix cases have one input class, named in the report only
        key = (case.label, getattr(case, "cls", LDMATRIX_CLASS))
        assert key in ran, f"h200-{name}.json: case {key} was not run on the GPU"
        assert ran[key]["count"] == count, f"h200-{name}.json: case {key} ran {ran[key]['count']}, want {count}"
        assert ran[key]["mismatched_registers"] == 0 and ran[key]["registers_compared"] > 0, key


def test_programs_report_covers_every_example_and_params_combination():
    report = _load("programs")
    assert report["status"] == "pass" and report["error"] is None, report["status"]
    assert report["totals"]["mismatched_registers"] == 0
    assert report["totals"]["mismatched_smem_words"] == 0
    assert report["totals"]["mismatched_global_elements"] == 0
    ran = {(run["name"], tuple(sorted(run["params"].items()))): run for run in report["runs"]}
    for path in example_programs():
        program = load_program(path)
        for params in param_choices(program, {}, sweep=True):
            key = (program.name, tuple(sorted((k, str(v)) for k, v in params.items())))
            assert key in ran, f"h200-programs.json: {key} was not run on the GPU"
            assert ran[key]["seeds_run"] == PROGRAM_SEEDS, key
            assert ran[key]["registers_compared"] > 0, key
