"""``Copy_Atom``: a copy instruction's bit layouts recast to elements (``include/cute/atom/copy_atom.hpp``).

``Copy_Atom(op, dtype)`` views the operation's (thread, bit) layouts in elements of ``dtype``
(``recast_layout<uint1_t, T>``). A dtype the operation cannot move (its threads would no longer
match, or a thread's bits are not whole elements) raises ``ValueError`` naming both.

>>> atom = Copy_Atom(SM75_U32x4_LDSM_N(), "f16")
>>> str(atom.ValLayoutSrc), str(atom.ValLayoutDst), atom.NumValSrc, atom.NumValDst
('(_32,_8):(_8,_1)', '(_32,(_2,_4)):(_2,(_1,_64))', 8, 8)
>>> Copy_Atom(SM75_U16x8_LDSM_T(), "u32")
Traceback (most recent call last):
...
ValueError: Copy_Atom: SM75_U16x8_LDSM_T cannot move u32 elements: ValLayoutDst ((_4,_4),(_1,_2,_4)):((_8,_1),(_1,_4,_32)) has 16 threads, ThrID _32:_1 has 32
"""

from dataclasses import dataclass

from warpsim.cute.layout import size
from warpsim.cute.numeric import check_dtype, dtype_bits
from warpsim.cute.recast import recast_layout
from warpsim.cute.atoms.base import CopyOperation

__all__ = ["Copy_Atom"]


@dataclass(frozen=True)
class Copy_Atom:
    """CuTe ``Copy_Atom<Op, T>``: ``ThrID`` and the element layouts ``ValLayoutSrc/Dst/Ref``."""

    op: CopyOperation
    dtype: str

    def __post_init__(self):
        op = self.op
        if isinstance(op, type) and issubclass(op, CopyOperation):
            op = op()
            object.__setattr__(self, "op", op)
        if not isinstance(op, CopyOperation):
            raise TypeError(f"Copy_Atom: expected a copy operation such as SM75_U32x4_LDSM_N(), got {op!r}")
        check_dtype("Copy_Atom", self.dtype)
        bits = dtype_bits(self.dtype)
        threads = size(op.ThrID)
        for name, layout in (("Src", op.src_layout_bits), ("Dst", op.dst_layout_bits), ("Ref", op.ref_layout_bits)):
            per_thread = int(size(layout, 1))
            if per_thread % bits:
                raise ValueError(f"Copy_Atom: {op.name} cannot move {self.dtype} elements: each thread's "
                                 f"{name} holds {per_thread} bits, not a whole number of {bits}-bit elements")
            recast = recast_layout(1, bits, layout)
            if size(recast, 0) != threads:
                raise ValueError(f"Copy_Atom: {op.name} cannot move {self.dtype} elements: ValLayout{name} "
                                 f"{recast} has {size(recast, 0)} threads, ThrID {op.ThrID} has {threads}")
            object.__setattr__(self, f"_val_{name.lower()}", recast)
        object.__setattr__(self, "_num_val", (int(size(self._val_src, 1)), int(size(self._val_dst, 1))))

    ThrID = property(lambda self: self.op.ThrID, doc="Logical thread id -> lane.")
    ValLayoutSrc = property(lambda self: self._val_src, doc="(src thread, src value) -> element.")
    ValLayoutDst = property(lambda self: self._val_dst, doc="(dst thread, dst value) -> element.")
    ValLayoutRef = property(lambda self: self._val_ref, doc="(ref thread, ref value) -> element.")
    ValType = property(lambda self: self.dtype, doc="The element type.")

    @property
    def NumValSrc(self):
        """Elements one thread supplies per call: ``size<1>(ValLayoutSrc)``."""
        return self._num_val[0]

    @property
    def NumValDst(self):
        """Elements one thread receives per call: ``size<1>(ValLayoutDst)``."""
        return self._num_val[1]

    def __str__(self):
        return ("Copy_Atom\n"
                f"  ThrID:        {self.ThrID}\n"
                f"  ValLayoutSrc: {self.ValLayoutSrc}\n"
                f"  ValLayoutDst: {self.ValLayoutDst}\n"
                f"  ValLayoutRef: {self.ValLayoutRef}\n"
                f"  ValueType:    {dtype_bits(self.dtype)}b")

    def __repr__(self):
        return f"Copy_Atom({self.op.name}, {self.dtype!r})"


