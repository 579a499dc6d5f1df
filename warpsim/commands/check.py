"""``warpsim check``: the type-provenance check of a kernel (:mod:`warpsim.ptx.provenance`), with source lines.

``warpsim check SOURCE [--kernel NAME] [--arch sm_80|sm_90] [--nvcc-flags "FLAGS"] [--ptx-out DIR]``

SOURCE is a ``.cu`` (compiled by nvcc with ``-lineinfo``), a ``.ptx`` or a CuTe DSL ``.py`` file, as for
``warpsim run``; without ``--kernel`` every kernel of the source is checked. Each finding is one line
naming the consumer and the producer, each by its user source line (the innermost ``.loc`` frame in the
kernel's own file: the line of the user's ``gemm(...)``, not CuTe's header; after the lines of that file
it was inlined from, ``flash.cu:365>287>76``) and its PTX line and instruction, and the two types::

    attn.cu:36 (attn.sm_80.ptx:200 mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32) reads A register %r13
    as bf16x2, but attn.cu:29 (attn.sm_80.ptx:142 cvt.rn.f16x2.f32) produced it as f16x2 (4 PTX instruction pairs)

(one line on the terminal). ``--ptx-out DIR`` writes the PTX those line numbers refer to. Findings with
the same two source lines, instructions and types are one line, with the count of (producer, consumer)
PTX instruction pairs behind it. ``warpsim run SOURCE --strict ...`` runs the same check first and does
not launch a kernel with findings.

Exit status: 0 no findings; 1 findings; 2 bad input (one line: a missing file, a compile error, an
unknown kernel, a PTX syntax error).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from warpsim.debug.source_lines import source_chains, user_line
from warpsim.files import write_atomic
from warpsim.frontends.compiled import ARCHS
from warpsim.frontends.kernel import find_entry
from warpsim.frontends.source import compile_source
from warpsim.ptx.provenance import check_kernel
from warpsim.ptx.syntax import parse_module

__all__ = ["add_arguments", "run", "check_source", "SourceFinding", "strict"]


def add_arguments(parser):
    parser.add_argument("source", help="a .cu file (compiled by nvcc), a .ptx file, or a CuTe DSL .py file "
                                       "that assigns WARPSIM")
    parser.add_argument("--kernel", default=None, help="the kernel to check: its name in the source, or its PTX "
                                                       "entry name (default: every kernel)")
    parser.add_argument("--arch", default="sm_90", help=f"compile target: {', '.join(ARCHS)} (default sm_90)")
    parser.add_argument("--nvcc-flags", default="", metavar="FLAGS",
                        help="more nvcc flags, written with = as they start with a dash: --nvcc-flags=\"-DX=1\"")
    parser.add_argument("--ptx-out", default=None, metavar="DIR",
                        help="write the PTX the findings' line numbers refer to into DIR (as named in the findings)")


@dataclass(frozen=True)
class SourceFinding:
    """One line of ``warpsim check``: ``finding`` (the first :class:`~warpsim.ptx.provenance.Finding` of its
    group), the consumer's and producer's user lines (``"k.cu:36"`` or ``""``), the PTX file's name,
    and ``pairs``: how many PTX (producer, consumer) pairs the line stands for."""

    kernel: str
    finding: object
    consumer_line: str
    producer_line: str
    ptx_name: str
    pairs: int

    def __str__(self):
        f = self.finding

        def at(line, site):
            ptx = f"{self.ptx_name}:{site.ptx_line} {site.text}"
            return f"{line} ({ptx})" if line else ptx
        packed = f", packed by {self.ptx_name}:{f.packed.ptx_line} {f.packed.text}" if f.packed else ""
        count = f" ({self.pairs} PTX instruction pairs)" if self.pairs > 1 else ""
        return (f"{at(self.consumer_line, f.consumer)} reads {f.operand} as {f.expected}, but "
                f"{at(self.producer_line, f.producer)} produced it as {f.produced}{packed}{count}")


def check_source(source, kernel=None, arch="sm_90", nvcc_flags=(), ptx_out=None):
    """``(kernels checked, [SourceFinding, ...])`` of a source file; errors as ``warpsim run`` raises them.
    ``ptx_out``: a folder to write the checked kernels' PTX modules into, each under the name the findings
    give it (``k.sm_90.ptx``; ``k.0.sm_90.ptx``, ``k.1.sm_90.ptx``, ... for a DSL file of several modules)."""
    compiled = compile_source(source, arch, nvcc_flags)
    modules = []
    for k, text in enumerate(compiled.modules):
        number = f".{k}" if len(compiled.modules) > 1 else ""
        name = compiled.source.name if compiled.kind == "ptx" else f"{compiled.source.stem}{number}.{compiled.arch}.ptx"
        modules.append((name, text, parse_module(text, name)))
    entries = {kernel_name: (ptx_name, text, module) for ptx_name, text, module in modules
               for kernel_name, f in module.functions.items() if f.entry and not f.declared_only}
    if not entries:
        raise ValueError(f"{compiled.source.name}: no kernel (.entry) to check")
    names = [find_entry(entries, kernel)] if kernel is not None else list(entries)
    out = []
    for name in names:
        ptx_name, text, module = entries[name]
        findings = check_kernel(module, name)
        lines = {site.ptx_line for f in findings for site in (f.consumer, f.producer)}
        chains = source_chains(text, module.files, lines)
        groups = {}
        for f in findings:
            consumer, producer = (_user(chains.get(s.ptx_line)) for s in (f.consumer, f.producer))
            key = (consumer, producer, f.consumer.text, f.producer.text, f.expected, f.produced)
            first, count = groups.get(key, (f, 0))
            groups[key] = (first, count + 1)
        out += [SourceFinding(name, first, key[0], key[1], ptx_name, count) for key, (first, count) in groups.items()]
    for ptx_name, text in sorted({entries[name][:2] for name in names} if ptx_out is not None else ()):
        write_atomic(Path(ptx_out) / ptx_name, lambda f, text=text: f.write(text.encode()), makedirs=True)
    return names, out


def _user(chain):
    """The user's lines of an instruction's ``.loc`` chain: the innermost frame in the kernel's own file
    (:func:`~warpsim.debug.source_lines.user_line`), after the lines of that file it was called from, outermost
    first: ``"k.cu:40"``, or ``"flash.cu:365>287>76"`` for a helper of the file inlined into the kernel.

    _user((("k.cu", 9), ("k.cu", 40), ("mma.hpp", 7))) == "k.cu:9>40"
    """
    frame = user_line(chain) if chain else None
    if frame is None:
        return ""
    lines = []
    for name, line in chain:
        if name == frame[0] and (not lines or lines[-1] != line):
            lines.append(line)
        if (name, line) == frame:
            break
    return f"{frame[0]}:{'>'.join(map(str, lines))}"


def run(args):
    """Check, print, return the exit status (0 clean, 1 findings); user errors are raised for the CLI."""
    names, findings = check_source(args.source, args.kernel, args.arch, tuple(args.nvcc_flags.split()),
                                   args.ptx_out)
    for f in findings:
        sys.stdout.write(f"{f}\n")
    for name in names:
        n = sum(1 for f in findings if f.kernel == name)
        sys.stdout.write(f"{name}: {n} type-provenance finding{'s' if n != 1 else ''}\n" if n else
                         f"{name}: no type-provenance findings\n")
    return 1 if findings else 0


def strict(launch):
    """``warpsim run --strict``: ``launch(args)`` only when the kernel passes the check; else its findings are
    printed and the status is 1."""
    def run_strict(args):
        if not getattr(args, "strict", False):
            return launch(args)
        _names, findings = check_source(args.source, args.kernel, args.arch, tuple(args.nvcc_flags.split()))
        if findings:
            for f in findings:
                sys.stderr.write(f"{f}\n")
            sys.stderr.write(f"warpsim run: --strict: {len(findings)} type-provenance finding"
                             f"{'s' if len(findings) != 1 else ''}; the kernel was not run\n")
            return 1
        return launch(args)
    return run_strict
