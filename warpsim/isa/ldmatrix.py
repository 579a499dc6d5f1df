"""``ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16``, bit-exact.

PTX ISA, "Warp-level matrix load instruction: ldmatrix": matrix ``j`` (``j < num``) is 8 rows of
8 b16 values; row ``r`` is 16 contiguous bytes at the address held by lane ``8*j + r``, which must
be 16-byte aligned. Addresses in other lanes are ignored (neither read nor checked). Where each value
lands is ``warpsim.isa.fragments.ldmatrix_map``; this module only gathers bytes through it.

>>> import numpy as np
>>> smem = np.arange(256, dtype=np.uint8)
>>> addrs = np.zeros(32, np.int64); addrs[:8] = np.arange(8) * 16     # rows 0..7, 16 bytes apart
>>> r = ldmatrix(smem, addrs, num=1)
>>> hex(int(r[0, 0])), hex(int(r[5, 0]))       # lane 0: row 0 bytes 0..3; lane 5: row 1 bytes 4..7
('0x3020100', '0x17161514')
"""

import numpy as np
from numba import njit, prange

from warpsim.errors import SimulatorFault
from warpsim.isa.faults import (FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, FAULT_MISALIGNED,
                                FAULT_OUT_OF_RANGE, fault_message, set_fault)
from warpsim.isa.fragments import LDMATRIX_MAPS, ldmatrix_map

__all__ = ["ldmatrix", "ldmatrix_name", "warp_ldmatrix", "warp_stmatrix", "ldmatrix_variant"]

_NUMS = (1, 2, 4)


def ldmatrix_variant(num, trans):
    """The integer code of a variant for ``warp_ldmatrix``: ``2 * index(num) + trans``.

    >>> ldmatrix_variant(4, True)
    5
    """
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num not in _NUMS:
        raise ValueError(f"ldmatrix: num must be 1, 2 or 4, got {num!r}")
    return 2 * _NUMS.index(num) + int(bool(trans))


def _source_tables():
    """``[variant, lane, reg, half] -> (address lane, byte offset in its row)``, padded to 4 regs."""
    lane_of = np.zeros((6, 32, 4, 2), np.int64)
    offset = np.zeros((6, 32, 4, 2), np.int64)
    for (num, trans), m in LDMATRIX_MAPS.items():
        v = ldmatrix_variant(num, trans)
        lane_of[v, :, :num, :] = m.addr_lane[m.matrix, m.row]
        offset[v, :, :num, :] = 2 * m.col   # b16 elements: 2 bytes each
    return lane_of, offset


_SRC_LANE, _SRC_OFFSET = _source_tables()   # (V6,T32,R4,H2) -> address lane / byte offset


