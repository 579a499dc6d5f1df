"""Issue 26's device reports, once committed, are whole and sound: the kernels built with nvcc's defaults, the same
launches with the simulator's contraction off, and the float fuzz campaign.

They come from one command on an H100 or H200 (both sm_90), ``bash hwcheck/gpu_pending.sh OUT issue26`` (with
``HWCHECK_PTX_DIR`` pointing at ``python -m hwcheck.runs.ptx_examples --export``'s PTX), copied into ``conformance/``
under the GPU's folder. Until they are there each test is an expected failure naming that command; the checkers
themselves are tested on planted reports, so they can fail.
"""

import glob
import json
import os

import pytest

from hwcheck.runs.ptx_examples import AS_COMPILED_EXAMPLES
from test_committed_ptx_report import run_problems

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPUS = ("H100", "H200")
SEEDS = 10
FUZZ_PROGRAMS = 10_000
COMMAND = ("HWCHECK_PTX_DIR=ptx-export bash hwcheck/gpu_pending.sh OUT issue26 (after python -m "
           "hwcheck.runs.ptx_examples --export ptx-export) on an H100 or H200, then copy the reports into conformance/<gpu>/")


def _reports(pattern):
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "conformance", "*", pattern))):
        with open(path) as f:
            out.append((path, json.load(f)))
    return out


def as_compiled_problems(reports, seeds=SEEDS):
    """What is wrong with the as-compiled reports taken together: each one a pass from an H100/H200, every launch of
    AS_COMPILED_EXAMPLES at ``seeds`` seeds between them (the device runs seeds 0-4 and 5-9 as two reports), every
    seed with registers and buffers compared and none differing, the contraction decided by ptxas against the cubin
    the GPU ran."""
    if not reports:
        return ["no report"]
    problems, seen = [], {}
    for path, report in reports:
        where = os.path.basename(path)
        name = (report.get("gpu") or {}).get("name", "")
        if report.get("status") != "pass" or report.get("error") or not any(g in name for g in GPUS):
            problems.append(f"{where}: status {report.get('status')!r}, error {report.get('error')!r}, gpu {name!r}")
        for run in report.get("runs", []):
            label = f"{where} {run['kernel']} grid {run['grid']}"
            c = run.get("contraction") or {}
            if c.get("compiler") != "ptxas" or c.get("gpu_code") != "cubin from this ptxas" or not c.get("cubin"):
                problems.append(f"{label}: contraction {c!r} not decided against the GPU's cubin")
            problems += run_problems(label, run)
            key = (os.path.basename(run["source"]), run["kernel"], json.dumps(run.get("args"), sort_keys=True))
            seen.setdefault(key, set()).update(s["seed"] for s in run["seeds"])
    short = [k for k, s in seen.items() if len(s) < seeds]
    if short or len(seen) < len(AS_COMPILED_EXAMPLES):
        problems.append(f"{len(seen)} launches, {len(short)} under {seeds} seeds; {len(AS_COMPILED_EXAMPLES)} wanted")
    if not any(k[1].startswith("flash") for k in seen):
        problems.append("no flash-attention launch")
    return problems


def fuzz_problems(reports, programs=FUZZ_PROGRAMS):
    """What is wrong with the float fuzz reports taken together: at least ``programs`` programs compared, none
    differing, every report from a GPU named in ``GPUS`` and decided by ptxas."""
    problems, compared = [], {}
    for path, report in reports:
        name = (report.get("gpu") or {}).get("name", "")
        totals = report.get("totals", {})
        if not any(g in name for g in GPUS):
            problems.append(f"{os.path.basename(path)}: gpu {name!r}")
        if report.get("kind") != "ptx-fuzz-float" or totals.get("mismatched_programs") != 0:
            problems.append(f"{os.path.basename(path)}: kind {report.get('kind')!r}, "
                            f"{totals.get('mismatched_programs')} mismatched programs")
        if not any("ptxas" in str(c) for c in report.get("contraction", [])):
            problems.append(f"{os.path.basename(path)}: no ptxas named as deciding")
        settings = report.get("settings", {})
        seeds = (settings.get("first_seed"), settings.get("count"))          # a rerun counts its seeds once
        compared[seeds] = max(compared.get(seeds, 0), totals.get("programs", 0) - totals.get("errors", 0))
    compared = sum(compared.values())
    if compared < programs:
        problems.append(f"{compared} programs compared, {programs} wanted")
    return problems


def test_as_compiled_reports_are_whole_and_sound():
    reports = [(p, r) for p, r in _reports("*-as-compiled-programs.json") if "-none-" not in os.path.basename(p)]
    if not reports:
        pytest.xfail(f"the as-compiled kernels have not run on a GPU yet: {COMMAND}")
    problems = as_compiled_problems(reports)
    assert not problems, "\n".join(problems)


