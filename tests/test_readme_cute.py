"""The CuTe examples of docs/guides/layout-algebra.md run, and print what their comments say."""

import contextlib
import io
import re
from tests.docs.pages import section as docs_section


def _blocks():
    section = docs_section("guides/layout-algebra.md", "CuTe atoms, tensors and partitions")
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_cute_examples_print_their_comments():
    blocks = _blocks()
    assert len(blocks) >= 2, "the README lost its CuTe examples"
    namespace, checked = {}, 0
    for block in blocks:
        for line in block.splitlines():
            code, _, comment = line.partition("#")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(code, namespace)   # the README is ours; its lines are examples
            if code.strip().startswith("print(") and comment.strip() and not comment.strip().startswith("TiledCopy"):
                want = comment.split()[0].rstrip(":;")
                got = out.getvalue().split()
                assert got and got[0] == want, f"README line {line.strip()!r} printed {out.getvalue()!r}"
                checked += 1
    assert checked >= 7
