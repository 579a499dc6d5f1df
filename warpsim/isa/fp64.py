"""f64 (binary64) instructions of PTX, bit-exact, in integers: add sub mul fma div rcp sqrt, min max abs neg
copysign, setp set testp.

The model is ``fparith``'s: decode, form the exact result, round it once (``rounding.round_bits``) in the
mode asked for (``.rn .rz .rm .rp``, PTX "IEEE 754 compliant"). A product of two 53-bit significands has
106 bits, more than an int64 holds, so the exact sums here are two-limb integers ``(hi, lo)`` worth
``hi * 2**62 + lo`` (``0 <= lo < 2**62``, up to 124 bits); before rounding they are cut to 60 bits plus a
sticky bit (OR-ed into the lowest bit), which lies at least 6 bits below every rounding position, so the
one rounding is that of the exact value. Division is long division in 10-bit steps, the square root a
digit-by-digit integer root; both leave a sticky bit for the remainder.

f64 has no ``.ftz`` and no ``.sat`` in PTX: subnormals are always kept (gradual underflow).

Zeros (IEEE 754 section 6.3): an exact zero sum of non-zero terms, or of zeros of opposite signs, is
``+0`` except under ``.rm`` (``-0``); ``x * 0`` has the product's sign; ``sqrt(-0) = -0``.

NaN. PTX ("Floating-Point Instructions"): "NaN payloads are supported for double-precision
instructions" (``rcp.approx.ftz.f64`` and ``rsqrt.approx.ftz.f64`` excepted), unlike f32's canonical NaN.
Which NaN comes out is not written down; the H200 showed it (``hwcheck campaign --instr f64``, 2026-12-01,
2 * 10**6 inputs per form and class: every difference from the first model is explained by these rules,
docs/numerics.md "f64"):

- a NaN operand is passed on *quietened* (fraction bit 51 set), sign and payload kept;
- of several NaN operands: ``b`` before ``a`` for ``add sub mul``; ``b``, then ``c``, then ``a`` for ``fma``;
  ``a`` before ``b`` for ``div`` (``NAN_ORDER``). ``sub`` does not negate a NaN ``b``;
- an invalid operation on numbers (``inf - inf``, ``0 * inf``, ``0/0``, ``inf/inf``, ``sqrt(x < 0)``)
  gives ``DEFAULT_NAN = 0xFFF8000000000000`` (CUDA's ``CUDART_NAN``); in ``fma`` a NaN ``c`` wins over
  an invalid ``0 * inf``;
- ``abs``/``neg`` of a NaN give it quietened, its sign unchanged (``abs``: proven; ``neg``: the sign
  proven, the quietening assumed from ``abs``);
- ``min``/``max`` of a NaN and a number give the number, of two NaNs ``b`` quietened.

Register bits are an int64 holding the 64 bits (the PTX interpreter's representation of ``%rd``
registers); results are int64 too (negative when the sign bit is set).

>>> hex(f64_add(0x3FF0000000000000, 0x3CA0000000000000, RN) & MASK64)   # 1 + 2**-53: a tie, to even
'0x3ff0000000000000'
>>> hex(f64_add(0x3FF0000000000000, 0x3CA0000000000000, RP) & MASK64)
'0x3ff0000000000001'
>>> one_up = 0x3FF0000000000001                                   # 1 + 2**-52
>>> hex(f64_fma(one_up, one_up, bits(-1.0 - 2.0 ** -51), RN) & MASK64)   # exact: 2**-104
'0x3970000000000000'
>>> hex(f64_div(bits(1.0), bits(3.0), RN) & MASK64), hex(f64_sqrt(bits(2.0), RN) & MASK64)
('0x3fd5555555555555', '0x3ff6a09e667f3bcd')
>>> hex(f64_mul(0x0010000000000000, bits(0.5), RN) & MASK64)   # 2**-1023: subnormal, kept
'0x8000000000000'
>>> hex(f64_sub(bits(1.0), bits(1.0), RM) & MASK64), hex(f64_fma(0, bits(float("inf")), 0, RN) & MASK64)
('0x8000000000000000', '0xfff8000000000000')
>>> hex(f64_add(0x7FF0000000000001, bits(1.0), RN) & MASK64)     # a signalling NaN, quietened
'0x7ff8000000000001'
>>> hex(f64_sub(0x7FF8000000000001, 0xFFF0000000000002 - (1 << 64), RN) & MASK64)   # two NaNs: b's, sign kept
'0xfff8000000000002'
"""

