"""The ``@njit`` interpreter: one CTA of a decoded kernel, with a program counter per thread.

Scheduling (independent thread scheduling, as on sm_70+, made deterministic):

- warps run one after another: warp 0 runs until every one of its threads has exited or waits at a
  barrier, then warp 1, ...; when no warp can run, barriers whose count is reached release their
  threads and the round starts again;
- a warp step executes ONE instruction for the group of the warp's running threads whose pc is
  the smallest (the minimum-pc policy). In the code compilers emit, the not-taken side of a
  branch and the exit of a loop lie at higher addresses than the code still to run, so the
  lanes that went ahead wait there until the others arrive, and the warp reconverges: after an
  if/else at the join label, after a loop with lane-dependent trip counts at its exit.

``.aligned`` warp instructions (``mma``, ``ldmatrix``, ``stmatrix``, ``bar.sync``) need every
non-exited lane of the warp in the group; ``shfl/vote/match.sync`` and ``bar.warp.sync`` need
every lane of their member mask. Otherwise the step faults (``FAULT_DIVERGENT``).

Faults fill ``fault`` (``int64[8]``: code, thread, value, extra, pc, space, warp, aux) and stop.
"""

import numpy as np
from numba import njit

from warpsim.isa.cvt import cvt_pack_bits
from warpsim.isa.faults import FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, set_fault
from warpsim.isa.ldmatrix import warp_ldmatrix, warp_stmatrix
from warpsim.isa.mma import warp_mma
from warpsim.ptx.alu import alu, compare, mask, sext, ult, zext
from warpsim.ptx.decode import (GNEG, GUARD, IMM, K_IMM, K_NONE, K_REG, K_SREG, KIND, M0, M1, M2, NEG, NOPS, NW, O0,
                                OP, SB, SK, SLOT, TB, TK)
from warpsim.ptx.memory import (FAULT_RACE, GLOBAL_BASE, SHARED_WINDOW, SP_GENERIC, SP_GLOBAL, SP_SHARED,
                                load, locate, read_bytes, store, write_bytes)
from warpsim.ptx.opcodes import TK_PRED, TK_S, Op

__all__ = ["run_cta", "FAULT_DIVERGENT", "FAULT_STEP_LIMIT", "FAULT_TRAP", "FAULT_DEADLOCK",
           "FAULT_SHFL_SOURCE", "FAULT_CALL_DEPTH", "FAULT_PENDING", "FAULT_READ_ONLY", "FAULT_SPACE",
           "CTX", "RUNNING", "EXITED", "WAITING", "ABSENT", "MAX_PENDING", "PRINT_ARGS"]

FAULT_DIVERGENT = 21     # value: executing lanes, extra: lanes required
FAULT_STEP_LIMIT = 22    # value: the step limit
FAULT_TRAP = 23
FAULT_DEADLOCK = 24      # value: threads waiting at barriers
FAULT_SHFL_SOURCE = 25   # value: the source lane that does not execute
FAULT_CALL_DEPTH = 26
FAULT_PENDING = 27       # value: the limit of outstanding cp.async per thread
FAULT_READ_ONLY = 28     # value: the address
FAULT_SPACE = 29         # value: the address, extra: the space required

RUNNING, EXITED, WAITING, ABSENT = 0, 1, 2, 3
MAX_PENDING = 64
PRINT_ARGS = 256          # bytes of a printf argument buffer copied
# ctx: ntid(3) ctaid(3) nctaid(3) threads smid dyn_smem total_smem steps max_steps nsmid
CTX = {"ntid": 0, "ctaid": 3, "nctaid": 6, "threads": 9, "smid": 10, "dyn_smem": 11, "total_smem": 12,
       "steps": 13, "max_steps": 14, "nsmid": 15}


@njit(cache=True, inline="always")
def _get(r, opnd, row):
    k = opnd[row, KIND]
    if k == K_REG:
        s = opnd[row, SLOT]
        v = np.int64(r[s])
        if opnd[row, NW] == 2:
            v |= np.int64(r[s + 1]) << 32
        if opnd[row, NEG]:
            v = 1 - v
        return v
    if k == K_IMM:
        return opnd[row, IMM]
    return np.int64(0)


