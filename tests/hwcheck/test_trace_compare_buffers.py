"""hwcheck.runs.trace_compare.compare_buffers: its records are plain JSON (a report is written from them)."""

import json

import numpy as np

from hwcheck.runs.trace_compare import compare_buffers


def test_a_mismatch_in_a_shaped_buffer_is_a_json_record():
    want = {"o": np.zeros((2, 3, 4), np.float16), "lse": np.zeros(5, np.float32)}
    got = {k: v.copy() for k, v in want.items()}
    got["o"][1, 2, 3], got["lse"][4] = 1.0, -2.0
    cmp = compare_buffers(want, got)
    assert (cmp.compared, cmp.mismatched) == (29, 2)
    records = json.loads(json.dumps(cmp.records))
    assert [(r["buffer"], r["element"], r["actual"]) for r in records] == [("lse", 4, "0xc0000000"),
                                                                          ("o", [1, 2, 3], "0x3c00")]
