"""Coordinates, indices and compact strides: ports of ``include/cute/stride.hpp``.

``crd2idx`` maps a (nested, possibly partial-integer) coordinate to an index, ``idx2crd`` goes
back, and ``compact_major`` / ``compact_order`` build compact strides with CuTe's
static/dynamic rules: a STATIC extent-1 mode gets stride ``_0``; ``compact_order`` sorts static
orders by value and puts every dynamic order after them, in mode order.

Examples::

    >>> crd2idx((1, 2), (4, 8), (1, 4)), crd2idx(9, (4, 8), (1, 4))
    (9, 9)
    >>> idx2crd(9, (4, 8)), idx2crd(9, (4, 8), (1, 4))
    ((1, 2), (1, 2))
    >>> cute_str(compact_col_major((4, 1, DInt(3), 2)))
    '(_1,_0,_4,12)'
    >>> compact_order((2, 2, 2, 2), (0, 2, 3, 1))
    (1, 4, 8, 2)
"""

from warpsim.cute.integers import (
    _, cute_str, div, is_constant, is_int, is_static, is_tuple, mod,
)
from warpsim.cute.int_tuple import flatten_to_tuple, product, product_like, unflatten

__all__ = [
    "crd2idx", "idx2crd", "crd2crd", "compact_major", "compact_col_major", "compact_row_major",
    "compact_order", "LayoutLeft", "LayoutRight", "GenColMajor", "GenRowMajor",
]


