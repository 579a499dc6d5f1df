"""Warp-wide PTX instructions (``@njit``): collectives, and fast paths for the common per-thread ones.

- ``warp_collective``: ``mma``, ``ldmatrix``, ``stmatrix`` (through the ISA's warp kernels), ``bar``,
  ``shfl``, ``vote``, ``match``, ``activemask``, ``bar.warp.sync``, with the convergence checks of
  :mod:`warpsim.ptx.interp`;
- ``warp_simple`` and ``warp_shared_global``: integer ALU, ``setp``, ``selp``, ``mov``, ``cvt``,
  ``cvta``, ``bra``, fences, the float instructions (:mod:`warpsim.ptx.warpfloat`), and ``ld``/``st`` of
  ``.shared``/``.global``, for a whole group of lanes
  in one call (the operands' fields read once). They return False for what they do not cover,
  which then runs thread by thread (:func:`warpsim.ptx.thread.thread_op`): the same semantics.

``group``: the lanes at this pc; ``gmask``: those whose guard predicate holds (the others only
advance their pc).
"""

import numpy as np
from numba import njit

from warpsim.isa.cvt import cvt_pack_bits
from warpsim.isa.scratch import stack_array
from warpsim.ptx.alu import alu, compare, mask, zext
from warpsim.ptx.rows import IMM, K_NONE, K_SREG, KIND, M0, M1, M2, M3, NEG, NOPS, NW, O0, SB, SK, SLOT, TB, TK
from warpsim.ptx.memory import SP_GLOBAL
from warpsim.ptx.opcodes import TK_PRED, TK_S, Op
from warpsim.ptx.operands import advance, lane_get, lane_put
from warpsim.ptx.thread import cvt_int
from warpsim.ptx.families.barriers import warp_barrier
from warpsim.ptx.families.control import warp_branch
from warpsim.ptx.families.collectives import warp_collectives
from warpsim.ptx.families.ldmatrix import warp_matrix
from warpsim.ptx.families.mma import warp_mma_sync
from warpsim.ptx.warpfloat import warp_float

__all__ = ["warp_collective", "warp_simple", "warp_shared_global"]

@njit(cache=True)
def warp_collective(p, op, w, gmask, alive, code, opnd, regs, pc, status, smem, pend_map, bar_arrived, bar_expect,
                    bar_id, mma_arch, fault):
    """A warp-collective instruction for the lanes of ``gmask`` (guard true), by its family; False on a fault."""
    if op == Op.BAR and code[p, M0] != 2:
        return warp_barrier(p, w, gmask, alive, code, opnd, regs, pc, status, bar_arrived, bar_expect, bar_id, fault)
    if op == Op.MMA:
        return warp_mma_sync(p, w, gmask, code, opnd, regs, pc, mma_arch, fault)
    if op == Op.LDMATRIX or op == Op.STMATRIX:
        return warp_matrix(p, op, w, gmask, code, opnd, regs, pc, smem, pend_map, fault)
    return warp_collectives(p, op, w, gmask, code, opnd, regs, pc, fault)


@njit(cache=True)
def warp_simple(p, op, w, group, gmask, code, opnd, regs, pc, mt):
    """The common per-thread instructions for a whole group at once (integer ALU without carries,
    setp, selp, mov, integer cvt, the f32 pair pack ``cvt.rn.{f16,bf16}x2.f32``, cvta, bra, fences, and every
    float instruction: :func:`warpsim.ptx.warpfloat.warp_float`). Returns False for any other instruction,
    which then runs thread by thread in ``thread_op``."""
    tk, tb, m0 = code[p, TK], code[p, TB], code[p, M0]
    nops = code[p, NOPS]
    t0 = 32 * w
    if op == Op.BRA:
        return warp_branch(p, w, group, gmask, code, opnd, pc)
    # operand fields, read once: d (0), a (1), b (2), c (3), e (4)
    k0 = k1 = k2 = k3 = k4 = K_NONE
    s0 = s1 = s2 = s3 = s4 = n0 = n1 = n2 = n3 = n4 = np.int64(0)
    i1 = i2 = i3 = i4 = g1 = g2 = g3 = g4 = np.int64(0)
    r = code[p, O0]
    k0, s0, n0 = opnd[r, KIND], opnd[r, SLOT], opnd[r, NW]
    if nops > 1:
        r = code[p, O0 + 1]
        k1, s1, n1, i1, g1 = opnd[r, KIND], opnd[r, SLOT], opnd[r, NW], opnd[r, IMM], opnd[r, NEG]
    if nops > 2:
        r = code[p, O0 + 2]
        k2, s2, n2, i2, g2 = opnd[r, KIND], opnd[r, SLOT], opnd[r, NW], opnd[r, IMM], opnd[r, NEG]
    if nops > 3:
        r = code[p, O0 + 3]
        k3, s3, n3, i3, g3 = opnd[r, KIND], opnd[r, SLOT], opnd[r, NW], opnd[r, IMM], opnd[r, NEG]
    if nops > 4:
        r = code[p, O0 + 4]
        k4, s4, n4, i4, g4 = opnd[r, KIND], opnd[r, SLOT], opnd[r, NW], opnd[r, IMM], opnd[r, NEG]
    if op <= Op.BFIND and tk != TK_PRED and code[p, M1] == 0 and code[p, M2] == 0:
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
    elif op == Op.CVT and m0 == 0:
        sk, sb, sat, reg_bits = code[p, SK], code[p, SB], code[p, M1], code[p, M2]
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0,
                     cvt_int(lane_get(regs, w, lane, k1, s1, n1, i1, g1), tk, tb, sk, sb, sat, reg_bits))
    elif op == Op.CVT and m0 == 1:                          # cvt.rn.{f16,bf16}x2.f32 d, a, b (as thread_op)
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
    elif op >= Op.FARITH and op <= Op.FCVT:
        m1, m2, m3, sk, sb = code[p, M1], code[p, M2], code[p, M3], code[p, SK], code[p, SB]
        setp = op == Op.FSETP                               # p|q, a, b, c; the others d, a, b, c
        av, bv, cv = stack_array(32, np.int64), stack_array(32, np.int64), stack_array(32, np.int64)
        dv, qv = stack_array(32, np.int64), stack_array(32, np.int64)
        for lane in range(32):
            if (gmask >> lane) & 1:
                if setp:
                    av[lane] = lane_get(regs, w, lane, k2, s2, n2, i2, g2)
                    bv[lane] = lane_get(regs, w, lane, k3, s3, n3, i3, g3)
                    cv[lane] = lane_get(regs, w, lane, k4, s4, n4, i4, g4)
                else:
                    av[lane] = lane_get(regs, w, lane, k1, s1, n1, i1, g1)
                    bv[lane] = lane_get(regs, w, lane, k2, s2, n2, i2, g2)
                    cv[lane] = lane_get(regs, w, lane, k3, s3, n3, i3, g3)
        warp_float(op, tk, tb, m0, m1, m2, m3, sk, sb, gmask, av, bv, cv, dv, qv, mt)
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, dv[lane])
                if setp:
                    lane_put(regs, w, lane, k1, s1, n1, qv[lane])
    elif op == Op.FENCE or op == Op.NOP:
        pass
    else:
        return False
    advance(pc, t0, group)
    return True


