"""``ComposedLayout``: A o offset o B, and swizzled layouts (``Swizzle o offset o Layout``).

Ports of ``include/cute/layout_composed.hpp`` and ``include/cute/swizzle_layout.hpp``. Layout B
defines the domain (shape, size, slicing, tiling act on B); the swizzle A is applied to
``offset + B(c)``. Slicing a swizzled layout with a coordinate that fixes swizzle bits decays it
to a plain layout whose strides are dynamic where the offset's bits are only known at run time
(``slice_and_offset``), exactly as CuTe tracks it with ``MixedBits``.

Examples::

    >>> atom = composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    >>> sK = tile_to_shape(atom, (64, 64))
    >>> str(sK)
    'Sw<3,3,3> o _0 o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))'
    >>> sK(1, 8), sK(0, 8), layout_table(sK)[:4].tolist()
    (64, 8, [0, 72, 144, 216])
"""

import numpy as np

from warpsim.cute.integers import DInt, cute_gcd, cute_min, cute_str, is_constant, is_int, is_static
from warpsim.cute import int_tuple as it
from warpsim.cute.layout import (
    Layout, check_coord, dice, get, is_composed, make_layout, size, slice_, slice_and_offset,
)
from warpsim.cute.table import eval_layout
from warpsim.cute.algebra import (
    composition, max_common_layout, max_common_vector, right_inverse, left_inverse,
)
from warpsim.cute.stride import idx2crd
from warpsim.cute.swizzle import MixedBits, Swizzle, make_swizzle, to_mixed_bits
from warpsim.cute.overloads import overload
from warpsim.cute.tiling import logical_product, max_alignment, tiled_divide

__all__ = [
    "ComposedLayout", "make_composed_layout", "compose_with_offset", "make_swizzle_layout", "get_swizzle_portion",
    "get_nonswizzle_portion",
]


def _check_offset(offset):
    if isinstance(offset, MixedBits) or (is_int(offset)):
        return offset
    raise TypeError(f"ComposedLayout: offset must be an integer or MixedBits, got {offset!r}")


class ComposedLayout:
    """CuTe ``ComposedLayout<LayoutA, Offset, LayoutB>``: ``c -> A(offset + B(c))``.

    ``A`` is a :class:`~warpsim.cute.swizzle.Swizzle` or a :class:`~warpsim.cute.layout.Layout`;
    ``B`` is a Layout and gives the shape. There is no stride. Slicing (a coordinate with ``_``)
    returns the sliced layout and drops the offset, as CuTe's ``slice``; use
    :func:`~warpsim.cute.layout.slice_and_offset` to keep it.

    >>> c = ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4))
    >>> str(c), [c(i) for i in range(4)], str(c[0])
    ('Sw<1,0,1> o _0 o _4:_1', [0, 1, 3, 2], 'Sw<1,0,1> o _0 o _4:_1')
    """

    _is_composed_layout = True
    __slots__ = ("_a", "_offset", "_b")

    def __init__(self, layout_a, offset, layout_b):
        if not (isinstance(layout_a, (Swizzle, Layout)) or is_composed(layout_a)):
            raise TypeError(f"ComposedLayout: layout A must be a Swizzle or a layout, got {layout_a!r}")
        if not isinstance(layout_b, Layout):
            raise TypeError(f"ComposedLayout: layout B must be a Layout, got {layout_b!r}")
        object.__setattr__(self, "_a", layout_a)
        object.__setattr__(self, "_offset", _check_offset(offset))
        object.__setattr__(self, "_b", layout_b)

    def __setattr__(self, name, value):
        raise AttributeError(f"ComposedLayout is immutable: cannot set {name}")

    @property
    def layout_a(self):
        return self._a

    @property
    def offset(self):
        return self._offset

    @property
    def layout_b(self):
        return self._b

    @property
    def shape(self):
        return self._b.shape

    def is_static(self):
        return is_static(self._a) and is_static(self._offset) and is_static(self._b)

    def rebuild(self, new_b):
        """CuTe ``composition(layout_a(), offset(), new_b)``."""
        return compose_with_offset(self._a, self._offset, new_b)

    def __call__(self, *coord):
        c = check_coord(f"{self}", coord[0] if len(coord) == 1 else tuple(coord))
        if it.has_underscore(c):
            return self.slice_and_offset(c)[0]
        return self._a(self._offset + self._b(c))

    def __getitem__(self, key):
        if it.has_underscore(key):
            return self.slice_and_offset(key)[0]
        return get(self, *it.wrap(key))

    def compose(self, *others):
        """CuTe ``layout.compose(b)`` / ``compose(b0, b1, ...)``."""
        return composition(self, others[0] if len(others) == 1 else tuple(others))

    def with_shape(self, *shapes):
        """CuTe ``layout.with_shape(s)``: ``composition(layout, make_layout(s))``."""
        return composition(self, Layout(shapes[0] if len(shapes) == 1 else tuple(shapes)))

    def tile(self, *tilers):
        """CuTe ``layout.tile(t)``: ``tiled_divide(layout, t)``."""
        return tiled_divide(self, tilers[0] if len(tilers) == 1 else tuple(tilers))

    def domain_offset(self, coord):
        """CuTe ``domain_offset``: the offset ``B(coord)`` moves into the composed layout."""
        return ComposedLayout(self._a, self._offset + self._b(coord), self._b), 0

    def slice_and_offset(self, coord):
        """CuTe ``slice_and_offset(coord, layout)``: ``(sliced layout, offset)``."""
        if isinstance(self._a, Swizzle):
            return _swizzle_slice_and_offset(coord, self)
        sliced, off = slice_and_offset(coord, self._b)
        return ComposedLayout(self._a, self._offset + off, sliced), 0

    def eval(self, idx):
        """Vectorised evaluation at the int64 indices ``idx``."""
        vals = eval_layout(self._b, idx) + np.int64(int(self._offset))
        if isinstance(self._a, Swizzle):
            return self._a(vals)
        return eval_layout(self._a, vals)

    def __str__(self):
        return f"{self._a} o {cute_str(self._offset)} o {self._b}"

    __repr__ = __str__

    def _key(self):
        off = self._offset
        off = off if isinstance(off, MixedBits) else (is_static(off), int(off))
        return (self._a, off, self._b)

    def __eq__(self, other):
        return isinstance(other, ComposedLayout) and self._key() == other._key()

    def __hash__(self):
        return hash(("ComposedLayout",) + self._key())


