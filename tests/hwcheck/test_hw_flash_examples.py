"""hwcheck's flash-attention set (``hwcheck.runs.ptx_examples.FLASH_EXAMPLES``) without a GPU: it holds every variant of
both builds with launches that cover B, H and N as the acceptance asks, its arguments parse and are the
recipe's, ``hwcheck acceptance --only flash`` writes its own report, and the instrumented kernel assembles.
The H200 report, once committed (``conformance/h200/h200-flash-programs.json``), must be whole and sound;
until then that test is an expected failure naming the command."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from hwcheck.cli.main import main
from hwcheck.device.instrument import instrument
from hwcheck.runs.ptx_examples import (FLASH_DSL_EXAMPLES, FLASH_EXAMPLES, FLASH_TRACE_CAPACITY, PTX_EXAMPLES, ROOT,
                                  example_commands)
from hwcheck.runs.ptx_run import SimulatorAsGpu
from warpsim.frontends.args import parse_arg
from warpsim.frontends.kernel import parse_dim3
from warpsim.frontends.source import compile_source
from warpsim.toolchain import find_nvcc

IN_CI = os.environ.get("CI") == "true"
REPORT = os.path.join(ROOT, "conformance", "h200", "h200-flash-programs.json")
SEEDS = 10
GPU_COMMAND = (f"PYTHONPATH=$PWD python -m hwcheck acceptance --out conformance/h200 --only flash --seeds {SEEDS} "
               "--workers 8")
DSL_REPORT = os.path.join(ROOT, "conformance", "h200", "h200-flash-dsl-programs.json")
DSL_GPU_COMMAND = (f"HWCHECK_PTX_DIR=ptx-export bash hwcheck/gpu_pending.sh OUT flash-dsl (hwcheck acceptance "
                   f"--only flash-dsl --seeds {SEEDS})")


def _launch(example):
    source, kernel, grid, block, smem, args = example
    specs = dict(parse_arg(a) for a in args)
    return source, kernel, parse_dim3(grid), block, smem, specs


def test_every_variant_of_both_builds_once():
    kernels = [(os.path.basename(e[0]), e[1]) for e in FLASH_EXAMPLES]
    assert len(set(kernels)) == len(kernels) == 16
    for source in ("flash_fwd.cu", "flash_fwd_fast_math.cu"):
        assert {k for s, k in kernels if s == source} == {f"flash_fwd_{t}_d{d}{c}" for t in ("f16", "bf16")
                                                           for d in (64, 128) for c in ("", "_causal")}
    assert all(os.path.isfile(os.path.join(ROOT, e[0])) for e in FLASH_EXAMPLES)


def test_launches_cover_the_acceptance_shapes_with_the_recipes_arguments():
    shapes = set()
    for example in FLASH_EXAMPLES:
        _source, kernel, grid, block, smem, specs = _launch(example)
        dtype, d = kernel.split("_")[2], int(kernel.split("_")[3][1:])
        B, H, N, head_dim = specs["q"][2]
        assert (specs["q"][:2], specs["k"], specs["v"]) == (("random", dtype), specs["q"], specs["q"])
        assert head_dim == d and specs["o"].shape == (B, H, N, d) and specs["lse"].shape == (B, H, N)
        assert specs["lse"].dtype == np.float32 and specs["o"].dtype.itemsize == 2 and specs["N"] == N
        assert grid == (-(-N // 64), H, B) and block == 128 and smem == 5 * 64 * d * 2
        softmax_scale = np.float32(1 / np.sqrt(d))
        assert np.float32(specs["softmax_scale"]) == softmax_scale == specs["softmax_scale"]     # exact in f32
        assert np.float32(specs["scale_log2"]) == softmax_scale * np.float32(1.4426950408889634) == specs["scale_log2"]
        shapes.add((B, H, N))
    assert {b for b, _, _ in shapes} == {1, 2} and {h for _, h, _ in shapes} == {1, 2}
    assert max(n for *_, n in shapes) == 512
    assert any(n % 64 for *_, n in shapes) and any(n % 64 == 0 for *_, n in shapes)


def test_the_dsl_set_is_every_dsl_variant_at_the_cpp_launches():
    """FLASH_DSL_EXAMPLES: the CuTe DSL kernels, variant for variant at the C++ plain build's launches (grid,
    block, smem and argument shapes), O as raw 16-bit words."""
    cpp = {e[1]: e for e in FLASH_EXAMPLES if os.path.basename(e[0]) == "flash_fwd.cu"}
    assert sorted(e[1] for e in FLASH_DSL_EXAMPLES) == sorted(cpp)
    for example in FLASH_DSL_EXAMPLES:
        source, kernel, grid, block, smem, specs = _launch(example)
        _, _, cgrid, cblock, csmem, cspecs = _launch(cpp[kernel])
        assert source == "examples/cute_dsl/flash_fwd.py" and (grid, block, smem) == (cgrid, cblock, csmem)
        not_o = [[a for a in e[5] if not a.startswith("o=")] for e in (example, cpp[kernel])]
        assert not_o[0] == not_o[1]
        assert specs["o"].shape == cspecs["o"].shape and specs["o"].dtype == np.uint16


def test_the_commands_name_the_trace_capacity():
    commands = example_commands(seeds=10)
    assert len(commands) == 16 and all(c.startswith("hwcheck run examples/cute_cpp/flash_fwd") for c in commands)
    assert all(c.endswith(f"--seeds 10 --seed 0 --trace-capacity {FLASH_TRACE_CAPACITY}") for c in commands)


@pytest.mark.parametrize("only, examples", [("flash", "FLASH_EXAMPLES"), ("flash-dsl", "FLASH_DSL_EXAMPLES")])
def test_acceptance_only_flash_writes_its_report(capsys, monkeypatch, tmp_path, only, examples):
    """Each flash set goes to its own report with its trace capacity (a small PTX example stands in for it)."""
    import hwcheck.device.gpu
    import hwcheck.runs.ptx_examples
    import hwcheck.runs.ptx_run
    from fake_gpu import FakeGpu
    gpu = FakeGpu()
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: gpu))
    monkeypatch.setattr(hwcheck.runs.ptx_run, "CupyPtx", lambda gpu: SimulatorAsGpu())
    monkeypatch.setattr(hwcheck.runs.ptx_examples, examples, PTX_EXAMPLES[:1])
    status = main(["acceptance", "--out", str(tmp_path), "--only", only, "--seeds", "2"])
    out = capsys.readouterr().out
    assert status == 0 and out.strip().splitlines()[-1] == "acceptance: PASS"
    name = f"fake-gpu-warpsim-{only}-programs.json"
    assert os.listdir(tmp_path) == [name]
    data = json.loads((tmp_path / name).read_text())
    assert data["status"] == "pass" and data["totals"]["seeds"] == 2
    assert f"--trace-capacity {FLASH_TRACE_CAPACITY}" in data["command"]


def test_the_instrumented_kernel_assembles(tmp_path):
    """The traced copy of a flash kernel is PTX that ptxas takes (as the GPU's driver will)."""
    if shutil.which("ptxas") is None or find_nvcc() is None:
        if IN_CI:
            pytest.fail("ptxas or nvcc not found (required in CI)")
        pytest.skip("ptxas or nvcc (CUDA toolkit) not found on PATH")
    source, kernel = FLASH_EXAMPLES[3][:2]
    ins = instrument(compile_source(os.path.join(ROOT, source), "sm_90").ptx, kernel, capacity=FLASH_TRACE_CAPACITY)
    path = tmp_path / "k.ptx"
    path.write_text(ins.text)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", os.devnull], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[:2000]
    assert len(ins.sites) > 1000


@pytest.mark.parametrize("report, examples, command", [(REPORT, "FLASH_EXAMPLES", GPU_COMMAND),
                                                        (DSL_REPORT, "FLASH_DSL_EXAMPLES", DSL_GPU_COMMAND)],
                         ids=["cpp", "dsl"])
def test_committed_flash_report_is_whole_and_sound(report, examples, command):
    import hwcheck.runs.ptx_examples
    from test_committed_ptx_report import ptx_report_problems
    assert os.path.exists(report), f"{report}: missing; run {command} on an H200 and commit the report"
    with open(report) as f:
        problems = ptx_report_problems(json.load(f), getattr(hwcheck.runs.ptx_examples, examples), seeds=SEEDS)
    assert not problems, "\n".join(problems)
