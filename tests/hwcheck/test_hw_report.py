"""Reports are written whole or not at all; their head names the tool, command, host and GPU."""

import json
import os

import pytest

import hwcheck.report as report_mod
from hwcheck.errors import HwcheckError
from hwcheck.report import command_line, new_report, write_json_atomic


def _listing(path):
    return sorted(os.listdir(path))


def test_write_then_replace(tmp_path):
    target = tmp_path / "r.json"
    write_json_atomic(target, {"n": 1})
    write_json_atomic(target, {"n": 2})
    assert json.loads(target.read_text()) == {"n": 2} and _listing(tmp_path) == ["r.json"]


@pytest.mark.parametrize("failing", ["fsync", "replace", "write"])
@pytest.mark.parametrize("existing", [False, True])
def test_a_failure_mid_write_leaves_no_partial_file(tmp_path, monkeypatch, failing, existing):
    target = tmp_path / "r.json"
    if existing:
        target.write_text('{"old": true}\n')
    big = {"rows": list(range(100_000))}

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")
    if failing == "fsync":
        monkeypatch.setattr(report_mod.os, "fsync", boom)
    elif failing == "replace":
        monkeypatch.setattr(report_mod.os, "replace", boom)
    else:   # the write itself fails after part of the text went out
        real_fdopen = os.fdopen

        class HalfFile:
            def __init__(self, f):
                self.f = f

            def write(self, text):
                self.f.write(text[: len(text) // 2])
                self.f.flush()
                raise OSError(28, "No space left on device")

            def __getattr__(self, name):
                return getattr(self.f, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()
        monkeypatch.setattr(report_mod.os, "fdopen", lambda *a, **k: HalfFile(real_fdopen(*a, **k)))
    with pytest.raises(HwcheckError, match=r"report .*r\.json not written: .*No space left"):
        write_json_atomic(target, big)
    assert _listing(tmp_path) == (["r.json"] if existing else []), "a temporary file was left behind"
    if existing:
        assert json.loads(target.read_text()) == {"old": True}


def test_an_interrupt_mid_write_removes_the_temporary_file(tmp_path, monkeypatch):
    def interrupt(fd):
        raise KeyboardInterrupt
    monkeypatch.setattr(report_mod.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_json_atomic(tmp_path / "r.json", {"a": 1})
    assert _listing(tmp_path) == []


def test_unserialisable_data_touches_nothing(tmp_path):
    with pytest.raises(HwcheckError, match="not written"):
        write_json_atomic(tmp_path / "r.json", {"bad": object()})
    with pytest.raises(HwcheckError, match="not written"):
        write_json_atomic(tmp_path / "r.json", {"nan": float("nan")})
    assert _listing(tmp_path) == []


def test_report_head():
    gpu = {"name": "NVIDIA H200", "driver_version": "580.65.06", "runtime_version": "13.0",
           "cupy_version": "14.2.0", "arch": "sm_90"}
    head = new_report("hwcheck campaign --instr cvt --count 5", gpu)
    assert head["tool"] == "hwcheck" and head["format"] == "hwcheck-report/1"
    assert head["gpu"] is gpu and head["command"].startswith("hwcheck campaign")
    assert head["date"].endswith("+00:00")
    assert {"python", "numpy", "numba", "cpus"} <= set(head["host"])
    json.dumps(head, allow_nan=False)
    assert command_line(["campaign", "--classes", "ties,special", "--report", "my dir/r.json"]) == \
        "hwcheck campaign --classes ties,special --report 'my dir/r.json'"