import struct

import numpy as np
from numba import njit, prange

from warpsim.isa.floats import FINITE, INF, bit_length, decode
from warpsim.isa.fpcompare import CMP, TESTP, fp_compare, fp_testp
from warpsim.isa.rounding import RM, RN, RP, RZ, round_bits

__all__ = [
    "RN", "RZ", "RM", "RP", "CMP", "TESTP", "EXP_BITS", "FRAC_BITS", "DEFAULT_NAN", "QUIET_BIT", "MASK64",
    "bits", "NAN_ORDER", "nan_result", "round_wide",
    "f64_add", "f64_sub", "f64_mul", "f64_fma", "f64_div", "f64_rcp", "f64_sqrt",
    "f64_min", "f64_max", "f64_abs", "f64_neg", "f64_copysign", "f64_setp", "f64_set", "f64_testp",
    "BATCH_OPS", "float64_batch",
]

EXP_BITS, FRAC_BITS = 11, 52
MASK64 = (1 << 64) - 1
DEFAULT_NAN = 0xFFF8000000000000 - (1 << 64)     # as an int64; assumed (see the module docstring)
QUIET_BIT = 1 << 51
_SIGN = -(1 << 63)                               # the sign bit, as an int64
_ONE = 0x3FF0000000000000
_EXP_MASK = 0x7FF0000000000000
_L = 62                                          # bits per limb of a two-limb integer
_LMASK = (1 << 62) - 1


def bits(x):
    """The f64 bits of the Python float ``x``, as an int64 (a helper for examples and tests).

    >>> hex(bits(1.0)), bits(-0.0) == -(1 << 63)
    ('0x3ff0000000000000', True)
    """
    u = struct.unpack("<Q", struct.pack("<d", x))[0]
    return u - (1 << 64) if u >> 63 else u


@njit(cache=True)
def _is_nan(x):
    return (np.int64(x) & ~np.int64(_SIGN)) > _EXP_MASK


# The operand whose NaN an operation gives when several are NaNs, first to last (the H200): positions in
# ``(a, b, c)``. ``min``/``max`` give a NaN only when both operands are NaNs (a NaN and a number: the number).
NAN_ORDER = {"add": (1, 0), "sub": (1, 0), "mul": (1, 0), "fma": (1, 2, 0), "div": (0, 1), "min": (1, 0),
             "max": (1, 0)}


@njit(cache=True)
def nan_result(x, y, z, n):
    """The NaN an f64 operation gives when one of its first ``n`` operands, *in priority order* ``x, y, z``
    (``NAN_ORDER``), is a NaN: the first such, quietened; ``DEFAULT_NAN`` when none is (an invalid
    operation).

    >>> hex(nan_result(bits(1.0), 0xFFF0000000000005 - (1 << 64), 0x7FF8000000000009, 3) & MASK64)
    '0xfff8000000000005'
    """
    if _is_nan(x):
        return np.int64(x) | QUIET_BIT
    if n > 1 and _is_nan(y):
        return np.int64(y) | QUIET_BIT
    if n > 2 and _is_nan(z):
        return np.int64(z) | QUIET_BIT
    return np.int64(DEFAULT_NAN)


# ---- two-limb integers: (hi, lo) = hi * 2**62 + lo ------------------------------------------------------

@njit(cache=True)
def _w_mul(x, y):
    """``x * y`` for ``0 <= x, y < 2**53`` as ``(hi, lo)``."""
    m31 = np.int64((1 << 31) - 1)
    x1, x0 = x >> 31, x & m31
    y1, y0 = y >> 31, y & m31
    mid = x1 * y0 + x0 * y1                      # < 2**54
    lo = x0 * y0 + ((mid & m31) << 31)           # < 2**63
    return x1 * y1 + (mid >> 31) + (lo >> _L), lo & _LMASK


@njit(cache=True)
def _w_bits(hi, lo):
    return _L + bit_length(hi) if hi != 0 else bit_length(lo)


@njit(cache=True)
def _w_shl(hi, lo, k):
    """``(hi, lo) << k`` for a result below ``2**124``."""
    if k == 0:
        return hi, lo
    if k >= _L:
        return lo << (k - _L), np.int64(0)
    return (hi << k) | (lo >> (_L - k)), (lo << k) & _LMASK


