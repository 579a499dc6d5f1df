"""Static and dynamic integers, as CuTe C++ tells them apart.

CuTe distinguishes a compile-time integer ``Int<N>`` (printed ``_N``) from a run-time
integer ``int`` (printed ``N``); which one an operation yields is part of the result, and it
decides register storage order later (``make_fragment_like`` orders static strides before
dynamic ones). warpsim mirrors this with plain Python values:

* a plain ``int`` is STATIC, CuTe's ``Int<N>`` (``include/cute/numeric/integral_constant.hpp``);
* a :class:`DInt` (an ``int`` subclass) is DYNAMIC, CuTe's run-time ``int``.

Arithmetic that touches a :class:`DInt` yields a :class:`DInt`, with CuTe's exceptions for a
static zero or one (``_0 * d == _0``, ``_0 / d == _0``, ``d % _1 == _0``, ``_0 % d == _0``,
``_0 & d == _0``). Python tries the right operand's reflected method first when it is a
subclass of the left operand's type, so ``3 + DInt(4)`` is dynamic too.

Division and remainder inside the layout algebra use :func:`div` and :func:`mod`, which
truncate toward zero as C++ does (Python's ``//`` floors).

Examples::

    >>> cute_str((4, DInt(3), (2, -1)))
    '(_4,3,(_2,_-1))'
    >>> is_static(0 * DInt(7)), is_static(1 * DInt(7))
    (True, False)
    >>> div(-7, 2) == -3 and mod(-7, 2) == -1
    True
"""

from numbers import Integral

__all__ = [
    "DInt", "Underscore", "_", "is_static", "make_dynamic", "is_int", "is_tuple",
    "is_constant", "div", "mod", "ceil_div_int", "cute_min",
    "cute_max", "cute_gcd", "cute_abs", "signum", "shiftl", "shiftr", "cute_str", "brief",
]


