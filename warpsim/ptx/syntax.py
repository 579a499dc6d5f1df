"""PTX text → a syntax tree: modules, functions, variables and instructions, with source positions.

The grammar is the part of the PTX ISA ("Syntax", "State spaces, types and variables", "Directives")
that nvcc 12/13 and CuTe DSL 4.x emit: ``.version/.target/.address_size``, ``.file``, ``.entry`` and
``.func`` (with parameters; a ``.func`` without a body is a declaration, e.g. ``vprintf``),
module-level ``.global/.const/.shared`` variables with initialisers, ``.extern .shared`` dynamic
shared memory, and in bodies ``.reg`` (incl. ranges ``%r<12>``), ``.local``, ``.shared``,
``.param``, ``.loc`` line info, performance directives (``.reqntid``, ``.maxntid``, ...), labels,
``{ }`` scopes and instructions. ``.section`` blocks (debug strings) are skipped.

Names declared in a ``{ }`` scope are renamed ``name#k`` (``k`` counts scopes in the function), so
every register of a function has one unique name. An error is a :class:`PtxSyntaxError` naming
``file:line:col`` and the token.

Limits, checked before anything is built from them: a function may declare at most
:data:`MAX_REGISTER_SLOTS` register slots (:func:`register_slots`); an integer literal must fit 64 bits;
:func:`read_ptx` names the line of a byte that is not UTF-8. An instruction of a family warpsim does not run yet
(:data:`~warpsim.ptx.opcodes.NOT_YET`: TMA, wgmma, mbarrier, ...) whose operands do not parse is refused by name
(``UnsupportedType``), not by its operand syntax.

>>> m = parse_module(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
...                  ".visible .entry k(.param .u64 p)\\n{ .reg .b32 %r<3>; mov.u32 %r1, %tid.x; ret; }")
>>> f = m.functions["k"]
>>> f.params[0].name, f.params[0].type, [r.name for r in f.regs]
('p', 'u64', ['%r0', '%r1', '%r2'])
>>> i = f.body[0]
>>> i.opcode, i.mods, [o.kind for o in i.operands]
('mov', ('u32',), ['reg', 'sreg'])
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from warpsim.errors import PtxSyntaxError, UnsupportedType
from warpsim.ptx.opcodes import not_supported_yet

__all__ = ["Token", "Operand", "Instruction", "Label", "Variable", "Function", "Module", "SourceLoc",
           "parse_module", "read_ptx", "tokenize", "register_slots", "type_bytes", "SPECIAL_REGISTERS",
           "MAX_REGISTER_SLOTS", "MAX_STATEMENTS", "LARGE_STATEMENTS", "statements"]

# Register slots (32-bit words of the simulated register file, see register_slots) one thread may have: a
# function may declare at most this many, and so may a kernel with the functions it calls (warpsim.ptx.decode).
# PTX registers are virtual (ptxas maps them to at most 255 hardware ones), so compilers declare thousands: nvcc's
# flash-attention kernel some 2,000, the corpus's largest fewer. 65,536 is 30 times that and as many 32-bit
# registers as a whole SM has; it keeps a 1024-thread CTA's simulated register file within 256 MiB, and a
# declaration such as %r<100000000> is refused before one register of it is made.
MAX_REGISTER_SLOTS = 65536
# Statements (the ``;`` that end instructions and directives) one module may hold: each costs about 2.7 KB of memory
# and 45 us to load (measured on a 2-core host: 100,000 ``add.s32`` lines, 265 MB, 4.3 s), so this bound keeps a load
# within about 3 GB and a minute. The largest compiler outputs here (flash attention, CUTLASS GEMMs) are some 20,000.
MAX_STATEMENTS = 1_000_000
# From this many statements a load takes seconds: warpsim.ptx.load tells its ``progress`` callable how many.
LARGE_STATEMENTS = 100_000
_MAX_LITERAL = (1 << 64) - 1       # PTX integer literals are 64-bit (.s64, or .u64 with a U suffix)

SPECIAL_REGISTERS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid",
                     "%nsmid", "%clock", "%clock64", "%lanemask_eq", "%lanemask_lt", "%lanemask_le",
                     "%lanemask_gt", "%lanemask_ge", "%gridid", "%globaltimer", "%dynamic_smem_size",
                     "%total_smem_size", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
                     "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster")

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<comment>//[^\n]*) | (?P<block>/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<float>0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16})
  | (?P<number>0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|[0-9]+(?:\.[0-9]*(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)?U?)
  | (?P<name>[%$.]?[A-Za-z_$%][A-Za-z0-9_$%.]*(?:::[A-Za-z0-9_][A-Za-z0-9_$%.]*)*)
  | (?P<punct>[{}\[\](),;:+\-!@<>=|*])
""", re.VERBOSE | re.DOTALL)


