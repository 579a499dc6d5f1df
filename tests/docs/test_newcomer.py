"""A newcomer follows Getting started at a terminal: a clone, a fresh virtual environment, and only the commands
the pages show, typed into an interactive shell on a pseudo-terminal, in page order (install, first kernel,
debugger, pytest; the GPU page needs a GPU and is left out). What a ``console`` block shows must be printed; every
command must end with the status its page says. The debugger runs on the terminal (readline, as a reader has it),
its ``(warpsim)`` lines typed in.

Long (a fresh install and a cold Numba compile in the clone): run with ``--slow``. Needs git, network access or a
pip cache holding numpy, numba and nvidia-cutlass, and for the ``.cu`` pages ``nvcc``."""

import os
import pty
import re
import select
import shutil
import signal
import subprocess
import time

import pytest

from tests.docs.pages import ROOT
from tests.docs.test_docs_commands import MISSING, blocks, commands, console_command, needs, not_run

PAGES = ["getting-started/install.md", "getting-started/first-kernel.md", "getting-started/debugger.md",
         "getting-started/pytest.md"]
PROMPT = "(warpsim) "


class Terminal:
    """``bash`` on a pseudo-terminal in ``cwd``: :meth:`type` runs one command line (with lines for its stdin) and
    returns its status and what the terminal showed, echo off."""

    def __init__(self, cwd, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:                                   # the child: a plain interactive shell
            os.chdir(cwd)
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
        self.count, self.buffer = 0, b""
        self.type("stty -echo; PS1=''; PS2=''")

    def _read_until(self, pattern, timeout):
        end = time.monotonic() + timeout
        while True:
            m = pattern.search(self.buffer)
            if m:
                out, self.buffer = self.buffer[:m.start()], self.buffer[m.end():]
                return out.decode(errors="replace"), m
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no end after {timeout} s; the terminal shows:\n"
                                     + self.buffer.decode(errors="replace")[-3000:])
            ready, _, _ = select.select([self.fd], [], [], min(left, 5))
            if ready:
                try:
                    self.buffer += os.read(self.fd, 65536)
                except OSError:                             # the shell is gone
                    raise AssertionError("the shell ended; it showed:\n" + self.buffer.decode(errors="replace"))

    def type(self, line, stdin=(), timeout=900):
        self.count += 1
        marker = f"__newcomer_{self.count}__"
        os.write(self.fd, (line + "\n").encode())
        for text in stdin:
            os.write(self.fd, (text + "\n").encode())
        os.write(self.fd, f"echo {marker} $?\n".encode())
        out, m = self._read_until(re.compile(rf"{marker} (\d+)\r?\n".encode()), timeout)
        return int(m.group(1)), out.replace("\r\n", "\n")

    def close(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        os.close(self.fd)


def _shown(lines):
    """What a console block shows the command print: its output lines, the debugger's prompts and commands out."""
    return [ln for ln in lines if ln.strip() != "..." and not ln.startswith(PROMPT)]


def _printed(out):
    """The lines a command printed, each also without the debugger's prompts before it (echo is off, so a
    prompt and the answer to the command typed at it share a line)."""
    lines = out.splitlines()
    bare = []
    for ln in lines:
        while ln.startswith(PROMPT):
            ln = ln[len(PROMPT):]
        bare.append(ln)
    return [ln.rstrip() for ln in lines + bare]


@pytest.mark.slow
def test_a_newcomer_follows_getting_started_at_a_terminal(tmp_path):
    for tool in ("git", "bash"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH: the first kernel is a .cu file")
    clone = tmp_path / "warpsim"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(HOME=str(tmp_path / "home"), TERM="dumb", NO_COLOR="1", COLUMNS="80",
               PIP_DISABLE_PIP_VERSION_CHECK="1", WARPSIM_CACHE=str(tmp_path / "cache"), VIRTUAL_ENV_DISABLE_PROMPT="1")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(ROOT)) and "/.venv/" not in p)
    (tmp_path / "home").mkdir()
    term = Terminal(clone, env)
    try:
        status, out = term.type("python3 -m venv .venv && . .venv/bin/activate && python -m pip -q install -U pip",
                                timeout=300)
        assert status == 0, out
        ran = []
        for page in PAGES:
            first_install = page.endswith("install.md")
            for block in blocks(page):
                d = block.directives
                if "skip" in d or "slow" in d or block.lang not in ("bash", "console", "python"):
                    continue
                if block.lang == "python" and MISSING.get(d.get("needs")):
                    continue
                if "file" in d:                             # a file the page has the reader write
                    (clone / d["file"]).write_text(block.text)
                    continue
                if block.lang == "python":
                    (clone / "snippet.py").write_text(block.text)
                    cmds, shown, session = ["python snippet.py"], [], []
                elif block.lang == "console":
                    command, rest = console_command(block.text)
                    cmds, shown = [command], _shown(rest)
                    session = [ln[len(PROMPT):] for ln in rest if ln.startswith(PROMPT)]
                else:
                    cmds, shown, session = commands(block.text), [], []
                for command in cmds:
                    installs = "pip" in command.split()[:3] and "install" in command.split()
                    if installs and page.endswith("install.md") and not first_install:
                        continue                            # the optional extras: the newcomer takes the first
                    if not installs and (not_run(command) or needs(command, d)):
                        continue                            # a GPU, a Ray cluster, the project's own suite
                    first_install = first_install and not installs
                    debug = command.startswith("warpsim debug") and not session
                    status, out = term.type(command, stdin=session + (["quit"] if session or debug else []))
                    want = int(d.get("exit", 0))
                    assert status == want, f"{block.where}: `{command}` exited {status}\n{out[-3000:]}"
                    printed = _printed(out)
                    for line in shown:
                        assert line.rstrip() in printed, \
                            f"{block.where}: the page shows {line!r}; `{command}` printed:\n{out[-3000:]}"
                    ran.append(command)
                    if installs:                            # packaging: no deprecation, license and URLs shown
                        assert "Deprecat" not in out, out
                        status, out = term.type("python -m pip show -v warpsim")
                        assert "License-Expression: BSD-3-Clause" in out and "Project-URLs:" in out, out
        assert any(c.startswith("warpsim debug") for c in ran) and any("pytest" in c for c in ran), ran
        assert any(c.startswith("warpsim run") for c in ran) and any("pip" in c for c in ran), ran
    finally:
        term.close()
