"""SM90 TMA copy atoms (``include/cute/atom/copy_traits_sm90_tma.hpp``), as data.

One TMA instruction is issued by one thread and moves a whole box, so CuTe's traits are those of a one-thread copy of
``NumBitsPerTMA`` bits: ``ThrID = Layout<_1>``, ``SrcLayout = DstLayout = RefLayout = Layout<Shape<_1,
NumBitsPerTMA>>``. The number of bits is the box's (``size(tma_gbasis) * sizeof_bits<T>``), known only once
:func:`warpsim.cute.make_tma_copy` has traced the shared-memory layout into global memory, so an operation here
carries ``bits``; pass the class itself to ``make_tma_copy``, as CuTe code passes ``SM90_TMA_LOAD{}``.

>>> op = SM90_TMA_LOAD(65536)
>>> op.name, str(op.ThrID), str(op.src_layout_bits), op.direction
('SM90_TMA_LOAD', '_1:_0', '(_1,_65536):(_0,_1)', 'load')
"""

from dataclasses import dataclass

from warpsim.cute.layout import Layout
from warpsim.cute.atoms.base import CopyOperation

__all__ = ["SM90_TMA", "SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE", "SM90_TMA_REDUCE_ADD", "TMA_OPS"]


@dataclass(frozen=True)
class SM90_TMA(CopyOperation):
    """Common part of the TMA atoms: ``bits`` moved by one instruction (a box)."""

    bits: int
    abstract = True
    direction = "load"          # "load": global -> shared; "store" and "reduce": shared -> global
    multicast = False

    def __post_init__(self):
        if not isinstance(self.bits, int) or self.bits <= 0 or self.bits % 8:
            raise ValueError(f"{self.name}: bits must be a positive multiple of 8 (a box's size), got {self.bits!r}")

    @property
    def ThrID(self):
        return Layout(1)                                  # _1:_0: one thread issues the instruction

    @property
    def src_layout_bits(self):
        return Layout((1, self.bits))                     # (T1, V{bits}) -> bit

    @property
    def dst_layout_bits(self):
        return Layout((1, self.bits))

    @property
    def ref_layout_bits(self):
        return self.src_layout_bits

    def ptx(self, rank):
        """The PTX instruction (without operands) for a tensor map of ``rank`` dimensions."""
        if self.direction == "load":
            return (f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
                    + (".multicast::cluster" if self.multicast else ""))
        if self.direction == "store":
            return f"cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group"
        return f"cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.add.bulk_group"


@dataclass(frozen=True)
class SM90_TMA_LOAD(SM90_TMA):
    """CuTe ``SM90_TMA_LOAD``: a box from global into this CTA's shared memory, completing on an mbarrier."""


@dataclass(frozen=True)
class SM90_TMA_LOAD_MULTICAST(SM90_TMA):
    """CuTe ``SM90_TMA_LOAD_MULTICAST``: each CTA of the multicast loads its slice of the box into every CTA of the
    mask."""

    multicast = True


@dataclass(frozen=True)
class SM90_TMA_STORE(SM90_TMA):
    """CuTe ``SM90_TMA_STORE``: a box from shared into global memory (a bulk group)."""

    direction = "store"


@dataclass(frozen=True)
class SM90_TMA_REDUCE_ADD(SM90_TMA):
    """CuTe ``SM90_TMA_REDUCE_ADD``: a box from shared memory added into global memory."""

    direction = "reduce"


TMA_OPS = {op.__name__: op for op in (SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST, SM90_TMA_STORE, SM90_TMA_REDUCE_ADD)}
