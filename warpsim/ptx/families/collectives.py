"""The warp collectives: ``shfl.sync``, ``vote.sync``, ``elect.sync``, ``match.sync``, ``redux.sync`` and ``activemask``, decoded and
executed for the lanes of a warp at once.

A ``.sync`` collective (and ``bar.warp.sync``, which shares its member-mask path) waits for every lane of its member
mask: :func:`sync_members` gives the interpreter (:mod:`warpsim.ptx.interp`) the lanes to wait for; once they are all
there :func:`warp_collectives` runs it for the lanes whose guard holds (a member outside them is a
``FAULT_DIVERGENT``, a ``shfl`` reading an inactive lane a ``FAULT_SHFL_SOURCE``).
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import FAULT_DIVERGENT, FAULT_SHFL_SOURCE, set_fault
from warpsim.isa.scratch import njit_borrowing, stack_array
from warpsim.ptx.alu import sext, zext
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.opcodes import TK_S, TYPES, Op
from warpsim.ptx.operands import get, put
from warpsim.ptx.rows import K_NONE, M0, NOPS, O0, REDUX_OPS, SHFL_MODES, TB, TK, VOTE_MODES

ELECT = 4                 # the vote mode of elect.sync (after VOTE_MODES' all, any, uni, ballot)
from warpsim.ptx.shadow import K_MASK, ON_SANITIZE, S_CTA, S_ON, S_THREADS, S_WSYNC, shadow_finding

__all__ = ["CollectivesDecoder", "DECODER", "sync_members", "warp_collectives"]


class CollectivesDecoder(FamilyDecoder):
    """Decodes ``shfl.sync``, ``vote.sync``, ``match.{any,all}.sync``, ``redux.sync`` and ``activemask``."""

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
        if ins.opcode == "elect":                        # elect.sync d|p, membermask: a vote for the lowest member
            if "sync" not in mods:
                raise self.error(ins.token, f"{name_of(ins)}: expected elect.sync d|p, membermask")
            self.count(ins, ops, 2)
            d = ops[0]
            q = self.operand(fn, d.pair, pred=True) if d.pair is not None else self.add_opnd(K_NONE)
            return self.emit(fn, ins, op, mods=(ELECT, 0, 0, 0), operands=[self.operand(fn, d), q,
                                                                          self.operand(fn, ops[1])])
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

    def do_redux(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types)
        kind = next((REDUX_OPS[m] for m in mods if m in REDUX_OPS), None)
        if kind is None or "sync" not in mods or TYPES[t][1] != 32:
            raise self.error(ins.token, f"{name_of(ins)}: expected redux.sync.{{add,min,max,and,or,xor}} on 32 bits",
                             UnsupportedType)
        self.count(ins, ops, 3)
        self.emit(fn, ins, op, (t, None), (kind, 0, 0, 0), [self.operand(fn, o) for o in ops])

    def do_activemask(self, fn, ins, op, mods, types, ops):
        self.count(ins, ops, 1)
        self.emit(fn, ins, op, operands=[self.operand(fn, ops[0])])


DECODER = CollectivesDecoder


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


@njit_borrowing
def warp_collectives(p, op, w, gmask, code, opnd, regs, pc, fault, sstate, finds):
    """``shfl``, ``vote``, ``match``, ``redux``, ``activemask`` and ``bar.warp.sync`` for the lanes of ``gmask`` (guard
    true), their members all arrived; advances their pcs. False on a fault. For the sanitizer (``sstate[S_ON]``): a
    lane that executes it but is not in its own member mask is a ``K_MASK`` finding (PTX: undefined), and
    ``bar.warp.sync`` starts a new warp epoch (:mod:`warpsim.ptx.shadow`)."""
    t0 = 32 * w
    regs_w = regs[w]
    o = code[p, O0:]
    if sstate[S_ON] == ON_SANITIZE and op != Op.ACTIVEMASK:
        for lane in range(32):
            if (gmask >> lane) & 1:
                own = get(regs_w[lane], opnd, o[code[p, NOPS] - 1]) & 0xFFFFFFFF
                if not (own >> lane) & 1:
                    shadow_finding(finds, sstate, K_MASK, 0, p, -1, sstate[S_CTA] * sstate[S_THREADS] + t0 + lane, -1, own, gmask)
        if op == Op.BAR:
            sstate[S_WSYNC + w] += 1
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
    if op == Op.VOTE and code[p, M0] == ELECT:
        leader = 0
        while not (members >> leader) & 1:
            leader += 1
        for lane in range(32):
            if (gmask >> lane) & 1:
                put(regs_w[lane], opnd, o[0], np.int64(leader))
                put(regs_w[lane], opnd, o[1], np.int64(lane == leader))
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