FUZZ_RERUN = ("bash hwcheck/gpu_pending.sh OUT fuzz-float FIRST 1000 for the chunks of the findings (200000-228999) "
              "and new ones from 229000")


def test_float_fuzz_reports_are_whole_and_sound():
    """Sound, or an expected failure while every mismatching program is a finding of
    ``test_fuzz_float_findings`` (fixed since the run and pending :data:`FUZZ_RERUN`, or still open)."""
    from test_fuzz_float_findings import FINDINGS, OPEN
    reports = _reports("*-fuzz-float-*.json")
    if not reports:
        pytest.xfail(f"hwcheck fuzz --float has not run on a GPU yet: {COMMAND}")
    problems = fuzz_problems(reports)
    seeds = {m["seed"] for _, r in reports for m in r.get("first_mismatches", []) if m.get("opcode") != "(error)"}
    findings = [p for p in problems if ": kind 'ptx-fuzz-float', " in p and p.endswith(" mismatched programs")]
    known = (f"{len(seeds)} programs differ, all known findings: fixed since, pending a device re-run "
             f"({FUZZ_RERUN}): {sorted(seeds - set(OPEN))}; still open: {sorted(seeds & set(OPEN))}")
    short = [p for p in problems if p.endswith(f" programs compared, {FUZZ_PROGRAMS} wanted")]
    if seeds <= set(FINDINGS) and problems and set(problems) <= set(findings) | set(short):
        # the campaign is not done (issue 26 wants 10^4 programs, 0 differing): an expected failure that says
        # how far it got, as long as nothing is wrong but known findings and the programs still to run
        pytest.xfail("; ".join([known] * bool(findings) + short))
    problems = [p for p in problems if p not in findings] + [known] * bool(findings and seeds <= set(FINDINGS))
    assert not problems, "\n".join(problems)


def _run(example, seeds, mismatched=0, contraction=None):
    source, kernel, grid, _, _, args = example
    seed = {"trace_records_compared": 5, "global_elements_compared": 5, "mismatched_global_elements": mismatched}
    return {"source": source, "kernel": kernel, "grid": grid, "args": args,
            "seeds_run": len(seeds), "seeds": [dict(seed, seed=s) for s in seeds], "mismatched": mismatched,
            "mismatches": [], "contraction": contraction or {"compiler": "ptxas", "gpu_code": "cubin from this ptxas",
                                                              "cubin": "m0.cubin"}}


def test_the_checkers_can_fail():
    """Planted reports: a sound pair of halves passes; a mismatch, a missing half or the driver's JIT does not."""
    def report(runs, gpu="NVIDIA H100 80GB HBM3", status="pass"):
        return {"status": status, "gpu": {"name": gpu},
                "runs": runs, "totals": {"mismatched": 0, "seeds": sum(len(r["seeds"]) for r in runs),
                                         "shared_words_compared": 1}}

    def halves(**change):
        return [(f"h-{h}.json", report([_run(e, range(s, s + 5), **change) for e in AS_COMPILED_EXAMPLES]))
                for h, s in (("a", 0), ("b", 5))]

    sound = halves()
    problems = as_compiled_problems(sound)
    assert problems == [], problems
    assert as_compiled_problems(sound[:1])                                   # seeds 0-4 alone
    assert as_compiled_problems([])
    jit = {"compiler": "ptxas", "gpu_code": "PTX (the driver's JIT)", "cubin": ""}
    assert any("not decided" in p for p in as_compiled_problems(
        [(p, dict(r, runs=[dict(x, contraction=jit) for x in r["runs"]])) for p, r in sound]))
    assert as_compiled_problems([(p, dict(r, status="fail")) for p, r in sound])
    assert any("mismatches" in p for p in as_compiled_problems(halves(mismatched=3)))
    fuzz = {"kind": "ptx-fuzz-float", "gpu": {"name": "NVIDIA H200"}, "contraction": [{"decided_by": "ptxas 13.0"}],
            "totals": {"programs": 16000, "errors": 5000, "mismatched_programs": 0}}
    assert fuzz_problems([("f.json", fuzz)]) == []
    assert fuzz_problems([("f.json", dict(fuzz, totals=dict(fuzz["totals"], mismatched_programs=1)))])
    assert fuzz_problems([("f.json", dict(fuzz, totals=dict(fuzz["totals"], errors=7000)))])
    assert fuzz_problems([("f.json", dict(fuzz, gpu={"name": "NVIDIA A100"}))])
