"""The integer family: integer and bit arithmetic (``add`` ... ``lop3``, with ``.cc`` carries and ``.sat``), ``setp``,
``selp``, ``slct``, ``mov`` (special registers, vector pack/unpack), integer ``cvt`` (and the f32 pair pack
``cvt.rn.{f16,bf16}x2.f32``) and ``cvta``, decoded and executed.

The scalar semantics are :mod:`warpsim.ptx.alu`'s (``alu``, ``compare``: the PTX ISA's, the H200's where PTX leaves
them open) and :mod:`warpsim.isa.cvt`'s; :func:`thread_integer` runs one thread's instruction, :func:`warp_integer`
the common forms for a whole group (operand fields read once), returning False for the others (carries, ``.sat``,
special registers, vectors), which then run thread by thread: the same semantics.
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.cvt import CVT_TYPES, cvt_pack_bits
from warpsim.isa.scratch import njit_borrowing, stack_array
from warpsim.ptx.alu import (BFE_FOLDED, BFI_FOLDED, alu, bfe, clz, compare, lop3, mask, popc, prmt, sext, shf, ult,
                             zext)
from warpsim.ptx.codes import CTX_CLUSTER, CTX_EXPLICIT, CTX_NRANKS, CTX_RANK
from warpsim.ptx.families.common import FamilyDecoder, name_of, scalar_operand
from warpsim.ptx.memory import SP_GLOBAL, SP_SHARED
from warpsim.ptx.opcodes import BOOL, CMP, TK_B, TK_PRED, TK_S, TK_U, TYPES, Op
from warpsim.ptx.operands import advance, get, lane_get, lane_put, operand_fields, put
from warpsim.ptx.rows import (IMM, K_IMM, K_NONE, K_REG, K_SREG, KIND, M0, M1, M2, NEG, NOPS, NW, O0, PRMT_MODES, SB,
                              SK, SLOT, SPACE_CODES, TB, TK)
from warpsim.ptx.syntax import type_bytes

__all__ = ["IntegerDecoder", "DECODER", "thread_integer", "warp_integer", "warp_special", "cvt_int"]


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


_ARITY = {Op.ABS: 1, Op.NEG: 1, Op.NOT: 1, Op.CNOT: 1, Op.POPC: 1, Op.CLZ: 1, Op.BREV: 1, Op.MAD: 3, Op.MADC: 3,
          Op.BFE: 3, Op.BFI: 4, Op.PRMT: 3, Op.SAD: 3, Op.SHF: 3, Op.LOP3: 4, Op.BFIND: 1}   # source operands; else 2


class IntegerDecoder(FamilyDecoder):
    """Decodes the integer family (see the module docstring); ``do_alu`` takes every arithmetic and bit opcode."""

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
        arity = _ARITY.get(op, 2)
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
        sym = self.symbol(fn, ops[1].name) if ops[1].kind == "sym" and ops[1].name not in fn.regs else None
        if sym is not None and sym[0] == SP_SHARED and t in ("u32", "b32", "s32", "u64", "b64", "s64"):
            # a .shared variable's address: in the executing CTA's window (its rank in a cluster: families.cluster)
            return self.emit(fn, ins, Op.MAPA, (t, None), (2, 0, 0, 0), [self.operand(fn, o) for o in ops])
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


DECODER = IntegerDecoder


@njit(cache=True)
def _special(code, t, lane, w, ctx, clock):
    if code < 3:                                  # %tid
        nx, ny = ctx[0], ctx[1]
        return np.int64((t % nx, (t // nx) % ny, t // (nx * ny))[code])
    if code < 12:                                 # %ntid %ctaid %nctaid
        return ctx[code - 3]
    if code == 12:
        return np.int64(lane)
    if code == 13:
        return np.int64(w)
    if code == 14:
        return (ctx[9] + 31) // 32
    if code == 15:
        return ctx[10]
    if code == 16:
        return ctx[15]
    if code == 17 or code == 18 or code == 25:    # %clock %clock64 %globaltimer: the warp's steps
        return clock
    if code <= 23:                                # %lanemask_eq lt le gt ge
        bit = np.int64(1) << lane
        if code == 19:
            return bit
        if code == 20:
            return bit - 1
        if code == 21:
            return (bit << 1) - 1
        if code == 22:
            return ~((bit << 1) - 1) & 0xFFFFFFFF
        return ~(bit - 1) & 0xFFFFFFFF
    if code == 26:
        return ctx[11]
    if code == 27:
        return ctx[12]
    if code <= 30:                                # %clusterid: the CTA's cluster
        return ctx[3 + code - 28] // ctx[CTX_CLUSTER + code - 28]
    if code <= 33:                                # %nclusterid
        return ctx[6 + code - 31] // ctx[CTX_CLUSTER + code - 31]
    if code <= 36:                                # %cluster_ctaid: the CTA's place in its cluster
        return ctx[3 + code - 34] % ctx[CTX_CLUSTER + code - 34]
    if code <= 39:                                # %cluster_nctaid
        return ctx[CTX_CLUSTER + code - 37]
    if code == 40:
        return ctx[CTX_RANK]                      # %cluster_ctarank
    if code == 41:
        return ctx[CTX_NRANKS]                    # %cluster_nctarank
    return ctx[CTX_EXPLICIT]                      # %is_explicit_cluster


@njit(cache=True)
def _carry(op, tb, mode, a, b, c, cf):
    """``add/sub/mad .cc`` and ``addc/subc/madc``: (result, carry out) with ``cf`` the carry in."""
    m = mask(tb)
    a, b, c = a & m, b & m, c & m
    cin = cf if (op == Op.ADDC or op == Op.SUBC or op == Op.MADC) else 0
    if op == Op.SUB or op == Op.SUBC:
        v = (a - b - cin) & m
        borrow = ult(a, b) or (cin and a == b) if tb == 64 else (a - b - cin) < 0
        return v, np.int64(borrow)
    if op == Op.MAD or op == Op.MADC:
        prod = (a * b) & m if mode == 0 else (alu(Op.MUL, 1, tb, mode, a, b, 0, 0) & m)
        a, b = prod, c
    s = (a + b + cin) & m
    carry = ult(s, a) or (cin and s == a) if tb == 64 else (a + b + cin) >> tb
    return s, np.int64(carry) & 1


@njit(cache=True)
def _saturate(op, a, b, c, mode):
    """``add/sub/mad .sat.s32``: the exact result clamped to the s32 range."""
    a, b = sext(a, 32), sext(b, 32)
    if op == Op.ADD:
        v = a + b
    elif op == Op.SUB:
        v = a - b
    else:
        v = ((a * b) >> 32) + sext(c, 32)
    return min(max(v, -(1 << 31)), (1 << 31) - 1)


@njit(cache=True)
def cvt_int(v, dk, db, sk, sb, sat, reg_bits=0):
    """``cvt.dtype.stype`` between integer types; ``.sat`` clamps to the destination's range. A signed ``dtype``
    narrower than the destination register (``reg_bits``) is sign-extended to the register's width (PTX ISA,
    "Operand Size Exceeding Instruction-Type Size"; the H200 agrees), an unsigned one zero-extended."""
    x = sext(v, sb) if sk == TK_S else zext(v, sb)
    if sat and db < 64:
        if dk == TK_S:
            lo, hi = -(np.int64(1) << (db - 1)), (np.int64(1) << (db - 1)) - 1
        else:
            lo, hi = np.int64(0), mask(db)
        if sk != TK_S and sb == 64 and x < 0:
            x = hi
        x = min(max(x, lo), hi)
    elif sat and db == 64 and dk != TK_S and sk == TK_S and x < 0:
        x = np.int64(0)
    elif sat and db == 64 and dk == TK_S and sk != TK_S and sb == 64 and x < 0:   # u64 above the s64 range
        x = np.int64(0x7FFFFFFFFFFFFFFF)
    if dk == TK_S and reg_bits > db:
        return sext(x, db) & mask(reg_bits)
    return zext(x, db)


@njit_borrowing
def thread_integer(p, op, t, lane, w, code, opnd, r, pc, ccf, ctx, clock):
    """One thread's integer-family instruction (registers ``r``; ``ccf``: the carry flags); advances its pc."""
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    if op <= Op.MADC:
        a = get(r, opnd, o[1])
        b = get(r, opnd, o[2]) if code[p, NOPS] > 2 else np.int64(0)
        c = get(r, opnd, o[3]) if code[p, NOPS] > 3 else np.int64(0)
        e = get(r, opnd, o[4]) if code[p, NOPS] > 4 else np.int64(0)
        if tk == TK_PRED:
            v = alu(op, tk, 64, 0, a, b, c, e) & 1
        elif op == Op.ADDC or op == Op.SUBC or op == Op.MADC or code[p, M2]:
            v, carry = _carry(op, tb, code[p, M0], a, b, c, ccf[t])
            if code[p, M2]:
                ccf[t] = carry
        else:
            v = alu(op, tk, tb, code[p, M0], a, b, c, e)
            if code[p, M1] and tk == TK_S and tb == 32 and (op == Op.ADD or op == Op.SUB or op == Op.MAD):
                v = _saturate(op, a, b, c, code[p, M0])
        width = tb * 2 if code[p, M0] == 2 and (op == Op.MUL or op == Op.MAD) else tb
        if op == Op.POPC or op == Op.CLZ or op == Op.BFIND:
            width = 32
        put(r, opnd, o[0], v & mask(width) if tk != TK_PRED else v)
    elif op == Op.SETP:
        signed = tk == TK_S
        res = compare(code[p, M0], get(r, opnd, o[2]), get(r, opnd, o[3]), tb, signed)
        pv, qv = np.int64(res), np.int64(not res)
        boolop = code[p, M1]
        if boolop:
            c = get(r, opnd, o[4]) & 1
            if boolop == 1:
                pv, qv = pv & c, qv & c
            elif boolop == 2:
                pv, qv = pv | c, qv | c
            else:
                pv, qv = pv ^ c, qv ^ c
        put(r, opnd, o[0], pv)
        put(r, opnd, o[1], qv)
    elif op == Op.SELP:
        c = get(r, opnd, o[3]) & 1
        put(r, opnd, o[0], get(r, opnd, o[1]) if c else get(r, opnd, o[2]))
    elif op == Op.SLCT:
        c = sext(get(r, opnd, o[3]), 32)
        put(r, opnd, o[0], get(r, opnd, o[1]) if c >= 0 else get(r, opnd, o[2]))
    elif op == Op.MOV:
        mode = code[p, M0]
        if mode == 1:                                   # mov.b64 d, {a, b}: pack
            n = opnd[o[1], NW]
            first = opnd[o[1], SLOT]
            ebits = tb // n
            v = np.int64(0)
            for j in range(n):
                v |= zext(get(r, opnd, first + j), ebits) << (ebits * j)
            put(r, opnd, o[0], v)
        elif mode == 2:                                 # mov.b64 {a, b}, d: unpack
            n = opnd[o[0], NW]
            first = opnd[o[0], SLOT]
            ebits = tb // n
            v = get(r, opnd, o[1])
            for j in range(n):
                put(r, opnd, first + j, zext(v >> (ebits * j), ebits))
        else:
            if opnd[o[1], KIND] == K_SREG:
                v = _special(opnd[o[1], IMM], t, lane, w, ctx, clock)
            else:
                v = get(r, opnd, o[1])
            put(r, opnd, o[0], v & mask(tb) if tk != TK_PRED else v & 1)
    elif op == Op.CVT:
        if code[p, M0] == 1:
            v = cvt_pack_bits(get(r, opnd, o[1]) & 0xFFFFFFFF, get(r, opnd, o[2]) & 0xFFFFFFFF, code[p, M2])
            put(r, opnd, o[0], v)
        else:
            put(r, opnd, o[0], cvt_int(get(r, opnd, o[1]), tk, tb, code[p, SK], code[p, SB], code[p, M1],
                                       code[p, M2]))
    elif op == Op.CVTA:
        v = get(r, opnd, o[1])
        space = code[p, M0]
        window = np.int64(0) if space == SP_GLOBAL else (np.int64(space - 1) << 40)
        v = v - window if code[p, M1] else v + window
        put(r, opnd, o[0], v & mask(tb))
    pc[t] += 1
    return True