@njit(cache=True, inline="always")
def _put(r, opnd, row, v):
    if opnd[row, KIND] != K_REG:
        return
    s = opnd[row, SLOT]
    r[s] = np.uint32(v & 0xFFFFFFFF)
    if opnd[row, NW] == 2:
        r[s + 1] = np.uint32((v >> 32) & 0xFFFFFFFF)


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
def _raced(pend_map, off, size, t, addr, fault):
    for i in range(size):
        if pend_map[off + i] != 0:
            set_fault(fault, FAULT_RACE, t, addr, size)
            return True
    return False


@njit(cache=True)
def _land(t, keep_groups, pend, npend, groups, pend_map, smem, gmem):
    """Land thread ``t``'s cp.async copies of groups older than the newest ``keep_groups``."""
    k = 0
    for i in range(npend[t]):
        dst, src, size, srcsize, group = pend[t, i, 0], pend[t, i, 1], pend[t, i, 2], pend[t, i, 3], pend[t, i, 4]
        if keep_groups < 0 or group < groups[t] - keep_groups:
            for b in range(size):
                smem[dst + b] = gmem[src + b] if b < srcsize else np.uint8(0)
                pend_map[dst + b] -= 1
        else:
            pend[t, k, :] = pend[t, i, :]
            k += 1
    npend[t] = k


@njit(cache=True)
def _lane_address(r, opnd, row):
    base = np.int64(0)
    if opnd[row, SLOT] >= 0:
        s = opnd[row, SLOT]
        base = np.int64(r[s])
        if opnd[row, NW] == 2:
            base |= np.int64(r[s + 1]) << 32
    return base + opnd[row, IMM]


@njit(cache=True)
def _shared_addresses(regs_w, opnd, row, space, addrs, t0, fault):
    """Each lane's shared-space offset of an ldmatrix/stmatrix address operand."""
    for lane in range(32):
        a = _lane_address(regs_w[lane], opnd, row)
        if space == SP_GENERIC:
            if a < SHARED_WINDOW or a >= 2 * SHARED_WINDOW:
                set_fault(fault, FAULT_SPACE, t0 + lane, a, SP_SHARED)
                return False
            a -= SHARED_WINDOW
        addrs[lane] = a
    return True


@njit(cache=True)
def _vec_slots(opnd, row):
    n = opnd[row, NW]
    first = opnd[row, SLOT]
    out = np.empty(n, np.int64)
    for j in range(n):
        out[j] = opnd[first + j, SLOT]
    return out


@njit(cache=True)
def _isa_fault(fault, w):
    """Turn a fault of an isa warp primitive (lane in ``fault[1]``) into a thread's."""
    if fault[0] != 0:
        fault[1] += 32 * w
        return True
    return False


