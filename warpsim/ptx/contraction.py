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
   constant). Still ambiguous, an FMA on a ``mul``'s line, an add that ptxas fused in some copies of an
   unrolled loop and not in others, or a product that ptxas merged with a multiplication by a power of two
   (``FMUL.FTZ.D2``, one rounding of ``a * b / 2``): a :class:`ContractionError` (one line, naming the line) --
   never a guess;
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
           "start", "annotate", "candidates", "sass_lines", "sign_selects", "sign_operands",
           "saturated_ones", "ftz_dropped", "dropped_abs", "double_negations", "folded_constants", "unit_products",
           "ftz_folds", "fused_instructions"]

FLOAT_TYPES = ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2")
CONSTANT_DEPTH = 32    # definitions followed back to find a constant ptxas knows: it follows them all (H100 seed
                       # 277181: a NaN known through nine, a neg of it folded; 8 here missed it)
DECISION = "70"                                 # the way pairs are read from the SASS: part of every cache key
FILE_NAME = "warpsim-fma"                      # the .file the annotated copy's .loc lines name
_UNMODIFIED = re.compile(r"^\s*(?:@!?%[\w$]+\s+)?(mul|add|sub)((?:\.ftz|\.sat)*)\.(?:f32|f64|f16x2|bf16x2|f16|bf16)\s",
                         re.MULTILINE)
_DIVISION = re.compile(r"^\s*(?:@!?%[\w$]+\s+)?div\.(?:approx|full)(?:\.ftz)?\.f32\s", re.MULTILINE)
_NAN_FOLDS = re.compile(r"^\s*(?:@!?%[\w$]+\s+)?(?:(?:neg|abs)(?:\.ftz)?\.f32|add(?:\.ftz)?\.sat\.f32)\s", re.MULTILINE)
_LOC = re.compile(r"^\s*\.loc\b.*$", re.MULTILINE)
_FILE = re.compile(r"^\s*\.file\s+(\d+)", re.MULTILINE)
_HEADER_END = re.compile(r"^\s*\.address_size\s+\d+\s*$|^\s*\.target\b.*$", re.MULTILINE)
_INSTRUCTION_LINE = re.compile(r"^\s*(?:[\w$]+:\s*)?(?:@!?%[\w$]+\s+)?[a-z][a-z0-9_]*(?:\.[\w:]+)*(?:\s|;|$)")
_NAMED_LINE = re.compile(r"^\s*[\w$]+\s*:\s*(?:\.|$)")       # a label alone, or ``prototype_0 : .callprototype``
_SASS_LINE = re.compile(r'//## File "([^"]*)", line (\d+)')
_SASS_INSTR = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
_FMA = ("FFMA", "DFMA", "HFMA2")
_SCALED = re.compile(r"^(?:@!?P\w+\s+)?[FD](?:MUL|FMA)(?:\.\w+)*\.(?:D2|D4|D8|M2|M4|M8)\b")   # FMUL.FTZ.D2: a*b/2
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
    lines of ``neg.f32``/``abs.f32`` that run as sign-bit operations (:func:`sign_selects`); ``sign_operands``:
    ``(line, operand)`` of the ``selp`` operands that read a ``neg``/``abs`` folded into their ``FSEL``
    (:func:`sign_operands`); ``saturated_ones``: the lines of ``add.sat``/``sub.sat`` that ptxas folded to ``1.0``
    (:func:`saturated_ones`); ``ftz_dropped``: the lines of f32 ``.ftz`` arithmetic that ptxas compiled without
    ``.FTZ`` (:func:`ftz_dropped`); ``double_negations``: the lines of a ``neg`` of a ``neg`` that ptxas folded
    away (:func:`double_negations`); ``folded_constants``: ``(line, bits)`` of the ``neg``/``abs`` of a constant NaN
    that ptxas folded to those bits (:func:`folded_constants`); ``unit_products``: ``(line, operand)`` of the
    ``mul.f32`` by a known ``1.0`` that ptxas folded to a move of that operand (:func:`unit_products`);
    ``negated_differences``: the lines of ``x - 2x`` that ptxas simplified to ``-x`` (:func:`negated_differences`);
    ``ftz_folds``: ``(line, bits)`` of ``.ftz`` arithmetic of constants that ptxas folded (:func:`ftz_folds`);
    ``kept_differences``: the lines of ``2x - x`` that ptxas simplified to ``x`` (:func:`kept_differences`);
    ``known_predicates``: the lines of a ``setp`` of a square against a constant that ptxas decided true
    (:func:`known_predicates`); ``dropped_abs``: ``(line, computed)`` of an ``abs.f32`` whose absolute value ptxas
    dropped (:func:`dropped_abs`). The last twelve are where ptxas's code computes otherwise than the PTX text."""

    compiler: str
    pairs: tuple = ()
    version: str = ""
    path: str = ""
    arch: str = ""
    flags: tuple = ()
    reason: str = ""
    cubin: str = ""
    sign_selects: tuple = ()
    sign_operands: tuple = ()
    saturated_ones: tuple = ()
    ftz_dropped: tuple = ()
    double_negations: tuple = ()
    folded_constants: tuple = ()
    unit_products: tuple = ()
    negated_differences: tuple = ()
    ftz_folds: tuple = ()
    kept_differences: tuple = ()
    known_predicates: tuple = ()
    dropped_abs: tuple = ()

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
                "sign_selects": list(self.sign_selects), "sign_operands": [list(p) for p in self.sign_operands],
                "saturated_ones": list(self.saturated_ones), "ftz_dropped": list(self.ftz_dropped),
                "double_negations": list(self.double_negations),
                "folded_constants": [list(p) for p in self.folded_constants],
                "unit_products": [list(p) for p in self.unit_products],
                "negated_differences": list(self.negated_differences),
                "ftz_folds": [list(p) for p in self.ftz_folds], "kept_differences": list(self.kept_differences),
                "known_predicates": list(self.known_predicates),
                "dropped_abs": [list(p) for p in self.dropped_abs]}

    @classmethod
    def from_dict(cls, d) -> "Contraction":
        return cls(d["compiler"], tuple(Fusion(*p) for p in d["pairs"]), d["version"], d["path"], d["arch"],
                   tuple(d["flags"]), d["reason"], d["cubin"], tuple(d.get("sign_selects", ())),
                   tuple(tuple(p) for p in d.get("sign_operands", ())), tuple(d.get("saturated_ones", ())),
                   tuple(d.get("ftz_dropped", ())), tuple(d.get("double_negations", ())),
                   tuple(tuple(p) for p in d.get("folded_constants", ())),
                   tuple(tuple(p) for p in d.get("unit_products", ())), tuple(d.get("negated_differences", ())),
                   tuple(tuple(p) for p in d.get("ftz_folds", ())), tuple(d.get("kept_differences", ())),
                   tuple(d.get("known_predicates", ())), tuple(tuple(p) for p in d.get("dropped_abs", ())))


NONE = Contraction("none", reason="--ptxas none")


def candidates(text) -> bool:
    """Whether ptxas has anything to decide in ``text``: a product (an unmodified float ``mul``, or
    ``div.approx``/``div.full`` of ``.f32``) and an unmodified float ``add``/``sub`` to contract, or an f32
    ``neg``/``abs``/``add.sat`` whose NaN ptxas may compute otherwise than the PTX text (:func:`sign_selects`,
    :func:`sign_operands`, :func:`saturated_ones`), or two unmodified ``mul`` (ptxas may merge them: ``FMUL.D2``)."""
    found = [m.group(1) for m in _UNMODIFIED.finditer(text) if "sat" not in m.group(2) or m.group(1) != "mul"]
    ops = set(found)
    contracts = ("mul" in ops or _DIVISION.search(text) is not None) and bool(ops & {"add", "sub"})
    return contracts or found.count("mul") > 1 or _NAN_FOLDS.search(text) is not None


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
    return _opcode_word(sass).split(".")[0]


def _opcode_word(sass):
    """``FMUL.FTZ.D2`` of ``@!P0 FMUL.FTZ.D2 R1, R2, R3``: the opcode with its modifiers, the guard dropped."""
    words = sass.split()
    return words[1] if words[0].startswith("@") and len(words) > 1 else words[0]


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
        return Pending(Contraction("ptxas", arch=arch, flags=flags,
                                   reason="no unrounded float mul+add pairs, no f32 neg/abs/add.sat"))
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
        _partial_negations(module, self.sass, name)
        pairs = _resolve(module, self.sass, name)
        ones = saturated_ones(module, self.sass)
        self.done = Contraction("ptxas", tuple(pairs), self.version, self.ptxas, self.arch, self.flags,
                                cubin=str(self.cubin) if self.cubin is not None else "",
                                sign_selects=sign_selects(module, self.sass),
                                sign_operands=sign_operands(module, self.sass),
                                saturated_ones=ones,
                                ftz_dropped=ftz_dropped(module, self.sass),
                                double_negations=double_negations(module, self.sass),
                                folded_constants=folded_constants(module, self.sass),
                                unit_products=unit_products(module, self.sass, ones),
                                negated_differences=negated_differences(module, self.sass),
                                ftz_folds=ftz_folds(module, self.sass),
                                kept_differences=kept_differences(module, self.sass),
                                known_predicates=known_predicates(module, self.sass),
                                dropped_abs=dropped_abs(module, self.sass, name))
        _cache_put(self.key, self.done)
        return self.done


class _Function:
    """One function's control flow, definitions and reaching definitions, for resolving its pairs."""

    def __init__(self, f):
        self.flow = ControlFlow(f)
        self.loops = _loops(f.body)
        self.values = {}                            # _def_value's answers
        self._solve()
        decided = self._decided_branches()
        if decided:                                 # the paths ptxas knows are never taken removed (H100 seed 262630)
            self.flow = ControlFlow(f, decided)
            self._solve()

    def _decided_branches(self):
        """``{index: taken}`` of the guarded ``bra`` whose predicate's one reaching definition is an unguarded
        ``setp`` of an f32 register against itself with a comparison that cannot vary: ``gt``/``lt``/``ne`` (false,
        a NaN included) and ``equ``/``geu``/``leu`` (true). ptxas decides them (``setp.gt.f32 %p3, %f0, %f0; @%p3
        bra $L_else3``: no branch in the SASS, the other side's writes gone: H100 seed 262630)."""
        out = {}
        for i, ins in enumerate(self.flow.instrs):
            if ins.opcode != "bra" or ins.guard is None:
                continue
            m = self.single_def(i, ins.guard)
            setp = self.flow.instrs[m] if m is not None else None
            if setp is None or setp.opcode != "setp" or setp.guard is not None or _float_type(setp) != "f32" or \
                    len(setp.operands) != 3 or setp.operands[0].pair is not None:
                continue
            a, b = setp.operands[1:3]
            if a.kind != "reg" or b.kind != "reg" or a.name != b.name:
                continue
            value = next((v for c, v in _SELF_COMPARISON.items() if c in setp.mods), None)
            if value is not None:
                out[i] = value != ins.guard_neg
        return out

    def _solve(self):
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
        self.block_of = {i: b for b, (start, end) in enumerate(self.flow.blocks) for i in range(start, end)}
        self._defs_at, self._kill, self._reach_past_guards = defs_at, kill, None

    @property
    def reach_past_guards(self):
        """Reaching definitions where a guarded write kills nothing (its guard may be false: the value before it
        goes on): ``[mask, ...]`` per instruction, computed on first use. (:attr:`reach` lets every write kill,
        which the pairs' resolution relies on.)"""
        if self._reach_past_guards is None:
            ins = self.flow.instrs
            self._reach_past_guards = self.flow.reaching(
                self._defs_at, lambda k: 0 if ins[k].guard is not None else self._kill[k])
        return self._reach_past_guards

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


_SELF_COMPARISON = {"gt": False, "lt": False, "ne": False, "equ": True, "geu": True, "leu": True}   # x op x


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


def _square(ins):
    """Whether ``ins`` is a ``mul`` of one register by itself."""
    a, b = (ins.operands[1:3] + [None, None])[:2] if ins.opcode == "mul" else (None, None)
    return a is not None and b is not None and a.kind == b.kind == "reg" and a.name == b.name


