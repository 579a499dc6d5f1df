"""Decoding one PTX instruction into a row: the operand pattern and modifiers of each instruction family.

A mixin of :class:`warpsim.ptx.decode._Decoder`: ``instruction(fn, ins)`` dispatches on the opcode's
:class:`~warpsim.ptx.opcodes.Op` to a ``do_<op>`` method, which checks the operands, adds their rows
(``operand``, ``address``) and emits the instruction row (``emit``) with its types and modifiers.
Unknown instructions are a ``PtxSyntaxError`` listing the supported ones; types and shapes warpsim
does not model are an ``UnsupportedType``.
"""

from warpsim.errors import UnsupportedType
from warpsim.isa.cvt import CVT_TYPES
from warpsim.ptx.alu import BFE_FOLDED, BFI_FOLDED
from warpsim.ptx.families import DECODERS
from warpsim.ptx.families.common import FamilyDecoder, name_of, scalar_operand
from warpsim.ptx.fpdecode import FloatDecoder
from warpsim.ptx.opcodes import (BOOL, CMP, OPCODES, TK_B, TK_PRED, TK_S, TK_U, TYPES, Op, not_supported_yet,
                                 supported_names, type_of)
from warpsim.ptx.rows import K_NONE, PRMT_MODES, SPACE_CODES
from warpsim.ptx.syntax import type_bytes

__all__ = ["InstructionDecoder"]



def _folded_bfe(t, ops, known, early) -> bool:
    """Whether the driver's ptxas folds this ``bfe`` to all ones at compile time: ``bfe.s32`` whose position and
    length it knows (immediates, or registers in ``known``: :mod:`warpsim.ptx.constants`), the position's low byte
    >= 32 and the length's >= 1, and whose ``a`` it does not know when it folds: ``a`` not known at all, or known only
    through a register from an earlier segment (not in ``early``) while both fields are known in the ``bfe``'s own
    segment (``early``: ptxas folds with the fields before it learns ``a``). Otherwise (``a`` an immediate, or
    learnt no later than the fields) ptxas folds as the PTX ISA: ``a[31]`` replicated (docs/ptx.md).

    >>> from warpsim.ptx.syntax import Operand
    >>> a, imm = Operand("reg", name="%r9"), lambda v: Operand("imm", value=v)
    >>> _folded_bfe("s32", [a, a, imm(255), imm(64)], {}, {})                  # a unknown
    True
    >>> _folded_bfe("s32", [a, a, imm(255), imm(64)], {"%r9": 5}, {"%r9": 5})  # a known in the same segment
    False
    >>> _folded_bfe("s32", [a, a, imm(255), imm(64)], {"%r9": 5}, {})          # a known from an earlier one
    True
    """
    def value(op, consts):
        return op.value if op.kind == "imm" else consts.get(op.name) if op.kind == "reg" else None
    if t != "s32" or len(ops) != 4:
        return False
    pos, length = value(ops[2], known), value(ops[3], known)
    if pos is None or length is None or pos & 0xFF < 32 or length & 0xFF < 1:
        return False
    if value(ops[1], known) is None:
        return True
    return (value(ops[1], early) is None and value(ops[2], early) is not None
            and value(ops[3], early) is not None)


def _folded_bfi(t, ops, known) -> bool:
    """Whether the driver's ptxas folds this ``bfi.b32`` into a shift and a mask it computes with the length mod 32
    (``SHF`` + ``LOP3``; ``bfi.b32 d, a, b, 1, 32`` is ``b``): position and length known at compile time (as for
    :func:`_folded_bfe`), ``b`` not known, the position's low byte in 1..31 and not a multiple of 8 (those become a
    ``PRMT``, as the ISA), the length's >= 32. With ``b`` known ptxas folds to ``LEA``/``IMAD``, as the ISA; position 0
    is a copy of ``a``. (ptxas 13 for sm_90 read with nvdisasm; the H200's fuzz campaigns: docs/ptx.md.)"""
    def value(op):
        return op.value if op.kind == "imm" else known.get(op.name) if op.kind == "reg" else None
    if t != "b32" or len(ops) != 5 or value(ops[2]) is not None:
        return False
    pos, length = value(ops[3]), value(ops[4])
    return (pos is not None and length is not None and 0 < pos & 0xFF < 32 and (pos & 0xFF) % 8 != 0
            and length & 0xFF >= 32)


class InstructionDecoder(*DECODERS, FloatDecoder, FamilyDecoder):
    """The per-instruction half of the decoder (see the module docstring); float instructions are
    decoded by :class:`~warpsim.ptx.fpdecode.FloatDecoder`."""

    def instruction(self, fn, ins):
        name = ins.opcode
        mods = ins.mods
        types = type_of(mods)
        ops = ins.operands
        refused = not_supported_yet(name_of(ins))
        if refused is not None:
            raise UnsupportedType(f"{self.m.filename}:{ins.token.line}:{ins.token.col}: {refused}")
        if self.float_instruction(fn, ins):
            return
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

    def do_alu(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types)
        mode = 2 if "wide" in mods else 1 if "hi" in mods else 0
        cc = 1 if "cc" in mods else 0
        if op == Op.PRMT:
            m0 = PRMT_MODES.get(next((x for x in mods if x in PRMT_MODES), ""), 0)
        elif op == Op.SHF:
            if not ({"l", "r"} & set(mods)) or not ({"wrap", "clamp"} & set(mods)):
                raise self.error(ins.token, f"{name_of(ins)}: expected shf.{{l,r}}.{{wrap,clamp}}.b32")
            m0 = ("r" in mods) + 2 * ("clamp" in mods)
        elif op == Op.BFIND:
            m0 = int("shiftamt" in mods)
        elif op == Op.BFE:
            m0 = BFE_FOLDED if _folded_bfe(t, ops, fn.known.get(id(ins), {}), fn.early.get(id(ins), {})) else 0
        elif op == Op.BFI:
            m0 = BFI_FOLDED if _folded_bfi(t, ops, fn.known.get(id(ins), {})) else 0
        else:
            m0 = mode
        arity = {Op.ABS: 1, Op.NEG: 1, Op.NOT: 1, Op.CNOT: 1, Op.POPC: 1, Op.CLZ: 1, Op.BREV: 1,
                 Op.MAD: 3, Op.MADC: 3, Op.BFE: 3, Op.BFI: 4, Op.PRMT: 3, Op.SAD: 3,
                 Op.SHF: 3, Op.LOP3: 4, Op.BFIND: 1}.get(op, 2)
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
        ops = [scalar_operand(o) for o in ops]
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
        # PTX ISA, "Operand Size Exceeding Instruction-Type Size": a destination register wider than the type
        # holds the result sign-extended for a signed type (H200: cvt.s16.s32 %r gives 0xffff8000, not 0x8000)
        d = ops[0]
        reg_bits = 8 * type_bytes(fn.regs[d.name][2]) if d.kind == "reg" and d.name in fn.regs else 0
        self.emit(fn, ins, op, (dt, st), (0, "sat" in mods, reg_bits, 0), [self.operand(fn, o) for o in ops])

    def do_cvta(self, fn, ins, op, mods, types, ops):
        space = next((SPACE_CODES[m] for m in mods if m in SPACE_CODES), None)
        if space is None or not types:
            raise self.error(ins.token, f"{name_of(ins)}: expected cvta[.to].space.u32|u64")
        self.count(ins, ops, 2)
        self.emit(fn, ins, op, (types[-1], None), (space, "to" in mods, 0, 0),
                  [self.operand(fn, o) for o in ops])

