"""FMA contraction as the GPU's compiler decides it: which ``mul`` + ``add``/``sub`` pairs ptxas fuses into one FMA.

PTX lets the code generator fuse a float ``mul`` and a following ``add``/``sub`` into one fused multiply-add when
neither carries a rounding modifier (PTX ISA, "Floating Point Instructions": ``mul``/``add`` without ``.rn`` "may
be optimized aggressively"). nvcc's default ``-fmad=true`` writes exactly such instructions and leaves the choice
to **ptxas**; the GPU then computes ``round(a * b + c)`` once where the PTX says ``round(round(a * b) + c)``. Which
pairs are fused is ptxas's decision, so warpsim asks ptxas, never guesses:

1. a copy of the PTX gets a ``.loc`` naming its own line before every line where an instruction starts (read from
   the text alone: ptxas starts while the text is parsed), every other ``.loc`` removed, a ``.file`` of its own;
2. ptxas compiles that copy for the GPU's arch with the flags the user's build uses (``-O3``, ``--fmad=true``:
   its defaults; a ``debug`` target, nvcc ``-G``'s ``-g --dont-merge-basicblocks --return-at-end``), and
   nvdisasm prints the SASS with each instruction's line (``nvdisasm -g``);
3. every ``FFMA``/``DFMA``/``HFMA2`` whose line is an unmodified float ``add``/``sub`` is a fused pair; its product
   is the add's operand that a single product of the same type and ``.ftz`` defines (reaching definitions over
   the function's control flow): an unmodified ``mul``, a ``neg`` of one (ptxas folds the sign in), or an f32
   ``div.approx``/``div.full`` (its last step, ``a * MUFU.RCP(b)``, is an ``FMUL`` ptxas fuses too). Where both
   operands are products, the one whose ``mul`` line kept no ``FMUL`` of its own is the fused one. FMAs that fuse
   nothing are told apart: a multiplier of 1 (an add), an addend of ``-RZ`` (a mul), the zero register (a
   constant). Still ambiguous, an FMA on a ``mul``'s line, or an add that ptxas fused in some copies of an
   unrolled loop and not in others: a :class:`ContractionError` (one line, naming the line) -- never a guess;
4. the code of the annotated copy (its cubin's ``.text`` sections) must equal that of the PTX as given, or of
   ``cubin=``, the file the user will actually run: the decision is read from the very code the GPU runs.

The decoder then runs each fused ``add``/``sub`` as ``fma.rn`` of the ``mul``'s operands and the other addend,
negated as the ``sub`` (and a folded ``neg``) says (``p - c``: ``fma(a, b, -c)``; ``c - p``: ``fma(-a, b, c)``),
``.ftz``/``.sat`` as written, or as the ``div`` with that addend; the product itself still runs (it may have other
readers). Where an operand of the ``mul`` is written on a path before the ``add`` reads the product, the operand
is kept aside right before the ``mul`` (:class:`Rewrite`), as ptxas keeps it in a register of its own. See
docs/ptx.md, "Contraction".

Decisions are cached on disk (``$WARPSIM_CACHE`` or ``~/.cache/warpsim-ptx``) by the PTX text, the arch, the
ptxas file (path, size, mtime) and the flags, so a warm run does not start ptxas. A PTX text without both a
product (an unmodified float ``mul``, an f32 ``div.approx``/``div.full``) and an unmodified ``add``/``sub`` has nothing
to contract and never starts ptxas.

>>> candidates("mul.f32 %f3, %f1, %f2;\\nadd.f32 %f4, %f3, %f0;")
True
>>> candidates("mul.rn.f32 %f3, %f1, %f2;\\nadd.f32 %f4, %f3, %f0;")
False
>>> sass_lines('''\\t//## File "warpsim-fma", line 12\\n        /*0350*/   FFMA R16, R16, R17, R15 ;''')
[('FFMA R16, R16, R17, R15', 12)]
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from warpsim import toolchain
from warpsim.errors import ContractionError
from warpsim.ptx.reaching import ControlFlow, bits
from warpsim.ptx.syntax import Instruction, Operand, Variable

__all__ = ["Contraction", "ContractionError", "Fusion", "Pending", "Rewrite", "NONE", "decide",
           "start", "annotate", "candidates", "sass_lines", "sign_selects", "fused_instructions"]

FLOAT_TYPES = ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2")
DECISION = "4"                                 # the way pairs are read from the SASS: part of every cache key
FILE_NAME = "warpsim-fma"                      # the .file the annotated copy's .loc lines name
_UNMODIFIED = re.compile(r"^\s*(?:@!?%[\w$]+\s+)?(mul|add|sub)((?:\.ftz|\.sat)*)\.(?:f32|f64|f16x2|bf16x2|f16|bf16)\s",
                         re.MULTILINE)
_DIVISION = re.compile(r"^\s*(?:@!?%[\w$]+\s+)?div\.(?:approx|full)(?:\.ftz)?\.f32\s", re.MULTILINE)
_LOC = re.compile(r"^\s*\.loc\b.*$", re.MULTILINE)
_FILE = re.compile(r"^\s*\.file\s+(\d+)", re.MULTILINE)
_HEADER_END = re.compile(r"^\s*\.address_size\s+\d+\s*$|^\s*\.target\b.*$", re.MULTILINE)
_INSTRUCTION_LINE = re.compile(r"^\s*(?:[\w$]+:\s*)?(?:@!?%[\w$]+\s+)?[a-z][a-z0-9_]*(?:\.[\w:]+)*(?:\s|;|$)")
_NAMED_LINE = re.compile(r"^\s*[\w$]+\s*:\s*(?:\.|$)")       # a label alone, or ``prototype_0 : .callprototype``
_SASS_LINE = re.compile(r'//## File "([^"]*)", line (\d+)')
_SASS_INSTR = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
_FMA = ("FFMA", "DFMA", "HFMA2")
_MUL = ("FMUL", "DMUL", "HMUL2")
_ADD = ("FADD", "DADD", "HADD2")
_NO_DEST = {"st", "red", "bra", "bar", "barrier", "ret", "exit", "trap", "membar", "fence", "prefetch", "prefetchu",
            "cp", "call", "brkpt", "pmevent", "nanosleep", "griddepcontrol", "stmatrix"}


@dataclass(frozen=True)
class Fusion:
    """One fused pair: the ``add``/``sub`` at PTX line ``add_line`` takes the product of the ``mul`` at ``mul_line``
    as its operand ``operand`` (1 or 2); ``shadow``: an operand of the ``mul`` is written on some path before the
    ``add`` reads the product, so the product's operands are kept aside when the ``mul`` runs (as ptxas keeps them
    in registers of their own); ``negated``: the add reads ``neg`` of the product, which ptxas folds in."""

    add_line: int
    mul_line: int
    operand: int
    shadow: bool = False
    negated: bool = False


@dataclass(frozen=True)
class Contraction:
    """The decision for one PTX text: ``pairs`` (:class:`Fusion`, by add line), who decided it and how.

    ``compiler``: ``"ptxas"`` or ``"none"``; ``version`` (``"13.0.88"``), ``path``, ``arch``, ``flags`` of the ptxas
    that decided; ``reason``: why nothing was asked (``--ptxas none``, no candidate pairs, no ptxas found);
    ``cubin``: the file whose SASS the decision was checked against, if one was given; ``sign_selects``: the PTX
    lines of ``neg.f32``/``abs.f32`` that ptxas made into an ``FSEL`` (:func:`sign_selects`)."""

    compiler: str
    pairs: tuple = ()
    version: str = ""
    path: str = ""
    arch: str = ""
    flags: tuple = ()
    reason: str = ""
    cubin: str = ""
    sign_selects: tuple = ()

    def describe(self) -> str:
        """One line for a run's header, e.g. ``contraction: ptxas 13.0.88 -O3 --fmad=true sm_90: 12 pairs fused``."""
        if self.compiler == "none":
            return f"PTX without contraction ({self.reason})"
        flags = " ".join(self.flags)
        if self.reason:
            return f"contraction: ptxas not run ({self.reason})"
        source = f", checked against {self.cubin}" if self.cubin else ""
        n = len(self.pairs)
        return (f"contraction: ptxas {self.version} {flags} {self.arch}: {n} mul+add pair{'s' if n != 1 else ''} "
                f"fused into FMA{source}")

    def as_dict(self) -> dict:
        """The decision as JSON-ready data (reports, the cache)."""
        return {"compiler": self.compiler, "version": self.version, "path": self.path, "arch": self.arch,
                "flags": list(self.flags), "reason": self.reason, "cubin": self.cubin,
                "pairs": [[p.add_line, p.mul_line, p.operand, p.shadow, p.negated] for p in self.pairs],
                "sign_selects": list(self.sign_selects)}

    @classmethod
    def from_dict(cls, d) -> "Contraction":
        return cls(d["compiler"], tuple(Fusion(*p) for p in d["pairs"]), d["version"], d["path"], d["arch"],
                   tuple(d["flags"]), d["reason"], d["cubin"], tuple(d.get("sign_selects", ())))