def _resolve(module, sass, filename):
    """The :class:`Fusion` pairs that the line-annotated ``sass`` shows (see the module docstring, step 3)."""
    at_line = {}
    for fname, f in module.functions.items():
        if f.declared_only:
            continue
        for k, ins in enumerate(i for i in f.body if isinstance(i, Instruction)):
            at_line.setdefault(ins.token.line, []).append((fname, k, ins))
    kinds, fmas = {}, {}
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
        if kind == "fma":
            fmas.setdefault(line, []).append(text)
        if kind in ("mul", "fma") and _SCALED.search(text) and \
                any(_unmodified(ins, ("mul", "add", "sub")) for _, _, ins in at_line.get(line, ())):
            raise ContractionError(f"{filename}:{line}: ptxas merged a multiplication by a power of two into this "
                                   f"product ({_opcode_word(text)}: one rounding where the PTX has two); warpsim cannot "
                                   "run it (run with --ptxas none)")
    functions, pairs, fused = {}, [], []
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
        pairs.append(_fusion(fn, k, add, line, kinds, filename, fmas.get(line, ())))
        fused.append((fn, k, add, pairs[-1]))
    own = {}                                            # line: the opcodes of its SASS that compute
    for text, line in sass:
        if not _moves(text):
            own.setdefault(line, set()).add(_opcode(text))
    for entry in fused:
        if len(fmas.get(entry[2].token.line, ())) < 2:
            continue
        for _, _, t in _twins([entry], {}):
            if "add" in kinds.get(t.token.line, ()):
                raise ContractionError(f"{filename}:{t.token.line}: ptxas computed this {t.opcode} unfused in some "
                                       f"copies and its twin of line {entry[2].token.line} as an FMA in others, "
                                       "maybe as one; warpsim cannot run both (run with --ptxas none)")
    twins = {t.token.line: (fn, k, t) for fn, k, t in _twins(fused, own)}
    pairs += [_fusion(fn, k, t, line, kinds, filename) for line, (fn, k, t) in twins.items()]
    return sorted(pairs, key=lambda p: p.add_line)


def _fusion(fn, k, add, line, kinds, filename, fmas=()):
    """The :class:`Fusion` of the ``add`` (instruction ``k`` of ``fn``, at ``line``) that ptxas made an FMA (its
    SASS ``fmas``)."""
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
        elif mul.opcode == "abs" and _float_type(mul) == _float_type(add) and mul.operands[1].kind == "reg":
            m = fn.single_def(m, mul.operands[1].name)      # |a*a| + c: a square is never negative, ptxas drops
            if m is None or not (_square(fn.flow.instrs[m]) or  # the abs (H200 seed 204830); so it does for a
                                 fmas and not any("|" in t for t in fmas)):   # product it knows >= 0 (218331)
                continue
            mul = fn.flow.instrs[m]
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
    other = add.operands[3 - pos]
    loops = [(a, b) for a, b in fn.loops if a <= k <= b]
    defs = [fn.defs[i][1] for i in bits(fn.reach[k] & fn.reg_mask.get(other.name, 0))] if other.kind == "reg" else []
    if len(fmas) > 1 and loops and len(defs) > 1 and \
            any(_product(fn.flow.instrs[d], add) and any(a <= d <= b for a, b in loops) for d in defs):
        raise ContractionError(f"{filename}:{line}: ptxas fused copies of this {add.opcode} into FMAs, and its other "
                               "operand is a product of the loop on some paths (an unrolled loop's copies may each "
                               "take another product); warpsim cannot tell which (run with --ptxas none)")
    if loops and _folded_unfused(fn, k, add, m, mul, pos, negated, loops[0]):
        raise ContractionError(f"{filename}:{line}: ptxas fused this {add.opcode} into an FMA, but after a loop's "
                               "first pass its operands are constants (a mov in the loop sets them), which ptxas "
                               "folds in an unrolled loop's later copies with two roundings, other bits than the "
                               "FMA's; warpsim cannot run both (run with --ptxas none)")
    regs = {o.name for o in mul.operands[1:3] if o.kind == "reg"}
    return Fusion(line, mul.token.line, pos, fn.clobbered(m, k, regs), negated)


def _folded_unfused(fn, k, add, m, mul, pos, negated, loop):
    """Whether the fused ``add`` (instruction ``k``; its product ``mul``, instruction ``m``, operand ``pos``) reads only
    constants after the first pass of ``loop``, which ptxas folds with two roundings in an unrolled loop's later copies
    (a ``MOV`` on the loop's branch line) while the first copy is the FMA (H100 seeds 212978, 234680), and the two
    differ: the FMA's bits, the f32 model of both, are not the two roundings' (not computed, True, for a type other
    than f32, ``.ftz``, a ``.sat`` product or a ``neg`` between them)."""
    operands = ((m, mul.operands[1]), (m, mul.operands[2]), (k, add.operands[3 - pos]))
    later = [_loop_constant(fn, i, o, loop) for i, o in operands]
    if None in later:
        return False
    if tuple(mul.mods) != ("f32",) or not set(add.mods) <= {"f32", "sat"} or negated:
        return True
    from warpsim.isa import fparith
    from warpsim.isa.rounding import RN
    a, b, c = later
    product = _fold(mul, [a, b])
    two = _fold(add, [product, c] if pos == 1 else [c, product])
    if add.opcode == "sub" and pos == 1:
        c ^= 0x80000000                                 # a*b - c
    elif add.opcode == "sub":
        a ^= 0x80000000                                 # c - a*b
    one = int(fparith.f32_fma(a, b, c, RN, False, "sat" in add.mods))
    return one != two


def _loop_constant(fn, k, operand, loop):
    """The 32 bits ``operand`` of instruction ``k`` holds on every pass of ``loop`` after its first, or None: an
    immediate, or a register that only unguarded ``mov`` of one immediate write inside the loop (its value from before
    the loop reaches the first pass only)."""
    if operand.kind == "fimm" and operand.bits == 32 or operand.kind == "imm" and 0 <= operand.value < 1 << 32:
        return operand.value
    if operand.kind != "reg":
        return None
    a, b = loop
    movs = [fn.flow.instrs[d] for d in (fn.defs[i][1] for i in bits(fn.reach[k] & fn.reg_mask.get(operand.name, 0)))
            if a <= d <= b]
    if not movs or any(i.opcode != "mov" or i.guard is not None or i.operands[1].kind not in ("imm", "fimm")
                       for i in movs):
        return None
    values = {i.operands[1].value for i in movs}
    return values.pop() if len(values) == 1 else None


def _operand_key(o):
    return (o.kind, o.name, o.value, o.bits)


def _computing(sass):
    """``{line: n}``: the PTX lines with SASS that computes (not :func:`_moves`), each with how many such
    instructions ptxas made of it (an unrolled loop's copies).

    >>> _computing([("FADD R1, R2, R3", 7), ("MOV R1, R2", 8), ("FADD R4, R2, R3", 7)])
    {7: 2}
    """
    counts = {}
    for text, line in sass:
        if not _moves(text):
            counts[line] = counts.get(line, 0) + 1
    return counts


def _moves(sass):
    """Whether a SASS instruction only copies a register or a constant (``MOV``, ``IMAD.MOV.U32 R11, RZ, RZ, R12``)
    or is control-flow scaffolding.

    >>> _moves("@P1 IMAD.MOV.U32 R11, RZ, RZ, R12"), _moves("MOV R1, R2"), _moves("FADD R1, R2, R3")
    (True, True, False)
    """
    words = sass.split()
    word = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return word in ("MOV", "IMAD.MOV.U32", "IMAD.MOV") or word.split(".")[0] in _SCAFFOLD


def _loops(body):
    """``[(first, last), ...]``: the instruction ranges of ``body`` (instructions only) that a branch back to a label
    at or before it closes, in the text's order.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .pred %p0;\\n$L0:\\nbra.uni $L1;\\n$L1:\\n@%p0 bra $L0;\\nret;\\n}")
    >>> _loops(m.functions["k"].body)
    [(0, 1)]
    """
    labels, out, k = {}, [], 0
    for s in body:
        if isinstance(s, Instruction):
            target = s.operands[0] if s.opcode == "bra" and s.operands else None
            if target is not None and target.kind == "sym" and target.name in labels:
                out.append((labels[target.name], k))
            k += 1
        else:
            labels[s.name] = k
    return out


def _partial_negations(module, sass, filename):
    """Refuse a float ``neg`` of its own register (``neg.f16x2 %h3, %h3``) in a loop that ptxas unrolled and whose
    copies it computed in some places and folded away in others (``-(-x)`` is ``x``, payload kept, where each
    negation one by one gives the canonical NaN): H100 seed 232318, a loop unrolled by four with no ``HADD2`` in the
    copies of four and two and ``HADD2 R7, -R7, -RZ.H0_H0`` in the copies of one; which copies an iteration runs
    is ptxas's unrolling, which warpsim does not follow (the ``HADD2`` there on the line before the ``neg``'s). The
    test: the ``neg`` reads its own previous result (no other write of the register in the loop's way) and has fewer
    copies that compute on its line than another line of the loop, which has several. (A ``neg.f32 %f7, %f7`` of a
    product made anew each iteration folds into its reader, ``FADD.FTZ.SAT R17, -R12, R21``, in every copy: H100
    seed 215641.)"""
    computing = _computing(sass)
    for f, body in _bodies(module):
        fn = None
        for first, last in _loops(f.body):
            lines = {ins.token.line for ins in body[first:last + 1]}
            most = max((computing.get(line, 0) for line in lines), default=0)
            for k in range(first, last + 1):
                ins = body[k]
                if ins.opcode != "neg" or ins.mods[-1:] not in (("f32",), ("f16x2",), ("f16",), ("bf16x2",), ("bf16",))\
                        or ins.operands[1].kind != "reg" or ins.operands[0].name != ins.operands[1].name or \
                        computing.get(ins.token.line, 0) >= most or most < 2:
                    continue
                fn = fn or _Function(f)             # the previous iteration's negation reaches it: -(-x) to fold
                if any(fn.defs[i][1] == k for i in bits(fn.reach[k] & fn.reg_mask.get(ins.operands[1].name, 0))):
                    raise ContractionError(f"{filename}:{ins.token.line}: ptxas unrolled this loop and folded some "
                                           "copies of this neg away and not others (a NaN's payload kept or not); "
                                           "warpsim cannot run both (run with --ptxas none)")


def _twins(fused, own):
    """``[(fn, k, add), ...]``: the unmodified adds that ptxas computed once with a fused one, as a common
    subexpression, so that they take the FMA's bits too (H100, conformance/h100/h100-80gb-hbm3-fuzz-float-200000.json
    seed 200066 and -201000.json seed 201246: ``add.f16x2 %h2, %h3, %h5; add.f16x2 %h3, %h5, %h3`` after
    ``mul.f16x2 %h3, ...``: one ``HFMA2`` on the first line, no SASS on the second, and both registers hold it).

    A twin has no SASS on its line that computes in its type (moves alone: ``@P1 IMAD.MOV.U32 R11, RZ, RZ, R12``, a
    copy of the FMA's register, H200 seed 202619, ptxas having made the block predicated; an f32 ``FADD R15, |R15|,
    -RZ`` that ptxas moved there from an ``abs`` beside an f16x2 twin: H100 seed 280321; ``own``: ``{line: SASS
    opcodes that compute}``), is unguarded as the fused add is, has
    its modifiers, and sums the same values with the same signs (:func:`_signed_terms`: ``sub`` or ``add`` of a
    ``neg``; in either order): an operand's value is its one reaching definition, or a ``mul`` of the same values (H200 seed 210913:
    ``mul.f16x2 %h0, %h1, %h4; sub.f16x2 %h0, %h5, %h0`` again in a later block, ``IMAD.MOV.U32 R17, RZ, RZ, R15``)."""
    out = []
    for fn, ka, a, _ in fused:
        if a.guard is not None:
            continue
        terms = _signed_terms(fn, ka, a)
        for kt, t in enumerate(fn.flow.instrs):
            if kt == ka or _computes(own.get(t.token.line, ()), t) or t.guard is not None or \
                    t.opcode not in ("add", "sub") or t.mods != a.mods:
                continue
            other = _signed_terms(fn, kt, t)
            if any(all(s1 == s2 and _same_value(fn, k1, x, k2, y) for (s1, k1, x), (s2, k2, y) in zip(terms, p))
                   for p in (other, other[::-1])):
                out.append((fn, kt, t))
    return out