def make_composed_layout(layout_a, offset, layout_b):
    """CuTe ``make_composed_layout``: always a ComposedLayout."""
    return ComposedLayout(layout_a, offset, layout_b)


@overload("compose_with_offset")
def compose_with_offset(a, offset, b):
    """CuTe's three-argument ``composition(A, offset, B)``.

    Like ``make_composed_layout``, except that an identity swizzle (``B == 0`` bits) with a
    static zero offset gives ``B`` itself, as CuTe's overload for ``Swizzle<0,M,S>`` does.

    >>> str(compose_with_offset(Swizzle(0, 4, 3), 0, Layout(4))), str(compose_with_offset(Swizzle(1, 0, 1), 2, Layout(4)))
    ('_4:_1', 'Sw<1,0,1> o _2 o _4:_1')
    """
    if isinstance(a, Swizzle) and a.num_bits == 0 and is_constant(0, offset) and isinstance(b, Layout):
        return b
    return ComposedLayout(a, offset, b)


@overload("make_layout[swizzle]")
def make_swizzle_layout(sw):
    """CuTe ``make_layout(Swizzle<B,M,S>)``: ``composition(sw, Layout<Int<M+B+|S|>, _1>)``."""
    return compose_with_offset(sw, 0, Layout(sw.num_base + sw.num_bits + abs(sw.num_shft), 1))


@overload("composition[composed]")
def compose(lhs, rhs):
    """``composition`` when a swizzle or a composed layout is involved (see algebra.composition)."""
    if isinstance(lhs, Swizzle):
        if isinstance(rhs, Swizzle):
            if lhs.num_shft != rhs.num_shft:
                raise ValueError(f"composition: can only merge swizzles of the same shift: {lhs} o {rhs}")
            return make_swizzle(lhs.yyy_msk ^ rhs.yyy_msk, lhs.zzz_msk ^ rhs.zzz_msk)
        if isinstance(rhs, Layout):
            return compose_with_offset(lhs, 0, rhs)
        raise TypeError(f"composition: a swizzle composes with a Layout, got {rhs!r}")
    if is_composed(lhs):
        return lhs.rebuild(composition(lhs.layout_b, rhs))
    if not isinstance(lhs, Layout):
        raise TypeError(f"composition: left operand must be a layout or swizzle, got {lhs!r}")
    if isinstance(rhs, Swizzle):
        y, z = lhs(rhs.yyy_msk), lhs(rhs.zzz_msk)
        if not (is_static(y) and is_static(z)):
            raise ValueError(f"composition: {lhs} o {rhs} needs a static layout")
        return composition(make_swizzle(y, z), lhs)
    if not is_constant(0, rhs.offset):
        raise ValueError(f"composition: requires a static zero offset on the right: {lhs} o {rhs}")
    return composition(composition(lhs, rhs.layout_a), rhs.layout_b)


