"""``warpsim sanitize PROGRAM.py``: a Python CuTe-dialect program sanitized through the PTX kernel its trace lowers
to, the findings naming the program's own lines (programs/handoff.py plants a missing ``syncthreads()``)."""

import json
import re
from pathlib import Path

import pytest

from sanitize_suite import marked_lines
from warpsim.commands import main

HANDOFF = Path(__file__).resolve().parent / "programs" / "handoff.py"


def _marks():
    """The ``# A`` / ``# B`` lines of the program (its comments end the lines, as the kernels' ``// A`` do)."""
    out = {}
    for k, line in enumerate(HANDOFF.read_text().splitlines(), 1):
        for mark in ("A", "B"):
            if line.rstrip().endswith(f"# {mark}"):
                out[mark] = k
    return out


def test_a_missing_barrier_is_a_race_on_the_programs_lines(tmp_path, capsys):
    a, b = _marks()["A"], _marks()["B"]
    out = tmp_path / "r.json"
    assert main(["sanitize", str(HANDOFF), "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert text.startswith("========= WARPSIM SANITIZER: handoff (sync=no)")
    assert "Race reported between Read access and Write access (WAR hazard, shared memory)" in text
    assert f"at Read access handoff.py:{b} " in text and f"and Write access handoff.py:{a} " in text
    assert "(warp 0 lane 0) and then CTA (0,0,0) thread (32,0,0) (warp 1 lane 0)" in text
    data = json.loads(out.read_text())
    assert data["errors"] == 2 and {f["kind"] for f in data["findings"]} == {"WAR"}
    assert {s["source"] for f in data["findings"] for s in f["sites"]} == {f"handoff.py:{a}", f"handoff.py:{b}"}


def test_the_barrier_makes_it_clean_with_options_first(capsys):
    assert main(["sanitize", "--tool", "race,sync", str(HANDOFF), "--param", "sync=yes"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("SANITIZER SUMMARY (race, sync): 0 errors, 0 warnings")


@pytest.mark.parametrize("argv, message", [
    (["--param", "sync=maybe"], "param sync='maybe' is not one of"),
    (["--tool", "racecheck"], "unknown tool racecheck"),
])
def test_usage_errors_are_one_line_exit_2(argv, message, capsys):
    assert main(["sanitize", str(HANDOFF), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_kernel_option_is_refused_by_the_program_parser(capsys):
    with pytest.raises(SystemExit) as e:                 # argparse's own exit, as for every verb
        main(["sanitize", str(HANDOFF), "--uninit", "y"])
    assert e.value.code == 2 and "unrecognized arguments: --uninit y" in capsys.readouterr().err


def test_other_schedules_change_the_result_without_the_barrier(capsys):
    """``--schedules 1``: the warps also run in the reverse order; without the barrier warp 1's tile reaches warp 0
    first that way, so ``y`` differs: reported; with it, every order gives the same bytes."""
    assert main(["sanitize", str(HANDOFF), "--tool", "race", "--schedules", "1"]) == 1
    out = capsys.readouterr().out
    assert "========= Error: Results depend on the warp schedule" in out
    assert re.search(r"buffer y: \d+ bytes differ \(the first at byte 0\) when the warps take turns as \[1, 0\] "
                     r"instead of \[0, 1\]", out)                # x's 256 bytes, less those that happen to match
    assert main(["sanitize", str(HANDOFF), "--param", "sync=yes", "--schedules", "3"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("0 errors, 0 warnings")


def test_run_sanitize_is_sanitize(capsys):
    assert main(["run", str(HANDOFF), "--sanitize=race"]) == 1
    out = capsys.readouterr().out
    assert "WAR hazard, shared memory" in out and out.rstrip().endswith("(race): 2 errors, 0 warnings")
    assert main(["run", str(HANDOFF), "--param", "sync=yes", "--sanitize"]) == 0
    capsys.readouterr()
    assert main(["run", str(HANDOFF), "--sanitize", "--dump", "x", "--out", "d"]) == 2
    assert "--sanitize: not with --dump" in capsys.readouterr().err
