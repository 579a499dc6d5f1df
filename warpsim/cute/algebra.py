"""Layout algebra: composition, complement, inverses, common vectors (``include/cute/layout.hpp``).

Every function keeps CuTe's static/dynamic integers and raises ``ValueError`` where CuTe has a
static assertion (a stride or shape divisibility condition on static values, a non-injective
layout in ``complement``, dynamic strides where static ones are required), naming the operands.
As in CuTe, conditions on dynamic values are not checked.

Examples::

    >>> A = Layout((6, 2), (8, 2))
    >>> str(composition(A, Layout((4, 3), (3, 1))))
    '((_2,_2),_3):((_24,_2),_8)'
    >>> str(complement(Layout(4, 2), 24)), str(right_inverse(Layout((4, 2), (2, 1))))
    ('(_2,_3):(_1,_8)', '(_2,_4):(_4,_1)')
    >>> str(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    'Sw<3,3,3> o _0 o (_8,_64):(_64,_1)'
"""

from warpsim.cute.integers import (
    _, ceil_div_int, cute_abs, cute_min, cute_str, div, is_constant, is_int, is_static, is_tuple,
    mod, signum,
)
from warpsim.cute import int_tuple as it
from warpsim.cute.basis import ArithmeticTuple, ScaledBasis, as_arithmetic_tuple, basis_get, basis_value
from warpsim.cute.layout import (
    Layout, coalesce, coalesce_x, cosize, filter, get, is_composed, make_layout, rank, shape,
)
from warpsim.cute.overloads import overload, overloaded
from warpsim.cute.stride import compact_col_major
from warpsim.cute.swizzle import Swizzle

__all__ = [
    "composition", "complement", "right_inverse", "left_inverse", "max_common_layout",
    "max_common_vector",
]


@overload("composition")
def composition(lhs, rhs, *more):
    """CuTe ``composition(lhs, rhs)``: the layout ``R`` with ``R(c) == lhs(rhs(c))``.

    ``rhs`` may be a Layout, an int (``n:_1``), ``_`` (no-op) or a tuple of those per mode (a
    tiler; extra modes of ``lhs`` are dropped). ``composition(Swizzle, Layout)`` and
    ``composition(A, offset, B)`` build a :class:`~warpsim.cute.composed.ComposedLayout`.

    Pre-condition (static values): the divisibility conditions of CuTe's ``composition_impl``;
    otherwise ``ValueError``.

    >>> str(composition(Layout((4, 8)), (2, Layout(4, 2))))
    '(_2,_4):(_1,_8)'
    """
    if more:
        if len(more) != 1:
            raise TypeError("composition: takes (lhs, rhs) or (layout_a, offset, layout_b)")
        return overloaded("compose_with_offset")(lhs, rhs, more[0])
    if isinstance(lhs, Swizzle) or is_composed(lhs) or isinstance(rhs, Swizzle) or is_composed(rhs):
        return overloaded("composition[composed]")(lhs, rhs)
    if not isinstance(lhs, Layout):
        raise TypeError(f"composition: left operand must be a layout or swizzle, got {lhs!r}")
    where = f"{lhs} o {_tiler_str(rhs)}"
    try:
        if is_tuple(rhs):
            if not rhs:
                raise ValueError(f"composition: empty tiler: {where}")
            if len(rhs) > rank(lhs):
                raise ValueError(f"composition: tiler has more modes than the layout: {where}")
            return make_layout(*[composition(get(lhs, i), r) for i, r in enumerate(rhs)])
        if rhs is _:
            return lhs
        if is_int(rhs):
            flat = coalesce_x(lhs)
            return _composition_impl(flat.shape, flat.stride, rhs, 1, where)
        if isinstance(rhs, Layout):
            flat = coalesce_x(lhs, _coprofile(rhs))
            return _composition_impl(flat.shape, flat.stride, rhs.shape, rhs.stride, where)
    except ZeroDivisionError as e:
        raise ValueError(f"composition: division by zero: {where}") from e
    raise TypeError(f"composition: right operand must be a layout, int, _ or tuple, got {rhs!r}")


def _tiler_str(t):
    if is_tuple(t):
        return "(" + ",".join(_tiler_str(e) for e in t) + ")"
    return cute_str(t)


def _coprofile(layout):
    """CuTe ``coprofile``: ``_0``s congruent with the codomain (a tuple where the strides are scaled bases, which
    keeps the modes of the left operand that they select apart when it is coalesced)."""
    total = 0
    for d in it.flatten_to_tuple(layout.stride):
        total = total + d
    return it.repeat_like(_plain_profile(as_arithmetic_tuple(total)), 0)


