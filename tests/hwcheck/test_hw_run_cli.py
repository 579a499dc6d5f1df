"""The ``hwcheck run`` and ``hwcheck acceptance --only programs`` commands against the fake GPU (which runs
the lowered kernel's CUDA source on numpy): output, exit status, reports, and one-line errors."""

import itertools
import json
import os
import re
import sys

import numpy as np
import pytest

from fake_gpu import FakeGpu
from hwcheck.campaigns.acceptance import ACCEPTANCE
from hwcheck.cli.main import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, main
from hwcheck.device.gpu import Gpu
from hwcheck.report import portable_paths
from warpsim.program import load_program
from tests.docs.pages import page

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEMM = os.path.join(ROOT, "examples", "gemm_smem.py")


@pytest.fixture
def fake(monkeypatch):
    """``Gpu.open()`` gives a FakeGpu; ``fake.corrupt`` may be set before the command runs."""
    gpu = FakeGpu()
    monkeypatch.setattr(Gpu, "open", classmethod(lambda cls, device=0: gpu))
    return gpu


@pytest.fixture
def examples(monkeypatch):
    """The example programs ``hwcheck acceptance`` runs here: gemm_smem alone (the plumbing is the point;
    flash_fwd's 16 variants take minutes through the fake GPU's emulator, and test_hw_run_offline checks
    the lowering of every example)."""
    import hwcheck.campaigns.acceptance
    paths = [GEMM]
    monkeypatch.setattr(hwcheck.campaigns.acceptance, "example_programs", lambda *args, **kwargs: list(paths))
    return paths


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _defaults(path, **given):
    """The params of a run of ``path`` given ``given``: every other param at its first choice (its default)."""
    return {k: given.get(k, choices[0]) for k, choices in load_program(path).params.items()}


def _sweep(path, **given):
    """Every combination of the declared choices, ``given`` fixed, the first param varying slowest."""
    params = load_program(path).params
    axes = [[given[k]] if k in given else list(choices) for k, choices in params.items()]
    return [dict(zip(params, combo)) for combo in itertools.product(*axes)]


def _words(params):
    """``dtype=f16 product=qk ...``: params as hwcheck's labels and tables write them."""
    return " ".join(f"{k}={v}" for k, v in params.items())


def test_run_passes_and_prints_progress_table_and_report(capsys, fake, tmp_path):
    report = tmp_path / "run.json"
    status, out, err = _run(capsys, "run", GEMM, "--param", "dtype=bf16", "--seeds", "3", "--seed", "5",
                            "--report", str(report))
    assert status == EXIT_OK, out + err
    progress = [line for line in err.splitlines() if " seed " in line]
    assert [line.split(" seed ")[1].split(":")[0] for line in progress] == ["5", "6", "7"]
    params = _defaults(GEMM, dtype="bf16")
    assert params["product"] == "qk"
    assert all(line.startswith(f"[1/1] gemm_smem ({_words(params)}) seed ") and "0 differ" in line
               for line in progress)
    assert f"gemm_smem  {_words(params)} " in out and "PASS" in out
    assert out.strip().endswith(f"report: {report} (pass)")
    data = json.loads(report.read_text())
    assert data["command"].startswith("hwcheck run ") and data["status"] == "pass"
    assert data["settings"]["seeds"] == 3 and data["settings"]["first_seed"] == 5
    (run,) = data["runs"]
    assert run["params"] == params and [s["seed"] for s in run["seeds"]] == [5, 6, 7]
    assert run["registers_compared"] == data["totals"]["registers_compared"] > 0
    assert [launch[:4] for launch in fake.launches] == [("warpsim_program", 1, 128, 16384)] * 3


def test_run_params_all_sweeps_every_combination(capsys, fake):
    status, out, err = _run(capsys, "run", GEMM, "--params", "all", "--param", "product=pv")
    assert status == EXIT_OK, out + err
    runs = _sweep(GEMM, product="pv")
    assert {p["dtype"] for p in runs} == {"f16", "bf16"} and len(runs) >= 2
    rows = [line for line in out.splitlines() if line.startswith("gemm_smem  ")]
    assert len(rows) == len(runs) and all(row.startswith(f"gemm_smem  {_words(p)} ") for row, p in zip(rows, runs))
    assert "product=qk" not in out + err and f"{len(runs)} runs, {len(runs)} seeds" in out


def test_run_with_a_given_input_gives_it_to_the_gpu(capsys, fake, tmp_path):
    q = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64) % 0x3C00        # finite f16 bit patterns
    np.save(tmp_path / "q.npy", q)
    seen = []
    fake.corrupt = lambda name, out: seen.append(out["gmem"][:q.nbytes].copy())   # q is buffer 0, at byte 0
    status, out, err = _run(capsys, "run", GEMM, "--input", f"q={tmp_path / 'q.npy'}", "--seeds", "2")
    assert status == EXIT_OK, out + err
    assert len(seen) == 2 and all(s.tobytes() == q.tobytes() for s in seen)


def test_run_with_a_planted_mismatch_fails_with_the_record(capsys, fake, tmp_path):
    def corrupt(name, out):
        out["gmem"][0x4000 + 4 * 70] ^= 1              # s[1, 6]: the first output element after q and k
    fake.corrupt = corrupt
    report = tmp_path / "bad.json"
    status, out, err = _run(capsys, "run", GEMM, "--report", str(report))
    assert status == EXIT_MISMATCH, out + err
    assert "FAIL" in out and "first mismatches" in out
    assert "global s[1, 6] (f32, byte 0x4118)" in out
    assert json.loads(report.read_text())["status"] == "fail"


