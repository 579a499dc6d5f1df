"""``hwcheck lower``: the CUDA source hwcheck run would compile, on stdout or into a file, and an
offline NVRTC compile with its log."""

from pathlib import Path

import pytest

import hwcheck.device.lower
from hwcheck.cli.main import main
from hwcheck.device.lower import KERNEL_NAME, Lowered, lower
from warpsim.program.program import load_program

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "gemm_smem.py")


def expected_source(params):
    program = load_program(SEED)
    t = program.trace(program.resolve_params(params))
    return lower(t.stream, warps=t.warps, regs=t.regs_per_thread, smem_bytes=t.smem_bytes).source


def test_lower_prints_the_source_hwcheck_run_compiles(capsys):
    assert main(["lower", SEED, "--param", "dtype=bf16"]) == 0
    out, err = capsys.readouterr()
    assert out == expected_source({"dtype": "bf16"})
    assert f"__global__ void __launch_bounds__(NT, 1)\n{KERNEL_NAME}(" in out
    assert err.startswith("gemm_smem: 372 warp instructions, 128 threads, 116 registers per thread, 16384 bytes")


def test_lower_writes_a_file_and_compiles_it(tmp_path, capsys, nvrtc):
    target = tmp_path / "k.cu"
    target.write_text("old")
    assert main(["lower", SEED, "-o", str(target), "--compile"]) == 0
    out, _err = capsys.readouterr()
    assert target.read_text() == expected_source({})
    assert out.splitlines()[0].startswith(f"wrote {target}: gemm_smem: 372 warp instructions")
    assert out.splitlines()[1].startswith("compiled k.cu for sm_90 with NVRTC: ")
    assert [p.name for p in tmp_path.iterdir()] == ["k.cu"]     # no temporary file left


def test_a_compile_failure_prints_the_log_and_exits_2(tmp_path, capsys, monkeypatch, nvrtc):
    broken = Lowered(source="this is not CUDA", threads=32, smem_bytes=0, addr_table=None, snap_slots=None,
                     snap_positions=0)
    monkeypatch.setattr(hwcheck.device.lower, "lower", lambda *a, **k: broken)
    assert main(["lower", SEED, "-o", str(tmp_path / "k.cu"), "--compile", "--arch", "sm80"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwcheck lower: k.cu does not compile for sm80; NVRTC's log:\n")
    assert "error" in err


@pytest.mark.parametrize("argv, message", [
    (["lower", SEED, "--param", "dtype=bf17"], "hwcheck lower: program gemm_smem: param dtype='bf17' is not one of"),
    (["lower", "no_such.py"], "hwcheck lower: "),
    (["lower", SEED, "--arch", "sm70"], "hwcheck lower: argument --arch: sm70: choose one of sm_80, sm_90"),
])
def test_bad_arguments_are_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(message) and err.count("\n") == 1
