"""One thread's PTX instructions (``@njit``): the ones that are not warp-collective.

``thread_op`` executes the instruction at ``pc`` for thread ``t`` of warp ``w`` (lane ``lane``) on its
registers ``r`` (``uint32[R]``, a view of ``regs[w, lane]``) and advances its pc; it returns False
with ``fault`` filled on a fault. It covers every per-thread instruction; the common ones also have
a warp-wide fast path in :mod:`warpsim.ptx.warp`. Operand rows and columns: :mod:`warpsim.ptx.decode`.
"""

import numpy as np
from numba import njit

from warpsim.isa.cvt import cvt_pack_bits
from warpsim.ptx.alu import alu, compare, mask, sext, ult, zext
from warpsim.ptx.fpu import float_result
from warpsim.ptx.rows import IMM, K_SREG, KIND, M0, M1, M2, M3, NOPS, NW, O0, SB, SK, SLOT, TB, TK
from warpsim.ptx.memory import SP_GLOBAL
from warpsim.ptx.opcodes import TK_PRED, TK_S, Op
from warpsim.ptx.families.async_copy import thread_cp_async
from warpsim.ptx.families.control import thread_control
from warpsim.ptx.families.memory import thread_atom, thread_ld_st
from warpsim.ptx.operands import get, put

__all__ = ["thread_op", "cvt_int"]


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
    return np.int64(0)


@njit(cache=True)
def thread_op(p, op, t, lane, w, code, opnd, copies, r, pc, status, stack, depth, ccf, smem, gmem, ends, local,
             const, kparam, fparam, pend, npend, groups, pend_map, ctx, clock, prbuf, prrec, nprint, fault, mt):
    """One thread's instruction (not warp-collective); advances its pc. False on a fault."""
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
    elif op >= Op.FARITH and op <= Op.FCVT:
        first = 2 if op == Op.FSETP else 1                # setp: p|q, a, b, c
        n = code[p, NOPS]
        a = get(r, opnd, o[first])
        b = get(r, opnd, o[first + 1]) if n > first + 1 else np.int64(0)
        c = get(r, opnd, o[first + 2]) if n > first + 2 else np.int64(0)
        d, q = float_result(op, tk, tb, code[p, M0], code[p, M1], code[p, M2], code[p, M3], code[p, SK],
                            code[p, SB], a, b, c, mt)
        put(r, opnd, o[0], d)
        if op == Op.FSETP:
            put(r, opnd, o[1], q)
    elif op == Op.LD or op == Op.ST:
        return thread_ld_st(p, op, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, pend_map, pc, fault)
    elif op == Op.ATOM:
        return thread_atom(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, pend_map, pc, fault)
    elif op >= Op.CP_ASYNC and op <= Op.CP_WAIT_ALL:
        return thread_cp_async(p, op, t, code, opnd, r, pc, smem, gmem, ends, local, const, kparam, fparam, pend, npend,
                               groups, pend_map, fault)
    elif op >= Op.BRA and op <= Op.PRINTF:
        return thread_control(p, op, t, code, opnd, copies, pc, status, stack, depth, smem, gmem, ends, local, const,
                              kparam, fparam, pend, npend, groups, pend_map, prbuf, prrec, nprint, fault)
    pc[t] += 1
    return True


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


