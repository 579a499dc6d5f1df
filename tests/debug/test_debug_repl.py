"""The one command language (``warpsim debug``), in process, through pipes and through a real pseudo-terminal.

The acceptance session (issue 27, item 4): one debugger script -- ``break FILE:LINE``, ``continue``, ``print``
of a register, ``stepi``, ``info warps``, ``back``, ``continue`` -- typed into ``warpsim debug`` on a
pseudo-terminal, against the Python program ``examples/gemm_smem.py`` and the CuTe C++ kernel
``examples/cute_cpp/gemm_smem.cu``: the same commands work in both and print the same kinds of output.
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
from warpsim.toolchain import find_nvcc
from tests.docs.pages import section

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]|\x1b[=>]|[\r\x01\x02\x07]")
OUR_COLOURS = re.compile(r"\x1b\[(31|32|1;33|1;35|1;34|2)m")
GEMM_CU = ROOT / "examples" / "cute_cpp" / "gemm_smem.cu"
CACHE = os.environ.get("WARPSIM_CACHE") or os.path.expanduser("~/.cache/warpsim-ptx")


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


def run_repl(program, commands, params=None, inputs=None):
    out = io.StringIO()
    repl = Repl(Session.program(program, params, inputs), out)
    status = repl.run_script(commands)
    return status, out.getvalue()


def test_every_command_has_help_and_errors_are_one_line(program):
    status, text = run_repl(program, ["help", "help print", "frobnicate", "step x", "print %r1 warp 9", "who tSrK 1",
                                      "from 5", "break reg 0 5", "print sK rows 9", "banks sideways",
                                      "until 3", "list 1000", "x/4x shared 0", "info nothing", "where"])
    assert status == 1
    for name, (usage, _text) in COMMANDS.items():
        assert usage in text, name
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 12, errors
    assert "error: unknown command 'frobnicate'; `help` lists the commands" in errors
    assert "error: step: expected an integer, got 'x'" in errors
    assert "error: warp must be an int in [0, 4), got 9" in errors
    assert "error: rows: expected START:STOP, e.g. 0:8, got '9'" in errors
    assert any(e.startswith("error: x: 4 x 4 bytes at 0x0 are outside shared memory [0x400") for e in errors)
    assert text.split("(warpsim) where\n", 1)[1].startswith("=> #0, CTA (0, 0, 0), warp 0")     # it went on


def test_motion_breakpoints_and_views_in_process(program, tmp_path):
    gemm = source_line("gemm(tiled_mma, tCrA")
    svg, banks_svg = tmp_path / "r.svg", tmp_path / "b.svg"
    status, text = run_repl(program, [
        f"break gemm_smem.py:{gemm}", "break mma", "info breakpoints", "delete 2", "continue", "where", "list",
        "stepi 3", "back 2", "next", "until 144", "print acc lane 0,31 warp 1", f"regs 1 f32 acc save {svg}",
        "print sK banks rows 0:2 cols 0:8", f"print sK banks rows 0:8 save {banks_svg}",
        "print acc copy lane 31 warp 3", "from 31 %r4 warp 3", "who acc 63 63", "banks all detail", "info warps",
        "cuda warp 2", "info lanes", "quit", "step"])
    assert status == 0, text
    assert f"Breakpoint 1: line gemm_smem.py:{gemm} (32 instructions)" in text
    assert "Breakpoint 2: instruction mma" in text and "  2  instruction mma  (hit 0 times)" in text
    assert "deleted breakpoint 2" in text and f"Breakpoint 1, line gemm_smem.py:{gemm}: w0" in text
    assert re.search(rf"=> #\d+, CTA \(0, 0, 0\), warp 0 lanes 0-31: gemm_smem.py:{gemm}, PTX line \d+: mma.sync", text)
    assert f"{gemm:5d} B=>" in text
    assert re.search(r"executed 3 warp instructions \(#(\d+)-#\d+\)", text) and "back to #" in text
    assert svg.read_text().startswith("<svg") and "<svg" in banks_svg.read_text()[:200]
    assert "acc (f32), copy view through store_thr_copy ((_2,_4),_1,_4):((_1,_2),_0,_8), warp 3" in text
    assert "lane 31 (thread 127):" in text
    assert "acc: element (63, 63) of s is global 0x" in text and "-> w3 st.global" in text
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16: 80 accesses" in text
    assert "focus warp 2 (pinned)" in text and "warp 2, CTA (0, 0, 0): running" in text
    assert text.endswith("(warpsim) quit\n")                                      # nothing runs after quit


def test_print_shows_lane_5_after_the_first_ldmatrix_of_K_in_process(program):
    line = source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]")
    status, text = run_repl(program, [f"break {line}", "continue", "step", "info registers tSrK hex lane 5 warp 0"],
                            inputs=coded_inputs())
    assert status == 0, text
    check_lane5_registers(program, text.split("(warpsim) info registers", 1)[1])


def check_lane5_registers(program, text):
    """The `info registers tSrK hex lane 5 warp 0` table in ``text`` holds, in the registers of the k-block 0 copy of K,
    the K elements CuTe's copy view assigns to thread 5 -- and nothing yet in the rest of tSrK."""
    lines = text.splitlines()
    names, cells = [], []
    for k, ln in enumerate(lines):          # the table wraps: blocks of columns, each with its header
        if ln.startswith("lane  %r"):
            assert lines[k + 1].split()[0] == "5", lines[k + 1]
            names += ln.split()[1:]
            cells += lines[k + 1].split()[1:]
    assert len(names) == len(cells) == 64
    got = dict(zip((int(n[2:]) for n in names), (int(v.lstrip("*"), 16) for v in cells)))
    cute_side = seed_cute(5)
    frag, view = cute_side["frag"], cute_side["copy_view"]
    base = program.trace({}).tensors["tSrK"].bases[0]
    index_of_slot = {int(frag.address(i)): i for i in range(128)}
    k_block = [int(view.address(j)) for j in range(32)]      # copy view ((_8,_1),_4,_4): k-block 0 = values 0..31
    expected = {}
    for slot in k_block:
        reg, half = base + slot // 2, slot % 2
        expected.setdefault(reg, [None, None])[half] = cute_side["coords"][index_of_slot[slot]]
    for reg, (lo, hi) in expected.items():
        assert (decode(got[reg] & 0xFFFF, "k"), decode(got[reg] >> 16, "k")) == (lo, hi), \
            f"lane 5 %r{reg}: expected K{lo} | K{hi}, got {got[reg]:#010x}"
    assert all(v == 0 for r, v in got.items() if r not in expected)


