"""``Layout``: a (shape, stride) pair, a function from coordinates to indices.

A port of ``include/cute/layout.hpp`` (construction, accessors, slicing, coalesce, filter,
ordered layouts) keeping CuTe's static/dynamic integers; ``str(layout)`` is exactly CuTe's
``print(layout)``. The algebra (composition, complement, inverses, divides and products) is
in :mod:`warpsim.cute.algebra` and :mod:`warpsim.cute.tiling`.

Functions here that take a layout also accept a :class:`~warpsim.cute.composed.ComposedLayout`
where CuTe does (``include/cute/layout_composed.hpp``): they act on its inner layout B.

Examples::

    >>> str(make_layout((4, 1, 1)))
    '(_4,_1,_1):(_1,_0,_0)'
    >>> str(make_layout((DInt(4), 3)))
    '(4,_3):(_1,4)'
    >>> L = make_layout((4, (2, 3)), (2, (1, 8)))
    >>> L(5), L(1, (1, 2)), str(L(_, (1, _))), size(L), cosize(L)
    (3, 19, '(_4,_3):(_2,_8)', 24, 24)
"""

from warpsim.cute.integers import (
    _, brief, cute_abs, cute_str, is_constant, is_static, is_tuple,
)
from warpsim.cute import int_tuple as it
from warpsim.cute.basis import ScaledBasis, make_basis_like
from warpsim.cute.overloads import overloaded
from warpsim.cute.stride import (
    LayoutLeft, LayoutRight, compact_col_major, compact_major, compact_order, crd2crd, crd2idx,
    idx2crd,
)

__all__ = [
    "Layout", "make_layout", "make_shape", "make_stride", "make_coord", "make_tile",
    "is_layout", "is_composed", "size", "cosize", "coshape", "rank", "depth", "shape", "stride",
    "get", "take", "select", "flatten", "group", "append", "prepend", "slice_", "dice",
    "slice_and_offset", "domain_offset", "coalesce", "filter", "filter_zeros", "transform_layout",
    "make_ordered_layout", "make_layout_like", "make_identity_layout", "check_coord",
]


def is_composed(x):
    """True for a composed layout (``ComposedLayout``: A o offset o B)."""
    return getattr(type(x), "_is_composed_layout", False)


def is_layout(x):
    """CuTe ``is_layout``: a :class:`Layout` or a composed layout."""
    return isinstance(x, Layout) or is_composed(x)