@njit(cache=True)
def warp_special(p, w, group, gmask, code, opnd, regs, pc, ctx, clock):
    """``mov`` of a special register (``%tid.x``, ``%laneid``, ``%clock``, ...) for the lanes of ``gmask`` of warp
    ``w`` at once, each lane's value as :func:`thread_integer` reads it; advances the group's pcs. False, nothing
    changed, for any other row."""
    o1 = code[p, O0 + 1]
    if code[p, M0] != 0 or opnd[o1, KIND] != K_SREG:
        return False
    tk, tb, sreg = code[p, TK], code[p, TB], opnd[o1, IMM]
    k0, s0, n0, _, _ = operand_fields(code, opnd, p, 0)
    t0 = 32 * w
    for lane in range(32):
        if (gmask >> lane) & 1:
            v = _special(sreg, t0 + lane, lane, w, ctx, clock)
            lane_put(regs, w, lane, k0, s0, n0, v & mask(tb) if tk != TK_PRED else v & 1)
    advance(pc, t0, group)
    return True


@njit(cache=True, inline="always")
def _word(regs, w, lane, s, two):
    """A lane's 32- or 64-bit register value (``two``: the pair ``s``, ``s + 1``)."""
    v = np.int64(regs[w, lane, s])
    if two:
        v |= np.int64(regs[w, lane, s + 1]) << 32
    return v