def test_acceptance_programs_only_writes_the_programs_report(capsys, fake, examples, tmp_path):
    status, out, err = _run(capsys, "acceptance", "--out", str(tmp_path), "--only", "programs", "--seeds", "2")
    assert status == EXIT_OK, out + err
    assert os.listdir(tmp_path) == ["fake-gpu-warpsim-programs.json"]
    data = json.loads((tmp_path / "fake-gpu-warpsim-programs.json").read_text())
    runs = [(portable_paths(path), load_program(path).name, p) for path in examples for p in _sweep(path)]
    assert data["status"] == "pass" and len(runs) >= 4
    assert [(r["program"], r["name"], r["params"]) for r in data["runs"]] == runs
    assert all(len(r["seeds"]) == 2 for r in data["runs"])
    assert data["command"].startswith("hwcheck run ") and "--params all --seeds 2 --seed 0" in data["command"]
    assert data["settings"]["invoked_as"].startswith("hwcheck acceptance ")
    assert out.strip().splitlines()[-1] == "acceptance: PASS"
    for _path, name, p in runs:
        row = f"program {name} {_words(p)}"
        assert re.search(rf"programs\.json  {re.escape(row)} +2 seeds ", out), f"no summary row {row!r} in:\n{out}"


def test_acceptance_runs_campaigns_then_programs_by_default(capsys, fake, examples, tmp_path):
    status, out, err = _run(capsys, "acceptance", "--out", str(tmp_path), "--scale", "1e-9")
    assert status == EXIT_OK, out + err
    names = sorted(os.listdir(tmp_path))
    assert names == sorted(f"fake-gpu-warpsim-{n}.json" for n in [*(a[0] for a in ACCEPTANCE), "programs"])
    lines = out.strip().splitlines()
    assert lines[-1] == "acceptance: PASS" and "programs.json" in lines[-2] and "mma-m16n8k16.json" in out


def test_acceptance_programs_default_seeds_follow_the_scale(capsys, fake, examples, tmp_path):
    status, out, err = _run(capsys, "acceptance", "--out", str(tmp_path), "--only", "programs", "--scale", "0.15")
    assert status == EXIT_OK, out + err
    data = json.loads((tmp_path / "fake-gpu-warpsim-programs.json").read_text())
    assert data["settings"]["seeds"] == 3                    # 20 x 0.15


def test_run_without_a_gpu_is_one_line(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)          # import cupy raises ImportError
    status, out, err = _run(capsys, "run", GEMM)
    assert status == EXIT_USAGE and out == ""
    assert err.startswith("hwcheck: no CUDA GPU visible (cupy: ") and err.count("\n") == 1


def test_a_program_that_does_not_trace_is_a_usage_error(capsys, fake, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import warpsim\nfrom warpsim.program import syncthreads\n\n"
                   "def kernel(tid):\n    if tid < 16:\n        syncthreads()\n\n"
                   "program = warpsim.Program(kernel, threads=32)\n")
    status, out, err = _run(capsys, "run", str(bad))
    assert status == EXIT_USAGE and out == "" and fake.launches == []
    assert err.startswith("hwcheck run: ") and "bad.py:5" in err and err.count("\n") == 1


def test_an_unknown_input_name_is_a_usage_error(capsys, fake, tmp_path):
    np.save(tmp_path / "w.npy", np.zeros((64, 64), np.uint16))
    status, out, err = _run(capsys, "run", GEMM, "--input", f"w={tmp_path / 'w.npy'}")
    assert status == EXIT_USAGE and err.startswith("hwcheck run: --input w: no run of ")


def test_a_gpu_error_mid_run_keeps_the_seeds_done(capsys, fake, tmp_path, monkeypatch):
    from hwcheck.errors import HwcheckError
    calls = []
    original = fake.launch

    def launch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise HwcheckError("hwcheck: kernel warpsim_program failed on Fake GPU (warpsim): an illegal memory access")
        return original(*args, **kwargs)
    monkeypatch.setattr(fake, "launch", launch)
    report = tmp_path / "err.json"
    status, out, err = _run(capsys, "run", GEMM, "--seeds", "3", "--report", str(report))
    assert status == 3
    assert "an illegal memory access" in err
    data = json.loads(report.read_text())
    assert data["status"] == "error" and len(data["runs"][0]["seeds"]) == 1


def test_the_readme_mismatch_example_is_what_hwcheck_prints(capsys, fake):
    """README's hwcheck run record: the bit it describes, planted, prints the README's line."""
    from warpsim.program.lower import lower
    from warpsim.program import load_program
    from warpsim.program.instr import Op
    t = load_program(GEMM).trace({"product": "pv"})
    low = lower(t.stream, warps=t.warps, regs=t.regs_per_thread, smem_bytes=t.smem_bytes, snapshots=True)
    index = [k for k, i in enumerate(t.stream) if i.op == Op.MMA and i.warp == 1][9]
    assert index == 197

    def corrupt(name, out):
        out["snap"][low.snap_slots[index, 2], 32 * 1 + 5] ^= np.uint32(1)
    fake.corrupt = corrupt
    status, out, err = _run(capsys, "run", GEMM, "--param", "product=pv")
    assert status == EXIT_MISMATCH
    label = f"gemm_smem ({_words(_defaults(GEMM, product='pv'))}) seed 0:"
    line = next(x for x in out.splitlines() if x.startswith(f"{label} instruction {index} "))
    assert f"({t.stream[index].line}): warp 1 lane 5 r{t.stream[index].dst[2]} " in line
    readme = page("guides/hwcheck.md")
    assert line in readme
    assert f'"line": "{t.stream[index].line}"' in readme            # the same record as JSON
