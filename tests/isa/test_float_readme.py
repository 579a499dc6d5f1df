"""The float example of docs/accuracy/isa.md runs and gives the bits its comments state."""

import re
from tests.docs.pages import section as docs_section


def test_readme_float_example():
    section = docs_section("accuracy/isa.md", "Float, half-precision and conversion instructions")
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace = {}
    for line in code.splitlines():
        stmt, _, comment = line.partition("#")
        if stmt.startswith("hex("):
            want = re.search(r"'(0x[0-9a-f]+)'", comment).group(1)
            assert eval(stmt, namespace) == want, line   # the README is ours; its lines are examples
        else:
            exec(stmt, namespace)