@njit(cache=True)
def _warp_op(p, op, w, gmask, alive, code, opnd, regs, pc, status, smem, pend_map, bar_arrived, bar_expect,
             bar_id, mma_arch, fault):
    """A warp-collective instruction for the lanes of ``gmask`` (guard true); False on a fault."""
    t0 = 32 * w
    regs_w = regs[w]
    o = code[p, O0:]
    if op == Op.BAR and code[p, M0] != 2:
        if code[p, M1] and gmask != alive:
            set_fault(fault, FAULT_DIVERGENT, t0, gmask, alive)
            return False
        lane0 = 0
        while not (gmask >> lane0) & 1:
            lane0 += 1
        b = _get(regs_w[lane0], opnd, o[0]) & 15
        if code[p, NOPS] > 1:                                # NOPS: a thread count
            bar_expect[b] = _get(regs_w[lane0], opnd, o[1])
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
            ok = warp_mma(regs_w, _vec_slots(opnd, o[1]), _vec_slots(opnd, o[2]), _vec_slots(opnd, o[3]),
                          _vec_slots(opnd, o[0]), code[p, M0], code[p, M1], cd, mma_arch[cd, 0],
                          mma_arch[cd, 1], mma_arch[cd, 2], fault)
        else:
            vec, arow = (o[0], o[1]) if op == Op.LDMATRIX else (o[1], o[0])
            addrs = np.empty(32, np.int64)
            if not _shared_addresses(regs_w, opnd, arow, code[p, M1], addrs, t0, fault):
                return False
            for lane in range(8 * code[p, M2]):
                a = addrs[lane]
                if 0 <= a and a + 16 <= smem.shape[0] and _raced(pend_map, a, 16, t0 + lane, a, fault):
                    return False
            if op == Op.LDMATRIX:
                ok = warp_ldmatrix(regs_w, _vec_slots(opnd, vec), smem, addrs, code[p, M0], fault)
            else:
                ok = warp_stmatrix(regs_w, _vec_slots(opnd, vec), smem, addrs, code[p, M0], fault)
        if not ok:
            _isa_fault(fault, w)
            fault[5] = SP_SHARED
            return False
        for lane in range(32):
            pc[t0 + lane] += 1
        return True
    # shfl / vote / match / bar.warp.sync / activemask: a member mask per lane
    members = np.int64(0)
    for lane in range(32):
        if (gmask >> lane) & 1:
            members |= _get(regs_w[lane], opnd, o[code[p, NOPS] - 1]) & 0xFFFFFFFF
    if op == Op.ACTIVEMASK:
        members = gmask
    if members & ~gmask:
        set_fault(fault, FAULT_DIVERGENT, t0, gmask, members)
        return False
    vals = np.zeros(32, np.int64)
    if op == Op.SHFL:
        mode = code[p, M0]
        out = np.zeros(32, np.int64)
        inside = np.zeros(32, np.int64)
        for lane in range(32):
            vals[lane] = _get(regs_w[lane], opnd, o[2])
        for lane in range(32):
            if not (gmask >> lane) & 1:
                continue
            r = regs_w[lane]
            bval = _get(r, opnd, o[3]) & 0x1F
            cv = _get(r, opnd, o[4])
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
                _put(r, opnd, o[0], out[lane])
                _put(r, opnd, o[1], inside[lane])
                pc[t0 + lane] += 1
        return True
    if op == Op.VOTE:
        ballot = np.int64(0)
        for lane in range(32):
            if (members >> lane) & 1 and _get(regs_w[lane], opnd, o[1]) & 1:
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
                _put(regs_w[lane], opnd, o[0], res)
                pc[t0 + lane] += 1
        return True
    if op == Op.MATCH:
        bits = code[p, TB]
        for lane in range(32):
            vals[lane] = zext(_get(regs_w[lane], opnd, o[2]), bits)
        for lane in range(32):
            if not (gmask >> lane) & 1:
                continue
            same = np.int64(0)
            for k in range(32):
                if (members >> k) & 1 and vals[k] == vals[lane]:
                    same |= np.int64(1) << k
            if code[p, M0]:
                allsame = same == members
                _put(regs_w[lane], opnd, o[0], members if allsame else np.int64(0))
                _put(regs_w[lane], opnd, o[1], np.int64(allsame))
            else:
                _put(regs_w[lane], opnd, o[0], same)
            pc[t0 + lane] += 1
        return True
    for lane in range(32):                     # bar.warp.sync, activemask
        if (gmask >> lane) & 1:
            if op == Op.ACTIVEMASK:
                _put(regs_w[lane], opnd, o[0], gmask)
            pc[t0 + lane] += 1
    return True


@njit(cache=True, inline="always")
def _val(regs, w, lane, k, s, n, imm, neg):
    """One lane's value of an operand given as its fields (see ``_rd``)."""
    if k == K_REG:
        v = np.int64(regs[w, lane, s])
        if n == 2:
            v |= np.int64(regs[w, lane, s + 1]) << 32
        if neg:
            v = 1 - v
        return v
    if k == K_IMM:
        return imm
    return np.int64(0)


@njit(cache=True, inline="always")
def _set(regs, w, lane, k, s, n, v):
    if k == K_REG:
        regs[w, lane, s] = np.uint32(v & 0xFFFFFFFF)
        if n == 2:
            regs[w, lane, s + 1] = np.uint32((v >> 32) & 0xFFFFFFFF)


