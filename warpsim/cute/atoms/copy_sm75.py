"""SM75 ``ldmatrix`` copy atoms (``include/cute/atom/copy_traits_sm75.hpp``), as data.

Layouts are in bits, as CuTe declares them: ``src_layout_bits`` maps (thread, bit) to the bit of
the 8x8 matrices each thread's row address supplies (only the threads with a nonzero stride
supply rows); ``dst_layout_bits`` maps (thread, bit) to the bit each thread receives.
``Copy_Atom(op, dtype)`` recasts them to elements. PTX ISA section "Warp-level matrix load
instruction: ldmatrix" (CuTe's own asm writes the qualifiers as ``.x4.m8n8``; PTX lists
``.m8n8.x4``, the order warpsim's instruction stream uses).

>>> op = SM75_U16x8_LDSM_T()
>>> str(op.dst_layout_bits), op.ptx
('((_4,_8),(_16,_2,_4)):((_256,_16),(_1,_128,_1024))', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16')
"""

from dataclasses import dataclass

from warpsim.cute.layout import Layout
from warpsim.cute.atoms.base import CopyOperation

__all__ = [
    "LDSM", "SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
    "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T",
]


@dataclass(frozen=True)
class LDSM(CopyOperation):
    """Common part of the ldmatrix atoms: ``num`` 8x8 matrices of 16-bit elements, ``trans`` or not."""

    abstract = True       # a base, not an atom (class attribute, not a field)

    @property
    def ptx(self):
        """The PTX instruction (without operands)."""
        trans = ".trans" if self.trans else ""
        return f"ldmatrix.sync.aligned.m8n8.x{self.num}{trans}.shared.b16"

    @property
    def ref_layout_bits(self):
        """CuTe's ``RefLayout``: the destination layout for every ldmatrix atom."""
        return self.dst_layout_bits

    @property
    def SRegisters(self):
        """``(bits, count)`` of a thread's source operand: ``uint128_t[1]``, the row address's 16 bytes."""
        return (128, 1)

    @property
    def DRegisters(self):
        """``(bits, count)`` of a thread's destination registers: ``uint32_t[num]``."""
        return (32, self.num)


@dataclass(frozen=True)
class SM75_U32x1_LDSM_N(LDSM):
    """``ldmatrix.sync.aligned.m8n8.x1.shared.b16``: one 8x8 matrix, rows from threads 0-7."""
    num: int = 1
    trans: bool = False
    ThrID: Layout = Layout(32)                                         # _32:_1
    src_layout_bits: Layout = Layout(((8, 4), 128), ((128, 0), 1))     # (T32,V128) -> bit
    dst_layout_bits: Layout = Layout((32, 32), (32, 1))                # (T32,V32) -> bit


@dataclass(frozen=True)
class SM75_U32x2_LDSM_N(LDSM):
    """``ldmatrix.sync.aligned.m8n8.x2.shared.b16``: two 8x8 matrices, rows from threads 0-15."""
    num: int = 2
    trans: bool = False
    ThrID: Layout = Layout(32)                                         # _32:_1
    src_layout_bits: Layout = Layout(((16, 2), 128), ((128, 0), 1))    # (T32,V128) -> bit
    dst_layout_bits: Layout = Layout((32, (32, 2)), (32, (1, 1024)))   # (T32,V64) -> bit


@dataclass(frozen=True)
class SM75_U32x4_LDSM_N(LDSM):
    """``ldmatrix.sync.aligned.m8n8.x4.shared.b16``: four 8x8 matrices, rows from all 32 threads."""
    num: int = 4
    trans: bool = False
    ThrID: Layout = Layout(32)                                         # _32:_1
    src_layout_bits: Layout = Layout((32, 128), (128, 1))              # (T32,V128) -> bit
    dst_layout_bits: Layout = Layout((32, (32, 4)), (32, (1, 1024)))   # (T32,V128) -> bit


@dataclass(frozen=True)
class SM75_U16x2_LDSM_T(LDSM):
    """``ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16``: one transposed 8x8 matrix."""
    num: int = 1
    trans: bool = True
    ThrID: Layout = Layout(32)                                         # _32:_1
    src_layout_bits: Layout = Layout(((8, 4), 128), ((128, 0), 1))     # (T32,V128) -> bit
    # (T32,V32) -> bit
    dst_layout_bits: Layout = Layout(((4, 8), (16, 2)), ((256, 16), (1, 128)))


@dataclass(frozen=True)
class SM75_U16x4_LDSM_T(LDSM):
    """``ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16``: two transposed 8x8 matrices."""
    num: int = 2
    trans: bool = True
    ThrID: Layout = Layout(32)                                         # _32:_1
    src_layout_bits: Layout = Layout(((16, 2), 128), ((128, 0), 1))    # (T32,V128) -> bit
    # (T32,V64) -> bit
    dst_layout_bits: Layout = Layout(((4, 8), (16, 2, 2)), ((256, 16), (1, 128, 1024)))


@dataclass(frozen=True)
class SM75_U16x8_LDSM_T(LDSM):
    """``ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16``: four transposed 8x8 matrices."""
    num: int = 4
    trans: bool = True
    ThrID: Layout = Layout(32)                                         # _32:_1
    src_layout_bits: Layout = Layout((32, 128), (128, 1))              # (T32,V128) -> bit
    # (T32,V128) -> bit
    dst_layout_bits: Layout = Layout(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024)))