def _computes(opcodes, ins):
    """Whether one of the SASS ``opcodes`` (of ``ins``'s line) computes in ``ins``'s float type: ``H...`` for the
    16-bit types, ``D...`` for f64, any other for f32 (the integer units' moves and selects are not among them).

    >>> from warpsim.ptx.syntax import parse_module
    >>> _computes({"FADD"}, parse_module(".entry k()\\n{\\n.reg .b32 %h<3>;\\nsub.f16x2 %h0, %h1, %h2;\\n}")
    ...           .functions["k"].body[-1])
    False
    """
    kind = _float_type(ins)
    first = "H" if kind in ("f16", "f16x2", "bf16", "bf16x2") else "D" if kind == "f64" else None
    return any(first is None or op.startswith(first) for op in opcodes)


def _signed_terms(fn, k, ins):
    """The two terms that the add/sub ``ins`` (instruction ``k``) sums, as ``(sign, reader, operand)``: a ``sub``'s
    second negated, and an operand that is an unguarded ``neg`` of the same type read through it, sign flipped
    (``add.f16x2 %h2, %h2, %h0`` with ``neg.f16x2 %h0, %h1`` sums what ``sub.f16x2 %h3, %h2, %h1`` does: H100 seed
    215317, one ``HFMA2`` for both)."""
    out = []
    for pos, o in ((1, ins.operands[1]), (2, ins.operands[2])):
        sign, reader = -1 if ins.opcode == "sub" and pos == 2 else 1, k
        m = fn.single_def(k, o.name) if o.kind == "reg" else None
        src = fn.flow.instrs[m] if m is not None else None
        if src is not None and src.opcode == "neg" and src.guard is None and src.mods == (_float_type(ins),) and \
                src.operands[1].kind == "reg":
            sign, reader, o = -sign, m, src.operands[1]
        out.append((sign, reader, o))
    return out


def _same_value(fn, k1, o1, k2, o2, depth=2):
    """Whether operand ``o1`` read by instruction ``k1`` and ``o2`` read by ``k2`` hold one value: the same immediate,
    one register in one basic block not written between, the same one reaching definition, or (``depth`` levels)
    unguarded ``mul`` of the same values."""
    if o1.kind != "reg" or o2.kind != "reg":
        return _operand_key(o1) == _operand_key(o2)
    if o1.name == o2.name and fn.block_of[k1] == fn.block_of[k2] and \
            not any(o1.name in fn.writes[j] for j in range(min(k1, k2), max(k1, k2))):
        return True                                 # one register, not written from the first reader on
    d1, d2 = fn.single_def(k1, o1.name), fn.single_def(k2, o2.name)
    if d1 is None or d2 is None:
        return False
    if d1 == d2:
        return True
    i1, i2 = fn.flow.instrs[d1], fn.flow.instrs[d2]
    return (depth > 0 and i1.opcode == i2.opcode == "mul" and i1.mods == i2.mods and i1.guard is None
            and i2.guard is None and all(_same_value(fn, d1, x, d2, y, depth - 1)
                                         for x, y in zip(i1.operands[1:3], i2.operands[1:3])))


_SIGN_MASK = {"neg": ("xor", 0x80000000), "abs": ("and", 0x7FFFFFFF)}     # the bit operation an FSEL modifier does
_SCAFFOLD = ("BSSY", "BSYNC", "BRA", "NOP")


def sign_selects(module, sass):
    """The PTX lines of ``neg.f32``/``abs.f32`` that the GPU computes as a sign-bit operation, sorted:
    those whose SASS is ``FSEL`` alone (``FSEL R7, -R0, R5, P0``: a guarded ``neg`` merged with the register's old
    value; no ``.ftz``). (A ``neg``/``abs`` of a NaN that ptxas folds to a constant: :func:`folded_constants`.)

    The rule (H100, conformance/h100/h100-80gb-hbm3-fuzz-float-20{0,1}000.json): an ``FSEL`` moves its operand's
    bits with the ``-``/``|..|`` modifier as a sign-bit operation, so a NaN keeps its payload (``0x7FC00000 ->
    0xFFC00000``), where the ``FADD R, -R, -RZ`` that ptxas writes for an unguarded ``neg`` gives the canonical NaN
    (``0x7FFFFFFF``, the H200 float campaign). Lines with no SASS of their own (the sign folded into a neighbour)
    or with other instructions keep the canonical rule, and so does a ``neg`` of a ``neg``/``abs`` (``neg.f32 %f9,
    %f3; @%p1 neg.f32 %f9, %f9`` is ``FSEL R30, R34, -R34, P0`` of ``%f3``'s register, the double negation folded
    away: seed 200247 of the H100's rerun, the canonical rule gave its bits) -- unless the inner one has SASS of
    its own and the ``FSEL`` does not choose between one register and its negation (``@%p0 abs.ftz.f32 %f1, %f0``
    is ``FADD.FTZ R5, |R0|, -RZ; FSEL R50, R5, |R10|, P4``, then ``@%p2 neg.f32 %f5, %f1`` is ``FSEL R58, -R50,
    R58, !P3``: the sign of the computed canonical NaN flipped, ``0xFFFFFFFF``: H100 seed 231540).

    Also a ``neg``/``abs`` with no SASS of its own that a later guarded write of its register keeps where the guard
    is false, merged by an ``FSEL`` with the modifier (:func:`_merged_by_fsel`).

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n.reg .pred %p0;\\n"
    ...                  "@%p0 neg.f32 %f2, %f1;\\nneg.f32 %f3, %f1;\\n@%p0 neg.f32 %f3, %f3;\\n}")
    >>> sign_selects(m, [("FSEL R7, -R0, R5, P0", 5), ("BSYNC B0", 5), ("FADD R9, -R0, -RZ", 6),
    ...                  ("FSEL R9, R0, -R0, P0", 7)])
    (5,)
    """
    ops, texts = {}, {}
    for text, line in sass:
        op = _opcode(text)
        if op not in _SCAFFOLD:
            ops.setdefault(line, set()).add(op)
            texts.setdefault(line, []).append(text)
    lines = set()
    for f in module.functions.values():
        if f.declared_only:
            continue
        fn = None
        for k, ins in enumerate(i for i in f.body if isinstance(i, Instruction)):
            if ins.opcode not in _SIGN_MASK or ins.mods not in (("f32",), ("ftz", "f32")):
                continue
            if ins.operands[1].kind != "reg":
                continue
            fn = fn or _Function(f)
            source = _constant(fn, k, ins.operands[1].name)
            if ops.get(ins.token.line) == {"FSEL"} and ins.mods == ("f32",) and \
                    any(_folded_sign(t, ins.opcode, source) for t in texts[ins.token.line]):
                lines.add(ins.token.line)
            elif _one_fsel(texts.get(ins.token.line, ())) and ins.mods == ("f32",) and \
                    any(_modified(t, ins.opcode) for t in texts[ins.token.line]):
                m = fn.single_def(k, ins.operands[1].name)
                inner = fn.flow.instrs[m] if m is not None else None
                if inner is None or inner.opcode not in _SIGN_MASK or inner.token.line in ops and \
                        not any(_selects_both_signs(t) for t in texts[ins.token.line]):
                    lines.add(ins.token.line)
            elif ins.token.line not in ops and ins.mods == ("f32",) and _merged_by_fsel(fn, k, ins, texts):
                lines.add(ins.token.line)
    return tuple(sorted(lines))


def _selected(sass):
    """The two operands an ``FSEL`` selects between, as written (``FSEL R58, -R50, R58, !P3`` -> ``('-R50', 'R58')``).

    >>> _selected("@!P1 FSEL R4, -R7, R8, P0"), _selected("FSEL R38, R38, -QNAN , !P1")
    (('-R7', 'R8'), ('R38', '-QNAN'))
    """
    ops = [o.strip() for o in sass.split(",")]
    return ops[1], ops[2]


def _register(operand):
    """``R50`` of ``-R50``, ``|R10|``."""
    return operand.strip("-|")


def _selects_both_signs(fsel):
    """Whether an ``FSEL`` selects between a register and its own modified self (``FSEL R9, R0, -R0, P0``).

    >>> _selects_both_signs("FSEL R9, R0, -R0, P0"), _selects_both_signs("FSEL R58, -R50, R58, !P3")
    (True, False)
    """
    if _opcode(fsel) != "FSEL":
        return False
    a, b = _selected(fsel)
    return _register(a) == _register(b)


def _one_fsel(texts):
    """Whether a line's SASS is one ``FSEL`` beside moves and ``FADD``s at most: ptxas schedules a neighbour's
    ``neg`` and the move of the merged register onto the line of a guarded ``neg`` (``@!P1 FADD R0, -R8, -RZ; @!P1
    FSEL R4, -R7, R8, P0; @!P1 IMAD.MOV.U32 R8, RZ, RZ, R4``: H100 seed 232256, the ``FSEL`` the ``neg`` itself) --
    or, in a loop ptxas unrolled, one such ``FSEL`` per copy, each of a register with the modifier (``@%p1 neg.f32
    %f8, %f5`` is ``FSEL R2, -R2, R9, !P0; FSEL R13, -R13, R2, !P0; ...``: H100 seeds 256744, 237729), the loop's
    own integer control beside them (254381).

    >>> _one_fsel(["@!P1 FSEL R4, -R7, R8, P0", "@!P1 IMAD.MOV.U32 R8, RZ, RZ, R4"])
    True
    >>> _one_fsel(["FSEL R2, -R2, R9, !P0", "FSEL R13, -R13, R2, !P0"])
    True
    >>> _one_fsel(["FSEL R2, R2, R9, P0", "FSEL R3, -R3, R2, P0"])      # copies, one without the modifier
    False
    >>> _one_fsel(["FSEL R9, -R0, R9, P0", "ISETP.GT.AND P2, PT, R2, 0x3, PT", "FSEL R9, -R0, R9, P0"])
    True
    """
    ops = [_opcode(t) for t in texts]
    fsels = [t for op, t in zip(ops, texts) if op == "FSEL"]
    if not fsels or len(fsels) > 1 and not all(any(o[:1] in "-|" and o[1:2] == "R" for o in _selected(t))
                                               for t in fsels):
        return False
    modified = {_register(o) for fsel in fsels for o in _selected(fsel) if o[:1] in "-|"}
    # an FADD of the register the FSEL negates may be the neg itself, computed: then the FSEL is not the neg
    return all(op in ("FSEL", "MOV") or op == "IMAD" and "IMAD.MOV" in t or op in _LOOP_CONTROL or
               op == "FADD" and not modified & {_register(o.strip()) for o in t.split(",")[1:]}
               for op, t in zip(ops, texts))


# integer and predicate instructions of an unrolled loop's control that ptxas may schedule onto a line (H100 seed
# 254381: ``ISETP.GT.AND P2, PT, R2, 0x3, PT`` among a guarded neg's FSELs): they compute no float
_LOOP_CONTROL = ("ISETP", "PLOP3", "VIADD", "IADD3")


def _modified(fsel, opcode):
    """Whether an ``FSEL`` selects a register with ``opcode``'s modifier (``FSEL R17, -R9, R12, P0``), not a constant
    ptxas folded the sign into (``FSEL R42, R26, +QNAN, !P1``: H200 seed 219207, the canonical NaN stored).

    >>> _modified("FSEL R17, -R9, R12, P0", "neg"), _modified("FSEL R42, R26, +QNAN , !P1", "neg")
    (True, False)
    >>> _modified("MOV R1, R2", "neg")
    False
    """
    if _opcode(fsel) != "FSEL":           # a move beside it on the line (H100 seed 249749: was an IndexError)
        return False
    return any(o.startswith(_MODIFIER[opcode] + "R") for o in _selected(fsel))


def _folded_sign(fsel, opcode, source):
    """Whether an ``FSEL`` selects the constant ptxas folded a ``neg``/``abs`` of the NaN ``source`` into, with the
    sign the sign-bit operation gives it (``@%p1 neg.f32 %f6, %f9`` of ``%f9 = 0x7FFFFFFF`` is ``FSEL R38, R38,
    -QNAN, !P1``, ``0xFFFFFFFF``: H100 seed 235336), where the canonical rule would keep ``0x7FFFFFFF``.

    >>> [_folded_sign(t, "neg", 0x7FFFFFFF) for t in ("FSEL R38, R38, -QNAN , !P1", "FSEL R4, R2, +QNAN , P0")]
    [True, False]
    """
    if source is None or not _is_nan(source):
        return False
    op, mask = _SIGN_MASK[opcode]
    folded = source ^ mask if op == "xor" else source & mask
    sign = "-" if folded >> 31 else "+"
    return sign + "QNAN" in _selected(fsel)