@njit(cache=True)
def _warp_simple(p, op, w, group, gmask, code, opnd, regs, pc):
    """The common per-thread instructions for a whole group at once (integer ALU without carries,
    setp, selp, mov, integer cvt, cvta, bra, fences). Returns False for any other instruction,
    which then runs thread by thread in ``_lane_op``."""
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
    if op <= Op.SAD and tk != TK_PRED and code[p, M1] == 0 and code[p, M2] == 0:
        width = tb * 2 if m0 == 2 and (op == Op.MUL or op == Op.MAD) else tb
        if op == Op.POPC or op == Op.CLZ:
            width = 32
        wm = mask(width)
        for lane in range(32):
            if (gmask >> lane) & 1:
                a = _val(regs, w, lane, k1, s1, n1, i1, g1)
                b = _val(regs, w, lane, k2, s2, n2, i2, g2)
                if op == Op.ADD:
                    v = a + b
                elif op == Op.AND:
                    v = a & b
                elif op == Op.SHL and 0 <= b < tb:
                    v = a << b
                elif op == Op.MUL and m0 == 0:
                    v = a * b
                else:
                    c = _val(regs, w, lane, k3, s3, n3, i3, g3)
                    if op == Op.MAD and m0 == 0:
                        v = a * b + c
                    else:
                        v = alu(op, tk, tb, m0, a, b, c, _val(regs, w, lane, k4, s4, n4, i4, g4))
                _set(regs, w, lane, k0, s0, n0, v & wm)
    elif op == Op.SETP:
        signed = tk == TK_S
        boolop = code[p, M1]
        for lane in range(32):
            if (gmask >> lane) & 1:
                res = compare(m0, _val(regs, w, lane, k2, s2, n2, i2, g2), _val(regs, w, lane, k3, s3, n3, i3, g3),
                              tb, signed)
                pv, qv = np.int64(res), np.int64(not res)
                if boolop:
                    c = _val(regs, w, lane, k4, s4, n4, i4, g4) & 1
                    if boolop == 1:
                        pv, qv = pv & c, qv & c
                    elif boolop == 2:
                        pv, qv = pv | c, qv | c
                    else:
                        pv, qv = pv ^ c, qv ^ c
                _set(regs, w, lane, k0, s0, n0, pv)
                _set(regs, w, lane, k1, s1, n1, qv)
    elif op == Op.SELP:
        for lane in range(32):
            if (gmask >> lane) & 1:
                c = _val(regs, w, lane, k3, s3, n3, i3, g3) & 1
                v = _val(regs, w, lane, k1, s1, n1, i1, g1) if c else _val(regs, w, lane, k2, s2, n2, i2, g2)
                _set(regs, w, lane, k0, s0, n0, v)
    elif op == Op.MOV and m0 == 0 and k1 != K_SREG:
        wm = mask(tb) if tk != TK_PRED else np.int64(1)
        for lane in range(32):
            if (gmask >> lane) & 1:
                _set(regs, w, lane, k0, s0, n0, _val(regs, w, lane, k1, s1, n1, i1, g1) & wm)
    elif op == Op.CVT and m0 == 0:
        sk, sb, sat = code[p, SK], code[p, SB], code[p, M1]
        for lane in range(32):
            if (gmask >> lane) & 1:
                _set(regs, w, lane, k0, s0, n0, _cvt_int(_val(regs, w, lane, k1, s1, n1, i1, g1), tk, tb, sk, sb, sat))
    elif op == Op.CVTA:
        window = np.int64(0) if m0 == SP_GLOBAL else (np.int64(m0 - 1) << 40)
        if code[p, M1]:
            window = -window
        for lane in range(32):
            if (gmask >> lane) & 1:
                _set(regs, w, lane, k0, s0, n0, (_val(regs, w, lane, k1, s1, n1, i1, g1) + window) & mask(tb))
    elif op == Op.FENCE or op == Op.NOP:
        pass
    else:
        return False
    for lane in range(32):
        if (group >> lane) & 1:
            pc[t0 + lane] += 1
    return True