class Token(NamedTuple):
    """One token: ``kind`` (name, number, float, string, punct), its ``text``, ``line`` and ``col`` (from 1)."""

    kind: str
    text: str
    line: int
    col: int


def tokenize(text, filename="<ptx>"):
    """The tokens of ``text`` (comments and white space dropped).

    >>> [t.text for t in tokenize("@!%p1 bra $L__BB0_2; // x")]
    ['@', '!', '%p1', 'bra', '$L__BB0_2', ';']
    """
    tokens, pos, line, line_start = [], 0, 1, 0
    append, skip = tokens.append, ("ws", "comment")
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break                                       # a character no token starts with
        kind = m.lastgroup
        pos = m.end()
        if kind == "nl":
            line, line_start = line + 1, pos
        elif kind == "block":
            block = m.group()
            if "\n" in block:
                line += block.count("\n")
                line_start = m.start() + block.rfind("\n") + 1
        elif kind not in skip:
            start = m.start()
            append(Token(kind, m.group(), line, start - line_start + 1))
    if pos < len(text):
        raise PtxSyntaxError(f"{filename}:{line}:{pos - line_start + 1}: unexpected character {text[pos]!r}")
    return tokens


@dataclass(frozen=True)
class SourceLoc:
    """A ``.loc``: file index, line, and the location it was inlined at (or None)."""

    file: int
    line: int
    inlined_at: "SourceLoc | None" = None


@dataclass(slots=True)
class Operand:
    """One operand. ``kind``: ``reg``, ``sreg`` (special register; ``name`` e.g. ``%tid.x``), ``imm``
    (``value``: int), ``fimm`` (``value``: the bits; ``bits`` 32 (``0f``) or 64 (``0d`` and decimal)), ``sym`` (a variable or
    label name, plus ``value`` offset), ``addr`` (``base``: a reg/sym/imm Operand or None, ``value``
    offset; ``items``: the coordinates of a tensor address ``[map, {c0, ...}]``), ``vec`` (``items``), ``list`` (a call's parenthesised list, ``items``), ``sink`` (``_``).
    ``neg``: a ``!`` before a predicate; ``pair``: the second destination of ``a|b``."""

    kind: str
    name: str = ""
    value: int = 0
    bits: int = 0
    base: "Operand | None" = None
    items: list = field(default_factory=list)
    neg: bool = False
    pair: "Operand | None" = None
    token: Token | None = None


@dataclass(slots=True)
class Instruction:
    opcode: str
    mods: tuple
    operands: list
    guard: str | None
    guard_neg: bool
    token: Token
    loc: SourceLoc | None
    fused: tuple = ()            # an add/sub that ptxas fused with a mul: (mul line, negate a, negate c)


@dataclass
class Label:
    name: str
    token: Token


@dataclass
class Variable:
    """A declared variable: ``space`` (reg, param, shared, local, global, const), ``type`` (``b8``,
    ``u32``, ``pred``, ...), ``count`` elements (0 for an unsized ``[]``), ``align`` bytes,
    ``init`` bytes or None, ``extern``, ``vector`` (``.v2``/``.v4``: 2 or 4, else 1)."""

    name: str
    space: str
    type: str
    count: int = 1
    align: int = 0
    init: bytes | None = None
    extern: bool = False
    array: bool = False
    vector: int = 1
    token: Token | None = None