@njit(cache=True)
def _w_shr(hi, lo, k):
    """``(hi, lo) >> k`` and whether a non-zero bit was cut: ``(hi, lo, sticky)``."""
    if k <= 0:
        return hi, lo, False
    if k >= 2 * _L:
        return np.int64(0), np.int64(0), hi != 0 or lo != 0
    if k >= _L:
        s = k - _L
        return np.int64(0), hi >> s, lo != 0 or (hi & ((np.int64(1) << s) - 1)) != 0
    cut = lo & ((np.int64(1) << k) - 1)
    return hi >> k, (lo >> k) | ((hi & ((np.int64(1) << k) - 1)) << (_L - k)), cut != 0


@njit(cache=True)
def round_wide(neg, hi, lo, lsb, rnd):
    """The f64 bits of ``(-1)**neg * (hi * 2**62 + lo) * 2**lsb`` rounded once (non-zero magnitude).

    >>> hex(round_wide(0, 1, 1, -62, RN) & MASK64), hex(round_wide(0, 1, 1, -62, RP) & MASK64)   # 1 + 2**-62
    ('0x3ff0000000000000', '0x3ff0000000000001')
    """
    n = _w_bits(hi, lo)
    if n > 60:                                   # 60 bits and a sticky bit: 6+ bits below any rounding
        k = n - 60
        hi, lo, sticky = _w_shr(hi, lo, k)
        lo |= np.int64(sticky)
        lsb += k
    return round_bits(neg, lo, lsb, EXP_BITS, FRAC_BITS, rnd)


@njit(cache=True)
def _sum_round(xn, xh, xl, xe, yn, yh, yl, ye, rnd):
    """``(-1)**xn X 2**xe + (-1)**yn Y 2**ye`` rounded once; ``X, Y`` non-zero two-limb magnitudes of at
    most 106 bits.

    Aligned exactly when that takes at most 122 bits. Otherwise the term with the lower leading bit
    (``Y``) lies wholly more than 15 bits below the other's leading bit (``X`` has at most 106 bits, so
    more than 16 of the 122 lie below it; ``Y`` has at most 106): ``X`` is shifted up to 121 bits, ``Y``
    cut at ``X``'s new last bit, with one more bit for a sticky bit. The sum then lies strictly between
    the same two multiples of the cut's unit as the exact sum, 60 bits below the result's rounding.
    """
    bx, by = _w_bits(xh, xl), _w_bits(yh, yl)
    if xe + bx < ye + by:
        xn, xh, xl, xe, bx, yn, yh, yl, ye, by = yn, yh, yl, ye, by, xn, xh, xl, xe, bx
    if xe <= ye:
        yh, yl = _w_shl(yh, yl, ye - xe)
        lsb = xe
    elif bx + (xe - ye) <= 122:
        xh, xl = _w_shl(xh, xl, xe - ye)
        lsb = ye
    else:
        s = 120 - bx
        xh, xl = _w_shl(xh, xl, s + 1)
        lsb = xe - s
        yh, yl, sticky = _w_shr(yh, yl, lsb - ye)
        yh, yl = _w_shl(yh, yl, 1)
        yl |= np.int64(sticky)
        lsb -= 1
    if xn == yn:
        lo = xl + yl
        return round_wide(xn, xh + yh + (lo >> _L), lo & _LMASK, lsb, rnd)
    if xh == yh and xl == yl:
        return np.int64(_SIGN) if rnd == RM else np.int64(0)
    if xh < yh or (xh == yh and xl < yl):
        xn, xh, xl, yh, yl = yn, yh, yl, xh, xl
    lo = xl - yl
    borrow = np.int64(1) if lo < 0 else np.int64(0)
    return round_wide(xn, xh - yh - borrow, lo + (borrow << _L), lsb, rnd)


@njit(cache=True)
def _inf(neg):
    return (np.int64(_SIGN) if neg else np.int64(0)) | _EXP_MASK


@njit(cache=True)
def _zero(neg):
    return np.int64(_SIGN) if neg else np.int64(0)


