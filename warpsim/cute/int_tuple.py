"""Integer tuples: CuTe's ``IntTuple`` algorithms on nested Python tuples.

An IntTuple is an integer (static ``int`` or dynamic :class:`~warpsim.cute.integers.DInt`) or a
tuple of IntTuples. These are ports of ``include/cute/int_tuple.hpp`` and
``include/cute/algorithm/tuple_algorithms.hpp``; every function keeps CuTe's static/dynamic
rules (see :mod:`warpsim.cute.integers`).

Examples::

    >>> product((2, (3, 4))), rank((2, (3, 4))), depth((2, (3, 4)))
    (24, 2, 2)
    >>> flatten((2, (3, 4))), unflatten((2, 3, 4), (0, (0, 0)))
    ((2, 3, 4), (2, (3, 4)))
    >>> shape_div((4, 5, 6), 40), ceil_div((4, 5, 6), 40)
    ((1, 1, 3), (1, 1, 3))
"""

from functools import reduce

from warpsim.cute.basis import ScaledBasis

from warpsim.cute.integers import (
    _, brief, ceil_div_int, cute_min, cute_str, is_constant, is_int, is_static, is_tuple,
)

__all__ = [
    "rank", "depth", "product", "product_each", "product_like", "inner_product", "tuple_min",
    "flatten", "flatten_to_tuple", "unflatten", "wrap", "unwrap", "take", "select", "append",
    "prepend", "group", "repeat", "repeat_like", "replace_front",
    "zip_tuples", "zip2_by", "congruent", "weakly_congruent", "compatible", "evenly_divides",
    "shape_div", "ceil_div", "elem_scale", "filter_zeros", "prefix_product", "has_underscore",
    "all_underscore", "slice_", "dice", "coalesce_shape", "check_int_tuple",
]


def check_int_tuple(op, t, name="operand"):
    """Raise ``TypeError`` unless ``t`` is an IntTuple; return it with numpy ints made plain."""
    if isinstance(t, tuple):
        return tuple(check_int_tuple(op, e, name) for e in t)
    if is_int(t) or isinstance(t, ScaledBasis):
        return t
    if hasattr(t, "__index__") and not isinstance(t, bool) and type(t).__module__ == "numpy":
        return int(t)
    raise TypeError(f"{op}: {name} must be an integer or a tuple of integers, got {brief(t)}")


def rank(t):
    """CuTe ``rank``: number of top-level modes (an integer has rank 1).

    >>> rank(5), rank(()), rank((1, (2, 3)))
    (1, 0, 2)
    """
    return len(t) if is_tuple(t) else 1


def depth(t):
    """CuTe ``depth``: nesting depth (an integer has depth 0).

    >>> depth(5), depth((1, 2)), depth(((1,), 2))
    (0, 1, 2)
    """
    if is_tuple(t):
        return 1 + max((depth(e) for e in t), default=0)
    return 0


def product(t):
    """CuTe ``product``: product of all integers, folded left (empty tuple gives static 1).

    >>> product(()), product((2, (3, 4))), str(product((2, DInt(3))))
    (1, 24, '6')
    """
    if is_tuple(t):
        if not t:
            return 1
        return reduce(lambda a, b: a * b, (product(e) for e in t))
    if is_int(t):
        return t
    raise TypeError(f"product: expected an IntTuple, got {t!r}")


def product_each(t):
    """CuTe ``product_each``: the product of each top-level mode, as a tuple.

    >>> product_each((2, (3, 4))), product_each(5)
    ((2, 12), (5,))
    """
    return tuple(product(e) for e in wrap(t))


def product_like(t, guide):
    """CuTe ``product_like``: the product of ``t`` at the leaves of ``guide``.

    >>> product_like((2, (3, 4)), (0, 0))
    (2, 12)
    """
    if is_tuple(guide):
        if not is_tuple(t) or len(t) != len(guide):
            raise ValueError(f"product_like: {cute_str(t)} does not fit the profile {cute_str(guide)}")
        return tuple(product_like(a, g) for a, g in zip(t, guide))
    return product(t)


