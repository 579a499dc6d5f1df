"""Base classes of atom data: what an MMA or copy instruction does to a warp's values, as layouts.

An atom is a frozen dataclass named exactly as CuTe's operation struct; its fields are CuTe's
``MMA_Traits`` / ``Copy_Traits`` members (``include/cute/atom/mma_traits.hpp``,
``include/cute/atom/copy_traits.hpp``). Atoms are data: how the instruction executes lives in the
ISA layer, which knows nothing of layouts.

* :class:`MMAOperation`: ``ThrID`` (thread id -> lane), ``Shape_MNK``, ``ALayout`` (thread,
  value) -> (m, k) index in the column-major M x K tile, ``BLayout`` (thread, value) -> (n, k),
  ``CLayout`` (thread, value) -> (m, n), and the value types ``ValTypeD/A/B/C``.
* :class:`CopyOperation`: ``ThrID`` and ``src_layout_bits`` / ``dst_layout_bits`` /
  ``ref_layout_bits``: (thread, value) -> bit, in bits as CuTe declares them; ``SRegisters`` /
  ``DRegisters``: ``(bits, count)`` of one thread's operands (CuTe's ``uint128_t[1]`` is ``(128, 1)``).
"""

from dataclasses import dataclass

__all__ = ["MMAOperation", "CopyOperation", "walk_operations"]


@dataclass(frozen=True)
class MMAOperation:
    """An MMA atom's data; concrete atoms are subclasses that set every field's default."""

    @property
    def name(self):
        """CuTe's name of the operation."""
        return type(self).__name__

    @property
    def ptx(self):
        """The PTX instruction (without operands), e.g. ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``."""
        m, n, k = self.Shape_MNK
        return (f"mma.sync.aligned.m{m}n{n}k{k}.row.col."
                f"{self.ValTypeD}.{self.ValTypeA}.{self.ValTypeB}.{self.ValTypeC}")

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class CopyOperation:
    """A copy atom's data; concrete atoms are subclasses (or parametrised instances)."""

    @property
    def name(self):
        """CuTe's name of the operation."""
        return type(self).__name__

    def __str__(self):
        return self.name


def walk_operations(base, modules):
    """The concrete operations defined in ``modules``: subclasses of ``base`` whose every field has a default.

    Returns ``{name: instance}`` in definition order. A class that sets ``abstract = True`` is a
    common base, not an atom; a parametrised operation (one with fields
    without defaults) is not instantiated here (its module lists its instances in ``INSTANCES``).
    """
    out = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, base) and value is not base \
                    and value.__module__ == module.__name__ and not vars(value).get("abstract", False):
                try:
                    op = value()
                except TypeError:
                    continue
                out[op.name] = op
        for op in getattr(module, "INSTANCES", ()):
            out[op.name] = op
    return out