class Layout:
    """CuTe ``Layout<Shape, Stride>``: immutable, hashable, callable.

    ``Layout(shape)`` is column-major (``LayoutLeft``); plain ints are static, ``DInt`` dynamic.
    Call it with an index or a (nested) coordinate to get an index, or with a coordinate
    holding ``_`` to slice. ``layout[i]`` is mode ``i`` (``layout[i, j]``: mode ``j`` of mode ``i``);
    ``layout[...]`` with ``_`` slices. Equality compares values AND static-ness.

    >>> L = Layout((4, 2), (2, 1))
    >>> str(L), str(L[1]), L(3, 1), str(L(_, 1)), str(L[_, 1])
    ('(_4,_2):(_2,_1)', '_2:_1', 7, '(_4):(_2)', '(_4):(_2)')
    >>> Layout((4, 2)) == Layout((4, 2), (1, 4)), Layout(4) == Layout(DInt(4))
    (True, False)
    """

    __slots__ = ("_shape", "_stride", "_key")

    def __init__(self, shape, stride=None):
        shape = it.check_int_tuple("Layout", shape, "shape")
        for s in it.flatten_to_tuple(shape):
            if isinstance(s, ScaledBasis):
                raise TypeError(f"Layout: a shape holds integers, not the basis {s}: {cute_str(shape)}")
            if s < 0:
                raise ValueError(f"Layout: negative extent in shape {cute_str(shape)}")
        if stride is None:
            stride = compact_col_major(shape)
        else:
            stride = it.check_int_tuple("Layout", stride, "stride")
            if not it.congruent(shape, stride):
                raise ValueError(f"Layout: shape {cute_str(shape)} and stride {cute_str(stride)} are not congruent")
        object.__setattr__(self, "_shape", shape)
        object.__setattr__(self, "_stride", stride)
        object.__setattr__(self, "_key", None)

    def __setattr__(self, name, value):
        raise AttributeError(f"Layout is immutable: cannot set {name}")

    @property
    def shape(self):
        """The shape IntTuple."""
        return self._shape

    @property
    def stride(self):
        """The stride IntTuple."""
        return self._stride

    def is_static(self):
        """CuTe ``is_static<Layout>``: every shape and stride integer is static."""
        return is_static(self._shape) and is_static(self._stride)

    def __call__(self, *coord):
        c = check_coord(f"{self}", coord[0] if len(coord) == 1 else tuple(coord))
        if it.has_underscore(c):
            return slice_(c, self)
        return crd2idx(c, self._shape, self._stride)

    def __getitem__(self, key):
        if it.has_underscore(key):
            return slice_(key, self)
        return get(self, *it.wrap(key))

    def compose(self, *others):
        """CuTe ``layout.compose(b)`` / ``compose(b0, b1, ...)`` (the latter as a by-mode tiler)."""
        return overloaded("composition")(self, others[0] if len(others) == 1 else tuple(others))

    def with_shape(self, *shapes):
        """CuTe ``layout.with_shape(s)``: ``composition(layout, make_layout(s))``.

        >>> str(Layout((8, 4), (4, 1)).with_shape(4, 8))
        '(_4,(_2,_4)):(_4,(_16,_1))'
        """
        return overloaded("composition")(self, Layout(shapes[0] if len(shapes) == 1 else tuple(shapes)))

    def tile(self, *tilers):
        """CuTe ``layout.tile(t)``: ``tiled_divide(layout, t)`` (several tilers: a by-mode tiler)."""
        return overloaded("tiled_divide")(self, tilers[0] if len(tilers) == 1 else tuple(tilers))

    def get_hier_coord(self, idx):
        """CuTe ``get_hier_coord``: the coordinate of index ``idx`` (compact layouts only)."""
        return idx2crd(idx, self._shape, self._stride)

    def get_flat_coord(self, idx):
        """CuTe ``get_flat_coord``: the per-mode 1-D coordinate of index ``idx`` (compact layouts).

        >>> Layout(((2, 2), 4), ((1, 2), 4)).get_flat_coord(7)
        (3, 1)
        >>> Layout(((2, 2), 4), ((1, 2), 4)).get_hier_coord(7)
        ((1, 1), 1)
        """
        return crd2crd(self.get_hier_coord(idx), self._shape, it.repeat(1, it.rank(self._shape)))

    def get_1d_coord(self, idx):
        """CuTe ``get_1d_coord``: the colexicographic 1-D coordinate of index ``idx`` (compact layouts)."""
        return crd2idx(self.get_hier_coord(idx), self._shape)

    def __str__(self):
        return f"{cute_str(self._shape)}:{cute_str(self._stride)}"

    __repr__ = __str__

    def _typed_key(self):
        if self._key is None:
            object.__setattr__(self, "_key", (_typed(self._shape), _typed(self._stride)))
        return self._key

    def __eq__(self, other):
        return isinstance(other, Layout) and self._typed_key() == other._typed_key()

    def __hash__(self):
        return hash(self._typed_key())


def check_coord(where, c):
    """A coordinate of ints, ``_`` and tuples (numpy ints made plain); ``TypeError`` otherwise."""
    if c is _:
        return c
    try:
        return it.check_int_tuple(where, c, "coordinate") if not it.has_underscore(c) else \
            tuple(check_coord(where, e) for e in c)
    except TypeError:
        raise TypeError(f"{where}: a coordinate must hold integers, _ and tuples, got {brief(c)}") from None


def _typed(t):
    if is_tuple(t):
        return tuple(_typed(e) for e in t)
    if isinstance(t, ScaledBasis):
        return (is_static(t), int(t.value), t.modes)
    return (is_static(t), int(t))


def make_shape(*xs):
    """CuTe ``make_shape``: a tuple of the arguments."""
    return tuple(xs)


make_stride = make_shape
make_coord = make_shape
make_tile = make_shape


def make_layout(*args):
    """CuTe ``make_layout``.

    * ``make_layout(shape)``: column-major (static extent-1 modes get stride ``_0``);
    * ``make_layout(shape, stride)`` or ``make_layout(shape, LayoutLeft | LayoutRight)``;
    * ``make_layout(l0, l1, ...)``: concatenate the layouts as modes (one layout is wrapped);
    * ``make_layout(Swizzle(B, M, S))``: the swizzle on ``M+B+|S|`` bits.

    >>> str(make_layout((2, 3), LayoutRight)), str(make_layout(Layout(4), Layout(2, 4)))
    ('(_2,_3):(_3,_1)', '(_4,_2):(_1,_4)')
    >>> str(make_layout(Layout((4, 2))))
    '((_4,_2)):((_1,_4))'
    """
    if not args:
        raise TypeError("make_layout: needs a shape, a shape and a stride, or layouts")
    if all(is_layout(a) for a in args):
        if any(is_composed(a) for a in args):
            raise TypeError("make_layout: cannot concatenate composed layouts")
        return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))
    first = args[0]
    if hasattr(first, "swizzle_code"):
        if len(args) != 1:
            raise TypeError("make_layout: a swizzle takes no other argument")
        return overloaded("make_layout[swizzle]")(first)
    if len(args) == 1:
        return Layout(first)
    if len(args) == 2:
        if args[1] is LayoutLeft or args[1] is LayoutRight:
            shp = it.check_int_tuple("make_layout", first, "shape")
            return Layout(shp, compact_major(shp, 1, args[1]))
        return Layout(first, args[1])
    raise TypeError(f"make_layout: unexpected arguments {args!r}")


