"""The f64 models against the H200's own results, offline: the first f64 campaign on the H200
(``conformance/h200/h200-f64-run1.json``, 2026-12-01, the model of that morning against the GPU; docs/numerics.md
"f64") kept the GPU's result of its first 200 mismatching registers and the operands of the first two failing
warps of each case. The inputs are regenerated from the report's seed (``hwcheck.campaigns.campaign.chunk_inputs``); the
kept operands show the regeneration is the run's; then today's model must give the GPU's result at every kept
record. (That every one of the run's 6,430,480 mismatching registers is explained is a count over all inputs,
described in docs/numerics.md; it needs the old model and is not repeated here.)
"""

import json
import os
from collections import defaultdict
from functools import lru_cache

import numpy as np
import pytest

from hwcheck.campaigns.campaign import build_cases, chunk_inputs, plan_chunks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "conformance", "h200", "h200-f64-run1.json")
with open(REPORT) as f:
    RUN = json.load(f)
CASES = {(c.ptx, c.cls): c for c in build_cases("f64")}
RECORDS = defaultdict(list)
for _case in RUN["cases"]:
    for _record in _case["mismatches"]:
        RECORDS[(_case["instruction"], _case["class"])].append(_record)
FAILING = [(c["instruction"], c["class"]) for c in RUN["cases"] if c["failing_inputs"]]


@lru_cache(maxsize=2)
def _inputs(key, chunk_index):
    case = CASES[key]
    settings = RUN["settings"]
    _, chunks = plan_chunks(case, settings["count_per_case"], settings["chunk"])
    return chunks[chunk_index], chunk_inputs(case, chunks[chunk_index], settings["seed"])


def test_the_report_is_the_first_f64_run():
    assert RUN["gpu"]["name"] == "NVIDIA H200" and RUN["settings"]["instr"] == "f64"
    assert RUN["totals"]["mismatched_registers"] == 6430480 and sum(len(r) for r in RECORDS.values()) == 200
    assert len(FAILING) == 66


@pytest.mark.parametrize("key", FAILING[:12], ids=" ".join)
def test_regenerated_inputs_are_the_runs(key):
    case = next(c for c in RUN["cases"] if (c["instruction"], c["class"]) == key)
    for warp in case["failing_inputs"]:
        chunk, inputs = _inputs(key, warp["chunk"])
        first = warp["warp"] * 32 - chunk.first
        for name, x in zip("abc", inputs):
            assert [f"{int(v):x}" for v in x[first:first + 32]] == warp[name], (key, warp["warp"], name)


@pytest.mark.parametrize("key", sorted(RECORDS), ids=" ".join)
def test_the_model_gives_the_h200_result_of_every_kept_record(key):
    case = CASES[key]
    bad = []
    for r in RECORDS[key]:
        lane = r["warp"] * 32 + r["lane"]
        chunk, inputs = _inputs(key, lane // RUN["settings"]["chunk"])
        ops = [x[lane - chunk.first:lane - chunk.first + 1] for x in inputs]
        regs = case.simulate([np.repeat(o, 32) for o in ops], None)      # one warp of the lane's operands
        got = int(regs[0, 0, int(r["register"][1:])])
        if got != int(r["actual"], 16):
            bad.append(f"lane {lane} {' '.join(f'{int(o[0]):#x}' for o in ops)} {r['register']}: H200 {r['actual']}, "
                       f"model {got:#010x}")
    assert not bad, f"{case.ptx} {case.cls}:\n  " + "\n  ".join(bad)
