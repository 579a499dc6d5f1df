"""The README's float example runs and gives the bits its comments state."""

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_float_example():
    section = README.split("## Float, half-precision and conversion instructions", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace = {}
    for line in code.splitlines():
        stmt, _, comment = line.partition("#")
        if stmt.startswith("hex("):
            want = re.search(r"'(0x[0-9a-f]+)'", comment).group(1)
            assert eval(stmt, namespace) == want, line   # the README is ours; its lines are examples
        else:
            exec(stmt, namespace)
