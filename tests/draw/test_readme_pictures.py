"""The "Pictures" example of docs/guides/pictures.md runs and prints what its comments say; its picture exists and parses."""

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from tests.docs.pages import section

ROOT = Path(__file__).resolve().parent.parent.parent


def _section():
    return section("guides/pictures.md", "Pictures")


def test_readme_pictures_example(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", _section(), re.S)
    assert len(blocks) == 1, "the README lost its pictures example"
    code = blocks[0]
    printed = []
    monkeypatch.chdir(tmp_path)                       # the example saves b.svg, regs.svg, banks.svg
    exec(code, {"print": lambda *a: printed.append(" ".join(str(x) for x in a))})   # our README, our example
    wants = [line.split("#", 1)[1].split()[0].rstrip(":;") for line in code.splitlines()
             if line.strip().startswith("print(") and "#" in line]
    assert len(wants) == len(printed) == 3
    for want, got in zip(wants, printed):
        assert got.split()[0] == want, f"README printed {got!r}, its comment says {want!r}"
    for name in ("b.svg", "regs.svg", "banks.svg"):
        ET.parse(tmp_path / name)


def test_readme_picture_is_committed():
    picture = re.search(r"!\[[^\]]*\]\(([^)]+\.svg)\)", _section()).group(1)
    root = ET.parse(ROOT / "docs" / "guides" / picture).getroot()
    cells = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "cell"]
    assert len(cells) == 8 * 64 and sum(1 for g in cells if g.get("data-lanes")) == 8 * 8
