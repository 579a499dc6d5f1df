"""Static checks of a traced stream: every address in bounds and aligned; reads of registers that no earlier
instruction wrote.

Every address of a program is known when it is traced, so :func:`check_addresses` proves them all before
the stream runs: the first bad access in stream order (the schedule's), first bad lane in lane order, is
a ``SimulatorFault`` naming the instruction, the warp, the lane, the address and the source line —
where the hardware would fault. An access must lie whole inside its memory (shared: the CTA's
``smem_bytes``; global: the program's buffers) and be aligned to its size (``ldmatrix``: each of the
``8 * num`` row addresses, 16 bytes); lanes whose predicate is 0 do not access memory.

Reads of never-written registers:
Registers start at 0 (in the simulator and in hwcheck's kernels), so such a read is defined, but it
is almost always a bug (a forgotten ``clear(acc)``, a fragment used before its copy). The check
follows the stream in schedule order per warp and per register half: a 16-bit ``ld`` writes one
half, every other write covers the register; a 16-bit ``st`` reads one half, ``st``, ``mma`` and
``cvt`` read their source registers whole. By default each offending instruction (grouped by
source line and registers over the warps) gives a :class:`warpsim.errors.ProgramWarning`;
``strict=True`` makes the first one a ``ProgramError``.

>>> import numpy as np
>>> from warpsim.program.instr import Instr, Op
>>> s = [Instr(Op.MOV, 0, dst=(0,)), Instr(Op.CVT, 0, dst=(2,), src=(0, 1), ab="f16")]
>>> unwritten_reads(s, warps=1, registers=3)
[(1, 1, [0])]
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit

from warpsim.errors import ProgramError, ProgramWarning, SimulatorFault
from warpsim.program.encode import DST, HALF, NDST, NSRC, OP, SIZE, SRC, WARP, encode
from warpsim.program.instr import Op

__all__ = ["unwritten_reads", "check_reads", "check_addresses"]

_LD, _ST, _BAR = int(Op.LD), int(Op.ST), int(Op.BAR)


@njit(cache=True)
def _scan(code, warps, registers):
    """``int64[k, 3]``: (position, warp, register) of every read of a register half never written."""
    written = np.zeros((warps, registers), np.uint8)
    out = np.empty((code.shape[0] * 10, 3), np.int64)
    k = 0
    for i in range(code.shape[0]):
        op = code[i, OP]
        w = code[i, WARP]
        half_access = (op == _LD or op == _ST) and code[i, SIZE] == 2
        need = np.uint8(1 << code[i, HALF]) if half_access else np.uint8(3)
        if op != _LD:
            for j in range(code[i, NSRC]):
                r = code[i, SRC + j]
                if (written[w, r] & need) != need:
                    out[k, 0] = i
                    out[k, 1] = w
                    out[k, 2] = r
                    k += 1
        for j in range(code[i, NDST]):
            r = code[i, DST + j]
            written[w, r] |= need if op == _LD else np.uint8(3)
    return out[:k]


def unwritten_reads(stream, *, warps, registers, encoded=None):
    """``[(position, register, [warps])]``: each stream position reading a register half never written
    before it (in that warp), in stream order, one entry per (position, register)."""
    code = (encoded if encoded is not None else encode(stream)).code
    found = {}
    for position, warp, reg in _scan(code, warps, max(registers, 1)).tolist():
        found.setdefault((position, reg), []).append(warp)
    return [(p, r, ws) for (p, r), ws in found.items()]


def check_reads(stream, *, warps, registers, encoded=None, strict=False, records=None):
    """Warn (``ProgramWarning``) or, with ``strict``, raise ``ProgramError`` for reads of unwritten registers.

    ``records``: the result of :func:`unwritten_reads` if already computed. Returns the records.
    """
    if records is None:
        records = unwritten_reads(stream, warps=warps, registers=registers, encoded=encoded)
    groups = {}
    for position, reg, ws in records:
        instr = stream[position]
        entry = groups.setdefault((instr.line, instr.ptx), [set(), set(), position])
        entry[0].add(reg)
        entry[1].update(ws)
    for (line, ptx), (regs, ws, position) in groups.items():
        listed = ", ".join(f"r{r}" for r in sorted(regs)[:6]) + (" ..." if len(regs) > 6 else "")
        where = f" at {line}" if line else ""
        message = (f"{ptx} (instruction {position}){where} reads {listed}, which no instruction wrote before "
                   f"(warps {', '.join(str(w) for w in sorted(ws))}); the registers hold 0")
        if strict:
            raise ProgramError(message)
        warnings.warn(message, ProgramWarning, stacklevel=3)
    return records


def check_addresses(stream, *, smem_bytes, gmem_bytes):
    """Raise ``SimulatorFault`` for the first access of ``stream`` outside its memory or misaligned (see the
    module docstring); return None when every access is good.

    >>> import numpy as np
    >>> from warpsim.program.instr import Instr, Op
    >>> ld = Instr(Op.LD, 1, dst=(0, 1), addr=np.arange(32, dtype=np.int64) * 8 + 2, space="shared", bits=64)
    >>> check_addresses([ld], smem_bytes=1024, gmem_bytes=0)
    Traceback (most recent call last):
    warpsim.errors.SimulatorFault: ld.shared.v2.b32: warp 1 lane 0: address 0x2 is not 8-byte aligned \
(instruction 0 of the stream)
    """
    for index, instr in enumerate(stream):
        if instr.addr is None or instr.op not in (Op.LD, Op.ST, Op.LDMATRIX):
            continue
        addrs = np.asarray(instr.addr, np.int64)
        if instr.op == Op.LDMATRIX:
            size, space, lanes = 16, "shared", np.arange(8 * instr.num)
        else:
            size, space, lanes = instr.bits // 8, instr.space, np.arange(32)
            if instr.pred is not None:
                lanes = lanes[np.asarray(instr.pred)[lanes] != 0]
        nbytes = gmem_bytes if space == "global" else smem_bytes
        a = addrs[lanes]
        bad = (a < 0) | (a > nbytes - size) | (a % size != 0)
        if not bad.any():
            continue
        lane = int(lanes[np.argmax(bad)])
        value = int(addrs[lane])
        head = f"{instr.ptx}: warp {instr.warp} lane {lane}: address {value:#x}"
        if value < 0 or value > nbytes - size:
            what = f"{head} + {size} bytes is outside {space} memory [0, {nbytes:#x})"
        else:
            what = f"{head} is not {size}-byte aligned"
        where = f"at {instr.line}; " if instr.line else ""
        raise SimulatorFault(f"{what} ({where}instruction {index} of the stream)")
