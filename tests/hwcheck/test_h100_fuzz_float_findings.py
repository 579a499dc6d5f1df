"""The H100's float fuzz findings (conformance/h100/h100-80gb-hbm3-fuzz-float-200000.json, -201000.json) replayed
offline: each failing program is regenerated from its seed and run as ``hwcheck fuzz`` runs it, against a stand-in
GPU that is the simulator except at the one register record (thread, dynamic step) or buffer element the report
names, where it holds the H100's bits. The simulator agrees with it exactly when it computes the H100's bits
there. Needs ptxas + nvdisasm (the rule is read from the SASS, as contraction is)."""

import json
import os

import numpy as np
import pytest

from hwcheck.campaigns.ptx_fuzz import KERNEL, _job, program
from hwcheck.device.instrument import TRACE_PARAM, instrument
from hwcheck.device.sass import find_tool
from hwcheck.runs.ptx_run import PtxRun, SimulatorAsGpu, run_one
from warpsim.isa.arith import DEFAULT_ARCH

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
REPORTS = [os.path.join(ROOT, "conformance", "h100", f"h100-80gb-hbm3-fuzz-float-{s}.json")
           for s in (200000, 201000, "200000-rerun")]     # the rerun: 200000+1000 again, after the FSEL rule

# seed -> why the simulator still differs from the H100 there (see docs/numerics.md, "NaNs as compiled"); none since
# the rules for constants, selp operands, saturated squares and twin adds
OPEN = {
}


def _findings():
    out = []
    for path in REPORTS:
        with open(path) as f:
            report = json.load(f)
        out += [m for m in report["first_mismatches"] if m["opcode"] != "(error)"]
    return out


FINDINGS = {m["seed"]: m for m in _findings()}


class _H100AtOneSpot(SimulatorAsGpu):
    """The simulator, with the H100's bits planted where the report recorded them."""

    def __init__(self, finding, text):
        super().__init__(corrupt=self._plant)
        self.finding, self.ins = finding, instrument(text, KERNEL)

    def _plant(self, kind, buffers):
        m = self.finding
        if "buffer" in m and kind == "original":
            b = m["buffer"]
            buffers[b["buffer"]].view(np.uint32)[b["index"]] = int(b["actual"], 16)
        elif "step" in m and kind == "instrumented":
            ins = self.ins
            words, head = ins.thread_bytes // 4, ins.header_bytes // 4
            trace = buffers[TRACE_PARAM].view(np.uint32).reshape(-1, words)
            records = trace[m["thread"], head:].reshape(ins.capacity, 4)
            (at,) = np.flatnonzero(records[:, 1] == m["step"])
            records[at, 2] = int(m["actual"], 16)


def _need_tools():
    missing = [t for t in ("ptxas", "nvdisasm") if find_tool(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not found")


def test_the_reports_hold_the_findings():
    assert len(FINDINGS) == 16 and set(OPEN) <= set(FINDINGS)
    assert sum(m["opcode"] == "neg.f32" for m in FINDINGS.values()) == 10


@pytest.mark.parametrize("seed", sorted(FINDINGS))
def test_the_simulator_gives_the_h100s_bits(seed, tmp_path):
    _need_tools()
    if seed in OPEN:
        pytest.xfail(OPEN[seed])
    m = FINDINGS[seed]
    prog = program(seed, "float")
    job = _job(prog, str(tmp_path))
    run = run_one(_H100AtOneSpot(m, prog.text), job, seeds=1, first_seed=seed, arch=DEFAULT_ARCH,
                  log=open(os.devnull, "w"), run=PtxRun(job))
    assert run.mismatched == 0, (seed, m, run.records[:3])