_NAN_ARITH = ("add", "sub", "mul", "fma", "mad")
_MODIFIER = {"neg": "-", "abs": "|"}


def _merged_by_fsel(fn, k, ins, texts):
    """Whether the ``neg``/``abs`` ``ins`` (instruction ``k``) is the old value that a later guarded write of its
    register keeps, and ptxas folded it into the ``FSEL`` that merges the two (``neg.f32 %f3, %f6; @%p1 fma.rn.f32
    %f3, ...`` is ``FFMA R8, ...; FSEL R19, R8, -R5, !P0`` on the fma's line, none on the neg's: H200 seeds 202902
    and 204237; both ``FSEL`` operands modified where the guarded write is a ``neg`` too: ``neg.f32 %f1, %f4; ...;
    @%p3 neg.f32 %f1, %f6`` is ``FSEL R7, -R8, -R15, P0``, H100 seed 250000), so the value kept is the sign-bit
    operation of the source."""
    dest = ins.operands[0].name if ins.operands[0].kind == "reg" else None
    for kg, g in enumerate(fn.flow.instrs):
        if g.guard is None or dest not in fn.writes[kg] or fn.single_def(kg, dest) != k:
            continue
        for text in texts.get(g.token.line, ()):
            if _opcode(text) == "FSEL":
                fsel = _selected(text)
                modified = sum(o.startswith(_MODIFIER[ins.opcode]) for o in fsel)
                if modified == 1 or (modified == len(fsel) == 2 and g.opcode == ins.opcode):
                    return True
    return False


def _constant(fn, k, reg, depth=None):
    """The 32-bit value ptxas knows ``reg`` to hold before instruction ``k`` of ``fn``, or None: its one reaching
    definition an unguarded ``mov`` of an immediate or of such a register, or an f32 ``add``/``sub``/``mul``/``fma``/
    ``mad`` with a constant NaN operand (the canonical ``0x7FFFFFFF``; ``+0`` with ``.sat``, which flushes a NaN
    result: H100 seed 255743) or of constants alone (folded as IEEE 754 rounds them, the instruction's own model:
    ``mul.f32 %f4, %f9, 0f3DB63AC1`` of ``%f9 = 0`` is ``0``, H200 seed 217915), a ``selp`` of one constant either
    way, or an f32 ``neg``/``abs`` of a constant (its sign bit; of a NaN, a NaN: H200 seed 228108's
    ``neg.f32 %f2, %f10; mul.sat.f32 %f9, %f2, 0f4386B3CE`` is ``1.0``)."""
    depth = CONSTANT_DEPTH if depth is None else depth
    m = fn.single_def(k, reg) if depth else None
    return _def_value(fn, m, depth) if m is not None else None


def _constants(fn, k, reg):
    """The set of values ptxas knows ``reg`` may hold before instruction ``k``: every reaching definition a constant
    (:func:`_constant`'s cases), or None."""
    found = bits(fn.reach[k] & fn.reg_mask.get(reg, 0))
    values = {_def_value(fn, fn.defs[i][1], CONSTANT_DEPTH) for i in found}
    return values if found and None not in values else None


def _always_nan(fn, k, reg):
    """Whether ptxas knows ``reg`` holds a NaN before instruction ``k`` whatever the guards: every definition that
    may reach it (a guarded write killing none) writes a NaN constant, a guarded one as if its guard held
    (``sub.f32 %f10, %f0, %f6; @%p3 mul.f32 %f10, %f11, %f10`` of a NaN ``%f6``: either way a NaN, and ``neg.f32 %f5,
    %f10`` folded to ``0xFFFFFFFF``: H100 seed 264439)."""
    values = [_def_value(fn, fn.defs[i][1], CONSTANT_DEPTH, guarded=True)
              for i in bits(fn.reach_past_guards[k] & fn.reg_mask.get(reg, 0))]
    return bool(values) and all(v is not None and _is_nan(v) for v in values)


def _def_value(fn, m, depth, guarded=False):
    """The constant that instruction ``m`` of ``fn`` writes (:func:`_constant`), or None; ``guarded``: also for a
    guarded ``m``, the value it writes when its guard holds. Remembered per ``fn`` (a chain of :data:`CONSTANT_DEPTH`
    instructions of two operands each is asked for again and again)."""
    key = (m, depth, guarded)
    if key not in fn.values:
        fn.values[key] = _def_value_of(fn, m, depth, guarded)
    return fn.values[key]


def _def_value_of(fn, m, depth, guarded):
    ins = fn.flow.instrs[m]
    if ins.guard is not None and not guarded:
        return None
    values = []
    for o in ins.operands[1:]:
        if o.kind == "fimm" and o.bits == 32 or o.kind == "imm" and 0 <= o.value < 1 << 32:
            values.append(o.value)
        elif o.kind == "reg":
            values.append(_constant(fn, m, o.name, depth - 1))
        else:
            values.append(None)
    if ins.opcode == "mov" and len(values) == 1:
        return values[0]
    if ins.opcode == "selp" and len(values) == 3 and values[0] is not None and values[0] == values[1]:
        return values[0]                            # either way the same constant (H100 seed 241175)
    if ins.opcode in _SIGN_MASK and _float_type(ins) == "f32" and len(values) == 1 and values[0] is not None:
        v = values[0]                               # a NaN stays a NaN (its sign is ptxas's: folded_constants)
        if _is_nan(v) or "ftz" in ins.mods and v & 0x7F800000 == 0 and v & 0x7FFFFF:
            return 0x7FFFFFFF if _is_nan(v) else None
        return v ^ 0x80000000 if ins.opcode == "neg" else v & 0x7FFFFFFF
    if ins.opcode in _NAN_ARITH and _float_type(ins) == "f32" and any(v is not None and _is_nan(v) for v in values):
        return 0 if "sat" in ins.mods else 0x7FFFFFFF      # .sat flushes a NaN result to +0 (H100 seed 255743)
    if ins.opcode in _NAN_ARITH and _float_type(ins) == "f32" and values and None not in values:
        return _fold(ins, values)
    return None


def _fold(ins, values):
    """The f32 ``add``/``sub``/``mul``/``fma``/``mad`` ``ins`` of the constant ``values`` as ptxas folds it: the
    simulator's model of the instruction (the rounding its modifier names, ``rn`` without one; ``.ftz``, ``.sat``),
    except that ptxas's ``mul.ftz`` without a rounding modifier of an infinity and a subnormal is the infinity, not
    the NaN of ``0 * inf`` (:func:`ftz_folds`; with ``.rn`` it is the NaN: ``mul.rn.ftz.f32 %f5, %f10, 0fFF800000``
    of ``%f10 = 0f00000001`` is ``0x7FFFFFFF``, H100 seed 248663); None for another arity."""
    from warpsim.isa import fparith
    from warpsim.isa.rounding import RN, ROUNDING
    rnd = next((ROUNDING[m] for m in ins.mods if m in ROUNDING), RN)
    ftz, sat = "ftz" in ins.mods, "sat" in ins.mods
    if ins.opcode in ("fma", "mad") and len(values) == 3:
        return int(fparith.f32_fma(*values, rnd, ftz, sat))
    if len(values) != 2:
        return None
    if ftz and ins.opcode == "mul" and not any(m in ROUNDING for m in ins.mods) and \
            any(v & 0x7FFFFFFF == 0x7F800000 for v in values) and \
            any(v & 0x7F800000 == 0 and v & 0x7FFFFF for v in values):
        inf = 0x7F800000 | (values[0] ^ values[1]) & 0x80000000
        return 0x3F800000 if sat else inf
    model = {"add": fparith.f32_add, "sub": fparith.f32_sub, "mul": fparith.f32_mul}[ins.opcode]
    return int(model(*values, rnd, ftz, sat))


def _is_nan(bits):
    return bits & 0x7F800000 == 0x7F800000 and bits & 0x7FFFFF != 0


_CONSTANT_MOVE = re.compile(r"^(@!?U?P\w+\s+)?(?:MOV|MOV32I|IMAD\.MOV\.U32)\s+(R\d+),\s*(?:RZ,\s*RZ,\s*)?"
                            r"(-?0x[0-9a-f]+|-?\d+)$")
_STORE = re.compile(r"^(@!?U?P\w+\s+)?(?:STG|STS|STL|ST)(?:\.[\w]+)*\s.*,\s*(R\d+)$")
_DEST = re.compile(r"^(?:@!?U?P\w+\s+)?[A-Z][\w.]*\s+(R\d+)\b")


def folded_constants(module, sass):
    """``((line, bits), ...)``: the f32 ``neg``/``abs`` whose source is a NaN that ptxas knows at compile time
    (:func:`_constant`), with the bits ptxas folded them to, read from the SASS: the one move of an immediate among
    the line's own SASS, all moves (``IMAD.MOV.U32 R7, RZ, RZ, -0x1``: H100 seeds 236819, 237998); for a line with
    no SASS, a store of the
    value (through ``mov``s; a vector store's element) whose data register is last written, on the lines of the
    ``neg``'s block from the ``neg`` on (or of the store itself), by an unguarded
    move of an immediate (``MOV R22, 0x7fffffff``, ``IMAD.MOV.U32 R14, RZ, RZ, -0x1``). Where no store shows the
    value, none is recorded; a move under a guard counts for a store under the same guard (``@P0 IMAD.MOV.U32 R30,
    RZ, RZ, -0x1; ... @P0 STG.E.128 [R12.64+0x20], R28``: seed 222088), and so does one on the lines of the
    ``neg``'s block, where the ``neg`` is unguarded and its block's last write of the register (the guard is the one
    ptxas made of the block's branch: ``@P0 IMAD.MOV.U32 R23, RZ, RZ, -0x1``, seed 216976).

    ptxas folds the sign of such a NaN one way or the other by context, not by the PTX: ``add.f32 %f7, 0f7FFFFFFF,
    %f7; ... neg.f32 %f5, %f7`` was ``0xFFFFFFFF`` (H200 seed 208812: the NaN's sign flipped) and ``add.f32 %f0,
    0f7FFFFFFF, %f5; ... neg.f32 %f10, %f0`` was ``0x7FFFFFFF`` (H100 seed 215898: canonical); ``mul.f32 %f5, %f4,
    0f7FFFFFFF; neg.f32 %f7, %f5`` canonical (215197), ``mov.f32 %f9, 0f7FFFFFFF; neg.f32 %f9, %f9`` flipped
    (201589). The instrumented copy that hwcheck runs stores every register right after its write, so there every
    such value is read; in the PTX as written, those that reach a store.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k(.param .u64 p)\\n{\\n.reg .f32 %f<4>;\\n.reg .b64 %a;\\nld.param.u64 %a, [p];\\n"
    ...                  "mov.f32 %f1, 0f7FFFFFFF;\\nneg.f32 %f2, %f1;\\nmov.b32 %f3, %f2;\\nst.global.f32 [%a], %f3;\\n}")
    >>> folded_constants(m, [("IMAD.MOV.U32 R5, RZ, RZ, -0x1", 9), ("STG.E desc[UR4][R2.64], R5", 9)])
    ((7, 4294967295),)
    """
    order = [(text, line) for text, line in sass if _opcode(text) not in _SCAFFOLD]
    own = {line for _, line in order}
    out = {}
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            if ins.opcode not in _SIGN_MASK or ins.mods not in (("f32",), ("ftz", "f32")) or \
                    ins.operands[1].kind != "reg" or ins.operands[0].kind != "reg":
                continue
            here = [t for t, line in order if line == ins.token.line]
            moves = [t for t in here if _CONSTANT_MOVE.match(t)]
            if ins.token.line in own and (len(moves) != 1 or not all(_moves(t) for t in here)):
                continue
            fn = fn or _Function(f)
            value = _constant(fn, k, ins.operands[1].name)
            if value is None and _always_nan(fn, k, ins.operands[1].name):
                value = 0x7FFFFFFF
            if value is None or not _is_nan(value):
                continue
            if ins.token.line in own:           # its own line is the move of the folded bits (H100 seed 236819)
                out[ins.token.line] = int(_CONSTANT_MOVE.match(moves[0]).group(3), 0) & 0xFFFFFFFF
                continue
            bits_ = _stored_constant(fn, body, k, order)
            if bits_ is not None:
                out[ins.token.line] = bits_
    return tuple(sorted(out.items()))


