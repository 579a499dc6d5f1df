"""JSON reports, written whole or not at all.

A report says what ran, where and with what result::

    {"format": "hwcheck-report/1", "tool": "hwcheck", "version": ..., "command": ..., "date": ...,
     "host": {...}, "gpu": {...}, "status": "pass" | "fail" | "error", ...}

``gpu`` holds the GPU's name, driver version, CUDA runtime and driver API versions, CuPy and NVRTC
versions and arch (see :class:`hwcheck.device.gpu.GpuInfo`). The caller adds its own sections (campaign
rows, mismatch records).

:func:`write_json_atomic` serialises first, writes a temporary file in the target's directory,
flushes and fsyncs it, then ``os.replace``-s it over the target: a reader sees the old file or the
new one, never a part; on any failure the temporary file is removed and the target is untouched.

Paths in a report are made portable first (:func:`portable_paths`): a path inside the repository is
written relative to its root, one inside the home folder as ``~/...``, so a report names no machine's
folders.

>>> import tempfile, os, json
>>> d = tempfile.mkdtemp()
>>> write_json_atomic(os.path.join(d, "r.json"), {"status": "pass"})
>>> json.load(open(os.path.join(d, "r.json")))["status"], os.listdir(d)
('pass', ['r.json'])
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import sys

import numba
import numpy as np

from warpsim import __version__
from hwcheck.errors import HwcheckError
from warpsim.files import WriteError, write_atomic

__all__ = ["REPORT_FORMAT", "new_report", "portable_paths", "write_json_atomic", "write_text_atomic", "command_line",
           "cpu_model", "cpu_fields"]

REPORT_FORMAT = "hwcheck-report/1"


def command_line(argv=None) -> str:
    """The command as a user would type it: ``hwcheck`` and the shell-quoted arguments.

    >>> command_line(["campaign", "--instr", "mma", "--report", "a b.json"])
    "hwcheck campaign --instr mma --report 'a b.json'"
    """
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["hwcheck", *(shlex.quote(str(a)) for a in args)])


def cpu_fields() -> dict:
    """The first processor's ``/proc/cpuinfo`` fields, or {} where there is no such file."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    """The CPU's model name, with its family and model numbers where the OS gives them (the simulator's code is
    compiled for this machine's CPU: reports and benchmarks say which; bench/hostinfo.py prints it too)."""
    info = cpu_fields()
    name = info.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in info:
        name += f" (family {info['cpu family']}, model {info.get('model', '?')})"
    return name


def _llvm_cpu() -> str:
    """The CPU name LLVM compiles the simulator's Numba code for (``znver4``, ``sapphirerapids``)."""
    from llvmlite import binding
    return binding.get_host_cpu_name()


def new_report(command: str, gpu: dict | None) -> dict:
    """The common head of a report: tool, version, command, date (UTC), host and ``gpu``."""
    return {
        "format": REPORT_FORMAT,
        "tool": "hwcheck",
        "version": __version__,
        "command": command,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": {"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
                 "platform": platform.platform(), "cpus": os.cpu_count(),
                 "numba_threads": numba.get_num_threads(), "cpu": cpu_model(), "llvm_cpu": _llvm_cpu()},
        "gpu": gpu,
    }


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def portable_paths(data, root: str = REPO_ROOT, home: str | None = None):
    """``data`` with every absolute path in its strings rewritten: under ``root`` relative to it, under
    ``home`` as ``~/...`` (also inside longer strings such as a command line); dicts and lists copied.

    >>> portable_paths({"program": "/r/examples/a.py", "cmd": "hwcheck run /r/x.py --report /h/out/r.json",
    ...                 "n": [3, "/h/.cache"]}, root="/r", home="/h")
    {'program': 'examples/a.py', 'cmd': 'hwcheck run x.py --report ~/out/r.json', 'n': [3, '~/.cache']}
    """
    home = os.path.expanduser("~") if home is None else home
    prefixes = [(p.rstrip(os.sep) + os.sep, new) for p, new in ((root, ""), (home, "~" + os.sep))
                if p and p.rstrip(os.sep)]
    prefixes.sort(key=lambda pair: -len(pair[0]))          # the repository may lie inside the home folder

    def fix(value):
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [fix(v) for v in value]
        if isinstance(value, str):
            for old, new in prefixes:
                value = value.replace(old, new)
        return value
    return fix(data)


def write_json_atomic(path, data) -> None:
    """Write ``data`` as JSON to ``path`` atomically (see the module docstring).

    Raises ``HwcheckError`` (one line, naming the path) when the data cannot be serialised or the
    file cannot be written; the target is then unchanged and no temporary file is left.
    """
    try:
        text = json.dumps(portable_paths(data), indent=1, sort_keys=False, allow_nan=False) + "\n"
    except (TypeError, ValueError) as e:
        raise HwcheckError(f"hwcheck: report {os.fspath(path)} not written: {e}") from None
    write_text_atomic(path, text, what="report")


def write_text_atomic(path, text: str, *, what: str = "file") -> None:
    """Write ``text`` to ``path`` atomically and durably (:func:`warpsim.files.write_atomic`, missing
    folders made); ``HwcheckError`` naming the path (``"hwcheck: {what} {path} not written: ..."``) when
    it cannot, the target then unchanged."""
    try:
        write_atomic(path, lambda f: f.write(text.encode("utf-8")), durable=True, makedirs=True)
    except WriteError as e:
        raise HwcheckError(f"hwcheck: {what} {os.fspath(path)} not written: {e.reason}") from None