def _plain_profile(x):
    return tuple(_plain_profile(v) for v in x.values) if isinstance(x, ArithmeticTuple) else x


def _composition_impl(ls, ld, rs, rd, where):
    if is_tuple(rs):
        if not is_tuple(rd) or len(rs) != len(rd):
            raise ValueError(f"composition: right shape and stride are not congruent: {where}")
        return make_layout(*[_composition_impl(ls, ld, s, d, where) for s, d in zip(rs, rd)])
    if isinstance(rd, ScaledBasis):                 # a stride that selects a mode of the left operand
        return _composition_impl(basis_get(rd, ls), basis_get(rd, ld), rs, basis_value(rd), where)
    if is_constant(0, rd):
        return Layout(rs, rd)
    if not is_tuple(ls):
        return Layout(rs, rd * ld)
    result_shape, result_stride = (), ()
    rest_shape, rest_stride = rs, rd
    for curr_shape, curr_stride in zip(ls[:-1], ld[:-1]):
        if is_static(curr_shape) and is_static(rest_stride):
            if not (mod(rest_stride, curr_shape) == 0 or rest_stride < curr_shape):
                raise ValueError(f"composition: stride divisibility condition fails "
                                 f"({cute_str(rest_stride)} vs {cute_str(curr_shape)}): {where}")
        next_shape = ceil_div_int(curr_shape, cute_abs(rest_stride))
        next_stride = ceil_div_int(cute_abs(rest_stride), curr_shape) * signum(rest_stride)
        if is_constant(1, next_shape) or is_constant(1, rest_shape):
            rest_stride = next_stride
            continue
        new_shape = cute_min(next_shape, rest_shape)
        if is_static(new_shape) and is_static(rest_shape) and mod(rest_shape, new_shape) != 0:
            raise ValueError(f"composition: shape divisibility condition fails "
                             f"({cute_str(rest_shape)} vs {cute_str(new_shape)}): {where}")
        result_shape += (new_shape,)
        result_stride += (rest_stride * curr_stride,)
        rest_shape = div(rest_shape, new_shape)
        rest_stride = next_stride
    if not result_shape:
        return Layout(rest_shape, rest_stride * ld[-1])
    if is_constant(1, rest_shape):
        return Layout(it.unwrap(result_shape), it.unwrap(result_stride))
    return Layout(result_shape + (rest_shape,), result_stride + (rest_stride * ld[-1],))


def complement(layout, cotarget=None):
    """CuTe ``complement``: the layout of the offsets ``layout`` does not reach, up to ``cotarget``.

    Post-conditions: ``result`` is ordered, disjoint from ``layout`` (but at 0), and
    ``size(result) >= cotarget / size(filter(layout))``. ``cotarget`` defaults to ``cosize``.

    >>> str(complement(Layout((2, 2), (1, 6)), 24)), str(complement(Layout(4, 0), 8))
    ('(_3,_2):(_2,_12)', '_8:_1')
    """
    if is_composed(layout):
        if cotarget is None:
            cotarget = cosize(layout)
        layout = layout.layout_b
    if not isinstance(layout, Layout):
        raise TypeError(f"complement: expected a layout, got {layout!r}")
    flt = filter(layout)
    cot = cosize(flt) if cotarget is None else shape(cotarget)
    try:
        return _complement(flt.shape, flt.stride, it.check_int_tuple("complement", cot, "cotarget"), layout)
    except ZeroDivisionError as e:
        raise ValueError(f"complement: division by zero: complement({layout}, {cute_str(cot)})") from e


def _complement(shp, strd, cotarget, orig):
    if is_constant(0, strd):
        return make_layout(it.coalesce_shape(cotarget))
    r = it.rank(shp)
    if r > 1 and not is_static(strd):
        raise ValueError(f"complement: dynamic strides need a rank-1 layout: {orig}")
    shapes, strides = list(it.wrap(shp)), list(it.wrap(strd))
    result_shape, result_stride = [], [1]
    for i in range(r - 1):
        min_stride = it.tuple_min(tuple(strides))
        k = strides.index(min_stride)
        new_shape = div(min_stride, result_stride[i])
        if is_constant(0, new_shape):
            raise ValueError(f"complement: non-injective layout: {orig}")
        result_shape.append(new_shape)
        result_stride.append(min_stride * shapes[k])
        del shapes[k], strides[k]
    new_shape = div(strides[0], result_stride[r - 1])
    if is_constant(0, new_shape):
        raise ValueError(f"complement: non-injective layout: {orig}")
    result_shape.append(new_shape)
    new_stride = strides[0] * shapes[0]
    rest_shape = it.coalesce_shape(it.ceil_div(cotarget, new_stride))
    rest_stride = compact_col_major(rest_shape, new_stride)
    return coalesce(Layout((tuple(result_shape), rest_shape), (tuple(result_stride), rest_stride)))


