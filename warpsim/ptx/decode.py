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

from warpsim.errors import PtxSyntaxError, UnsupportedType
from warpsim.isa.arith import AB_TYPES, CD_TYPES
from warpsim.isa.cvt import CVT_TYPES
from warpsim.isa.ldmatrix import ldmatrix_variant
from warpsim.isa.mma import SHAPES, TYPE_COMBOS
from warpsim.ptx.memory import (GLOBAL_BASE, SP_CONST, SP_FPARAM, SP_GENERIC,
                                SP_GLOBAL, SP_KPARAM, SP_LOCAL, SP_SHARED, SPACE_NAMES, global_layout,
                                round_up, to_generic)
from warpsim.ptx.opcodes import (BOOL, CMP, FLOAT_OPS, OPCODES, TK_B, TK_BF, TK_F, TK_F16X2, TK_BF16X2,
                                 TK_PRED, TK_S, TK_U, TYPES, Op, supported_names, type_of)
from warpsim.ptx.syntax import Instruction, Label, Operand, type_bytes

__all__ = ["Decoded", "decode_kernel", "OP", "TK", "TB", "SK", "SB", "M0", "M1", "M2", "M3", "GUARD",
           "GNEG", "LOC", "NOPS", "O0", "MAX_OPS", "NCOLS", "KIND", "SLOT", "NW", "IMM", "NEG",
           "K_NONE", "K_REG", "K_IMM", "K_SREG", "K_ADDR", "K_VEC", "K_LABEL", "SREGS", "ATOM_OPS",
           "SHFL_MODES", "VOTE_MODES"]

OP, TK, TB, SK, SB, M0, M1, M2, M3, GUARD, GNEG, LOC, NOPS = range(13)
O0 = 13
MAX_OPS = 8
NCOLS = O0 + MAX_OPS
KIND, SLOT, NW, IMM, NEG = range(5)
K_NONE, K_REG, K_IMM, K_SREG, K_ADDR, K_VEC, K_LABEL = range(7)

# special registers: name -> code (the interpreter's ``_special``)
SREGS = {name: code for code, name in enumerate((
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
    "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
    "%clock", "%clock64", "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt",
    "%lanemask_ge", "%gridid", "%globaltimer", "%dynamic_smem_size", "%total_smem_size"))}
ATOM_OPS = {n: k for k, n in enumerate(("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch",
                                         "cas"))}
SHFL_MODES = {"up": 0, "down": 1, "bfly": 2, "idx": 3}
VOTE_MODES = {"all": 0, "any": 1, "uni": 2, "ballot": 3}
PRMT_MODES = {"f4e": 1, "b4e": 2, "rc8": 3, "ecl": 4, "ecr": 5, "rc16": 6}
_SPACES = {"global": SP_GLOBAL, "shared": SP_SHARED, "local": SP_LOCAL, "const": SP_CONST,
           "param": SP_KPARAM}
_IGNORED = ("sync", "aligned", "uni", "volatile", "relaxed", "acquire", "release", "acq_rel", "weak",
            "sys", "gpu", "cta", "cluster", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "ftz", "approx")


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
    shared_static: int                 # bytes of static shared memory; dynamic shared starts here
    local_bytes: int                   # per thread
    fparam_bytes: int                  # per thread: .func params and call scopes
    globals_: list                     # module .global variables: (name, offset, bytes, init)
    const: np.ndarray                  # the .const space, initialised
    reqntid: tuple = ()
    reg_names: dict = field(default_factory=dict)   # name -> (slot, words, type) of the kernel


class _Function:
    """Per-function decoding state: registers, symbols and labels."""

    def __init__(self, f, base_pc):
        self.f = f
        self.base_pc = base_pc
        self.regs = {}
        self.symbols = {}
        self.labels = {}