def test_warpsim_debug_script_pipe_and_user_errors(tmp_path):
    script = tmp_path / "s.txt"
    script.write_text("# a comment\nstepi 2\nwhere\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "warpsim", "debug", str(EXAMPLE)]
    done = subprocess.run(cmd + ["--commands", str(script)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "(warpsim) stepi 2\nexecuted 2 warp instructions (#0-#1)" in done.stdout
    assert "\x1b[" not in done.stdout                                      # not a terminal: no colour
    done = subprocess.run(cmd, input="print %r0 warp 9\nwhere\n", capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 1 and "(warpsim) print %r0 warp 9\nerror: warp must be an int" in done.stdout
    assert "=> #0, CTA" in done.stdout.split("(warpsim) where", 1)[1]
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


def spawn(tmp_path, args, extra_env=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path), TERM="dumb", WARPSIM_CACHE=CACHE)
    env.pop("NO_COLOR", None)
    env.update(extra_env or {})
    term = Terminal([sys.executable, "-m", "warpsim", "debug", *map(str, args)], env)
    return term, term.read_prompt(timeout=600)


def program_args(tmp_path):
    np.save(tmp_path / "q.npy", coded_inputs()["q"])
    np.save(tmp_path / "k.npy", coded_inputs()["k"])
    return [EXAMPLE, "--input", f"q={tmp_path / 'q.npy'}", "--input", f"k={tmp_path / 'k.npy'}"]


def kernel_args(tmp_path):
    np.save(tmp_path / "q.npy", coded_inputs()["q"])
    np.save(tmp_path / "k.npy", coded_inputs()["k"])
    return [GEMM_CU, "--kernel", "gemm_smem_f16_qk_swizzle", "--arch", "sm_80", "--arg", f"q={tmp_path / 'q.npy'}",
            "--arg", f"k={tmp_path / 'k.npy'}", "--arg", "s=zeros:f32:64x64"]


def line_of(path, text):
    lines = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    assert len(lines) == 1, f"{text!r} is on lines {lines} of {path}"
    return lines[0]


FRONT_ENDS = {   # the same script, with each front end's source line of the gemm and one register it uses
    "program": (program_args, EXAMPLE, "gemm(tiled_mma, tCrA[_, _, i], tCrB[_, _, i], acc)"),
    "cu": (kernel_args, GEMM_CU, "cute::gemm(tiled_mma, tCrA(_, _, i), tCrB(_, _, i), acc);"),
}


@pytest.mark.parametrize("front", FRONT_ENDS)
def test_acceptance_one_script_through_a_pseudo_terminal(front, tmp_path):
    make_args, source, text = FRONT_ENDS[front]
    if front == "cu" and find_nvcc() is None:
        pytest.skip("nvcc not found on PATH or under CUDA_HOME: the .cu front end needs it")
    line = line_of(source, text)
    term, banner = spawn(tmp_path, make_args(tmp_path))
    try:
        assert "`help` lists the commands" in banner and "=> #0, CTA (0, 0, 0), warp 0" in banner
        assert f"Breakpoint 1: line {source.name}:{line}" in term.command(f"break {source.name}:{line}")
        stop = term.command("continue")
        assert f"Breakpoint 1, line {source.name}:{line}: w0" in stop, stop
        here = re.search(r"=> #(\d+), CTA \(0, 0, 0\), warp 0 lanes 0-31: " + re.escape(source.name) +
                         rf":{line}, PTX line \d+: ((?:mma|mov)\S*) \{{?(%\w+)", stop)
        assert here, stop
        position, opcode, register = int(here.group(1)), here.group(2), here.group(3)   # the first: its destination
        assert f"{source.name}:{line}: " in stop and "gemm(tiled_mma, tCrA" in stop   # the source line, quoted
        printed = term.command(f"print {register} lanes 0-3")
        assert re.search(rf"^warp 0, CTA \(0, 0, 0\), typed, after #{position - 1} ", printed, re.M), printed
        assert re.search(rf"^lane +{re.escape(register)}$", printed, re.M) and re.search(r"^   3 ", printed, re.M)
        step = term.command("stepi")
        assert re.search(rf"^executed #{position} w0 lanes 0-31: {re.escape(opcode)} .*; wrote {re.escape(register)}", step,
                         re.M), step
        assert f"=> #{position + 1}, CTA" in step
        warps = term.command("info warps")
        assert re.search(r"^=>\* warp +0 +running +lanes 0-31 +pc \d+ ", warps, re.M), warps
        assert re.search(r"^ +warp +1 ", warps, re.M) and "CTA (0, 0, 0), 4 warps" in warps
        back = term.command("back")
        assert f"back to #{position}" in back and f":{line}, PTX line" in back
        again = term.command("")                                            # Enter repeats `back`
        assert f"back to #{position - 1}" in again
        assert term.command("frobnicate").startswith("error: unknown command 'frobnicate'")
        stop = term.command("continue")
        assert f"Breakpoint 1, line {source.name}:{line}: w" in stop
    finally:
        status = term.close()
    assert status == 0
    assert f"break {source.name}:{line}" in (tmp_path / ".warpsim_history").read_text()


def test_no_color_on_a_terminal(tmp_path):
    term, _banner = spawn(tmp_path, program_args(tmp_path), {"NO_COLOR": "1"})
    try:
        out = term.command("stepi") + term.command("print %rd0 lane 0") + term.command("nope")
        assert "error: unknown command 'nope'" in out and "*0x" in out
    finally:
        assert term.close() == 0
    assert not OUR_COLOURS.search(term.raw)


def test_colour_on_a_terminal(tmp_path):
    term, _banner = spawn(tmp_path, program_args(tmp_path))
    try:
        term.command("stepi")
        term.command("nope")
    finally:
        assert term.close() == 0
    assert OUR_COLOURS.search(term.raw)


def readme_section():
    return section("guides/debugger.md", "Debugging: one debugger for every front end")


def test_readme_transcript_is_a_real_session(tmp_path):
    block = re.search(r"```text\n\$ warpsim debug (.*?)\n(.*?)```", readme_section(), re.S)
    args, body = block.group(1).split(), block.group(2)
    np.save(tmp_path / "q.npy", coded_inputs()["q"])
    np.save(tmp_path / "k.npy", coded_inputs()["k"])
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    commands = [ln[len("(warpsim) "):] for ln in body.splitlines() if ln.startswith("(warpsim) ")]
    script = tmp_path / "readme.txt"
    script.write_text("\n".join(commands) + "\n")
    done = subprocess.run([sys.executable, "-m", "warpsim", "debug", *args, "--commands", str(script)],
                          capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    real = done.stdout.splitlines()
    for line in body.splitlines():
        if line.strip() != "...":
            assert line in real, f"README transcript line not in a real session: {line!r}"


def test_readme_python_example():
    import contextlib
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme_section(), re.S) if "Session." in b)
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