def _projections(sw):
    """The swizzle's domain split (M bits, Z bits, gap, Y bits, rest) as anti-ZY and only-ZY layouts."""
    b, m, s = sw.num_bits, sw.num_base, abs(sw.num_shft)
    base = make_layout((1 << m, 1 << b, 1 << (s - b), 1 << b, 1))
    d = base.stride
    anti_zy = Layout(base.shape, (d[0], 0, d[2], 0, size(base)))
    only_zy = Layout(base.shape, (0, d[1], 0, d[3], 0))
    return anti_zy, only_zy


def _swizzle_strides(z_below_y, z, y, offset, bits):
    """CuTe ``detail::make_swizzle_strides``: stride of each swizzle bit given the offset's bits."""
    out = []
    for i in range(bits):
        if z_below_y:
            probe, a, b = offset & (y << i), z * (1 << i), -z * (1 << i)
        else:
            probe, a, b = offset & (z << i), (y + z) * (1 << i), (y - z) * (1 << i)
        if is_static(probe):
            out.append(a if int(probe) == 0 else b)
        elif a == b:
            out.append(a)
        else:
            out.append(DInt(a if int(probe) == 0 else b))
    return tuple(out)


def _swizzle_slice_and_offset(coord, layout):
    sw, offset, lb = layout.layout_a, layout.offset, layout.layout_b
    if it.all_underscore(coord):
        return compose_with_offset(sw, offset, slice_(coord, lb)), 0
    anti_zy, only_zy = _projections(sw)
    sliced = slice_(coord, lb)
    diced = dice(coord, lb)
    diced_coord = it.dice(coord, coord)
    diced_anti = composition(anti_zy, diced)
    diced_only = composition(only_zy, diced)
    offset_only_zy = offset ^ to_mixed_bits(diced_only.shape, diced_only.stride,
                                            idx2crd(diced_coord, diced_only.shape))
    offset_anti_zy = diced_anti(diced_coord)
    sliced_only = composition(only_zy, sliced)
    bits = sliced_only(size(sliced_only) - 1)
    collide = bits & ~sw(bits)
    if is_static(collide) and int(collide) != 0:
        # The sliced layout hits Y and Z bits: not reducible, keep the swizzle.
        return compose_with_offset(sw, offset_only_zy, sliced), offset_anti_zy
    zm, ym = sw.zzz_msk, sw.yyy_msk
    z, y = zm & -zm, ym & -ym
    b, m, s = sw.num_bits, sw.num_base, abs(sw.num_shft)
    lo = _swizzle_strides(z < y, z, y, offset_only_zy, b)
    hi = _swizzle_strides(z > y, z, y, offset_only_zy, b)
    # CuTe nests the per-bit modes; composition flattens the left operand, so flat is the same.
    sw_layout = Layout((1 << m,) + (2,) * b + (1 << (s - b),) + (2,) * b + (1,),
                       (1,) + lo + (1 << (m + b),) + hi + (1 << (m + b + s),))
    return composition(sw_layout, sliced), sw(offset_only_zy) + offset_anti_zy


@overload("right_inverse[composed]")
def composed_right_inverse(layout):
    """CuTe ``right_inverse`` of ``Swizzle o _0 o B``: ``right_inverse(B) o Swizzle``."""
    if isinstance(layout.layout_a, Swizzle) and is_constant(0, layout.offset):
        return composition(right_inverse(layout.layout_b), layout.layout_a)
    raise ValueError(f"right_inverse: needs a swizzle with a static zero offset: {layout}")


@overload("left_inverse[composed]")
def composed_left_inverse(layout):
    """CuTe ``left_inverse`` of ``Swizzle o _0 o B``: ``left_inverse(B) o Swizzle``."""
    if isinstance(layout.layout_a, Swizzle) and is_constant(0, layout.offset):
        return composition(left_inverse(layout.layout_b), layout.layout_a)
    raise ValueError(f"left_inverse: needs a swizzle with a static zero offset: {layout}")


