"""``Swizzle<B,M,S>`` and ``MixedBits``: ports of ``include/cute/swizzle.hpp``.

A swizzle XORs the ``B`` bits at ``[M+S, M+S+B)`` of an offset into the ``B`` bits at
``[M, M+B)`` (for ``S > 0``; a negative ``S`` shifts the other way)::

    0bxxxxxxxxxxxxxxxYYYxxxxxxxZZZxxxx      ZZZ ^= YYY

``MixedBits`` is CuTe's 32-bit integer with some bits known statically and some only at run
time; slicing a swizzled layout tracks its offset with it, which decides which strides of the
sliced layout are static and which are dynamic.

Examples::

    >>> sw = Swizzle(3, 3, 3)
    >>> str(sw), sw(0b1000000), sw(8 * 64 + 8), str(sw(DInt(64)))
    ('Sw<3,3,3>', 72, 520, '72')
    >>> str(make_swizzle(0b1000, 0b0100)), str(make_swizzle(0b11000000, 0b00000110))
    ('Sw<1,2,1>', 'Sw<2,1,5>')
    >>> m = make_mixed_bits(0, DInt(5), 0b110)
    >>> str(m), str(m & 0b010), str(m ^ 0b001)
    ('M_0|(4&6)=4', 'M_0|(0&2)=0', 'M_1|(4&6)=5')
"""

import numpy as np

from warpsim.cute.integers import DInt, cute_str, is_constant, is_int, is_static, is_tuple, shiftr
from warpsim.cute.int_tuple import check_int_tuple

__all__ = ["Swizzle", "make_swizzle", "MixedBits", "make_mixed_bits", "to_mixed_bits"]

_U32 = 0xFFFFFFFF


class Swizzle:
    """CuTe ``Swizzle<BBits, MBase, SShift>``: callable on offsets, static by nature.

    Pre-conditions: ``B >= 0``, ``M >= 0``, ``|S| >= B``. Calling it on an int, a ``DInt``,
    a ``MixedBits`` or an int64 numpy array applies ``offset ^ shiftr(offset & yyy_msk, S)``.

    >>> sw = Swizzle(2, 0, -2)
    >>> sw.yyy_msk, sw.zzz_msk, sw(0b0011), sw(np.arange(4)).tolist()
    (3, 12, 15, [0, 5, 10, 15])
    """

    __slots__ = ("num_bits", "num_base", "num_shft")

    def __init__(self, b, m, s=None):
        s = b if s is None else s
        for name, v in (("B", b), ("M", m), ("S", s)):
            if not is_int(v) or not is_static(v):
                raise TypeError(f"Swizzle: {name} must be a static int, got {v!r}")
        if b < 0 or m < 0:
            raise ValueError(f"Swizzle: B and M must be non-negative: Swizzle({b},{m},{s})")
        if abs(s) < b:
            raise ValueError(f"Swizzle: |S| must be at least B: Swizzle({b},{m},{s})")
        self.num_bits, self.num_base, self.num_shft = int(b), int(m), int(s)

    @property
    def bit_msk(self):
        return (1 << self.num_bits) - 1

    @property
    def yyy_msk(self):
        """The source bits (``YYY``), static."""
        return self.bit_msk << (self.num_base + max(0, self.num_shft))

    @property
    def zzz_msk(self):
        """The target bits (``ZZZ``), static."""
        return self.bit_msk << (self.num_base - min(0, self.num_shft))

    @property
    def msk_sft(self):
        return self.num_shft

    @property
    def swizzle_code(self):
        """``yyy_msk | zzz_msk`` as a 32-bit code."""
        return (self.yyy_msk | self.zzz_msk) & _U32

    def is_static(self):
        return True

    def __call__(self, offset):
        if isinstance(offset, np.ndarray):
            off = offset.astype(np.int64)
            y = off & np.int64(self.yyy_msk)
            y = y >> self.num_shft if self.num_shft >= 0 else y << -self.num_shft
            return off ^ y
        if offset is None or isinstance(offset, bool) or not (is_int(offset) or isinstance(offset, MixedBits)):
            raise TypeError(f"{self}: expected an integer offset, got {offset!r}")
        return offset ^ shiftr(offset & self.yyy_msk, self.msk_sft)

    def __str__(self):
        return f"Sw<{self.num_bits},{self.num_base},{self.num_shft}>"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Swizzle) and self._key() == other._key()

    def __hash__(self):
        return hash(("Swizzle",) + self._key())

    def _key(self):
        return (self.num_bits, self.num_base, self.num_shft)


