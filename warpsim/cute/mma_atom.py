"""``MMA_Atom``: one tensor-core instruction seen through its layouts (``include/cute/atom/mma_atom.hpp``).

>>> atom = MMA_Atom(SM80_16x8x16_F32F16F16F32_TN())
>>> str(atom.LayoutB_TV), atom.FrgTypeC, atom.values_per_thread("A")
('((_4,_8),(_2,_2)):((_16,_1),(_8,_64))', 'f32', 8)
>>> print(atom)
MMA_Atom
  ThrID:      _32:_1
  Shape_MNK:  (_16,_8,_16)
  LayoutA_TV: ((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))
  LayoutB_TV: ((_4,_8),(_2,_2)):((_16,_1),(_8,_64))
  LayoutC_TV: ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))
"""

from dataclasses import dataclass
from functools import lru_cache

from warpsim.cute.integers import cute_str
from warpsim.cute.layout import size
from warpsim.cute.atoms.base import MMAOperation

__all__ = ["MMA_Atom"]


@dataclass(frozen=True)
class MMA_Atom:
    """CuTe ``MMA_Atom<Op>``: the operation's layouts and value types under CuTe's names.

    ``op`` is an :class:`~warpsim.cute.atoms.MMAOperation` instance (a class is instantiated).
    Fragment types equal the value types for every SM80 atom.
    """

    op: MMAOperation

    def __post_init__(self):
        op = self.op
        if isinstance(op, type) and issubclass(op, MMAOperation):
            object.__setattr__(self, "op", op())
        elif not isinstance(op, MMAOperation):
            raise TypeError(f"MMA_Atom: expected an MMA operation such as SM80_16x8x16_F32F16F16F32_TN(), got {op!r}")

    ThrID = property(lambda self: self.op.ThrID, doc="Logical thread id -> lane.")
    Shape_MNK = property(lambda self: self.op.Shape_MNK, doc="The atom's (M, N, K).")
    LayoutA_TV = property(lambda self: self.op.ALayout, doc="(thread, value) -> (m, k) index.")
    LayoutB_TV = property(lambda self: self.op.BLayout, doc="(thread, value) -> (n, k) index.")
    LayoutC_TV = property(lambda self: self.op.CLayout, doc="(thread, value) -> (m, n) index.")
    ValTypeA = property(lambda self: self.op.ValTypeA)
    ValTypeB = property(lambda self: self.op.ValTypeB)
    ValTypeC = property(lambda self: self.op.ValTypeC)
    ValTypeD = property(lambda self: self.op.ValTypeD)
    FrgTypeA = ValTypeA
    FrgTypeB = ValTypeB
    FrgTypeC = ValTypeC

    @property
    def ptx(self):
        """The PTX instruction of one atom call."""
        return self.op.ptx

    def layout_tv(self, operand):
        """``LayoutA_TV``, ``LayoutB_TV`` or ``LayoutC_TV`` for ``operand`` in ``"A"``, ``"B"``, ``"C"``."""
        try:
            return {"A": self.LayoutA_TV, "B": self.LayoutB_TV, "C": self.LayoutC_TV}[operand]
        except KeyError:
            raise ValueError(f"MMA_Atom: operand must be 'A', 'B' or 'C', got {operand!r}") from None

    def frg_type(self, operand):
        """The fragment element type of ``operand`` (``"A"``, ``"B"``, ``"C"``)."""
        self.layout_tv(operand)
        return {"A": self.FrgTypeA, "B": self.FrgTypeB, "C": self.FrgTypeC}[operand]

    def values_per_thread(self, operand):
        """Values one thread holds for one atom call: ``size<1>(Layout{operand}_TV)``."""
        return _values_per_thread(self, operand)

    def __str__(self):
        return ("MMA_Atom\n"
                f"  ThrID:      {self.ThrID}\n"
                f"  Shape_MNK:  {cute_str(tuple(self.Shape_MNK))}\n"
                f"  LayoutA_TV: {self.LayoutA_TV}\n"
                f"  LayoutB_TV: {self.LayoutB_TV}\n"
                f"  LayoutC_TV: {self.LayoutC_TV}")


@lru_cache(maxsize=64)
def _values_per_thread(atom, operand):
    return int(size(atom.layout_tv(operand), 1))