NONE = Contraction("none", reason="--ptxas none")


def candidates(text) -> bool:
    """Whether ``text`` has a product (an unmodified float ``mul``, or ``div.approx``/``div.full`` of ``.f32``) and an
    unmodified float ``add``/``sub`` (else ptxas has nothing to contract)."""
    ops = {m.group(1) for m in _UNMODIFIED.finditer(text) if "sat" not in m.group(2) or m.group(1) != "mul"}
    return ("mul" in ops or _DIVISION.search(text) is not None) and bool(ops & {"add", "sub"})


# ------------------------------------------------------------------------------------------------ SASS

def sass_lines(disassembly):
    """``[(instruction text, PTX line or 0), ...]`` of ``nvdisasm -g`` output, in order (lines of the
    annotation's file only; ``.reuse`` hints dropped)."""
    out, line = [], 0
    for text in disassembly.splitlines():
        m = _SASS_LINE.search(text)
        if m is not None:
            line = int(m.group(2)) if m.group(1) == FILE_NAME else 0
            continue
        m = _SASS_INSTR.search(text)
        if m is not None:
            out.append((m.group(1).replace(".reuse", ""), line))
    return out


def _opcode(sass):
    """``FFMA`` of ``@!P0 FFMA.FTZ R1, ...``."""
    words = sass.split()
    word = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return word.split(".")[0]