def _stores_of(fn, body, k, order):
    """``(store line, SASS store match, index of the store in order, its data register for the value)`` for each PTX
    store of instruction ``k``'s value (through ``mov``s; a vector store's element) whose line has one SASS store."""
    for kst, st in enumerate(body):
        if st.opcode != "st" or len(st.operands) < 2:
            continue
        data = st.operands[1]
        regs = [data] if data.kind == "reg" else list(data.items) if data.kind == "vec" else []
        for element, reg in enumerate(regs):
            if reg.kind != "reg" or k not in _value_sources(fn, kst, reg.name):
                continue
            stores = [j for j, (text, line) in enumerate(order) if line == st.token.line and _STORE.match(text)]
            if len(stores) == 1:
                store = _STORE.match(order[stores[0]][0])
                yield st.token.line, store, stores[0], f"R{int(store.group(2)[1:]) + element}"


def _stored_constant(fn, body, k, order):
    """The immediate that the SASS moves into the data register of a store of instruction ``k``'s value
    (:func:`folded_constants`), or None."""
    block = fn.flow.blocks[fn.block_of[k]]
    lines = {body[i].token.line for i in range(k, block[1])}
    dest = body[k].operands[0].name
    last_write = body[k].guard is None and not any(dest in fn.writes[i] for i in range(k + 1, block[1]))
    for store_line, store, at_store, target in _stores_of(fn, body, k, order):
        # a move on the store's own line shows the value stored whichever definition reached it (H100 seed
        # 235309: the other one on a path ptxas knew was never taken)
        here = lines | {store_line}
        last = None
        for text, line in order[:at_store]:
            d = _DEST.match(text)
            if line in here and d is not None and d.group(1) == target:
                last, at = text, line
        m = _CONSTANT_MOVE.match(last) if last is not None else None
        if m is None or m.group(2) != target:
            continue
        # unguarded; under the store's own guard; or, in the block, under the guard ptxas made of its branch
        if m.group(1) in (None, store.group(1)) or at in lines and last_write:
            return int(m.group(3), 0) & 0xFFFFFFFF
    return None


def _value_sources(fn, k, reg, depth=8):
    """The instructions whose result ``reg`` may hold before instruction ``k``: its reaching definitions (a guarded
    write hides none before it: H100 seed 259716's ``neg`` reaches its store past an ``@%p1 fma`` of the same
    register), followed through unguarded ``mov``s of a register."""
    out = set()
    for i in bits(fn.reach_past_guards[k] & fn.reg_mask.get(reg, 0)):
        m = fn.defs[i][1]
        ins = fn.flow.instrs[m]
        if ins.opcode == "mov" and ins.guard is None and len(ins.operands) == 2 and ins.operands[1].kind == "reg" \
                and depth:
            out |= _value_sources(fn, m, ins.operands[1].name, depth - 1)
        else:
            out.add(m)
    return out


def _sass_ops(sass):
    """``{PTX line: [(opcode, SASS text), ...]}`` without the control-flow scaffolding."""
    ops = {}
    for text, line in sass:
        op = _opcode(text)
        if op not in _SCAFFOLD:
            ops.setdefault(line, []).append((op, text))
    return ops


def _bodies(module):
    """``(function, [instruction, ...])`` of every function with a body."""
    return [(f, [i for i in f.body if isinstance(i, Instruction)]) for f in module.functions.values()
            if not f.declared_only]


def sign_operands(module, sass):
    """``((line, operand), ...)``: the ``selp.f32`` operands (1 or 2) that read a ``neg.f32``/``abs.f32`` which ptxas
    folded into the ``selp``'s ``FSEL`` as an operand modifier, so that the ``selp`` moves the sign-bit operation of
    the ``neg``'s source, NaN payload kept, whatever the ``neg``'s own register holds (H100, seed 200517 of the
    200000 chunk: ``abs.f32 %f9, %f4`` is ``FADD R10, -RZ, |R30|``, canonical, but ``selp.f32 %f1, %f1, %f9, %p1`` is
    ``FSEL R30, R14, |R30|, P2``, ``0x7FC00000`` where the canonical NaN would be ``0x7FFFFFFF``).

    A match: the ``selp``'s line has one ``FSEL`` and nothing else; exactly one of its operands has a single reaching
    definition that is a ``neg``/``abs`` of a register; exactly one ``FSEL`` operand is a register with that modifier
    (``-R`` for ``neg``, ``|R|`` for ``abs``; a negative constant is not one: ``FSEL R29, R15, -0.1039, !P2`` reads
    the ``neg`` computed canonically in ``R15``, H100 seed 271646). ptxas keeps the source's value as the ``neg`` read
    it (in 200517 ``%f4`` is written again before the ``selp``), so the sign-bit operation is made where the ``neg``
    runs.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n.reg .pred %p0;\\n"
    ...                  "abs.f32 %f2, %f1;\\nselp.f32 %f3, %f0, %f2, %p0;\\n}")
    >>> sign_operands(m, [("FADD R10, -RZ, |R30|", 5), ("FSEL R3, R14, |R30|, P2", 6)])
    ((6, 2),)
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n.reg .pred %p0;\\n"
    ...                  "neg.f32 %f2, %f1;\\nselp.f32 %f3, %f2, %f0, %p0;\\n}")
    >>> sign_operands(m, [("FADD R15, -R21, -RZ", 5), ("FSEL R29, R15, -0.10390314459800720215, !P2", 6)])
    ()
    """
    ops, found = _sass_ops(sass), []
    marks = {"neg": lambda o: o.startswith("-R"), "abs": lambda o: o.startswith("|R")}
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            here = ops.get(ins.token.line, [])
            if ins.opcode != "selp" or ins.mods != ("f32",) or [op for op, _ in here] != ["FSEL"]:
                continue
            fn = fn or _Function(f)
            reads = []
            for pos in (1, 2):
                o = ins.operands[pos]
                m = fn.single_def(k, o.name) if o.kind == "reg" else None
                src = fn.flow.instrs[m] if m is not None else None
                if src is not None and src.opcode in _SIGN_MASK and src.mods == ("f32",) and \
                        src.operands[1].kind == "reg":
                    reads.append((pos, src.opcode))
            if len(reads) != 1:
                continue
            fsel = _selected(here[0][1])
            if sum(marks[reads[0][1]](o) for o in fsel) == 1:
                found.append((ins.token.line, reads[0][0]))
    return tuple(found)


def saturated_ones(module, sass):
    """The lines of ``add.sat.f32``/``sub.sat.f32`` that ptxas folded to the constant ``1.0``: no SASS of their own
    (or the move of ``1.0`` beside a neighbour's unsaturated instruction: :func:`_moves_one`),
    a value ptxas knows is never negative (its single reaching definition an unguarded square ``mul.f32 %f4, %f6,
    %f6``, an ``abs.f32``, or a ``.sat`` result: H100 seed 238141) plus an immediate of at least 1 (or minus one
    of at most -1): ``x*x + c >= 1``
    saturates to 1 -- also where ``x`` is NaN, where the PTX's ``.sat`` gives ``+0``. H100 seeds 200527 and 201039
    (``mul.f32 %f4, %f6, %f6; add.sat.f32 %f7, 0f3F800800, %f4`` stored ``0x3F800000`` from a ``MOV R29,
    0x3f800000``); H200 seeds 204630 and 208511 (``abs`` of a product, ``+ 0f3F801800``, ``+ 0f3FC00000``) and
    207312 (``sub.sat.f32 %f8, %f8, %f10`` of a square and ``%f10 = -3``: the immediate from a ``mov``).

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n"
    ...                  "mul.f32 %f2, %f1, %f1;\\nadd.sat.f32 %f3, 0f3F800800, %f2;\\n}")
    >>> saturated_ones(m, [("FMUL R1, R2, R2", 4), ("MOV R29, 0x3f800000", 0)])
    (5,)
    """
    ops, found = _sass_ops(sass), []
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            if ins.opcode not in ("add", "sub") or "sat" not in ins.mods or _float_type(ins) != "f32" or \
                    ins.guard is not None or ins.token.line in ops and not _moves_one(ops[ins.token.line]):
                continue
            fn = fn or _Function(f)
            a, b = ins.operands[1:3]
            for x, c in ((a, b), (b, a)) if ins.opcode == "add" else ((a, b),):
                if c.kind == "fimm":
                    values = {c.value} if c.bits == 32 else None
                else:                                  # every value that may reach (H200 seed 217174: 1.0 or 1.0002)
                    values = _constants(fn, k, c.name) if c.kind == "reg" else None
                m = fn.single_def(k, x.name) if x.kind == "reg" else None
                src = fn.flow.instrs[m] if m is not None else None
                if values is None or src is None or _float_type(src) != "f32" or src.guard is not None or \
                        not (_square(src) or src.opcode == "abs" or "sat" in src.mods):
                    continue
                if all(_at_least_one(v ^ 0x80000000 if ins.opcode == "sub" else v) for v in values):
                    found.append(ins.token.line)
                    break
    return tuple(found)


def _moves_one(line_ops):
    """Whether a line's SASS (:func:`_sass_ops`) moves ``1.0`` into a register and computes nothing saturated: the
    folded ``add.sat`` beside a neighbour's instruction ptxas put on its line (``MOV R4, 0x3f800000; FADD R11, |R11|,
    -RZ``, the ``abs`` of the line before: H100 seed 256393).

    >>> _moves_one([("MOV", "MOV R4, 0x3f800000"), ("FADD", "FADD R11, |R11|, -RZ")])
    True
    >>> _moves_one([("MOV", "MOV R4, 0x3f800000"), ("FADD", "FADD.SAT R9, R11, R4")])
    False
    """
    moves = [_CONSTANT_MOVE.match(t) for _, t in line_ops]
    return any(m is not None and int(m.group(3), 0) & 0xFFFFFFFF == 0x3F800000 for m in moves) and \
        not any(".SAT" in t for _, t in line_ops)


def unit_products(module, sass, ones=()):
    """``((line, operand), ...)``: the ``mul.f32`` (no ``.ftz``/``.sat``, unguarded) with no SASS of their own but
    moves, one of whose operands ptxas knows is ``1.0`` -- an immediate, a ``mov`` of one (:func:`_constant`), or an
    ``add.sat`` of :func:`saturated_ones` (the lines ``ones``): ptxas folds ``x * 1.0`` to ``x``, so the product is
    the other operand bit for bit, a NaN's payload kept where ``FMUL`` gives the canonical NaN (H200 seed 217915:
    ``add.sat.f32 %f4, %f10, %f4`` folded to ``1.0``, then ``mul.f32 %f0, %f2, %f4`` is ``IMAD.MOV.U32 R66, RZ, RZ,
    R58``, ``%f2``'s ``0x7FC00000`` stored). ``operand``: the one (1 or 2) the product moves.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\nmul.f32 %f2, %f1, 0f3F800000;\\n}")
    >>> unit_products(m, []), unit_products(m, [("FMUL R1, R2, 1", 4)])
    (((4, 1),), ())
    """
    ops, found, ones = _sass_ops(sass), [], set(ones)
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            if ins.opcode != "mul" or ins.mods != ("f32",) or ins.guard is not None or \
                    any(not _moves(text) for _, text in ops.get(ins.token.line, ())):
                continue
            fn = fn or _Function(f)
            for pos in (2, 1):
                o = ins.operands[3 - pos]                   # the operand that is 1.0; the other is moved
                if o.kind == "fimm":
                    one = o.bits == 32 and o.value == 0x3F800000
                elif o.kind == "reg":
                    m = fn.single_def(k, o.name)
                    one = _constant(fn, k, o.name) == 0x3F800000 or \
                        m is not None and (fn.flow.instrs[m].token.line in ones or _always_one(fn, m))
                else:
                    one = False
                if one and ins.operands[pos].kind == "reg":
                    found.append((ins.token.line, pos))
                    break
    return tuple(found)