def _exchange_sort(keys, vals):
    """CuTe's ``detail::exchange_sort`` of (key, value) pairs by key (not stable, like CuTe)."""
    pairs = list(zip(keys, vals))
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            if pairs[j][0] < pairs[i][0]:
                pairs[i], pairs[j] = pairs[j], pairs[i]
    return [v for _k, v in pairs]


def _prefix_products(shapes):
    out = [1]
    for s in shapes:
        out.append(s * out[-1])
    return out


def right_inverse(layout):
    """CuTe ``right_inverse``: ``R`` with ``layout(R(i)) == i`` for ``i < size(R)``.

    Only static strides take part (dynamic ones are filtered out, as in CuTe).

    >>> L = Layout((4, 2), (2, 1))
    >>> [L(right_inverse(L)(i)) for i in range(8)]
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    if layout is _:
        return _
    if is_composed(layout):
        return overloaded("right_inverse[composed]")(layout)
    if not isinstance(layout, Layout):
        raise TypeError(f"right_inverse: expected a layout, got {layout!r}")
    cl = coalesce(layout)
    lstride, lshape = it.wrap(cl.stride), it.wrap(cl.shape)
    preprod = _prefix_products(lshape)
    idx = [i for i, d in enumerate(lstride) if is_static(d)]
    result_shape, result_stride, curr = [1], [0], 1
    for i in _exchange_sort([lstride[i] for i in idx], idx):
        if is_static(curr) and int(curr) == int(lstride[i]):
            result_shape.append(lshape[i])
            result_stride.append(preprod[i])
            curr = lshape[i] * lstride[i]
    return coalesce(Layout(tuple(result_shape), tuple(result_stride)))


def left_inverse(layout):
    """CuTe ``left_inverse``: ``R`` with ``R(layout(i)) == i`` (a quasi-inverse if not injective).

    Pre-condition: static strides, each divisible by the size gathered so far (``ValueError``).

    >>> L = Layout((4, 2), (2, 1))
    >>> [left_inverse(L)(L(i)) for i in range(8)]
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    if layout is _:
        return _
    if is_composed(layout):
        return overloaded("left_inverse[composed]")(layout)
    if not isinstance(layout, Layout):
        raise TypeError(f"left_inverse: expected a layout, got {layout!r}")
    cl = coalesce(layout)
    lstride, lshape = it.wrap(cl.stride), it.wrap(cl.shape)
    if not is_static(lstride):
        raise ValueError(f"left_inverse: requires static strides: {layout}")
    preprod = _prefix_products(lshape)
    order = _exchange_sort(list(lstride), list(range(len(lstride))))
    result_shape, result_stride = (), (0,)
    for i in order:
        istride = lstride[i]
        if is_constant(0, istride):
            continue
        sz = it.product(result_shape)
        if mod(istride, sz) != 0:
            raise ValueError(f"left_inverse: divisibility condition fails ({cute_str(istride)} % {cute_str(sz)}): {layout}")
        result_shape += (div(istride, sz),)
        result_stride += (preprod[i],)
    return coalesce(Layout(result_shape + (lshape[order[-1]],), result_stride))


def _mode0(layout):
    return (layout.shape[0], layout.stride[0]) if is_tuple(layout.shape) else (layout.shape, layout.stride)


def max_common_layout(a, b):
    """CuTe ``max_common_layout``: ``R`` with ``a(R(i)) == i == b(R(i))`` on the longest static run.

    >>> str(max_common_layout(Layout((4, 8), (1, 4)), Layout((4, 8), (1, 32))))
    '_4:_1'
    """
    if is_composed(a) or is_composed(b):
        return overloaded("max_common_layout[composed]")(a, b)
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    s0, d0 = _mode0(common)
    if is_static(s0) and is_constant(1, d0):
        return composition(inv_b, Layout(s0, d0))
    return Layout(1, 0)


def max_common_vector(a, b):
    """CuTe ``max_common_vector``: the number of leading elements ``a`` and ``b`` both keep contiguous.

    >>> max_common_vector(Layout((4, 8), (1, 4)), Layout((4, 8), (1, 32)))
    4
    """
    if is_composed(a) or is_composed(b):
        return overloaded("max_common_vector[composed]")(a, b)
    common = coalesce(composition(a, right_inverse(b)))
    s0, d0 = _mode0(common)
    if is_static(s0) and is_constant(1, d0):
        return s0
    return 1
