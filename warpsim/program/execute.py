"""The stream executor: the reference the one core is measured and tested against, not a second core.

Every front end and tool runs on the PTX core (a program through :mod:`warpsim.program.lower`); nothing in
warpsim or hwcheck calls this module. It stays as an independent second implementation of the stream's
few instruction kinds over the same ISA kernels: ``bench/bench_cta.py``, ``bench_ptx.py`` and
``bench_ptx_gemm.py`` time the PTX core against it in the same run, and ``tests/program/test_lower_ptx.py``
checks the lowered kernels against it register by register.

One ``@njit`` interpreter over an encoded stream, calling the ISA's warp primitives.

``run(code, addrs, regs, smem, gmem, start, stop, arch, snap_slots, snap, tables, fault)`` executes stream
positions ``start .. stop-1`` in order (the stream is already in the schedule's order, see
:mod:`warpsim.program.schedule`; ``bar.sync`` is therefore a no-op here). Each instruction runs
for the 32 lanes of its warp on ``regs[warp]`` through ``warp_ld``, ``warp_st``, ``warp_ldmatrix``,
``warp_mma``, ``warp_cvt_pack`` and the element-wise ``warp_alu``, ``warp_shfl_bfly``, ``warp_mov_lanes``
(a predicated ``ld``/``st`` through ``warp_ld_if``/``warp_st_if``). ``arch``: ``int64[2, 3]``, per accumulator code (f32, f16) the
model's ``(block, frac_bits, ez)`` (:func:`arch_table`); ``tables``: the MUFU tables of the stream's
element-wise forms (``warpsim.isa.alu32.alu_tables(encoded.forms)``, :func:`mufu_tables`). Snapshots: when ``snap_slots`` has a row per
stream position (``hwcheck.device.lower.Lowered.snap_slots``), every destination register ``j`` of
instruction ``i`` is written after it executes to ``snap[snap_slots[i, j], thread]`` — the GPU's
snapshot layout, so the two line up; pass ``int64[0, 4]`` for none. Returns the position of the
instruction that faulted (``fault`` filled, nothing written by it), or ``stop``.

:func:`execute` is the Python entry: it raises ``SimulatorFault`` naming the PTX instruction, the
warp, the lane, the value and the program's source line. A single step costs microseconds (the
debugger calls it with ``stop = start + 1``).

Numba's cache would not notice changes in the ISA functions compiled into ``run``; warpsim's cache directory is named
after every source file (:mod:`warpsim.numba_cache`), so an edit compiles afresh.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from warpsim.errors import SimulatorFault
from warpsim.isa.alu32 import NO_TABLES, alu_tables, warp_alu, warp_mov_lanes, warp_shfl_bfly
from warpsim.isa.arith import DEFAULT_ARCH
from warpsim.isa.cvt import warp_cvt_pack
from warpsim.isa.faults import FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, fault_message, new_fault, set_fault
from warpsim.isa.ldmatrix import warp_ldmatrix
from warpsim.isa.memory import warp_ld, warp_ld_if, warp_st, warp_st_if
from warpsim.isa.mma import MMA_REG_COUNTS, mma_params, warp_mma
from warpsim.program.encode import (ADDR, AB, CD, DST, FORM, HALF, IMM, NDST, OP, PRED, SHAPE, SIZE, SPACE, SRC,
                                    VARIANT, WARP)
from warpsim.program.instr import Op

__all__ = ["run", "execute", "arch_table", "no_snapshots", "mufu_tables", "NO_TABLES"]

_MOV, _LD, _ST, _LDMATRIX, _MMA, _CVT, _BAR = (int(Op.MOV), int(Op.LD), int(Op.ST), int(Op.LDMATRIX),
                                              int(Op.MMA), int(Op.CVT), int(Op.BAR))
_ALU, _SHFL, _MOVL = int(Op.ALU), int(Op.SHFL), int(Op.MOVL)


@lru_cache(maxsize=8)
def arch_table(arch):
    """``int64[2, 3]``: ``(block, frac_bits, ez)`` of ``arch`` for f32 (row 0) and f16 (row 1) accumulators.

    >>> arch_table("sm80").tolist()
    [[8, 24, -132], [8, 24, -20]]
    """
    rows = [mma_params("m16n8k16", "f16", cd, arch, op="run")[3:] for cd in ("f32", "f16")]
    table = np.array(rows, dtype=np.int64)
    table.setflags(write=False)
    return table


def mufu_tables(encoded):
    """The ``tables`` argument of ``run`` for an encoded stream (loaded once per process)."""
    return alu_tables(encoded.forms) if encoded.forms else NO_TABLES


def no_snapshots():
    """The ``(snap_slots, snap)`` arguments of ``run`` that take no snapshots."""
    return np.zeros((0, 4), np.int64), np.zeros((0, 0), np.uint32)


@njit(cache=True)
def _mov(regs_w, code, i, fault):
    nregs = regs_w.shape[1]
    for j in range(code[i, NDST]):
        r = code[i, DST + j]
        if r < 0 or r >= nregs:
            set_fault(fault, FAULT_BAD_REGISTER, 0, r, nregs)
            return False
    value = np.uint32(code[i, IMM] & 0xFFFFFFFF)
    for j in range(code[i, NDST]):
        r = code[i, DST + j]
        for lane in range(32):
            regs_w[lane, r] = value
    return True


@njit(cache=True)
def run(code, addrs, regs, smem, gmem, start, stop, arch, snap_slots, snap, tables, fault):
    """Execute ``code[start:stop]`` on ``regs`` (``uint32[W, 32, R]``), ``smem`` and ``gmem`` (see the module docstring)."""
    snapshots = snap_slots.shape[0] == code.shape[0]
    for i in range(start, stop):
        op = code[i, OP]
        w = code[i, WARP]
        if w < 0 or w >= regs.shape[0]:
            set_fault(fault, FAULT_BAD_OPERAND, 0, w, regs.shape[0])
            return i
        regs_w = regs[w]
        ok = True
        if op == _LDMATRIX:
            variant = code[i, VARIANT]
            num = 1 << (variant // 2) if 0 <= variant <= 5 else 0
            ok = warp_ldmatrix(regs_w, code[i, DST:DST + num], smem, addrs[code[i, ADDR]], variant, fault)
        elif op == _MMA:
            shape = code[i, SHAPE]
            cd = code[i, CD]
            na, nb, nc = MMA_REG_COUNTS[shape, cd, 0], MMA_REG_COUNTS[shape, cd, 1], MMA_REG_COUNTS[shape, cd, 2]
            s = SRC
            ok = warp_mma(regs_w, code[i, s:s + na], code[i, s + na:s + na + nb], code[i, s + na + nb:s + na + nb + nc],
                          code[i, DST:DST + nc], shape, code[i, AB], cd, arch[cd, 0], arch[cd, 1], arch[cd, 2], fault)
        elif op == _LD or op == _ST:
            size = code[i, SIZE]
            n = max(1, size // 4)
            mem = smem if code[i, SPACE] == 0 else gmem
            pred = code[i, PRED]
            if pred >= 0 and op == _LD:
                ok = warp_ld_if(regs_w, code[i, DST:DST + n], mem, addrs[code[i, ADDR]], size, code[i, HALF],
                                addrs[pred], fault)
            elif pred >= 0:
                ok = warp_st_if(regs_w, code[i, SRC:SRC + n], mem, addrs[code[i, ADDR]], size, code[i, HALF],
                                addrs[pred], fault)
            elif op == _LD:
                ok = warp_ld(regs_w, code[i, DST:DST + n], mem, addrs[code[i, ADDR]], size, code[i, HALF], fault)
            else:
                ok = warp_st(regs_w, code[i, SRC:SRC + n], mem, addrs[code[i, ADDR]], size, code[i, HALF], fault)
        elif op == _ALU:
            ok = warp_alu(regs_w, code[i, DST], code[i, SRC:SRC + 3], code[i, FORM], tables, fault)
        elif op == _SHFL:
            ok = warp_shfl_bfly(regs_w, code[i, DST], code[i, SRC], code[i, IMM], fault)
        elif op == _MOVL:
            ok = warp_mov_lanes(regs_w, code[i, DST], addrs[code[i, ADDR]], fault)
        elif op == _MOV:
            ok = _mov(regs_w, code, i, fault)
        elif op == _CVT:
            ok = warp_cvt_pack(regs_w, code[i, DST], code[i, SRC], code[i, SRC + 1], code[i, AB], fault)
        elif op != _BAR:
            set_fault(fault, FAULT_BAD_OPERAND, 0, op, _BAR)
            ok = False
        if not ok:
            return i
        if snapshots:
            for j in range(code[i, NDST]):
                slot = snap_slots[i, j]
                if slot >= 0:
                    r = code[i, DST + j]
                    for lane in range(32):
                        snap[slot, w * 32 + lane] = regs_w[lane, r]
    return stop


def execute(stream, encoded, machine, *, arch=DEFAULT_ARCH, start=0, stop=None, snapshots=None, fault=None):
    """Run stream positions ``start .. stop-1`` on ``machine``; returns ``stop``.

    ``stream``: the instructions (for messages); ``encoded``: their :class:`~warpsim.program.encode.Encoded`;
    ``machine``: a :class:`~warpsim.machine.Machine` with enough warps and registers; ``snapshots``:
    ``(snap_slots, snap)`` or None. Raises ``SimulatorFault`` naming the instruction, warp, lane,
    value and source line; the faulting instruction changes nothing, the ones before it stay done.
    """
    n = len(encoded)
    stop = n if stop is None else stop
    if not 0 <= start <= stop <= n:
        raise ValueError(f"execute: range [{start}, {stop}) is outside the stream of {n} instructions")
    snap_slots, snap = snapshots if snapshots is not None else no_snapshots()
    if snapshots is not None and snap_slots.shape != (n, 4):
        raise ValueError(f"execute: snap_slots must have shape ({n}, 4), got {snap_slots.shape}")
    fault = new_fault() if fault is None else fault
    fault[:] = 0
    reached = run(encoded.code, encoded.addrs, machine.regs, machine.smem, machine.gmem, start, stop,
                  arch_table(arch), snap_slots, snap, mufu_tables(encoded), fault)
    if reached != stop:
        instr = stream[reached]
        space = instr.space or "shared"
        nbytes = machine.gmem.size if space == "global" else machine.smem.size
        message = fault_message(fault, instr.ptx, warp=instr.warp, nbytes=nbytes, space=space)
        where = f" (at {instr.line}; instruction {reached} of the stream)" if instr.line else \
            f" (instruction {reached} of the stream)"
        raise SimulatorFault(message + where)
    return stop