def _always_one(fn, m):
    """Whether instruction ``m`` is an unguarded ``add.sat.f32``/``sub.sat.f32`` of a ``.sat`` result (in [0, 1], never
    NaN) or of a square (``mul.f32 x, y, y``: never negative to ptxas, which sets NaN aside) and a constant of at
    least 1 (``sub``: at most -1): ``1.0`` whatever the inputs, which ptxas knows (H100 seed 238141: ``sub.rm.sat.f32
    %f5, %f11, %f11; add.sat.f32 %f0, %f5, 0f3F800800`` computed for a store of its own, ``mul.f32 %f1, %f0, %f4`` a
    move of ``%f4``; seed 252720: ``mul.f32 %f4, %f11, %f11; add.sat.f32 %f4, %f4, 0f3F800800`` an ``FADD.SAT`` for
    hwcheck's copy's record of ``%f4``, and ``mul.f32 %f2, %f4, %f5`` no SASS, ``%f5``'s NaN kept)."""
    ins = fn.flow.instrs[m]
    if ins.opcode not in ("add", "sub") or "sat" not in ins.mods or _float_type(ins) != "f32" or ins.guard is not None:
        return False
    a, b = ins.operands[1:3]
    for x, c in ((a, b), (b, a)) if ins.opcode == "add" else ((a, b),):
        values = {c.value} if c.kind == "fimm" and c.bits == 32 else _constants(fn, m, c.name) if c.kind == "reg" \
            else None
        d = fn.single_def(m, x.name) if x.kind == "reg" else None
        src = fn.flow.instrs[d] if d is not None else None
        if values and src is not None and src.guard is None and _float_type(src) == "f32" and \
                ("sat" in src.mods or _square(src)) and \
                all(_at_least_one(v ^ 0x80000000 if ins.opcode == "sub" else v) for v in values):
            return True
    return False


def _square(ins):
    """Whether ``ins`` is a ``mul`` of one register by itself (``mul.f32 %f4, %f11, %f11``)."""
    if ins.opcode != "mul" or len(ins.operands) != 3:
        return False
    a, b = ins.operands[1:3]
    return a.kind == b.kind == "reg" and a.name == b.name


_TWO = 0x40000000


def negated_differences(module, sass=()):
    """The lines of the unmodified ``sub.f32 d, x, m`` whose ``m`` is the unmodified ``mul.f32 m, x, 2.0`` of the
    same ``x`` (either operand order; ``x`` not written between): ptxas simplifies ``x - 2x`` to ``-x`` (``FADD R15,
    -R15, -RZ``), so an infinite ``x`` gives the opposite infinity where the PTX gives NaN (``inf - inf``), and a
    NaN the canonical NaN (H100 seeds 215947, 229697, 232673, in straight code and in an unrolled loop). The
    negation may sit on the ``sub``'s line, a later loop line, a store's line; but where the ``sub``'s own SASS is
    an ``FADD`` of two registers, ptxas computed the difference (``FADD R21, R0, -R23``, ``2x`` kept in ``R23``:
    H100 seed 259307, where ``-x`` would give ``-0`` for ``x = +0``) and the PTX's rounding stands.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\nmul.f32 %f1, %f0, 0f40000000;\\nsub.f32 %f2, %f0, %f1;\\n"
    ...                  "mul.rn.f32 %f1, %f0, 0f40000000;\\nsub.f32 %f3, %f0, %f1;\\n}")
    >>> negated_differences(m), negated_differences(m, [("FADD R21, R0, -R23", 5)])
    ((5,), ())
    """
    computed = {line for text, line in sass if _opcode(text) == "FADD" and _two_registers(text)}
    return tuple(line for line in _doubled_differences(module, 2) if line not in computed)


def _two_registers(fadd):
    """Whether an ``FADD`` adds two registers, neither ``RZ`` (``FADD R21, R0, -R23``; not ``FADD R15, -R15, -RZ``).

    >>> _two_registers("FADD R21, R0, -R23"), _two_registers("FADD R15, -R15, -RZ")
    (True, False)
    """
    ops = [o.strip().lstrip("-|").rstrip("|") for o in fadd.split(",")[1:3]]
    return len(ops) == 2 and all(re.fullmatch(r"R\d+", o) for o in ops)


def kept_differences(module, sass):
    """The lines of the unmodified ``sub.f32 d, m, x`` whose ``m`` is the unmodified ``mul.f32 m, x, 2.0`` of the
    same ``x`` (as :func:`negated_differences`, the operands the other way round) and which have no SASS of their own:
    there ptxas simplified ``2x - x`` to ``x`` (H100 seeds 242987, 246851: ``d``'s register is ``x``'s), so ``x = -0``
    gives ``-0`` where the PTX gives ``+0`` (``-0 - -0``), and an infinite ``x`` the infinity where the PTX gives
    NaN. Where ``2x`` is kept for another reader (hwcheck's instrumented copy stores it) the ``sub`` is an ``FADD``
    that computes: 246851's copy, ``FADD R6, R90, -R66``, NaN for an infinite ``x``.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\nmul.f32 %f1, %f0, 0f40000000;\\nsub.f32 %f2, %f1, %f0;\\n"
    ...                  "sub.f32 %f3, %f0, %f1;\\n}")
    >>> kept_differences(m, []), negated_differences(m), kept_differences(m, [("FADD R6, R90, -R66", 5)])
    ((5,), (6,), ())
    """
    own = {line for text, line in sass if _opcode(text) not in _SCAFFOLD}
    return tuple(line for line in _doubled_differences(module, 1) if line not in own)


def known_predicates(module, sass):
    """The lines of an unguarded ``setp.{ge,gt}.f32 p, x, c`` (or ``setp.{le,lt}.f32 p, c, x``) with no SASS of their
    own, ``x`` a square (``mul.f32 x, y, y``) or a sum of squares and constants with no sign (:func:`_square_sum`) and
    ``c`` an immediate or a constant ptxas knows, below (``gt``) or at most (``ge``) zero: ptxas
    knows a square is never negative, setting NaN aside, so it decides the predicate true and drops the comparison
    (H100 seed 223738: ``setp.ge.f32 %p3, %f4, 0fBF400000`` of ``%f4 = %f11 * %f11``, the branch on it always taken
    and ``selp.f32 %f8, 0fBC2130D9, %f10, %p3`` a constant), where the PTX's ordered comparison of a NaN is false.
    They run as a ``setp`` that is true.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n.reg .pred %p<3>;\\nmul.f32 %f1, %f0, %f0;\\n"
    ...                  "setp.ge.f32 %p1, %f1, 0fBF400000;\\nsetp.gt.f32 %p2, %f1, 0f00000000;\\n}")
    >>> known_predicates(m, []), known_predicates(m, [("FSETP.GE.AND P0, PT, R1, -0.75, PT", 6)])
    ((6,), ())
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n.reg .pred %p<3>;\\nmul.f32 %f1, %f0, %f0;\\n"
    ...                  "add.f32 %f2, %f1, 0f40000000;\\nmov.f32 %f3, 0fC0000000;\\nsetp.le.f32 %p1, %f3, %f2;\\n"
    ...                  "add.f32 %f2, %f1, 0fC0000000;\\nsetp.le.f32 %p2, %f3, %f2;\\n}")
    >>> known_predicates(m, [])
    (8,)
    """
    own = {line for text, line in sass if _opcode(text) not in _SCAFFOLD}
    found = []
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            if ins.opcode != "setp" or ins.guard is not None or ins.token.line in own or _float_type(ins) != "f32" or \
                    ins.operands[0].pair is not None or len(ins.operands) != 3:
                continue
            cmp = next((m for m in ins.mods if m in ("ge", "gt", "le", "lt")), None)
            if cmp is None:
                continue
            x, c = ins.operands[1:3] if cmp in ("ge", "gt") else ins.operands[2:0:-1]
            if x.kind != "reg" or c.kind not in ("fimm", "reg") or c.kind == "fimm" and c.bits != 32:
                continue
            fn = fn or _Function(f)
            value = c.value if c.kind == "fimm" else _constant(fn, k, c.name)
            if value is None:
                continue
            below = value == 0 or value >> 31 if cmp in ("ge", "le") else value >> 31 and value != 0x80000000
            if below and value & 0x7FFFFFFF <= 0x7F800000 and _square_sum(fn, k, x.name):     # a NaN: never true
                found.append(ins.token.line)
    return tuple(found)


def _square_sum(fn, k, reg, depth=2):
    """Whether ptxas knows ``reg`` is never negative before instruction ``k``, NaN set aside: its one reaching
    definition an unguarded f32 square (``mul.f32 x, y, y``), or an unguarded unmodified ``add.f32`` of such values
    and constants with no sign (``add.f32 %f2, %f11, %f3`` of a square and the folded ``3.419``: H100 seed 229895,
    ``setp.le.f32 %p1, %f6, %f2`` of a negative constant ``%f6`` decided true, ``@P1 MOV R14, 0x1``)."""
    d = fn.single_def(k, reg)
    src = fn.flow.instrs[d] if d is not None else None
    if src is None or src.guard is not None or _float_type(src) != "f32":
        return False
    if _square(src):
        return True
    if not depth or src.opcode != "add" or src.mods != ("f32",):
        return False
    for o in src.operands[1:3]:
        value = o.value if o.kind == "fimm" and o.bits == 32 else _constant(fn, d, o.name) if o.kind == "reg" else None
        if value is not None and not value >> 31 and value <= 0x7F800000:
            continue
        if o.kind != "reg" or not _square_sum(fn, d, o.name, depth - 1):
            return False
    return True


def _doubled_differences(module, doubled):
    """The lines of the unmodified ``sub.f32`` whose operand ``doubled`` (1 or 2) is the unmodified ``mul.f32`` of
    its other operand ``x`` by 2.0 (either order in the ``mul``; 2.0 an immediate or a known constant; ``x`` not
    written between)."""
    out = []
    plain = 3 - doubled
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            if not _unmodified(ins, ("sub",)) or ins.mods != ("f32",) or \
                    ins.operands[1].kind != "reg" or ins.operands[2].kind != "reg":
                continue
            fn = fn or _Function(f)
            m = fn.single_def(k, ins.operands[doubled].name)
            mul = fn.flow.instrs[m] if m is not None else None
            if mul is None or mul.opcode != "mul" or mul.mods != ("f32",) or mul.guard is not None:
                continue
            ops = mul.operands[1:3]
            # 2.0 an immediate or a register ptxas knows holds it (``mov.f32 %f10, 0f40000000``: H100 seed 261269)
            two = [o.kind == "fimm" and o.bits == 32 and o.value == _TWO or
                   o.kind == "reg" and _constant(fn, m, o.name) == _TWO for o in ops]
            if sum(two) != 1:
                continue
            x = ops[two.index(False)]
            mask = fn.reg_mask.get(x.name, 0) if x.kind == "reg" else 0
            if x.kind == "reg" and x.name == ins.operands[plain].name and fn.reach[m] & mask == fn.reach[k] & mask:
                out.append(ins.token.line)
    return tuple(sorted(out))


def ftz_folds(module, sass):
    """``((line, bits), ...)``: the f32 ``add``/``sub``/``mul``/``fma`` with ``.ftz`` of constants alone (immediates,
    registers :func:`_constant` knows) with no SASS of their own, which ptxas folded (:func:`_fold`): as ``.ftz``
    computes, operands and result flushed (H100 seeds 237271, 237763, 239348, 239530, 239630, 239748, 240332, 240540,
    240838, 240850: ``0`` where the product is subnormal or an operand is), except that an infinity times a
    subnormal is the infinity: ``mul.ftz.f32 %f3, %f10, 0f7F800000`` of ``%f10 = 0f00000001`` is ``MOV R10,
    0x7f800000`` (H200 seeds 226164, 228041), where ``.ftz``'s ``0 * inf`` is NaN -- but not with ``.rn`` written
    (``mul.rn.ftz.f32`` of the same is ``0x7FFFFFFF``: H100 seed 248663). They run as a move of those bits.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\nmov.f32 %f1, 0f00000001;\\n"
    ...                  "mul.ftz.f32 %f2, %f1, 0f7F800000;\\nmul.ftz.f32 %f3, %f1, 0f40000000;\\n}")
    >>> ftz_folds(m, [])
    ((5, 2139095040), (6, 0))
    """
    own, out = {line for text, line in sass if _opcode(text) not in _SCAFFOLD}, []
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            if ins.opcode not in ("add", "sub", "mul", "fma") or "ftz" not in ins.mods or \
                    _float_type(ins) != "f32" or ins.token.line in own:
                continue
            fn = fn or _Function(f)
            values = [o.value if o.kind == "fimm" and o.bits == 32 else
                      _constant(fn, k, o.name) if o.kind == "reg" else None for o in ins.operands[1:]]
            if None not in values:
                folded = _fold(ins, values)
                if folded is not None:
                    out.append((ins.token.line, folded))
    return tuple(out)