@njit(cache=True)
def _fma(a, b, c, has_c, rnd):
    """``a * b + c`` (``has_c``) or ``a * b``, rounded once."""
    if _is_nan(a) or _is_nan(b) or (has_c and _is_nan(c)):
        return nan_result(b, c, a, 3) if has_c else nan_result(b, a, 0, 2)
    na, sa, ea, ca = decode(a, EXP_BITS, FRAC_BITS)
    nb, sb, eb, cb = decode(b, EXP_BITS, FRAC_BITS)
    nc, sc, ec, cc = decode(c, EXP_BITS, FRAC_BITS)
    pn = na ^ nb
    a_zero = ca == FINITE and sa == 0
    b_zero = cb == FINITE and sb == 0
    if (ca == INF and b_zero) or (cb == INF and a_zero):
        return np.int64(DEFAULT_NAN)
    if ca == INF or cb == INF:
        if has_c and cc == INF and nc != pn:
            return np.int64(DEFAULT_NAN)
        return _inf(pn)
    if has_c and cc == INF:
        return _inf(nc)
    c_zero = (not has_c) or sc == 0
    if a_zero or b_zero:
        if not has_c:
            return _zero(pn)
        if c_zero:
            return _zero(pn == 1 if pn == nc else rnd == RM)
        return np.int64(c)                        # exact: c itself
    ph, pl = _w_mul(sa, sb)
    plsb = ea + eb - 2 * FRAC_BITS
    if c_zero:
        return round_wide(pn, ph, pl, plsb, rnd)
    return _sum_round(pn, ph, pl, plsb, nc, np.int64(0), sc, ec - FRAC_BITS, rnd)


@njit(cache=True)
def f64_fma(a, b, c, rnd):
    """``fma.rnd.f64 d, a, b, c`` (and ``mad.rnd.f64``): ``a * b + c`` rounded once."""
    return _fma(np.int64(a), np.int64(b), np.int64(c), True, rnd)


@njit(cache=True)
def f64_mul(a, b, rnd):
    """``mul{.rnd}.f64 d, a, b``."""
    return _fma(np.int64(a), np.int64(b), np.int64(0), False, rnd)


@njit(cache=True)
def f64_add(a, b, rnd):
    """``add{.rnd}.f64 d, a, b``: ``fma(a, 1.0, b)``, the same exact sum and zero signs; of two NaNs ``b``'s."""
    a, b = np.int64(a), np.int64(b)
    if _is_nan(a) or _is_nan(b):
        return nan_result(b, a, 0, 2)
    return _fma(a, np.int64(_ONE), b, True, rnd)


@njit(cache=True)
def f64_sub(a, b, rnd):
    """``sub{.rnd}.f64 d, a, b``: ``a + (-b)``; a NaN ``b`` keeps its sign (the H200), as in ``add``."""
    a, b = np.int64(a), np.int64(b)
    if _is_nan(a) or _is_nan(b):
        return nan_result(b, a, 0, 2)
    return f64_add(a, b ^ np.int64(_SIGN), rnd)


@njit(cache=True)
def _normalise(sig, exp):
    s = FRAC_BITS + 1 - bit_length(sig)
    return sig << s, exp - s


@njit(cache=True)
def f64_div(a, b, rnd):
    """``div.rnd.f64 d, a, b``: IEEE 754 division, rounded once."""
    a, b = np.int64(a), np.int64(b)
    if _is_nan(a) or _is_nan(b):
        return nan_result(a, b, 0, 2)
    na, sa, ea, ca = decode(a, EXP_BITS, FRAC_BITS)
    nb, sb, eb, cb = decode(b, EXP_BITS, FRAC_BITS)
    n = na ^ nb
    a_zero = ca == FINITE and sa == 0
    b_zero = cb == FINITE and sb == 0
    if (ca == INF and cb == INF) or (a_zero and b_zero):
        return np.int64(DEFAULT_NAN)
    if ca == INF or b_zero:
        return _inf(n)
    if cb == INF or a_zero:
        return _zero(n)
    sa, ea = _normalise(sa, ea)
    sb, eb = _normalise(sb, eb)
    q = sa // sb                                 # 0 or 1: sa / sb lies in (1/2, 2)
    r = sa - q * sb
    for _ in range(6):                           # 60 more quotient bits, 10 at a time: r << 10 < 2**63
        r <<= 10
        d = r // sb
        r -= d * sb
        q = (q << 10) | d
    sticky = np.int64(1) if r != 0 else np.int64(0)
    return round_bits(n, 2 * q + sticky, ea - eb - 61, EXP_BITS, FRAC_BITS, rnd)


@njit(cache=True)
def f64_rcp(a, rnd):
    """``rcp.rnd.f64 d, a``: ``1.0 / a`` rounded once."""
    return f64_div(np.int64(_ONE), a, rnd)


