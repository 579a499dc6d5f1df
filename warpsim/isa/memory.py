"""``ld`` / ``st`` of 16, 32, 64 and 128 bits per lane, to shared or global memory (bytes).

PTX: ``ld.shared.b16``, ``ld.shared.b32``, ``ld.shared.v2.b32``, ``ld.shared.v4.b32`` and the same
for ``st`` and ``.global``. Memory is a flat little-endian ``uint8`` array; register ``r`` of a
vector access holds bytes ``4r .. 4r+3`` of it. A 16-bit access reads or writes ONE HALF of a
32-bit register: ``half`` 0 = bits 0..15, 1 = bits 16..31; the other half is left as it is.

All 32 lanes execute (the warp is converged). Every lane's address is checked before anything is
read or written: it must lie with its whole access in ``[0, nbytes)`` and be aligned to the access
size; the first bad lane (in lane order) faults. When several lanes store to one byte, the highest
lane's value stays (PTX leaves the order unspecified; hardware checks should avoid such stores).

>>> import numpy as np
>>> from warpsim.isa.faults import new_fault
>>> regs = np.zeros((32, 4), np.uint32); mem = np.arange(512, dtype=np.uint8)
>>> addrs = np.arange(32, dtype=np.int64) * 16
>>> warp_ld(regs, np.array([0, 1]), mem, addrs, 8, 0, new_fault())
True
>>> hex(int(regs[1, 0])), hex(int(regs[1, 1]))
('0x13121110', '0x17161514')
>>> warp_ld(regs, np.array([2]), mem, addrs, 2, 1, new_fault()); hex(int(regs[0, 2]))
True
'0x1000000'
"""

import numpy as np
from numba import njit

from warpsim.isa.faults import (FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, FAULT_MISALIGNED,
                                FAULT_OUT_OF_RANGE, set_fault)

__all__ = ["ACCESS_SIZES", "memory_name", "warp_ld", "warp_st", "warp_ld_if", "warp_st_if", "registers_for"]

ACCESS_SIZES = (2, 4, 8, 16)   # bytes per lane


def memory_name(op, space, size):
    """The PTX instruction of an access: ``memory_name("st", "global", 16) == "st.global.v4.b32"``.

    >>> [memory_name("ld", "shared", s) for s in ACCESS_SIZES]
    ['ld.shared.b16', 'ld.shared.b32', 'ld.shared.v2.b32', 'ld.shared.v4.b32']
    """
    if op not in ("ld", "st"):
        raise ValueError(f"memory access: op must be 'ld' or 'st', got {op!r}")
    if space not in ("shared", "global"):
        raise ValueError(f"{op}: space must be 'shared' or 'global', got {space!r}")
    if size not in ACCESS_SIZES:
        raise ValueError(f"{op}.{space}: size must be one of {ACCESS_SIZES} bytes, got {size!r}")
    vec = {2: "b16", 4: "b32", 8: "v2.b32", 16: "v4.b32"}[size]
    return f"{op}.{space}.{vec}"