def ftz_dropped(module, sass):
    """The lines of f32 ``add``/``sub``/``mul``/``fma`` with ``.ftz`` whose SASS has float arithmetic, none of it
    ``.FTZ``: ptxas compiled them without flushing (``mul.ftz.f32 %f9, %f10, 0f7F800000`` is ``FMUL R10, R48, +INF``,
    so a subnormal times infinity is infinity, not the NaN of ``0 * inf``: seeds 203522, 206426, 206733, 210439 of
    the H200's chunks, each a ``mul.ftz`` by an immediate infinity or subnormal). They run without ``.ftz``. (Those
    of constants alone that ptxas folded: :func:`ftz_folds`.)

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<4>;\\n"
    ...                  "mul.ftz.f32 %f2, %f1, 0f7F800000;\\nmul.ftz.f32 %f3, %f1, %f2;\\n}")
    >>> ftz_dropped(m, [("FMUL R10, R48, +INF", 4), ("FMUL.FTZ R11, R48, R10", 5)])
    (4,)
    """
    arith = {}
    for text, line in sass:
        op = _opcode(text)
        if op in ("FADD", "FMUL", "FFMA"):
            arith.setdefault(line, []).append(".FTZ" in text.split()[1 if text.startswith("@") else 0])
    return tuple(sorted(ins.token.line for _, body in _bodies(module) for ins in body
                        if ins.opcode in ("add", "sub", "mul", "fma") and "ftz" in ins.mods
                        and _float_type(ins) == "f32" and arith.get(ins.token.line) and not any(arith[ins.token.line])))


def dropped_abs(module, sass, filename="<ptx>"):
    """``((line, computed), ...)``: the ``abs.f32``/``abs.ftz.f32`` whose absolute value ptxas dropped, knowing the
    operand is never negative -- a ``.sat`` result, a constant with no sign -- and counting ``-0`` as not negative. So
    a ``-0`` stays ``-0`` where the PTX gives ``+0``. ``computed`` 1: the line's SASS is one ``FADD`` of the register
    with no ``|..|`` and ``-RZ``, which canonicalises a NaN and with ``.FTZ`` flushes (``abs.ftz.f32 %f8, %f10`` of
    ``%f10``, the constant ``-0`` or a loop's ``mul.sat`` result, is ``FADD.FTZ R0, R7, -RZ``: H100 seed 267191,
    ``0x80000000`` stored); it runs as ``add.rn.f32 d, a, -0`` (``.ftz`` as the ``abs`` says). ``computed`` 0: the line
    has no SASS and every definition of the operand that may reach it (a guarded one as if its guard held) is such a
    value, one at least a ``.sat`` result (:func:`_never_negative`): ``abs.f32`` of ``-0`` merged with an ``@%p1
    mul.sat`` is ``FSEL R12, R0, -RZ, P0`` and nothing on the ``abs``'s line (ptxas 13.0, sm_90); it runs as a copy
    of the operand's bits. Also ``computed`` 0: no SASS on the line and every reader of its result that the SASS shows
    reads the operand's register with no ``|..|`` (:func:`_abs_readers`). Where some readers read it so and some read
    ``|R|`` (H100 seed 275052's ``add`` and ``sub``), ``ContractionError`` naming ``filename`` and the line: the
    register holds one value in warpsim, two on the GPU.

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .f32 %f<6>;\\n.reg .pred %p1;\\nabs.ftz.f32 %f2, %f1;\\n"
    ...                  "abs.f32 %f3, %f1;\\nmov.f32 %f4, 0f80000000;\\n@%p1 mul.sat.f32 %f4, %f1, %f1;\\n"
    ...                  "abs.f32 %f5, %f4;\\n}")
    >>> dropped_abs(m, [("FADD.FTZ R0, R7, -RZ", 5), ("FADD R3, |R7|, -RZ", 6)])
    ((5, 1), (9, 0))
    """
    ops = _sass_ops(sass)
    out = []
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            if ins.opcode != "abs" or ins.mods not in (("f32",), ("ftz", "f32")) or ins.operands[1].kind != "reg":
                continue
            here = ops.get(ins.token.line, [])
            if len(here) == 1 and here[0][0] == "FADD" and _drops_abs(here[0][1]):
                out.append((ins.token.line, 1))
            elif not here:
                fn = fn or _Function(f)
                raw, kept = _abs_readers(fn, k, ins, sass)
                if raw and kept:
                    raise ContractionError(f"{filename}:{ins.token.line}: ptxas dropped this abs for some readers of "
                                           "its result (a -0 kept) and not for others; warpsim cannot run both (run "
                                           "with --ptxas none)")
                if raw or _never_negative(fn, k, ins.operands[1].name) and not _abs_on_a_reader(fn, k, ins, sass):
                    out.append((ins.token.line, 0))
    return tuple(sorted(out))


def _abs_readers(fn, k, ins, sass):
    """``(raw, kept)`` for an ``abs`` at ``k`` with no SASS of its own whose operand's one reaching definition,
    unguarded, is one unguarded SASS instruction writing ``Rx`` on its line: whether a reader of the ``abs``'s result
    reads ``Rx`` itself (``Rx`` or ``-Rx`` in a SASS instruction with no ``|Rx|``, after it in the SASS, nothing
    writing ``Rx`` between: the ``abs`` dropped for it), and whether one reads ``|Rx|`` (kept, as an operand
    modifier); ``(False, False)`` where the SASS does not show it that way. A reader that reads the operand too, or
    squares the result, tells nothing by a raw ``Rx``. ptxas's value ranges round: ``mul.f32 %f4, %f6, 0f00000001; abs.f32 %f4, %f4`` of a ``%f6`` in
    ``[-0.0565, 0.9435]`` (a ``.sat`` result plus a constant) is ``FMUL R6, R15, 1.4e-45``, never below ``-0``, and
    ``add.f32 %f8, %f4, %f3`` reads it as ``FADD R8, R21, R6``, the store as ``STG ..., R6``, but ``sub.f32 %f5, %f1,
    %f4`` as ``FADD R5, -|R6|, R19`` (H100 seed 275052: ``-0`` where the PTX gives ``+0``)."""
    src, dst = ins.operands[1].name, ins.operands[0].name
    m = fn.single_def(k, src)
    if m is None or fn.flow.instrs[m].guard is not None:
        return False, False
    made = [i for i, (text, line) in enumerate(sass) if line == fn.flow.instrs[m].token.line and not _moves(text)]
    if len(made) != 1 or sass[made[0]][0].startswith("@"):
        return False, False
    rx = _sass_operands(sass[made[0]][0])[:1]
    operand = next((d for d in fn._defs_at[m] if fn.defs[d][0] == src), None)
    raw = kept = False
    for j, reader, sources in _result_readers(fn, k, dst) if rx else ():
        # a reader of the operand itself as well reads Rx for it (`mul.sat.f32 %f10, %f0, %f3` of `%f3 = |%f0|` is
        # FMUL.SAT R9, R11, |R11|: H200 seed 204630): only its |Rx| tells
        # and a square of the result, `mul.f32 %f11, %f9, %f9` of `%f9 = |%f11|` as FMUL R12, R0, R0 (H100 seed
        # 274073, whose store reads |R0|), is the same either way: only a reader where the two can differ tells
        both = operand is not None and fn.reach[j] >> operand & 1 and any(_reads(o, src) for o in sources) or \
            reader.opcode in ("mul", "fma", "mad") and len(sources) > 1 and _reads(sources[0], dst) and \
            _reads(sources[1], dst)
        for i, (text, line) in enumerate(sass):
            if line != reader.token.line or _moves(text):
                continue
            read = _sass_operands(text)[1:]
            if any(f"|{rx[0]}|" in o for o in read):     # its raw Rx beside it is another operand's (H100 seed
                kept = True                               # 275161: FFMA.FTZ R21, R19, R12, |R12|, a fused product)
                continue
            raw = raw or (not both and i > made[0] and any(o in (rx[0], "-" + rx[0]) for o in read) and
                          not any(_sass_operands(t)[:1] == rx for t, _ in sass[made[0] + 1:i]))
    return raw, kept


def _abs_on_a_reader(fn, k, ins, sass):
    """Whether ptxas computed the ``abs`` at ``k`` (no SASS of its own) on the line of a reader of its result: an
    ``FADD Rd, |Rx|, -RZ`` there of a register ``Rx`` that a definition of the operand writes on its line. ``abs.f32
    %f1, %f10`` of a ``sub.sat`` result (``@!P0 FFMA.SAT R13, RZ, R14, -R0``) or of a value from before a branch is
    ``FADD R29, |R13|, -RZ`` on its store's line (H100 seed 277517: ``+0`` stored where a dropped ``abs`` keeps
    ``-0``)."""
    src, dst = ins.operands[1].name, ins.operands[0].name
    lines = {fn.flow.instrs[fn.defs[d][1]].token.line for d in bits(fn.reach_past_guards[k] & fn.reg_mask.get(src, 0))}
    written = {_sass_operands(text)[0] for text, line in sass if line in lines and not _moves(text)
               and _sass_operands(text)}
    readers = {r.token.line for _, r, _ in _result_readers(fn, k, dst)}
    for text, line in sass:
        if line in readers and _opcode(text) == "FADD":
            read = _sass_operands(text)[1:]
            if len(read) == 2 and read[1] == "-RZ" and any(read[0] == f"|{r}|" for r in written):
                return True
    return False


def _result_readers(fn, k, dst):
    """``(j, reader, its source operands)`` for each instruction of ``fn`` that reads ``dst`` as instruction ``k``
    wrote it (``k``'s definition reaches it)."""
    mine = next(d for d in fn._defs_at[k] if fn.defs[d][0] == dst)
    for j, reader in enumerate(fn.flow.instrs):
        sources = reader.operands[1:] if _dests(reader) else reader.operands
        if j != k and fn.reach[j] >> mine & 1 and any(_reads(o, dst) for o in sources):
            yield j, reader, sources


def _reads(operand, reg):
    """Whether an operand is ``reg`` or holds it (a vector's element)."""
    return operand.kind == "reg" and operand.name == reg or any(_reads(o, reg) for o in getattr(operand, "items", ()))


def _sass_operands(text):
    """The operands of one SASS instruction, its guard and opcode dropped.

    >>> _sass_operands("@P0 FADD R8, R21, -|R6| ;")
    ['R8', 'R21', '-|R6|']
    """
    words = text.split(None, 2 if text.startswith("@") else 1)
    rest = words[-1] if len(words) > (2 if text.startswith("@") else 1) else ""
    return [o.strip() for o in rest.rstrip(" ;").split(",") if o.strip()]


def _never_negative(fn, k, reg):
    """Whether ptxas knows ``reg`` is never negative before instruction ``k`` (``-0`` allowed) but not its value:
    every definition that may reach it, a guarded one as if its guard held, is an f32 ``.sat`` result or a constant
    with no sign bit but ``-0``, no NaN, and one at least is a ``.sat`` result. (Of a known constant ptxas folds the
    ``abs`` as IEEE says: ``abs.f32 %f1, %f10`` of ``%f10 = -0`` is ``+0``, H100 seed 273222.)"""
    found, saturated = bits(fn.reach_past_guards[k] & fn.reg_mask.get(reg, 0)), False
    for i in found:
        m = fn.defs[i][1]
        ins = fn.flow.instrs[m]
        if "sat" in ins.mods and _float_type(ins) == "f32":
            saturated = True
            continue
        v = _def_value(fn, m, CONSTANT_DEPTH, guarded=True)
        if v is None or _is_nan(v) or v & 0x80000000 and v != 0x80000000:
            return False
    return saturated


def _drops_abs(fadd):
    """Whether an ``FADD`` is a register with no modifier plus ``-RZ``, either way round.

    >>> _drops_abs("FADD.FTZ R0, R7, -RZ"), _drops_abs("FADD R0, -RZ, R7"), _drops_abs("FADD R0, |R7|, -RZ")
    (True, True, False)
    """
    ops = sorted(o.strip() for o in fadd.split(";")[0].split(",")[1:3])
    return len(ops) == 2 and ops[0] == "-RZ" and re.fullmatch(r"R\d+", ops[1]) is not None


