"""``warpsim run`` for .cu / .ptx / CuTe DSL files: routing, and bad input as one line with exit status 2."""

from pathlib import Path

import numpy as np
import pytest

from warpsim.cli import main
from warpsim.frontends.args import parse_arg_value, routes_here

ROOT = Path(__file__).resolve().parents[2]
ADD_INDEX = str(ROOT / "examples/ptx/add_index.ptx")


def run_cli(capsys, *argv):
    status = main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_routing_by_suffix_and_content():
    assert routes_here(["k.cu", "--kernel", "k"])
    assert routes_here([ADD_INDEX])
    assert routes_here([str(ROOT / "examples/cute_dsl/copy_dsl.py")])
    assert not routes_here([str(ROOT / "examples/gemm_smem.py"), "--param", "dtype=bf16"])
    assert not routes_here(["--seed", "3", "k.cu"])      # options first: the program command's usage
    assert not routes_here([])


def test_program_files_keep_their_command(capsys):
    status, _out, err = run_cli(capsys, ROOT / "examples/gemm_smem.py", "--param", "dtype=f32")
    assert status == 2 and "dtype" in err and "--kernel" not in err


def test_arg_values(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.uint16))
    assert parse_arg_value(str(tmp_path / "a.npy"), "--arg a").dtype == np.uint16
    assert parse_arg_value("0x10", "--arg n") == 16
    assert parse_arg_value("0.5", "--arg alpha") == 0.5
    zeros = parse_arg_value("zeros:f32:64x2", "--arg c")
    assert zeros.shape == (64, 2) and zeros.dtype == np.float32
    with pytest.raises(ValueError, match="--arg c=zeros:f7:2: expected zeros:DTYPE:SHAPE"):
        parse_arg_value("zeros:f7:2", "--arg c")
    with pytest.raises(ValueError, match="--arg a=nope: expected FILE.npy"):
        parse_arg_value("nope", "--arg a")


@pytest.mark.parametrize("argv, message", [
    (["--kernel", "nope"], "--kernel nope: no such kernel; the module has: add_index"),
    (["--kernel", "add_index", "--arg", "x"], "--arg x: expected NAME=VALUE"),
    (["--kernel", "add_index", "--arg", "a=missing.npy"], "--arg a=missing.npy: cannot read"),
    (["--kernel", "add_index", "--grid", "0"], "--grid 0: expected one to three positive integers"),
    (["--kernel", "add_index", "--arch", "sm_75"], "--arch sm_75: choose one of sm_80, sm_90"),
    (["--kernel", "add_index", "--dump", "x"], "--dump needs --out DIR"),
    (["--kernel", "add_index", "--arg", "x=zeros:u32:8", "--arg", "y=zeros:u32:8"],
     "add_index: missing argument(s) n (of 3: x, y, n)"),
    (["--kernel", "add_index", "--arg", "q=1"], "add_index: no parameter 'q'; it takes: x, y, n"),
])
def test_bad_input_is_one_line(capsys, tmp_path, argv, message):
    status, out, err = run_cli(capsys, ADD_INDEX, *argv)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("warpsim run: error: ")
    assert message in err
    assert "Traceback" not in err


def test_missing_nvcc(capsys, tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(int* p) { *p = 1; }\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    status, _out, err = run_cli(capsys, src, "--kernel", "k", "--dump", "p", "--out", tmp_path / "out")
    assert status == 2
    assert err == "warpsim run: error: k.cu: nvcc not found on PATH or under CUDA_HOME (install the CUDA toolkit, " \
                  "or pass a .ptx file)\n"
    assert not (tmp_path / "out").exists()


def test_nvcc_errors(capsys, tmp_path, need_nvcc, cache_dir):
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(int* p) {\n  *p = missing;\n}\n')
    status, _out, err = run_cli(capsys, src, "--kernel", "k", "--dump", "p", "--out", tmp_path / "out")
    assert status == 2 and err.count("\n") == 1
    assert 'k.cu(2): error: identifier "missing" is undefined' in err
    assert not (tmp_path / "out").exists()


def test_run_ptx_and_dump(capsys, tmp_path, need_interpreter):
    x = np.arange(256, dtype=np.uint32) * 3
    np.save(tmp_path / "x.npy", x)
    status, out, err = run_cli(capsys, ADD_INDEX, "--kernel", "add_index", "--grid", "2", "--block", "128",
                               "--arg", f"x={tmp_path / 'x.npy'}", "--arg", "1=zeros:u32:256", "--arg", "n=256",
                               "--dump", "y", "--out", tmp_path / "out")
    assert status == 0, err
    got = np.load(tmp_path / "out/y.npy")
    assert np.array_equal(got.view(np.uint32).reshape(-1), x + np.arange(256, dtype=np.uint32))
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["y.npy"]   # no temporary left


def test_one_cta(capsys, tmp_path, need_interpreter):
    status, _out, err = run_cli(capsys, ADD_INDEX, "--kernel", "add_index", "--grid", "2", "--cta", "1",
                                "--arg", "x=zeros:u32:256", "--arg", "y=zeros:u32:256", "--arg", "n=256",
                                "--dump", "y", "--out", tmp_path)
    assert status == 0, err
    y = np.load(tmp_path / "y.npy").reshape(-1)
    assert not y[:128].any() and np.array_equal(y[128:], np.arange(128, 256, dtype=np.uint32))
