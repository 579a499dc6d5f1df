"""``cp.async`` and its groups for the lanes of a warp at once (``@njit``): the same effects as thread by thread.

``warp_cp_async`` executes ``cp.async.{ca,cg}.shared.global``, ``cp.async.commit_group``, ``cp.async.wait_group``
and ``cp.async.wait_all`` for the lanes of ``gmask`` (the others of ``group`` only advance their pc), with the
per-thread queues of :func:`warpsim.ptx.thread.thread_op` (``pend``, ``npend``, ``groups``, ``pend_map``).

A ``cp.async`` is taken here only when every lane's copy is one ``thread_op`` would queue without a fault
(destination inside the CTA's shared memory and aligned, source a global generic address inside one buffer,
a free queue entry); otherwise it returns False and the interpreter runs the instruction thread by thread,
which faults at the same lane with the same message. Lanes queue their copies in lane order, as thread by
thread; a copy lands (its bytes are written to shared memory) only at a wait, per thread, as before.
"""

import numpy as np
from numba import njit

from warpsim.ptx.codes import MAX_PENDING
from warpsim.ptx.memory import GLOBAL_BASE, PAGE_SHIFT, SHARED_BASE, SHARED_WINDOW
from warpsim.ptx.opcodes import Op
from warpsim.ptx.rows import M0, NOPS, O0
from warpsim.ptx.operands import advance, get, lane_address
from warpsim.ptx.thread import land

__all__ = ["warp_cp_async"]


@njit(cache=True, inline="always")
def _copy(r, opnd, rows, size):
    """``(shared offset, source address, source bytes)`` of one lane's ``cp.async`` (registers ``r``; ``rows``:
    its operand rows, the third -1 where src-size is not given), as ``thread_op`` reads them (source bytes
    clamped to 0..size)."""
    srcsize = get(r, opnd, rows[2]) if rows[2] >= 0 else size
    return lane_address(r, opnd, rows[0]), lane_address(r, opnd, rows[1]), min(max(srcsize, 0), size)


@njit(cache=True)
def warp_cp_async(p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, ends, pend, npend, groups, pend_map):
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
            if dst < SHARED_BASE or dst > smem.shape[0] - size or dst % size != 0 or npend[t0 + lane] >= MAX_PENDING:
                return False
            if srcsize > 0:
                off = src - GLOBAL_BASE
                if (src < 0 or src >= SHARED_WINDOW or off < 0 or off > gmem.shape[0] - srcsize
                        or off + srcsize > ends[off >> PAGE_SHIFT] or off % size != 0):
                    return False
        for lane in range(32):
            if not (gmask >> lane) & 1:
                continue
            t = t0 + lane
            dst, src, srcsize = _copy(regs_w[lane], opnd, rows, size)
            k = npend[t]
            pend[t, k, 0], pend[t, k, 1], pend[t, k, 2] = dst, (src - GLOBAL_BASE if srcsize > 0 else 0), size
            pend[t, k, 3], pend[t, k, 4] = srcsize, groups[t]
            npend[t] = k + 1
            for b in range(size):
                pend_map[dst + b] += 1
    elif op == Op.CP_COMMIT or op == Op.CP_WAIT or op == Op.CP_WAIT_ALL:
        keep = code[p, M0] if op == Op.CP_WAIT else np.int64(-1)
        for lane in range(32):
            if (gmask >> lane) & 1:
                if op == Op.CP_COMMIT:
                    groups[t0 + lane] += 1
                else:
                    land(t0 + lane, keep, pend, npend, groups, pend_map, smem, gmem)
    else:
        return False
    advance(pc, t0, group)
    return True
