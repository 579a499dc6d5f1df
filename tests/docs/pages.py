"""The documentation's pages as tests read them: a page's text, one of its ``## `` sections.

The README's sections live in the site's pages (``docs/``); a test that checks what a section shows names
the page it is on, so a section that moves takes its test with it.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def page(name):
    """The text of ``docs/<name>`` (e.g. ``"guides/debugger.md"``)."""
    return (DOCS / name).read_text(encoding="utf-8")


def section(name, title):
    """The section ``## <title>`` of ``docs/<name>``, up to the next ``## `` heading (its ``###`` subsections
    included); a ValueError naming both when the page has no such section."""
    text = page(name)
    marker = f"## {title}\n"
    if f"\n{marker}" not in f"\n{text}":
        raise ValueError(f"docs/{name} has no section '## {title}'")
    return f"\n{text}".split(f"\n{marker}", 1)[1].split("\n## ", 1)[0]
