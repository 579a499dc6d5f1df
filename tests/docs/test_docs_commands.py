"""Every command of the Getting started and Guides pages runs, and shows what the page says it shows.

The pages' ``bash`` blocks, ``console`` blocks (``$ command`` and its output) and ``python`` blocks are read in
order, page by page, and run in one scratch folder per page (``examples/`` and ``tests/`` linked into it), so a
block may use the files an earlier block of its page made (``q.npy``). A ``console`` block's output lines must
each be a line of the real output (``...`` stands for lines left out); a console transcript of ``warpsim debug``
feeds its ``(warpsim)`` lines to the session. Where the page says more than the reader needs to see, an HTML
comment just above a block (invisible on the site) tells this test how to run it:

- ``<!-- docs-test: needs gpu|nvcc|dsl|ray -->``: skipped, with the reason, where that is missing (a GPU is
  never assumed: hwcheck's checking commands need one, and are recognised without the comment);
- ``<!-- docs-test: file NAME -->``: the block is a file, written as NAME (a test file the page then runs);
- ``<!-- docs-test: exit N -->``: the commands of the block end with status N (``warpsim check`` with findings);
- ``<!-- docs-test: slow -->``: only with ``--slow`` (long compiles or runs);
- ``<!-- docs-test: skip REASON -->``: not run, for the reason given (an excerpt, a placeholder).

Blocks that the tests named in ``tested-by`` already run and compare are left to them
(``<!-- docs-test: tested-by tests/... -->``), so nothing is checked twice.
"""

import contextlib
import importlib.util
import io
import runpy
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from tests.docs.pages import DOCS, ROOT

PAGES = sorted(str(p.relative_to(DOCS)) for d in ("getting-started", "guides") for p in (DOCS / d).glob("*.md"))
BLOCK = re.compile(r"((?:<!-- docs-test: [^>]*-->\n)*)```(\w*)\n(.*?)```", re.S)
DIRECTIVE = re.compile(r"<!-- docs-test: (\S+) ?(.*?) -->")
HWCHECK_OFFLINE = {"lower", "--help", "-h", "--version"}


def _have_gpu():
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:                              # no driver, no device: no GPU
        return False


MISSING = {
    "gpu": None if _have_gpu() else "needs a CUDA GPU and CuPy (pip install -e '.[gpu]')",
    "nvcc": None if shutil.which("nvcc") or os.environ.get("CUDA_HOME") else "needs nvcc (a CUDA toolkit)",
    "dsl": None if importlib.util.find_spec("cutlass") else "needs CuTe DSL (pip install -e '.[dsl]')",
    "ray": None if importlib.util.find_spec("ray") else "needs Ray (pip install -e '.[ray]')",
}


@dataclass
class Block:
    page: str
    lang: str
    text: str
    directives: dict = field(default_factory=dict)

    @property
    def where(self):
        return f"docs/{self.page}: {self.lang or 'text'} block {self.text.splitlines()[0][:70]!r}"


def blocks(page):
    """The runnable blocks of a page, in order, with their directives."""
    out = []
    for m in BLOCK.finditer((DOCS / page).read_text()):
        directives = dict(DIRECTIVE.findall(m.group(1)))
        lang, text = m.group(2), m.group(3)
        if lang in ("bash", "python", "console") or (lang in ("", "text") and text.startswith("$ ")):
            out.append(Block(page, "console" if text.startswith("$ ") else lang, text, directives))
    return out


def commands(text):
    """The shell commands of a block: continuation lines joined, comments dropped, a quoted string that spans
    lines (``python -c "..."``) kept whole."""
    out, cur = [], ""
    for line in text.splitlines():
        cur = (f"{cur} {line.strip()}" if not _open_quote(cur) else f"{cur}\n{line}") if cur else line
        try:
            shlex.split(cur.rstrip("\\"), comments=True)
        except ValueError:                          # an open quote: the command goes on
            continue
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        if shlex.split(cur, comments=True):
            out.append(cur)
        cur = ""
    return out


def _open_quote(text):
    try:
        shlex.split(text, comments=True)
        return False
    except ValueError:
        return True


def console_command(text):
    """The command of a ``console`` block (``$ `` and its continuation lines) and the lines shown after it."""
    lines = text.rstrip("\n").splitlines()
    command, rest = lines[0][2:], lines[1:]
    while command.endswith("\\") and rest:
        command = command[:-1].rstrip() + " " + rest.pop(0).strip()
    return command, rest


def needs(command, directives):
    """Why a command cannot run here, or None."""
    words = shlex.split(command, comments=True)
    reasons = [directives["needs"]] if "needs" in directives else []
    if words[0] == "hwcheck" and len(words) > 1 and words[1] not in HWCHECK_OFFLINE and "--simulate-only" not in words:
        reasons.append("gpu")
    if any(w.endswith(".cu") for w in words):
        reasons.append("nvcc")
    if any("cute_dsl/" in w or w.endswith("_dsl.py") for w in words):
        reasons.append("dsl")
    if "--ray" in words:
        reasons.append("ray")
    return next((MISSING[r] for r in reasons if MISSING[r]), None)


