"""``warpsim run`` given bad inputs: each answered with one line naming the input, exit 2, nothing half-written."""

import pytest

from bad_input_helpers import ECHO, GEMM, assert_one_line_error, call

# (arguments, fragments of the message); paths are relative to the case's working directory
RUN_ERRORS = [
    # the program file
    (["no_such.py"], ["no such program file: no_such.py"]),
    (["adir"], ["adir is a directory, not a program file"]),
    (["prog.txt"], ["prog.txt"]),
    (["prog_none.py"], ["must define `program = warpsim.Program(...)`", "found nothing"]),
    (["prog_syntax.py"], ["prog_syntax.py:1", "SyntaxError"]),
    (["prog_big.py"], ["threads=33554432", "at most 1024 threads"]),
    (["prog_smem.py"], ["10000000000000 bytes of shared memory", "sm90 allows at most 232448"]),
    (["prog_smem200k.py", "--arch", "sm80"], ["204800 bytes of shared memory", "sm80 allows at most 166912"]),
    (["prog_buffer.py"], ["'x'", "the simulator holds at most 4294967296"]),
    # --param
    ([ECHO, "--param", "dtype=f32"], ["param dtype='f32' is not one of the choices: f16, bf16"]),
    ([ECHO, "--param", "colour=red"], ["unknown param 'colour'", "params: dtype, check, fail"]),
    ([ECHO, "--param", "dtype"], ["--param 'dtype': expected NAME=VALUE"]),
    ([ECHO, "--param", "=f16"], ["--param '=f16': expected NAME=VALUE"]),
    ([ECHO, "--param", "dtype=f16", "--param", "dtype=bf16"], ["--param dtype: given twice"]),
    ([ECHO, "--param", "dtype=f16", "--param", "dtype=f16"], ["--param dtype: given twice"]),
    ([ECHO, "--param", "dtype="], ["param dtype='' is not one of the choices"]),
    # --input: names
    ([ECHO, "--input", "z=x.npy"], ["unknown input 'z' (inputs: x)"]),
    ([ECHO, "--input", "x"], ["--input 'x': expected NAME=VALUE"]),
    ([ECHO, "--input", "x=x.npy", "--input", "x=x.npy"], ["--input x: given twice"]),
    ([ECHO, "--input", "x=x.npy", "--input", "x=q.npy"], ["--input x: given twice"]),
    # --input: files
    ([ECHO, "--input", "x=missing.npy"], ["--input x=missing.npy: cannot read: No such file or directory"]),
    ([ECHO, "--input", "x=adir"], ["--input x=adir: is a directory"]),
    ([ECHO, "--input", "x=text.npy"], ["--input x=text.npy: not a .npy file"]),
    ([ECHO, "--input", "x=empty.npy"], ["--input x=empty.npy: an empty file"]),
    ([ECHO, "--input", "x=truncated.npy"], ["--input x=truncated.npy: not a readable .npy array"]),
    ([ECHO, "--input", "x=obj.npy"], ["--input x=obj.npy: holds Python objects"]),
    ([ECHO, "--input", "x=two.npz"], ["--input x=two.npz: not a .npy file"]),
    # --input: arrays of the wrong kind
    ([ECHO, "--input", "x=x_t.npy"], ["input 'x' must have shape (32, 8), got (8, 32)"]),
    ([ECHO, "--input", "x=x_0d.npy"], ["input 'x' must have shape (32, 8), got ()"]),
    ([ECHO, "--input", "x=q.npy"], ["input 'x' must have shape (32, 8), got (64, 64)"]),
    ([ECHO, "--param", "dtype=bf16", "--input", "x=x_f16.npy"],
     ["'x' is a bf16 buffer", "raw bits (uint16) or bfloat16 values, got float16"]),
    ([ECHO, "--input", "x=x_f32.npy"], ["'x' is a f16 buffer", "got float32"]),
    ([ECHO, "--input", "x=x_i16.npy"], ["'x' is a f16 buffer", "got int16"]),
    ([ECHO, "--input", "x=x_str.npy"], ["'x' is a f16 buffer", "got <U12"]),
    # the reference
    ([ECHO, "--param", "check=transposed"], ["the reference's 'y' has shape (8, 32); the output has (32, 8)"]),
    ([ECHO, "--param", "check=floats"], ["the reference's 'y' holds float64", "raw bits"]),
    ([ECHO, "--param", "check=list"], ["its reference must return {output name: raw bits}, got list"]),
    # --dump / --out
    ([ECHO, "--dump", "frag"], ["--dump needs --out DIR"]),
    ([ECHO, "--out", "dumps"], ["--out dumps: needs --dump"]),
    ([ECHO, "--dump", "nope", "--out", "dumps"], ["--dump: unknown per-thread tensor 'nope' (valid: frag)"]),
    ([ECHO, "--dump", "frag,frag", "--out", "dumps"], ["--dump: 'frag' is named twice"]),
    ([ECHO, "--dump", ",", "--out", "dumps"], ["--dump ',': expected per-thread tensor names"]),
    ([ECHO, "--dump", "frag", "--out", "old.svg"], ["--out old.svg: cannot make the directory"]),
    # the gemm example
    ([GEMM, "--param", "dtype=f32"], ["param dtype='f32' is not one of the choices: f16, bf16"]),
    ([GEMM, "--input", "x=q.npy"], ["unknown input 'x' (inputs: q, k)"]),
    ([GEMM, "--input", "q=x.npy"], ["input 'q' must have shape (64, 64), got (32, 8)"]),
    ([GEMM, "--max-smem-bytes", "1024"], ["16384 bytes of shared memory", "at most 1024 (as raised)"]),
]