class _MajorTag:
    """A CuTe layout tag (``LayoutLeft`` / ``LayoutRight``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


LayoutLeft = _MajorTag("LayoutLeft")     # column-major: leftmost mode has stride 1
LayoutRight = _MajorTag("LayoutRight")   # row-major: rightmost mode has stride 1
GenColMajor = LayoutLeft
GenRowMajor = LayoutRight


def _as_index(c):
    return 0 if c is _ else c


def crd2idx(coord, shape, stride=None):
    """CuTe ``crd2idx``: the index of ``coord`` in ``(shape, stride)``.

    Without ``stride``: the colexicographic 1-D index of ``coord`` in ``shape``.
    An integer coordinate for a tuple shape is split mode by mode (the last mode is not
    wrapped, as in CuTe). ``_`` counts as a static zero.

    >>> crd2idx((1, (1, 2)), (2, (3, 4))), str(crd2idx(DInt(5), (2, 3), (3, 1)))
    (15, '5')
    """
    if stride is None:
        return _crd2idx_colex(coord, shape)
    if is_tuple(coord):
        if not is_tuple(shape) or not is_tuple(stride) or not len(coord) == len(shape) == len(stride):
            raise ValueError(f"crd2idx: coordinate {cute_str(coord)} does not fit {cute_str(shape)}:{cute_str(stride)}")
        if not coord:
            return 0
        total = crd2idx(coord[0], shape[0], stride[0])
        for c, s, d in zip(coord[1:], shape[1:], stride[1:]):
            total = total + crd2idx(c, s, d)
        return total
    if is_tuple(shape):
        if not is_tuple(stride) or len(shape) != len(stride):
            raise ValueError(f"crd2idx: shape {cute_str(shape)} and stride {cute_str(stride)} are not congruent")
        return _crd2idx_itt(coord, shape, stride)
    if is_tuple(stride):
        raise ValueError(f"crd2idx: shape {cute_str(shape)} and stride {cute_str(stride)} are not congruent")
    return _as_index(coord) * stride


def _crd2idx_itt(coord, shape, stride):
    if not shape:
        return 0
    last = len(shape) - 1
    if last == 0:
        return crd2idx(coord, shape[0], stride[0])
    if is_constant(0, coord):
        total = crd2idx(0, shape[0], stride[0])
        rest = 0
        for s, d in zip(shape[1:], stride[1:]):
            rest = rest + crd2idx(0, s, d)
        return total + rest
    p = product(shape[0])
    head = crd2idx(mod(coord, p), shape[0], stride[0])
    return head + _crd2idx_itt(div(coord, p), shape[1:], stride[1:])


def _crd2idx_colex(coord, shape):
    if is_int(coord) or coord is _:
        return _as_index(coord)
    if not is_tuple(shape) or len(coord) != len(shape):
        raise ValueError(f"crd2idx: coordinate {cute_str(coord)} does not fit shape {cute_str(shape)}")
    flat_c = flatten_to_tuple(coord)
    flat_s = flatten_to_tuple(product_like(shape, coord))
    result = _as_index(flat_c[-1])
    for c, s in zip(reversed(flat_c[:-1]), reversed(flat_s[:-1])):
        result = _as_index(c) + s * result
    return result


def idx2crd(idx, shape, stride=None):
    """CuTe ``idx2crd``: the coordinate of index ``idx`` in ``shape``.

    Without ``stride``: colexicographic split (the last mode is not wrapped). With ``stride``
    (compact layouts only): ``(idx / stride) % shape`` at every leaf.

    >>> idx2crd(7, (2, (3, 4))), idx2crd(30, (2, 3))
    ((1, (0, 1)), (0, 15))
    """
    if stride is not None:
        return _idx2crd_strided(idx, shape, stride)
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise ValueError(f"idx2crd: index {cute_str(idx)} does not fit shape {cute_str(shape)}")
        return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
    if not is_tuple(shape):
        return idx
    out = []
    for n, s in enumerate(shape):
        if n == len(shape) - 1:
            out.append(idx2crd(idx, s))
        elif is_constant(0, idx):
            out.append(idx2crd(0, s))
        else:
            p = product(s)
            out.append(idx2crd(mod(idx, p), s))
            idx = div(idx, p)
    return tuple(out)


def crd2crd(coord, src_shape, dst_shape):
    """CuTe ``crd2crd``: re-express ``coord`` of ``src_shape`` as a coordinate of ``dst_shape``.

    >>> crd2crd((1, (1, 2)), (2, (3, 4)), (1, 1))
    (1, 7)
    """
    if is_tuple(coord) and is_tuple(src_shape) and is_tuple(dst_shape):
        if not len(coord) == len(src_shape) == len(dst_shape):
            raise ValueError(f"crd2crd: rank mismatch: {cute_str(coord)} in {cute_str(src_shape)} "
                             f"to {cute_str(dst_shape)}")
        return tuple(crd2crd(c, s, d) for c, s, d in zip(coord, src_shape, dst_shape))
    return idx2crd(crd2idx(coord, src_shape), dst_shape)


def _idx2crd_strided(idx, shape, stride):
    if is_tuple(idx):
        if not (is_tuple(shape) and is_tuple(stride) and len(idx) == len(shape) == len(stride)):
            raise ValueError(f"idx2crd: index {cute_str(idx)} does not fit {cute_str(shape)}:{cute_str(stride)}")
        return tuple(_idx2crd_strided(i, s, d) for i, s, d in zip(idx, shape, stride))
    if is_tuple(shape):
        if not is_tuple(stride):
            stride = compact_col_major(shape, stride)
        if len(shape) != len(stride):
            raise ValueError(f"idx2crd: shape {cute_str(shape)} and stride {cute_str(stride)} are not congruent")
        return tuple(_idx2crd_strided(idx, s, d) for s, d in zip(shape, stride))
    if is_constant(1, shape):
        return 0
    return mod(div(idx, stride), shape)


def _compact(shape, current, left):
    """Return ``(strides, current * product(shape))`` for a compact layout of ``shape``."""
    if is_tuple(shape):
        out = [None] * len(shape)
        order = range(len(shape)) if left else reversed(range(len(shape)))
        for i in order:
            out[i], current = _compact(shape[i], current, left)
        return tuple(out), current
    if is_constant(1, shape):
        return 0, current
    return current, current * shape


def compact_major(shape, current=1, major=LayoutLeft):
    """CuTe ``compact_major<Major>``: compact strides of ``shape`` starting at ``current``.

    A static extent-1 mode gets stride ``_0``; ``current`` may be a tuple congruent to the
    top modes of ``shape`` (then each mode starts at its own value).
    """
    if major is not LayoutLeft and major is not LayoutRight:
        raise TypeError(f"compact_major: major must be LayoutLeft or LayoutRight, got {major!r}")
    if is_tuple(current):
        if not is_tuple(shape) or len(shape) != len(current):
            raise ValueError(f"compact_major: rank mismatch: {cute_str(shape)} with {cute_str(current)}")
        return tuple(compact_major(s, c, major) for s, c in zip(shape, current))
    return _compact(shape, current, major is LayoutLeft)[0]


def compact_col_major(shape, current=1):
    """CuTe ``compact_col_major``: column-major compact strides (``LayoutLeft``)."""
    return compact_major(shape, current, LayoutLeft)


def compact_row_major(shape, current=1):
    """CuTe ``compact_row_major``: row-major compact strides (``LayoutRight``).

    >>> compact_row_major((4, (2, 3)))
    (6, (3, 1))
    """
    return compact_major(shape, current, LayoutRight)


def compact_order(shape, order):
    """CuTe ``compact_order``: compact strides of ``shape`` following the mode ``order``.

    Static orders are sorted by value; every dynamic order counts as larger than all static
    ones, in mode order (CuTe replaces it with ``max_static_order + 1 + position``). Modes of
    equal order get the same starting stride. ``order`` may be ``LayoutLeft``/``LayoutRight``.

    >>> cute_str(compact_order(make_dynamic((2, 3, 4, 5)), (2, DInt(67), DInt(42), 50)))
    '(_1,10,30,2)'
    """
    if order is LayoutLeft or order is LayoutRight:
        return compact_major(shape, 1, order)
    ref_shape = flatten_to_tuple(product_like(shape, order))
    flat_order = flatten_to_tuple(order)
    max_order = 0
    for o in flat_order:
        if is_static(o) and max_order < o:
            max_order = o
    ref_order = tuple(o if is_static(o) else max_order + 1 + i for i, o in enumerate(flat_order))
    new_order = unflatten(ref_order, order)
    return _compact_order(shape, new_order, ref_shape, ref_order)


def _compact_order(shape, order, ref_shape, ref_order):
    if is_tuple(order):
        if not is_tuple(shape) or len(shape) != len(order):
            raise ValueError(f"compact_order: rank mismatch: shape {cute_str(shape)} with order {cute_str(order)}")
        return tuple(_compact_order(s, o, ref_shape, ref_order) for s, o in zip(shape, order))
    start = product(tuple(s if o < order else 1 for s, o in zip(ref_shape, ref_order)))
    return compact_col_major(shape, start)