def _times_one(sass):
    """Whether an FMA's multiplier is the constant 1 or -1 (``FFMA R1, R2, 1, R3``; ``HFMA2 R1, R2, 1, 1, R3``):
    then it is an add as ptxas chose to write it, not a fused product.

    >>> _times_one("FFMA R1, R2, 1, R3"), _times_one("@P0 FFMA.FTZ R1, -R2, R4, R3")
    (True, False)
    >>> _times_one("HFMA2 R1, R2, -1, -1, R3")
    True
    """
    ops = [o.strip() for o in sass.split(None, 2 if sass.startswith("@") else 1)[-1].split(",")]
    one = ("1", "-1", "1.0", "-1.0")
    if _opcode(sass) == "HFMA2":
        return len(ops) == 5 and ops[2] in one and ops[3] in one and ops[4].lstrip("-|").startswith("R")
    return len(ops) == 4 and (ops[1] in one or ops[2] in one)


def _moves_constant(sass):
    """Whether an FMA multiplies the zero register (``HFMA2.MMA R9, -RZ, RZ, 1.5, 1``): a constant put in a register.

    >>> _moves_constant("HFMA2.MMA R9, -RZ, RZ, 1.5, 1.0009765625"), _moves_constant("FFMA R1, R2, R3, RZ")
    (True, False)
    """
    ops = [o.strip() for o in sass.rstrip(" ;").split(",")]
    return len(ops) >= 4 and (ops[1].split()[-1].lstrip("-") == "RZ" or ops[2].lstrip("-") == "RZ")


def _plus_zero(sass):
    """Whether an FMA's addend is ``-RZ`` (``HFMA2.MMA R1, R2, R3, -RZ``): ``x * y + (-0)`` is ``x * y`` rounded
    once, sign of zero included, so ptxas writes a ``mul`` so.

    >>> _plus_zero("HFMA2.MMA.FTZ R12, R4, R5, -RZ"), _plus_zero("FFMA R1, R2, R3, R4")
    (True, False)
    """
    return sass.rstrip(" ;").split(",")[-1].strip() == "-RZ"


