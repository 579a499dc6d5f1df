"""The H200 evidence for the IEEE-rounded float families, ``conformance/h200/h200-float.json`` and
``h200-f64.json``, is whole and sound: every form of ``hwcheck.campaigns.float_cases`` (``FLOAT_FORMS``: f32, f16, bf16,
x2 arithmetic, min/max, sign, comparisons, every cvt, the 16-bit MUFU forms; ``F64_FORMS``) run over every input
class, at least 10**7 instructions per form, no register different, on a real H200.

Written by ``python3 -m hwcheck campaign --instr float --count 2000000 --chunk 1048576 --report FILE`` (and
``--instr f64``) on the device machine. The planted-edit tests check that the checker rejects a mismatch, a
missing form, a short count and a fake GPU.
"""

import copy
import json
import os

import pytest

from hwcheck.campaigns.float_cases import F64_FORMS, FLOAT_CLASSES, FLOAT_FORMS
from report_checks import head_problems

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORTS = {"float": ("h200-float.json", FLOAT_FORMS), "f64": ("h200-f64.json", F64_FORMS)}
PER_FORM = 10 ** 7           # instructions per form, all input classes together


def float_report_problems(report, instr, forms, per_form=PER_FORM):
    """What is wrong with a float or f64 campaign report (empty when whole and sound)."""
    problems = head_problems(f"{instr} report", report)
    if "H200" not in str((report.get("gpu") or {}).get("name")):
        problems.append(f"gpu {(report.get('gpu') or {}).get('name')!r} is not an H200")
    if (report.get("settings") or {}).get("instr") != instr:
        problems.append(f"settings {report.get('settings')} are not a campaign of --instr {instr}")
    totals = report.get("totals", {})
    if totals.get("cases_run") != totals.get("cases_planned") or totals.get("mismatched_registers") != 0:
        problems.append(f"totals {totals} are not a whole pass")
    if totals.get("cases_run") != len(forms) * len(FLOAT_CLASSES):
        problems.append(f"{totals.get('cases_run')} cases, {len(forms)} forms x {len(FLOAT_CLASSES)} classes wanted")
    counts = {}
    for entry in report.get("instructions", []):
        counts[entry["instruction"]] = counts.get(entry["instruction"], 0) + entry.get("count", 0)
        if entry.get("mismatched_registers"):
            problems.append(f"{entry['instruction']}: {entry['mismatched_registers']} mismatching registers")
    missing = [f for f in forms if f not in counts]
    if missing:
        problems.append(f"{len(missing)} forms not run: {', '.join(missing[:5])}")
    short = [f"{f} ({n})" for f, n in counts.items() if n < per_form]
    if short:
        problems.append(f"{len(short)} forms with fewer than {per_form} instructions: {', '.join(short[:5])}")
    return problems


def _load(instr):
    with open(os.path.join(ROOT, "conformance", "h200", REPORTS[instr][0])) as f:
        return json.load(f)


@pytest.mark.parametrize("instr", sorted(REPORTS))
def test_committed_float_report_is_whole_and_sound(instr):
    problems = float_report_problems(_load(instr), instr, REPORTS[instr][1])
    assert not problems, "\n".join(problems)


EDITS = {
    "a mismatch": lambda r: r["instructions"][3].update(mismatched_registers=1),
    "a missing form": lambda r: r.update(instructions=[e for e in r["instructions"]
                                                       if e["instruction"] != r["instructions"][0]["instruction"]]),
    "a short count": lambda r: r["instructions"][0].update(count=r["instructions"][0]["count"] // 2),
    "fake gpu": lambda r: r["gpu"].update(name="Fake GPU (warpsim)"),
    "a case not run": lambda r: r["totals"].update(cases_run=r["totals"]["cases_run"] - 1),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_checker_rejects_a_planted_edit(edit):
    report = copy.deepcopy(_load("f64"))
    EDITS[edit](report)
    assert float_report_problems(report, "f64", F64_FORMS), f"the checker accepted a report with {edit}"
