"""The program example of docs/guides/programs.md runs and prints what its comments say."""

import contextlib
import io
import re
from pathlib import Path
from tests.docs.pages import section as docs_section

ROOT = Path(__file__).resolve().parents[2]


def test_readme_program_example(monkeypatch):
    monkeypatch.chdir(ROOT)
    section = docs_section("guides/programs.md", "Programs and `warpsim run`")
    block = next(b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "run_program(" in b)
    namespace, checked = {}, 0
    for line in block.splitlines():
        code, _, comment = line.partition("#")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, namespace)   # the README is ours; its lines are examples
        if code.strip().startswith("print("):
            want = comment.split(" — ")[0].strip().rstrip(".")      # the printed text, up to an explanation
            assert out.getvalue().startswith(want), f"README line {line.strip()!r} printed {out.getvalue()!r}"
            checked += 1
    assert checked == 4