def annotate(text):
    """The PTX text with a ``.loc`` naming its own line number before every line where an instruction starts, every
    other ``.loc`` removed, and a ``.file`` of its own (after ``.address_size``/``.target``). Read from the text alone
    (an instruction starts a line with a lower-case opcode, after an optional label and guard), so ptxas can start
    before the text is parsed."""
    index = max((int(m.group(1)) for m in _FILE.finditer(text)), default=0) + 1
    header = None
    for m in _HEADER_END.finditer(text):
        header = text.count("\n", 0, m.start())
    out, inside = [], False                         # inside: a statement that goes on over lines (a call's list)
    for k, line in enumerate(text.split("\n")):
        if _LOC.match(line):
            continue
        code = line.split("//", 1)[0].rstrip()
        if not inside and _INSTRUCTION_LINE.match(line) and not _NAMED_LINE.match(line):
            out.append(f"\t.loc {index} {k + 1} 1")
            inside = not code.endswith((";", "{", "}"))
        elif inside and code.endswith(";"):
            inside = False
        out.append(line)
        if k == header:
            out.append(f'\t.file {index} "{FILE_NAME}"')
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------ deciding

def _target(text):
    """The ``.target`` of a PTX text as a tuple (``("sm_90a",)``, ``("sm_80", "debug")``), read before parsing."""
    m = re.search(r"^\s*\.target\s+([^\n/]*)", text, re.MULTILINE)
    return tuple(t.strip() for t in m.group(1).split(",") if t.strip()) if m else ()


def decide(text, module, arch="sm_90", ptxas="auto", cubin=None, filename="<ptx>") -> Contraction:
    """The :class:`Contraction` of a parsed PTX ``module`` (its ``text``) for ``arch``; ``ptxas``: a path, ``auto``
    or ``none``; ``cubin``: a cubin the decision must match (the SASS the user runs). See the module docstring."""
    return start(text, arch, ptxas, cubin, filename).finish(module)


def start(text, arch="sm_90", ptxas="auto", cubin=None, filename="<ptx>") -> "Pending":
    """Start deciding for ``text`` (ptxas and nvdisasm run in the background: the caller parses meanwhile);
    :meth:`Pending.finish` with the parsed module gives the :class:`Contraction`."""
    if ptxas == "none" or isinstance(ptxas, Contraction):
        return Pending(ptxas if isinstance(ptxas, Contraction) else NONE)
    target = _target(text)
    arch, flags = toolchain.ptxas_arch(target, arch), toolchain.ptxas_flags(target)
    if not candidates(text) and cubin is None:
        return Pending(Contraction("ptxas", arch=arch, flags=flags, reason="no unrounded float mul+add pairs"))
    path = toolchain.find_ptxas(ptxas, text)
    if path is None:
        found = ", ".join(f"{toolchain.ptxas_version(c)} ({c})" for c in toolchain.ptxas_candidates()) or "none"
        raise ContractionError(f"{filename}: no ptxas found that assembles its PTX .version (found: {found}); "
                               "pip install 'warpsim[ptxas]', pass --ptxas PATH, or --ptxas none")
    nvdisasm = toolchain.find_tool("nvdisasm")
    if nvdisasm is None:
        raise ContractionError(f"{filename}: deciding FMA contraction needs nvdisasm (pip install "
                               "'warpsim[ptxas]'), or run with --ptxas none")
    cubin_bytes = Path(cubin).read_bytes() if cubin is not None else b""
    tools = [toolchain.file_key(path), " ".join(flags), toolchain.file_key(nvdisasm)]
    key = hashlib.sha256("\0".join([DECISION, text, arch, *tools]).encode() + b"\0" + cubin_bytes).hexdigest()[:32]
    cached = _cache_get(key)
    if cached is not None:
        return Pending(replace(cached, cubin=str(cubin) if cubin is not None else ""))
    return Pending(None, text, arch, flags, path, nvdisasm, cubin, filename, key)


