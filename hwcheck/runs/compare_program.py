"""A program's run on the GPU against the simulator: every register snapshot, shared memory, global memory.

The lowered kernel (:mod:`warpsim.program.lower` with ``snapshots``) stores each destination register of each
instruction to a snapshot slot: ``snap[slot, thread]``, ``uint32[snap_positions, threads]``; the simulator writes the
same slots (``Lowered.snap_slots``). :func:`compare_snapshots` compares every (slot, thread) that an
instruction writes, and names each mismatch by the stream instruction (its position, PTX and source
line), the warp, the lane and the register, with the register tensor slots it holds and the bits
decoded by what it holds (:class:`RegisterNames`):

- a register of a per-thread tensor (``Trace.tensors``): ``f32`` -> ``"f32"``, ``f16`` -> ``"f16x2"``,
  ``bf16`` -> ``"bf16x2"``, ``u16`` -> ``"b16x2"``, ``u32`` -> ``"b32"``;
- otherwise by the instruction that wrote it: an ``mma`` D register by its accumulator type, a ``cvt``
  destination by its target type, an ``ldmatrix`` destination as ``b16x2``; else ``b32``.

Mismatches are listed in stream order (the first one is usually the cause of the rest), then by lane
and register. :func:`compare_shared` compares the final shared memory word by word;
:func:`compare_global` compares each global buffer element by element in its dtype (inputs too: a
program may write them) and the bytes between buffers.

>>> import numpy as np
>>> exp = np.arange(8, dtype=np.uint8); act = exp.copy(); act[5] ^= 1
>>> c = compare_shared(exp, act)
>>> c.compared, c.mismatched, str(c.records[0])
(2, 1, 'shared memory word 0x0004: expected 0x07060504, got 0x07060404')
>>> decode_element(0x3C00, "f16"), decode_element(0xBF80, "bf16"), decode_element(7, "u32")
('1', '-1', '0x00000007')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwcheck.compare import Mismatch, decode_register
from warpsim.cute.numeric import DTYPES, dtype_bits, storage_dtype     # storage_dtype: re-exported
from warpsim.isa.floats import bf16_bits_to_float, f16_bits_to_float
from warpsim.program.instr import Op

__all__ = ["KIND_OF_DTYPE", "RegisterNames", "MemoryMismatch", "ProgramComparison", "compare_snapshots",
           "compare_shared", "compare_global", "decode_element", "storage_dtype"]

KIND_OF_DTYPE = {"f32": "f32", "f16": "f16x2", "bf16": "bf16x2", "u16": "b16x2", "u32": "b32"}


def decode_element(bits: int, dtype: str) -> str:
    """One memory element of ``dtype`` as text (``u16``/``u32``/words: hex)."""
    bits = int(bits)
    if dtype == "f32":
        return decode_register(bits, "f32")
    if dtype == "f16":
        return format(f16_bits_to_float(bits & 0xFFFF), ".5g")
    if dtype == "bf16":
        return format(bf16_bits_to_float(bits & 0xFFFF), ".4g")
    return f"{bits:#06x}" if dtype == "u16" else f"{bits:#010x}"


class RegisterNames:
    """What each register of each warp holds: ``label(warp, reg)`` (``"acc[5]"``, ``"tSrQ[4,5]"``: the
    tensor's storage slots, CuTe's order) and ``kind(warp, reg, instr)`` (see the module docstring).

    ``tensors``: ``Trace.tensors`` (``{name: TensorInfo}``); where two names share registers the first
    name in sorted order labels them.
    """

    def __init__(self, tensors: dict):
        self._table: dict = {}
        for name in sorted(tensors):
            info = tensors[name]
            per_reg = 2 if info.bits == 16 else 1
            for warp, base in enumerate(info.bases):
                for k in range(-(-info.slots // per_reg)):
                    slots = range(k * per_reg, min(info.slots, (k + 1) * per_reg))
                    label = f"{name}[{','.join(str(s) for s in slots)}]"
                    self._table.setdefault((warp, base + k), (label, KIND_OF_DTYPE[info.dtype]))

    def label(self, warp: int, reg: int) -> str | None:
        entry = self._table.get((warp, reg))
        return entry[0] if entry else None

    def kind(self, warp: int, reg: int, instr=None) -> str:
        entry = self._table.get((warp, reg))
        if entry:
            return entry[1]
        if instr is not None:
            if instr.op == Op.MMA:
                return "f32" if instr.cd == "f32" else "f16x2"
            if instr.op == Op.CVT:
                return f"{instr.ab}x2"
            if instr.op == Op.LDMATRIX:
                return "b16x2"
        return "b32"


@dataclass(frozen=True)
class MemoryMismatch:
    """A memory element whose GPU bits differ: ``space`` (``shared``/``global``), ``buffer`` (a global
    buffer's name; None for shared memory and bytes between buffers), ``index`` (the element's
    coordinate in the buffer), byte ``address``, ``dtype`` (``word``: a 32-bit shared word; ``byte``)."""

    space: str
    buffer: str | None
    index: tuple | None
    address: int
    dtype: str
    expected: int
    actual: int

    def as_dict(self) -> dict:
        digits = dtype_bits(self.dtype) // 4 if self.dtype in DTYPES else {"byte": 2}.get(self.dtype, 8)
        return {"memory": self.space, "buffer": self.buffer,
                "index": list(self.index) if self.index is not None else None,
                "address": f"{self.address:#x}", "dtype": self.dtype,
                "expected": f"{self.expected:#0{digits + 2}x}", "actual": f"{self.actual:#0{digits + 2}x}",
                "expected_value": self._value(self.expected), "actual_value": self._value(self.actual)}

    def _value(self, bits):
        return decode_element(bits, self.dtype) if self.dtype in DTYPES else f"{bits:#x}"

    def __str__(self) -> str:
        d = self.as_dict()
        if self.space == "shared":
            where = f"shared memory word {self.address:#06x}"
        elif self.buffer is None:
            where = f"global memory byte {self.address:#x} (outside every buffer)"
        else:
            where = f"global {self.buffer}{list(self.index)} ({self.dtype}, byte {self.address:#x})"
        show = (lambda k: d[k]) if self.dtype not in DTYPES else \
            (lambda k: f"{d[k]} ({d[k + '_value']})")
        return f"{where}: expected {show('expected')}, got {show('actual')}"


@dataclass(frozen=True)
class ProgramComparison:
    """``compared`` and ``mismatched`` count registers (or memory elements); ``records``: the first
    ``limit`` mismatches; ``instructions``: stream positions of the instructions with a mismatching
    register, in order (snapshots only)."""

    compared: int
    mismatched: int
    records: tuple
    instructions: tuple = ()


def _check(name, expected, actual, dtype, ndim):
    for side, x in (("expected", expected), ("actual", actual)):
        if not isinstance(x, np.ndarray) or x.dtype != dtype or x.ndim != ndim:
            raise TypeError(f"{name}: {side} must be a {ndim}-d numpy array of {np.dtype(dtype).name}, got "
                            f"{getattr(x, 'dtype', type(x).__name__)} {getattr(x, 'shape', '')}")
    if expected.shape != actual.shape:
        raise ValueError(f"{name}: expected {expected.shape} and actual {actual.shape} differ in shape")


def compare_snapshots(stream, snap_slots, names: RegisterNames, expected, actual, *, limit: int = 20):
    """Compare the snapshot buffers ``expected`` (simulator) and ``actual`` (GPU), ``uint32[slots, threads]``.

    ``snap_slots``: ``Lowered.snap_slots`` (``int64[len(stream), 4]``). Only (slot, thread) pairs that an
    instruction writes are compared. Returns a :class:`ProgramComparison` whose records are
    :class:`~hwcheck.compare.Mismatch` with ``index``, ``line`` and ``tensor`` set.
    """
    _check("compare_snapshots", expected, actual, np.uint32, 2)
    slots_n, threads = expected.shape
    if threads % 32 or np.shape(snap_slots) != (len(stream), 4):
        raise ValueError(f"compare_snapshots: {threads} threads and snap_slots {np.shape(snap_slots)} do not "
                         f"fit a stream of {len(stream)} instructions")
    warps = threads // 32
    instr_of = np.full((slots_n, warps), -1, np.int64)     # (slot, warp) -> stream position
    dst_of = np.full((slots_n, warps), -1, np.int64)       # (slot, warp) -> destination operand
    rows, cols = np.nonzero(snap_slots >= 0)
    stream_warps = np.fromiter((i.warp for i in stream), np.int64, len(stream))
    instr_of[snap_slots[rows, cols], stream_warps[rows]] = rows
    dst_of[snap_slots[rows, cols], stream_warps[rows]] = cols
    written = np.repeat(instr_of >= 0, 32, axis=1)           # [slots, threads]
    bad = written & (expected != actual)
    slot, thread = np.nonzero(bad)
    warp, lane = thread // 32, thread % 32
    index, dst = instr_of[slot, warp], dst_of[slot, warp]
    order = np.lexsort((dst, lane, index))
    records = []
    for k in order[:max(0, limit)]:
        i, w, j = int(index[k]), int(warp[k]), int(dst[k])
        instr = stream[i]
        reg = instr.dst[j]
        records.append(Mismatch(instr.ptx, w, int(lane[k]), f"r{reg}",
                                int(expected[slot[k], thread[k]]), int(actual[slot[k], thread[k]]),
                                names.kind(w, reg, instr), str(instr.line) if instr.line else None,
                                index=i, tensor=names.label(w, reg)))
    return ProgramComparison(int(written.sum()), int(bad.sum()), tuple(records),
                             tuple(int(i) for i in np.unique(index)))


def compare_shared(expected, actual, *, limit: int = 20) -> ProgramComparison:
    """Compare final shared memory (``uint8`` bytes) as 32-bit little-endian words (the tail zero-padded)."""
    _check("compare_shared", expected, actual, np.uint8, 1)
    pad = -expected.size % 4
    exp = np.concatenate([expected, np.zeros(pad, np.uint8)]).view("<u4")
    act = np.concatenate([actual, np.zeros(pad, np.uint8)]).view("<u4")
    bad = np.flatnonzero(exp != act)
    records = tuple(MemoryMismatch("shared", None, None, 4 * int(k), "word", int(exp[k]), int(act[k]))
                    for k in bad[:max(0, limit)])
    return ProgramComparison(int(exp.size), int(bad.size), records)


def compare_global(buffers, expected, actual, *, limit: int = 20) -> ProgramComparison:
    """Compare global memory (``uint8`` images) buffer by buffer, element by element in each buffer's dtype,
    then the bytes outside every buffer (``buffers``: ``Trace.buffers``)."""
    _check("compare_global", expected, actual, np.uint8, 1)
    compared = mismatched = 0
    records = []
    covered = np.zeros(expected.size, bool)
    for b in buffers:
        if b.base + b.nbytes > expected.size:
            raise ValueError(f"compare_global: buffer {b.name} [{b.base:#x}, {b.base + b.nbytes:#x}) is outside "
                             f"global memory of {expected.size} bytes")
        covered[b.base:b.base + b.nbytes] = True
        t = storage_dtype(b.dtype)
        exp = expected[b.base:b.base + b.nbytes].view(t).reshape(b.shape)
        act = actual[b.base:b.base + b.nbytes].view(t).reshape(b.shape)
        bad = np.argwhere(exp != act)
        compared += exp.size
        mismatched += len(bad)
        for coord in bad[:max(0, limit - len(records))]:
            coord = tuple(int(c) for c in coord)
            flat = int(np.ravel_multi_index(coord, b.shape))
            records.append(MemoryMismatch("global", b.name, coord, b.base + flat * np.dtype(t).itemsize,
                                          b.dtype, int(exp[coord]), int(act[coord])))
    gaps = np.flatnonzero(~covered & (expected != actual))
    mismatched += gaps.size
    for k in gaps[:max(0, limit - len(records))]:
        records.append(MemoryMismatch("global", None, None, int(k), "byte", int(expected[k]), int(actual[k])))
    return ProgramComparison(compared, mismatched, tuple(records))
