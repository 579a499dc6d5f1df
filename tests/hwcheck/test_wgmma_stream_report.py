"""The streamed wgmma campaign's report (conformance/h100/wgmma-types-stream-seed1/: 10^6 instructions per input type
on an H100) replayed offline: every word it kept where the GPU differed from the model of that day is regenerated from
the campaign's seed and must be warpsim's bits now (the tf32 terms' floor at 2**-158), and its counts add up."""

import json
from pathlib import Path

import numpy as np
import pytest

from hwcheck.campaigns import wgmma_types as W

REPORT = (Path(__file__).resolve().parents[2] / "conformance" / "h100" / "wgmma-types-stream-seed1"
          / "h100-80gb-hbm3-wgmma-types.json")


def _report():
    return json.loads(REPORT.read_text())


def test_the_report_is_a_whole_campaign_of_every_type():
    r = _report()
    assert r["complete"] and r["per_type"] == 1000000 and r["seed"] == 1
    assert set(r["types"]) == {"tf32", "e4m3", "e5m2", "s8", "u8"}
    assert all(t["instructions"] >= 1000000 for t in r["types"].values())
    assert sum(t["mismatched"] for t in r["types"].values()) == r["mismatched"] == 20
    assert r["types"]["tf32"]["mismatched"] == 20


def _kept():
    r = _report()
    return [(kernel, cls, *rec) for kernel, classes in r["kernels"].items() for cls, row in classes.items()
            for rec in row["first"]]


@pytest.mark.parametrize("kernel, cls, part, index, then, gpu", _kept())
def test_every_kept_word_is_now_the_gpus(kernel, cls, part, index, then, gpu):
    r = _report()
    task = [t for t in W.plan(r["per_type"], 1024) if t[0] == kernel and t[2] == part]
    assert len(task) == 1 and task[0][1] == cls
    x, c, _ = W.inputs(kernel, cls, task[0][3], r["seed"], part)
    y = W.expected(kernel, x, c)
    assert f"{int(y[index]):#010x}" == gpu != then
