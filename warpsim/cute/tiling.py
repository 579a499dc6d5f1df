"""Divides and products of layouts, ``tile_to_shape`` and ``make_fragment_like``.

Ports of the "Logical divide", "Logical product" and "Rank-sensitive products" sections of
``include/cute/layout.hpp``. A tiler is a Layout, an int (``n:_1``), ``_`` or a tuple of those
applied mode by mode. Each function also takes a composed layout and works on its layout B
(``include/cute/layout_composed.hpp``).

Examples::

    >>> L = Layout((4, 6))
    >>> str(logical_divide(L, (2, 3))), str(zipped_divide(L, (2, 3)))
    ('((_2,_2),(_3,_2)):((_1,_2),(_4,_12))', '((_2,_3),(_2,_2)):((_1,_4),(_2,_12))')
    >>> str(blocked_product(Layout((2, 2)), Layout((3, 1)))), str(raked_product(Layout((2, 2)), Layout((3, 1))))
    ('((_2,_3),(_2,_1)):((_1,_4),(_2,_0))', '((_3,_2),(_1,_2)):((_4,_1),(_0,_2))')
    >>> str(tile_to_shape(Layout((2, 2)), (4, 6)))
    '((_2,_2),(_2,_3)):((_1,_4),(_2,_8))'
"""

from warpsim.cute.integers import _, cute_gcd, cute_str, is_int, is_static, is_tuple
from warpsim.cute import int_tuple as it
from warpsim.cute.layout import (
    Layout, _lift, append, coalesce, cosize, get, is_composed, make_layout, make_ordered_layout,
    rank, shape, size, slice_, transform_layout,
)
from warpsim.cute.algebra import complement, composition, right_inverse
from warpsim.cute.overloads import overload, overloaded
from warpsim.cute.stride import LayoutLeft, compact_col_major

__all__ = [
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
    "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
    "tile_to_shape", "tile_unzip", "zip_layouts", "make_fragment_like", "max_alignment",
]


def _check_tiler(op, layout, tiler):
    if is_tuple(tiler) and len(tiler) > rank(layout):
        raise ValueError(f"{op}: too many modes in tiler {cute_str(tiler)} for {layout}")


@_lift
def logical_divide(layout, tiler):
    """CuTe ``logical_divide``: split ``layout`` into (tile, rest) by ``tiler``.

    ``logical_divide(L, T) == composition(L, make_layout(T, complement(T, shape(coalesce(L)))))``.
    """
    if isinstance(tiler, Layout):
        return composition(layout, make_layout(tiler, complement(tiler, shape(coalesce(layout)))))
    if is_tuple(tiler):
        _check_tiler("logical_divide", layout, tiler)
        return transform_layout(layout, tiler, logical_divide)
    if tiler is _:
        return layout
    if is_int(tiler):
        return logical_divide(layout, Layout(tiler))
    raise TypeError(f"logical_divide: tiler must be a layout, int, _ or tuple, got {tiler!r}")


@_lift
def tile_unzip(layout, tiler):
    """CuTe ``tile_unzip``: gather the rank-2 modes at the tiler's leaves into ((tiles),(rests))."""
    return Layout(it.zip2_by(layout.shape, tiler), it.zip2_by(layout.stride, tiler))


@_lift
def zipped_divide(layout, tiler):
    """CuTe ``zipped_divide``: ``((BLK_A,BLK_B,...),(a,b,...,x,y))``."""
    return tile_unzip(logical_divide(layout, tiler), tiler)


@overload("tiled_divide")
@_lift
def tiled_divide(layout, tiler):
    """CuTe ``tiled_divide``: ``((BLK_A,BLK_B,...),a,b,...,x,y)``."""
    result = zipped_divide(layout, tiler)
    return slice_((_, it.repeat(_, rank(result, 1))), result)


@_lift
def flat_divide(layout, tiler):
    """CuTe ``flat_divide``: ``(BLK_A,BLK_B,...,a,b,...,x,y)``."""
    result = zipped_divide(layout, tiler)
    return slice_((it.repeat(_, rank(result, 0)), it.repeat(_, rank(result, 1))), result)


@_lift
def logical_product(block, tiler):
    """CuTe ``logical_product``: ``(block, complement(block, size(block)*cosize(tiler)) o tiler)``."""
    if is_composed(tiler):
        return overloaded("logical_product[composed]")(block, tiler)
    if isinstance(tiler, Layout):
        return make_layout(block, composition(complement(block, size(block) * cosize(tiler)), tiler))
    if is_tuple(tiler):
        _check_tiler("logical_product", block, tiler)
        return transform_layout(block, tiler, logical_product)
    if tiler is _:
        return block
    if is_int(tiler):
        return logical_product(block, Layout(tiler))
    raise TypeError(f"logical_product: tiler must be a layout, int, _ or tuple, got {tiler!r}")


@_lift
def zipped_product(block, tiler):
    """CuTe ``zipped_product``: ``((BLK_A,BLK_B,...),(a,b,...,x,y))``."""
    return tile_unzip(logical_product(block, tiler), tiler)