def _b(x):
    """The layout that defines the domain: ``x`` itself, or B of a composed layout."""
    return x.layout_b if is_composed(x) else x


def _select_modes(x, modes, op):
    t = x
    for i in modes:
        if not is_tuple(t) and i == 0:
            continue                      # CuTe: get<0>(integer) is the integer (rank 1)
        if not is_tuple(t) or not 0 <= i < len(t):
            raise ValueError(f"{op}: mode {modes} out of range for {cute_str(x)}")
        t = t[i]
    return t


def shape(x, *modes):
    """CuTe ``shape<I...>``: the shape of a layout, a tensor (or one of its modes), or an IntTuple itself.

    >>> size(make_layout((2, (3, 4))), 1), rank(make_layout((2, 3)))
    (12, 2)
    """
    if is_layout(x):
        s = _b(x).shape
    elif not isinstance(x, (int, tuple)) and hasattr(x, "space") and hasattr(x, "shape"):
        s = x.shape                     # a Tensor (duck-typed: this layer does not import tensors)
    else:
        s = x
    return _select_modes(s, modes, "shape")


def stride(x, *modes):
    """CuTe ``stride<I...>``: the stride of a layout or of one of its modes."""
    if is_composed(x):
        raise TypeError(f"stride: a composed layout has no strides: {x}")
    return _select_modes(x.stride, modes, "stride")


def size(x, *modes):
    """CuTe ``size<I...>``: number of elements of a layout, mode or IntTuple."""
    return it.product(shape(x, *modes))


def rank(x, *modes):
    """CuTe ``rank<I...>``: number of top-level modes."""
    return it.rank(shape(x, *modes))


def depth(x, *modes):
    """CuTe ``depth<I...>``: nesting depth."""
    return it.depth(shape(x, *modes))


def coshape(x, *modes):
    """CuTe ``coshape<I...>``: ``inner_product(shape - 1, |stride|) + 1``."""
    layout = get(_b(x), *modes)
    m1 = _map_leaves(layout.shape, lambda s: s - 1)
    ab = _map_leaves(layout.stride, cute_abs)
    return it.inner_product(m1, ab) + 1


def cosize(x, *modes):
    """CuTe ``cosize<I...>``: the size of the codomain, ``L(size-1) + 1`` for positive strides.

    >>> cosize(Layout((4, 2), (2, 1))), cosize(Layout((4, 2), (0, 1)))
    (8, 2)
    """
    return it.product(coshape(x, *modes))


def _map_leaves(t, fn):
    if is_tuple(t):
        return tuple(_map_leaves(e, fn) for e in t)
    return fn(t)


