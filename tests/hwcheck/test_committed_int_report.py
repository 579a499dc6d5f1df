"""The H200 evidence for the integer forms, ``conformance/h200/h200-int-forms-{1..5}.json``, is whole and sound.

Written by ``bash hwcheck/gpu_pending.sh OUT int`` on an H200: ``hwcheck campaign --instr int`` in five shards
of forms run at once. Together the shards must hold every form of ``hwcheck.campaigns.int_cases.INT_FORMS`` (each with
its directed and its random case), every case run, no register different, on a real H200. The planted-edit
tests check that the checker rejects a mismatch, a missing form, a cut-short shard and a fake GPU.
"""

import copy
import glob
import json
import os

import pytest

from hwcheck.campaigns.int_cases import INT_CLASSES, INT_FORMS
from report_checks import head_problems

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATTERN = os.path.join(ROOT, "conformance", "h200", "h200-int-forms-[0-9].json")
MIN_COUNT = 1024            # random operand tuples per case


def int_report_problems(reports, forms=INT_FORMS):
    """What is wrong with the shards ``{path: report}`` taken together (empty when whole and sound)."""
    problems, seen, cases = [], {}, 0
    for path, report in reports.items():
        name = os.path.basename(path)
        problems += head_problems(name, report)
        if "H200" not in str((report.get("gpu") or {}).get("name")):
            problems.append(f"{name}: gpu {(report.get('gpu') or {}).get('name')!r} is not an H200")
        settings, totals = report.get("settings", {}), report.get("totals", {})
        if settings.get("instr") != "int" or settings.get("count_per_case", 0) < MIN_COUNT:
            problems.append(f"{name}: settings {settings} are not an int campaign of {MIN_COUNT}+ per case")
        if totals.get("cases_run") != totals.get("cases_planned") or totals.get("mismatched_registers") != 0:
            problems.append(f"{name}: totals {totals} are not a whole pass")
        for entry in report.get("instructions", []):
            seen[entry["instruction"]] = name
            if entry.get("mismatched_registers") or entry.get("count", 0) <= 0:
                problems.append(f"{name}: {entry['instruction']}: {entry.get('mismatched_registers')} mismatching "
                                f"registers over {entry.get('count')} instructions")
        cases += totals.get("cases_run", 0)
    missing = sorted(set(forms) - set(seen))
    if missing:
        problems.append(f"{len(missing)} forms in no shard: {', '.join(missing[:5])}")
    if cases != len(forms) * len(INT_CLASSES):
        problems.append(f"{cases} cases run, {len(forms) * len(INT_CLASSES)} wanted "
                        f"({len(forms)} forms x {INT_CLASSES})")
    return problems


def _committed():
    paths = sorted(glob.glob(PATTERN))
    assert paths, f"{PATTERN}: none committed; run `bash hwcheck/gpu_pending.sh OUT int` on an H200"
    reports = {}
    for path in paths:
        with open(path) as f:
            reports[path] = json.load(f)
    return reports


def test_committed_int_reports_are_whole_and_sound():
    problems = int_report_problems(_committed())
    assert not problems, "\n".join(problems)


def _first(reports):
    return reports[min(reports)]


EDITS = {
    "a mismatch": lambda r: _first(r)["instructions"][0].update(mismatched_registers=3),
    "a missing form": lambda r: _first(r)["instructions"].pop(0),
    "a cut-short shard": lambda r: _first(r)["totals"].update(cases_run=_first(r)["totals"]["cases_planned"] - 1),
    "fake gpu": lambda r: _first(r)["gpu"].update(name="Fake GPU (warpsim)"),
    "too few operands": lambda r: _first(r)["settings"].update(count_per_case=16),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_checker_rejects_a_planted_edit(edit):
    reports = copy.deepcopy(_committed())
    EDITS[edit](reports)
    assert int_report_problems(reports), f"the checker accepted a report with {edit}"