@_lift
def tiled_product(block, tiler):
    """CuTe ``tiled_product``: ``((BLK_A,BLK_B,...),a,b,...,x,y)``."""
    result = zipped_product(block, tiler)
    return slice_((_, it.repeat(_, rank(result, 1))), result)


@_lift
def flat_product(block, tiler):
    """CuTe ``flat_product``: ``(BLK_A,BLK_B,...,a,b,...,x,y)``."""
    result = zipped_product(block, tiler)
    return slice_((it.repeat(_, rank(result, 0)), it.repeat(_, rank(result, 1))), result)


def zip_layouts(a, b):
    """CuTe ``zip(layoutA, layoutB)``: zip the shapes and the strides of two layouts."""
    return Layout(it.zip_tuples(a.shape, b.shape), it.zip_tuples(a.stride, b.stride))


def _rank_sensitive(op, block, tiler):
    if not isinstance(tiler, Layout):
        raise TypeError(f"{op}: tiler must be a Layout, got {tiler!r}")
    r = max(rank(block), rank(tiler))
    return logical_product(append(block, n=r), append(tiler, n=r))


@_lift
def blocked_product(block, tiler):
    """CuTe ``blocked_product``: repeat ``block`` over ``tiler``, mode by mode; rank = max of ranks."""
    result = _rank_sensitive("blocked_product", block, tiler)
    return zip_layouts(get(result, 0), get(result, 1))


@_lift
def raked_product(block, tiler):
    """CuTe ``raked_product``: like ``blocked_product`` but interleaving the blocks."""
    result = _rank_sensitive("raked_product", block, tiler)
    return zip_layouts(get(result, 1), get(result, 0))


@_lift
def tile_to_shape(block, trg_shape, ord_shape=LayoutLeft):
    """CuTe ``tile_to_shape``: repeat ``block`` (``ord_shape`` order) until it has ``trg_shape``.

    Pre-conditions: ``rank(block) <= rank(trg_shape)``; for a static target, the block shape
    divides it mode by mode (``ValueError`` otherwise).
    """
    trg = shape(trg_shape)
    r = it.rank(trg)
    if rank(block) > r:
        raise ValueError(f"tile_to_shape: rank of {block} exceeds the rank of target {cute_str(trg)}")
    padded = append(block, n=r)
    block_shape = it.product_each(padded.shape)
    target_shape = it.product_each(trg)
    if is_static(target_shape) and not it.evenly_divides(target_shape, block_shape):
        raise ValueError(f"tile_to_shape: block {block} does not divide the target shape {cute_str(trg)}")
    product_shape = it.ceil_div(target_shape, block_shape)
    return blocked_product(padded, make_ordered_layout(product_shape, ord_shape))


def make_fragment_like(layout):
    """CuTe ``make_fragment_like`` (layout part): compact, mode 0 column-major, the rest ordered.

    For a static shape of rank > 1, mode 0 is made column-major (static ``_0`` strides kept as
    extent-1) and the other modes follow ``make_ordered_layout`` of their strides: static
    strides by value first, dynamic ones after, in mode order. Otherwise column-major.

    >>> str(make_fragment_like(Layout(((2, 2), 8, (2, 2)), ((1, DInt(8)), 512, (DInt(16), DInt(32))))))
    '((_2,_2),_8,(_2,_2)):((_1,_2),_4,(_32,_64))'
    """
    if is_composed(layout):
        return make_fragment_like(layout.layout_b)
    if not isinstance(layout, Layout):
        return make_layout(it.check_int_tuple("make_fragment_like", layout, "shape"))
    r = rank(layout)
    if r > 1 and is_static(layout.shape):
        s0, d0 = layout.shape[0], layout.stride[0]
        mode0 = Layout(s0, compact_col_major(it.filter_zeros(d0, s0)))
        rest = make_ordered_layout(it.take(layout.shape, 1, r), it.take(layout.stride, 1, r))
        return tiled_product(mode0, rest)
    return make_layout(layout.shape)


def max_alignment(x):
    """CuTe ``max_alignment``: the largest ``N`` for which ``upcast(N, x)`` passes CuTe's checks.

    Only static shapes and strides count (dynamic ones are assumed large multiples of ``N``).
    A swizzled layout also limits it by its swizzle (``2^M``) and offset.

    >>> max_alignment(Layout((4, 8), (1, 4))), max_alignment(Layout((4, 8), (1, 8))), max_alignment(Layout((4, 2), (2, 1)))
    (32, 4, 8)
    """
    if not isinstance(x, Layout):
        return overloaded("max_alignment[composed]")(x)
    flat = coalesce(x)
    shapes = tuple(s if is_static(s) else 1 for s in it.wrap(flat.shape))
    strides = tuple(d if is_static(d) else 0 for d in it.wrap(flat.stride))
    static_layout = Layout(shapes, strides)
    permuted = logical_divide(static_layout, right_inverse(static_layout))
    result = size(permuted, 0)
    for d in it.flatten_to_tuple(permuted.stride[1]):
        result = cute_gcd(result, d)
    return result

