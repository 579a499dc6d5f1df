"""The sanitizer's findings and its report: text like compute-sanitizer's, and JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

__all__ = ["TOOLS", "Finding", "Report"]

TOOLS = ("race", "sync", "init", "mem")
_PREFIX = "========="


@dataclass
class Finding:
    """One finding: ``tool`` (race/sync/init/mem), ``kind`` (RAW, WAR, WAW, uninit, deadlock, ...), ``severity``
    (error or warning), ``title`` (its first line), ``sites`` (``[{"access", "source", "ptx_line", "text"}]``: the
    instruction(s), first the earlier), ``detail`` (lines: threads, addresses, counts)."""

    tool: str
    kind: str
    severity: str
    title: str
    sites: list = field(default_factory=list)
    detail: list = field(default_factory=list)

    def lines(self):
        head = f"{_PREFIX} {self.severity.capitalize()}: {self.title}"
        out = [head]
        for k, site in enumerate(self.sites):
            lead = "at" if k == 0 else "and"
            access = "" if not site.get("access") else f"{site['access']} access " if site["access"] != "Barrier" else "barrier "
            out.append(f"{_PREFIX}     {lead} {access}{_site_text(site)}")
        out += [f"{_PREFIX}     {line}" for line in self.detail]
        return out


def _site_text(site):
    src = site["source"] or "(no .loc)"
    inlined = f" via {site['inlined']}" if site.get("inlined") else ""
    return f"{src}{inlined} ({site['ptx_file']}:{site['ptx_line']}: {site['text']})"


@dataclass
class Report:
    """What :func:`sanitize_launch` found: ``findings``, ``tools``, ``kernel``, ``notes`` (what was not checked)."""

    kernel: str
    tools: frozenset
    findings: list
    notes: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    result: object = field(default=None, repr=False, compare=False)   # the LaunchResult, when the launch finished

    @property
    def errors(self):
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self):
        return sum(f.severity == "warning" for f in self.findings)

    def summary(self):
        return (f"{_PREFIX} SANITIZER SUMMARY ({', '.join(t for t in TOOLS if t in self.tools)}): {self.errors} error"
                f"{'s' if self.errors != 1 else ''}, {self.warnings} warning{'s' if self.warnings != 1 else ''}")

    def text(self):
        out = [f"{_PREFIX} WARPSIM SANITIZER: {self.kernel}"]
        for f in self.findings:
            out += f.lines()
            out.append(_PREFIX)
        out += [f"{_PREFIX} Note: {n}" for n in self.notes]
        out.append(self.summary())
        return "\n".join(out) + "\n"

    def as_json(self):
        return {"kernel": self.kernel, "tools": sorted(self.tools), "errors": self.errors, "warnings": self.warnings,
                "findings": [asdict(f) for f in self.findings], "notes": list(self.notes), "stats": self.stats}

    def dumps(self):
        return json.dumps(self.as_json(), indent=1) + "\n"