class _Decoder:
    def __init__(self, module, text_lines):
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
        self.shared_top = 0
        self.module_symbols = {}
        self.patches = []          # (opnd row, function name) for call targets
        self.calls = {}            # function name -> _Function

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
        for v in self.m.variables:
            if v.space == "const":
                start = round_up(len(const), max(v.align, 1))
                const.extend(bytes(start - len(const)))
                data = v.init or b""
                const.extend(data + bytes(self.var_bytes(v) - len(data)))
                self.module_symbols[v.name] = (SP_CONST, start)
        self.const = np.frombuffer(bytes(const), np.uint8).copy()
        self.externs = [v for v in self.m.variables if v.space == "shared" and v.extern]
        for v in self.m.variables:
            if v.space == "shared" and not v.extern:
                self.module_symbols[v.name] = (SP_SHARED, self.alloc_shared(v))

    def var_bytes(self, v):
        return type_bytes(v.type) * v.vector * max(v.count, 0)

    def alloc_shared(self, v):
        start = round_up(self.shared_top, max(v.align, type_bytes(v.type)))
        self.shared_top = start + self.var_bytes(v)
        return start

    def function_layout(self, fn, kernel):
        f = fn.f
        for v in f.regs:
            if v.name in fn.regs:
                raise self.error(v.token, f"register {v.name} declared twice")
            nw = 2 if type_bytes(v.type) == 8 else 1
            if type_bytes(v.type) > 8:
                raise self.error(v.token, f"register type .{v.type} is not supported")
            fn.regs[v.name] = (self.nregs, nw, v.type)
            self.nregs += nw
        if kernel:
            self.params, top = [], 0
            for p in f.params:
                size = self.var_bytes(p)
                align = max(p.align, type_bytes(p.type))
                top = round_up(top, align)
                fn.symbols[p.name] = (SP_KPARAM, top)
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
        if k == "imm":
            return self.add_opnd(K_IMM, imm=op.value)
        if k == "fimm":
            return self.add_opnd(K_IMM, imm=op.value - (1 << 64) if op.value >= 1 << 63 else op.value)
        if k == "sreg":
            if op.name not in SREGS:
                raise self.error(op.token, f"unknown special register (known: {', '.join(SREGS)})")
            return self.add_opnd(K_SREG, imm=SREGS[op.name])
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
        if base.kind == "reg":
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

    def one_type(self, ins, types, allow_float=False):
        if not types:
            raise self.error(ins.token, f"{ins.opcode}: missing a type (.u32, .s64, .b16, ...)")
        t = types[-1]
        if not allow_float and TYPES[t][0] in (TK_F, TK_BF, TK_F16X2, TK_BF16X2):
            raise self.error(ins.token, f"float instruction {ins.opcode}.{'.'.join(ins.mods)} is not "
                                        f"supported yet (integer and bit types only; supported: "
                                        f"{', '.join(supported_names())})", UnsupportedType)
        return t

    def instruction(self, fn, ins):
        name = ins.opcode
        mods = ins.mods
        types = type_of(mods)
        ops = ins.operands
        if name not in OPCODES:
            raise self.error(ins.token, f"unknown instruction {name!r} (supported: "
                                        f"{', '.join(supported_names())})")
        op = OPCODES[name]
        handler = getattr(self, f"do_{op.name.lower()}", None)
        if handler is None:
            handler = self.do_alu
        try:
            handler(fn, ins, op, mods, types, ops)
        except (IndexError, KeyError) as exc:
            raise self.error(ins.token, f"malformed operands for {name}.{'.'.join(mods)} ({exc})") from None

    def count(self, ins, ops, *ns):
        if len(ops) not in ns:
            raise self.error(ins.token, f"{ins.opcode} takes {' or '.join(map(str, ns))} operands, "
                                        f"got {len(ops)}")

    def do_alu(self, fn, ins, op, mods, types, ops):
        if op == Op.FENCE:
            return self.emit(fn, ins, Op.FENCE)
        t = self.one_type(ins, types)
        mode = 2 if "wide" in mods else 1 if "hi" in mods else 0
        cc = 1 if "cc" in mods else 0
        m0 = PRMT_MODES.get(next((x for x in mods if x in PRMT_MODES), ""), 0) if op == Op.PRMT else mode
        arity = {Op.ABS: 1, Op.NEG: 1, Op.NOT: 1, Op.CNOT: 1, Op.POPC: 1, Op.CLZ: 1, Op.BREV: 1,
                 Op.MAD: 3, Op.MADC: 3, Op.BFE: 3, Op.BFI: 4, Op.PRMT: 3, Op.SAD: 3}.get(op, 2)
        self.count(ins, ops, arity + 1)
        if TYPES[t][0] == TK_PRED and op not in (Op.AND, Op.OR, Op.XOR, Op.NOT):
            raise self.error(ins.token, f"{name_of(ins)}: .pred is not allowed here")
        if TYPES[t][1] == 128:
            raise self.error(ins.token, f"{name_of(ins)}: 128-bit arithmetic is not supported",
                             UnsupportedType)
        rows = [self.operand(fn, o) for o in ops]
        self.emit(fn, ins, op, (t, None), (m0, "sat" in mods, cc, 0), rows)

    def do_setp(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types)
        cmp = next((m for m in mods if m in CMP), None)
        if cmp is None:
            raise self.error(ins.token, f"{name_of(ins)}: unknown comparison (integer ones: {', '.join(CMP)})")
        boolop = next((BOOL[m] for m in mods if m in BOOL), 0)
        self.count(ins, ops, 4 if boolop else 3)
        d = ops[0]
        p = self.operand(fn, d, pred=True)
        q = self.operand(fn, d.pair, pred=True) if d.pair is not None else self.add_opnd(K_NONE)
        rows = [p, q, self.operand(fn, ops[1]), self.operand(fn, ops[2])]
        if boolop:
            rows.append(self.operand(fn, ops[3], pred=True))
        self.emit(fn, ins, op, (t, None), (CMP[cmp], boolop, 0, 0), rows)

    def do_set(self, fn, ins, op, mods, types, ops):
        raise self.error(ins.token, "set is not supported (use setp + selp)", UnsupportedType)

    def do_selp(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types, allow_float=True)
        self.count(ins, ops, 4)
        rows = [self.operand(fn, o) for o in ops[:3]] + [self.operand(fn, ops[3], pred=True)]
        self.emit(fn, ins, op, (t, None), operands=rows)

    def do_slct(self, fn, ins, op, mods, types, ops):
        if len(types) != 2 or types[1] != "s32":
            raise self.error(ins.token, f"{name_of(ins)}: only slct.<type>.s32 is supported", UnsupportedType)
        self.count(ins, ops, 4)
        self.emit(fn, ins, op, (types[0], types[1]), operands=[self.operand(fn, o) for o in ops])

    def do_mov(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types, allow_float=True)
        self.count(ins, ops, 2)
        mode = 1 if ops[1].kind == "vec" else 2 if ops[0].kind == "vec" else 0
        self.emit(fn, ins, op, (t, None), (mode, 0, 0, 0), [self.operand(fn, o) for o in ops])

    def do_cvt(self, fn, ins, op, mods, types, ops):
        if len(types) != 2:
            raise self.error(ins.token, f"{name_of(ins)}: cvt needs a destination and a source type")
        dt, st = types
        if dt in ("f16x2", "bf16x2") and st == "f32" and "rn" in mods and "relu" not in mods \
                and "satfinite" not in mods:
            self.count(ins, ops, 3)
            self.emit(fn, ins, op, (dt, st), (1, 0, CVT_TYPES[dt[:-2]], 0), [self.operand(fn, o) for o in ops])
            return
        for t in (dt, st):
            if TYPES[t][0] not in (TK_B, TK_U, TK_S):
                raise self.error(ins.token, f"{name_of(ins)}: float conversions are not supported yet "
                                            f"(integer cvt and cvt.rn.f16x2/bf16x2.f32 are)", UnsupportedType)
        self.count(ins, ops, 2)
        self.emit(fn, ins, op, (dt, st), (0, "sat" in mods, 0, 0), [self.operand(fn, o) for o in ops])

    def do_cvta(self, fn, ins, op, mods, types, ops):
        space = next((_SPACES[m] for m in mods if m in _SPACES), None)
        if space is None or not types:
            raise self.error(ins.token, f"{name_of(ins)}: expected cvta[.to].space.u32|u64")
        self.count(ins, ops, 2)
        self.emit(fn, ins, op, (types[-1], None), (space, "to" in mods, 0, 0),
                  [self.operand(fn, o) for o in ops])

    def space_of(self, ins, mods):
        for m in mods:
            base = m.split("::")[0]
            if base in _SPACES:
                return _SPACES[base]
        return SP_GENERIC

    def do_ld(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types, allow_float=True)
        vec = next((int(m[1:]) for m in mods if m in ("v2", "v4", "v8")), 1)
        self.count(ins, ops, 2)
        data, addr = (ops[0], ops[1]) if op == Op.LD else (ops[1], ops[0])
        if (data.kind == "vec") != (vec > 1) or (vec > 1 and len(data.items) != vec):
            raise self.error(ins.token, f"{name_of(ins)}: the register operand does not match .v{vec}")
        arow, space = self.address(fn, addr, self.space_of(ins, mods))
        drow = self.operand(fn, data)
        rows = [drow, arow] if op == Op.LD else [arow, drow]
        self.emit(fn, ins, op, (t, None), (space, vec, 0, 0), rows)

    do_st = do_ld

    def do_atom(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types)
        aop = next((m for m in mods if m in ATOM_OPS), None)
        if aop is None:
            raise self.error(ins.token, f"{name_of(ins)}: unknown atomic operation (known: {', '.join(ATOM_OPS)})")
        if TYPES[t][1] not in (32, 64):
            raise self.error(ins.token, f"{name_of(ins)}: only 32- and 64-bit atomics are supported",
                             UnsupportedType)
        space = self.space_of(ins, mods)
        if op == Op.RED:
            self.count(ins, ops, 2)
            arow, space = self.address(fn, ops[0], space)
            rows = [self.add_opnd(K_NONE), arow, self.operand(fn, ops[1])]
        else:
            self.count(ins, ops, 4 if aop == "cas" else 3)
            arow, space = self.address(fn, ops[1], space)
            rows = [self.operand(fn, ops[0]), arow] + [self.operand(fn, o) for o in ops[2:]]
        if space not in (SP_GLOBAL, SP_SHARED, SP_GENERIC):
            raise self.error(ins.token, f"{name_of(ins)}: atomics work on .global and .shared")
        self.emit(fn, ins, Op.ATOM, (t, None), (space, ATOM_OPS[aop], 0, 0), rows)

    do_red = do_atom

    def do_cp_async(self, fn, ins, op, mods, types, ops):
        if not mods or mods[0] != "async" or "bulk" in mods:
            raise self.error(ins.token, f"{name_of(ins)}: only cp.async (non-bulk) is supported", UnsupportedType)
        if "commit_group" in mods:
            return self.emit(fn, ins, Op.CP_COMMIT)
        if "wait_group" in mods:
            self.count(ins, ops, 1)
            return self.emit(fn, ins, Op.CP_WAIT, mods=(ops[0].value, 0, 0, 0))
        if "wait_all" in mods:
            return self.emit(fn, ins, Op.CP_WAIT_ALL)
        self.count(ins, ops, 3, 4)
        size = ops[2].value
        if ops[2].kind != "imm" or size not in (4, 8, 16) or ("cg" in mods and size != 16):
            raise self.error(ins.token, f"{name_of(ins)}: cp-size must be 4, 8 or 16 (16 for .cg)")
        dst, _ = self.address(fn, ops[0], SP_SHARED)
        src, _ = self.address(fn, ops[1], SP_GLOBAL)
        rows = [dst, src] + ([self.operand(fn, ops[3])] if len(ops) == 4 else [])
        self.emit(fn, ins, Op.CP_ASYNC, mods=(size, 0, 0, 0), operands=rows)

    def do_shfl(self, fn, ins, op, mods, types, ops):
        mode = next((SHFL_MODES[m] for m in mods if m in SHFL_MODES), None)
        if mode is None or "sync" not in mods:
            raise self.error(ins.token, f"{name_of(ins)}: expected shfl.sync.{{up,down,bfly,idx}}.b32")
        self.count(ins, ops, 5)
        d = ops[0]
        q = self.operand(fn, d.pair, pred=True) if d.pair is not None else self.add_opnd(K_NONE)
        rows = [self.operand(fn, d), q] + [self.operand(fn, o) for o in ops[1:]]
        self.emit(fn, ins, op, ("b32", None), (mode, 0, 0, 0), rows)

    def do_vote(self, fn, ins, op, mods, types, ops):
        mode = next((VOTE_MODES[m] for m in mods if m in VOTE_MODES), None)
        if mode is None or "sync" not in mods:
            raise self.error(ins.token, f"{name_of(ins)}: expected vote.sync.{{all,any,uni,ballot}}")
        self.count(ins, ops, 3)
        rows = [self.operand(fn, ops[0]), self.operand(fn, ops[1], pred=True), self.operand(fn, ops[2])]
        self.emit(fn, ins, op, mods=(mode, 0, 0, 0), operands=rows)

    def do_match(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types)
        self.count(ins, ops, 3)
        d = ops[0]
        q = self.operand(fn, d.pair, pred=True) if d.pair is not None else self.add_opnd(K_NONE)
        rows = [self.operand(fn, d), q, self.operand(fn, ops[1]), self.operand(fn, ops[2])]
        self.emit(fn, ins, op, (t, None), ("all" in mods, 0, 0, 0), rows)

    def do_bar(self, fn, ins, op, mods, types, ops):
        if "warp" in mods:
            self.count(ins, ops, 1)
            return self.emit(fn, ins, op, mods=(2, 1, 0, 0), operands=[self.operand(fn, ops[0])])
        if "red" in mods or "cluster" in mods:
            raise self.error(ins.token, f"{name_of(ins)} is not supported", UnsupportedType)
        kind = 1 if "arrive" in mods else 0
        aligned = ins.opcode == "bar" or "aligned" in mods
        self.count(ins, ops, 1, 2)
        rows = [self.operand(fn, o) for o in ops]
        self.emit(fn, ins, op, mods=(kind, aligned, 0, 0), operands=rows)

    def matrix_variant(self, ins, mods):
        num = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), None)
        if num is None or "m8n8" not in mods or "b16" not in mods:
            raise self.error(ins.token, f"{name_of(ins)}: only .m8n8.x1/.x2/.x4[.trans].shared.b16 is "
                                        f"supported", UnsupportedType)
        return num, ldmatrix_variant(num, "trans" in mods)

    def do_ldmatrix(self, fn, ins, op, mods, types, ops):
        num, variant = self.matrix_variant(ins, mods)
        self.count(ins, ops, 2)
        vec, addr = (ops[0], ops[1]) if op == Op.LDMATRIX else (ops[1], ops[0])
        if vec.kind != "vec" or len(vec.items) != num or any(i.kind != "reg" for i in vec.items):
            raise self.error(ins.token, f"{name_of(ins)}: expected {{{num} registers}}")
        arow, space = self.address(fn, addr, self.space_of(ins, mods))
        vrow = self.operand(fn, vec)
        rows = [vrow, arow] if op == Op.LDMATRIX else [arow, vrow]
        self.emit(fn, ins, op, mods=(variant, space, num, 0), operands=rows)

    do_stmatrix = do_ldmatrix

    def do_mma(self, fn, ins, op, mods, types, ops):
        shape = next((m for m in mods if m.startswith("m") and "n" in m and "k" in m), "")
        tnames = [m for m in mods if m in TYPES]
        ok = (shape in SHAPES and "row" in mods and "col" in mods and len(tnames) == 4
              and tnames[1] == tnames[2] and tnames[0] == tnames[3]
              and (tnames[1], tnames[0]) in TYPE_COMBOS)
        if not ok:
            raise self.error(ins.token, f"{name_of(ins)}: mma shape/type not modelled (warpsim models "
                                        f"{', '.join(SHAPES)} .row.col with (ab, cd) in {TYPE_COMBOS})",
                             UnsupportedType)
        self.count(ins, ops, 4)
        ab, cd = tnames[1], tnames[0]
        want = {"m16n8k16": (4, 2), "m16n8k8": (2, 1)}[shape] + (4 if cd == "f32" else 2,)
        want = (want[2], want[0], want[1], want[2])
        for o, n in zip(ops, want):
            if o.kind != "vec" or len(o.items) != n or any(i.kind != "reg" for i in o.items):
                raise self.error(o.token or ins.token, f"{name_of(ins)}: expected {n} registers in braces")
        rows = [self.operand(fn, o) for o in ops]
        self.emit(fn, ins, op, mods=(SHAPES[shape], AB_TYPES[ab], CD_TYPES[cd], 0), operands=rows)

    def do_activemask(self, fn, ins, op, mods, types, ops):
        self.count(ins, ops, 1)
        self.emit(fn, ins, op, operands=[self.operand(fn, ops[0])])

    def do_bra(self, fn, ins, op, mods, types, ops):
        self.count(ins, ops, 1)
        target = ops[0]
        if target.kind != "sym" or target.name not in fn.labels:
            raise self.error(target.token, "unknown branch target")
        self.emit(fn, ins, op, operands=[self.add_opnd(K_LABEL, imm=fn.labels[target.name])])

    def do_ret(self, fn, ins, op, mods, types, ops):
        self.emit(fn, ins, op)

    do_exit = do_ret
    do_trap = do_ret

    def do_call(self, fn, ins, op, mods, types, ops):
        rets, args = [], []
        rest = list(ops)
        if rest and rest[0].kind == "list":
            rets = rest.pop(0).items
        if not rest or rest[0].kind != "sym":
            raise self.error(ins.token, "call: expected a function name (indirect calls are not supported)")
        target = rest.pop(0)
        if rest and rest[0].kind == "list":
            args = rest.pop(0).items
        callee = self.m.functions.get(target.name)
        if callee is None:
            raise self.error(target.token, "call of an undeclared function")
        vars_ = [self.param_var(fn, o) for o in args]
        outs = [self.param_var(fn, o) for o in rets]
        if target.name == "vprintf":
            if len(vars_) != 2:
                raise self.error(ins.token, "vprintf takes 2 arguments")
            out = outs[0][0] if outs else -1
            return self.emit(fn, ins, Op.PRINTF, mods=(vars_[0][0], vars_[1][0], out, 0))
        if callee.declared_only:
            raise self.error(target.token, "call of a function without a body (only vprintf is built in)",
                             UnsupportedType)
        if len(vars_) != len(callee.params) or len(outs) != len(callee.returns):
            raise self.error(ins.token, f"call of {target.name}: {len(vars_)} arguments and {len(outs)} "
                                        f"returns, the function has {len(callee.params)} and "
                                        f"{len(callee.returns)}")
        target_fn = self.callee(target.name, ins)
        start = len(self.copies)
        for (off, size), p in zip(vars_, callee.params):
            self.copies.append((off, target_fn.symbols[p.name][1], min(size, self.var_bytes(p))))
        for (off, size), p in zip(outs, callee.returns):
            self.copies.append((target_fn.symbols[p.name][1], off, min(size, self.var_bytes(p))))
        label = self.add_opnd(K_LABEL, imm=-1)
        self.patches.append((label, target.name))
        self.emit(fn, ins, op, mods=(start, len(vars_), len(outs), 0), operands=[label])

    def param_var(self, fn, o):
        sym = self.symbol(fn, o.name) if o.kind == "sym" else None
        if sym is None or sym[0] != SP_FPARAM:
            raise self.error(o.token, "call: arguments must be .param variables")
        var = next((v for v in fn.f.locals + fn.f.params + fn.f.returns if v.name == o.name), None)
        return sym[1], self.var_bytes(var) if var is not None else 8

    def callee(self, name, ins):
        return self.pending_layout(name, ins)

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
                pc += 1
        last = None
        for item in fn.f.body:
            if isinstance(item, Instruction):
                self.instruction(fn, item)
                last = item
        closing = Instruction("exit" if kernel else "ret", (), [], None, False,
                              last.token if last else fn.f.token, last.loc if last else None)
        self.emit(fn, closing, Op.EXIT if kernel else Op.RET)