def _popcount(x):
    return bin(x & _U32).count("1")


def _countr_zero(x):
    x &= _U32
    return 32 if x == 0 else (x & -x).bit_length() - 1


def make_swizzle(y, z):
    """CuTe ``make_swizzle<Y, Z>()``: the swizzle that XORs the bits of mask ``y`` into mask ``z``.

    Raises ``ValueError`` when the masks cannot be expressed as one ``Swizzle<B,M,S>``.
    """
    y, z = int(y) & _U32, int(z) & _U32
    bz, by = _popcount(y), _popcount(z)
    if bz != by:
        raise ValueError(f"make_swizzle: number of bits in Y={y:#x} and Z={z:#x} do not match")
    tz_y, tz_z = _countr_zero(y), _countr_zero(z)
    m = min(tz_y, tz_z) % 32
    s = tz_y - tz_z
    if abs(s) < bz:
        raise ValueError(f"make_swizzle: Y={y:#x} and Z={z:#x} overlap")
    sw = Swizzle(bz, m, s)
    if (y | z) != sw.swizzle_code:
        raise ValueError(f"make_swizzle: Y={y:#x} and Z={z:#x} are not contiguous masks of one swizzle")
    return sw


class MixedBits:
    """CuTe ``MixedBits<StaticInt, StaticFlags>``: value ``StaticInt | (dynamic_int & StaticFlags)``.

    Bits set in ``static_flags`` are known only at run time; the others are static. Bitwise
    operations with static ints and other MixedBits keep this split; anything else (adding,
    mixing with a ``DInt``) turns it into a dynamic 32-bit integer, as CuTe's conversion does.
    """

    __slots__ = ("static_int", "static_flags", "dynamic_int")

    def __init__(self, static_int, static_flags, dynamic_int):
        if static_flags == 0:
            raise ValueError("MixedBits: needs at least one dynamic bit")
        if static_int & static_flags:
            raise ValueError("MixedBits: static and dynamic bits overlap")
        self.static_int = int(static_int) & _U32
        self.static_flags = int(static_flags) & _U32
        self.dynamic_int = int(dynamic_int) & _U32

    def __index__(self):
        return self.static_int | self.dynamic_int

    __int__ = __index__

    def is_static(self):
        return False

    def __str__(self):
        return f"M_{self.static_int}|({self.dynamic_int}&{self.static_flags})={int(self)}"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, MixedBits) and self._key() == other._key()

    def __hash__(self):
        return hash(("MixedBits",) + self._key())

    def _key(self):
        return (self.static_int, self.static_flags, self.dynamic_int)

    @property
    def _d(self):
        return DInt(self.dynamic_int)

    # -- bitwise operations (CuTe truth tables, include/cute/swizzle.hpp) ----------------
    def __and__(self, other):
        s0, f0, d0 = self.static_int, self.static_flags, self._d
        if isinstance(other, MixedBits):
            s1, f1, d1 = other.static_int, other.static_flags, other._d
            return make_mixed_bits(s0 & s1, ((s1 & f0) & d0) | ((s0 & f1) & d1) | (d0 & d1),
                                   (s1 & f0) | (s0 & f1) | (f0 & f1))
        if _is_static_int(other):
            c = int(other) & _U32
            return make_mixed_bits(s0 & c, d0, f0 & c)
        return _dynamic(self, other, lambda a, b: a & b)

    __rand__ = __and__

    def __or__(self, other):
        s0, f0, d0 = self.static_int, self.static_flags, self._d
        if isinstance(other, MixedBits):
            s1, f1, d1 = other.static_int, other.static_flags, other._d
            return make_mixed_bits(s0 | s1, ((~s1 & f0) & d0) | ((~s0 & f1) & d1), (~s0 & f1) | (~s1 & f0))
        if _is_static_int(other):
            c = int(other) & _U32
            return make_mixed_bits(s0 | c, d0, f0 & ~c)
        return _dynamic(self, other, lambda a, b: a | b)

    __ror__ = __or__

    def __xor__(self, other):
        s0, f0, d0 = self.static_int, self.static_flags, self._d
        if isinstance(other, MixedBits):
            s1, f1, d1 = other.static_int, other.static_flags, other._d
            return make_mixed_bits((~s0 & s1 & ~f0) | (s0 & ~s1 & ~f1), (s0 | d0) ^ (s1 | d1), f0 | f1)
        if _is_static_int(other):
            c = int(other) & _U32
            return make_mixed_bits((~s0 & c & ~f0) | (s0 & ~c), (s0 | d0) ^ c, f0)
        return _dynamic(self, other, lambda a, b: a ^ b)

    __rxor__ = __xor__

    def __lshift__(self, n):
        if not _is_static_int(n):
            return _dynamic(self, n, lambda a, b: a << b)
        return make_mixed_bits(self.static_int << n, self._d << n, self.static_flags << n)

    def __rshift__(self, n):
        if not _is_static_int(n):
            return _dynamic(self, n, lambda a, b: a >> b)
        return make_mixed_bits(self.static_int >> n, self._d >> n, self.static_flags >> n)

    # -- arithmetic converts to a dynamic uint32, as C++'s implicit conversion does -------
    def __add__(self, other):
        return _dynamic(self, other, lambda a, b: a + b)

    def __radd__(self, other):
        return _dynamic(self, other, lambda a, b: b + a)

    def __sub__(self, other):
        return _dynamic(self, other, lambda a, b: a - b)

    def __rsub__(self, other):
        return _dynamic(self, other, lambda a, b: b - a)

    def __mul__(self, other):
        return _dynamic(self, other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __neg__(self):
        return DInt(-int(self))

    def __invert__(self):
        return DInt(~int(self) & _U32)


def _is_static_int(x):
    return is_int(x) and is_static(x)


def _dynamic(m, other, fn):
    if isinstance(other, MixedBits):
        other = int(other)
    if not is_int(other):
        return NotImplemented
    return DInt(fn(int(m), int(other)))


def make_mixed_bits(s, d, f):
    """CuTe ``make_mixed_bits(C<s>, d, C<f>)``: ``s | (d & f)``, a MixedBits when bits stay dynamic.

    ``s`` and ``f`` are static; when ``d`` is static or no dynamic bit is left the result is a
    static int.
    """
    s = int(s) & _U32
    new_f = int(f) & ~s & _U32
    if new_f == 0 or is_static(d):
        return s | (int(d) & new_f)
    return MixedBits(s, new_f, int(d) & new_f)


def to_mixed_bits(shape, stride, coord):
    """CuTe ``to_mixed_bits``: the bits of ``coord`` through a power-of-two layout, as MixedBits.

    ``shape * stride`` must be a static power of two (or zero) at every leaf and
    ``(shape - 1) * stride`` static; leaves combine by XOR (a right fold, as in CuTe).
    """
    if is_tuple(shape) and is_tuple(stride) and is_tuple(coord):
        if not len(shape) == len(stride) == len(coord):
            raise ValueError(f"to_mixed_bits: rank mismatch: {cute_str(shape)}:{cute_str(stride)} at {cute_str(coord)}")
        parts = [to_mixed_bits(s, d, c) for s, d, c in zip(shape, stride, coord)]
        result = parts[-1]
        for p in reversed(parts[:-1]):
            result = p ^ result
        return result
    if is_tuple(shape) or is_tuple(stride) or is_tuple(coord):
        raise ValueError(f"to_mixed_bits: shape, stride and coordinate must be all tuples or all integers: "
                         f"{cute_str(shape)}, {cute_str(stride)}, {cute_str(coord)}")
    check_int_tuple("to_mixed_bits", coord, "coordinate")
    span = shape * stride
    if not is_static(span) or (int(span) != 0 and int(span) & (int(span) - 1)):
        raise ValueError(f"to_mixed_bits: requires a static power-of-two shape*stride, got {cute_str(shape)}*{cute_str(stride)}")
    flags = (shape - 1) * stride
    if not is_static(flags):
        raise ValueError(f"to_mixed_bits: (shape-1)*stride must be static, got {cute_str(shape)}, {cute_str(stride)}")
    if is_constant(0, flags):
        return 0
    return make_mixed_bits(0, coord * stride, flags)