def _bin(fn):
    """Build a DInt binary method: the result is dynamic unless a rule below says otherwise."""
    def method(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return DInt(fn(int(self), int(other)))
        return NotImplemented
    return method


class DInt(int):
    """A dynamic (run-time) integer: CuTe's ``int``, printed without ``_``.

    Post-conditions: any arithmetic with a DInt operand is a DInt, except CuTe's static
    shortcuts for a static ``0`` or ``1`` operand.

    >>> str(DInt(4) * 2), repr(DInt(4) * 2), str(0 * DInt(4))
    ('8', 'DInt(8)', '0')
    >>> is_static(DInt(4) % 1), is_static(DInt(4) & 0), is_static(DInt(4) + 0)
    (True, True, False)
    """

    __slots__ = ()

    def __new__(cls, value=0):
        if isinstance(value, bool) or not (isinstance(value, Integral) or hasattr(value, "__index__")):
            raise TypeError(f"DInt: expected an integer, got {value!r}")
        return super().__new__(cls, value.__index__())

    def __repr__(self):
        return f"DInt({int(self)})"

    def __str__(self):
        return str(int(self))

    __add__ = _bin(lambda a, b: a + b)
    __radd__ = _bin(lambda a, b: b + a)
    __sub__ = _bin(lambda a, b: a - b)
    __rsub__ = _bin(lambda a, b: b - a)
    __or__ = _bin(lambda a, b: a | b)
    __ror__ = _bin(lambda a, b: b | a)
    __xor__ = _bin(lambda a, b: a ^ b)
    __rxor__ = _bin(lambda a, b: b ^ a)
    __lshift__ = _bin(lambda a, b: a << b)
    __rlshift__ = _bin(lambda a, b: b << a)
    __rshift__ = _bin(lambda a, b: a >> b)
    __rrshift__ = _bin(lambda a, b: b >> a)

    def __mul__(self, other):
        if is_constant(0, other):          # C<0> * U -> C<0>
            return 0
        return _bin(lambda a, b: a * b)(self, other)

    __rmul__ = __mul__

    def __and__(self, other):
        if is_constant(0, other):          # C<0> & U -> C<0>
            return 0
        return _bin(lambda a, b: a & b)(self, other)

    __rand__ = __and__

    def __floordiv__(self, other):
        return _bin(lambda a, b: a // b)(self, other)

    def __rfloordiv__(self, other):
        if is_constant(0, other):          # C<0> / U -> C<0>
            return 0
        return _bin(lambda a, b: b // a)(self, other)

    def __mod__(self, other):
        if is_constant(1, other) or is_constant(-1, other):   # U % C<1> -> C<0>
            return 0
        return _bin(lambda a, b: a % b)(self, other)

    def __rmod__(self, other):
        if is_constant(0, other):          # C<0> % U -> C<0>
            return 0
        return _bin(lambda a, b: b % a)(self, other)

    def __neg__(self):
        return DInt(-int(self))

    def __pos__(self):
        return self

    def __abs__(self):
        return DInt(abs(int(self)))

    def __invert__(self):
        return DInt(~int(self))


class Underscore:
    """CuTe's ``_`` (``include/cute/underscore.hpp``): keeps a mode when slicing.

    In index arithmetic it counts as a static zero, as in CuTe (``Underscore : Int<0>``).

    >>> str(_), repr(_)
    ('_', '_')
    """

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "_"

    __str__ = __repr__

    def __reduce__(self):
        return (Underscore, ())


_ = Underscore()


def is_int(x):
    """True for a static or dynamic integer (not ``bool``, not ``_``).

    >>> is_int(3), is_int(DInt(3)), is_int(True), is_int((3,))
    (True, True, False, False)
    """
    return isinstance(x, int) and not isinstance(x, bool)


def is_tuple(x):
    """True for an integer tuple node (a Python ``tuple``)."""
    return isinstance(x, tuple)


def is_static(x):
    """True when every integer in ``x`` is static (CuTe ``is_static``).

    Accepts integers, tuples, ``_`` and objects with an ``is_static()`` method (layouts).

    >>> is_static((4, (2, 3))), is_static((4, DInt(2))), is_static(_)
    (True, False, True)
    """
    if isinstance(x, DInt):
        return False
    if is_int(x) or x is _:
        return True
    if isinstance(x, tuple):
        return all(is_static(e) for e in x)
    method = getattr(x, "is_static", None)
    if method is not None:
        return method()
    return False


def make_dynamic(x):
    """Turn every integer of ``x`` into a :class:`DInt` (CuTe: use ``int`` instead of ``Int<N>``).

    >>> cute_str(make_dynamic((4, (2, 3))))
    '(4,(2,3))'
    """
    if isinstance(x, tuple):
        return tuple(make_dynamic(e) for e in x)
    if is_int(x):
        return DInt(x)
    raise TypeError(f"make_dynamic: expected an integer or a tuple of integers, got {x!r}")


def is_constant(value, x):
    """CuTe ``is_constant<value, X>``: ``x`` is a STATIC integer equal to ``value``.

    >>> is_constant(1, 1), is_constant(1, DInt(1)), is_constant(0, _)
    (True, False, False)
    """
    return type(x) is int and x == value


def _static_if(value, static):
    return int(value) if static else DInt(value)


def _zero(x):
    """``_`` enters arithmetic as CuTe's static zero."""
    return 0 if x is _ else x


def div(a, b):
    """C++ integer division ``a / b`` (truncates toward zero) with CuTe's static rules.

    Static iff both operands are static, or ``a`` is a static zero.

    >>> div(7, 2), div(-7, 2), cute_str(div(DInt(7), 2)), cute_str(div(0, DInt(5)))
    (3, -3, '3', '_0')
    """
    a, b = _zero(a), _zero(b)
    if int(b) == 0:
        raise ZeroDivisionError(f"div: division by zero: {cute_str(a)} / {cute_str(b)}")
    q = abs(int(a)) // abs(int(b))
    if (int(a) < 0) != (int(b) < 0):
        q = -q
    return _static_if(q, (is_static(a) and is_static(b)) or is_constant(0, a))


def mod(a, b):
    """C++ remainder ``a % b`` (sign of ``a``) with CuTe's static rules.

    Static iff both operands are static, ``a`` is a static zero, or ``b`` is a static ``±1``.

    >>> mod(7, 3), mod(-7, 3), cute_str(mod(DInt(7), 1))
    (1, -1, '_0')
    """
    a, b = _zero(a), _zero(b)
    if int(b) == 0:
        raise ZeroDivisionError(f"mod: division by zero: {cute_str(a)} % {cute_str(b)}")
    r = abs(int(a)) % abs(int(b))
    if int(a) < 0:
        r = -r
    static = (is_static(a) and is_static(b)) or is_constant(0, a) or is_constant(1, b) or is_constant(-1, b)
    return _static_if(r, static)


def ceil_div_int(a, b):
    """CuTe ``ceil_div`` for two integers: ``(a + b - _1) / b``.

    >>> ceil_div_int(7, 2), str(ceil_div_int(DInt(8), 2))
    (4, '4')
    """
    return div(_zero(a) + _zero(b) - 1, b)


def cute_min(a, b):
    """CuTe ``min`` of two integers: static iff both are static.

    >>> cute_min(3, 5), str(cute_min(DInt(9), 5))
    (3, '5')
    """
    value = min(int(a), int(b))
    return _static_if(value, is_static(a) and is_static(b))


def cute_max(a, b):
    """CuTe ``max`` of two integers: static iff both are static."""
    value = max(int(a), int(b))
    return _static_if(value, is_static(a) and is_static(b))


def cute_gcd(a, b):
    """CuTe ``gcd`` of two integers (non-negative result): static iff both are static.

    >>> cute_gcd(12, 18), str(cute_gcd(DInt(12), 18))
    (6, '6')
    """
    x, y = abs(int(a)), abs(int(b))
    while y:
        x, y = y, x % y
    return _static_if(x, is_static(a) and is_static(b))


def cute_abs(a):
    """CuTe ``abs``: keeps static-ness."""
    return abs(_zero(a))


def signum(a):
    """CuTe ``signum``: -1, 0 or 1, keeping static-ness.

    >>> signum(-4), str(signum(DInt(3)))
    (-1, '1')
    """
    a = _zero(a)
    value = (int(a) > 0) - (int(a) < 0)
    return _static_if(value, is_static(a))


def shiftl(a, s):
    """CuTe ``shiftl``: ``a << s`` for ``s >= 0``, else ``a >> -s``.

    >>> shiftl(3, 2), shiftl(12, -2), shiftr(12, 2), shiftr(3, -2)
    (12, 3, 3, 12)
    """
    return a << s if int(s) >= 0 else a >> -s


def shiftr(a, s):
    """CuTe ``shiftr``: ``a >> s`` for ``s >= 0``, else ``a << -s``."""
    return a >> s if int(s) >= 0 else a << -s


def cute_str(x):
    """The text CuTe C++ ``print()`` writes for ``x``.

    Static integers print as ``_N``, dynamic ones as ``N``, tuples as ``(a,b)`` with no
    spaces; layouts, swizzles and other objects print through their ``str()``.

    >>> cute_str(((8, DInt(8)), ())), cute_str(-2)
    ('((_8,8),())', '_-2')
    """
    if isinstance(x, DInt):
        return str(int(x))
    if is_int(x):
        return f"_{int(x)}"
    if isinstance(x, tuple):
        return "(" + ",".join(cute_str(e) for e in x) + ")"
    return str(x)


def brief(x, limit=8):
    """``repr(x)`` for an error message, each array in it (a lane vector) cut to ``limit`` values.

    A message names a lane's value, never a whole warp's: ``brief`` keeps it one short line.

    >>> import numpy as np
    >>> brief((np.arange(32), 3))
    '([0, 1, 2, 3, 4, 5, 6, 7, ... 32 values], 3)'
    >>> brief(np.array([5, 9])), brief("x")
    ('[5, 9]', "'x'")
    """
    if isinstance(x, tuple):
        return "(" + ", ".join(brief(e, limit) for e in x) + ("," if len(x) == 1 else "") + ")"
    if hasattr(x, "ravel") and hasattr(x, "tolist") and getattr(x, "ndim", 0) > 0:
        flat = x.ravel().tolist()
        head = ", ".join(str(v) for v in flat[:limit])
        return f"[{head}]" if len(flat) <= limit else f"[{head}, ... {len(flat)} values]"
    return repr(x)
