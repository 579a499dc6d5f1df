"""Scaled bases and arithmetic tuples: the strides and values of identity (coordinate) layouts.

Ports of ``include/cute/numeric/arithmetic_tuple.hpp``. ``E<0>`` is the unit vector of mode 0 of a
coordinate; a layout whose strides are scaled bases maps an index to a coordinate instead of an
offset (:func:`~warpsim.cute.layout.make_identity_layout`), which is how CuTe learns which (row,
column) an element of a partition holds: ``thr_mma.partition_B(make_identity_tensor(shape))``.

* :class:`ScaledBasis` ``value @ modes`` (CuTe ``ScaledBasis<T, Ns...>``): scales like an integer,
  and ``E<0> + E<1>`` is the :class:`ArithmeticTuple` ``(_1,_1)``. ``E<1,0>`` (mode 0 of mode 1)
  prints ``_1@0@1``: CuTe prints the mode indices innermost first.
* :class:`ArithmeticTuple`: a coordinate that adds element by element (missing elements are ``_0``).

Examples::

    >>> e0, e1 = E(0), E(1)
    >>> str(e0), str(3 * e1), str(e0 + 4 * e1), str(E(1, 0))
    ('_1@0', '_3@1', '(_1,_4)', '_1@0@1')
    >>> str(make_identity_layout((4, (2, 3))))
    '(_4,(_2,_3)):(_1@0,(_1@0@1,_1@1@1))'
    >>> str(make_identity_layout((64, 64))(5, 7))
    '(_5,_7)'
"""

from warpsim.cute.integers import cute_str, is_int, is_static, is_tuple

__all__ = [
    "ScaledBasis", "E", "ArithmeticTuple", "make_basis_like",
    "as_arithmetic_tuple", "is_scaled_basis", "basis_get", "basis_value", "coord_values",
]


def is_scaled_basis(x):
    """True for a :class:`ScaledBasis`."""
    return isinstance(x, ScaledBasis)


class ScaledBasis:
    """CuTe ``ScaledBasis<T, Ns...>``: ``value`` times the unit vector of mode ``modes``.

    ``modes`` is a tuple of mode indices, outermost first (``E(1, 0)`` is mode 0 of mode 1).
    Multiplying by an integer scales the value (keeping CuTe's static rules); adding bases
    gives an :class:`ArithmeticTuple`; a static ``_0`` added to a basis leaves it.

    >>> b = ScaledBasis(DInt(2), (1,))
    >>> str(b), b.is_static(), str(b * 4), b == ScaledBasis(2, (1,)), b == 2
    ('2@1', False, '8@1', True, False)
    """

    __slots__ = ("value", "modes")

    def __init__(self, value, modes):
        if not is_int(value):
            raise TypeError(f"ScaledBasis: value must be an integer, got {value!r}")
        modes = tuple(modes)
        if not all(isinstance(m, int) and not isinstance(m, bool) and m >= 0 for m in modes):
            raise TypeError(f"ScaledBasis: modes must be non-negative ints, got {modes!r}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "modes", modes)

    def __setattr__(self, name, value):
        raise AttributeError(f"ScaledBasis is immutable: cannot set {name}")

    def is_static(self):
        return is_static(self.value)

    def __str__(self):
        return cute_str(self.value) + "".join(f"@{m}" for m in reversed(self.modes))

    __repr__ = __str__

    def __eq__(self, other):
        # CuTe: equal only to a basis of the same modes with an equal value (never to an integer).
        return (isinstance(other, ScaledBasis) and self.modes == other.modes
                and int(self.value) == int(other.value))

    def __hash__(self):
        return hash(("ScaledBasis", is_static(self.value), int(self.value), self.modes))

    def __mul__(self, other):
        if is_int(other):
            return ScaledBasis(self.value * other, self.modes)
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return ScaledBasis(-self.value, self.modes)

    def __add__(self, other):
        if isinstance(other, (ScaledBasis, ArithmeticTuple)):
            return as_arithmetic_tuple(self) + other
        if is_int(other):
            return _add_int(self, other)
        return NotImplemented

    def __radd__(self, other):
        if is_int(other):
            return _add_int(self, other)
        return NotImplemented


def _add_int(basis, n):
    if not basis.modes:
        return basis.value + n
    if int(n) != 0:
        raise ValueError(f"ScaledBasis: cannot add the integer {cute_str(n)} to {basis}")
    return basis


def E(*modes):
    """CuTe ``E<Ns...>``: the unit basis ``_1@...`` of the given mode path.

    >>> str(E()), str(E(0)), str(E(2, 1))
    ('_1', '_1@0', '_1@1@2')
    """
    return ScaledBasis(1, modes)


class ArithmeticTuple:
    """CuTe ``ArithmeticTuple``: a coordinate that adds element by element.

    Elements are integers or nested ArithmeticTuples; a shorter tuple is padded with static
    ``_0``. Adding a static ``_0`` (CuTe ``C<0>``) leaves the tuple.

    >>> a = ArithmeticTuple((1, DInt(2)))
    >>> str(a), str(a + ArithmeticTuple((3,))), coord_values(a + 0)
    ('(_1,2)', '(_4,2)', (1, 2))
    """

    __slots__ = ("values",)

    def __init__(self, values):
        object.__setattr__(self, "values", tuple(values))

    def __setattr__(self, name, value):
        raise AttributeError(f"ArithmeticTuple is immutable: cannot set {name}")

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]

    def __str__(self):
        return "(" + ",".join(cute_str(v) for v in self.values) + ")"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, ArithmeticTuple) and _plain(self) == _plain(other)

    def __hash__(self):
        return hash(("ArithmeticTuple", _plain(self)))

    def is_static(self):
        return all(is_static(v) for v in self.values)

    def __add__(self, other):
        if isinstance(other, ScaledBasis):
            other = as_arithmetic_tuple(other)
        if isinstance(other, ArithmeticTuple):
            n = max(len(self), len(other))
            a = self.values + (0,) * (n - len(self))
            b = other.values + (0,) * (n - len(other))
            return ArithmeticTuple(x + y for x, y in zip(a, b))
        if is_int(other):
            if int(other) != 0:
                raise ValueError(f"ArithmeticTuple: cannot add the integer {cute_str(other)} to {self}")
            return self
        return NotImplemented

    __radd__ = __add__

    def __neg__(self):
        return ArithmeticTuple(-v for v in self.values)


