"""On a real GPU (skipped without CuPy or a GPU): small campaigns of every instruction match warpsim.

Run on a GPU machine with ``python -m pytest -q -m gpu tests/hwcheck``; the full acceptance set is
``hwcheck acceptance --out DIR`` (see the README)."""

import json
import os
import subprocess
import sys

import pytest

from hwcheck.campaigns.acceptance import run_one
from hwcheck.campaigns.campaign import build_cases, variant_totals
from hwcheck.errors import HwcheckError
from hwcheck.progress import Progress
from warpsim.isa.inputs import EVIDENCE_CLASSES

pytestmark = pytest.mark.gpu
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def gpu():
    from hwcheck.device.gpu import Gpu
    try:
        return Gpu.open()
    except HwcheckError as e:
        pytest.skip(str(e))


def test_gpu_describes_itself(gpu):
    info = gpu.info
    assert info.name and info.arch == f"sm_{info.compute_capability}"
    assert info.cupy_version and info.runtime_version and info.memory_bytes > 0


@pytest.mark.parametrize("instr, count", [("mma", 256), ("ldmatrix", 1024), ("cvt", 65536)])
def test_small_campaign_has_no_mismatch(gpu, instr, count):
    if instr == "mma" and gpu.info.compute_capability not in ("80", "89", "90"):
        pytest.skip(f"no tensor-core model for compute capability {gpu.info.compute_capability}")
    cases = build_cases(instr)
    out = run_one(gpu, cases, count=count, seed=11, chunk=4096, progress=Progress(tty=False, every_seconds=60))
    assert out.error is None, out.error
    bad = [r for r in out.results if r.mismatched]
    assert not bad, "\n".join(f"{r.case.ptx} {r.case.cls}: {r.mismatched} mismatching registers; first: "
                              f"{r.records[0]}" for r in bad)
    assert len(out.results) == len(cases)


def test_evidence_classes_rule_out_every_neighbour_of_the_model(gpu):
    """The GPU agrees with its model on the evidence classes and disagrees with every neighbour value
    of L, F and EZ (docs/evidence.md)."""
    if gpu.info.compute_capability not in ("80", "89", "90"):
        pytest.skip(f"no tensor-core model for compute capability {gpu.info.compute_capability}")
    cases = build_cases("mma", classes=list(EVIDENCE_CLASSES))
    out = run_one(gpu, cases, count=4096, seed=5, progress=Progress(tty=False, every_seconds=60))
    assert out.error is None and all(r.mismatched == 0 for r in out.results), out.table
    variants = variant_totals(out.results)
    assert variants and all(variants.values()), f"not ruled out: {[k for k, v in variants.items() if not v]}"


def test_campaign_command_writes_a_passing_report(gpu, tmp_path):
    report = tmp_path / "cvt.json"
    proc = subprocess.run([sys.executable, "-m", "hwcheck", "campaign", "--instr", "cvt", "--types", "bf16",
                           "--count", "4096", "--report", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["gpu"]["name"] == gpu.info.name
    assert "cvt.rn.bf16x2.f32: 20480 conversions, 0 mismatching registers" in proc.stdout