class Pending:
    """A decision under way (:func:`start`): the two ptxas runs and the nvdisasm after the first, in a thread."""

    def __init__(self, done, text="", arch="", flags=(), ptxas="", nvdisasm="", cubin=None, filename="", key=""):
        self.done, self.arch, self.flags, self.ptxas, self.cubin = done, arch, flags, ptxas, cubin
        self.filename, self.key, self.error = filename, key, None
        if done is not None:
            return
        self.version = toolchain.ptxas_version(ptxas)
        self.tmp = tempfile.TemporaryDirectory(prefix="warpsim-fma-")
        tmp = Path(self.tmp.name)
        line = () if "-g" in flags else ("-lineinfo",)
        self.annotated = toolchain.spawn_ptxas(ptxas, annotate(text), arch, (*flags, *line), tmp / "annotated")
        self.plain = toolchain.spawn_ptxas(ptxas, text, arch, flags, tmp / "plain") if cubin is None else None
        self.thread = threading.Thread(target=self._disassemble, args=(nvdisasm,), daemon=True)
        self.thread.start()

    def _disassemble(self, nvdisasm):
        try:
            toolchain.wait_ptxas(self.annotated, f"{self.filename}: ptxas for {self.arch}")
            self.sass = sass_lines(toolchain.run_tool([nvdisasm, "-g", "-c", "-ndf", self.annotated.out],
                                                      f"{self.filename}: nvdisasm"))
        except ContractionError as e:
            self.error = e

    def finish(self, module) -> Contraction:
        """The decision, once ptxas and nvdisasm are done and ``module`` (the parsed text) is resolved against them."""
        if self.done is not None:
            return self.done
        try:
            self.thread.join()
            if self.error is not None:
                raise self.error
            ours, name = toolchain.code_sections(self.annotated.out), self.filename
            if self.plain is not None:                  # the PTX as given, compiled the same way, is the reference
                toolchain.wait_ptxas(self.plain, f"{name}: ptxas for {self.arch}")
                if toolchain.code_sections(self.plain.out) != ours:
                    raise ContractionError(f"{name}: ptxas {self.version} makes other code of the line-annotated copy "
                                           "than of the PTX itself; the contraction cannot be read (run with "
                                           "--ptxas none)")
            elif toolchain.code_sections(self.cubin) != ours:   # the file the GPU runs is the reference
                raise ContractionError(f"--cubin {self.cubin}: its code differs from what ptxas {self.version} "
                                       f"{' '.join(self.flags)} makes of {name} for {self.arch}; it was built from "
                                       "other PTX or by another ptxas: pass the ptxas that built it with --ptxas PATH")
        finally:
            for proc in (self.annotated, self.plain):
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.tmp.cleanup()
        pairs = _resolve(module, self.sass, name)
        self.done = Contraction("ptxas", tuple(pairs), self.version, self.ptxas, self.arch, self.flags,
                                cubin=str(self.cubin) if self.cubin is not None else "",
                                sign_selects=sign_selects(module, self.sass))
        _cache_put(self.key, self.done)
        return self.done


class _Function:
    """One function's control flow, definitions and reaching definitions, for resolving its pairs."""

    def __init__(self, f):
        self.flow = ControlFlow(f)
        ins = self.flow.instrs
        self.writes = [set(_dests(i)) for i in ins]
        self.defs, defs_at, self.reg_mask = [], [], {}
        for k, regs in enumerate(self.writes):
            here = []
            for r in regs:
                self.reg_mask[r] = self.reg_mask.get(r, 0) | (1 << len(self.defs))
                here.append(len(self.defs))
                self.defs.append((r, k))
            defs_at.append(here)
        kill = [0] * len(ins)
        for k, regs in enumerate(self.writes):
            for r in regs:
                kill[k] |= self.reg_mask[r]
        self.reach = self.flow.reaching(defs_at, lambda k: kill[k])

    def single_def(self, k, reg):
        """The instruction index of the only definition of ``reg`` reaching instruction ``k``, or None."""
        found = bits(self.reach[k] & self.reg_mask.get(reg, 0))
        return self.defs[found[0]][1] if len(found) == 1 else None

    def clobbered(self, m, a, regs):
        """Whether some path from instruction ``m`` to ``a`` (not through ``m`` again) writes one of ``regs``
        before ``a`` reads them (``m``'s own write included)."""
        start = bool(self.writes[m] & regs)
        stack = [(s, start) for s in self.flow.succ[m]]
        seen = set()
        while stack:
            k, tainted = stack.pop()
            if k == m or (k, tainted) in seen:
                continue
            seen.add((k, tainted))
            if k == a and tainted:
                return True
            tainted = tainted or bool(self.writes[k] & regs)
            stack.extend((s, tainted) for s in self.flow.succ[k])
        return False


