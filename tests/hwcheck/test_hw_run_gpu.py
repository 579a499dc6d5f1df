"""On a real GPU (skipped without CuPy or a GPU): whole programs match warpsim register by register.

Run on a GPU machine with ``python -m pytest -q -m gpu tests/hwcheck``; the acceptance set of programs
(every example, every params combination, 20 seeds) is ``hwcheck acceptance --out DIR --only programs``.
"""

import io
import json
import os
import subprocess
import sys

import pytest

from hwcheck.campaigns.acceptance import example_programs
from hwcheck.arch import model_arch
from hwcheck.errors import HwcheckError
from hwcheck.runs.run import plan_jobs, run_programs
from warpsim.program import load_program

pytestmark = pytest.mark.gpu
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIG_SMEM = os.path.join(HERE, "programs", "big_smem_convert.py")


@pytest.fixture(scope="module")
def gpu():
    from hwcheck.device.gpu import Gpu
    try:
        gpu = Gpu.open()
    except HwcheckError as e:
        pytest.skip(str(e))
    if gpu.info.compute_capability not in ("80", "89", "90"):
        pytest.skip(f"no tensor-core model for compute capability {gpu.info.compute_capability}")
    return gpu


def _describe(out):
    lines = [out.error or ""]
    for run in out.runs:
        for seed, record in run.records[:3] + run.memory_records[:3]:
            lines.append(f"{run.job.label} seed {seed}: {record}")
    return "\n".join(lines)


@pytest.mark.parametrize("path", example_programs() + [BIG_SMEM], ids=os.path.basename)
def test_program_matches_on_two_seeds(gpu, path):
    jobs = plan_jobs([(path, load_program(path))], {}, {}, sweep=True)
    out = run_programs(gpu, jobs, seeds=2, arch=model_arch(gpu.info.compute_capability), log=io.StringIO())
    assert out.status == "pass", _describe(out)
    for run in out.runs:
        assert len(run.seeds) == 2 and run.total("registers") > 0 and run.total("global_elements") > 0


def test_run_command_writes_a_passing_report(gpu, tmp_path):
    report = tmp_path / "run.json"
    proc = subprocess.run([sys.executable, "-m", "hwcheck", "run", os.path.join(ROOT, "examples", "gemm_smem.py"),
                           "--param", "dtype=bf16", "--param", "product=pv", "--seeds", "2", "--report", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["gpu"]["name"] == gpu.info.name
    assert data["totals"]["mismatched_registers"] == 0 and data["totals"]["registers_compared"] > 0
    assert "PASS" in proc.stdout
