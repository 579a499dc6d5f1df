"""The debugger given bad commands (point 8): each prints one line ``error: ...`` naming the input, and the
session goes on; ``warpsim debug`` given bad arguments: one line, exit 2."""

import io

import pytest

from bad_input_helpers import ECHO, GEMM, assert_one_line_error, call
from warpsim.debug.repl import Repl
from warpsim.debug.session import Session
from warpsim.program.program import load_program


@pytest.fixture(scope="module")
def sessions():
    return {"echo": Session.program(load_program(ECHO)), "gemm": Session.program(load_program(GEMM))}


COMMAND_ERRORS = [
    ("gemm", "frag tSrK mma lane 40", "lane 40: lanes are 0-31"),
    ("gemm", "frag tSrK copy lane 0-100000000000", "lane 100000000000: lanes are 0-31"),
    ("gemm", "frag tSrK lane x", "lane: expected numbers like 5 or 0-3,8, got 'x'"),
    ("gemm", "frag tSrK warp 9", "9"),
    ("gemm", "frag nope", "nope"),
    ("gemm", "frag", "frag: usage"),
    ("gemm", "frag tSrK sideways", "unexpected 'sideways'"),
    ("gemm", "regs 0 r5-r3", "'r5-r3' is an empty range"),
    ("gemm", "regs 0 r0-r1000000000", "%r1000000000 is outside the program's %r0..%r115"),
    ("gemm", "regs 0 r116", "%r116 is outside the program's %r0..%r115"),
    ("gemm", "regs 0 r?", "no register 'r?'"),
    ("gemm", "regs 9", "warp must be an int in [0, 4), got 9"),
    ("gemm", "regs -1", "-1"),
    ("gemm", "regs 0 lane 32", "lane 32: lanes are 0-31"),
    ("gemm", "regs 0 save", "save: needs a value"),
    ("gemm", "regs 0 tSrK save nodir/x.svg", "cannot write nodir/x.svg"),
    ("gemm", "regs 0 tSrK save pic.gif", "pic.gif"),
    ("gemm", "who", "who: usage"),
    ("gemm", "who tSrK 999 999", "999"),
    ("gemm", "who tSrK a b", "a"),
    ("gemm", "from 40 0", "40"),
    ("gemm", "from 0 r999", "999"),
    ("gemm", "from", "from: usage"),
    ("gemm", "smem", "smem: usage"),
    ("gemm", "smem nope", "nope"),
    ("gemm", "smem sK rows 9:2", "9"),
    ("gemm", "smem sK rows x", "rows: expected START:STOP"),
    ("gemm", "smem sK banks save nodir/s.svg", "cannot write nodir/s.svg"),
    ("gemm", "smem sK save s.svg", "save: only bank maps are pictures"),
    ("gemm", "banks #99999", "99999"),
    ("gemm", "banks sideways", "sideways"),
    ("gemm", "step -1", "step: the count must be a positive int, got -1"),
    ("gemm", "step x", "expected an integer, got 'x'"),
    ("gemm", "back x", "expected an integer, got 'x'"),
    ("gemm", "until 0", "0"),
    ("gemm", "until 99999", "99999"),
    ("gemm", "break 0", "break: a source line must be a positive int, got 0"),
    ("gemm", "break nosuch.py:3", "nosuch.py"),
    ("gemm", "break reg 0 40 1", "40"),
    ("gemm", "break reg 0 0 999", "999"),
    ("gemm", "break smem 0x7ffffffffffffff8 16", "outside shared memory"),
    ("gemm", "break smem -4", "shared bytes [-0x4, 0x0) are outside shared memory"),
    ("gemm", "break frobnicate", "frobnicate"),
    ("gemm", "delete 99", "99"),
    ("gemm", "list x", "expected an integer, got 'x'"),
    ("gemm", "help nope", "nope"),
    ("gemm", "frob", "unknown command 'frob'"),
    ("gemm", "regs 'unclosed", "cannot parse"),
    ("echo", "smem x", "x is in global memory; a tile view shows shared tensors (none)"),
    ("echo", "regs 0 r4", "%r4 is outside the program's %r0..%r3"),
    ("echo", "frag frag lane 99", "lane 99: lanes are 0-31"),
]


@pytest.mark.parametrize("which,line,fragment", COMMAND_ERRORS, ids=[f"{w}: {l}" for w, l, _ in COMMAND_ERRORS])
def test_command_error_keeps_the_session(sessions, tmp_path, monkeypatch, which, line, fragment):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    repl = Repl(sessions[which], out)
    position = sessions[which].position
    assert repl.execute(line) is True             # the session goes on
    text = out.getvalue().strip().splitlines()
    assert len(text) == 1 and text[0].startswith("error: ") and fragment in text[0], out.getvalue()
    assert "Traceback" not in out.getvalue() and repl.errors == 1
    assert sessions[which].position == position
    assert list(tmp_path.iterdir()) == []           # no picture half-written
    assert repl.execute("where") is True and repl.errors == 1


DEBUG_ERRORS = [
    ([ECHO, "--commands", "missing.txt"], ["--commands missing.txt: No such file or directory"]),
    ([ECHO, "--commands", "adir"], ["--commands adir"]),
    (["no_such.py"], ["no such program file: no_such.py"]),
    ([ECHO, "--param", "dtype=f64"], ["param dtype='f64' is not one of the choices"]),
    ([ECHO, "--param", "dtype=f16", "--param", "dtype=f16"], ["--param dtype: given twice"]),
    ([ECHO, "--input", "x=obj.npy"], ["--input x=obj.npy: holds Python objects"]),
    (["prog_big.py"], ["at most 1024 threads"]),
]


@pytest.mark.parametrize("args,fragments", DEBUG_ERRORS, ids=[" ".join(map(str, a))[-40:] for a, _ in DEBUG_ERRORS])
def test_debug_error(workdir, capsys, args, fragments):
    status, out, err = call(capsys, ["debug", *args])
    assert_one_line_error(status, err, "warpsim debug", fragments)


def test_debug_script_with_errors_exits_1_and_runs_on(workdir, capsys):
    status, out, err = call(capsys, ["debug", ECHO, "--commands", "-"], stdin="frag frag lane 40\nstep 2\nwhere\n")
    assert status == 1 and "error: lane 40: lanes are 0-31" in out and "(warpsim) step 2\nexecuted " in out, out
    assert "(warpsim) where\n=> #" in out                                   # the script ran on
