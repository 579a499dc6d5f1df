"""hwcheck/gpu_pending.sh, the H200 runs still due: its integer shards cover every form exactly once, and it
refuses an unknown part with exit 2 before touching a GPU."""

import os
import re
import subprocess
from fnmatch import fnmatch
from pathlib import Path

from hwcheck.campaigns.int_cases import INT_FORMS

SCRIPT = Path(__file__).resolve().parents[2] / "hwcheck" / "gpu_pending.sh"


def _shards():
    text = SCRIPT.read_text()
    block = text[text.index("shards=("):]
    block = block[:block.index(")")]
    return [s.split(",") for s in re.findall(r'"([^"]+)"', block)]


def test_the_integer_shards_partition_the_forms():
    shards = _shards()
    assert len(shards) >= 2
    for form in INT_FORMS:
        hits = [i for i, globs in enumerate(shards) if any(fnmatch(form, g) for g in globs)]
        assert len(hits) == 1, f"{form!r} is in shards {hits} of {SCRIPT.name}, not in exactly one"


def test_the_script_parses_and_refuses_an_unknown_part(tmp_path):
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
    done = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out"), "everything"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown part 'everything'" in done.stderr


def test_the_parts_that_run_exported_ptx_ask_for_it_first(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "HWCHECK_PTX_DIR"}
    for part in ("programs", "flash-dsl"):
        done = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out"), part], capture_output=True, text=True,
                              env=env)
        assert done.returncode != 0 and "HWCHECK_PTX_DIR" in done.stderr, (part, done.stderr)
