"""``hwcheck lower``: the PTX hwcheck run launches for a program (on the GPU and the simulator alike), on stdout
or into a file, and an offline ptxas assembly of it with ptxas's log."""

import stat
from pathlib import Path

import pytest

from hwcheck.cli.main import main
from warpsim.program.lower import KERNEL, lower
from warpsim.program.program import load_program
from warpsim.toolchain import find_ptxas

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "gemm_smem.py")


def expected_text(params):
    program = load_program(SEED)
    t = program.trace(program.resolve_params(params))
    return lower(t.stream, warps=t.warps, regs=t.regs_per_thread, smem_bytes=t.smem_bytes, snapshots=True,
                 shared_out=True).text


@pytest.fixture
def ptxas():
    found = find_ptxas("auto", ".version 8.0")
    if found is None:
        pytest.skip("ptxas not found (pip install nvidia-cuda-nvcc, or a CUDA toolkit on PATH)")
    return found


def test_lower_prints_the_ptx_hwcheck_run_launches(capsys):
    assert main(["lower", SEED, "--param", "dtype=bf16"]) == 0
    out, err = capsys.readouterr()
    assert out == expected_text({"dtype": "bf16"})
    assert f".visible .entry {KERNEL}(.param .u64 gmem, .param .u64 table, .param .u64 snap, .param .u64 smem_out)" in out
    assert err.startswith("gemm_smem: 372 warp instructions, 128 threads, 116 registers per thread, 16384 bytes")


def test_lower_writes_a_file_and_assembles_it(tmp_path, capsys, ptxas):
    target = tmp_path / "k.ptx"
    target.write_text("old")
    assert main(["lower", SEED, "-o", str(target), "--compile"]) == 0
    out, _err = capsys.readouterr()
    assert target.read_text() == expected_text({})
    assert out.splitlines()[0].startswith(f"wrote {target}: gemm_smem: 372 warp instructions")
    assert out.splitlines()[1].startswith("assembled k.ptx for sm_90 with ptxas: ")
    assert [p.name for p in tmp_path.iterdir()] == ["k.ptx"]     # no temporary file left


def test_an_assembly_failure_prints_the_log_and_exits_2(tmp_path, capsys, monkeypatch, ptxas):
    """A ptxas that refuses (a stand-in script printing an error) is reported with its words and exit 2."""
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\nfor a; do case $a in *.ptx) f=$a;; esac; done\n"
                    "echo \"ptxas fatal   : something is wrong in $f\" >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr("warpsim.toolchain.find_ptxas", lambda *a, **k: str(fake))
    assert main(["lower", SEED, "-o", str(tmp_path / "k.ptx"), "--compile", "--arch", "sm80"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hwcheck lower: k.ptx does not assemble for sm_80: k.ptx: ptxas: ptxas failed (exit 1): ")
    assert "something is wrong in k.ptx" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["lower", SEED, "--param", "dtype=bf17"], "hwcheck lower: program gemm_smem: param dtype='bf17' is not one of"),
    (["lower", "no_such.py"], "hwcheck lower: "),
    (["lower", SEED, "--arch", "sm70"], "hwcheck lower: argument --arch: sm70: choose one of sm_80, sm_90"),
])
def test_bad_arguments_are_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(message) and err.count("\n") == 1
