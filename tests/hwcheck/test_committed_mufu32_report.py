"""The committed H200 sweep of the f32 MUFU models (conformance/h200/h200-mufu32-sweep.json) is whole and sound.

It must hold every form ``hwcheck sweep`` checks today (:data:`hwcheck.campaigns.mufu_sweep.SWEEP_FORMS`: all 2**32
inputs each; :data:`DIV_FORMS`: :data:`DIV_COUNT` random pairs each), 0 mismatches in each, from an H200.
A form added to the sweep without a new hardware run fails here, naming the command. The planted-edit test
checks that the checker notices a changed field.
"""

import copy
import json
import os

import pytest

from hwcheck.campaigns.mufu_sweep import DIV_COUNT, DIV_FORMS, SWEEP_FORMS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "conformance", "h200", "h200-mufu32-sweep.json")
COMMAND = "python3 -m hwcheck sweep --exhaustive --report conformance/h200/h200-mufu32-sweep.json"


def problems(report):
    """What is wrong with a sweep report (empty: whole and sound)."""
    out = []
    if report.get("kind") != "mufu32-sweep" or report.get("status") != "pass":
        out.append(f"kind/status: {report.get('kind')}/{report.get('status')}")
    if "H200" not in str(report.get("gpu", {}).get("name")):
        out.append(f"gpu: {report.get('gpu', {}).get('name')!r} is not an H200")
    forms = report.get("forms", {})
    for form in SWEEP_FORMS + DIV_FORMS:
        want = DIV_COUNT if form in DIV_FORMS else 1 << 32
        got = forms.get(form)
        if got is None:
            out.append(f"{form}: missing (run {COMMAND} on an H200)")
        elif got.get("inputs") != want:
            out.append(f"{form}: {got.get('inputs')} inputs, want {want}")
        elif got.get("mismatches") != 0 or got.get("first_mismatches"):
            out.append(f"{form}: {got.get('mismatches')} mismatches")
    return out


@pytest.fixture(scope="module")
def report():
    with open(REPORT) as f:
        return json.load(f)


def test_committed_sweep_is_whole_and_sound(report):
    assert problems(report) == []


@pytest.mark.parametrize("edit", ["drop", "count", "mismatch", "gpu"])
def test_a_planted_edit_is_caught(report, edit):
    bad = copy.deepcopy(report)
    if edit == "drop":
        del bad["forms"]["lg2.approx.f32"]
    elif edit == "count":
        bad["forms"]["ex2.approx.ftz.f32"]["inputs"] -= 1
    elif edit == "mismatch":
        bad["forms"]["div.full.f32"]["mismatches"] = 1
    else:
        bad["gpu"]["name"] = "NVIDIA A100"
    assert problems(bad)