@pytest.mark.parametrize("args,fragments", RUN_ERRORS, ids=[" ".join(map(str, a))[-60:] for a, _ in RUN_ERRORS])
def test_run_error(workdir, capsys, args, fragments):
    status, out, err = call(capsys, ["run", *args])
    assert_one_line_error(status, err, "warpsim run", fragments)
    assert out == ""


# argparse's own errors: the verb's usage (not the top level's), exit 2
USAGE_ERRORS = [
    (["--frob", "x"], "unrecognized arguments: --frob x"),
    (["--seed", "-1"], "argument --seed: expected a non-negative integer, got '-1'"),
    (["--seed", "x"], "argument --seed: expected a non-negative integer, got 'x'"),
    (["--arch", "sm70"], "argument --arch: sm70: choose one of sm_80, sm_90"),
    (["--trace", "warp"], "argument --trace: invalid choice: 'warp'"),
    (["--max-smem-bytes", "lots"], "argument --max-smem-bytes: expected a non-negative integer"),
]


@pytest.mark.parametrize("args,fragment", USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_run_usage_error(workdir, capsys, args, fragment):
    status, out, err = call(capsys, ["run", ECHO, *args])
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert lines[0].startswith("usage: warpsim run "), err
    assert lines[-1] == f"warpsim run: error: {fragment}" or lines[-1].startswith(f"warpsim run: error: {fragment}")


USER_CODE_ERRORS = [
    (["prog_raises.py"], ["prog_raises.py:3", "RuntimeError: broken at load"]),
    (["prog_exit.py"], ["prog_exit.py:2", "the program file exited while loading", "sys.exit(0)"]),
    (["prog_threads.py"], ["prog_threads.py:6: KeyError: 'missing'"]),
    ([ECHO, "--param", "check=raises"], ["echo.py:36: KeyError: 'z'"]),
    ([ECHO, "--param", "fail=keyerror"], ["KeyError", "the kernel's own bug"]),
    ([ECHO, "--param", "fail=exit"], ["echo.py:24: the program file exited (sys.exit(3))"]),
]


@pytest.mark.parametrize("args,fragments", USER_CODE_ERRORS, ids=[" ".join(map(str, a))[-40:] for a, _ in USER_CODE_ERRORS])
def test_user_code_error_shows_its_frames(workdir, capsys, args, fragments):
    status, out, err = call(capsys, ["run", *args])
    assert_one_line_error(status, err, "warpsim run", fragments, frames=True)


def test_big_endian_input_is_read_as_its_values(workdir, capsys):
    """Point 1: a '>u2' file holds the same values as a native one: same outputs, bit-identical."""
    status, out, _ = call(capsys, ["run", ECHO, "--input", "x=x_be.npy", "--dump", "frag", "--out", "be"])
    assert status == 0 and "256/256 elements equal: bit-identical" in out
    status, out, _ = call(capsys, ["run", ECHO, "--input", "x=x.npy", "--dump", "frag", "--out", "le"])
    assert status == 0
    import numpy as np
    be, le = np.load("be/frag.npy"), np.load("le/frag.npy")
    assert be.dtype == np.uint16 and np.array_equal(be, le) and int(le[1, 0]) == 8
    for d in ("be", "le"):
        (workdir / d / "frag.npy").unlink()
        (workdir / d).rmdir()


def test_dump_still_checks_the_reference(workdir, capsys):
    """Point 4: --dump with a mismatching reference exits 1 and says MISMATCH; the dump is whole."""
    status, out, err = call(capsys, ["run", ECHO, "--param", "check=wrong", "--dump", "frag", "--out", "d"])
    assert status == 1, err
    assert "wrote d/frag.npy: (32, 8) uint16" in out and "MISMATCH" in out
    import numpy as np
    assert np.load("d/frag.npy").shape == (32, 8)
    (workdir / "d" / "frag.npy").unlink()
    (workdir / "d").rmdir()