def _lift(fn):
    """Apply ``fn`` to B of a composed layout and rebuild A o offset o fn(B), as CuTe does."""
    def wrapper(x, *args, **kwargs):
        if is_composed(x):
            return x.rebuild(fn(x.layout_b, *args, **kwargs))
        return fn(x, *args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _need_layout(op, x):
    if not isinstance(x, Layout):
        raise TypeError(f"{op}: expected a Layout, got {x!r}")


@_lift
def get(layout, *modes):
    """CuTe ``get<I...>(layout)``: the sub-layout of mode ``I0``, then ``I1`` of it, ..."""
    if not isinstance(layout, Layout):
        return _select_modes(layout, modes, "get")
    return Layout(_select_modes(layout.shape, modes, "get"), _select_modes(layout.stride, modes, "get"))


@_lift
def take(layout, begin, end):
    """CuTe ``take<B,E>``: the modes ``[begin, end)``."""
    if not isinstance(layout, Layout):
        return it.take(layout, begin, end)
    if not begin < end:
        raise ValueError(f"take: empty range [{begin},{end}) of {layout}")
    if not 0 <= begin and end <= rank(layout):
        raise ValueError(f"take: range [{begin},{end}) out of bounds for {layout}")
    return Layout(it.take(layout.shape, begin, end), it.take(layout.stride, begin, end))


def select(layout, *modes):
    """CuTe ``select<I...>``: the listed modes, in that order."""
    if not isinstance(layout, Layout):
        return it.select(layout, *modes)
    return Layout(it.select(layout.shape, *modes), it.select(layout.stride, *modes))


@_lift
def flatten(layout):
    """CuTe ``flatten``: a layout of depth at most 1."""
    if not isinstance(layout, Layout):
        return it.flatten(layout)
    return Layout(it.flatten(layout.shape), it.flatten(layout.stride))


@_lift
def group(layout, begin, end):
    """CuTe ``group<B,E>``: gather modes ``[begin, end)`` into one mode."""
    if not isinstance(layout, Layout):
        return it.group(layout, begin, end)
    return Layout(it.group(layout.shape, begin, end), it.group(layout.stride, begin, end))


@_lift
def append(layout, x=None, n=None):
    """CuTe ``append`` / ``append<N>``: add layout ``x`` (default ``_1:_0``) as the last mode(s)."""
    if not isinstance(layout, Layout):
        return it.append(layout, x, n)
    x = Layout(1, 0) if x is None else x
    _need_layout("append", x)
    return Layout(it.append(layout.shape, x.shape, n), it.append(layout.stride, x.stride, n))


def prepend(layout, x=None, n=None):
    """CuTe ``prepend`` / ``prepend<N>``: add layout ``x`` (default ``_1:_0``) as the first mode(s)."""
    if not isinstance(layout, Layout):
        return it.prepend(layout, x, n)
    x = Layout(1, 0) if x is None else x
    _need_layout("prepend", x)
    return Layout(it.prepend(layout.shape, x.shape, n), it.prepend(layout.stride, x.stride, n))


def slice_(coord, layout):
    """CuTe ``slice``: the sub-layout of the modes marked ``_`` in ``coord``.

    For a composed layout the offset of the sliced-away coordinates is dropped, as in CuTe;
    use :func:`slice_and_offset` to keep it.
    """
    if is_composed(layout):
        return layout.slice_and_offset(coord)[0]
    if not isinstance(layout, Layout):
        return it.slice_(coord, layout)
    return Layout(it.slice_(coord, layout.shape), it.slice_(coord, layout.stride))


def dice(coord, layout):
    """CuTe ``dice``: the sub-layout of the modes given an integer in ``coord``."""
    if not isinstance(layout, Layout):
        return it.dice(coord, layout)
    return Layout(it.dice(coord, layout.shape), it.dice(coord, layout.stride))


def slice_and_offset(coord, layout):
    """CuTe ``slice_and_offset``: ``(slice_(coord, layout), index of coord with _ as 0)``.

    >>> sl, off = slice_and_offset((_, 2), Layout((4, 8), (8, 1)))
    >>> str(sl), off
    ('(_4):(_8)', 2)
    """
    if is_composed(layout):
        return layout.slice_and_offset(coord)
    _need_layout("slice_and_offset", layout)
    return slice_(coord, layout), crd2idx(coord, layout.shape, layout.stride)


def domain_offset(coord, layout):
    """CuTe ``domain_offset``: ``(layout, layout(coord))``; a composed layout keeps the offset inside."""
    if is_composed(layout):
        return layout.domain_offset(coord)
    _need_layout("domain_offset", layout)
    return layout, layout(coord)


def _bw_coalesce(old_shape, old_stride, new_shape, new_stride):
    for s, d in zip(reversed(old_shape), reversed(old_stride)):
        if is_constant(1, s):
            continue
        if is_constant(1, new_shape):
            new_shape, new_stride = s, d
            continue
        front_s = new_shape[0] if is_tuple(new_shape) else new_shape
        front_d = new_stride[0] if is_tuple(new_stride) else new_stride
        prod = s * d
        if is_static(front_s) and is_static(prod) and is_static(front_d) and prod == front_d:
            new_shape = it.replace_front(new_shape, s * front_s)
            new_stride = it.replace_front(new_stride, d)
        else:
            new_shape = it.prepend(new_shape, s)
            new_stride = it.prepend(new_stride, d)
    if is_constant(1, new_shape):
        return Layout(1, 0)
    return Layout(new_shape, new_stride)


def coalesce_x(layout, profile=None):
    """CuTe ``detail::coalesce_x``: coalesce keeping the function also outside the domain."""
    if is_tuple(profile):
        return transform_layout(layout, profile, coalesce_x)
    fs = it.flatten_to_tuple(layout.shape)
    fd = it.flatten_to_tuple(layout.stride)
    if not fs:
        return Layout(1, 0)
    start = 2 if is_constant(1, fs[-1]) else fs[-1]
    return _bw_coalesce(fs[:-1], fd[:-1], start, fd[-1])


@_lift
def coalesce(layout, profile=None):
    """CuTe ``coalesce``: merge modes while keeping the function on ``[0, size)``.

    With a tuple ``profile``, coalesce each mode at the profile's leaves instead.
    Two modes merge only when CuTe can prove it statically.

    >>> str(coalesce(Layout((2, (1, 6)), (1, (6, 2)))))
    '_12:_1'
    >>> str(coalesce(Layout((2, DInt(6)), (1, 2)))), str(coalesce(Layout((2, 4, 3), (1, 2, 16)), (1, 1)))
    ('(_2,6):(_1,_2)', '(_2,_4,_3):(_1,_2,_16)')
    """
    if not isinstance(layout, Layout):
        return it.coalesce_shape(layout)
    if is_tuple(profile):
        if len(profile) > rank(layout):
            raise ValueError(f"coalesce: profile {cute_str(profile)} has more modes than {layout}")
        return transform_layout(layout, profile, coalesce)
    fs = it.flatten_to_tuple(layout.shape)
    fd = it.flatten_to_tuple(layout.stride)
    if not fs:
        return Layout(1, 0)
    return _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1])


