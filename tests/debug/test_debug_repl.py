"""The debugger's command line: in process, as ``warpsim debug`` with a script or a pipe, and through a real
pseudo-terminal (readline, colour, history), where the acceptance session of issue 7 runs: lane 5's
registers after the first ldmatrix.x4 of K, ``who`` for several (n, k) checked against CuTe's
partition for thread 5, and a stop at a breakpoint on the gemm line.
"""

import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from debug_helpers import EXAMPLE, ROOT, coded_inputs, decode, seed_cute, source_line
from warpsim.debug.repl import COMMANDS, Repl
from warpsim.debug.session import Session
from warpsim.program import load_program

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]|\x1b[=>]|[\r\x01\x02\x07]")
OUR_COLOURS = re.compile(r"\x1b\[(31|32|1;33|1;35|1;34|2)m")


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


def run_repl(program, commands, params=None, inputs=None):
    out = io.StringIO()
    repl = Repl(Session(program, params, inputs), out)
    status = repl.run_script(commands)
    return status, out.getvalue()


def test_every_command_has_help_and_errors_are_one_line(program):
    status, text = run_repl(program, ["help", "help regs", "frobnicate", "step x", "regs 9", "who tSrK 1",
                                      "from 5", "break reg 0 5", "smem tSrK", "smem sK rows 9", "banks #0",
                                      "until 3", "list 1000", "where"])
    assert status == 1
    for name, (usage, _text) in COMMANDS.items():
        assert usage in text, name
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 11, errors
    assert "error: unknown command 'frobnicate'; `help` lists the commands" in errors
    assert "error: step: expected an integer, got 'x'" in errors
    assert "error: warp must be an int in [0, 4), got 9" in errors
    assert any(e.startswith("error: no shared or global tensor 'tSrK'") for e in errors)
    assert text.split("(warpsim) where\n", 1)[1].startswith("=> #0 of 372")      # the session went on


def test_motion_breakpoints_and_views_in_process(program, tmp_path):
    gemm = source_line("gemm(tiled_mma, tCrA")
    svg, banks_svg = tmp_path / "r.svg", tmp_path / "b.svg"
    status, text = run_repl(program, [
        f"break {gemm}", "break mma", "break", "delete 2", "cont", "where", "list", "step 3", "back 2",
        "next", "until 144", f"regs 1 f32 acc lane 0,31 save {svg}", "smem sK banks rows 0:2 cols 0:8",
        f"smem sK banks rows 0:8 save {banks_svg}", "frag acc copy lane 31 warp 3", "from 31 r4 warp 3",
        "who acc 63 63", "banks all detail", "quit", "step"])
    assert status == 0, text
    assert f"Breakpoint 1: line {gemm}" in text and "Breakpoint 2: instruction mma" in text
    assert "  2  instruction mma  (hit 0 times)" in text and "deleted breakpoint 2" in text
    assert f"Breakpoint 1, line {gemm}" in text and "=> #140 of 372, warp 0: mma.sync" in text
    assert f"{gemm:5d} B=>" in text
    assert "executed 3 instructions (#140-#142)" in text and "back to position 141" in text
    assert svg.read_text().startswith("<svg") and "<svg" in banks_svg.read_text()[:200]
    assert "acc (f32), copy view through store_thr_copy ((_2,_4),_1,_4):((_1,_2),_0,_8), warp 3" in text
    assert "lane 31 (thread 127):" in text
    assert "acc: element (63, 63) of s is global byte" in text and "-> #" in text
    assert text.endswith("(warpsim) quit\n")                                      # nothing runs after quit


def test_regs_shows_lane_5_after_the_first_ldmatrix_of_K_in_process(program):
    line = source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]")
    status, text = run_repl(program, [f"break {line}", "cont", "step", "regs 0 hex tSrK lane 5"],
                            inputs=coded_inputs())
    assert status == 0
    check_lane5_registers(program, text)