def _swizzled(x, op):
    if is_composed(x) and not isinstance(x.layout_a, Swizzle):
        raise TypeError(f"{op}: only swizzled composed layouts are supported, got {x}")
    return is_composed(x)


@overload("max_common_layout[composed]")
def composed_max_common_layout(a, b):
    """CuTe ``max_common_layout`` with a swizzled operand: truncated to the swizzle's 2^M base."""
    if _swizzled(a, "max_common_layout") and _swizzled(b, "max_common_layout"):
        raise TypeError(f"max_common_layout: at most one swizzled operand: {a}, {b}")
    if _swizzled(b, "max_common_layout"):
        a, b = b, a
    common = max_common_layout(a.layout_b, b)
    base = 1 << a.layout_a.num_base
    if is_static(size(common)) and base < size(common):
        return composition(common, base)
    return common


@overload("max_common_vector[composed]")
def composed_max_common_vector(a, b):
    """CuTe ``max_common_vector`` with swizzled operands (capped at the swizzles' 2^M bases)."""
    sa, sb = _swizzled(a, "max_common_vector"), _swizzled(b, "max_common_vector")
    if sa and sb:
        vec = max_common_vector(a.layout_b, b.layout_b)
        if a.layout_a == b.layout_a:
            return vec
        return cute_min(cute_min(vec, 1 << a.layout_a.num_base), 1 << b.layout_a.num_base)
    if sb:
        a, b = b, a
    return cute_min(max_common_vector(a.layout_b, b), 1 << a.layout_a.num_base)


@overload("logical_product[composed]")
def swizzle_logical_product(layout, tiler):
    """CuTe ``logical_product(Layout, Swizzle o _0 o T)``: the product with a transferred swizzle."""
    sw = tiler.layout_a
    if not isinstance(sw, Swizzle) or not is_constant(0, tiler.offset):
        raise ValueError(f"logical_product: tiler must be a swizzle with a static zero offset: {tiler}")
    new_layout = logical_product(layout, tiler.layout_b)
    _anti, only_zy = _projections(sw)
    only_t = composition(only_zy, tiler.layout_b)
    bits = only_t(size(only_t) - 1)
    new_z = new_layout(0, tiler.layout_b(bits & sw.zzz_msk))
    new_y = new_layout(0, tiler.layout_b(bits & sw.yyy_msk))
    return composition(make_swizzle(new_y, new_z), new_layout)


def get_swizzle_portion(layout):
    """CuTe ``get_swizzle_portion``: the swizzle of a swizzled layout, ``Sw<0,4,3>`` for a Layout.

    >>> str(get_swizzle_portion(composition(Swizzle(3, 3, 3), Layout(64)))), str(get_swizzle_portion(Layout(4)))
    ('Sw<3,3,3>', 'Sw<0,4,3>')
    """
    if is_composed(layout) and isinstance(layout.layout_a, Swizzle):
        return layout.layout_a
    if isinstance(layout, Layout):
        return Swizzle(0, 4, 3)
    raise TypeError(f"get_swizzle_portion: expected a layout, got {layout!r}")


def get_nonswizzle_portion(layout):
    """CuTe ``get_nonswizzle_portion``: layout B of a swizzled layout, or the Layout itself.

    >>> str(get_nonswizzle_portion(composition(Swizzle(3, 3, 3), Layout(64))))
    '_64:_1'
    """
    if is_composed(layout) and isinstance(layout.layout_a, Swizzle):
        return layout.layout_b
    if isinstance(layout, Layout):
        return layout
    raise TypeError(f"get_nonswizzle_portion: expected a layout, got {layout!r}")


@overload("max_alignment[composed]")
def composed_max_alignment(x):
    """CuTe ``max_alignment`` of a swizzle, a MixedBits or static offset, or a composed layout."""
    if isinstance(x, Swizzle):
        return 1 << x.num_base
    if isinstance(x, MixedBits):
        bits = x.static_int | x.static_flags
        return (bits & -bits) if bits else 1 << 32
    if is_int(x) and is_static(x):
        return x
    if is_composed(x):
        if not isinstance(x.layout_a, Swizzle):
            return 1            # CuTe does not attempt general composed layouts
        result = cute_gcd(composed_max_alignment(x.layout_a), composed_max_alignment(x.offset))
        return cute_gcd(result, max_alignment(x.layout_b))
    raise TypeError(f"max_alignment: expected a layout, swizzle or static offset, got {x!r}")

