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
from warpsim.isa.faults import (FAULT_DIVERGENT, FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, FAULT_SHFL_SOURCE, FAULT_SPACE,
                                set_fault)
from warpsim.isa.ldmatrix import warp_ldmatrix, warp_stmatrix
from warpsim.isa.mma import warp_mma
from warpsim.isa.scratch import stack_array
from warpsim.ptx.alu import alu, compare, mask, sext, zext
from warpsim.ptx.codes import WAITING
from warpsim.ptx.rows import (IMM, K_IMM, K_NONE, K_REG, K_SREG, KIND, M0, M1, M2, M3, NEG, NOPS, NW, O0, SB, SK,
                                SLOT, TB, TK)
from warpsim.ptx.memory import (GLOBAL_BASE, PAGE_SHIFT, SHARED_BASE, SHARED_WINDOW, SP_GENERIC, SP_GLOBAL, SP_SHARED,
                                read_bytes, write_bytes)
from warpsim.ptx.opcodes import TK_PRED, TK_S, Op
from warpsim.ptx.operands import advance, get, isa_fault, lane_address, lane_get, lane_put, put, raced, vec_slots
from warpsim.ptx.thread import cvt_int
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
def sync_members(p, op, w, gmask, code, opnd, regs):
    """The member mask of a ``shfl/vote/match.sync`` or ``bar.warp.sync`` for the lanes of ``gmask`` (the union of
    their ``membermask`` operands), or -1 for any other instruction: the lanes that must arrive before it runs."""
    if not (op == Op.SHFL or op == Op.VOTE or op == Op.MATCH or (op == Op.BAR and code[p, M0] == 2)):
        return np.int64(-1)
    members = np.int64(0)
    last = code[p, O0 + code[p, NOPS] - 1]
    for lane in range(32):
        if (gmask >> lane) & 1:
            members |= get(regs[w, lane], opnd, last) & 0xFFFFFFFF
    return members


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
    # shfl / vote / match / bar.warp.sync / activemask: a member mask per lane
    members = np.int64(0)
    for lane in range(32):
        if (gmask >> lane) & 1:
            members |= get(regs_w[lane], opnd, o[code[p, NOPS] - 1]) & 0xFFFFFFFF
    if op == Op.ACTIVEMASK:
        members = gmask
    if members & ~gmask:
        set_fault(fault, FAULT_DIVERGENT, t0, gmask, members)
        return False
    vals = stack_array(32, np.int64)
    if op == Op.SHFL:
        mode = code[p, M0]
        out = stack_array(32, np.int64)
        inside = stack_array(32, np.int64)
        for lane in range(32):
            vals[lane] = get(regs_w[lane], opnd, o[2])
        for lane in range(32):
            if not (gmask >> lane) & 1:
                continue
            r = regs_w[lane]
            bval = get(r, opnd, o[3]) & 0x1F
            cv = get(r, opnd, o[4])
            cval = cv & 0x1F
            seg = (cv >> 8) & 0x1F
            max_lane = (lane & seg) | (cval & ~seg)
            min_lane = lane & seg
            if mode == 0:
                j = lane - bval
                ok = j >= max_lane
            elif mode == 1:
                j = lane + bval
                ok = j <= max_lane
            elif mode == 2:
                j = lane ^ bval
                ok = j <= max_lane
            else:
                j = min_lane | (bval & ~seg)
                ok = j <= max_lane
            if not ok:
                j = lane
            if not (gmask >> j) & 1:
                set_fault(fault, FAULT_SHFL_SOURCE, t0 + lane, j, 0)
                return False
            out[lane] = vals[j]
            inside[lane] = np.int64(ok)
        for lane in range(32):
            if (gmask >> lane) & 1:
                r = regs_w[lane]
                put(r, opnd, o[0], out[lane])
                put(r, opnd, o[1], inside[lane])
                pc[t0 + lane] += 1
        return True
    if op == Op.VOTE:
        ballot = np.int64(0)
        for lane in range(32):
            if (members >> lane) & 1 and get(regs_w[lane], opnd, o[1]) & 1:
                ballot |= np.int64(1) << lane
        mode = code[p, M0]
        if mode == 0:
            res = np.int64(ballot == members)
        elif mode == 1:
            res = np.int64(ballot != 0)
        elif mode == 2:
            res = np.int64(ballot == 0 or ballot == members)
        else:
            res = ballot
        for lane in range(32):
            if (gmask >> lane) & 1:
                put(regs_w[lane], opnd, o[0], res)
                pc[t0 + lane] += 1
        return True
    if op == Op.MATCH:
        bits = code[p, TB]
        for lane in range(32):
            vals[lane] = zext(get(regs_w[lane], opnd, o[2]), bits)
        for lane in range(32):
            if not (gmask >> lane) & 1:
                continue
            same = np.int64(0)
            for k in range(32):
                if (members >> k) & 1 and vals[k] == vals[lane]:
                    same |= np.int64(1) << k
            if code[p, M0]:
                allsame = same == members
                put(regs_w[lane], opnd, o[0], members if allsame else np.int64(0))
                put(regs_w[lane], opnd, o[1], np.int64(allsame))
            else:
                put(regs_w[lane], opnd, o[0], same)
            pc[t0 + lane] += 1
        return True
    if op == Op.REDUX:
        kind, signed = code[p, M0], code[p, TK] == TK_S
        acc = np.int64(0)
        first = True
        for lane in range(32):
            if (members >> lane) & 1:
                v = get(regs_w[lane], opnd, o[1]) & 0xFFFFFFFF
                if signed:
                    v = sext(v, 32)
                if first:
                    acc, first = v, False
                elif kind == 0:
                    acc += v
                elif kind == 1:
                    acc = min(acc, v)
                elif kind == 2:
                    acc = max(acc, v)
                elif kind == 3:
                    acc &= v
                elif kind == 4:
                    acc |= v
                else:
                    acc ^= v
        for lane in range(32):
            if (gmask >> lane) & 1:
                put(regs_w[lane], opnd, o[0], acc & 0xFFFFFFFF)
                pc[t0 + lane] += 1
        return True
    for lane in range(32):                     # bar.warp.sync, activemask
        if (gmask >> lane) & 1:
            if op == Op.ACTIVEMASK:
                put(regs_w[lane], opnd, o[0], gmask)
            pc[t0 + lane] += 1
    return True


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


