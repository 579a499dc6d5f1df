"""Register allocation and storage slots: which per-thread registers hold a register tensor's elements.

Allocation: each register fragment's storage (a CuTe ``RegisterStorage``; views made by ``retile_D``
share it) gets a block of fixed per-thread registers the first time an instruction uses it, in
program order; memory-to-memory copies go through ``SCRATCH_REGISTERS`` scratch registers,
allocated once. Every warp traces the same code, so warps get the same register numbers.

Slots: a storage's element ``s`` (its *slot*, in CuTe's storage order) lives in the register
:func:`~warpsim.cute.pointer.register_of_slot` gives, offset by the block's base register: a 16-bit
slot ``s`` is half ``s % 2`` (0: bits 0..15, 1: bits 16..31) of register ``base + s // 2``, as PTX
packs a pair; a 32-bit slot ``s`` is register ``base + s`` (half ``-1``).

>>> regs, halves = slot_registers("f16", np.arange(5))
>>> regs.tolist(), halves.tolist(), slot_registers("f32", np.arange(3))[1].tolist()
([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [-1, -1, -1])
>>> slot_at("bf16", 2, half=1), slot_at("f32", 2), register_count("f16", 5)
(5, 2, 3)
>>> t = TensorInfo("acc", "f16", 4, bases=(10, 10))
>>> t.registers(1).tolist(), t.halves().tolist(), t.slot(1, 11, half=1), t.slot(1, 12)
([10, 10, 11, 11], [0, 1, 0, 1], 3, None)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from warpsim.cute.numeric import dtype_bits
from warpsim.cute.pointer import register_of_slot

__all__ = ["SCRATCH_REGISTERS", "slot_registers", "slot_at", "register_count", "RegisterAllocator",
           "TensorInfo"]

SCRATCH_REGISTERS = 4          # a 128-bit access: the widest memory-to-memory copy


def slot_registers(dtype, slots):
    """``(registers, halves)``, ``int64`` arrays of ``slots``' shape: where each slot of a ``dtype``
    storage lives, relative to the storage's base register (half ``-1`` for 32-bit data)."""
    slots = np.asarray(slots, dtype=np.int64)
    regs, halves = register_of_slot(dtype, slots)
    return np.asarray(regs, np.int64), np.broadcast_to(np.asarray(halves, np.int64), slots.shape).copy()


def slot_at(dtype, register, half=0):
    """The slot that ``half`` of ``register`` (relative to the base) holds; ``half`` counts for 16-bit data only."""
    return 2 * register + half if dtype_bits(dtype) == 16 else register


def register_count(dtype, slots):
    """Registers that ``slots`` elements of ``dtype`` occupy."""
    return (slots * dtype_bits(dtype) + 31) // 32


class RegisterAllocator:
    """Hands out one trace's per-thread registers: a block per storage on first use, scratch once.

    >>> from warpsim.cute.pointer import RegisterStorage
    >>> a = RegisterAllocator()
    >>> acc, frag = RegisterStorage("f32", 4), RegisterStorage("f16", 8)
    >>> a.base(acc), a.base(frag), a.base(acc), a.scratch(), a.count
    (0, 4, 0, 8, 12)
    """

    def __init__(self):
        self.count = 0                    # registers allocated so far
        self._bases = {}                  # id(RegisterStorage) -> (storage, base register)
        self._scratch = None

    def base(self, storage):
        """The first register of ``storage``'s block (allocated on first use)."""
        entry = self._bases.get(id(storage))
        if entry is None:
            entry = self._bases[id(storage)] = (storage, self.count)
            self.count += storage.registers
        return entry[1]

    def scratch(self):
        """The first of the ``SCRATCH_REGISTERS`` scratch registers (allocated on first use)."""
        if self._scratch is None:
            self._scratch = self.count
            self.count += SCRATCH_REGISTERS
        return self._scratch

    def block(self, count):
        """The first of ``count`` new registers (e.g. the registers of loaded memory elements)."""
        first = self.count
        self.count += count
        return first


@dataclass(frozen=True)
class TensorInfo:
    """A per-thread register tensor bound to a local name of the program at return.

    ``slots`` elements of ``dtype`` (storage order, CuTe's); ``bases[w]`` is warp ``w``'s first register.
    ``tensor``: the CuTe register tensor the name was bound to (warp 0's; a register tensor's layout
    and slots are the same for every thread), for views such as the debugger's.
    """

    name: str
    dtype: str
    slots: int
    bases: tuple
    tensor: object = field(default=None, repr=False, compare=False)

    @property
    def bits(self):
        return dtype_bits(self.dtype)

    @property
    def register_count(self):
        """Registers per thread the tensor occupies."""
        return register_count(self.dtype, self.slots)

    def registers(self, warp):
        """``int64[slots]``: the register of each slot in ``warp``."""
        return self.bases[warp] + slot_registers(self.dtype, np.arange(self.slots))[0]

    def halves(self):
        """``int64[slots]``: the half of each slot (0: bits 0..15, 1: bits 16..31; -1 for 32-bit elements)."""
        return slot_registers(self.dtype, np.arange(self.slots))[1]

    def slot(self, warp, reg, half=0):
        """The slot that ``half`` of register ``reg`` holds in ``warp``, or None."""
        k = reg - self.bases[warp]
        if not 0 <= k < self.register_count:
            return None
        s = slot_at(self.dtype, k, half if half in (0, 1) else 0)
        return s if s < self.slots else None