def inner_product(a, b):
    """CuTe ``inner_product``: sum of the products of matching leaves (static ``_0`` start).

    >>> inner_product((2, (3, 4)), (1, (10, 100)))
    432
    """
    if is_tuple(a) and is_tuple(b):
        if len(a) != len(b):
            raise ValueError(f"inner_product: rank mismatch: {cute_str(a)} . {cute_str(b)}")
        total = 0
        for x, y in zip(a, b):
            total = total + inner_product(x, y)
        return total
    if is_tuple(a) or is_tuple(b):
        raise ValueError(f"inner_product: profile mismatch: {cute_str(a)} . {cute_str(b)}")
    return a * b


def tuple_min(t):
    """CuTe ``min`` of every integer of ``t`` (static iff all are static)."""
    flat = flatten_to_tuple(t)
    return reduce(cute_min, reversed(flat[:-1]), flat[-1]) if len(flat) > 1 else flat[0]


def flatten_to_tuple(t):
    """CuTe ``flatten_to_tuple``: depth-1 tuple of the leaves (an integer becomes ``(t,)``)."""
    if is_tuple(t):
        out = []
        for e in t:
            out.extend(flatten_to_tuple(e))
        return tuple(out)
    return (t,)


def flatten(t):
    """CuTe ``flatten``: depth-1 tuple of the leaves; an integer stays an integer.

    >>> flatten(((1, 2), (3, (4,)))), flatten(7)
    ((1, 2, 3, 4), 7)
    """
    return flatten_to_tuple(t) if is_tuple(t) else t


def unflatten(flat, profile):
    """CuTe ``unflatten``: fold the flat tuple ``flat`` into the nesting of ``profile``.

    Pre-condition: ``len(flat) == len(flatten_to_tuple(profile))``.
    """
    flat = tuple(flat) if is_tuple(flat) else (flat,)

    def build(rest, p):
        if is_tuple(p):
            out = []
            for q in p:
                sub, rest = build(rest, q)
                out.append(sub)
            return tuple(out), rest
        if not rest:
            raise ValueError(f"unflatten: too few elements in {cute_str(flat)} for {cute_str(profile)}")
        return rest[0], rest[1:]

    result, rest = build(flat, profile)
    if rest:
        raise ValueError(f"unflatten: too many elements in {cute_str(flat)} for {cute_str(profile)}")
    return result


def wrap(t):
    """CuTe ``wrap``: a tuple stays, anything else becomes ``(t,)``."""
    return t if is_tuple(t) else (t,)


def unwrap(t):
    """CuTe ``unwrap``: peel rank-1 tuples. ``unwrap(((4,),)) == 4``."""
    while is_tuple(t) and len(t) == 1:
        t = t[0]
    return t


def take(t, begin, end):
    """CuTe ``take<B,E>``: the modes in ``[begin, end)`` as a tuple (``end == -1``: to the end)."""
    t = wrap(t)
    if end == -1:
        end = len(t)
    if not 0 <= begin <= end <= len(t):
        raise ValueError(f"take: range [{begin},{end}) out of bounds for {cute_str(t)}")
    return t[begin:end]


def select(t, *modes):
    """CuTe ``select<I...>``: the listed modes as a tuple."""
    t = wrap(t)
    for i in modes:
        if not 0 <= i < len(t):
            raise ValueError(f"select: mode {i} out of range for {cute_str(t)}")
    return tuple(t[i] for i in modes)


def append(t, x, n=None):
    """CuTe ``append`` / ``append<N>``: add ``x`` at the end (``n``: pad with ``x`` to rank ``n``).

    >>> append((1, 2), 3), append(4, 5), append(4, 1, n=3), append((1, 2), 0, n=2)
    ((1, 2, 3), (4, 5), (4, 1, 1), (1, 2))
    """
    if n is None:
        return t + (x,) if is_tuple(t) else (t, x)
    r = rank(t)
    if n < r:
        raise ValueError(f"append: cannot extend {cute_str(t)} of rank {r} to rank {n}")
    if is_tuple(t):
        return t + (x,) * (n - r)
    return t if n == 1 else (t,) + (x,) * (n - 1)


def prepend(t, x, n=None):
    """CuTe ``prepend`` / ``prepend<N>``: add ``x`` at the front (``n``: pad to rank ``n``)."""
    if n is None:
        return (x,) + t if is_tuple(t) else (x, t)
    r = rank(t)
    if n < r:
        raise ValueError(f"prepend: cannot extend {cute_str(t)} of rank {r} to rank {n}")
    if is_tuple(t):
        return (x,) * (n - r) + t
    return t if n == 1 else (x,) * (n - 1) + (t,)