@njit(cache=True)
def f64_sqrt(a, rnd):
    """``sqrt.rnd.f64 d, a``: rounded once; ``sqrt(-0) = -0``, a negative number gives ``DEFAULT_NAN``."""
    a = np.int64(a)
    if _is_nan(a):
        return nan_result(a, 0, 0, 1)
    na, sa, ea, ca = decode(a, EXP_BITS, FRAC_BITS)
    if ca == FINITE and sa == 0:
        return a
    if na:
        return np.int64(DEFAULT_NAN)
    if ca == INF:
        return a
    sa, ea = _normalise(sa, ea)
    p = ea - FRAC_BITS                           # a = sa * 2**p, sa of 53 bits
    t = 59 if (p - 59) % 2 == 0 else 60          # m = sa << t: 112 or 113 bits, an even exponent left
    top = FRAC_BITS + t                          # m's highest bit
    root = np.int64(0)
    rem = np.int64(0)
    for j in range(top // 2, -1, -1):            # two bits of m at a time, from the top: rem <= 2 root
        i = 2 * j - t                            # the position in sa of m's bit 2j
        pair = np.int64(0)
        if i + 1 >= 0:
            pair = ((sa >> (i + 1)) & 1) << 1
        if i >= 0:
            pair |= (sa >> i) & 1
        rem = (rem << 2) | pair
        trial = (root << 2) | 1
        if rem >= trial:
            rem -= trial
            root = (root << 1) | 1
        else:
            root <<= 1
    sticky = np.int64(1) if rem != 0 else np.int64(0)
    return round_bits(0, 2 * root + sticky, (p - t) // 2 - 1, EXP_BITS, FRAC_BITS, rnd)


# ---- selection, sign, comparison -----------------------------------------------------------------------

@njit(cache=True)
def _order_key(x):
    """An integer increasing with the value of the non-NaN ``x``, ``-0`` just below ``+0``."""
    mag = x & ~np.int64(_SIGN)
    return -mag - 1 if x < 0 else mag


@njit(cache=True)
def _minmax(a, b, is_max):
    a, b = np.int64(a), np.int64(b)
    if _is_nan(a) and _is_nan(b):
        return b | QUIET_BIT
    if _is_nan(a):
        return b
    if _is_nan(b):
        return a
    a_less = _order_key(a) < _order_key(b)
    if is_max:
        return b if a_less else a
    return a if a_less else b


@njit(cache=True)
def f64_min(a, b):
    """``min.f64 d, a, b``: a NaN and a number give the number, two NaNs ``b`` quietened; ``-0 < +0``."""
    return _minmax(a, b, False)


@njit(cache=True)
def f64_max(a, b):
    """``max.f64 d, a, b``."""
    return _minmax(a, b, True)


@njit(cache=True)
def f64_abs(a):
    """``abs.f64 d, a``: the sign bit cleared; a NaN quietened, its sign kept (the H200)."""
    a = np.int64(a)
    if _is_nan(a):
        return a | QUIET_BIT
    return a & ~np.int64(_SIGN)


@njit(cache=True)
def f64_neg(a):
    """``neg.f64 d, a``: the sign bit flipped; a NaN quietened, its sign kept (sign: the H200; quietening:
    assumed, as ``abs``)."""
    a = np.int64(a)
    if _is_nan(a):
        return a | QUIET_BIT
    return a ^ np.int64(_SIGN)


@njit(cache=True)
def f64_copysign(a, b):
    """``copysign.f64 d, a, b``: ``b`` with the sign of ``a``."""
    return (np.int64(b) & ~np.int64(_SIGN)) | (np.int64(a) & np.int64(_SIGN))


@njit(cache=True)
def f64_setp(a, b, cmp):
    """``setp.{cmp}.f64``: the IEEE comparison (``fpcompare.CMP`` codes), ``-0 == +0``."""
    return fp_compare(np.int64(a), np.int64(b), EXP_BITS, FRAC_BITS, cmp, False)


@njit(cache=True)
def f64_set(a, b, cmp, as_float):
    """``set.{cmp}.{u32,s32,f32}.f64``: all ones / zero, or ``1.0f`` / ``0.0f`` (``as_float``)."""
    t = f64_setp(a, b, cmp)
    if as_float:
        return np.uint32(0x3F800000) if t else np.uint32(0)
    return np.uint32(0xFFFFFFFF) if t else np.uint32(0)


@njit(cache=True)
def f64_testp(a, cls):
    """``testp.{cls}.f64`` (``fpcompare.TESTP`` codes); ``normal`` is true for zeros, as on f32."""
    return fp_testp(np.int64(a), EXP_BITS, FRAC_BITS, cls)


# ---- batched: numpy arrays of register bits -------------------------------------------------------------

BATCH_OPS = ("add", "sub", "mul", "fma", "div", "sqrt", "rcp", "min", "max", "abs", "neg", "copysign", "setp",
             "testp")
_BATCH_ARITY = {"fma": 3, "sqrt": 1, "rcp": 1, "abs": 1, "neg": 1, "testp": 1}
_ROUNDINGS = {"rn": RN, "rz": RZ, "rm": RM, "rp": RP}


@njit(cache=True)
def _batch_one(code, a, b, c, k):
    if code == 0:
        return f64_add(a, b, k)
    if code == 1:
        return f64_sub(a, b, k)
    if code == 2:
        return f64_mul(a, b, k)
    if code == 3:
        return f64_fma(a, b, c, k)
    if code == 4:
        return f64_div(a, b, k)
    if code == 5:
        return f64_sqrt(a, k)
    if code == 6:
        return f64_rcp(a, k)
    if code == 7:
        return f64_min(a, b)
    if code == 8:
        return f64_max(a, b)
    if code == 9:
        return f64_abs(a)
    if code == 10:
        return f64_neg(a)
    if code == 11:
        return f64_copysign(a, b)
    if code == 12:
        return np.int64(f64_setp(a, b, k))
    return np.int64(f64_testp(a, k))


@njit(cache=True, parallel=True)
def _batch_kernel(code, a, b, c, k, out):
    for i in prange(out.size):
        out[i] = np.uint64(_batch_one(code, np.int64(a[i]), np.int64(b[i]), np.int64(c[i]), k))


def float64_batch(op, *operands, rnd="rn", cmp=None, cls=None):
    """``op`` of ``BATCH_OPS`` over uint64 arrays of f64 bits of one shape: uint64 bits, or bools for
    ``setp`` (``cmp``: a ``CMP`` name) and ``testp`` (``cls``: a ``TESTP`` name).

    >>> a = np.array([bits(1.0), bits(-0.0)], np.int64).view(np.uint64)
    >>> [hex(int(x)) for x in float64_batch("add", a, a, rnd="rm")]
    ['0x4000000000000000', '0x8000000000000000']
    >>> float64_batch("setp", a, a[::-1], cmp="gt").tolist(), float64_batch("testp", a, cls="normal").tolist()
    ([True, False], [True, True])
    """
    name = f"{op}.f64"
    if op not in BATCH_OPS:
        raise ValueError(f"{name}: op must be one of {', '.join(BATCH_OPS)}")
    n = _BATCH_ARITY.get(op, 2)
    if len(operands) != n:
        raise ValueError(f"{name}: takes {n} operand array(s), got {len(operands)}")
    arrays = []
    for i, x in enumerate(operands):
        if not isinstance(x, np.ndarray) or x.dtype != np.uint64:
            raise TypeError(f"{name}: operand {'abc'[i]} must be a numpy array of uint64 (f64 bits), got "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
        if x.shape != operands[0].shape:
            raise ValueError(f"{name}: operands must have one shape, got {operands[0].shape} and {x.shape}")
        arrays.append(np.ascontiguousarray(x).ravel())
    while len(arrays) < 3:
        arrays.append(arrays[0])
    if op == "setp":
        if cmp not in CMP:
            raise ValueError(f"{name}: cmp must be one of {', '.join(CMP)}, got {cmp!r}")
        k = CMP[cmp]
    elif op == "testp":
        if cls not in TESTP:
            raise ValueError(f"{name}: cls must be one of {', '.join(TESTP)}, got {cls!r}")
        k = TESTP[cls]
    elif op in ("min", "max", "abs", "neg", "copysign"):
        k = 0
    else:
        if rnd not in _ROUNDINGS:
            raise ValueError(f"{name}: rnd must be one of {', '.join(_ROUNDINGS)}, got {rnd!r}")
        k = _ROUNDINGS[rnd]
    out = np.empty(arrays[0].size, np.uint64)
    if out.size:
        _batch_kernel(BATCH_OPS.index(op), *arrays, k, out)
    out = out.reshape(operands[0].shape)
    return out.astype(bool) if op in ("setp", "testp") else out
