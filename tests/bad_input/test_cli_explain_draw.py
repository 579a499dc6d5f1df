"""``warpsim explain`` and ``warpsim draw`` given bad inputs: one line naming the input, exit 2, no file touched."""

import pytest

from bad_input_helpers import ECHO, assert_one_line_error, call

EXPLAIN_ERRORS = [
    (["--threads", "0-1000000000"], ["unknown thread 1000000000", "128 threads (0-127)"]),
    (["--threads", "128"], ["unknown thread 128"]),
    (["--threads", "-1"], ["unknown thread -1"]),
    (["--threads", "5-2"], ["no threads chosen"]),
    (["--threads", "x"], ["bad thread list 'x'"]),
    (["--threads", "0,,1"], ["bad thread list '0,,1'"]),
    (["--threads", ""], ["bad thread list ''"]),
    (["--threads", "0-"], ["bad thread list '0-'"]),
    (["--threads", "0-99999999999999999999"], ["unknown thread 99999999999999999999"]),
    (["--config", "nope"], ["config file nope does not exist"]),
    (["--config", "adir"], ["config file adir does not exist"]),
    (["--config", "cfg_syntax.py"], ["config file cfg_syntax.py (line 1): SyntaxError"]),
    (["--config", "cfg_raises.py"], ["config file cfg_raises.py (line 2): KeyError: 'a config bug'"]),
    (["--config", "cfg_exit.py"], ["config file cfg_exit.py (line 2): the file exited while loading (sys.exit(4))"]),
    (["--config", "cfg_empty.py"], ["cfg_empty.py: it must define tiled_mma"]),
    (["--config", "cfg_nofrag.py"], ["cfg_nofrag.py: it must define fragments"]),
    (["--config", "x.npy"], ["config file x.npy"]),
]


@pytest.mark.parametrize("args,fragments", EXPLAIN_ERRORS, ids=[" ".join(a) for a, _ in EXPLAIN_ERRORS])
def test_explain_error(workdir, capsys, args, fragments):
    status, out, err = call(capsys, ["explain", *args])
    assert_one_line_error(status, err, "warpsim explain", fragments)
    assert out == ""


DRAW_ERRORS = [
    # mma
    (["mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--thr", "1024,1024,1"], ["--thr 1024,1024,1", "at most 1024"]),
    (["mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--thr", "64,1,1"], ["--thr 64,1,1: 2048 threads"]),
    (["mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--thr", "1,1"], ["--thr: expected 3 values"]),
    (["mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--thr", "0,1,1"], ["--thr: values must be positive"]),
    (["mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--thr", "a,b,c"], ["--thr: expected comma-separated integers"]),
    (["mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--tile", "100000,16,16"], ["--tile 100000,16,16", "at most 1024"]),
    (["mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--tile", "64,16"], ["--tile: expected 3 values"]),
    (["mma", "--config", "nope"], ["config file nope does not exist"]),
    (["mma", "--highlight", "99999"], ["--highlight 99999: highlight must be a thread id 0-127"]),
    (["mma", "--operand", "B", "--highlight", "-1"], ["--highlight -1: highlight must be a thread id 0-127"]),
    (["mma", "--config", "cfg_raises.py"], ["KeyError: 'a config bug'"]),
    (["mma", "-o", "pic.gif"], ["pic.gif", "use a .svg or .png"]),
    (["mma", "-o", "adir/sub/pic.svg"], ["cannot write adir/sub/pic.svg"]),
    (["mma", "-o", "adir"], ["adir"]),
    # copy
    (["copy", "--fragment", "X"], ["no fragment 'X' in config seed", "Q, K, Vt"]),
    (["copy", "--config", "cfg_exit.py"], ["sys.exit(4)"]),
    (["copy", "-o", "nodir/c.svg"], ["cannot write nodir/c.svg"]),
    (["copy", "--highlight", "128"], ["--highlight 128: highlight must be a thread id 0-127"]),
    # banks
    (["banks", "--warp", "9"], ["--warp 9 --call 0"]),
    (["banks", "--call", "99"], ["--warp 0 --call 99"]),
    (["banks", "--phase", "9"], ["--phase 9"]),
    (["banks", "--phase", "-1"], ["--phase -1"]),
    (["banks", "--rows", "x"], ["--rows: expected START:STOP"]),
    (["banks", "--rows", "9:2"], ["--rows 9:2"]),
    (["banks", "--rows", "0:100000"], ["--rows 0:100000"]),
    (["banks", "--fragment", "nope"], ["no fragment 'nope'"]),
    # regs
    (["regs", ECHO, "--at", "9999"], ["--at 9999"]),
    (["regs", ECHO, "--at", "-1"], ["--at -1"]),
    (["regs", ECHO, "--line", "9999"], ["--line 9999"]),
    (["regs", ECHO, "--warp", "5"], ["warp", "5"]),
    (["regs", ECHO, "--regs", "r9"], ["%r9 is outside the program's %r0..%r3"]),
    (["regs", ECHO, "--regs", "r3-r1"], ["'r3-r1' is an empty range"]),
    (["regs", ECHO, "--regs", "r0-r99999999999"], ["%r99999999999 is outside the program's %r0..%r3"]),
    (["regs", ECHO, "--regs", "bogus"], ["no register 'bogus'"]),
    (["regs", ECHO, "--param", "dtype=f64"], ["param dtype='f64' is not one of the choices"]),
    (["regs", ECHO, "--input", "x=x_t.npy"], ["input 'x' must have shape (32, 8), got (8, 32)"]),
    (["regs", "no_such.py"], ["no such program file: no_such.py"]),
    (["regs", ECHO, "-o", "nodir/r.svg"], ["cannot write nodir/r.svg"]),
]


