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


def test_a_parameters_generic_address_is_related_through_the_header():
    """``cvta.param`` of a ``__grid_constant__`` parameter: the driver's generic address (an H100's 0x7fc78a290280
    for the first parameter, conformance/h100/hopper-tma-fourth-run/) and the simulator's are the same offset from
    the first parameter's generic address, which the instrumented kernel stores in header bytes 8..15."""
    from hwcheck.device.instrument import Instrumented
    from hwcheck.runs.trace_compare import Regions, _pairs, _relocated
    from warpsim.ptx.memory import KPARAM_BASE, PARAM_WINDOW
    ins = Instrumented("", "k", (), 4, (0, 1), {})
    head_s = np.zeros((1, 8), np.uint32)
    head_g = np.zeros((1, 8), np.uint32)
    sim0, gpu0 = PARAM_WINDOW + KPARAM_BASE, 0x7FC78A290280
    head_s[0, 2:4] = sim0 & 0xFFFFFFFF, sim0 >> 32
    head_g[0, 2:4] = gpu0 & 0xFFFFFFFF, gpu0 >> 32
    pairs = _pairs(ins, Regions({}, {}), head_s, head_g)
    vs = np.array([sim0 + 0x100, sim0 + 0x100], np.uint64)
    vg = np.array([gpu0 + 0x100, gpu0 + 0x108], np.uint64)
    ok = _relocated(vs, vg, np.array([True, True]), pairs, np.array([0, 0]))
    assert ok.tolist() == [True, False]                  # the same offset relates; another offset does not