def not_run(command):
    """Commands a reader runs once, never a test: installs, the project's own test suite, a Ray cluster's start."""
    words = shlex.split(command, comments=True)
    if "pip" in words[:3] and "install" in words:
        return "installs packages"
    if words[:1] == ["ray"]:
        return "starts or stops a Ray cluster"
    if "pytest" in words[:3] and any(w.startswith("tests") for w in words):
        return "the project's own tests: the suite runs them"
    return None


def environment():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                NO_COLOR="1", COLUMNS="80")


def run_shell(command, cwd, stdin=""):
    words = shlex.split(command, comments=True)
    if words[0] in ("warpsim", "hwcheck") and shutil.which(words[0]) is None:   # not installed: the module
        command = f"{shlex.quote(sys.executable)} -m {command}"
    elif words[0] == "python":
        command = shlex.quote(sys.executable) + command[len("python"):]
    elif "| warpsim" in command and shutil.which("warpsim") is None:
        command = command.replace("| warpsim", f"| {shlex.quote(sys.executable)} -m warpsim")
    return subprocess.run(command, shell=True, cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=environment(), timeout=900)


def check_console(block, cwd):
    """``$ command`` and the lines it prints: each shown line must be printed."""
    command, shown = console_command(block.text)
    session = [ln[len("(warpsim) "):] for ln in shown if ln.startswith("(warpsim) ")]
    done = run_shell(command, cwd, stdin="\n".join(session) + "\n" if session else "")
    want_exit = int(block.directives.get("exit", 0))
    assert done.returncode == want_exit, f"{block.where}: `{command}` exited {done.returncode}\n{done.stderr[-3000:]}"
    real = (done.stdout + done.stderr).splitlines()
    real += [ln for out in real if out.startswith("(warpsim) ") for ln in [out[len("(warpsim) "):]]]
    for line in shown:
        if line.strip() == "..." or line.startswith("(warpsim) "):
            continue
        assert line.rstrip() in [r.rstrip() for r in real], \
            f"{block.where}: the page shows {line!r}, `{command}` printed:\n" + "\n".join(real[:60])


def run_python(block, cwd):
    """Run a Python block from a file of its own (``@triton.jit`` and ``@cuda.jit`` read their source), as a
    reader pasting it into a script would; our pages, our examples."""
    cwd_before = os.getcwd()
    os.chdir(cwd)
    script = cwd / f"block_{abs(hash(block.where)) % 10**8}.py"
    script.write_text(block.text)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(script), run_name="__docs__")
    finally:
        os.chdir(cwd_before)


@pytest.mark.parametrize("page", PAGES)
def test_every_command_of_the_page_runs(page, tmp_path, request):
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "docs").mkdir()                   # where the pictures guide writes the committed picture
    ran, skipped = 0, []
    for block in blocks(page):
        d = block.directives
        if "skip" in d or "tested-by" in d:
            continue
        if "slow" in d and not request.config.getoption("--slow"):
            skipped.append(f"{block.where}: slow (run with --slow)")
            continue
        if "file" in d:
            (tmp_path / d["file"]).write_text(block.text)
            continue
        if block.lang == "python":
            reason = MISSING.get(d.get("needs"))
            if reason:
                skipped.append(f"{block.where}: {reason}")
                continue
            run_python(block, tmp_path)
            ran += 1
            continue
        cmds = [console_command(block.text)[0]] if block.lang == "console" else commands(block.text)
        reason = next((r for c in cmds for r in (not_run(c), needs(c, d)) if r), None)
        if reason:
            skipped.append(f"{block.where}: {reason}")
            continue
        if block.lang == "console":
            check_console(block, tmp_path)
        else:
            for c in cmds:
                done = run_shell(c, tmp_path)
                want_exit = int(d.get("exit", 0))
                assert done.returncode == want_exit, \
                    f"{block.where}: `{c}` exited {done.returncode}\n{done.stderr[-3000:]}"
        ran += 1
    if skipped:
        print("\n".join(["not run here:", *skipped]))
    if not ran:
        pytest.skip("; ".join(skipped) or f"docs/{page} has no runnable block")


def test_the_block_parser_reads_what_a_reader_types():
    assert commands('python -c "import x\nfor n in y: z"\nwarpsim run a \\\n    --b c   # why\n') == \
        ['python -c "import x\nfor n in y: z"', "warpsim run a --b c   # why"]
    assert needs("hwcheck run k.cu", {}) in (MISSING["gpu"], MISSING["nvcc"])
    assert needs("hwcheck lower examples/gemm_smem.py", {}) is None
    assert not_run('python -m pip install -e ".[gpu]"') == "installs packages"
