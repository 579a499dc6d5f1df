"""Citations of the project's docs point at sections that exist, and nothing cites a document outside the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p for d in ("warpsim", "hwcheck", "tests", "examples", "bench") for p in (ROOT / d).rglob("*.py")]
SOURCES += [ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if p.name != "hardware-model.md")]
CITATION = re.compile(r"docs/hardware-model\.md §(\d+)")


def _sections():
    text = (ROOT / "docs" / "hardware-model.md").read_text()
    return {int(n) for n in re.findall(r"^## §(\d+)\. ", text, flags=re.MULTILINE)}


def test_every_cited_section_exists():
    sections = _sections()
    assert sections, "docs/hardware-model.md has no numbered sections"
    missing = [f"{path.relative_to(ROOT)}: §{n}" for path in SOURCES if path != Path(__file__)
               for n in CITATION.findall(path.read_text()) if int(n) not in sections]
    assert not missing, "citations of sections docs/hardware-model.md does not have: " + ", ".join(missing)


def test_no_citation_of_a_document_outside_the_repository():
    marker = "REFERENCE" + ".md"                      # the notes the facts came from, not shipped
    cited = [str(path.relative_to(ROOT)) for path in SOURCES if marker in path.read_text()]
    assert not cited, f"{marker} is not in the repository; cite docs/hardware-model.md instead: {cited}"