def _dests(ins):
    if ins.opcode in _NO_DEST or not ins.operands:
        return []
    first = ins.operands[0]
    regs = [first.name] if first.kind == "reg" else [o.name for o in first.items if o.kind == "reg"]
    if first.pair is not None and first.pair.kind == "reg":
        regs.append(first.pair.name)
    return regs


def _float_type(ins):
    types = [m for m in ins.mods if m in FLOAT_TYPES]
    return types[0] if len(types) == 1 else None


def _unmodified(ins, opcodes):
    return (ins.opcode in opcodes and _float_type(ins) is not None
            and not any(m in ("rn", "rz", "rm", "rp") for m in ins.mods)
            and not (ins.opcode == "mul" and "sat" in ins.mods))


def _product(ins, add):
    """Whether ``ins`` makes a product ptxas may fuse into ``add``: an unmodified ``mul`` of its type, or an f32
    ``div.approx``/``div.full`` (``a * MUFU.RCP(b)`` with scalings: its last ``FMUL`` is fusable), ``.ftz`` alike."""
    if ("ftz" in ins.mods) != ("ftz" in add.mods):
        return False
    if ins.opcode == "div":
        return (_float_type(add) == "f32" == _float_type(ins) and ("approx" in ins.mods or "full" in ins.mods)
                and "sat" not in add.mods)
    return _unmodified(ins, ("mul",)) and _float_type(ins) == _float_type(add)


def _resolve(module, sass, filename):
    """The :class:`Fusion` pairs that the line-annotated ``sass`` shows (see the module docstring, step 3)."""
    at_line = {}
    for fname, f in module.functions.items():
        if f.declared_only:
            continue
        for k, ins in enumerate(i for i in f.body if isinstance(i, Instruction)):
            at_line.setdefault(ins.token.line, []).append((fname, k, ins))
    kinds = {}
    for text, line in sass:
        op = _opcode(text)
        kind = "fma" if op in _FMA else "mul" if op in _MUL else "add" if op in _ADD else "other"
        if kind == "fma" and _moves_constant(text):
            kind = "other"                              # -RZ * RZ + constant: a constant put in a register
        elif kind == "fma" and _times_one(text):
            kind = "add"                                # an add ptxas wrote as x * 1 + y: one rounding either way
        elif kind == "fma" and _plus_zero(text):
            kind = "mul"                                # a mul ptxas wrote as x * y + (-0): the same bits
        kinds.setdefault(line, set()).add(kind)
    functions, pairs = {}, []
    for line in sorted(kinds):
        if "fma" not in kinds[line] or line not in at_line:
            continue
        adds = [(fn, k, ins) for fn, k, ins in at_line[line] if _unmodified(ins, ("add", "sub"))]
        if not adds and any(_unmodified(ins, ("mul",)) for _, _, ins in at_line[line]):
            raise ContractionError(f"{filename}:{line}: ptxas made an FMA on the line of this mul, not of an add; "
                                   "warpsim cannot tell which add took it (run with --ptxas none)")
        if not adds:
            continue                                    # an fma/mad of the PTX itself, or another instruction's FMA
        if len(adds) > 1:
            raise ContractionError(f"{filename}:{line}: several float add/sub on one line; put one instruction "
                                   "a line to decide their contraction (or run with --ptxas none)")
        fname, k, add = adds[0]
        if "add" in kinds[line]:
            raise ContractionError(f"{filename}:{line}: ptxas fused some copies of this {add.opcode} into an FMA "
                                   "and not others; warpsim cannot run both (run with --ptxas none)")
        fn = functions.get(fname) or functions.setdefault(fname, _Function(module.functions[fname]))
        found = []
        for pos in (1, 2):
            o = add.operands[pos]
            if o.kind != "reg":
                continue
            m = fn.single_def(k, o.name)
            if m is None:
                continue
            mul, negated = fn.flow.instrs[m], False
            if mul.opcode == "neg" and _float_type(mul) == _float_type(add) and mul.operands[1].kind == "reg":
                m = fn.single_def(m, mul.operands[1].name)     # -(a*b) + c: ptxas folds the neg into the FMA
                if m is None:
                    continue
                mul, negated = fn.flow.instrs[m], True
            if _product(mul, add):
                found.append((pos, m, mul, negated))
        if len(found) == 2 and found[0][1:] == found[1][1:]:
            found = found[:1]                           # p + p: one product, the other operand its rounding
        if len(found) == 2:                             # the mul that kept its FMUL was not fused
            kept = [f for f in found if f[2].opcode == "mul" and "mul" in kinds.get(f[2].token.line, ())]
            if len(kept) == 1:
                found = [f for f in found if f is not kept[0]]
        if len(found) != 1:
            what = "no unmodified mul defines either operand" if not found else "both operands are products"
            raise ContractionError(f"{filename}:{line}: ptxas fused this {add.opcode} into an FMA but {what}; "
                                   "warpsim cannot tell which product it took (run with --ptxas none)")
        pos, m, mul, negated = found[0]
        regs = {o.name for o in mul.operands[1:3] if o.kind == "reg"}
        pairs.append(Fusion(line, mul.token.line, pos, fn.clobbered(m, k, regs), negated))
    return pairs


