"""The site builds (``mkdocs build --strict``), its generated pages say what their sources say, and the README
stays a front page: short, with the commands CI runs, every link pointing at a file that exists."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tests.docs.pages import DOCS, ROOT

sys.path.insert(0, str(DOCS / "hooks"))
import generate  # noqa: E402  (docs/hooks/generate.py: the mkdocs hook, not a package)

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_site_builds_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    html = (tmp_path / "site" / "reference" / "cli-warpsim" / "index.html").read_text()
    assert "warpsim debug" in html and "<!-- generate:" not in html
    assert "cp.async.bulk.tensor" in (tmp_path / "site" / "reference" / "ptx-instructions" / "index.html").read_text()


def test_every_nav_page_exists():
    nav = re.findall(r"^\s+(#\s*)?- [^:]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert len(nav) > 25
    missing = [path for commented, path in nav if not commented and not (DOCS / path).exists()]
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"


def test_the_cli_pages_have_every_command():
    from hwcheck.cli.main import build_parser as hwcheck_parser
    from warpsim.commands import build_parser as warpsim_parser
    for name, parser in (("warpsim", warpsim_parser()), ("hwcheck", hwcheck_parser())):
        text = generate.cli(name)
        commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
        for command, sub in commands.items():
            if sub.prog.split()[-1] == command:
                assert f"## `{name} {command}`" in text, (name, command)


def test_the_ptx_page_lists_what_the_decoder_runs_and_refuses():
    from warpsim.ptx.opcodes import NOT_YET, supported_names
    text = generate.ptx_instructions()
    assert all(f"| `{n}` |" in text for n in supported_names())
    assert all(f"| `{p}` | {why} |" in text for p, why in NOT_YET.items())


def test_the_gpu_reports_page_has_every_committed_report():
    text = generate.gpu_reports()
    for path in (ROOT / "conformance" / "h200").glob("h200-*.json"):
        assert f"`{path.relative_to(ROOT)}`" in text


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) <= 150
    for command in ('python -m pip install -e ".[test,docs]"', "python -m pytest -q", "warpsim run examples/gemm_smem.py"):
        assert command in README, command


def test_ci_runs_the_readmes_install_and_test_commands():
    ci = (ROOT / ".ci" / "run").read_text()
    install = re.search(r'^python -m pip install -q -e "\.\[([\w,]+)\]"$', ci, re.M)
    assert install, ".ci/run no longer installs the package with extras"
    assert "python -m pytest -q" in ci
    for extra in install.group(1).split(","):
        assert re.search(rf"[\[`,]{extra}[\],`]", README), f"CI installs the {extra} extra; the README never names it"


def test_every_readme_link_points_at_a_file():
    links = [link for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README) if "://" not in link]
    assert links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_docs_extra_and_the_project_urls():
    pyproject = (ROOT / "pyproject.toml").read_text()
    docs = re.search(r"^docs = \[(.*?)^\]", pyproject, re.M | re.S).group(1)
    assert "mkdocs-material" in docs and "mkdocstrings[python]" in docs
    urls = pyproject.split("[project.urls]", 1)[1].split("\n[", 1)[0]
    assert "Documentation = " in urls and "Source = " in urls
