"""docs/guides/pictures.md's example of what ``stream_bank_report`` returns runs and prints what its comments say."""

import contextlib
import io
import re
from pathlib import Path
from tests.docs.pages import section as docs_section

ROOT = Path(__file__).resolve().parents[2]


def test_readme_stream_bank_report_example(monkeypatch):
    section = docs_section("guides/pictures.md", "Bank reports of an instruction stream: what `stream_bank_report` returns")
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(ROOT)
    code = "\n".join(line for line in block.splitlines() if not line.startswith("#"))
    namespace, out = {}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, namespace)   # the README is ours; its lines are examples
    report = namespace["report"]
    assert report.totals.extra_wavefronts == 2240   # the comment beside `report.totals.extra_wavefronts`
    printed = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    assert out.getvalue().splitlines() == printed