_SIGN_MASK = {"neg": ("xor", 0x80000000), "abs": ("and", 0x7FFFFFFF)}     # the bit operation an FSEL modifier does
_SCAFFOLD = ("BSSY", "BSYNC", "BRA", "NOP")


def sign_selects(module, sass):
    """The PTX lines of ``neg.f32``/``abs.f32`` (no ``.ftz``) whose SASS is ``FSEL`` alone (``FSEL R7, -R0, R5, P0``:
    a guarded ``neg`` merged with the register's old value), sorted.

    The rule (H100, conformance/h100/h100-80gb-hbm3-fuzz-float-20{0,1}000.json): an ``FSEL`` moves its operand's
    bits with the ``-``/``|..|`` modifier as a sign-bit operation, so a NaN keeps its payload (``0x7FC00000 ->
    0xFFC00000``), where the ``FADD R, -R, -RZ`` that ptxas writes for an unguarded ``neg`` gives the canonical NaN
    (``0x7FFFFFFF``, the H200 float campaign). Lines with no SASS of their own (the sign folded into a neighbour)
    or with other instructions keep the canonical rule.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n.reg .pred %p0;\\n"
    ...                  "@%p0 neg.f32 %f2, %f1;\\nneg.f32 %f3, %f1;\\n}")
    >>> sign_selects(m, [("FSEL R7, -R0, R5, P0", 5), ("BSYNC B0", 5), ("FADD R9, -R0, -RZ", 6)])
    (5,)
    """
    ops = {}
    for text, line in sass:
        op = _opcode(text)
        if op not in _SCAFFOLD:
            ops.setdefault(line, set()).add(op)
    lines = set()
    for f in module.functions.values():
        for ins in f.body:
            if isinstance(ins, Instruction) and ins.opcode in _SIGN_MASK and ins.mods == ("f32",) and \
                    ops.get(ins.token.line) == {"FSEL"}:
                lines.add(ins.token.line)
    return tuple(sorted(lines))


# ------------------------------------------------------------------------------------------------ applying

@dataclass
class Rewrite:
    """What the decoder runs for a contraction (:func:`fused_instructions`): ``replace`` ``{id(add/sub): the fma (or
    div with an addend) run in its place}``, ``before`` ``{id(mul): [mov, ...]}`` that keep a shadowed product's
    operands aside just before the ``mul`` reads them, ``regs`` ``{function name: [Variable, ...]}`` the registers
    they are kept in."""

    replace: dict = field(default_factory=dict)
    before: dict = field(default_factory=dict)
    regs: dict = field(default_factory=dict)