@pytest.mark.parametrize("args,fragments", DRAW_ERRORS, ids=[" ".join(map(str, a))[-50:] for a, _ in DRAW_ERRORS])
def test_draw_error(workdir, capsys, args, fragments):
    status, out, err = call(capsys, ["draw", *args])
    assert_one_line_error(status, err, "warpsim draw", fragments)
    assert out == ""


DRAW_USAGE = [
    (["mma", "--frob"], "usage: warpsim draw mma "),
    (["banks", "--warp", "x"], "usage: warpsim draw banks "),
    (["regs"], "usage: warpsim draw regs "),
    (["paint"], "usage: warpsim draw "),
]


@pytest.mark.parametrize("args,usage", DRAW_USAGE, ids=[" ".join(a) for a, _ in DRAW_USAGE])
def test_draw_usage_error_names_the_subcommand(workdir, capsys, args, usage):
    status, out, err = call(capsys, ["draw", *args])
    assert status == 2 and err.startswith(usage), err
    assert err.strip().splitlines()[-1].startswith("warpsim draw")


NOCLEAR = (
    "import warpsim\n"
    "from warpsim.program import copy\n"
    "from warpsim.cute import Copy_Atom, UniversalCopy, make_fragment_like, make_layout, make_tiled_copy\n"
    "tc = make_tiled_copy(Copy_Atom(UniversalCopy(32), 'f32'), make_layout((32, 1)), make_layout((1, 1)))\n"
    "def kernel(tid, *, y):\n"
    "    dst = tc.get_slice(tid).partition_D(y)\n"
    "    acc = make_fragment_like(dst)\n"
    "    copy(tc, acc, dst)\n"
    "program = warpsim.Program(kernel, threads=32, outputs={'y': ((32, 1), 'f32')})\n")


def test_draw_regs_reports_the_programs_warnings(tmp_path, monkeypatch, capsys):
    """Point 19: draw regs loads a program through the shared helper, so its warnings are reported as run's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "noclear.py").write_text(NOCLEAR)
    status, out, err = call(capsys, ["draw", "regs", "noclear.py", "-o", "r.svg"])
    assert status == 0 and (tmp_path / "r.svg").read_text().startswith("<svg")
    assert err.startswith("warpsim draw: warning: st.global.b32 (instruction 0) at noclear.py:8:"), err
    status, out, err = call(capsys, ["draw", "regs", "noclear.py", "--strict", "-o", "s.svg"])
    assert_one_line_error(status, err, "warpsim draw", ["which no instruction wrote before"])
    assert not (tmp_path / "s.svg").exists()