def ldmatrix_name(num, trans):
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``."""
    return ldmatrix_map(num, trans).name


@njit(cache=True)
def _check_rows(smem_bytes, addrs, num, fault):
    """Check the row addresses of lanes ``0 .. 8*num-1``; True when all are valid."""
    for lane in range(8 * num):
        addr = addrs[lane]
        if addr < 0 or addr > smem_bytes - 16:      # not addr + 16: that overflows near 2**63
            set_fault(fault, FAULT_OUT_OF_RANGE, lane, addr, 16)
            return False
        if addr % 16 != 0:
            set_fault(fault, FAULT_MISALIGNED, lane, addr, 16)
            return False
    return True


@njit(cache=True)
def _load(smem, addrs, variant, num, out, out_regs):
    for lane in range(32):
        for j in range(num):
            v = np.uint32(0)
            for h in range(2):
                p = addrs[_SRC_LANE[variant, lane, j, h]] + _SRC_OFFSET[variant, lane, j, h]
                v |= np.uint32((np.uint32(smem[p]) | (np.uint32(smem[p + 1]) << 8)) << (16 * h))
            out[lane, out_regs[j]] = v


@njit(cache=True)
def warp_ldmatrix(regs_w, dst_regs, smem, addrs, variant, fault):
    """One warp's ldmatrix: ``regs_w[:, dst_regs[j]]`` = register ``j`` of every lane.

    ``regs_w``: uint32[32, R]; ``dst_regs``: int64[num]; ``smem``: uint8[S]; ``addrs``: int64[32]
    byte addresses; ``variant``: ``ldmatrix_variant(num, trans)``. Faults (first in lane order, and
    nothing is written): a row address of lanes ``0 .. 8*num-1`` outside ``[0, S - 16]`` or not
    16-byte aligned; a bad register index or variant. Returns True when it executed.
    """
    if regs_w.shape[0] != 32 or addrs.shape[0] != 32:
        set_fault(fault, FAULT_BAD_OPERAND, 0, min(regs_w.shape[0], addrs.shape[0]), 32)
        return False
    if variant < 0 or variant > 5:
        set_fault(fault, FAULT_BAD_OPERAND, 0, variant, 5)
        return False
    num = 1 << (variant // 2)
    if dst_regs.shape[0] != num:
        set_fault(fault, FAULT_BAD_OPERAND, 0, dst_regs.shape[0], num)
        return False
    for r in dst_regs:
        if r < 0 or r >= regs_w.shape[1]:
            set_fault(fault, FAULT_BAD_REGISTER, 0, r, regs_w.shape[1])
            return False
    if not _check_rows(smem.shape[0], addrs, num, fault):
        return False
    _load(smem, addrs, variant, num, regs_w, dst_regs)
    return True


@njit(cache=True)
def warp_stmatrix(regs_w, src_regs, smem, addrs, variant, fault):
    """One warp's ``stmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``: the inverse of
    ``warp_ldmatrix`` through the same fragment map (PTX ISA, "stmatrix", sm_90): every b16 value
    that ldmatrix would load into ``regs_w[lane, src_regs[j]]`` is stored to its place instead.
    Same operands, checks and faults as ``warp_ldmatrix``; nothing is written on a fault.

    >>> import numpy as np
    >>> from warpsim.isa.faults import new_fault
    >>> regs = np.arange(32, dtype=np.uint32).reshape(32, 1) * 0x10001; smem = np.zeros(128, np.uint8)
    >>> addrs = np.zeros(32, np.int64); addrs[:8] = np.arange(8) * 16
    >>> warp_stmatrix(regs, np.array([0]), smem, addrs, ldmatrix_variant(1, False), new_fault())
    True
    >>> back = np.zeros((32, 1), np.uint32)
    >>> warp_ldmatrix(back, np.array([0]), smem, addrs, ldmatrix_variant(1, False), new_fault())
    True
    >>> bool((back == regs).all())
    True
    """
    if regs_w.shape[0] != 32 or addrs.shape[0] != 32:
        set_fault(fault, FAULT_BAD_OPERAND, 0, min(regs_w.shape[0], addrs.shape[0]), 32)
        return False
    if variant < 0 or variant > 5:
        set_fault(fault, FAULT_BAD_OPERAND, 0, variant, 5)
        return False
    num = 1 << (variant // 2)
    if src_regs.shape[0] != num:
        set_fault(fault, FAULT_BAD_OPERAND, 0, src_regs.shape[0], num)
        return False
    for r in src_regs:
        if r < 0 or r >= regs_w.shape[1]:
            set_fault(fault, FAULT_BAD_REGISTER, 0, r, regs_w.shape[1])
            return False
    if not _check_rows(smem.shape[0], addrs, num, fault):
        return False
    for lane in range(32):
        for j in range(num):
            v = regs_w[lane, src_regs[j]]
            for h in range(2):
                p = addrs[_SRC_LANE[variant, lane, j, h]] + _SRC_OFFSET[variant, lane, j, h]
                half = (v >> np.uint32(16 * h)) & np.uint32(0xFFFF)
                smem[p] = np.uint8(half & np.uint32(0xFF))
                smem[p + 1] = np.uint8(half >> np.uint32(8))
    return True


@njit(cache=True, parallel=True)
def _ldmatrix_batch(smem, shared_smem, addrs, variant, num, out, faults):
    regs = np.arange(num)
    for i in prange(addrs.shape[0]):
        s = smem[0] if shared_smem else smem[i]
        if _check_rows(s.shape[0], addrs[i], num, faults[i]):
            _load(s, addrs[i], variant, num, out[i], regs)


def ldmatrix(smem, addrs, *, num, trans=False):
    """Batched ``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``.

    ``smem``: ``uint8[..., nbytes]`` shared memory (one unbatched ``uint8[nbytes]`` serves every
    entry); ``addrs``: each lane's byte address, ``[..., 32]`` of any integer dtype. Returns
    ``uint32[..., 32, num]``. Raises ``TypeError``/``ValueError`` for bad arguments and
    ``SimulatorFault`` (first faulting entry, first lane) for a bad row address.
    """
    op = "ldmatrix"
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num not in _NUMS:
        raise ValueError(f"{op}: num must be 1, 2 or 4, got {num!r}")
    if not isinstance(trans, (bool, np.bool_)):
        raise TypeError(f"{op}: trans must be a bool, got {type(trans).__name__}")
    if not isinstance(smem, np.ndarray) or smem.dtype != np.uint8:
        raise TypeError(f"{op}: smem must be a numpy array of uint8 (bytes), got "
                        f"{getattr(smem, 'dtype', type(smem).__name__)}")
    if not isinstance(addrs, np.ndarray) or not np.issubdtype(addrs.dtype, np.integer):
        raise TypeError(f"{op}: addrs must be a numpy array of integers, got "
                        f"{getattr(addrs, 'dtype', type(addrs).__name__)}")
    if smem.ndim < 1:
        raise ValueError(f"{op}: smem must have shape (..., nbytes), got {smem.shape}")
    if addrs.ndim < 1 or addrs.shape[-1] != 32:
        raise ValueError(f"{op}: addrs must have shape (..., 32), got {addrs.shape}")
    lead = addrs.shape[:-1]
    shared_smem = smem.ndim == 1
    if not shared_smem and smem.shape[:-1] != lead:
        raise ValueError(f"{op}: leading shapes differ (no broadcasting): smem {smem.shape}, addrs {addrs.shape}")
    if addrs.dtype == np.uint64 and addrs.size and int(addrs.max()) >= 2**63:
        raise ValueError(f"{op}: addrs holds an address too large for int64")
    flat_addrs = np.ascontiguousarray(addrs.reshape(-1, 32), dtype=np.int64)
    flat_smem = np.ascontiguousarray(smem.reshape(int(np.prod(smem.shape[:-1])), smem.shape[-1]))  # 0 bytes too
    count = flat_addrs.shape[0]
    out = np.zeros((count, 32, num), np.uint32)
    faults = np.zeros((count, 4), np.int64)
    if count:
        _ldmatrix_batch(flat_smem, shared_smem, flat_addrs, ldmatrix_variant(num, trans), num, out, faults)
    bad = np.flatnonzero(faults[:, 0])
    if bad.size:
        i = int(bad[0])
        where = f"entry {i}" if lead else None
        raise SimulatorFault(fault_message(faults[i], ldmatrix_name(num, trans), warp=None, entry=where,
                                           nbytes=flat_smem.shape[-1]))
    return out.reshape(lead + (32, num))