def check_lane5_registers(program, text):
    """The `regs 0 hex tSrK lane 5` table in ``text`` holds, in the registers of the first K copy call, the
    K elements CuTe's copy view assigns to thread 5 -- and nothing yet in the rest of tSrK."""
    lines = text.splitlines()
    names, cells = [], []
    for k, ln in enumerate(lines):          # the table wraps: blocks of columns, each with its header
        if ln.startswith("lane  r"):
            assert lines[k + 1].split()[0] == "5", lines[k + 1]
            names += ln.split()[1:]
            cells += lines[k + 1].split()[1:]
    assert len(names) == len(cells) == 64
    got = dict(zip((int(n[1:]) for n in names), (int(v.lstrip("*"), 16) for v in cells)))
    marked = {int(n[1:]) for n, v in zip(names, cells) if v.startswith("*")}
    cute_side = seed_cute(5)
    frag, view = cute_side["frag"], cute_side["copy_view"]
    base = program.trace({}).tensors["tSrK"].bases[0]
    index_of_slot = {int(frag.address(i)): i for i in range(128)}
    first_call = [int(view.address(j)) for j in range(8)]           # copy view ((_8,_1),_4,_4): call 0 = values 0..7
    expected = {}
    for slot in first_call:
        reg, half = base + slot // 2, slot % 2
        expected.setdefault(reg, [None, None])[half] = cute_side["coords"][index_of_slot[slot]]
    for reg, (lo, hi) in expected.items():
        assert (decode(got[reg] & 0xFFFF, "k"), decode(got[reg] >> 16, "k")) == (lo, hi), \
            f"lane 5 r{reg}: expected K{lo} | K{hi}, got {got[reg]:#010x}"
    assert marked == set(expected), f"marked {sorted(marked)}, written {sorted(expected)}"
    assert all(v == 0 for r, v in got.items() if r not in expected)


def test_warpsim_debug_script_pipe_and_user_errors(tmp_path):
    script = tmp_path / "s.txt"
    script.write_text("# a comment\nstep 2\nwhere\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "warpsim", "debug", str(EXAMPLE)]
    done = subprocess.run(cmd + ["--commands", str(script)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "(warpsim) step 2\nexecuted 2 instructions (#0-#1)" in done.stdout
    assert "\x1b[" not in done.stdout                                      # not a terminal: no colour
    done = subprocess.run(cmd, input="regs 9\nwhere\n", capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 1 and "(warpsim) regs 9\nerror: warp must be an int" in done.stdout
    assert "=> #0 of 372" in done.stdout.split("(warpsim) where", 1)[1]
    done = subprocess.run(cmd + ["--commands", "-"], input="step\nregs\n", capture_output=True, text=True, env=env,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "(warpsim) regs\nwarp 0, hex, after #0 ld.global.v4.b32\nlane  r0          r1          r2          r3\n" \
        in done.stdout                                          # the registers warp 0 has written so far
    for args, message in [(["--param", "dtype=f64"], "warpsim debug: error: program gemm_smem: param dtype='f64'"),
                          (["--commands", str(tmp_path / "none.txt")], "warpsim debug: error: --commands"),
                          (["--input", "q=nope.npy"], "warpsim debug: error: --input q=nope.npy")]:
        done = subprocess.run(cmd + args, capture_output=True, text=True, env=env, cwd=ROOT, input="")
        assert done.returncode == 2 and done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr


# -- a real pseudo-terminal ----------------------------------------------------------------------------

class Terminal:
    """``warpsim debug`` on a pseudo-terminal: send a line, read up to the next prompt."""

    def __init__(self, args, env):
        import fcntl
        import termios
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 250, 0, 0))
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
                                     close_fds=True, start_new_session=True)
        os.close(slave)
        self.raw = ""

    def read_prompt(self, timeout=90):
        buffer, deadline = b"", time.monotonic() + timeout
        while not ANSI.sub("", buffer.decode(errors="replace")).endswith("(warpsim) "):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no prompt within {timeout} s; got {buffer.decode(errors='replace')!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"the debugger ended; output {buffer.decode(errors='replace')!r}")
                buffer += chunk
        text = buffer.decode(errors="replace")
        self.raw += text
        return ANSI.sub("", text)

    def command(self, line):
        os.write(self.master, (line + "\n").encode())
        out = self.read_prompt()
        return out.split("\n", 1)[1] if "\n" in out else out          # drop the echoed command line

    def close(self):
        os.write(self.master, b"quit\n")
        try:
            self.proc.wait(timeout=30)
        finally:
            os.close(self.master)
        return self.proc.returncode


def spawn(tmp_path, extra_env=None, args=()):
    np.save(tmp_path / "q.npy", coded_inputs()["q"])
    np.save(tmp_path / "k.npy", coded_inputs()["k"])
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path), TERM="dumb")
    env.pop("NO_COLOR", None)
    env.update(extra_env or {})
    cmd = [sys.executable, "-m", "warpsim", "debug", str(EXAMPLE), "--input", f"q={tmp_path / 'q.npy'}",
           "--input", f"k={tmp_path / 'k.npy'}", *args]
    term = Terminal(cmd, env)
    term.read_prompt()
    return term


