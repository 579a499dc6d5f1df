"""The ``cp.async`` family: ``cp.async.{ca,cg}.shared.global`` and its groups (``commit_group``, ``wait_group``,
``wait_all``), decoded and executed.

Each thread queues its copies (``pend[t]``: shared offset, global offset, bytes, source bytes, group, the row of the
``cp.async``; ``npend[t]``
of them; ``groups[t]``: its committed groups) and counts the pending bytes of shared memory in ``pend_map`` (an
access to a pending byte is a ``FAULT_RACE``); a copy lands (its bytes are written to shared memory) only at a
wait, per thread (:func:`land`; exit lands them all). :func:`thread_cp_async` runs one thread's instruction;
:func:`warp_cp_async` the lanes of a warp at once, with the same effects:

A ``cp.async`` is taken by the warp path only when every lane's copy is one ``thread_cp_async`` would queue
without a fault (destination inside the CTA's shared memory and aligned, source a global generic address inside
one buffer, a free queue entry); otherwise it returns False and the interpreter runs the instruction thread by
thread, which faults at the same lane with the same message. Lanes queue their copies in lane order, as thread
by thread.

For the sanitizer (``sstate[S_ON]``) a ``cp.async`` reads its global source when it is issued and writes its shared
destination when it lands, at the wait (:func:`shadow_landing`), in the waiting thread's name and at the wait's row.
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import FAULT_PENDING, FAULT_SPACE, FAULT_WGMMA_SMEM, set_fault
from warpsim.isa.scratch import njit_borrowing
from warpsim.ptx.codes import MAX_PENDING
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.memory import (GLOBAL_BASE, PAGE_SHIFT, SHARED_BASE, SHARED_WINDOW, SP_GENERIC, SP_GLOBAL, SP_SHARED,
                                locate, locate_prefix, misaligned)
from warpsim.ptx.opcodes import Op
from warpsim.ptx.operands import advance, get, lane_address, wgmma_reads
from warpsim.ptx.rows import M0, MBAR_ASYNC_ARRIVE, NOPS, O0
from warpsim.ptx.shadow import ON_SANITIZE, S_ON, shadow_access

__all__ = ["AsyncCopyDecoder", "DECODER", "land", "shadow_landing", "thread_cp_async", "warp_cp_async"]


class AsyncCopyDecoder(FamilyDecoder):
    """Decodes ``cp.async``, ``cp.async.commit_group``, ``cp.async.wait_group N``, ``cp.async.wait_all``."""

    def do_cp_async(self, fn, ins, op, mods, types, ops):
        if len(mods) > 1 and mods[0] == "async" and mods[1] == "bulk":
            return self.do_cp_bulk(fn, ins, Op.CP_BULK, mods, types, ops)     # warpsim.ptx.families.bulk_copy
        if mods[:3] == ("reduce", "async", "bulk"):
            return self.do_cp_reduce_bulk(fn, ins, Op.CP_BULK, mods, types, ops)
        if not mods or mods[0] != "async":
            raise self.error(ins.token, f"{name_of(ins)}: only cp.async is supported", UnsupportedType)
        if len(mods) > 2 and mods[1] == "mbarrier" and mods[2] == "arrive":   # the mbarrier family runs it
            self.count(ins, ops, 1)
            space = SP_SHARED if any(m.startswith("shared") for m in mods) else SP_GENERIC
            return self.emit(fn, ins, Op.MBARRIER, mods=(MBAR_ASYNC_ARRIVE, 4 * int("noinc" in mods), space, 0),
                             operands=[self.address(fn, ops[0], space)[0]])
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


DECODER = AsyncCopyDecoder


@njit(cache=True)
def land(t, keep_groups, pend, npend, groups, pend_map, smem, gmem):
    """Land thread ``t``'s cp.async copies of groups older than the newest ``keep_groups``."""
    k = 0
    for i in range(npend[t]):
        dst, src, size, srcsize, group = pend[t, i, 0], pend[t, i, 1], pend[t, i, 2], pend[t, i, 3], pend[t, i, 4]
        if keep_groups < 0 or group < groups[t] - keep_groups:
            for b in range(size):
                smem[dst + b] = gmem[src + b] if b < srcsize else np.uint8(0)
                pend_map[dst + b] -= 1
        else:
            for j in range(pend.shape[2]):              # element by element: no views made per entry
                pend[t, k, j] = pend[t, i, j]
            k += 1
    npend[t] = k


@njit(cache=True)
def shadow_landing(p, t, keep_groups, pend, npend, groups, smem, gmem, shadow, sstate, finds):
    """Record, before :func:`land`, the shared writes of the copies of thread ``t`` that land at row ``p``."""
    for i in range(npend[t]):
        dst, src, size, srcsize, group = pend[t, i, 0], pend[t, i, 1], pend[t, i, 2], pend[t, i, 3], pend[t, i, 4]
        if keep_groups < 0 or group < groups[t] - keep_groups:
            for b in range(size):
                v = np.int64(gmem[src + b]) if b < srcsize else np.int64(0)
                shadow_access(shadow, sstate, finds, SP_SHARED, dst + b, 1, t, p, 1, 0, v, smem)


