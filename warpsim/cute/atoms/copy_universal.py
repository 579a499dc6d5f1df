"""``UniversalCopy<S>``: one thread moves one ``S``-bit value (``include/cute/atom/copy_traits.hpp``).

CuTe's traits: ``ThrID = Layout<_1>``, ``SrcLayout = DstLayout = RefLayout = Layout<Shape<_1, Int<bits>>>``
(column-major: ``(_1,_N):(_0,_1)``). A shared/global source or destination makes it a plain
``ld``/``st`` of ``bits`` bits (``.v2.b32``/``.v4.b32`` for 64/128 bits); register to register it
is a move.

>>> op = UniversalCopy(128)
>>> op.name, str(op.src_layout_bits), op.ptx_for("gmem", "rmem"), op.ptx_for("rmem", "smem")
('UniversalCopy<uint128_t>', '(_1,_128):(_0,_1)', 'ld.global.v4.b32', 'st.shared.v4.b32')
"""

from dataclasses import dataclass

from warpsim.cute.layout import Layout
from warpsim.cute.atoms.base import CopyOperation

__all__ = ["UniversalCopy", "INSTANCES"]

_SPACE_PTX = {"smem": "shared", "gmem": "global"}


@dataclass(frozen=True)
class UniversalCopy(CopyOperation):
    """CuTe ``UniversalCopy<uint{bits}_t>`` for ``bits`` in 16, 32, 64, 128."""

    bits: int

    def __post_init__(self):
        if self.bits not in (16, 32, 64, 128):
            raise ValueError(f"UniversalCopy: bits must be 16, 32, 64 or 128, got {self.bits!r}")

    @property
    def name(self):
        return f"UniversalCopy<uint{self.bits}_t>"

    @property
    def ThrID(self):
        return Layout(1)                                  # _1:_0

    @property
    def src_layout_bits(self):
        return Layout((1, self.bits))                     # (T1,V{bits}) -> bit

    @property
    def dst_layout_bits(self):
        return Layout((1, self.bits))                     # (T1,V{bits}) -> bit

    @property
    def ref_layout_bits(self):
        return self.src_layout_bits

    @property
    def SRegisters(self):
        """``(bits, count)`` of the source operand: one ``uint{bits}_t``."""
        return (self.bits, 1)

    @property
    def DRegisters(self):
        """``(bits, count)`` of the destination operand: one ``uint{bits}_t``."""
        return (self.bits, 1)

    def ptx_for(self, src_space, dst_space):
        """The instruction for a copy from ``src_space`` to ``dst_space`` (``"smem"``, ``"gmem"``, ``"rmem"``).

        A memory-to-memory copy needs a load and a store; this names the load.
        """
        width = f"b{self.bits}" if self.bits <= 32 else f"v{self.bits // 32}.b32"
        if src_space in _SPACE_PTX:
            return f"ld.{_SPACE_PTX[src_space]}.{width}"
        if dst_space in _SPACE_PTX:
            return f"st.{_SPACE_PTX[dst_space]}.{width}"
        if src_space == dst_space == "rmem":
            return "mov.b32"
        raise ValueError(f"UniversalCopy.ptx_for: unknown memory spaces {src_space!r} -> {dst_space!r}")

    @property
    def ptx(self):
        """The shared-memory load form (see :meth:`ptx_for` for the others)."""
        return self.ptx_for("smem", "rmem")


INSTANCES = tuple(UniversalCopy(bits) for bits in (16, 32, 64, 128))