_MOVE = {"f32": "b32", "f16x2": "b32", "bf16x2": "b32", "f16": "b16", "bf16": "b16", "f64": "b64"}


def fused_instructions(module, contraction) -> Rewrite:
    """The :class:`Rewrite` of ``module`` for ``contraction``: each fused ``add``/``sub`` becomes ``fma.rn`` of the
    ``mul``'s operands and its other operand (``.ftz``/``.sat`` as the add says; ``fused = (mul line, negate a,
    negate c)``), or for a ``div`` product the ``div`` with that addend; a shadowed pair reads copies of the
    ``mul``'s register operands made right before the ``mul``."""
    out = Rewrite()
    _sign_selects(module, contraction, out)
    if not contraction.pairs:
        return out
    by_line = {p.add_line: p for p in contraction.pairs}
    muls = {}
    for fname, f in module.functions.items():
        for ins in f.body:
            if isinstance(ins, Instruction) and ins.opcode in ("mul", "div"):
                muls.setdefault(ins.token.line, (fname, ins))
    for fname, f in module.functions.items():
        for ins in f.body:
            if not isinstance(ins, Instruction) or ins.token.line not in by_line or \
                    not _unmodified(ins, ("add", "sub")):
                continue
            p = by_line[ins.token.line]
            _, mul = muls[p.mul_line]
            a, b = mul.operands[1], mul.operands[2]
            if p.shadow:
                a, b = (_shadow(out, fname, f, mul, o) for o in (a, b))
            other = ins.operands[3 - p.operand]
            sub = ins.opcode == "sub"
            neg_a, neg_c = (sub and p.operand == 2) != p.negated, sub and p.operand == 1
            if mul.opcode == "div":                     # the div's own modifiers; its product gets the addend
                opcode, mods = "div", mul.mods
            else:
                opcode, mods = "fma", ("rn", *[m for m in ins.mods if m in ("ftz", "sat")], _float_type(ins))
            out.replace[id(ins)] = Instruction(opcode, mods, [ins.operands[0], a, b, other], ins.guard,
                                               ins.guard_neg, ins.token, ins.loc, fused=(p.mul_line, neg_a, neg_c))
    return out


def _sign_selects(module, contraction, out):
    """Each ``neg.f32``/``abs.f32`` of ``contraction.sign_selects`` runs as the sign-bit operation its ``FSEL`` does
    (``xor.b32``/``and.b32`` of the source's bits, under the same guard)."""
    lines = set(contraction.sign_selects)
    for f in module.functions.values():
        for ins in f.body:
            if isinstance(ins, Instruction) and ins.token.line in lines and ins.opcode in _SIGN_MASK and \
                    ins.mods == ("f32",):
                opcode, mask = _SIGN_MASK[ins.opcode]
                out.replace[id(ins)] = Instruction(opcode, ("b32",), [*ins.operands[:2], Operand("imm", value=mask)],
                                                   ins.guard, ins.guard_neg, ins.token, ins.loc)


def _shadow(out, fname, f, mul, operand):
    """A register that holds ``operand`` as ``mul`` reads it (a ``mov`` before the mul, under its guard); immediates
    and already shadowed operands as they are."""
    if operand.kind != "reg":
        return operand
    moves = out.before.setdefault(id(mul), [])
    name = f"%__warpsim_fma{mul.token.line}_{len(moves)}"
    for move in moves:
        if move.operands[1].name == operand.name:
            return move.operands[0]
    rtype = next((v.type for v in f.regs if v.name == operand.name), "f32")
    out.regs.setdefault(fname, []).append(Variable(name, "reg", rtype, token=mul.token))
    copy = Operand("reg", name, token=operand.token)
    moves.append(Instruction("mov", (_MOVE.get(rtype, "b32"),), [copy, operand], mul.guard, mul.guard_neg, mul.token,
                             mul.loc))
    return copy


# ------------------------------------------------------------------------------------------------ cache

def _cache_get(key):
    try:
        return Contraction.from_dict(json.loads(toolchain.cache_read(f"fma-{key}.json") or "null"))
    except (ValueError, KeyError, TypeError):
        return None


def _cache_put(key, decision):
    toolchain.cache_write(f"fma-{key}.json", json.dumps(decision.as_dict()))
