"""Accesses whose result depends on the order the GPU runs the warps in (a static check of a stream).

The simulator runs warps round-robin between barriers (:mod:`warpsim.program.schedule`); a GPU runs them
in any order. A program whose warps share memory only across ``bar.sync`` gives the same bits under
every order. When two warps touch the same byte of the same memory between the same two barriers and
at least one of them writes it, the GPU may legitimately disagree with the simulator: ``hwcheck run``
reports such conflicts as warnings next to its results.

Bytes touched: ``ld``/``st`` every lane's ``bits // 8`` bytes (a predicated one: the lanes whose
predicate is set); ``ldmatrix`` the 16-byte rows of lanes ``0 .. 8*num-1``.

>>> from warpsim.program.instr import Instr, Op
>>> rows = np.arange(32, dtype=np.int64) * 4
>>> s = [Instr(Op.ST, 0, src=(0,), addr=rows, space="shared", bits=32),
...      Instr(Op.LD, 1, dst=(0,), addr=rows + 124, space="shared", bits=32)]
>>> print(schedule_dependent_accesses(s)[0])
warps 0 and 1 both access shared memory byte 0x7c between barriers 0 and 1 (warp 0 writes it): the GPU may order them differently from the simulator
>>> schedule_dependent_accesses(s[:1] + [Instr(Op.BAR, 0), Instr(Op.BAR, 1)] + s[1:])
[]
"""

from __future__ import annotations

import numpy as np

from warpsim.program.instr import Op

__all__ = ["touched_bytes", "schedule_dependent_accesses"]


def touched_bytes(instr) -> np.ndarray:
    """The sorted distinct byte addresses ``instr`` reads or writes (``int64``; empty without memory)."""
    if instr.op == Op.LDMATRIX:
        rows = np.asarray(instr.addr, np.int64)[:8 * instr.num]
        return np.unique(rows[:, None] + np.arange(16))
    if instr.op in (Op.LD, Op.ST):
        addr = np.asarray(instr.addr, np.int64)
        if instr.pred is not None:
            addr = addr[np.asarray(instr.pred) != 0]
        return np.unique(addr[:, None] + np.arange(instr.bits // 8))
    return np.zeros(0, np.int64)


def schedule_dependent_accesses(stream, *, limit: int = 3) -> list:
    """Messages naming up to ``limit`` pairs of warps that touch a byte between the same two barriers, one
    of them writing it (see the module docstring); ``[]`` when the stream's result is schedule-free."""
    barriers: dict = {}
    touched: dict = {}                      # (space, phase) -> {warp: ([reads], [writes])}
    for instr in stream:
        if instr.op == Op.BAR:
            barriers[instr.warp] = barriers.get(instr.warp, 0) + 1
            continue
        data = touched_bytes(instr)
        if not data.size:
            continue
        space = "shared" if instr.op == Op.LDMATRIX else instr.space
        phase = barriers.get(instr.warp, 0)
        reads, writes = touched.setdefault((space, phase), {}).setdefault(instr.warp, ([], []))
        (writes if instr.op == Op.ST else reads).append(data)
    messages = []
    for (space, phase), by_warp in sorted(touched.items()):
        sets = {w: (np.unique(np.concatenate(r)) if r else np.zeros(0, np.int64),
                    np.unique(np.concatenate(wr)) if wr else np.zeros(0, np.int64)) for w, (r, wr) in by_warp.items()}
        warps = sorted(sets)
        for i, a in enumerate(warps):
            for b in warps[i + 1:]:
                for writer, other in ((a, b), (b, a)):
                    both = np.intersect1d(sets[writer][1], np.union1d(*sets[other]), assume_unique=True)
                    if both.size:
                        messages.append(f"warps {a} and {b} both access {space} memory byte {int(both[0]):#x} between "
                                        f"barriers {phase} and {phase + 1} (warp {writer} writes it): the GPU may "
                                        f"order them differently from the simulator")
                        break
                if len(messages) >= limit:
                    return messages
    return messages