@njit(cache=True, inline="always")
def _set_word(regs, w, lane, s, two, v):
    regs[w, lane, s] = np.uint32(v & 0xFFFFFFFF)
    if two:
        regs[w, lane, s + 1] = np.uint32((v >> 32) & 0xFFFFFFFF)


@njit_borrowing
def _hoisted(op, unsigned, tb, gmask, regs, w, s0, s1, k2, s2, imm):
    """The commonest integer forms on registers of one width (``tb`` 32 or 64; ``b`` a register or an immediate),
    one loop over the lanes of ``gmask`` per operation, so that the operation is decided once per warp instruction
    (a loop deciding it per lane ran at about half the speed): ``add sub xor and or mul.lo shl`` and unsigned ``shr``,
    each :func:`warpsim.ptx.alu.alu`'s result masked to ``tb`` bits. False for any other."""
    two = tb == 64
    b_reg = k2 == K_REG
    if op == Op.ADD:
        for lane in range(32):
            if (gmask >> lane) & 1:
                b = _word(regs, w, lane, s2, two) if b_reg else imm
                _set_word(regs, w, lane, s0, two, _word(regs, w, lane, s1, two) + b)
    elif op == Op.SUB:
        for lane in range(32):
            if (gmask >> lane) & 1:
                b = _word(regs, w, lane, s2, two) if b_reg else imm
                _set_word(regs, w, lane, s0, two, _word(regs, w, lane, s1, two) - b)
    elif op == Op.XOR:
        for lane in range(32):
            if (gmask >> lane) & 1:
                b = _word(regs, w, lane, s2, two) if b_reg else imm
                _set_word(regs, w, lane, s0, two, _word(regs, w, lane, s1, two) ^ b)
    elif op == Op.AND:
        for lane in range(32):
            if (gmask >> lane) & 1:
                b = _word(regs, w, lane, s2, two) if b_reg else imm
                _set_word(regs, w, lane, s0, two, _word(regs, w, lane, s1, two) & b)
    elif op == Op.OR:
        for lane in range(32):
            if (gmask >> lane) & 1:
                b = _word(regs, w, lane, s2, two) if b_reg else imm
                _set_word(regs, w, lane, s0, two, _word(regs, w, lane, s1, two) | b)
    elif op == Op.MUL:
        for lane in range(32):
            if (gmask >> lane) & 1:
                b = _word(regs, w, lane, s2, two) if b_reg else imm
                _set_word(regs, w, lane, s0, two, _word(regs, w, lane, s1, two) * b)
    elif op == Op.SHL:
        for lane in range(32):
            if (gmask >> lane) & 1:
                n = (_word(regs, w, lane, s2, False) if b_reg else imm) & 0xFFFFFFFF
                _set_word(regs, w, lane, s0, two, np.int64(0) if n >= tb else _word(regs, w, lane, s1, two) << n)
    elif op == Op.SHR and unsigned:
        for lane in range(32):
            if (gmask >> lane) & 1:
                n = (_word(regs, w, lane, s2, False) if b_reg else imm) & 0xFFFFFFFF
                a = np.uint64(_word(regs, w, lane, s1, two))
                _set_word(regs, w, lane, s0, two, np.int64(0) if n >= tb else np.int64(a >> np.uint64(n)))
    else:
        return False
    return True