def registers_for(size):
    """Registers an access of ``size`` bytes uses: 1, 1, 2, 4."""
    return max(1, size // 4)


_ALL_LANES = np.ones(32, np.int64)


@njit(cache=True, inline="always")
def read_bytes(mem, off, size):
    """The little-endian value of ``size`` bytes of ``mem`` (uint8) at ``off``, as int64."""
    v = np.int64(0)
    for i in range(size):
        v |= np.int64(mem[off + i]) << (8 * i)
    return v


@njit(cache=True)
def _check(regs_w, regs, mem_bytes, addrs, size, half, pred, fault):
    if regs_w.shape[0] != 32 or addrs.shape[0] != 32:
        set_fault(fault, FAULT_BAD_OPERAND, 0, min(regs_w.shape[0], addrs.shape[0]), 32)
        return False
    if size != 2 and size != 4 and size != 8 and size != 16:
        set_fault(fault, FAULT_BAD_OPERAND, 0, size, 16)
        return False
    if regs.shape[0] != max(1, size // 4):
        set_fault(fault, FAULT_BAD_OPERAND, 0, regs.shape[0], max(1, size // 4))
        return False
    if size == 2 and (half < 0 or half > 1):
        set_fault(fault, FAULT_BAD_OPERAND, 0, half, 1)
        return False
    for r in regs:
        if r < 0 or r >= regs_w.shape[1]:
            set_fault(fault, FAULT_BAD_REGISTER, 0, r, regs_w.shape[1])
            return False
    for lane in range(32):
        if pred[lane] == 0:
            continue
        a = addrs[lane]
        if a < 0 or a > mem_bytes - size:      # not a + size: that overflows near 2**63
            set_fault(fault, FAULT_OUT_OF_RANGE, lane, a, size)
            return False
        if a % size != 0:
            set_fault(fault, FAULT_MISALIGNED, lane, a, size)
            return False
    return True


@njit(cache=True)
def warp_ld(regs_w, dst_regs, mem, addrs, size, half, fault):
    """``ld.{space}`` of ``size`` bytes per lane into ``regs_w[:, dst_regs]``.

    ``regs_w``: uint32[32, R]; ``dst_regs``: int64[registers_for(size)]; ``mem``: uint8[S];
    ``addrs``: int64[32]; ``half``: for ``size == 2``, the half written. On a fault nothing changes
    and ``fault`` is set. Returns True when it executed.
    """
    return warp_ld_if(regs_w, dst_regs, mem, addrs, size, half, _ALL_LANES, fault)


@njit(cache=True)
def warp_ld_if(regs_w, dst_regs, mem, addrs, size, half, pred, fault):
    """``@p ld``: as ``warp_ld`` for the lanes whose ``pred`` (int64[32]) is not 0; the other lanes
    neither read (their addresses are not checked) nor change their registers."""
    if not _check(regs_w, dst_regs, mem.shape[0], addrs, size, half, pred, fault):
        return False
    for lane in range(32):
        if pred[lane] == 0:
            continue
        a = addrs[lane]
        if size == 2:
            v = np.uint32(mem[a]) | (np.uint32(mem[a + 1]) << 8)
            old = regs_w[lane, dst_regs[0]]
            keep = np.uint32(0xFFFF0000) if half == 0 else np.uint32(0x0000FFFF)
            regs_w[lane, dst_regs[0]] = (old & keep) | np.uint32(v << (16 * half))
        else:
            for r in range(dst_regs.shape[0]):
                p = a + 4 * r
                regs_w[lane, dst_regs[r]] = (np.uint32(mem[p]) | (np.uint32(mem[p + 1]) << 8)
                                             | (np.uint32(mem[p + 2]) << 16) | (np.uint32(mem[p + 3]) << 24))
    return True


@njit(cache=True)
def warp_st(regs_w, src_regs, mem, addrs, size, half, fault):
    """``st.{space}`` of ``size`` bytes per lane from ``regs_w[:, src_regs]``.

    As ``warp_ld``; for ``size == 2`` the bits of ``half`` are stored. Lanes store in lane order.
    """
    return warp_st_if(regs_w, src_regs, mem, addrs, size, half, _ALL_LANES, fault)


@njit(cache=True)
def warp_st_if(regs_w, src_regs, mem, addrs, size, half, pred, fault):
    """``@p st``: as ``warp_st`` for the lanes whose ``pred`` (int64[32]) is not 0; the others store nothing."""
    if not _check(regs_w, src_regs, mem.shape[0], addrs, size, half, pred, fault):
        return False
    for lane in range(32):
        if pred[lane] == 0:
            continue
        a = addrs[lane]
        if size == 2:
            v = regs_w[lane, src_regs[0]] >> np.uint32(16 * half)
            mem[a] = np.uint8(v & 0xFF)
            mem[a + 1] = np.uint8((v >> 8) & 0xFF)
        else:
            for r in range(src_regs.shape[0]):
                v = regs_w[lane, src_regs[r]]
                for i in range(4):
                    mem[a + 4 * r + i] = np.uint8((v >> np.uint32(8 * i)) & 0xFF)
    return True
