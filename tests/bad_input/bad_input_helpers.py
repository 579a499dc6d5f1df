"""The bad-input suite's helpers (its ``conftest.py`` makes ``workdir`` a fixture): the command line called in process, and what every error must look like.

Every case checks the three things of the project's "error": one line naming the input (the last line of
stderr; an error of the user's own code may be preceded by that code's frames), the exit status, and that
no file is left half-written (the working directory holds what it held before, byte for byte).
"""

import io
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from warpsim.commands import main

ROOT = Path(__file__).resolve().parents[2]
ECHO = ROOT / "tests" / "bad_input" / "programs" / "echo.py"
GEMM = ROOT / "examples" / "gemm_smem.py"
OLD = b"<svg>the old picture</svg>\n"
# A process started in the background by a non-interactive shell (`pytest &`) ignores SIGINT, and so do its children:
# a Ctrl-C test there would wait for an interrupt that never comes.
needs_sigint = pytest.mark.skipif(signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
                                  reason="SIGINT is ignored in this process (started with & by a non-interactive "
                                         "shell?): Ctrl-C cannot be tested; run pytest in the foreground")


def _snapshot(directory):
    return {str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(Path(directory).rglob("*"))}


def make_files(d):
    """The inputs the cases name, written into ``d``."""
    rng = np.random.default_rng(0)
    np.save(d / "q.npy", rng.integers(0, 1 << 16, (64, 64), dtype=np.uint16))
    np.save(d / "x.npy", np.arange(256, dtype=np.uint16).reshape(32, 8))
    np.save(d / "x_be.npy", np.arange(256, dtype=">u2").reshape(32, 8))
    np.save(d / "x_f16.npy", np.ones((32, 8), np.float16))
    np.save(d / "x_f32.npy", np.ones((32, 8), np.float32))
    np.save(d / "x_i16.npy", np.ones((32, 8), np.int16))
    np.save(d / "x_t.npy", np.zeros((8, 32), np.uint16))
    np.save(d / "x_0d.npy", np.uint16(7))
    np.save(d / "x_str.npy", np.array(["not an array"]))
    np.save(d / "obj.npy", np.array([None, 1], dtype=object), allow_pickle=True)
    np.savez(d / "two.npz", a=np.zeros(3))
    (d / "text.npy").write_text("not an array\n")
    (d / "empty.npy").write_bytes(b"")
    (d / "truncated.npy").write_bytes((d / "x.npy").read_bytes()[:100])
    (d / "adir").mkdir()
    (d / "old.svg").write_bytes(OLD)
    (d / "cfg_syntax.py").write_text("tiled_mma = (\n")
    (d / "cfg_raises.py").write_text("x = 1\nraise KeyError('a config bug')\n")
    (d / "cfg_exit.py").write_text("import sys\nsys.exit(4)\n")
    (d / "cfg_empty.py").write_text("# nothing\n")
    (d / "cfg_nofrag.py").write_text("from warpsim.explain import seed_config\ntiled_mma = seed_config().tiled_mma\n")
    (d / "prog_exit.py").write_text("import sys\nsys.exit(0)\n")
    (d / "prog_syntax.py").write_text("def (:\n")
    (d / "prog_raises.py").write_text("import warpsim\n\nraise RuntimeError('broken at load')\n")
    (d / "prog_none.py").write_text("x = 1\n")
    (d / "prog_threads.py").write_text(
        "import warpsim\n\ndef kernel(tid):\n    pass\n\n"
        "program = warpsim.Program(kernel, threads=lambda p: p['missing'])\n")
    (d / "prog_big.py").write_text(
        "import warpsim\n\ndef kernel(tid):\n    pass\n\n"
        "program = warpsim.Program(kernel, threads=33554432)\n")
    (d / "prog_smem.py").write_text(
        "import warpsim\n\ndef kernel(tid):\n    pass\n\n"
        "program = warpsim.Program(kernel, threads=32, smem_bytes=10**13)\n")
    (d / "prog_smem200k.py").write_text(
        "import warpsim\n\ndef kernel(tid):\n    pass\n\n"
        "program = warpsim.Program(kernel, threads=32, smem_bytes=200 * 1024)\n")
    (d / "prog_buffer.py").write_text(
        "import warpsim\n\ndef kernel(tid, *, x):\n    pass\n\n"
        "program = warpsim.Program(kernel, threads=32, inputs={'x': ((10**6, 10**6), 'f32')})\n")
    (d / "prog.txt").write_text("not python\n")


def workdir(tmp_path, monkeypatch):
    """A working directory with the inputs of :func:`make_files`; yields it, then checks nothing in it
    changed (no file half-written, none left behind) unless the case wrote there on purpose."""
    make_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    yield tmp_path
    after = _snapshot(tmp_path)
    assert after == before, f"files changed: {sorted(set(after) ^ set(before)) or 'contents'}"


def call(capsys, argv, stdin=""):
    """``(status, stdout, stderr)`` of ``warpsim ARGV`` run in this process."""
    capsys.readouterr()
    old = os.sys.stdin
    os.sys.stdin = io.StringIO(stdin)
    try:
        status = main([str(a) for a in argv])
    except SystemExit as e:           # argparse's usage errors
        status = e.code
    finally:
        os.sys.stdin = old
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line_error(status, err, prefix, fragments, want_status=2, frames=False):
    """The error contract: status, a last line ``PREFIX: error: ...`` holding every fragment, nothing
    else on stderr but (with ``frames``) the user's own traceback frames."""
    assert status == want_status, (status, err)
    lines = err.strip("\n").splitlines()
    assert lines, "no error message"
    last = lines[-1]
    assert last.startswith(f"{prefix}: error: "), err
    for fragment in fragments:
        assert fragment in last, (fragment, err)
    if frames:
        assert lines[0] == "Traceback (the program's own frames):", err
        assert all("warpsim/" not in line for line in lines[1:-1] if line.lstrip().startswith("File ")), err
    else:
        assert len(lines) == 1, err
    assert "Traceback (most recent call last)" not in err, err