@dataclass
class Function:
    name: str
    entry: bool
    params: list
    returns: list
    regs: list = field(default_factory=list)
    locals: list = field(default_factory=list)       # .local/.shared/.param declared in the body
    body: list = field(default_factory=list)         # Instruction and Label
    directives: dict = field(default_factory=dict)   # .reqntid etc. -> tuple of ints
    declared_only: bool = False
    token: Token | None = None


@dataclass
class Module:
    version: str = ""
    target: tuple = ()
    address_size: int = 64
    files: dict = field(default_factory=dict)        # .file index -> path
    functions: dict = field(default_factory=dict)    # name -> Function, in order
    variables: list = field(default_factory=list)    # module-level .global/.const/.shared
    filename: str = "<ptx>"


_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4,
               "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "b64": 8, "u64": 8, "s64": 8,
               "f64": 8, "pred": 1, "b128": 16}
_SPACES = ("reg", "param", "shared", "local", "global", "const")
_PERF = (".reqntid", ".maxntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".reqnctapercluster",
         ".maxclusterrank", ".explicitcluster", ".noreturn", ".pragma", ".blocksareclusters")


def type_bytes(ptx_type):
    """Bytes of a PTX type name: ``type_bytes("u64") == 8``."""
    return _TYPE_BYTES[ptx_type]