def group(t, begin, end):
    """CuTe ``group<B,E>``: gather the modes ``[begin, end)`` into one mode (``end == -1``: to the end).

    >>> group((1, 2, 3, 4), 1, 3), group((1, 2), 1, 1)
    ((1, (2, 3), 4), (1, 2))
    """
    t = wrap(t)
    if end == -1:
        end = len(t)
    if not 0 <= begin <= end <= len(t):
        raise ValueError(f"group: range [{begin},{end}) out of bounds for {cute_str(t)}")
    middle = (t[begin:end],) if begin < end else ()
    return t[:begin] + middle + t[end:]


def repeat(x, n):
    """CuTe ``repeat<N>``: ``x`` for ``n == 1``, else a tuple of ``n`` copies."""
    return x if n == 1 else (x,) * n


def repeat_like(t, x):
    """CuTe ``repeat_like``: ``x`` at every leaf of ``t``."""
    if is_tuple(t):
        return tuple(repeat_like(e, x) for e in t)
    return x


def replace_front(t, x):
    """CuTe ``replace_front``."""
    return (x,) + t[1:] if is_tuple(t) else x


def zip_tuples(*ts):
    """CuTe ``zip``: ``((a,b,c),(x,y,z)) -> ((a,x),(b,y),(c,z))``; a non-tuple head is wrapped.

    >>> zip_tuples((1, 2), (3, 4)), zip_tuples(1, 2)
    (((1, 3), (2, 4)), ((1, 2),))
    """
    if len(ts) == 1:
        t = ts[0]
        if not is_tuple(t):
            return t
        if not t:
            return ()
        ts = t
    if not is_tuple(ts[0]):
        return (tuple(ts),)
    n = len(ts[0])
    for t in ts:
        if not is_tuple(t) or len(t) != n:
            raise ValueError(f"zip: rank mismatch: {', '.join(cute_str(u) for u in ts)}")
    return tuple(tuple(t[j] for t in ts) for j in range(n))


def zip2_by(t, guide):
    """CuTe ``zip2_by``: ``((A,a),((B,b),(C,c)),d)`` by ``(X,(X,X))`` -> ``((A,(B,C)),(a,(b,c),d))``.

    The leaves of ``guide`` (anything that is not a tuple) mark rank-2 modes of ``t``.
    """
    if is_tuple(guide):
        if not is_tuple(t) or len(t) < len(guide):
            raise ValueError(f"zip2_by: {cute_str(t)} has fewer modes than the guide")
        split = [zip2_by(t[i], guide[i]) for i in range(len(guide))]
        return (tuple(s[0] for s in split), tuple(s[1] for s in split) + t[len(guide):])
    if not is_tuple(t) or len(t) != 2:
        raise ValueError(f"zip2_by: expected a rank-2 mode, got {cute_str(t)}")
    return t