def test_acceptance_session_through_a_pseudo_terminal(program, tmp_path):
    k_line = source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]")
    gemm = source_line("gemm(tiled_mma, tCrA")
    term = spawn(tmp_path)
    try:
        assert f"Breakpoint 1: line {gemm}" in term.command(f"break {gemm}")
        assert "Breakpoint 2" in term.command(f"break {k_line}")
        stop = term.command("cont")
        assert f"Breakpoint 2, line {k_line}" in stop and "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in stop
        assert "wrote w0" in term.command("step")
        regs = term.command("regs 0 hex tSrK lane 5")
        check_lane5_registers(program, regs)
        cute_side = seed_cute(5)
        base = program.trace({}).tensors["tSrK"].bases[0]
        for i in (0, 2, 5, 33, 127):                                  # a few (n, k) that thread 5 holds
            n, k = cute_side["coords"][i]
            slot = int(cute_side["frag"].address(i))
            answer = term.command(f"who tSrK {n} {k}")
            reg = f"r{base + slot // 2}.{'hi' if slot % 2 else 'lo'}"
            assert re.search(rf"^  w0 lane  5 \(thread   5\) {re.escape(reg)} +slot {slot} ", answer, re.M), answer
        wrong = term.command("who tSrK 64 0")
        assert wrong.startswith("error: coordinate (64, 0) is outside sK's shape (64, 64)")
        stop = term.command("cont")
        assert f"Breakpoint 1, line {gemm}" in stop and "mma.sync.aligned.m16n8k16" in stop
        assert f"gemm_smem.py:{gemm}: gemm(tiled_mma" in stop
    finally:
        status = term.close()
    assert status == 0
    assert OUR_COLOURS.search(term.raw), "a terminal without NO_COLOR gets colour"
    history = (tmp_path / ".warpsim_history").read_text()
    assert f"break {gemm}" in history and "regs 0 hex tSrK lane 5" in history


def test_no_color_on_a_terminal(tmp_path):
    term = spawn(tmp_path, {"NO_COLOR": "1"})
    try:
        out = term.command("step") + term.command("regs 0 hex r0-r3 lane 0") + term.command("nope")
        assert "error: unknown command 'nope'" in out and "*0x" in out
    finally:
        assert term.close() == 0
    assert not OUR_COLOURS.search(term.raw)


def test_readme_transcript_is_a_real_session(tmp_path):
    text = (ROOT / "README.md").read_text().split("## Debugging lane registers", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```text\n\$ warpsim debug (\S+)\n(.*?)```", text, re.S)
    path, body = block.group(1), block.group(2)
    commands = [ln[len("(warpsim) "):] for ln in body.splitlines() if ln.startswith("(warpsim) ")]
    script = tmp_path / "readme.txt"
    script.write_text("\n".join(commands) + "\n")
    done = subprocess.run([sys.executable, "-m", "warpsim", "debug", path, "--commands", str(script)],
                          capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    real = done.stdout.splitlines()
    for line in body.splitlines():
        if line.strip() != "...":
            assert line in real, f"README transcript line not in a real session: {line!r}"


def test_readme_python_example():
    import contextlib
    text = (ROOT / "README.md").read_text().split("## Debugging lane registers", 1)[1].split("\n## ", 1)[0]
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "Session(" in b)
    namespace, checked = {}, 0
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for line in block.splitlines():
            code, _, comment = line.partition("#")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)     # the README is ours; its lines are examples
            if "print(" in code:
                want = comment.strip().split(" ...")[0]
                assert out.getvalue().strip().startswith(want), f"{line.strip()!r} printed {out.getvalue()!r}"
                checked += 1
    finally:
        os.chdir(cwd)
    assert checked == 5
