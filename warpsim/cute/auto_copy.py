"""CuTe's two-argument ``copy(src, dst)``: the instruction CuTe picks (``include/cute/algorithm/copy.hpp``).

With no atom given, CuTe copies element by element, vectorised as widely as both tensors allow:

1. Static layouts on both sides assume 128-bit aligned data (``AutoVectorizingCopyWithAssumedAlignment<128>``);
   otherwise (a dynamic stride or shape) only 8 bits are assumed, which vectorises nothing wider
   than a byte.
2. With static shapes and equal sizes (``AutoFilter``) the destination's stride-0 modes are dropped
   (``zipped_divide`` by its ``nullspace``, then element 0 of the nullspace).
3. ``common = max_common_vector(src, dst)``: how many leading elements are contiguous in both.
   If ``common > 1``: ``align = gcd(max_alignment(src) * bits, max_alignment(dst) * bits, assumed)``
   and ``vec = gcd(common * bits, align)``; when ``vec`` is a whole number of bytes wider than one
   element, both tensors are recast to ``uint{vec}_t`` and each vector is one copy. Otherwise
   each element is one copy.

``auto_copy(src, dst)`` returns ``(UniversalCopy(vec_bits), src_v, dst_v)``: the tensors viewed as
``(V, rest)`` with ``V = vec_bits / bits`` values per copy, ready for ``copy(Copy_Atom(op, dtype),
src_v, dst_v)``. For a lane-vector tensor the decision is made on lane 0's tensor (CuTe makes it
at compile time, the same for every thread).

>>> from warpsim.cute.tensor import make_tensor
>>> from warpsim.cute.pointer import make_smem_ptr
>>> from warpsim.cute.layout import make_layout
>>> s = make_tensor(make_smem_ptr(0, "f16"), make_layout((8, 8), (8, 1)))     # row-major 8x8
>>> r = make_tensor("f16", make_layout((8, 8), (8, 1)))
>>> op, s_v, r_v = auto_copy(s, r)
>>> op.bits, s_v.shape                                                       # 8 halves = 128 bits
(128, (8, 8))
>>> auto_copy(s, make_tensor("f16", make_layout((8, 8))))[0].bits            # col-major regs: 1 element
16
"""

from math import gcd

from warpsim.cute.algebra import max_common_vector
from warpsim.cute.atoms.copy_universal import UniversalCopy
from warpsim.cute.calls import nullspace
from warpsim.cute.integers import _, is_static
from warpsim.cute.layout import Layout, make_layout, shape, size
from warpsim.cute.numeric import dtype_bits
from warpsim.cute.tiling import complement, max_alignment

__all__ = ["auto_copy", "auto_copy_bits"]


def _layout(t):
    """The tensor's CuTe layout (lane 0's for a lane-vector tensor)."""
    return t.lane(0).layout if t.lanes is not None else t.layout


def _divide(t, tiler):
    """``zipped_divide(t, tiler)`` for a 1-D layout ``tiler``: ``(tiler, rest)``."""
    return t.compose(make_layout(tiler, complement(tiler, size(t.shape))))


def _filtered(src, dst):
    """Copy.hpp's ``AutoFilter``: both tensors without the destination's stride-0 modes."""
    null = nullspace(_layout(dst))
    return _divide(src, null)[0, _], _divide(dst, null)[0, _]


def auto_copy_bits(src, dst):
    """The bits one copy moves in CuTe's ``copy(src, dst)`` (module docstring, step 3), after step 2.

    Pre-conditions: ``src`` and ``dst`` are tensors of one element type and size (``ValueError``
    naming both otherwise).
    """
    if src.dtype != dst.dtype:
        raise ValueError(f"copy(src, dst): src holds {src.dtype}, dst {dst.dtype}: an automatic copy moves bits "
                         f"unchanged (convert the values first)")
    if size(src.shape) != size(dst.shape):
        raise ValueError(f"copy(src, dst): src has {size(src.shape)} elements, dst {size(dst.shape)}")
    sl, dl = _layout(src), _layout(dst)
    assumed = 128 if is_static(sl) and is_static(dl) else 8
    bits = dtype_bits(dst.dtype)
    common = int(max_common_vector(sl, dl))
    if common <= 1:
        return bits
    align = gcd(int(max_alignment(sl)) * bits, int(max_alignment(dl)) * bits, assumed)
    vec = gcd(common * bits, align)
    return vec if vec % 8 == 0 and bits < vec else bits


def auto_copy(src, dst):
    """``(UniversalCopy(vec_bits), src_v, dst_v)`` of CuTe's ``copy(src, dst)`` (see the module docstring)."""
    auto_copy_bits(src, dst)                       # the element type and size checks, before any view
    if is_static(shape(_layout(src))) and is_static(shape(_layout(dst))):
        src, dst = _filtered(src, dst)
    bits = auto_copy_bits(src, dst)
    per_copy = bits // dtype_bits(dst.dtype)
    vector = Layout(per_copy, 1)
    return UniversalCopy(bits), _divide(src, vector), _divide(dst, vector)