def congruent(a, b):
    """CuTe ``congruent``: ``a`` and ``b`` have the same nesting profile."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def weakly_congruent(a, b):
    """CuTe ``weakly_congruent``: the profile of ``a`` is a coarsening of ``b``'s.

    >>> weakly_congruent((0, 0), (4, (2, 3))), weakly_congruent((0, (0, 0)), (4, 6))
    (True, False)
    """
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))
    if not is_tuple(a):
        return True
    return False


def compatible(a, b):
    """CuTe ``compatible``: sizes agree at every leaf of ``a`` (coordinates of ``a`` index ``b``).

    >>> compatible(24, (4, 6)), compatible((4, 6), (4, (2, 3))), compatible((4, 6), 24)
    (True, True, False)
    """
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    if not is_tuple(a):
        return int(a) == int(product(b))
    return False


def evenly_divides(shape, tiler):
    """CuTe ``evenly_divides``: the integer tiler divides the shape mode by mode."""
    if is_tuple(tiler):
        if rank(tiler) > rank(shape):
            return False
        return all(evenly_divides(s, t) for t, s in zip(tiler, wrap(shape)))
    return int(product(shape)) == int(product(tiler)) * int(product(ceil_div(shape, tiler)))


def shape_div(a, b):
    """CuTe ``shape_div``: divide a shape by an integer or shape (ceil, weak divisibility).

    Raises ``ValueError`` when both integers are static and neither divides the other
    (CuTe's static divisibility condition).
    """
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise ValueError(f"shape_div: rank mismatch: {cute_str(a)} / {cute_str(b)}")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out, rest = [], b
        for x in a:
            out.append(shape_div(x, rest))
            rest = shape_div(rest, x)
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if is_static(a) and is_static(b) and a % b != 0 and b % a != 0:
        raise ValueError(f"shape_div: divisibility condition fails: {cute_str(a)} / {cute_str(b)}")
    return ceil_div_int(a, b)


def ceil_div(a, b):
    """CuTe ``ceil_div`` on IntTuples (a tuple ``b`` may be shorter: missing modes are ``_1``)."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) < len(b):
                raise ValueError(f"ceil_div: rank mismatch: {cute_str(a)} / {cute_str(b)}")
            b = append(b, 1, n=len(a))
            return tuple(ceil_div(x, y) for x, y in zip(a, b))
        out, rest = [], b
        for x in a:
            out.append(ceil_div(x, rest))
            rest = ceil_div(rest, x)
        return tuple(out)
    if is_tuple(b):
        return ceil_div(a, product(b))
    return ceil_div_int(a, b)


def elem_scale(a, b):
    """CuTe ``elem_scale``: ``a`` scaled by the products of the matching modes of ``b``.

    >>> elem_scale((2, 3), (4, (2, 5)))
    (8, 30)
    """
    if is_tuple(a):
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def filter_zeros(a, b=None):
    """CuTe ``filter_zeros``: the leaves of ``b`` paired with a static ``_0`` of ``a`` become ``_1``.

    >>> filter_zeros((0, DInt(0), 3), (4, 5, 6))
    (1, 5, 6)
    """
    if b is None:
        b = a
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise ValueError(f"filter_zeros: profile mismatch: {cute_str(a)} vs {cute_str(b)}")
        return tuple(filter_zeros(x, y) for x, y in zip(a, b))
    if is_constant(0, a):
        return repeat_like(b, 1)
    return b


def prefix_product(a, init=1):
    """Exclusive prefix product, hierarchically (pycute's ``prefix_product``).

    >>> prefix_product((2, (3, 4)))
    (1, (2, 6))
    """
    if is_tuple(a):
        out, cur = [], init
        for e in a:
            out.append(prefix_product(e, cur))
            cur = cur * product(e)
        return tuple(out)
    return init


def has_underscore(t):
    """True if ``_`` appears anywhere in ``t``."""
    if t is _:
        return True
    return is_tuple(t) and any(has_underscore(e) for e in t)


def all_underscore(t):
    """True if every leaf of ``t`` is ``_`` (CuTe ``all_underscore``)."""
    if t is _:
        return True
    return is_tuple(t) and all(all_underscore(e) for e in t)


def _lift(keep_underscore, a, b):
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise ValueError(f"slice: rank mismatch: coordinate {cute_str(a)} for {cute_str(b)}")
        out = ()
        for x, y in zip(a, b):
            out += _lift(keep_underscore, x, y)
        return out
    if (a is _) == keep_underscore:
        return (b,)
    return ()


def slice_(coord, t):
    """CuTe ``slice``: keep the parts of ``t`` paired with ``_`` in ``coord`` (flattening as CuTe does).

    >>> slice_((_, 2), (4, 8)), slice_(((_, 1), _), ((2, 3), 4)), slice_(_, (4, 8))
    ((4,), (2, 4), (4, 8))
    """
    if is_tuple(coord):
        return _lift(True, coord, t)
    return t if coord is _ else ()


def dice(coord, t):
    """CuTe ``dice``: keep the parts of ``t`` paired with an integer in ``coord``."""
    if is_tuple(coord):
        return _lift(False, coord, t)
    return () if coord is _ else t


def coalesce_shape(shape):
    """CuTe ``coalesce(Shape)``: flatten and multiply neighbouring static (or dynamic) runs.

    >>> cute_str(coalesce_shape((2, (3, DInt(4)), DInt(5), 6)))
    '(_6,20,_6)'
    """
    flat = flatten_to_tuple(shape)
    out = [flat[0]]
    for a in flat[1:]:
        if is_static(out[-1]) == is_static(a):
            out[-1] = out[-1] * a
        else:
            out.append(a)
    return out[0] if len(out) == 1 else tuple(out)