@njit(cache=True)
def _generic_window(regs, w, gmask, opnd, arow):
    """``SP_GLOBAL`` when every lane of ``gmask`` has a global generic address, ``SP_SHARED`` when every
    one is in the shared window, else -1 (mixed, another window, or invalid: thread by thread)."""
    space = np.int64(-1)
    for lane in range(32):
        if (gmask >> lane) & 1:
            a = lane_address(regs[w, lane], opnd, arow)
            lsp = SP_GLOBAL if 0 <= a < SHARED_WINDOW else (SP_SHARED if SHARED_WINDOW <= a < 2 * SHARED_WINDOW else -1)
            if lsp < 0 or (space >= 0 and lsp != space):
                return np.int64(-1)
            space = lsp
    return space


@njit(cache=True)
def warp_shared_global(p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, ends, pend_map, fault):
    """``ld``/``st`` of ``.shared`` or ``.global``, or generic when every lane's address is global or
    every one is in the shared window, for a whole group, bytes accessed in place; a global access
    must lie inside one buffer (``ends``: :func:`warpsim.ptx.memory.object_ends`). Returns False
    when it does not apply (another space) or on a fault (``fault`` set)."""
    space = code[p, M0]
    generic = space == SP_GENERIC
    if space != SP_SHARED and space != SP_GLOBAL and not generic:
        return False
    tk, tb, n = code[p, TK], code[p, TB], code[p, M1]
    esize = max(tb // 8, 1)
    size = esize * n
    o = code[p, O0:O0 + 2]
    arow, drow = (o[1], o[0]) if op == Op.LD else (o[0], o[1])
    if generic:
        space = _generic_window(regs, w, gmask, opnd, arow)
        if space < 0:
            return False
    mem = smem if space == SP_SHARED else gmem
    bias = (SHARED_WINDOW if generic else 0) if space == SP_SHARED else GLOBAL_BASE
    lowest = SHARED_BASE if space == SP_SHARED else 0     # shared: the reserved bytes fault
    t0 = 32 * w
    for lane in range(32):                      # check every lane first: a fault changes nothing
        if not (gmask >> lane) & 1:
            continue
        addr = lane_address(regs[w, lane], opnd, arow)
        off = addr - bias
        if (off < lowest or off > mem.shape[0] - size
                or (space == SP_GLOBAL and off + size > ends[off >> PAGE_SHIFT])):
            set_fault(fault, FAULT_OUT_OF_RANGE, t0 + lane, addr, size)
            fault[5] = space
            return False
        if off % size != 0:
            set_fault(fault, FAULT_MISALIGNED, t0 + lane, addr, size)
            fault[5] = space
            return False
        if space == SP_SHARED and raced(pend_map, off, size, t0 + lane, addr, fault):
            return False
    for lane in range(32):
        if not (gmask >> lane) & 1:
            continue
        addr = lane_address(regs[w, lane], opnd, arow)
        off = addr - bias
        for j in range(n):
            row = opnd[drow, SLOT] + j if n > 1 else drow
            k, sl, nw = opnd[row, KIND], opnd[row, SLOT], opnd[row, NW]
            if op == Op.LD:
                v = read_bytes(mem, off + j * esize, esize)
                if tk == TK_S:
                    v = sext(v, tb)
                lane_put(regs, w, lane, k, sl, nw, v)
            elif k == K_REG or k == K_IMM:
                v = lane_get(regs, w, lane, k, sl, nw, opnd[row, IMM], 0)
                write_bytes(mem, off + j * esize, esize, v)
    advance(pc, t0, group)
    return True