def double_negations(module, sass):
    """The lines of a ``neg.f32``/``neg.f16x2`` of a ``neg`` of the same type, with no SASS of its own but moves: ptxas
    folds ``-(-x)`` to ``x``, bit for bit, where the two negations one by one would give the canonical NaN
    (``neg.f16x2 %h1, %h2; ...; neg.f16x2 %h4, %h1`` stores ``%h2``'s ``0x7E00``: H200 seed 204946; the inner ``neg``
    computed for a reader of its own, ``HADD2 R14, -R18, -RZ.H0_H0``, the outer a copy, ``MOV R10, R18``: seed
    219948); a guarded outer ``neg`` whose line is one ``FSEL`` of registers with no modifier, the merge of the
    copy with the register's old value (``@%p2 neg.f32 %f10, %f2`` of ``neg.f32 %f2, %f2`` is ``FSEL R34, R42, R34,
    !P2``: H100 seed 238500). The line runs as a copy of the inner ``neg``'s source as that ``neg`` read it (under
    the outer's guard) -- unless a store of its
    value stores a register last written by a computed negation, wherever ptxas put it (``HADD2 R6, -R14,
    -RZ.H0_H0`` on another line: the two negations one by one, H200 seed 222071, H100 seed 233624).

    >>> from warpsim.ptx.syntax import parse_module
    >>> m = parse_module(".entry k()\\n{\\n.reg .b32 %h<4>;\\n"
    ...                  "neg.f16x2 %h1, %h2;\\nneg.f16x2 %h3, %h1;\\n}")
    >>> double_negations(m, []), double_negations(m, [("HADD2 R1, -R2, -RZ", 4), ("MOV R3, R2", 5)])
    ((5,), (5,))
    >>> double_negations(m, [("HADD2 R1, -R2, -RZ", 4), ("HADD2 R3, -R1, -RZ", 5)])
    ()
    """
    ops, found = _sass_ops(sass), []
    order = [(text, line) for text, line in sass if _opcode(text) not in _SCAFFOLD]
    for f, body in _bodies(module):
        fn = None
        for k, ins in enumerate(body):
            texts = [text for _, text in ops.get(ins.token.line, ())]
            if ins.opcode != "neg" or ins.mods not in (("f32",), ("f16x2",)) or ins.operands[1].kind != "reg":
                continue
            if ins.guard is None and any(not _moves(text) for text in texts):
                continue
            # guarded: the line one FSEL of registers with no modifier (H100 seed 238500: FSEL R34, R42, R34, !P2)
            if ins.guard is not None and (not _one_fsel(texts) or any(not _moves(t) for t in texts if
                                                                      _opcode(t) != "FSEL") or
                                          any(_modified(t, "neg") or _modified(t, "abs") or "QNAN" in t or "INF" in t
                                              for t in texts if _opcode(t) == "FSEL")):
                continue
            fn = fn or _Function(f)
            m = fn.single_def(k, ins.operands[1].name)
            inner = fn.flow.instrs[m] if m is not None else None
            if inner is not None and inner.opcode == "neg" and inner.mods == ins.mods and inner.guard is None and \
                    inner.operands[1].kind == "reg" and \
                    not any(_NEGATION.match(t) for t in _store_writers(fn, body, k, order)):
                found.append(ins.token.line)
    return tuple(found)


_NEGATION = re.compile(r"^(@!?U?P\w+\s+)?(?:HADD2|FADD)(?:\.\w+)*\s+R\d+,\s*-R\d+(?:\.\w+)?,\s*-RZ")


def _store_writers(fn, body, k, order):
    """The SASS instructions that last write, before each store of instruction ``k``'s value, the store's data
    register (in the SASS's order, whatever line ptxas gave them), through register copies: a copy's source is
    followed to its own last writer before the copy (``@!P0 HADD2 R6, -R7, -RZ.H0_H0; @!P0 IMAD.MOV.U32 R7, RZ, RZ,
    R6`` gives the ``HADD2``: H100 seed 246220), a few copies deep."""
    out = []
    for _line, _store, at_store, target in _stores_of(fn, body, k, order):
        last, before = None, at_store
        for _hop in range(4):
            last, where = None, None
            for j, (text, _) in enumerate(order[:before]):
                d = _DEST.match(text)
                if d is not None and d.group(1) == target:
                    last, where = text, j
            copied = _COPY.match(last) if last is not None else None
            if copied is None:
                break
            target, before = copied.group(1), where
        if last is not None:
            out.append(last)
    return out


_COPY = re.compile(r"^(?:@!?U?P\w+\s+)?(?:MOV|IMAD\.MOV\.U32\s+R\d+,\s*RZ,\s*RZ,)\s*(?:R\d+,\s*)?(R\d+)\s*;?$")


def _at_least_one(bits):
    """Whether the f32 ``bits`` are a number >= 1.0 (``+inf`` included, NaN not)."""
    return bits < 0x80000000 and 0x3F800000 <= bits <= 0x7F800000


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
    _dropped_abs(module, contraction, out)
    _nan_folds(module, contraction, out)
    if not contraction.pairs:
        _ftz_dropped(module, contraction, out)
        _negated_differences(module, contraction, out)
        _known_predicates(module, contraction, out)
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
    _ftz_dropped(module, contraction, out)
    _negated_differences(module, contraction, out)
    _known_predicates(module, contraction, out)
    return out


def _negated_differences(module, contraction, out):
    """Each ``sub.f32 d, x, m`` of ``contraction.negated_differences`` runs as ``neg.f32 d, x``, each ``sub.f32 d, m,
    x`` of ``contraction.kept_differences`` as ``mov.b32 d, x`` (under its guard)."""
    for lines, opcode, mods, x in ((set(contraction.negated_differences), "neg", ("f32",), 1),
                                   (set(contraction.kept_differences), "mov", ("b32",), 2)):
        for f in module.functions.values():
            for ins in f.body:
                if isinstance(ins, Instruction) and ins.token.line in lines and ins.opcode == "sub":
                    out.replace[id(ins)] = Instruction(opcode, mods, [ins.operands[0], ins.operands[x]], ins.guard,
                                                       ins.guard_neg, ins.token, ins.loc)


def _known_predicates(module, contraction, out):
    """Each ``setp`` of ``contraction.known_predicates`` runs as ``setp.eq.u32 p, 0, 0``: true."""
    lines = set(contraction.known_predicates)
    for f in module.functions.values():
        for ins in f.body:
            if isinstance(ins, Instruction) and ins.token.line in lines and ins.opcode == "setp":
                zero = Operand("imm", value=0, token=ins.token)
                out.replace[id(ins)] = Instruction("setp", ("eq", "u32"), [ins.operands[0], zero, zero], ins.guard,
                                                   ins.guard_neg, ins.token, ins.loc)


def _ftz_dropped(module, contraction, out):
    """Each instruction of ``contraction.ftz_dropped`` (or the FMA that replaces it) runs without ``.ftz``."""
    lines = set(contraction.ftz_dropped)
    for f in module.functions.values():
        for ins in f.body:
            if isinstance(ins, Instruction) and ins.token.line in lines and "ftz" in ins.mods:
                now = out.replace.get(id(ins), ins)
                out.replace[id(ins)] = replace(now, mods=tuple(m for m in now.mods if m != "ftz"))


def _dropped_abs(module, contraction, out):
    """Each ``abs`` of ``contraction.dropped_abs`` runs as ptxas's code: ``add.rn[.ftz].f32 d, a, -0`` where it kept
    the ``FADD``, else a copy of ``a``."""
    lines = dict(contraction.dropped_abs)
    for f in module.functions.values():
        for ins in f.body:
            if isinstance(ins, Instruction) and ins.token.line in lines and ins.opcode == "abs":
                if lines[ins.token.line]:
                    zero = Operand("fimm", value=0x80000000, bits=32, token=ins.token)
                    opcode, mods, operands = "add", ("rn", *ins.mods), [*ins.operands[:2], zero]
                else:
                    opcode, mods, operands = "mov", ("b32",), ins.operands[:2]
                out.replace[id(ins)] = Instruction(opcode, mods, operands, ins.guard, ins.guard_neg, ins.token,
                                                   ins.loc)


def _sign_selects(module, contraction, out):
    """Each ``neg``/``abs`` of ``contraction.sign_selects`` runs as the sign-bit operation its ``FSEL`` or folded
    constant does (``xor.b32``/``and.b32`` of the source's bits, under the same guard)."""
    lines = set(contraction.sign_selects)
    for f in module.functions.values():
        for ins in f.body:
            if isinstance(ins, Instruction) and ins.token.line in lines and ins.opcode in _SIGN_MASK and \
                    ins.mods in (("f32",), ("ftz", "f32")):
                opcode, mask = _SIGN_MASK[ins.opcode]
                out.replace[id(ins)] = Instruction(opcode, ("b32",), [*ins.operands[:2], Operand("imm", value=mask)],
                                                   ins.guard, ins.guard_neg, ins.token, ins.loc)


def _nan_folds(module, contraction, out):
    """``contraction.sign_operands``: the ``selp`` reads the sign-bit operation of the ``neg``/``abs``'s source, made
    in a register of its own where the ``neg``/``abs`` runs; ``contraction.saturated_ones``: the
    ``add.sat``/``sub.sat`` moves ``1.0``."""
    operands, ones = set(map(tuple, contraction.sign_operands)), set(contraction.saturated_ones)
    doubles, constants = set(contraction.double_negations), dict(contraction.folded_constants)
    folds = dict(contraction.ftz_folds)
    units = dict(contraction.unit_products)
    if not operands and not ones and not doubles and not constants and not units and not folds:
        return
    for fname, f in module.functions.items():
        if f.declared_only:
            continue
        fn = None
        body = [i for i in f.body if isinstance(i, Instruction)]
        for k, ins in enumerate(body):
            line = ins.token.line
            if line in doubles and ins.opcode == "neg":
                fn = fn or _Function(f)
                inner = fn.flow.instrs[fn.single_def(k, ins.operands[1].name)]
                name = f"%__warpsim_neg{line}"
                out.regs.setdefault(fname, []).append(Variable(name, "reg", "b32", token=ins.token))
                reg = Operand("reg", name, token=ins.operands[1].token)
                out.before.setdefault(id(inner), []).append(
                    Instruction("mov", ("b32",), [reg, inner.operands[1]], None, False, inner.token, inner.loc))
                out.replace[id(ins)] = Instruction("mov", ("b32",), [ins.operands[0], reg], ins.guard, ins.guard_neg,
                                                   ins.token, ins.loc)
            if line in units and ins.opcode == "mul":
                out.replace[id(ins)] = Instruction("mov", ("b32",), [ins.operands[0], ins.operands[units[line]]],
                                                   ins.guard, ins.guard_neg, ins.token, ins.loc)
            if line in folds and ins.opcode in ("add", "sub", "mul", "fma") and "ftz" in ins.mods:
                out.replace[id(ins)] = Instruction("mov", ("b32",), [ins.operands[0],
                                                   Operand("imm", value=folds[line])],
                                                   ins.guard, ins.guard_neg, ins.token, ins.loc)
            if line in constants and ins.opcode in _SIGN_MASK:
                out.replace[id(ins)] = Instruction("mov", ("b32",), [ins.operands[0],
                                                   Operand("imm", value=constants[line])],
                                                   ins.guard, ins.guard_neg, ins.token, ins.loc)
            if line in ones and ins.opcode in ("add", "sub"):
                out.replace[id(ins)] = Instruction("mov", ("b32",), [ins.operands[0], Operand("imm", value=0x3F800000)],
                                                   ins.guard, ins.guard_neg, ins.token, ins.loc)
            for pos in (1, 2):
                if (line, pos) not in operands or ins.opcode != "selp":
                    continue
                fn = fn or _Function(f)
                src = fn.flow.instrs[fn.single_def(k, ins.operands[pos].name)]
                opcode, mask = _SIGN_MASK[src.opcode]
                name = f"%__warpsim_sign{line}"
                out.regs.setdefault(fname, []).append(Variable(name, "reg", "b32", token=ins.token))
                reg = Operand("reg", name, token=ins.operands[pos].token)
                out.before.setdefault(id(src), []).append(
                    Instruction(opcode, ("b32",), [reg, src.operands[1], Operand("imm", value=mask)], src.guard,
                                src.guard_neg, src.token, src.loc))
                ops = list(ins.operands)
                ops[pos] = reg
                out.replace[id(ins)] = Instruction("selp", ("b32",), ops, ins.guard, ins.guard_neg, ins.token, ins.loc)


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
