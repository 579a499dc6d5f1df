"""Element access on shared and global memory in a traced program: ``sQ[r, c] = gQ[i]``.

(Register tensor elements, ``acc[i] = acc[i] * scale``, are :mod:`warpsim.program.arith`'s; this
handler passes them on.)

CuTe C++ writes ``sQ(r, c) = gQ(i)``: a load of one element into a register, then a store of it.
In a traced program ``gQ[i]`` (or ``gQ(i)``) emits ``ld.{global,shared}.b16`` (16-bit elements,
into the low half of a register) or ``.b32`` and returns an :class:`Element`; ``sQ[r, c] = element``
emits the matching ``st``. Indices may be lane vectors (``tid``) in vector tracing, or plain ints;
a tensor partitioned for a lane vector gives each lane its own address.

Loaded elements rotate through ``ELEMENT_REGISTERS`` registers of the thread: storing an element
after that many later loads is a ``ProgramError`` (its register holds another value by then).
The tracer pushes a :class:`MemoryElements` for each traced call of the program
(``warpsim.cute.tensor.memory_elements``); outside a traced program memory elements are not readable.

>>> from warpsim.program.program import Program
>>> from warpsim.cute import make_tensor, make_smem_ptr, make_layout
>>> def kernel(tid, *, x):
...     s = make_tensor(make_smem_ptr(0, "f16"), make_layout(32))
...     s[31 - tid] = x[tid]
>>> stream = Program(kernel, threads=32, inputs={"x": ((32,), "f16")}, smem_bytes=64).trace().stream
>>> [i.ptx for i in stream], stream[1].addr[:3].tolist()
(['ld.global.b16', 'st.shared.b16'], [62, 60, 58])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpsim.cute.integers import brief
from warpsim.cute.lanes import has_lanes
from warpsim.cute.numeric import dtype_bits
from warpsim.errors import ProgramError
from warpsim.program.arith import register_element, store_register_element
from warpsim.program.instr import Op

__all__ = ["Element", "MemoryElements", "ELEMENT_REGISTERS"]

ELEMENT_REGISTERS = 4
_SPACE = {"smem": "shared", "gmem": "global"}


@dataclass(frozen=True)
class Element:
    """One element per lane, loaded from memory into register ``register`` (its low half if 16-bit)."""

    register: int
    dtype: str
    serial: int          # the load's number in this thread's trace
    source: str          # what was loaded, for messages: "x[3] at prog.py:7: ..."

    def __repr__(self):
        return f"Element({self.dtype} {self.source}, in r{self.register})"


def _lane_key(key, lane):
    """The coordinate of one lane: each lane-vector leaf of ``key`` replaced by its entry ``lane``."""
    if isinstance(key, tuple):
        return tuple(_lane_key(k, lane) for k in key)
    if isinstance(key, np.ndarray):
        return int(key[lane])
    return key


class MemoryElements:
    """The handler of ``t[key]`` and ``t[key] = element`` on memory tensors for one tracer."""

    def __init__(self, tracer):
        self.tracer = tracer
        self.loads = 0
        self.base = None

    def _addresses(self, t, key, what):
        """int64[width]: each traced lane's byte address of element ``key`` of ``t``."""
        width = self.tracer.width
        try:
            if not has_lanes(key):
                return np.broadcast_to(np.asarray(t.address(key), np.int64), (width,)).copy()
            out = np.empty(width, np.int64)
            for lane in range(width):
                a = t.address(_lane_key(key, lane))
                out[lane] = a[lane] if isinstance(a, np.ndarray) else a
            return out
        except (TypeError, ValueError, IndexError) as e:
            raise ProgramError(f"{what}: {e}") from None

    def _check(self, t, what):
        if dtype_bits(t.dtype) not in (16, 32):
            raise ProgramError(f"{what}: element access moves 16- or 32-bit elements, not {t.dtype}")

    def load(self, t, key):
        if t.space == "rmem":
            return register_element(self.tracer, t, key)
        line = self.tracer.source_line()
        what = f"{t.space} element {brief(key, 4)}" + (f" at {line}" if line else "")
        self._check(t, what)
        addr = self._addresses(t, key, what)
        if self.base is None:
            self.base = self.tracer.allocator.block(ELEMENT_REGISTERS)
        reg = self.base + self.loads % ELEMENT_REGISTERS
        bits = dtype_bits(t.dtype)
        self.tracer.emit(Op.LD, dst=(reg,), addr=addr, space=_SPACE[t.space], bits=bits,
                         half=0 if bits == 16 else -1, line=line)
        self.loads += 1
        return Element(reg, t.dtype, self.loads - 1, f"{brief(key, 4)}" + (f" loaded at {line}" if line else ""))

    def store(self, t, key, value):
        if t.space == "rmem":
            store_register_element(self.tracer, t, key, value)
            return
        line = self.tracer.source_line()
        what = f"{t.space} element {brief(key, 4)} = ..." + (f" at {line}" if line else "")
        self._check(t, what)
        if not isinstance(value, Element):
            raise ProgramError(f"{what}: a memory element can be given an element loaded from memory (u[j]), "
                               f"not {type(value).__name__} {brief(value)}")
        if value.dtype != t.dtype:
            raise ProgramError(f"{what}: the element is {value.dtype} ({value.source}), the tensor holds {t.dtype}")
        if self.loads - value.serial > ELEMENT_REGISTERS:
            raise ProgramError(f"{what}: the element {value.source} was overwritten: {self.loads - value.serial - 1} "
                               f"loads came after it, and loaded elements share {ELEMENT_REGISTERS} registers")
        addr = self._addresses(t, key, what)
        bits = dtype_bits(t.dtype)
        self.tracer.emit(Op.ST, src=(value.register,), addr=addr, space=_SPACE[t.space], bits=bits,
                         half=0 if bits == 16 else -1, line=line)