@njit_borrowing
def thread_cp_async(p, op, t, code, opnd, r, pc, smem, gmem, ends, local, const, kparam, fparam, pend, npend, groups,
                    pend_map, fault, shadow, sstate, finds):
    """One thread's ``cp.async`` family instruction (registers ``r``); advances its pc. False on a fault."""
    o = code[p, O0:]
    if op == Op.CP_ASYNC:
        size = code[p, M0]
        dst = lane_address(r, opnd, o[0])
        src = lane_address(r, opnd, o[1])
        srcsize = get(r, opnd, o[2]) if code[p, NOPS] > 2 else size
        dsp, doff = locate(SP_SHARED, dst, size, t, gmem, ends, smem, local, const, kparam, fparam, fault)
        if dsp < 0:
            return False
        srcsize = min(max(srcsize, 0), size)                # only src-size bytes are read: none for 0
        soff = np.int64(0)
        if srcsize > 0:
            ssp, soff = locate_prefix(SP_GENERIC, src, size, srcsize, t, gmem, ends, smem, local, const, kparam,
                                      fparam, fault)
            if ssp < 0:
                return False
            if ssp != SP_GLOBAL:
                set_fault(fault, FAULT_SPACE, t, src, SP_GLOBAL)
                return False
        if npend[t] >= MAX_PENDING:
            set_fault(fault, FAULT_PENDING, t, MAX_PENDING, 0)
            return False
        if wgmma_reads(pend_map, doff, size):             # a stage the tensor cores still read
            set_fault(fault, FAULT_WGMMA_SMEM, t, dst, size)
            return False
        k = npend[t]
        pend[t, k, 0], pend[t, k, 1], pend[t, k, 2] = doff, soff, size
        pend[t, k, 3], pend[t, k, 4], pend[t, k, 5] = srcsize, groups[t], p
        npend[t] = k + 1
        if sstate[S_ON] and srcsize > 0:
            shadow_access(shadow, sstate, finds, SP_GLOBAL, soff, srcsize, t, p, 0, 0, 0, gmem)
        for b in range(size):
            pend_map[doff + b] += 1
    elif op == Op.CP_COMMIT:
        groups[t] += 1
    elif op == Op.CP_WAIT or op == Op.CP_WAIT_ALL:
        keep = code[p, M0] if op == Op.CP_WAIT else np.int64(-1)
        if sstate[S_ON] == ON_SANITIZE:
            shadow_landing(p, t, keep, pend, npend, groups, smem, gmem, shadow, sstate, finds)
        land(t, keep, pend, npend, groups, pend_map, smem, gmem)
    pc[t] += 1
    return True


@njit(cache=True, inline="always")
def _copy(r, opnd, rows, size):
    """``(shared offset, source address, source bytes)`` of one lane's ``cp.async`` (registers ``r``; ``rows``:
    its operand rows, the third -1 where src-size is not given), as ``thread_cp_async`` reads them (source bytes
    clamped to 0..size)."""
    srcsize = get(r, opnd, rows[2]) if rows[2] >= 0 else size
    return lane_address(r, opnd, rows[0]), lane_address(r, opnd, rows[1]), min(max(srcsize, 0), size)


@njit_borrowing
def warp_cp_async(p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, ends, pend, npend, groups, pend_map, shadow,
                  sstate, finds):
    """The ``cp.async`` family for a whole group (see the module docstring); False when it does not apply."""
    t0 = 32 * w
    regs_w = regs[w]
    if op == Op.CP_ASYNC:
        size = code[p, M0]
        rows = (code[p, O0], code[p, O0 + 1], code[p, O0 + 2] if code[p, NOPS] > 2 else np.int64(-1))
        for lane in range(32):                  # every lane's copy must queue without a fault
            if not (gmask >> lane) & 1:
                continue
            dst, src, srcsize = _copy(regs_w[lane], opnd, rows, size)
            if (dst < SHARED_BASE or dst > smem.shape[0] - size or misaligned(dst, size)
                    or npend[t0 + lane] >= MAX_PENDING
                    or wgmma_reads(pend_map, dst, size)):
                return False
            if srcsize > 0:
                off = src - GLOBAL_BASE
                if (src < 0 or src >= SHARED_WINDOW or off < 0 or off > gmem.shape[0] - srcsize
                        or off + srcsize > ends[off >> PAGE_SHIFT] or misaligned(off, size)):
                    return False
        for lane in range(32):
            if not (gmask >> lane) & 1:
                continue
            t = t0 + lane
            dst, src, srcsize = _copy(regs_w[lane], opnd, rows, size)
            k = npend[t]
            pend[t, k, 0], pend[t, k, 1], pend[t, k, 2] = dst, (src - GLOBAL_BASE if srcsize > 0 else 0), size
            pend[t, k, 3], pend[t, k, 4], pend[t, k, 5] = srcsize, groups[t], p
            npend[t] = k + 1
            for b in range(size):
                pend_map[dst + b] += 1
            if sstate[S_ON] and srcsize > 0:
                shadow_access(shadow, sstate, finds, SP_GLOBAL, src - GLOBAL_BASE, srcsize, t, p, 0, 0, 0, gmem)
    elif op == Op.CP_COMMIT or op == Op.CP_WAIT or op == Op.CP_WAIT_ALL:
        keep = code[p, M0] if op == Op.CP_WAIT else np.int64(-1)
        for lane in range(32):
            if (gmask >> lane) & 1:
                if op == Op.CP_COMMIT:
                    groups[t0 + lane] += 1
                else:
                    if sstate[S_ON] == ON_SANITIZE:
                        shadow_landing(p, t0 + lane, keep, pend, npend, groups, smem, gmem, shadow, sstate, finds)
                    land(t0 + lane, keep, pend, npend, groups, pend_map, smem, gmem)
    else:
        return False
    advance(pc, t0, group)
    return True
