"""mkdocs hook: the pages that are generated, never hand-written.

A page asks for generated text with a marker line ``<!-- generate: NAME ARG -->``; the hook replaces it
when the site is built (``on_page_markdown``), so the text is read from its one source each time:

- ``cli warpsim`` / ``cli hwcheck``: every command and option, from ``warpsim.commands.build_parser()`` and
  ``hwcheck.cli.main.build_parser()``;
- ``ptx-instructions``: the instructions the PTX decoder runs and those it refuses, from
  ``warpsim.ptx.opcodes`` (``supported_names()``, ``OPCODES``, ``FLOAT_OPS``, ``NOT_YET``) and the families of
  ``warpsim.ptx.families.FAMILIES``;
- ``gpu-reports``: one row per committed hwcheck report under ``conformance/``;
- ``file PATH [strip-title]``: a repository file's text (``bench/RESULTS.md``, ``conformance/h200/README.md``),
  or a shell script's header comment (``hwcheck/gpu_pending.sh``).

``tests/docs/test_docs_site.py`` calls :func:`generate` too, so the generated text is tested without mkdocs.
"""

import argparse
import json
import logging
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:                     # the checkout's warpsim, installed or not
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- generate: (\S+)(?: (.*?))? -->$", re.M)


def _cli_page(parser, prog):
    os.environ["COLUMNS"] = "100"                  # argparse's width: the same text on every machine
    parser.prog = prog
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    out = [f"`{prog}`: {parser.description or ''}", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in subs:
        helps = {c.dest: c.help for c in action._choices_actions}
        for name, sub in action.choices.items():
            if sub.prog.split()[-1] != name:       # an alias: documented under its own name
                continue
            out += [f"## `{prog} {name}`", "", helps.get(name) or sub.description or "", "",
                    "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def cli(name):
    if name == "warpsim":
        from warpsim.commands import build_parser
    elif name == "hwcheck":
        from hwcheck.cli.main import build_parser
    else:
        raise ValueError(f"generate cli: unknown command {name!r} (warpsim, hwcheck)")
    return _cli_page(build_parser(), name)


def ptx_instructions():
    from warpsim.ptx import opcodes
    from warpsim.ptx.families import FAMILIES

    def family(name, op):
        if name in opcodes.FLOAT_OPS:             # float-only names: the float family
            return "floats"
        if name.startswith("cp.async.bulk"):      # decoded through the cp decoder, run by the bulk copies
            return "bulk_copy"
        method = f"do_{op.name.lower()}"
        for f in FAMILIES:
            if hasattr(f.DECODER, method):
                return f.__name__.rsplit(".", 1)[1]
        return "integer"                          # the decoder's fallback, do_alu

    rows = ["| instruction | decoded as (`Op`) | family (`warpsim/ptx/families/`) |", "|---|---|---|"]
    for name in opcodes.supported_names():
        op = opcodes.OPCODES.get(name) or opcodes.FLOAT_OPS.get(name) or opcodes.OPCODES[name.split(".")[0]]
        rows.append(f"| `{name}` | `{op.name}` | `{family(name, op)}` |")
    refused = ["| refused (by the longest dotted prefix) | why |", "|---|---|"]
    refused += [f"| `{prefix}` | {why} |" for prefix, why in opcodes.NOT_YET.items()]
    types = ", ".join(f"`.{t}`" for t in opcodes.TYPES)
    return "\n".join([f"{len(opcodes.supported_names())} instruction names run. A float-typed instruction "
                      "(`add.f32`, `setp.lt.f16x2`, `cvt.rn.f16.f32`, ...) is decoded by the `floats` family "
                      "whatever its name's row says.", "", *rows, "",
                      "Types: " + types + ".", "", "Refused when the kernel loads, naming the family:", "",
                      *refused])


def gpu_reports():
    rows = ["| report | GPU | date | status | command |", "|---|---|---|---|---|"]
    for path in sorted((ROOT / "conformance").rglob("*.json")):
        try:
            report = json.loads(path.read_text())
        except ValueError:
            continue
        if not isinstance(report, dict) or "gpu" not in report:
            continue
        gpu = report["gpu"].get("name", "?") if isinstance(report["gpu"], dict) else report["gpu"]
        command = str(report.get("command", "")).replace("|", "\\|")
        if len(command) > 120:
            command = command[:117] + "..."
        rows.append(f"| `{path.relative_to(ROOT)}` | {gpu} | {str(report.get('date', ''))[:10]} | "
                    f"{report.get('status', '')} | `{command}` |")
    return "\n".join(rows)


def file_text(path, option=""):
    text = (ROOT / path).read_text()
    if path.endswith(".sh"):                      # the header comment, as a block
        lines = []
        for line in text.splitlines()[1:]:
            if not line.startswith("#"):
                break
            lines.append(line[2:] if line.startswith("# ") else line[1:])
        return "```text\n" + "\n".join(lines).strip("\n") + "\n```"
    if option == "strip-title":
        text = text.split("\n", 1)[1] if text.startswith("# ") else text
    return re.sub(r"^#(#*) ", r"##\1 ", text, flags=re.M)     # one level below the page's title


def generate(name, arg=""):
    arg = (arg or "").strip()
    if name == "cli":
        return cli(arg)
    if name == "ptx-instructions":
        return ptx_instructions()
    if name == "gpu-reports":
        return gpu_reports()
    if name == "file":
        path, _, option = arg.partition(" ")
        return file_text(path, option)
    raise ValueError(f"generate: unknown generator {name!r}")


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(lambda m: generate(m.group(1), m.group(2)), markdown)


class _IndexNotReference(logging.Filter):
    """The docstrings are written for ``help()`` and doctest, not as Markdown: an index expression in them
    (``r[0][1]``, ``a[:4]``) reads to Markdown as a reference link. A "cross-reference" whose target is not a
    dotted Python name is such an expression, told at INFO; a real name that does not resolve stays a warning."""

    TARGET = re.compile(r"Could not find cross-reference target '(.*)'$", re.S)

    def filter(self, record):
        found = self.TARGET.search(record.getMessage())
        if found and not re.fullmatch(r"[A-Za-z_][\w.]*", found.group(1)):
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def on_config(config):
    logging.getLogger("mkdocs.plugins.mkdocs_autorefs._internal.plugin").addFilter(_IndexNotReference())
    return config
