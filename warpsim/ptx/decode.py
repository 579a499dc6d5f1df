"""A parsed kernel → integer arrays the ``@njit`` interpreter reads, decoded once.

``code``: ``int64[n, NCOLS]``, one row per instruction of the kernel and of every ``.func`` it calls
(the kernel first, at pc 0), columns:

==============  ===================================================================================
``OP``          :class:`~warpsim.ptx.opcodes.Op` code
``TK, TB``      the instruction's type: kind (``TK_U``, ``TK_S``, ...) and bits; ``SK, SB``: the
                second type (``cvt``'s source, ``slct``'s selector)
``M0 .. M3``    modifiers, per instruction (a comparison, a state space, a vector count, a mode)
``GUARD, GNEG`` the guard predicate's register slot (-1: none) and whether it is negated (``@!%p``)
``LOC``         row of :attr:`Decoded.where` (the PTX line and the ``.loc`` source line)
``NOPS, O0..``  the operand count and the operands' rows in ``opnd``
==============  ===================================================================================

``opnd``: ``int64[m, 5]``: ``KIND, SLOT, NW, IMM, NEG``. A register is its first slot in the
thread's ``uint32`` register file and its words (1, or 2 for 64 bits; a predicate is one slot
holding 0 or 1); an immediate or a variable's address is ``IMM``; an address ``[base+imm]`` is
``K_ADDR`` with the base register (``SLOT`` -1: none); a vector ``{a, b}`` is ``K_VEC`` with
``SLOT`` the row of its first element (the elements follow) and ``NW`` their count.

State spaces and generic addresses: see :mod:`warpsim.ptx.memory`.

>>> from warpsim.ptx.syntax import parse_module
>>> m = parse_module(".version 8.0\\n.target sm_80\\n.address_size 64\\n.entry k()\\n"
...                  "{ .reg .b64 %rd<2>; .reg .b32 %r<2>; mov.u32 %r1, 7; add.s64 %rd1, %rd0, 8; ret; }")
>>> d = decode_kernel(m, "k")
>>> d.code.shape[0], int(d.code[1, OP]) == Op.ADD, d.regs_per_thread
(4, True, 6)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from warpsim.errors import PtxSyntaxError
from warpsim.ptx.memory import (GLOBAL_BASE, KPARAM_BASE, SHARED_BASE, SP_CONST, SP_FPARAM, SP_GENERIC, SP_GLOBAL, SP_KPARAM,
                                SP_LOCAL, SP_SHARED, SPACE_NAMES, global_layout, redzone, round_up, to_generic)
from warpsim.ptx.constants import known_constants, segment_constants
from warpsim.ptx.contraction import Rewrite
from warpsim.ptx.families import InstructionDecoder
from warpsim.ptx.opcodes import TYPES, Op
from warpsim.ptx.rows import (ATOM_OPS, GNEG, GUARD, IMM, K_ADDR, K_IMM, K_LABEL, K_NONE, K_REG, K_SREG, K_VEC,
                             KIND, LOC, M0, M1, M2, M3, MAX_OPS, NCOLS, NEG, NOPS, NW, O0, OP, SB, SHFL_MODES, SK,
                             SLOT, SREGS, TB, TK, VOTE_MODES)
from warpsim.ptx.syntax import MAX_REGISTER_SLOTS, Instruction, Label, Operand, register_slots, type_bytes

__all__ = ["Decoded", "decode_kernel", "OP", "TK", "TB", "SK", "SB", "M0", "M1", "M2", "M3", "GUARD",
           "GNEG", "LOC", "NOPS", "O0", "MAX_OPS", "NCOLS", "KIND", "SLOT", "NW", "IMM", "NEG",
           "K_NONE", "K_REG", "K_IMM", "K_SREG", "K_ADDR", "K_VEC", "K_LABEL", "SREGS", "ATOM_OPS",
           "SHFL_MODES", "VOTE_MODES"]


@dataclass(frozen=True)
class Where:
    """Where an instruction came from: its PTX line (and text) and its ``.loc`` source line."""

    ptx_line: int
    text: str
    source: str      # "k.cu:13" or "" (with "inlined at ..." where the .loc says so)

    def __str__(self):
        at = f"{self.source}, " if self.source else ""
        return f"{at}PTX line {self.ptx_line}: {self.text}"


@dataclass
class Decoded:
    """One kernel, decoded: see the module docstring for ``code`` and ``opnd``."""

    name: str
    code: np.ndarray
    opnd: np.ndarray
    copies: np.ndarray                 # int64[k, 3]: call argument/return copies (src, dst, bytes)
    where: list                        # Where per LOC row
    regs_per_thread: int
    params: list                       # kernel params: (name, type, offset, bytes, is_struct)
    param_bytes: int
    shared_static: int                 # where dynamic shared starts: the reserved bytes, then static ones
    local_bytes: int                   # per thread
    fparam_bytes: int                  # per thread: .func params and call scopes
    globals_: list                     # module .global variables: (name, offset, bytes, init)
    const: np.ndarray                  # the .const space, initialised
    reqntid: tuple = ()
    maxntid: tuple = ()
    reqnctapercluster: tuple = ()       # the cluster dims the kernel requires (__cluster_dims__), if any
    explicitcluster: bool = False       # .explicitcluster: launched with cluster dims
    reg_names: dict = field(default_factory=dict)   # name -> (slot, words, type) of the kernel
    consts: list = field(default_factory=list)      # module .const variables: (name, offset, bytes)
    shared: list = field(default_factory=list)      # .shared variables of the module and of the bodies of the
                                                    # kernel and its callees: (name, shared address, bytes);
                                                    # bytes None for an .extern one (the dynamic shared memory)
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    def derived(self, name, fn):
        """``fn(code)``, computed once for this kernel and kept under ``name`` (what each launch would otherwise
        compute again from the rows: the MUFU tables it needs, whether it needs sm_90's families). The rows are not
        changed after decoding."""
        if name not in self._derived:
            self._derived[name] = fn(self.code)
        return self._derived[name]


class _Function:
    """Per-function decoding state: registers, symbols and labels."""

    def __init__(self, f, base_pc):
        self.f = f
        self.base_pc = base_pc
        self.regs = {}
        self.symbols = {}
        self.labels = {}
        self.known = {}     # id(instruction) -> {register: value} known at compile time (warpsim.ptx.constants)
        self.early = {}     # id(instruction) -> the part of it known from its own segment (segment_constants)


class _Decoder(InstructionDecoder):
    def __init__(self, module, text_lines, fused=None):
        self.m = module
        self.lines = text_lines
        self.code = []
        self.opnd = []
        self.copies = []
        self.where = []
        self.where_index = {}
        self.nregs = 0
        self.local_top = 0
        self.fparam_top = 0
        self.shared_top = SHARED_BASE     # static .shared variables follow the reserved bytes
        self.module_symbols = {}
        self.patches = []          # (opnd row, function name) for call targets
        self.calls = {}            # function name -> _Function
        self.fused = fused if fused is not None else Rewrite()   # ptxas's contraction (warpsim.ptx.contraction)

    def error(self, tok, what, cls=PtxSyntaxError):
        where = f"{self.m.filename}:{tok.line}:{tok.col}" if tok is not None else self.m.filename
        text = f" at {tok.text!r}" if tok is not None else ""
        return cls(f"{where}: {what}{text}")

    # layout ---------------------------------------------------------------------------------------
    def module_layout(self):
        gvars = [v for v in self.m.variables if v.space == "global"]
        offsets = global_layout([self.var_bytes(v) for v in gvars])
        self.globals_ = []
        for v, off in zip(gvars, offsets):
            self.module_symbols[v.name] = (SP_GLOBAL, GLOBAL_BASE + off)
            self.globals_.append((v.name, off, self.var_bytes(v), v.init))
        const = bytearray()
        self.consts = []
        for v in self.m.variables:
            if v.space == "const":
                start = round_up(len(const), max(v.align, 1))
                const.extend(bytes(start - len(const)))
                data = v.init or b""
                const.extend(data + bytes(self.var_bytes(v) - len(data)))
                self.module_symbols[v.name] = (SP_CONST, start)
                self.consts.append((v.name, start, self.var_bytes(v)))
                const.extend(bytes(redzone(self.var_bytes(v))))     # an overrun faults, not reads the next one
        self.const = np.frombuffer(bytes(const), np.uint8).copy()
        self.externs = [v for v in self.m.variables if v.space == "shared" and v.extern]
        self.shared = []
        for v in self.m.variables:
            if v.space == "shared" and not v.extern:
                self.module_symbols[v.name] = (SP_SHARED, self.alloc_shared(v))
                self.shared.append((v.name, self.module_symbols[v.name][1], self.var_bytes(v)))

    def var_bytes(self, v):
        return type_bytes(v.type) * v.vector * max(v.count, 0)

    def alloc_shared(self, v):
        start = round_up(self.shared_top, max(v.align, type_bytes(v.type)))
        self.shared_top = start + self.var_bytes(v)
        return start

    def function_layout(self, fn, kernel):
        f = fn.f
        for v in [*f.regs, *self.fused.regs.get(f.name, ())]:
            if v.name in fn.regs:
                raise self.error(v.token, f"register {v.name} declared twice")
            if type_bytes(v.type) > 8:
                raise self.error(v.token, f"register type .{v.type} is not supported")
            nw = register_slots(v.type)
            fn.regs[v.name] = (self.nregs, nw, v.type)
            self.nregs += nw
        if kernel:
            self.params, top = [], 0
            for p in f.params:
                size = self.var_bytes(p)
                align = max(p.align, type_bytes(p.type))
                top = round_up(top, align)
                fn.symbols[p.name] = (SP_KPARAM, KPARAM_BASE + top)
                self.params.append((p.name, p.type, top, size, bool(p.array)))
                top += size
            self.param_bytes = top
        else:
            for p in f.params + f.returns:
                fn.symbols[p.name] = (SP_FPARAM, self.alloc_fparam(p))
        for v in f.locals:
            if v.space == "local":
                self.local_top = round_up(self.local_top, max(v.align, type_bytes(v.type), 8))
                fn.symbols[v.name] = (SP_LOCAL, self.local_top)
                self.local_top += self.var_bytes(v)
            elif v.space == "shared":
                fn.symbols[v.name] = (SP_SHARED, self.alloc_shared(v))
                self.shared.append((v.name, fn.symbols[v.name][1], self.var_bytes(v)))
            else:
                fn.symbols[v.name] = (SP_FPARAM, self.alloc_fparam(v))

    def alloc_fparam(self, v):
        start = round_up(self.fparam_top, max(v.align, type_bytes(v.type), 8))
        self.fparam_top = start + self.var_bytes(v)
        return start

    def shared_externs(self):
        top = round_up(self.shared_top, max([16] + [v.align for v in self.externs]))
        for v in self.externs:
            self.module_symbols[v.name] = (SP_SHARED, top)
            self.shared.append((v.name, top, None))
        self.shared_static = top

    # operands -------------------------------------------------------------------------------------
    def symbol(self, fn, name):
        if name in fn.symbols:
            return fn.symbols[name]
        return self.module_symbols.get(name)

    def add_opnd(self, kind, slot=-1, nw=0, imm=0, neg=0):
        self.opnd.append((kind, slot, nw, imm, int(neg)))
        return len(self.opnd) - 1

    def reg(self, fn, op, want=None):
        if op.name not in fn.regs:
            raise self.error(op.token, f"undeclared register {op.name}")
        slot, nw, rtype = fn.regs[op.name]
        if want == "pred" and rtype != "pred":
            raise self.error(op.token, f"expected a predicate register, got .{rtype} {op.name}")
        return slot, nw

    def operand(self, fn, op, pred=False):
        """The opnd row of a value operand (register, immediate, special register, symbol)."""
        k = op.kind
        if k == "reg":
            slot, nw = self.reg(fn, op, "pred" if pred else None)
            return self.add_opnd(K_REG, slot, nw, 0, op.neg)
        if k in ("imm", "fimm"):       # 64-bit patterns from 2**63 up are kept as their int64 (same bits)
            return self.add_opnd(K_IMM, imm=op.value - (1 << 64) if op.value >= 1 << 63 else op.value)
        if k == "sreg":
            if op.name not in SREGS:
                raise self.error(op.token, f"unknown special register (known: {', '.join(SREGS)})")
            return self.add_opnd(K_SREG, imm=SREGS[op.name])
        if k == "sym" and op.name in fn.regs and not op.value:   # a register named without '%' ({.reg .f16 low;})
            slot, nw = self.reg(fn, op, "pred" if pred else None)
            return self.add_opnd(K_REG, slot, nw, 0, op.neg)
        if k == "sym":
            sym = self.symbol(fn, op.name)
            if sym is None:
                raise self.error(op.token, "unknown symbol")
            return self.add_opnd(K_IMM, imm=sym[1] + op.value)
        if k == "sink":
            return self.add_opnd(K_NONE)
        if k == "vec":
            rows = [self.operand(fn, item) for item in op.items]
            return self.add_opnd(K_VEC, rows[0] if rows else -1, len(rows))
        raise self.error(op.token, f"unexpected {k} operand")

    def address(self, fn, op, space):
        """``(opnd row, space)`` of ``[base+offset]``; a symbol base decides a .param space."""
        if op.kind != "addr":
            raise self.error(op.token, "expected an address [...]")
        base = op.base
        if base is None:
            return self.add_opnd(K_ADDR, -1, 0, op.value), space
        if base.kind == "reg" or base.name in fn.regs:   # a register named without % (inline asm's own .reg)
            slot, nw = self.reg(fn, base)
            return self.add_opnd(K_ADDR, slot, nw, op.value), space
        sym = self.symbol(fn, base.name)
        if sym is None:
            raise self.error(base.token, "unknown variable in address")
        sym_space, addr = sym
        if space == SP_KPARAM:
            space = sym_space
        if space == SP_GENERIC:
            addr = to_generic(sym_space, addr)
        elif sym_space != space:
            raise self.error(base.token, f"variable in .{SPACE_NAMES[sym_space]} used by a "
                                         f".{SPACE_NAMES[space]} access")
        return self.add_opnd(K_ADDR, -1, 0, addr + op.value), space

    # instructions ---------------------------------------------------------------------------------
    def loc_row(self, ins):
        tok = ins.token
        src = ""
        if ins.loc is not None and ins.loc.line > 0:
            src = self.source_name(ins.loc)
            if ins.loc.inlined_at is not None and ins.loc.inlined_at.line > 0:
                src += f" (inlined at {self.source_name(ins.loc.inlined_at)})"
        text = self.lines[tok.line - 1].strip() if 0 < tok.line <= len(self.lines) else ins.opcode
        if ins.fused:                                   # what the debugger and fault messages show of it
            text += f"  // ptxas: one FMA with line {ins.fused[0]}"
        key = (tok.line, src)
        if key not in self.where_index:
            self.where_index[key] = len(self.where)
            self.where.append(Where(tok.line, text, src))
        return self.where_index[key]

    def source_name(self, loc):
        path = self.m.files.get(loc.file, f"file{loc.file}")
        return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{loc.line}"

    def emit(self, fn, ins, op, types=(None, None), mods=(0, 0, 0, 0), operands=()):
        if len(operands) > MAX_OPS:
            raise self.error(ins.token, f"more than {MAX_OPS} operands")
        row = [0] * NCOLS
        row[OP] = int(op)
        (row[TK], row[TB]) = TYPES[types[0]] if types[0] else (0, 0)
        (row[SK], row[SB]) = TYPES[types[1]] if types[1] else (0, 0)
        row[M0:M3 + 1] = [int(x) for x in mods]
        if ins.guard is not None:
            slot, _ = self.reg(fn, Operand("reg", ins.guard, token=ins.token), "pred")
            row[GUARD], row[GNEG] = slot, int(ins.guard_neg)
        else:
            row[GUARD] = -1
        row[LOC] = self.loc_row(ins)
        row[NOPS] = len(operands)
        for k, o in enumerate(operands):
            row[O0 + k] = o
        self.code.append(row)

    def param_var(self, fn, o):
        sym = self.symbol(fn, o.name) if o.kind == "sym" else None
        if sym is None or sym[0] != SP_FPARAM:
            raise self.error(o.token, "call: arguments must be .param variables")
        var = next((v for v in fn.f.locals + fn.f.params + fn.f.returns if v.name == o.name), None)
        return sym[1], self.var_bytes(var) if var is not None else 8

    def pending_layout(self, name, ins):
        fn = self.calls.get(name)
        if fn is None:
            fn = _Function(self.m.functions[name], -1)
            self.function_layout(fn, kernel=False)
            self.calls[name] = fn
        return fn

    # functions ------------------------------------------------------------------------------------
    def body(self, fn, kernel):
        fn.base_pc = len(self.code)
        pc = fn.base_pc
        for item in fn.f.body:
            if isinstance(item, Label):
                if item.name in fn.labels:
                    raise self.error(item.token, "label defined twice")
                fn.labels[item.name] = pc
            else:
                pc += 1 + len(self.fused.before.get(id(item), ()))
        instructions = [item for item in fn.f.body if isinstance(item, Instruction)]
        if any(item.opcode in ("bfe", "bfi") for item in instructions):      # the only readers of what is known
            fn.known = {id(item): known for item, known in zip(instructions, known_constants(fn.f))}
            fn.early = {id(item): known for item, known in zip(instructions, segment_constants(fn.f))}
        last = None
        for item in fn.f.body:
            if isinstance(item, Instruction):
                for move in self.fused.before.get(id(item), ()):
                    self.instruction(fn, move)
                self.instruction(fn, self.fused.replace.get(id(item), item))
                last = item
        closing = Instruction("exit" if kernel else "ret", (), [], None, False,
                              last.token if last else fn.f.token, last.loc if last else None)
        self.emit(fn, closing, Op.EXIT if kernel else Op.RET)


def decode_kernel(module, name, text="", fused=None):
    """The :class:`Decoded` arrays of kernel ``name`` of ``module`` (and the functions it calls).

    ``text``: the PTX source (for instruction text in messages); ``fused``: the instructions to run in place of
    the ``add``/``sub`` that ptxas fused with a ``mul`` (:func:`warpsim.ptx.contraction.fused_instructions`). Raises ``PtxSyntaxError`` for an
    unknown instruction or operand, ``UnsupportedType`` for a type or shape warpsim does not model.
    """
    f = module.functions[name]
    d = _Decoder(module, text.splitlines(), fused)
    d.module_layout()
    kfn = _Function(f, 0)
    d.function_layout(kfn, kernel=True)
    for callee in _reachable(module, f):           # every static .shared is placed before the dynamic one
        d.pending_layout(callee, None)
    if d.nregs > MAX_REGISTER_SLOTS:                 # each function is within it (the parser checks): together?
        tok = f.token
        raise PtxSyntaxError(f"{module.filename}:{tok.line}:{tok.col}: kernel {name} and the functions it calls "
                             f"({', '.join(d.calls)}) declare {d.nregs} register slots (32-bit words) per thread; "
                             f"warpsim allows at most {MAX_REGISTER_SLOTS} (see docs/ptx.md, \"Limits\")")
    d.shared_externs()
    _check_recursion(d, module)
    d.body(kfn, kernel=True)
    for n in list(d.calls):
        d.body(d.calls[n], kernel=False)
    entry = {n: fn.base_pc for n, fn in d.calls.items()}
    for row, target in d.patches:
        d.opnd[row] = (K_LABEL, -1, 0, entry[target], 0)
    reqntid = f.directives.get("reqntid", ())
    maxntid = f.directives.get("maxntid", ())
    return Decoded(
        name=name, code=np.array(d.code, np.int64).reshape(-1, NCOLS),
        opnd=np.array(d.opnd or [(0, -1, 0, 0, 0)], np.int64),
        copies=np.array(d.copies or [(0, 0, 0)], np.int64).reshape(-1, 3),
        where=d.where, regs_per_thread=max(d.nregs, 1), params=d.params, param_bytes=d.param_bytes,
        shared_static=d.shared_static, local_bytes=d.local_top, fparam_bytes=d.fparam_top,
        globals_=d.globals_, const=d.const, reqntid=reqntid, maxntid=maxntid,
        reqnctapercluster=f.directives.get("reqnctapercluster", ()), explicitcluster="explicitcluster" in f.directives,
        reg_names=kfn.regs,
        consts=d.consts, shared=d.shared)


def _callees(f):
    names = []
    for i in f.body:
        if isinstance(i, Instruction) and i.opcode == "call":
            ops = [o for o in i.operands if o.kind == "sym"]
            if ops and ops[0].name != "vprintf":
                names.append(ops[0].name)
    return names


def _reachable(module, f):
    """Names of the functions with a body that ``f`` calls, directly or not, in first-call order."""
    seen, todo = [], _callees(f)
    while todo:
        n = todo.pop(0)
        g = module.functions.get(n)
        if n in seen or g is None or g.declared_only:
            continue
        seen.append(n)
        todo.extend(_callees(g))
    return seen


def _check_recursion(d, module):
    graph = {fname: _callees(fn.f) for fname, fn in d.calls.items()}
    state = {}

    def visit(n, path):
        if state.get(n) == 1:
            raise PtxSyntaxError(f"{module.filename}: recursive call chain {' -> '.join(path + [n])} "
                                 f"is not supported")
        if state.get(n) == 2:
            return
        state[n] = 1
        for m in graph.get(n, ()):
            visit(m, path + [n])
        state[n] = 2

    for n in graph:
        visit(n, [])
