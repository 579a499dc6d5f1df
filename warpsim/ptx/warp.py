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
from warpsim.isa.faults import FAULT_DIVERGENT, FAULT_OUT_OF_RANGE, FAULT_SPACE, set_fault
from warpsim.isa.ldmatrix import warp_ldmatrix, warp_stmatrix
from warpsim.isa.mma import warp_mma
from warpsim.isa.scratch import stack_array
from warpsim.ptx.alu import alu, compare, mask, zext
from warpsim.ptx.codes import WAITING
from warpsim.ptx.rows import IMM, K_NONE, K_SREG, KIND, M0, M1, M2, M3, NEG, NOPS, NW, O0, SB, SK, SLOT, TB, TK
from warpsim.ptx.memory import SHARED_BASE, SHARED_WINDOW, SP_GENERIC, SP_GLOBAL, SP_SHARED
from warpsim.ptx.opcodes import TK_PRED, TK_S, Op
from warpsim.ptx.operands import advance, get, isa_fault, lane_address, lane_get, lane_put, raced, vec_slots
from warpsim.ptx.thread import cvt_int
from warpsim.ptx.families.collectives import warp_collectives
from warpsim.ptx.warpfloat import warp_float

__all__ = ["warp_collective", "warp_simple", "warp_shared_global"]

_MAX_VEC = 32    # the scratch for a vector operand's register slots (mma and ldmatrix take at most 4)


@njit(cache=True)
def _shared_addresses(regs_w, opnd, row, space, addrs, t0, fault):
    """Each lane's shared-space offset of an ldmatrix/stmatrix address operand."""
    for lane in range(32):
        a = lane_address(regs_w[lane], opnd, row)
        if space == SP_GENERIC:
            if a < SHARED_WINDOW or a >= 2 * SHARED_WINDOW:
                set_fault(fault, FAULT_SPACE, t0 + lane, a, SP_SHARED)
                return False
            a -= SHARED_WINDOW
        addrs[lane] = a
    return True


@njit(cache=True)
def warp_collective(p, op, w, gmask, alive, code, opnd, regs, pc, status, smem, pend_map, bar_arrived, bar_expect,
             bar_id, mma_arch, fault):
    """A warp-collective instruction for the lanes of ``gmask`` (guard true); False on a fault."""
    t0 = 32 * w
    regs_w = regs[w]
    o = code[p, O0:]
    # scratch on the stack (no allocation per instruction): vector operands' register slots, lanes' values
    slots_a, slots_b = stack_array(_MAX_VEC, np.int64), stack_array(_MAX_VEC, np.int64)
    slots_c, slots_d = stack_array(_MAX_VEC, np.int64), stack_array(_MAX_VEC, np.int64)
    if op == Op.BAR and code[p, M0] != 2:
        if code[p, M1] and gmask != alive:
            set_fault(fault, FAULT_DIVERGENT, t0, gmask, alive)
            return False
        lane0 = 0
        while not (gmask >> lane0) & 1:
            lane0 += 1
        b = get(regs_w[lane0], opnd, o[0]) & 15
        if code[p, NOPS] > 1:                                # NOPS: a thread count
            bar_expect[b] = get(regs_w[lane0], opnd, o[1])
        n = 0
        for lane in range(32):
            if (gmask >> lane) & 1:
                n += 1
                pc[t0 + lane] += 1
                if code[p, M0] == 0:
                    status[t0 + lane] = WAITING
                    bar_id[t0 + lane] = b
        bar_arrived[b] += 32 if code[p, M1] else n
        return True
    if op == Op.LDMATRIX or op == Op.STMATRIX or op == Op.MMA:
        if gmask != 0xFFFFFFFF:
            set_fault(fault, FAULT_DIVERGENT, t0, gmask, 0xFFFFFFFF)
            return False
        if op == Op.MMA:
            cd = code[p, M2]
            ok = warp_mma(regs_w, vec_slots(opnd, o[1], slots_a), vec_slots(opnd, o[2], slots_b),
                          vec_slots(opnd, o[3], slots_c), vec_slots(opnd, o[0], slots_d), code[p, M0], code[p, M1],
                          cd, mma_arch[cd, 0], mma_arch[cd, 1], mma_arch[cd, 2], fault)
        else:
            vec, arow = (o[0], o[1]) if op == Op.LDMATRIX else (o[1], o[0])
            addrs = stack_array(32, np.int64)
            if not _shared_addresses(regs_w, opnd, arow, code[p, M1], addrs, t0, fault):
                return False
            for lane in range(8 * code[p, M2]):
                a = addrs[lane]
                if a < SHARED_BASE:                 # the reserved bytes: no row of a program's
                    set_fault(fault, FAULT_OUT_OF_RANGE, t0 + lane, a, 16)
                    fault[5] = SP_SHARED
                    return False
                if a + 16 <= smem.shape[0] and raced(pend_map, a, 16, t0 + lane, a, fault):
                    return False
            if op == Op.LDMATRIX:
                ok = warp_ldmatrix(regs_w, vec_slots(opnd, vec, slots_d), smem, addrs, code[p, M0], fault)
            else:
                ok = warp_stmatrix(regs_w, vec_slots(opnd, vec, slots_d), smem, addrs, code[p, M0], fault)
        if not ok:
            isa_fault(fault, w)
            fault[5] = SP_SHARED
            return False
        for lane in range(32):
            pc[t0 + lane] += 1
        return True
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
        target = opnd[code[p, O0], IMM]
        for lane in range(32):
            if (gmask >> lane) & 1:
                pc[t0 + lane] = target
            elif (group >> lane) & 1:
                pc[t0 + lane] += 1
        return True
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