@njit(cache=True)
def _warp_shared_global(p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, pend_map, fault):
    """``ld``/``st`` of ``.shared`` or ``.global`` (not generic) for a whole group, bytes accessed in
    place. Returns False when it does not apply (another space) or on a fault (``fault`` set)."""
    space = code[p, M0]
    if space != SP_SHARED and space != SP_GLOBAL:
        return False
    tk, tb, n = code[p, TK], code[p, TB], code[p, M1]
    esize = max(tb // 8, 1)
    size = esize * n
    o = code[p, O0:O0 + 2]
    arow, drow = (o[1], o[0]) if op == Op.LD else (o[0], o[1])
    s_base, n_base, imm = opnd[arow, SLOT], opnd[arow, NW], opnd[arow, IMM]
    mem = smem if space == SP_SHARED else gmem
    bias = 0 if space == SP_SHARED else GLOBAL_BASE
    t0 = 32 * w
    for lane in range(32):                      # check every lane first: a fault changes nothing
        if not (gmask >> lane) & 1:
            continue
        addr = imm
        if s_base >= 0:
            addr += np.int64(regs[w, lane, s_base])
            if n_base == 2:
                addr += np.int64(regs[w, lane, s_base + 1]) << 32
        off = addr - bias
        if off < 0 or off > mem.shape[0] - size:
            set_fault(fault, FAULT_OUT_OF_RANGE, t0 + lane, addr, size)
            fault[5] = space
            return False
        if off % size != 0:
            set_fault(fault, FAULT_MISALIGNED, t0 + lane, addr, size)
            fault[5] = space
            return False
        if space == SP_SHARED and _raced(pend_map, off, size, t0 + lane, addr, fault):
            return False
    for lane in range(32):
        if not (gmask >> lane) & 1:
            continue
        addr = imm
        if s_base >= 0:
            addr += np.int64(regs[w, lane, s_base])
            if n_base == 2:
                addr += np.int64(regs[w, lane, s_base + 1]) << 32
        off = addr - bias
        for j in range(n):
            row = opnd[drow, SLOT] + j if n > 1 else drow
            k, sl, nw = opnd[row, KIND], opnd[row, SLOT], opnd[row, NW]
            if op == Op.LD:
                v = read_bytes(mem, off + j * esize, esize)
                if tk == TK_S:
                    v = sext(v, tb)
                _set(regs, w, lane, k, sl, nw, v)
            elif k == K_REG or k == K_IMM:
                v = _val(regs, w, lane, k, sl, nw, opnd[row, IMM], 0)
                write_bytes(mem, off + j * esize, esize, v)
    for lane in range(32):
        if (group >> lane) & 1:
            pc[t0 + lane] += 1
    return True


@njit(cache=True)
def _lane_op(p, op, t, lane, w, code, opnd, copies, r, pc, status, stack, depth, ccf, smem, gmem, local,
             const, kparam, fparam, pend, npend, groups, pend_map, ctx, clock, prbuf, prrec, nprint, fault):
    """One thread's instruction (not warp-collective); advances its pc. False on a fault."""
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    if op <= Op.MADC:
        a = _get(r, opnd, o[1])
        b = _get(r, opnd, o[2]) if code[p, NOPS] > 2 else np.int64(0)
        c = _get(r, opnd, o[3]) if code[p, NOPS] > 3 else np.int64(0)
        e = _get(r, opnd, o[4]) if code[p, NOPS] > 4 else np.int64(0)
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
        if op == Op.POPC or op == Op.CLZ:
            width = 32
        _put(r, opnd, o[0], v & mask(width) if tk != TK_PRED else v)
    elif op == Op.SETP:
        signed = tk == TK_S
        res = compare(code[p, M0], _get(r, opnd, o[2]), _get(r, opnd, o[3]), tb, signed)
        pv, qv = np.int64(res), np.int64(not res)
        boolop = code[p, M1]
        if boolop:
            c = _get(r, opnd, o[4]) & 1
            if boolop == 1:
                pv, qv = pv & c, qv & c
            elif boolop == 2:
                pv, qv = pv | c, qv | c
            else:
                pv, qv = pv ^ c, qv ^ c
        _put(r, opnd, o[0], pv)
        _put(r, opnd, o[1], qv)
    elif op == Op.SELP:
        c = _get(r, opnd, o[3]) & 1
        _put(r, opnd, o[0], _get(r, opnd, o[1]) if c else _get(r, opnd, o[2]))
    elif op == Op.SLCT:
        c = sext(_get(r, opnd, o[3]), 32)
        _put(r, opnd, o[0], _get(r, opnd, o[1]) if c >= 0 else _get(r, opnd, o[2]))
    elif op == Op.MOV:
        mode = code[p, M0]
        if mode == 1:                                   # mov.b64 d, {a, b}: pack
            n = opnd[o[1], NW]
            first = opnd[o[1], SLOT]
            ebits = tb // n
            v = np.int64(0)
            for j in range(n):
                v |= zext(_get(r, opnd, first + j), ebits) << (ebits * j)
            _put(r, opnd, o[0], v)
        elif mode == 2:                                 # mov.b64 {a, b}, d: unpack
            n = opnd[o[0], NW]
            first = opnd[o[0], SLOT]
            ebits = tb // n
            v = _get(r, opnd, o[1])
            for j in range(n):
                _put(r, opnd, first + j, zext(v >> (ebits * j), ebits))
        else:
            if opnd[o[1], KIND] == K_SREG:
                v = _special(opnd[o[1], IMM], t, lane, w, ctx, clock)
            else:
                v = _get(r, opnd, o[1])
            _put(r, opnd, o[0], v & mask(tb) if tk != TK_PRED else v & 1)
    elif op == Op.CVT:
        if code[p, M0] == 1:
            v = cvt_pack_bits(_get(r, opnd, o[1]) & 0xFFFFFFFF, _get(r, opnd, o[2]) & 0xFFFFFFFF, code[p, M2])
            _put(r, opnd, o[0], v)
        else:
            _put(r, opnd, o[0], _cvt_int(_get(r, opnd, o[1]), tk, tb, code[p, SK], code[p, SB], code[p, M1]))
    elif op == Op.CVTA:
        v = _get(r, opnd, o[1])
        space = code[p, M0]
        window = np.int64(0) if space == SP_GLOBAL else (np.int64(space - 1) << 40)
        v = v - window if code[p, M1] else v + window
        _put(r, opnd, o[0], v & mask(tb))
    elif op == Op.LD or op == Op.ST:
        return _ld_st(p, op, t, code, opnd, r, smem, gmem, local, const, kparam, fparam, pend_map, pc, fault)
    elif op == Op.ATOM:
        return _atom(p, t, code, opnd, r, smem, gmem, local, const, kparam, fparam, pend_map, pc, fault)
    elif op == Op.CP_ASYNC:
        size = code[p, M0]
        dst = _lane_address(r, opnd, o[0])
        src = _lane_address(r, opnd, o[1])
        srcsize = _get(r, opnd, o[2]) if code[p, NOPS] > 2 else size
        dsp, doff = locate(SP_SHARED, dst, size, t, gmem, smem, local, const, kparam, fparam, fault)
        if dsp < 0:
            return False
        ssp, soff = locate(SP_GENERIC, src, size, t, gmem, smem, local, const, kparam, fparam, fault)
        if ssp < 0:
            return False
        if ssp != SP_GLOBAL:
            set_fault(fault, FAULT_SPACE, t, src, SP_GLOBAL)
            return False
        if npend[t] >= MAX_PENDING:
            set_fault(fault, FAULT_PENDING, t, MAX_PENDING, 0)
            return False
        k = npend[t]
        pend[t, k, 0], pend[t, k, 1], pend[t, k, 2] = doff, soff, size
        pend[t, k, 3], pend[t, k, 4] = min(max(srcsize, 0), size), groups[t]
        npend[t] = k + 1
        for b in range(size):
            pend_map[doff + b] += 1
    elif op == Op.CP_COMMIT:
        groups[t] += 1
    elif op == Op.CP_WAIT:
        _land(t, code[p, M0], pend, npend, groups, pend_map, smem, gmem)
    elif op == Op.CP_WAIT_ALL:
        _land(t, -1, pend, npend, groups, pend_map, smem, gmem)
    elif op == Op.BRA:
        pc[t] = opnd[o[0], IMM]
        return True
    elif op == Op.CALL:
        if depth[t] >= stack.shape[1]:
            set_fault(fault, FAULT_CALL_DEPTH, t, stack.shape[1], 0)
            return False
        start, nargs = code[p, M0], code[p, M1]
        for k in range(start, start + nargs):
            for b in range(copies[k, 2]):
                fparam[t, copies[k, 1] + b] = fparam[t, copies[k, 0] + b]
        stack[t, depth[t]] = p
        depth[t] += 1
        pc[t] = opnd[o[0], IMM]
        return True
    elif op == Op.RET or op == Op.EXIT:
        if op == Op.RET and depth[t] > 0:
            depth[t] -= 1
            cp = stack[t, depth[t]]
            start = code[cp, M0] + code[cp, M1]
            for k in range(start, start + code[cp, M2]):
                for b in range(copies[k, 2]):
                    fparam[t, copies[k, 1] + b] = fparam[t, copies[k, 0] + b]
            pc[t] = cp + 1
            return True
        status[t] = EXITED
        _land(t, -1, pend, npend, groups, pend_map, smem, gmem)
        return True
    elif op == Op.TRAP:
        set_fault(fault, FAULT_TRAP, t, 0, 0)
        return False
    elif op == Op.PRINTF:
        return _printf(p, t, code, smem, gmem, local, const, kparam, fparam, pc, prbuf, prrec, nprint, fault)
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
def _cvt_int(v, dk, db, sk, sb, sat):
    """``cvt.dtype.stype`` between integer types; ``.sat`` clamps to the destination's range."""
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
    return zext(x, db)


@njit(cache=True)
def _ld_st(p, op, t, code, opnd, r, smem, gmem, local, const, kparam, fparam, pend_map, pc, fault):
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    esize = max(tb // 8, 1)
    n = code[p, M1]
    arow, drow = (o[1], o[0]) if op == Op.LD else (o[0], o[1])
    addr = _lane_address(r, opnd, arow)
    sp, off = locate(code[p, M0], addr, esize * n, t, gmem, smem, local, const, kparam, fparam, fault)
    if sp < 0:
        return False
    if sp == SP_SHARED and _raced(pend_map, off, esize * n, t, addr, fault):
        return False
    for j in range(n):
        row = opnd[drow, SLOT] + j if n > 1 else drow
        if op == Op.LD:
            v = load(sp, off + j * esize, esize, t, gmem, smem, local, const, kparam, fparam)
            if tk == TK_S:
                v = sext(v, tb)
            words = opnd[row, NW]
            _put(r, opnd, row, v & mask(32 * words) if words == 1 else v)
        else:
            if opnd[row, KIND] != K_REG and opnd[row, KIND] != K_IMM:
                continue
            if not store(sp, off + j * esize, esize, _get(r, opnd, row), t, gmem, smem, local, kparam, fparam):
                set_fault(fault, FAULT_READ_ONLY, t, addr, 0)
                return False
    pc[t] += 1
    return True


@njit(cache=True)
def _atom(p, t, code, opnd, r, smem, gmem, local, const, kparam, fparam, pend_map, pc, fault):
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    size = tb // 8
    addr = _lane_address(r, opnd, o[1])
    sp, off = locate(code[p, M0], addr, size, t, gmem, smem, local, const, kparam, fparam, fault)
    if sp < 0:
        return False
    if sp != SP_GLOBAL and sp != SP_SHARED:
        set_fault(fault, FAULT_SPACE, t, addr, SP_GLOBAL)
        return False
    if sp == SP_SHARED and _raced(pend_map, off, size, t, addr, fault):
        return False
    m = mask(tb)
    old = load(sp, off, size, t, gmem, smem, local, const, kparam, fparam)
    b = _get(r, opnd, o[2]) & m
    kind = code[p, M1]
    signed = tk == TK_S
    if kind == 0:
        new = old + b
    elif kind == 1 or kind == 2:
        if signed:
            lt = sext(old, tb) < sext(b, tb)
        else:
            lt = ult(old, b)
        new = (old if lt else b) if kind == 1 else (b if lt else old)
    elif kind == 3:
        new = np.int64(0) if not ult(old, b) else old + 1
    elif kind == 4:
        new = b if (old == 0 or ult(b, old)) else old - 1
    elif kind == 5:
        new = old & b
    elif kind == 6:
        new = old | b
    elif kind == 7:
        new = old ^ b
    elif kind == 8:
        new = b
    else:
        new = (_get(r, opnd, o[3]) & m) if old == b else old
    store(sp, off, size, new & m, t, gmem, smem, local, kparam, fparam)
    _put(r, opnd, o[0], old)
    pc[t] += 1
    return True


@njit(cache=True)
def _printf(p, t, code, smem, gmem, local, const, kparam, fparam, pc, prbuf, prrec, nprint, fault):
    """``call vprintf``: copy the format string and the argument buffer of thread ``t`` to the log."""
    fmt_addr = read_bytes(fparam[t], code[p, M0], 8)
    args_addr = read_bytes(fparam[t], code[p, M1], 8)
    k = nprint[0]
    if k >= prrec.shape[0]:
        pc[t] += 1
        return True
    start = nprint[1]
    n = 0
    while True:
        sp, off = locate(SP_GENERIC, fmt_addr + n, 1, t, gmem, smem, local, const, kparam, fparam, fault)
        if sp < 0:
            return False
        ch = load(sp, off, 1, t, gmem, smem, local, const, kparam, fparam)
        if ch == 0 or start + n >= prbuf.shape[0] - PRINT_ARGS:
            break
        prbuf[start + n] = ch
        n += 1
    nargs = 0
    if args_addr != 0:
        sp, off = locate(SP_GENERIC, args_addr, 1, t, gmem, smem, local, const, kparam, fparam, fault)
        if sp < 0:
            return False
        while nargs < PRINT_ARGS:
            sp2, off2 = locate(SP_GENERIC, args_addr + nargs, 1, t, gmem, smem, local, const, kparam, fparam,
                               fault)
            if sp2 < 0:
                fault[:] = 0
                break
            prbuf[start + n + nargs] = load(sp2, off2, 1, t, gmem, smem, local, const, kparam, fparam)
            nargs += 1
    prrec[k, 0], prrec[k, 1], prrec[k, 2], prrec[k, 3] = t, start, n, nargs
    nprint[0] = k + 1
    nprint[1] = start + n + nargs
    ret = code[p, M2]
    if ret >= 0:
        for b in range(4):
            fparam[t, ret + b] = 0
    pc[t] += 1
    return True


@njit(cache=True)
def run_cta(code, opnd, copies, regs, pc, status, bar_id, stack, depth, ccf, smem, gmem, local, const, kparam,
            fparam, pend, npend, groups, pend_map, ctx, clocks, counts, mma_arch, prbuf, prrec, nprint, fault):
    """Run one CTA to its end (every thread exited) or to a fault; see the module docstring.

    Returns True when the CTA finished. ``ctx[13]`` counts warp steps (also across calls).
    """
    warps = regs.shape[0]
    bar_arrived = np.zeros(16, np.int64)
    bar_expect = np.zeros(16, np.int64)
    steps = ctx[13]
    max_steps = ctx[14]
    big = np.int64(1) << 62
    while True:
        for w in range(warps):
            t0 = 32 * w
            while True:
                p = big
                alive = np.int64(0)
                for lane in range(32):
                    s = status[t0 + lane]
                    if s == RUNNING and pc[t0 + lane] < p:
                        p = pc[t0 + lane]
                    if s == RUNNING or s == WAITING:
                        alive |= np.int64(1) << lane
                if p == big:
                    break
                group = np.int64(0)
                gmask = np.int64(0)
                g = code[p, GUARD]
                for lane in range(32):
                    if status[t0 + lane] == RUNNING and pc[t0 + lane] == p:
                        group |= np.int64(1) << lane
                        if g < 0 or (regs[w, lane, g] & 1) != code[p, GNEG]:
                            gmask |= np.int64(1) << lane
                steps += 1
                if steps > max_steps:
                    ctx[13] = steps
                    set_fault(fault, FAULT_STEP_LIMIT, t0, max_steps, 0)
                    fault[4] = p
                    return False
                op = code[p, OP]
                counts[op] += 1
                clocks[w] += 1
                if op == Op.BAR or op == Op.LDMATRIX or op == Op.STMATRIX or op == Op.MMA or op == Op.SHFL \
                        or op == Op.VOTE or op == Op.MATCH or op == Op.ACTIVEMASK:
                    for lane in range(32):
                        if (group >> lane) & 1 and not (gmask >> lane) & 1:
                            pc[t0 + lane] += 1
                    if gmask != 0 and not _warp_op(p, op, w, gmask, alive, code, opnd, regs, pc, status, smem,
                                                   pend_map, bar_arrived, bar_expect, bar_id, mma_arch, fault):
                        fault[4] = p
                        fault[6] = w
                        ctx[13] = steps
                        return False
                    continue
                if _warp_simple(p, op, w, group, gmask, code, opnd, regs, pc):
                    continue
                if op == Op.LD or op == Op.ST:
                    if _warp_shared_global(p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, pend_map, fault):
                        continue
                    if fault[0] != 0:
                        fault[4] = p
                        fault[6] = w
                        ctx[13] = steps
                        return False
                for lane in range(32):
                    if not (group >> lane) & 1:
                        continue
                    t = t0 + lane
                    if not (gmask >> lane) & 1:
                        pc[t] += 1
                        continue
                    if not _lane_op(p, op, t, lane, w, code, opnd, copies, regs[w, lane], pc, status, stack,
                                    depth, ccf, smem, gmem, local, const, kparam, fparam, pend, npend, groups,
                                    pend_map, ctx, clocks[w], prbuf, prrec, nprint, fault):
                        fault[4] = p
                        fault[6] = w
                        ctx[13] = steps
                        return False
        # every warp waits or has exited: release the barriers whose count is reached
        alive_threads = 0
        waiting = 0
        for t in range(status.shape[0]):
            if status[t] == RUNNING or status[t] == WAITING:
                alive_threads += 1
            if status[t] == WAITING:
                waiting += 1
        if waiting == 0:
            ctx[13] = steps
            return True
        released = False
        for b in range(16):
            need = bar_expect[b] if bar_expect[b] > 0 else alive_threads
            if bar_arrived[b] > 0 and bar_arrived[b] >= need:
                for t in range(status.shape[0]):
                    if status[t] == WAITING and bar_id[t] == b:
                        status[t] = RUNNING
                bar_arrived[b] = 0
                bar_expect[b] = 0
                released = True
        if not released:
            ctx[13] = steps
            set_fault(fault, FAULT_DEADLOCK, 0, waiting, alive_threads)
            fault[4] = -1
            return False