@njit_borrowing
def _warp_mov_vector(pack, tb, w, gmask, vrow, opnd, regs, k, s, n, imm, neg):
    """``mov`` of a vector operand for the lanes of ``gmask``, as ``thread_integer`` does it: ``pack``: the elements
    of vector row ``vrow``, low first, into the scalar operand ``k, s, n`` (its fields); else the scalar operand
    (``k, s, n, imm, neg``) split into the elements."""
    count = opnd[vrow, NW]
    first = opnd[vrow, SLOT]
    ebits = tb // count
    v = stack_array(32, np.int64)
    for lane in range(32):
        v[lane] = 0 if pack else lane_get(regs, w, lane, k, s, n, imm, neg)
    for j in range(count):
        e = first + j
        ek, es, en, ei, eg = opnd[e, KIND], opnd[e, SLOT], opnd[e, NW], opnd[e, IMM], opnd[e, NEG]
        for lane in range(32):
            if (gmask >> lane) & 1:
                if pack:
                    v[lane] |= zext(lane_get(regs, w, lane, ek, es, en, ei, eg), ebits) << (ebits * j)
                else:
                    lane_put(regs, w, lane, ek, es, en, zext(v[lane] >> (ebits * j), ebits))
    if pack:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k, s, n, v[lane])


@njit_borrowing
def _hoisted_bits(op, tb, m0, signed, gmask, regs, w, k0, s0, n0, k1, s1, n1, i1, g1, k2, s2, n2, i2, g2, k3, s3, n3,
                  i3, g3, k4, s4, n4, i4, g4):
    """``prmt popc clz lop3 shf bfe``, one loop over the lanes of ``gmask`` per operation calling the helper that
    :func:`warpsim.ptx.alu.alu` calls for it (the operation decided once per warp instruction, not per lane); the
    result masked as ``warp_integer`` masks it. False for any other operation (and for ptxas's folded ``bfe``)."""
    wm = mask(32) if op == Op.POPC or op == Op.CLZ else mask(tb)
    if op == Op.PRMT:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, prmt(lane_get(regs, w, lane, k1, s1, n1, i1, g1),
                                                         lane_get(regs, w, lane, k2, s2, n2, i2, g2),
                                                         lane_get(regs, w, lane, k3, s3, n3, i3, g3), m0) & wm)
    elif op == Op.LOP3:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, lop3(lane_get(regs, w, lane, k1, s1, n1, i1, g1),
                                                         lane_get(regs, w, lane, k2, s2, n2, i2, g2),
                                                         lane_get(regs, w, lane, k3, s3, n3, i3, g3),
                                                         lane_get(regs, w, lane, k4, s4, n4, i4, g4)) & wm)
    elif op == Op.SHF:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, shf(lane_get(regs, w, lane, k1, s1, n1, i1, g1),
                                                        lane_get(regs, w, lane, k2, s2, n2, i2, g2),
                                                        lane_get(regs, w, lane, k3, s3, n3, i3, g3), m0) & wm)
    elif op == Op.BFE and m0 != BFE_FOLDED:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, bfe(lane_get(regs, w, lane, k1, s1, n1, i1, g1),
                                                        lane_get(regs, w, lane, k2, s2, n2, i2, g2),
                                                        lane_get(regs, w, lane, k3, s3, n3, i3, g3), tb, signed) & wm)
    elif op == Op.POPC:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, popc(lane_get(regs, w, lane, k1, s1, n1, i1, g1), tb) & wm)
    elif op == Op.CLZ:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, clz(lane_get(regs, w, lane, k1, s1, n1, i1, g1), tb) & wm)
    else:
        return False
    return True


