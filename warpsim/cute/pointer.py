"""Where a tensor's elements live: shared/global pointers, register storage, coordinates.

* :class:`Pointer` (``make_smem_ptr``, ``make_gmem_ptr``): a typed byte address in the CTA's
  shared memory or in global memory; element ``k`` is at ``address + k * bytes``.
* :class:`RegisterStorage`: one thread's register array of ``size`` elements (raw bits in a
  numpy array). Element ``s`` is storage SLOT ``s``: for 16-bit data slot ``s`` is bits
  ``16*(s%2)..`` of 32-bit register ``s//2``; for 32-bit data slot ``s`` is register ``s``.
* :class:`CoordEngine`: the elements of an identity tensor are coordinates (CuTe's
  ``ArithmeticTupleIterator``).

>>> p = make_smem_ptr(256, "f16")
>>> str(p), p.element_bytes, p.space
('smem_ptr[16b](0x100)', 2, 'smem')
>>> r = RegisterStorage("f32", 4)
>>> r.data.dtype.name, r.data.tolist(), register_of_slot("f16", 5)
('uint32', [0, 0, 0, 0], (2, 1))
"""

from dataclasses import dataclass

import numpy as np

from warpsim.cute.numeric import check_dtype, dtype_bits, storage_dtype

__all__ = [
    "Pointer", "make_smem_ptr", "make_gmem_ptr", "RegisterStorage", "CoordEngine", "register_of_slot",
]

_SPACES = {"smem": "shared", "gmem": "global"}


@dataclass(frozen=True)
class Pointer:
    """A typed byte address in ``space`` (``"smem"`` or ``"gmem"``)."""

    space: str
    address: int
    dtype: str

    def __post_init__(self):
        if self.space not in _SPACES:
            raise ValueError(f"Pointer: space must be 'smem' or 'gmem', got {self.space!r}")
        check_dtype("Pointer", self.dtype)
        if isinstance(self.address, bool) or not isinstance(self.address, (int, np.integer)):
            raise TypeError(f"Pointer: address must be an integer, got {self.address!r}")
        object.__setattr__(self, "address", int(self.address))
        if self.address < 0:
            raise ValueError(f"Pointer: negative address {self.address}")
        if self.address % self.element_bytes:
            raise ValueError(f"Pointer: address {self.address:#x} is not aligned to the "
                             f"{self.element_bytes}-byte {self.dtype} element")

    @property
    def element_bytes(self):
        return dtype_bits(self.dtype) // 8

    def __str__(self):
        return f"{self.space}_ptr[{dtype_bits(self.dtype)}b]({self.address:#x})"


def make_smem_ptr(byte_address, dtype):
    """CuTe ``make_smem_ptr``: a pointer to ``dtype`` elements at ``byte_address`` in shared memory."""
    return Pointer("smem", byte_address, dtype)


def make_gmem_ptr(byte_address, dtype):
    """CuTe ``make_gmem_ptr``: a pointer to ``dtype`` elements at ``byte_address`` in global memory."""
    return Pointer("gmem", byte_address, dtype)


class RegisterStorage:
    """One thread's register array: ``size`` elements of ``dtype``, raw bits in ``data``.

    ``data`` may be given (a 1-D ``uint16`` array for 16-bit types, ``uint32`` for 32-bit ones);
    otherwise it starts as zeros. Identity matters: views made by ``retile_D`` share it.
    """

    __slots__ = ("dtype", "size", "data")

    def __init__(self, dtype, size, data=None):
        check_dtype("RegisterStorage", dtype)
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(f"RegisterStorage: size must be a non-negative integer, got {size!r}")
        if data is None:
            data = np.zeros(int(size), dtype=storage_dtype(dtype))
        elif not isinstance(data, np.ndarray) or data.ndim != 1 or data.dtype != storage_dtype(dtype) \
                or data.size < size:
            raise ValueError(f"RegisterStorage: data must be a 1-D {storage_dtype(dtype).name} array of at "
                             f"least {size} elements for {dtype}")
        self.dtype, self.size, self.data = dtype, int(size), data

    @property
    def element_bits(self):
        return dtype_bits(self.dtype)

    @property
    def registers(self):
        """Number of 32-bit registers the storage occupies."""
        return (self.size * self.element_bits + 31) // 32

    def __str__(self):
        return f"rmem_ptr[{self.element_bits}b](slot 0)"

    def __repr__(self):
        return f"RegisterStorage({self.dtype!r}, {self.size})"


def register_of_slot(dtype, slot):
    """``(register, half)`` holding ``slot`` of a ``dtype`` storage (``half`` is -1 for 32-bit data)."""
    if dtype_bits(dtype) == 16:
        return slot // 2, slot % 2
    return slot, -1


class CoordEngine:
    """The engine of an identity tensor: element values are coordinates (CuTe ``ArithmeticTupleIterator``)."""

    __slots__ = ()

    def __str__(self):
        return "ArithTuple"

    def __repr__(self):
        return "CoordEngine()"