def name_of(ins):
    return ".".join((ins.opcode,) + tuple(ins.mods))


def decode_kernel(module, name, text=""):
    """The :class:`Decoded` arrays of kernel ``name`` of ``module`` (and the functions it calls).

    ``text``: the PTX source (for instruction text in messages). Raises ``PtxSyntaxError`` for an
    unknown instruction or operand, ``UnsupportedType`` for a type or shape warpsim does not model.
    """
    f = module.functions[name]
    d = _Decoder(module, text.splitlines())
    d.module_layout()
    kfn = _Function(f, 0)
    d.function_layout(kfn, kernel=True)
    for callee in _reachable(module, f):           # every static .shared is placed before the dynamic one
        d.pending_layout(callee, None)
    d.shared_externs()
    _check_recursion(d, module)
    d.body(kfn, kernel=True)
    for n in list(d.calls):
        d.body(d.calls[n], kernel=False)
    entry = {n: fn.base_pc for n, fn in d.calls.items()}
    for row, target in d.patches:
        d.opnd[row] = (K_LABEL, -1, 0, entry[target], 0)
    reqntid = f.directives.get("reqntid", ())
    return Decoded(
        name=name, code=np.array(d.code, np.int64).reshape(-1, NCOLS),
        opnd=np.array(d.opnd or [(0, -1, 0, 0, 0)], np.int64),
        copies=np.array(d.copies or [(0, 0, 0)], np.int64).reshape(-1, 3),
        where=d.where, regs_per_thread=max(d.nregs, 1), params=d.params, param_bytes=d.param_bytes,
        shared_static=d.shared_static, local_bytes=d.local_top, fparam_bytes=d.fparam_top,
        globals_=d.globals_, const=d.const, reqntid=reqntid, reg_names=kfn.regs)


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