@njit_borrowing
def warp_integer(p, op, w, group, gmask, code, opnd, regs, pc):
    """The common integer-family forms for a whole group at once (ALU without carries or ``.sat``, ``setp``, ``selp``,
    ``mov`` of a register, an immediate or a vector, ``cvt``, ``cvta``); False for the others (thread by thread)."""
    tk, tb, m0 = code[p, TK], code[p, TB], code[p, M0]
    t0 = 32 * w
    # operand fields, read once: d (0), a (1), b (2), c (3), e (4)
    k0, s0, n0, i0, g0 = operand_fields(code, opnd, p, 0)
    k1, s1, n1, i1, g1 = operand_fields(code, opnd, p, 1)
    k2, s2, n2, i2, g2 = operand_fields(code, opnd, p, 2)
    k3, s3, n3, i3, g3 = operand_fields(code, opnd, p, 3)
    k4, s4, n4, i4, g4 = operand_fields(code, opnd, p, 4)
    words = tb // 32
    if op <= Op.SHR and tk != TK_PRED and m0 == 0 and code[p, M1] == 0 and code[p, M2] == 0 and (tb == 32 or tb == 64) \
            and k0 == K_REG and n0 == words and k1 == K_REG and n1 == words and g1 == 0 \
            and (k2 == K_REG and g2 == 0 and (n2 == words or op == Op.SHL or op == Op.SHR) or k2 == K_IMM) \
            and _hoisted(op, tk != TK_S, tb, gmask, regs, w, s0, s1, k2, s2, i2):
        pass
    elif op <= Op.BFIND and tk != TK_PRED and code[p, M1] == 0 and code[p, M2] == 0 \
            and _hoisted_bits(op, tb, m0, tk == TK_S, gmask, regs, w, k0, s0, n0, k1, s1, n1, i1, g1, k2, s2, n2, i2, g2,
                              k3, s3, n3, i3, g3, k4, s4, n4, i4, g4):
        pass
    elif op <= Op.BFIND and tk != TK_PRED and code[p, M1] == 0 and code[p, M2] == 0:
        width = tb * 2 if m0 == 2 and (op == Op.MUL or op == Op.MAD) else tb
        if op == Op.POPC or op == Op.CLZ or op == Op.BFIND:
            width = 32
        wm = mask(width)
        for lane in range(32):
            if (gmask >> lane) & 1:
                a = lane_get(regs, w, lane, k1, s1, n1, i1, g1)
                b = lane_get(regs, w, lane, k2, s2, n2, i2, g2)
                if op == Op.ADD:
                    v = a + b
                elif op == Op.SUB:
                    v = a - b
                elif op == Op.XOR:
                    v = a ^ b
                elif op == Op.OR:
                    v = a | b
                elif op == Op.SHR and tk != TK_S and 0 <= b < tb:
                    v = zext(a, tb) >> b if tb < 64 else alu(op, tk, tb, m0, a, b, 0, 0)
                elif op == Op.AND:
                    v = a & b
                elif op == Op.SHL and 0 <= b < tb:
                    v = a << b
                elif op == Op.MUL and m0 == 0:
                    v = a * b
                else:
                    c = lane_get(regs, w, lane, k3, s3, n3, i3, g3)
                    if op == Op.MAD and m0 == 0:
                        v = a * b + c
                    else:
                        v = alu(op, tk, tb, m0, a, b, c, lane_get(regs, w, lane, k4, s4, n4, i4, g4))
                lane_put(regs, w, lane, k0, s0, n0, v & wm)
    elif op == Op.SETP:
        signed = tk == TK_S
        boolop = code[p, M1]
        for lane in range(32):
            if (gmask >> lane) & 1:
                res = compare(m0, lane_get(regs, w, lane, k2, s2, n2, i2, g2), lane_get(regs, w, lane, k3, s3, n3, i3, g3),
                              tb, signed)
                pv, qv = np.int64(res), np.int64(not res)
                if boolop:
                    c = lane_get(regs, w, lane, k4, s4, n4, i4, g4) & 1
                    if boolop == 1:
                        pv, qv = pv & c, qv & c
                    elif boolop == 2:
                        pv, qv = pv | c, qv | c
                    else:
                        pv, qv = pv ^ c, qv ^ c
                lane_put(regs, w, lane, k0, s0, n0, pv)
                lane_put(regs, w, lane, k1, s1, n1, qv)
    elif op == Op.SELP:
        for lane in range(32):
            if (gmask >> lane) & 1:
                c = lane_get(regs, w, lane, k3, s3, n3, i3, g3) & 1
                v = lane_get(regs, w, lane, k1, s1, n1, i1, g1) if c else lane_get(regs, w, lane, k2, s2, n2, i2, g2)
                lane_put(regs, w, lane, k0, s0, n0, v)
    elif op == Op.MOV and m0 == 0 and k1 != K_SREG:
        wm = mask(tb) if tk != TK_PRED else np.int64(1)
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, lane_get(regs, w, lane, k1, s1, n1, i1, g1) & wm)
    elif op == Op.MOV and (m0 == 1 or m0 == 2):              # mov d, {a, b, ...} (pack), mov {a, b, ...}, d (unpack)
        _warp_mov_vector(m0 == 1, tb, w, gmask, code[p, O0 + (1 if m0 == 1 else 0)], opnd, regs,
                         k0 if m0 == 1 else k1, s0 if m0 == 1 else s1, n0 if m0 == 1 else n1, i1, g1)
    elif op == Op.CVT and m0 == 0:
        sk, sb, sat, reg_bits = code[p, SK], code[p, SB], code[p, M1], code[p, M2]
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0,
                     cvt_int(lane_get(regs, w, lane, k1, s1, n1, i1, g1), tk, tb, sk, sb, sat, reg_bits))
    elif op == Op.CVT and m0 == 1:                          # cvt.rn.{f16,bf16}x2.f32 d, a, b (as thread_integer)
        to = code[p, M2]
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, cvt_pack_bits(lane_get(regs, w, lane, k1, s1, n1, i1, g1) & 0xFFFFFFFF,
                                                              lane_get(regs, w, lane, k2, s2, n2, i2, g2) & 0xFFFFFFFF, to))
    elif op == Op.CVTA:
        window = np.int64(0) if m0 == SP_GLOBAL else (np.int64(m0 - 1) << 40)
        if code[p, M1]:
            window = -window
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, (lane_get(regs, w, lane, k1, s1, n1, i1, g1) + window) & mask(tb))
    else:
        return False
    advance(pc, t0, group)
    return True
