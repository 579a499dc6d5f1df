"""hwcheck's Hopper set (``hwcheck.runs.ptx_examples.HOPPER_EXAMPLES``, ``hwcheck acceptance --only hopper``) without a
GPU: its arguments fit each probe kernel, one job passes with the simulator standing in for the GPU, and the H100's
committed report (``conformance/h100/h100-80gb-hbm3-hopper-programs.json``) is whole and sound."""

import glob
import json
import os

import pytest

from hwcheck.runs.ptx_examples import HOPPER_EXAMPLES, ROOT, ptx_jobs
from hwcheck.runs.ptx_run import SimulatorAsGpu, check_ptx

REPORTS = os.path.join(ROOT, "conformance", "*", "*-hopper-programs.json")
SEEDS = 10
GPU_COMMAND = ("PYTHONPATH=$PWD HWCHECK_PTX_DIR=ptx-export python -m hwcheck acceptance --out OUT --only hopper "
               f"--seeds {SEEDS} --workers 10 (PTX exported with python -m hwcheck.runs.ptx_examples --export ptx-export)")


def _nvcc():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (examples/hopper/wgmma_probe.cu is CUDA C++)")


def test_the_set_is_every_probe_kernel_with_buffers_of_its_size():
    with open(os.path.join(ROOT, "examples", "hopper", "wgmma_probe.cu"), encoding="utf-8") as f:
        text = f.read()
    kernels = [line.split("void ")[1].split("(")[0] for line in text.splitlines() if "__global__ void" in line]
    probes = [e for e in HOPPER_EXAMPLES if e[0].endswith("wgmma_probe.cu")]
    assert [e[1] for e in probes] == kernels and len(kernels) == 10
    assert {e[1] for e in HOPPER_EXAMPLES if e[0].endswith("tma_gemm.cu")} == {"gemm_tn", "gemm_tn_tma_store"}
    for _source, kernel, grid, block, _smem, args in probes:
        sizes = {a.split("=")[0]: int(a.rsplit(":", 1)[1]) for a in args}
        acc = int(kernel.split("_n")[1].split("_")[0]) // (2 if "_f32_" in kernel else 4)
        assert (grid, block, sizes["x"]) == (96, 128, 24576)
        assert sizes["y"] == 96 * 128 * acc and sizes["c"] == sizes["y"] * (2 if kernel.startswith("ss_f16") else 1)


def test_a_job_passes_with_the_simulator_as_gpu():
    _nvcc()
    jobs = ptx_jobs([e for e in HOPPER_EXAMPLES if e[1] == "rs_f32_f16_n32_k_mn"])
    runs, status, error, code = check_ptx(SimulatorAsGpu(), jobs, seeds=1, timing=False)
    assert (status, error, code) == ("pass", None, 0)
    assert runs[0].seeds[0].records > 0 and runs[0].seeds[0].global_elements == 2 * 96 * 128 * 16 + 24576


def _awaiting(report):
    """The set's launches a report lacks because they were added after its run (the TMA GEMM's: until a device run
    includes them, their check below is an expected failure naming the command)."""
    have = {(os.path.basename(r["source"]), r["kernel"]) for r in report.get("runs", [])}
    return [e for e in HOPPER_EXAMPLES if e[0].endswith("tma_gemm.cu") and (os.path.basename(e[0]), e[1]) not in have]


def test_committed_hopper_report_is_whole_and_sound():
    from test_committed_ptx_report import ptx_report_problems
    reports = sorted(glob.glob(REPORTS))
    assert reports, f"run {GPU_COMMAND} on an H100 or H200 and commit the report"
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        examples = [e for e in HOPPER_EXAMPLES if e not in _awaiting(report)]
        problems = ptx_report_problems(report, examples, seeds=SEEDS, gpus=("H100", "H200"))
        assert not problems, "\n".join(problems)


def test_committed_hopper_report_has_the_tma_gemm():
    reports = sorted(glob.glob(REPORTS))
    for path in reports:
        with open(path) as f:
            missing = _awaiting(json.load(f))
        if missing:
            pytest.xfail(f"{path}: the TMA GEMM's {len(missing)} launches have not passed on a GPU yet (the first run "
                         f"faulted: conformance/h100/hopper-tma-first-run/README.md); run {GPU_COMMAND}")
