"""The hwcheck command: one-line errors and exit status 2 for bad arguments, no CuPy or no GPU."""

import os
import subprocess
import sys
import types

import pytest

from hwcheck.cli.main import EXIT_USAGE, main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gpu_visible():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.skipif(_gpu_visible(), reason="a GPU is visible: the no-GPU message cannot appear")
def test_python_m_hwcheck_without_a_gpu_prints_one_line_and_fails():
    proc = subprocess.run([sys.executable, "-m", "hwcheck", "campaign", "--instr", "mma", "--count", "10"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == EXIT_USAGE, proc
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: no CUDA GPU visible (cupy: "), proc.stderr


def test_cupy_without_a_device_gives_the_no_gpu_line(capsys, monkeypatch):
    class CUDARuntimeError(RuntimeError):
        pass

    def no_device():
        raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_device))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    for argv in (["campaign", "--instr", "ldmatrix", "--count", "5"], ["acceptance", "--out", "x"]):
        status, out, err = _run(capsys, *argv)
        assert status == EXIT_USAGE and out == ""
        assert err == "hwcheck: no CUDA GPU visible (cupy: cudaErrorNoDevice: no CUDA-capable device is detected)\n"


@pytest.mark.parametrize("argv, message", [
    (["campaign", "--instr", "mma", "--types", "f32.f16", "--count", "1"],
     "hwcheck campaign: --types: 'f32.f16' is not one of f16.f32, bf16.f32, f16.f16"),
    (["campaign", "--instr", "mma", "--shapes", "m16n8k16,m16n8k4", "--count", "1"],
     "hwcheck campaign: --shapes: 'm16n8k4' is not one of m16n8k16, m16n8k8"),
    (["campaign", "--instr", "mma", "--classes", "ordinary,denormal", "--count", "1"],
     "hwcheck campaign: --classes: 'denormal' is not one of ordinary, random-bits, wide-exp, cancellation, "
     "subnormal, special, overflow, ties"),
    (["campaign", "--instr", "ldmatrix", "--variants", "x8", "--count", "1"],
     "hwcheck campaign: --variants: 'x8' is not one of x1, x2, x4, x1.trans, x2.trans, x4.trans"),
    (["campaign", "--instr", "cvt", "--types", "f16.f32", "--count", "1"],
     "hwcheck campaign: --types: 'f16.f32' is not one of f16, bf16"),
    (["campaign", "--instr", "mma", "--variants", "x1", "--count", "1"],
     "hwcheck campaign: --variants applies to --instr ldmatrix only"),
    (["campaign", "--instr", "ldmatrix", "--types", "f16.f32", "--count", "1"],
     "hwcheck campaign: --shapes and --types do not apply to --instr ldmatrix"),
    (["campaign", "--instr", "wmma", "--count", "1"],
     "hwcheck campaign: argument --instr: invalid choice: 'wmma'"),   # argparse words the rest per version
    (["campaign", "--instr", "mma", "--count", "-3"], "hwcheck campaign: argument --count: must be at least 1, got -3"),
    (["campaign", "--instr", "mma", "--count", "lots"], "hwcheck campaign: argument --count: not an integer: 'lots'"),
    (["campaign", "--instr", "mma"], "hwcheck campaign: the following arguments are required: --count"),
    (["campaign", "--instr", "mma", "--count", "1", "--seed", "-1"],
     "hwcheck campaign: argument --seed: must be at least 0, got -1"),
    (["campaign", "--instr", "cvt", "--count", "1", "--chunk", "8"],
     "hwcheck campaign: argument --chunk: must be at least 32, got 8"),
    (["campaign", "--instr", "mma", "--count", "1", "--arch", "sm75"],
     "hwcheck campaign: argument --arch: sm75: choose one of sm_80, sm_90"),
    (["acceptance", "--out", "d", "--scale", "0"], "hwcheck acceptance: argument --scale: must be in (0, 100], got 0.0"),
    (["run", "no-such-program.py", "--seeds", "3"], "hwcheck run: load_program: no such program file: no-such-program.py"),
    (["run", "examples/gemm_smem.py", "--seeds", "0"], "hwcheck run: argument --seeds: must be at least 1, got 0"),
    (["run", "examples/gemm_smem.py", "--param", "dtype=f32"],
     "hwcheck run: program gemm_smem: param dtype='f32' is not one of the choices: f16, bf16"),
    (["run", "examples/gemm_smem.py", "--param", "heads=2"], "hwcheck run: program gemm_smem: unknown param 'heads'"),
    (["run", "examples/gemm_smem.py", "--param", "dtype"], "hwcheck run: --param 'dtype': expected NAME=VALUE"),
    (["run", "examples/gemm_smem.py", "--input", "q=missing.npy"], "hwcheck run: --input q=missing.npy: cannot read"),
    (["run", "examples/gemm_smem.py", "--params", "some"], "hwcheck run: argument --params: invalid choice: 'some'"),
    (["acceptance", "--out", "d", "--only", "mma"], "hwcheck acceptance: argument --only: invalid choice: 'mma'"),
    (["frobnicate"], None),
    ([], "hwcheck: the following arguments are required: command"),
])
def test_bad_arguments_give_one_line_and_status_2(capsys, monkeypatch, argv, message):
    monkeypatch.chdir(ROOT)                     # program paths are relative to the repository
    status, out, err = _run(capsys, *argv)
    assert status == EXIT_USAGE and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    if message is not None:
        assert err.startswith(message), err


def test_help_still_works(capsys):
    with pytest.raises(SystemExit) as e:
        main(["campaign", "--help"])
    assert e.value.code == 0
    assert "--instr" in capsys.readouterr().out