def register_slots(ptx_type):
    """32-bit slots of the thread's register file that one register of ``ptx_type`` takes: 2 for 64 bits, 1 for
    8 to 32 bits and predicates (``.b128``, 4, is refused by the decoder).

    >>> register_slots("b64"), register_slots("pred"), register_slots("f16")
    (2, 1, 1)
    """
    return max(_TYPE_BYTES[ptx_type] // 4, 1)


def read_ptx(path, filename=None):
    """The text of the PTX file ``path``; a byte that is not UTF-8 (PTX is ASCII text) is a ``PtxSyntaxError``
    naming ``filename`` (default: ``path``), its line and column, not the codec's position in bytes."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - data.rfind(b"\n", 0, e.start)
        raise PtxSyntaxError(f"{filename or path}:{line}:{col}: byte {data[e.start]:#04x} is not UTF-8 text "
                             f"(PTX is ASCII; UTF-8 is read in comments and strings)") from None


def _shown(text, limit=40):
    """A token for a message: quoted, and cut (its length given) beyond ``limit`` characters.

    >>> _shown("%r1"), _shown("9" * 50)
    ("'%r1'", "'999999999999999999999999'... (50 characters)")
    """
    return repr(text) if len(text) <= limit else f"{text[:limit - 16]!r}... ({len(text)} characters)"


class _Parser:
    def __init__(self, tokens, filename):
        self.t = tokens
        self.n = len(tokens)
        self.i = 0
        self.filename = filename
        self.scope_count = 0
        self.slots = 0                # register slots the function being parsed has declared so far

    # tokens -----------------------------------------------------------------------------------------
    def error(self, what, tok=None):
        """A PtxSyntaxError naming ``file:line:col`` of ``tok`` (default: the next token) and its text."""
        tok = tok or self.peek()
        if tok is None:
            last = self.t[-1] if self.t else Token("eof", "", 1, 1)
            return PtxSyntaxError(f"{self.filename}:{last.line}:{last.col}: {what} at the end of the input")
        return PtxSyntaxError(f"{self.filename}:{tok.line}:{tok.col}: {what} at {_shown(tok.text)}")

    def peek(self, k=0):
        j = self.i + k
        return self.t[j] if j < self.n else None

    def next(self):
        i = self.i
        if i >= self.n:
            raise PtxSyntaxError(f"{self.filename}: unexpected end of input")
        self.i = i + 1
        return self.t[i]

    def at(self, text):
        i = self.i
        return i < self.n and self.t[i].text == text

    def accept(self, text):
        i = self.i
        if i < self.n and self.t[i].text == text:
            self.i = i + 1
            return self.t[i]
        return None

    def expect(self, text):
        i = self.i
        if i < self.n and self.t[i].text == text:
            self.i = i + 1
            return self.t[i]
        raise self.error(f"expected {text!r}")

    def integer(self):
        neg = bool(self.accept("-"))
        tok = self.next()
        text = tok.text
        if tok.kind == "number" and text.isdigit() and len(text) < 20 and (text[0] != "0" or len(text) == 1):
            return -int(text) if neg else int(text)          # a plain decimal: the common case, surely 64-bit
        if tok.kind != "number" or "." in tok.text or "e" in tok.text.lower() and tok.text[:2].lower() != "0x":
            raise self.error("expected an integer", tok)
        text = tok.text.rstrip("U")
        base = 16 if text[:2] in ("0x", "0X") else 2 if text[:2] in ("0b", "0B") else 8 if text[0] == "0" else 10
        digits = (text[2:] if base in (2, 16) else text).lstrip("0") or "0"
        if len(digits) > {16: 16, 2: 64, 8: 22, 10: 20}[base]:      # too long to be 64-bit: not converted at all
            v = _MAX_LITERAL + 1
        else:
            try:
                v = int(digits, base)
            except ValueError:
                raise self.error("expected an integer (an octal one has digits 0 to 7)", tok) from None
        if v > _MAX_LITERAL:
            raise PtxSyntaxError(f"{self.filename}:{tok.line}:{tok.col}: integer literal {_shown(tok.text)} is out "
                                 f"of range for its type (PTX integer literals are 64-bit: at most {_MAX_LITERAL})")
        return -v if neg else v

    # module -----------------------------------------------------------------------------------------
    def module(self):
        mod = Module(filename=self.filename)
        while self.peek() is not None:
            tok = self.peek()
            if tok.text == ".version":
                self.next(); mod.version = self.next().text
            elif tok.text == ".target":
                self.next(); names = [self.next().text]
                while self.accept(","):
                    names.append(self.next().text)
                mod.target = tuple(names)
            elif tok.text == ".address_size":
                self.next(); mod.address_size = self.integer()
            elif tok.text == ".file":
                self.next(); index = self.integer(); path = self.next()
                if path.kind != "string":
                    raise self.error("expected a file name string", path)
                mod.files[index] = path.text[1:-1]
                while self.accept(","):
                    self.integer()
            elif tok.text == ".section":
                self.next(); self.next(); self.skip_block()
            else:
                self.declaration(mod)
        return mod

    def skip_block(self):
        self.expect("{")
        depth = 1
        while depth:
            tok = self.next()
            depth += (tok.text == "{") - (tok.text == "}")

    def declaration(self, mod):
        start = self.peek()
        linkage = set()
        while self.peek() is not None and self.peek().text in (".visible", ".extern", ".weak", ".common"):
            linkage.add(self.next().text)
        tok = self.peek()
        if tok is None:
            raise self.error("expected a declaration", start)
        if tok.text in (".entry", ".func"):
            f = self.function(".extern" in linkage)
            if f.name in mod.functions and not mod.functions[f.name].declared_only:
                if not f.declared_only:
                    raise self.error(f"function {f.name!r} defined twice", f.token)
                return
            mod.functions[f.name] = f
        elif tok.text in (".global", ".const", ".shared"):
            v = self.variable(tok.text[1:], ".extern" in linkage)
            self.expect(";")
            mod.variables.append(v)
        else:
            raise self.error("expected .entry, .func or a variable declaration")

    def function(self, extern):
        kind = self.next()
        returns = []
        if self.at("("):
            returns = self.param_list()
        name = self.next()
        if name.kind != "name":
            raise self.error("expected a function name", name)
        params = self.param_list() if self.at("(") else []
        f = Function(name.text, kind.text == ".entry", params, returns, token=name)
        while self.peek() is not None and self.peek().text in _PERF:
            self.perf_directive(f)
        if self.accept(";"):
            f.declared_only = True
            return f
        self.expect("{")
        self.scope_count = 0
        self.slots = 0
        self.body(f, {})
        return f

    def perf_directive(self, f):
        tok = self.next()
        if tok.text == ".pragma":
            self.next(); self.accept(";"); return
        values = []
        if self.peek() is not None and (self.peek().kind == "number"):
            values.append(self.integer())
            while self.accept(","):
                values.append(self.integer())
        f.directives[tok.text[1:]] = tuple(values)

    def param_list(self):
        self.expect("(")
        params = []
        while not self.accept(")"):
            if params:
                self.expect(",")
            params.append(self.variable("param", False, skip_space=True))
        return params

    def variable(self, space, extern, skip_space=False):
        """``[.space] [.align N] [.ptr...] [.v2] .type name[N][<range>] [= init]``."""
        first = self.peek()
        if not skip_space or self.at("." + space):
            tok = self.next()
            if tok.text != "." + space:
                raise self.error(f"expected .{space}", tok)
        align, vector, ptype, pointer = 0, 1, None, False
        while self.peek() is not None and self.peek().text.startswith("."):
            d = self.next().text
            if d == ".align" and pointer:
                self.integer()   # .param .u64 .ptr .global .align 16 p: the pointee's alignment, not the parameter's
            elif d == ".align":
                align = self.integer()
            elif d in (".v2", ".v4", ".v8"):
                vector = int(d[2:])
            elif d[1:] in _TYPE_BYTES:
                ptype = d[1:]
            elif d == ".ptr":
                pointer = True
            elif d in (".global", ".shared", ".const", ".local"):
                pass   # .param .u64 .ptr .global .align 8 p: pointer attributes
            else:
                raise self.error(f"unknown variable attribute {d!r}", self.t[self.i - 1])
        if ptype is None:
            raise self.error("expected a type (.b32, .u64, .f32, ...)", first)
        name = self.next()
        if name.kind != "name":
            raise self.error("expected a variable name", name)
        v = Variable(name.text, space, ptype, align=align, extern=extern, vector=vector, token=name)
        if self.accept("<"):
            v.count = self.integer(); v.array = "range"
            self.expect(">")
        dims = []
        while self.accept("["):
            if self.accept("]"):
                dims.append(0)
                continue
            dims.append(self.integer())
            self.expect("]")
        if dims:
            v.array = True
            v.count = 1
            for d in dims:
                v.count *= d
        if self.accept("="):
            v.init = self.initialiser(v)
        return v

    def initialiser(self, v):
        values = []
        def item():
            if self.accept("{"):
                while not self.accept("}"):
                    if values and self.at(","):
                        self.next()
                    item()
                return
            tok = self.peek()
            if tok.kind == "float":
                self.next(); values.append(int(tok.text[2:], 16))
            elif tok.kind == "name":
                raise self.error("address initialisers are not supported", tok)
            else:
                values.append(self.integer())
        item()
        size = _TYPE_BYTES[v.type]
        data = b"".join((x & ((1 << (8 * size)) - 1)).to_bytes(size, "little") for x in values)
        return data

    # bodies -------------------------------------------------------------------------------------------
    def body(self, f, renames, loc=None):
        """Statements up to the matching ``}``; ``renames`` maps names of enclosing scopes, ``loc`` is the
        ``.loc`` in force (a ``{ }`` scope inherits it: nvcc writes inline asm as ``{ cvt...; }`` after the
        ``.loc`` of its source line). Returns the ``.loc`` in force at the ``}``."""
        while True:
            tok = self.peek()
            if tok is None:
                raise self.error("missing '}' at the end of the function body", f.token)
            text = tok.text
            if text == "}":
                self.next()
                return loc
            if text == "{":
                self.next()
                self.scope_count += 1
                start = len(f.body)
                inner = dict(renames, __scope__=self.scope_count, __labels__=set())
                loc = self.body(f, inner, loc)
                self.scope_labels(f.body[start:], inner)
                continue
            if text == ".reg":
                self.next()
                self.reg_decl(f, renames)
            elif text in (".local", ".shared", ".param"):
                v = self.variable(text[1:], False)
                self.expect(";")
                v.name = self.scoped(v.name, renames)
                f.locals.append(v)
            elif text == ".loc":
                self.next()
                loc = self.loc()
            elif text == ".pragma" or text in _PERF:
                self.perf_directive(f)
                self.accept(";")
            elif tok.kind == "name" and self.at_label():
                self.next(); self.next()
                if "__labels__" in renames:              # a label of a { } scope: inline asm may repeat its name
                    renames["__labels__"].add(text)
                    text = self.scoped(text, renames)
                f.body.append(Label(text, tok))
            else:
                f.body.append(self.instruction(renames, loc))

    @staticmethod
    def scope_labels(items, inner):
        """Branch targets in a ``{ }`` scope's statements that name a label of that scope, written before it
        (``@P1 bra DONE; ... DONE:``), renamed as the label was (CUTLASS's mbarrier waits repeat such labels)."""
        labels = inner["__labels__"]
        for item in items:
            if isinstance(item, Instruction):
                for op in item.operands:
                    if op.kind == "sym" and op.name in labels:
                        op.name = inner[op.name]

    def scoped(self, name, renames):
        scope = renames.get("__scope__")
        if scope is None:
            return name
        renames[name] = f"{name}#{scope}"
        return renames[name]

    def at_label(self):
        nxt = self.peek(1)
        return nxt is not None and nxt.text == ":"

    def reg_decl(self, f, renames):
        ptype, vector = None, 1
        while self.peek() is not None and self.peek().text.startswith("."):
            d = self.next().text
            if d in (".v2", ".v4"):
                vector = int(d[2:])
            elif d[1:] in _TYPE_BYTES:
                ptype = d[1:]
            else:
                raise self.error(f"unknown register type {d!r}", self.t[self.i - 1])
        if ptype is None:
            raise self.error("expected a register type")
        if vector != 1:
            raise self.error("vector registers (.reg .v2/.v4) are not supported", self.t[self.i - 1])
        while True:
            name = self.next()
            if name.kind != "name":
                raise self.error("expected a register name", name)
            if self.accept("<"):
                n = self.integer()
                self.expect(">")
                self.count_slots(f, f"{name.text}<{n}>", name, ptype, n)
                for k in range(n):
                    f.regs.append(Variable(self.scoped(f"{name.text}{k}", renames), "reg", ptype,
                                           token=name))
            else:
                self.count_slots(f, name.text, name, ptype, 1)
                f.regs.append(Variable(self.scoped(name.text, renames), "reg", ptype, token=name))
            if not self.accept(","):
                break
        self.expect(";")

    def count_slots(self, f, what, name, ptype, n):
        """Count ``n`` registers of ``ptype`` declared as ``what`` at token ``name`` (before any is made); refuse the
        declaration that takes the function beyond :data:`MAX_REGISTER_SLOTS`."""
        slots = max(n, 0) * register_slots(ptype)
        if self.slots + slots > MAX_REGISTER_SLOTS:
            raise PtxSyntaxError(
                f"{self.filename}:{name.line}:{name.col}: .reg .{ptype} {what} takes function {f.name} to "
                f"{self.slots + slots} register slots (32-bit words) per thread; warpsim allows at most "
                f"{MAX_REGISTER_SLOTS} (compilers declare a few thousand: see docs/ptx.md, \"Limits\")")
        self.slots += slots

    def loc(self):
        file, line = self.integer(), self.integer()
        self.integer()
        inlined = None
        while self.accept(","):
            key = self.next().text
            if key == "function_name":
                self.next()
            elif key == "inlined_at":
                ifile, iline = self.integer(), self.integer()
                self.integer()
                inlined = SourceLoc(ifile, iline)
            else:
                raise self.error(f"unknown .loc attribute {key!r}", self.t[self.i - 1])
        return SourceLoc(file, line, inlined)

    def instruction(self, renames, loc):
        guard, guard_neg = None, False
        if self.accept("@"):
            guard_neg = bool(self.accept("!"))
            g = self.next()
            if g.kind != "name":
                raise self.error("expected a predicate register after '@'", g)
            guard = renames.get(g.text, g.text)
        tok = self.next()
        if tok.kind != "name" or tok.text.startswith((".", "%")):
            raise self.error("expected an instruction", tok)
        parts = tok.text.split(".")
        operands = []
        try:
            while not self.accept(";"):
                if operands:
                    self.expect(",")
                operands.append(self.operand(renames))
        except PtxSyntaxError:
            refused = not_supported_yet(tok.text)     # its operands' syntax is not ours to know: say what it is
            if refused is None:
                raise
            raise UnsupportedType(f"{self.filename}:{tok.line}:{tok.col}: {refused}") from None
        return Instruction(parts[0], tuple(parts[1:]), operands, guard, guard_neg, tok, loc)

    def operand(self, renames):
        tok = self.peek()
        if tok is None:
            raise self.error("expected an operand")
        if tok.text == "[":
            self.next()
            base, offset = None, 0
            if not self.at("+") and not self.at("-"):
                base = self.simple(renames)
                offset, base.value = base.value, 0
                if base.kind == "imm":
                    base = None
            while self.at("+") or self.at("-"):
                sign = -1 if self.next().text == "-" else 1
                offset += sign * self.integer()
            coords = None
            if self.accept(","):                         # a tensor address: [tensor-map, {c0, c1, ...}] (TMA)
                vec = self.operand(renames)
                if vec.kind != "vec":
                    raise self.error("expected the coordinates {c0, ...} of a tensor address", vec.token)
                coords = vec.items
            self.expect("]")
            return Operand("addr", base=base, value=offset, token=tok, items=coords or [])
        if tok.text == "{":
            self.next()
            items = []
            while not self.accept("}"):
                if items:
                    self.expect(",")
                items.append(self.simple(renames))
            return Operand("vec", items=items, token=tok)
        if tok.text == "(":
            self.next()
            items = []
            while not self.accept(")"):
                if items:
                    self.expect(",")
                items.append(self.simple(renames))
            return Operand("list", items=items, token=tok)
        op = self.simple(renames)
        if self.accept("|"):
            op.pair = self.simple(renames)
        return op

    def simple(self, renames):
        tok = self.next()
        if tok.text == "!":
            op = self.simple(renames)
            op.neg = True
            return op
        if tok.text == "-" and self.peek() is not None and self.peek().kind == "number":
            if _is_decimal_float(self.peek().text):
                return _decimal_float("-" + self.next().text, tok)
            self.i -= 1
            return Operand("imm", value=self.integer(), token=tok)
        if tok.kind == "number":
            if _is_decimal_float(tok.text):
                return _decimal_float(tok.text, tok)
            self.i -= 1
            return Operand("imm", value=self.integer(), token=tok)
        if tok.kind == "float":
            return Operand("fimm", value=int(tok.text[2:], 16), bits=32 if tok.text[1] in "fF" else 64,
                           token=tok)
        if tok.kind != "name":
            raise self.error("expected an operand", tok)
        if tok.text == "_":
            return Operand("sink", token=tok)
        head = tok.text.split(".")[0]
        if head in SPECIAL_REGISTERS:
            return Operand("sreg", name=tok.text, token=tok)
        name = renames.get(tok.text, tok.text)
        if tok.text.startswith("%") and name == tok.text and not self.at("+"):
            return Operand("reg", name=name, token=tok)
        offset = 0
        if self.at("+") and self.peek(1) is not None and self.peek(1).kind == "number":
            self.next()
            offset = self.integer()
        return Operand("sym" if not name.startswith("%") else "reg", name=name, value=offset, token=tok)


def _is_decimal_float(text):
    return not text[:2].lower() in ("0x", "0b") and ("." in text or "e" in text.lower())


def _decimal_float(text, tok):
    """A decimal float literal (``1.5``, ``-2e-3``): PTX reads it as a double, so its ``fimm`` holds
    the binary64 bits (Python's ``float`` rounds decimal text correctly, to nearest even)."""
    return Operand("fimm", value=struct.unpack("<Q", struct.pack("<d", float(text)))[0], bits=64, token=tok)


def statements(text):
    """How many statements ``text`` holds, at most: its ``;`` (comments' included)."""
    return text.count(";")


def parse_module(text, filename="<ptx>"):
    """The :class:`Module` of PTX ``text``; ``PtxSyntaxError`` naming ``filename:line:col`` and the token, or
    ``filename`` and the count of a text beyond :data:`MAX_STATEMENTS` (checked before anything is parsed)."""
    count = statements(text)
    if count > MAX_STATEMENTS:
        raise PtxSyntaxError(f"{filename}: {count:,} statements of PTX; warpsim loads at most {MAX_STATEMENTS:,} "
                             f"(about 2.7 KB of memory each while loading)")
    return _Parser(tokenize(text, filename), filename).module()
