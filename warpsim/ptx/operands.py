"""A thread's operands in the interpreter's registers (``@njit``): what every instruction family reads and writes.

Rows and columns: :mod:`warpsim.ptx.decode`. Thread by thread: :func:`get`, :func:`put` (registers ``r``, a view of
``regs[w, lane]``) and :func:`lane_address` (``[base+offset]``). A warp at once: :func:`operand_fields` reads an
operand's fields once, :func:`lane_get`/:func:`lane_put` use them per lane; :func:`vec_slots` lists a vector's
register slots; :func:`advance` moves a group's pcs; :func:`raced` and :func:`isa_fault` fill ``fault``.
"""

import numpy as np
from numba import njit

from warpsim.isa.faults import FAULT_RACE, FAULT_WGMMA_SMEM, set_fault
from warpsim.ptx.rows import IMM, K_IMM, K_NONE, K_REG, KIND, NEG, NOPS, NW, O0, SLOT

__all__ = ["get", "put", "lane_address", "advance", "raced", "overwritten", "wgmma_reads", "WGMMA_READ", "operand_fields", "lane_get", "lane_put", "vec_slots",
           "isa_fault", "MAX_VEC"]

MAX_VEC = 32    # the scratch for a vector operand's register slots (mma and ldmatrix take at most 4)

@njit(cache=True, inline="always")
def get(r, opnd, row):
    """The value of operand ``row`` for one thread (registers ``r``): a register's bits (two words for 64 bits;
    ``NEG``: a negated predicate), an immediate, else 0."""
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
def put(r, opnd, row, v):
    """Write ``v`` to operand ``row`` of one thread when it is a register (its words, low first)."""
    if opnd[row, KIND] != K_REG:
        return
    s = opnd[row, SLOT]
    r[s] = np.uint32(v & 0xFFFFFFFF)
    if opnd[row, NW] == 2:
        r[s + 1] = np.uint32((v >> 32) & 0xFFFFFFFF)


@njit(cache=True)
def lane_address(r, opnd, row):
    """``[base+offset]`` of one lane: a 32-bit base register's sum wraps modulo 2**32, as the 32-bit address
    arithmetic of the GPU does (``[%r+18432]`` with ``%r`` = -8192 + a shared address is that address + 10240)."""
    base = np.int64(0)
    if opnd[row, SLOT] >= 0:
        s = opnd[row, SLOT]
        base = np.int64(r[s])
        if opnd[row, NW] == 2:
            base |= np.int64(r[s + 1]) << 32
        else:
            return (base + opnd[row, IMM]) & np.int64(0xFFFFFFFF)
    return base + opnd[row, IMM]


@njit(cache=True, inline="always")
def advance(pc, t0, group):
    """Move each lane of ``group`` (a 32-bit lane mask) of the warp whose lane 0 is thread ``t0`` to its next
    instruction: ``pc[t0 + lane] += 1``; the other lanes' pcs are unchanged."""
    for lane in range(32):
        if (group >> lane) & 1:
            pc[t0 + lane] += 1


WGMMA_READ = 1 << 16      # pend_map per shared byte: cp.async copies pending in the low 16 bits, in-flight wgmma
                          # reads of it (mma_async not yet waited for) counted in units of WGMMA_READ above


@njit(cache=True)
def raced(pend_map, off, size, t, addr, fault):
    """Whether one of the ``size`` shared bytes at ``off`` has a ``cp.async`` copy still pending (``pend_map``): then
    ``FAULT_RACE`` for thread ``t`` at ``addr``."""
    for i in range(size):
        if pend_map[off + i] & (WGMMA_READ - 1):
            set_fault(fault, FAULT_RACE, t, addr, size)
            return True
    return False


@njit(cache=True)
def wgmma_reads(pend_map, off, size):
    """Whether a ``wgmma.mma_async`` not yet waited for reads one of the ``size`` shared bytes at ``off``."""
    for i in range(size):
        if pend_map[off + i] >= WGMMA_READ:
            return True
    return False


@njit(cache=True)
def overwritten(pend_map, off, size, t, addr, fault):
    """:func:`raced` for a write, which also must not touch a byte a ``wgmma.mma_async`` not yet waited for reads
    (``FAULT_WGMMA_SMEM``: the GPU's tensor cores may read it after the write)."""
    if raced(pend_map, off, size, t, addr, fault):
        return True
    if wgmma_reads(pend_map, off, size):
        set_fault(fault, FAULT_WGMMA_SMEM, t, addr, size)
        return True
    return False


@njit(cache=True, inline="always")
def operand_fields(code, opnd, p, j):
    """``(KIND, SLOT, NW, IMM, NEG)`` of the ``j``-th operand of row ``p``, read once for a whole warp (``K_NONE`` and
    zeros past the row's operand count)."""
    if j >= code[p, NOPS]:
        return np.int64(K_NONE), np.int64(0), np.int64(0), np.int64(0), np.int64(0)
    r = code[p, O0 + j]
    return opnd[r, KIND], opnd[r, SLOT], opnd[r, NW], opnd[r, IMM], opnd[r, NEG]


@njit(cache=True, inline="always")
def lane_get(regs, w, lane, k, s, n, imm, neg):
    """One lane's value of an operand given as its fields (``KIND, SLOT, NW, IMM, NEG`` of its row)."""
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
def lane_put(regs, w, lane, k, s, n, v):
    """Write ``v`` to one lane's operand given as its fields (a register; anything else is left alone)."""
    if k == K_REG:
        regs[w, lane, s] = np.uint32(v & 0xFFFFFFFF)
        if n == 2:
            regs[w, lane, s + 1] = np.uint32((v >> 32) & 0xFFFFFFFF)


@njit(cache=True, inline="always")
def vec_slots(opnd, row, out):
    """The register slots of a vector operand ``{%r1, %r2, ...}``: ``out[:n]`` filled, that view returned
    (``out``: a scratch array; a longer vector is cut to its size, which the instruction's count check then
    rejects)."""
    n = min(opnd[row, NW], out.shape[0])
    first = opnd[row, SLOT]
    for j in range(n):
        out[j] = opnd[first + j, SLOT]
    return out[:n]


@njit(cache=True)
def isa_fault(fault, w):
    """Turn a fault of an isa warp primitive (lane in ``fault[1]``) into a thread's."""
    if fault[0] != 0:
        fault[1] += 32 * w
        return True
    return False
