"""Exit statuses that only a real process shows: Ctrl-C (130), a file-size limit (``ulimit -f``), usage."""

import os
import signal
import subprocess
import sys
import time

import pytest

from bad_input_helpers import ECHO, GEMM, OLD, ROOT, needs_sigint


def warpsim(*args, cwd, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "warpsim", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _interrupt(proc, ready):
    """Wait until the process's stderr shows ``ready``, then send SIGINT; returns (status, stderr)."""
    seen = ""
    deadline = time.monotonic() + 120
    while ready not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    assert ready in seen, seen
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, seen + err


SLEEPY = ("import sys, time\nimport warpsim\n\ndef kernel(tid):\n    sys.stderr.write('tracing\\n')\n"
          "    sys.stderr.flush()\n    time.sleep(60)\n\nprogram = warpsim.Program(kernel, threads=32)\n")


@needs_sigint
@pytest.mark.parametrize("verb", ["run", "debug", "draw"])
def test_ctrl_c_is_interrupted_130(tmp_path, verb):
    (tmp_path / "sleepy.py").write_text(SLEEPY)
    args = {"run": ["run", "sleepy.py"], "debug": ["debug", "sleepy.py"], "draw": ["draw", "regs", "sleepy.py"]}[verb]
    proc = warpsim(*args, cwd=tmp_path, stdin=subprocess.DEVNULL)
    status, err = _interrupt(proc, "tracing")
    assert status == 130, err
    assert err.strip().splitlines()[-1] == f"warpsim {verb}: interrupted" and "Traceback" not in err, err


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX file-size limits")
def test_file_size_limit_leaves_no_half_written_file(tmp_path):
    """Point 7: under ``ulimit -f 16`` (16 KiB) a 32 KiB dump and a big SVG fail whole: one line, exit 2."""
    (tmp_path / "old.svg").write_bytes(OLD)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = f"{sys.executable} -m warpsim run {GEMM} --dump tSrK --out d"
    draw = f"{sys.executable} -m warpsim draw mma --config seed -o old.svg"
    for command, name in ((run, "d/tSrK.npy"), (draw, "old.svg")):
        done = subprocess.run(["bash", "-c", f"ulimit -f 16; exec {command}"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip() == f"warpsim {command.split()[3]}: error: cannot write {name}: File too large"
    assert sorted(os.listdir(tmp_path)) == ["d", "old.svg"] and os.listdir(tmp_path / "d") == []
    assert (tmp_path / "old.svg").read_bytes() == OLD


def test_exit_statuses(tmp_path):
    """0 for a match, 1 for a mismatch, 2 for a user error (the verb's usage for a bad option)."""
    cases = [(["run", ECHO], 0, ""), (["run", ECHO, "--param", "check=wrong"], 1, ""),
             (["run", ECHO, "--frob", "x"], 2, "usage: warpsim run "),
             (["run", ECHO, "--param", "fail=exit"], 2, "Traceback (the program's own frames):")]
    for args, status, err_start in cases:
        proc = warpsim(*args, cwd=tmp_path)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == status and err.startswith(err_start), (args, err)