def _plain(t):
    if isinstance(t, ArithmeticTuple):
        return tuple(_plain(v) for v in t.values)
    return int(t)


def as_arithmetic_tuple(x):
    """CuTe ``as_arithmetic_tuple``: a tuple or basis as an ArithmeticTuple (an integer stays).

    >>> str(as_arithmetic_tuple(E(1, 0))), str(as_arithmetic_tuple((0, (0, 0))))
    ('(_0,(_1))', '(_0,(_0,_0))')
    """
    if isinstance(x, ScaledBasis):
        if not x.modes:
            return x.value
        inner = as_arithmetic_tuple(ScaledBasis(x.value, x.modes[1:]))
        return ArithmeticTuple((0,) * x.modes[0] + (inner,))
    if is_tuple(x):
        return ArithmeticTuple(as_arithmetic_tuple(e) for e in x)
    return x


def basis_get(basis, t):
    """CuTe ``basis_get``: the element of ``t`` a basis points at (``t`` itself for an integer)."""
    if not isinstance(basis, ScaledBasis):
        return t
    for m in basis.modes:
        t = t[m]
    return t


def basis_value(x):
    """CuTe ``basis_value``: the scale of a basis, or the integer itself."""
    return x.value if isinstance(x, ScaledBasis) else x


def make_basis_like(shape, _prefix=()):
    """CuTe ``make_basis_like``: the unit basis of every leaf's mode path.

    >>> make_basis_like((4, (2, 3)))
    (_1@0, (_1@0@1, _1@1@1))
    """
    if is_tuple(shape):
        return tuple(make_basis_like(s, _prefix + (i,)) for i, s in enumerate(shape))
    return ScaledBasis(1, _prefix)


def coord_values(x):
    """A coordinate value (ArithmeticTuple, basis or integer) as nested plain Python ints.

    >>> coord_values(ArithmeticTuple((DInt(3), ArithmeticTuple((1, 2)))))
    (3, (1, 2))
    """
    if isinstance(x, ScaledBasis):
        x = as_arithmetic_tuple(x)
    if isinstance(x, ArithmeticTuple):
        return tuple(coord_values(v) for v in x.values)
    return int(x)