@_lift
def filter_zeros(layout, profile=None):
    """CuTe ``filter_zeros``: modes with a static ``_0`` stride (or ``_0`` in ``profile``) get extent ``_1``.

    On IntTuples: ``filter_zeros(a, b)`` replaces the leaves of ``b`` paired with a static ``_0``.
    """
    if not isinstance(layout, Layout):
        return it.filter_zeros(layout, profile)
    ref = layout.stride if profile is None else profile
    return Layout(it.filter_zeros(ref, layout.shape), layout.stride)


@_lift
def filter(layout, profile=None):
    """CuTe ``filter``: drop static stride-0 and extent-1 modes, then coalesce.

    >>> str(filter(Layout((4, 2, 3), (0, 1, 2))))
    '_6:_1'
    """
    _need_layout("filter", layout)
    if is_tuple(profile):
        if len(profile) > rank(layout):
            raise ValueError(f"filter: profile {cute_str(profile)} has more modes than {layout}")
        return transform_layout(layout, profile, filter)
    return coalesce(filter_zeros(layout))


def transform_layout(layout, other, fn, keep_rest=True):
    """CuTe ``transform_layout(t0, t1, f)``: ``f`` on matching modes, then the rest of both.

    With ``keep_rest=False`` the extra modes of ``layout`` are dropped (as composition does).
    """
    r0, r1 = rank(layout), it.rank(other)
    n = min(r0, r1)
    modes = [fn(get(layout, i), it.wrap(other)[i]) for i in range(n)]
    if keep_rest:
        modes += [get(layout, i) for i in range(n, r0)]
    return make_layout(*modes)


def make_ordered_layout(shape_, order):
    """CuTe ``make_ordered_layout``: a compact layout whose strides follow ``order``.

    Dynamic values in ``order`` count as larger than every static one, left to right.

    >>> str(make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1)))
    '(_2,_2,_2,_2):(_1,_4,_8,_2)'
    >>> str(make_ordered_layout(make_dynamic((2, 3, 4, 5)), (2, DInt(67), DInt(42), 50)))
    '(2,3,4,5):(_1,10,30,2)'
    """
    shape_ = it.check_int_tuple("make_ordered_layout", shape_, "shape")
    if not (order is LayoutLeft or order is LayoutRight):
        order = it.check_int_tuple("make_ordered_layout", order, "order")
        if not it.weakly_congruent(order, shape_):
            raise ValueError(f"make_ordered_layout: order {cute_str(order)} does not fit shape {cute_str(shape_)}")
    return Layout(shape_, compact_order(shape_, order))


def make_layout_like(layout):
    """CuTe ``make_layout_like``: compact, strides ordered like ``layout``'s; static ``_0`` strides kept.

    >>> str(make_layout_like(Layout((2, 2, 2, 2), (0, 2, 4, 1))))
    '(_2,_2,_2,_2):(_0,_2,_4,_1)'
    """
    layout = _b(layout)
    _need_layout("make_layout_like", layout)
    return Layout(layout.shape, compact_order(it.filter_zeros(layout.stride, layout.shape), layout.stride))


def make_identity_layout(shape):
    """CuTe ``make_identity_layout``: ``make_layout(shape, make_basis_like(shape))``; coordinate -> itself."""
    return Layout(shape, make_basis_like(shape))
