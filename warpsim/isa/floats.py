"""Bit-level decoding and rounding of the binary formats f16, bf16 and f32, with integers only.

A finite value is held as ``(neg, mag, lsb)``: ``(-1)**neg * mag * 2**lsb`` with an integer
magnitude ``mag >= 0``. Decoding gives the significand with its hidden bit (``sig``) and the
exponent of its leading position (``exp``; subnormals get ``emin``, the value is then
``0.f * 2**emin``), so that ``value == (-1)**neg * sig * 2**(exp - frac_bits)``. A zero decodes to
``sig == 0`` and ``exp == ZERO_EXP``, an exponent far below every real one, so that a maximum over
exponents never picks a zero.

Rounding works from an exact ``(neg, mag, lsb)`` value to a format's bits: ``round_rz`` truncates
toward zero, ``round_rne`` rounds to nearest, ties to even; both keep subnormals and give an infinity
when the rounded magnitude reaches ``2**(emax + 1)``.

Examples (f16: 5 exponent bits, 10 fraction bits):

>>> decode(0x3C00, 5, 10) == (0, 1024, 0, FINITE)          # 1.0
True
>>> decode(0x0001, 5, 10) == (0, 1, -14, FINITE)           # smallest subnormal, 2**-24
True
>>> decode(0xFC00, 5, 10)[3] == INF and decode(0x7E00, 5, 10)[3] == NAN
True
>>> round_rne(0, 65504 + 16, 0, 5, 10) == 0x7C00           # rounds up to 2**16: inf
True
>>> round_rne(0, 65504 + 15, 0, 5, 10) == 0x7BFF           # 65504
True
>>> round_rz(0, (1 << 24) - 1, -24, 8, 23) == 0x3F7FFFFF   # 1 - 2**-24 truncates to 1 - 2**-24
True
"""

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

__all__ = [
    "FINITE", "INF", "NAN", "ZERO_EXP",
    "F16", "BF16", "F32", "FloatFormat", "FORMATS",
    "bit_length", "decode", "decode_fields", "round_rz", "round_rne", "round_u32",
    "decode_f16", "decode_bf16", "decode_f32",
    "decode_table",
    "f32_bits_to_float", "f16_bits_to_float", "bf16_bits_to_float", "FP8", "fp8_values", "nearest_fp8",
]

FINITE = 0
INF = 1
NAN = 2
ZERO_EXP = -4096  # exponent given to zero: below every exponent a product of two f32 could have


class FloatFormat:
    """An IEEE-style binary format: sign, ``exp_bits`` exponent bits, ``frac_bits`` fraction bits.

    >>> (F16.bias, F16.emin, F16.emax) == (15, -14, 15)
    True
    >>> (BF16.bias, F32.frac_bits) == (127, 23)
    True
    """

    __slots__ = ("name", "exp_bits", "frac_bits", "bias", "emin", "emax", "nbits")

    def __init__(self, name, exp_bits, frac_bits):
        self.name = name
        self.exp_bits = exp_bits
        self.frac_bits = frac_bits
        self.bias = (1 << (exp_bits - 1)) - 1
        self.emin = 1 - self.bias
        self.emax = self.bias
        self.nbits = 1 + exp_bits + frac_bits

    def __repr__(self):
        return f"FloatFormat({self.name!r}, exp_bits={self.exp_bits}, frac_bits={self.frac_bits})"


F16 = FloatFormat("f16", 5, 10)
BF16 = FloatFormat("bf16", 8, 7)
F32 = FloatFormat("f32", 8, 23)
FORMATS = {f.name: f for f in (F16, BF16, F32)}


@njit(cache=True)
def bit_length(x):
    """Number of bits of the non-negative int64 ``x`` (0 for 0), from LLVM's count of leading zeros.

    >>> [bit_length(v) for v in (0, 1, 2, 255, 256, (1 << 62) + 1)] == [0, 1, 2, 8, 9, 63]
    True
    """
    return 64 - np.int64(leading_zeros(np.uint64(x)))


@njit(cache=True)
def decode(bits, exp_bits, frac_bits):
    """Decode ``bits`` of a format into ``(neg, sig, exp, cls)``.

    ``cls`` is ``FINITE``, ``INF`` or ``NAN``; for a finite value
    ``value == (-1)**neg * sig * 2**(exp - frac_bits)``; a zero has ``sig == 0, exp == ZERO_EXP``.

    >>> decode(0xC000, 5, 10) == (1, 1024, 1, FINITE)   # -2.0
    True
    >>> decode(0x8000, 5, 10) == (1, 0, ZERO_EXP, FINITE)   # -0.0
    True
    """
    bits = np.int64(bits)
    emask = (np.int64(1) << exp_bits) - 1
    fmask = (np.int64(1) << frac_bits) - 1
    bias = (np.int64(1) << (exp_bits - 1)) - 1
    neg = (bits >> (exp_bits + frac_bits)) & 1
    e = (bits >> frac_bits) & emask
    f = bits & fmask
    if e == emask:
        if f == 0:
            return neg, np.int64(0), np.int64(0), INF
        return neg, np.int64(0), np.int64(0), NAN
    if e == 0:
        if f == 0:
            return neg, np.int64(0), np.int64(ZERO_EXP), FINITE
        return neg, f, 1 - bias, FINITE
    return neg, f | (fmask + 1), e - bias, FINITE


@njit(cache=True)
def decode_fields(bits, exp_bits, frac_bits):
    """``decode`` written without branches, so that a loop of it vectorises: ``(neg, sig, exp, special)``.

    For a finite value, ``neg, sig, exp`` are ``decode``'s (as int32) and ``special`` is False. An
    infinity or a NaN gives ``special`` True, ``sig == 0`` and ``exp == ZERO_EXP`` (``decode`` tells the
    two apart). ``bits`` counts modulo ``2**32`` (a negative int32 holding f32 bits decodes alike).

    >>> decode_fields(0xC000, 5, 10) == (1, 1024, 1, False)          # -2.0
    True
    >>> decode_fields(0x0001, 5, 10) == (0, 1, -14, False)           # smallest subnormal
    True
    >>> decode_fields(0x8000, 5, 10) == (1, 0, ZERO_EXP, False)      # -0.0
    True
    >>> decode_fields(-0x40800000, 8, 23) == (1, 1 << 23, 0, False)  # f32 -1.0 as a signed int32
    True
    >>> decode_fields(0x7C01, 5, 10) == (0, 0, ZERO_EXP, True)       # a NaN
    True
    """
    # int32 throughout (every format here fits): numba widens each step to int64, and casting each
    # result back lets LLVM keep the comparisons in int32, so that a loop of it runs 8 lanes wide
    i32 = np.int32
    bits = i32(bits)
    emask = i32((1 << exp_bits) - 1)
    fmask = i32((1 << frac_bits) - 1)
    bias = i32((1 << (exp_bits - 1)) - 1)
    neg = i32((bits >> (exp_bits + frac_bits)) & 1)
    e = i32((bits >> frac_bits) & emask)
    f = i32(bits & fmask)
    special = e == emask
    # Every choice below is a select (no branch): normal, subnormal or zero, then special.
    sig = i32(f | (fmask + 1)) if e != 0 else f
    exp = i32(e - bias) if e != 0 else (i32(1 - bias) if f != 0 else i32(ZERO_EXP))
    sig = i32(0) if special else sig
    exp = i32(ZERO_EXP) if special else exp
    return neg, sig, exp, special


@njit(cache=True)
def decode_f16(bits):
    """``decode`` for f16 bits.

    >>> decode_f16(0x3555)[1:3] == (0x555, -2)   # 1.333... = 0x555 * 2**(-2 - 10)
    True
    """
    return decode(bits, 5, 10)


@njit(cache=True)
def decode_bf16(bits):
    """``decode`` for bf16 bits.

    >>> decode_bf16(0x3F80) == (0, 128, 0, FINITE)   # 1.0
    True
    """
    return decode(bits, 8, 7)


@njit(cache=True)
def decode_f32(bits):
    """``decode`` for f32 bits.

    >>> decode_f32(0x3F800000) == (0, 1 << 23, 0, FINITE)   # 1.0
    True
    """
    return decode(bits, 8, 23)


@njit(cache=True)
def _encode(neg, m, e, exp_bits, frac_bits):
    """Bits of ``(-1)**neg * m * 2**(e - frac_bits)`` where ``m < 2**(frac_bits + 2)`` and
    ``m < 2**frac_bits`` only if ``e == emin``; an exponent past emax gives an infinity."""
    bias = (np.int64(1) << (exp_bits - 1)) - 1
    emask = (np.int64(1) << exp_bits) - 1
    one = np.int64(1) << frac_bits
    if m >= 2 * one:  # carry out of rounding
        m >>= 1
        e += 1
    sign = np.int64(neg) << (exp_bits + frac_bits)
    if m < one:  # subnormal or zero
        return sign | m
    be = e + bias
    if be >= emask:
        return sign | (emask << frac_bits)
    return sign | (be << frac_bits) | (m - one)


@njit(cache=True)
def _align(mag, lsb, exp_bits, frac_bits):
    """Exponent of the result's leading position and the shift from ``lsb`` to its last kept bit."""
    bias = (np.int64(1) << (exp_bits - 1)) - 1
    emin = 1 - bias
    lead = lsb + bit_length(mag) - 1
    e = lead if lead > emin else emin
    return e, (e - frac_bits) - lsb


@njit(cache=True)
def _leading(mag, lsb, exp_bits, frac_bits):
    """``(bias, lead, shift)``: the format's bias, the exponent of the leading bit of
    ``mag * 2**lsb`` (``mag > 0``), and the right shift of ``mag`` keeping ``frac_bits`` below it."""
    nbits = bit_length(mag)
    return (np.int64(1) << (exp_bits - 1)) - 1, lsb + nbits - 1, nbits - 1 - frac_bits


@njit(cache=True)
def round_rz(neg, mag, lsb, exp_bits, frac_bits):
    """Bits of ``(-1)**neg * mag * 2**lsb`` truncated toward zero (``mag`` a non-negative int64).

    Subnormals are kept; a truncated magnitude of ``2**(emax+1)`` or more gives an infinity.
    A zero keeps its sign: ``round_rz(1, 0, 0, 8, 23) == 0x80000000``.

    >>> round_rz(1, 0, 0, 8, 23) == 0x80000000
    True
    >>> round_rz(0, 3, -150, 8, 23) == 0x00000001   # 1.5 * 2**-149 -> 2**-149
    True
    >>> round_rz(0, 1, 128, 8, 23) == 0x7F800000    # 2**128 -> inf
    True
    """
    mag = np.int64(mag)
    if mag == 0:
        return np.int64(neg) << (exp_bits + frac_bits)
    bias, lead, shift = _leading(mag, lsb, exp_bits, frac_bits)
    if 1 - bias <= lead <= bias and 0 <= shift:   # a normal result from a wide sum: the common case
        return ((np.int64(neg) << (exp_bits + frac_bits)) | ((lead + bias) << frac_bits)
                | ((mag >> shift) & ((np.int64(1) << frac_bits) - 1)))
    e, shift = _align(mag, lsb, exp_bits, frac_bits)
    if shift <= 0:
        m = mag << (-shift)
    elif shift > 62:
        m = np.int64(0)
    else:
        m = mag >> shift
    return _encode(neg, m, e, exp_bits, frac_bits)


@njit(cache=True)
def round_rne(neg, mag, lsb, exp_bits, frac_bits):
    """Bits of ``(-1)**neg * mag * 2**lsb`` rounded to nearest, ties to even.

    Subnormals are kept; a rounded magnitude of ``2**(emax+1)`` or more gives an infinity.

    >>> round_rne(0, 0x1001, -12, 5, 10) == 0x3C00   # 1 + 2**-12: a quarter ulp, down
    True
    >>> round_rne(0, 0x1003, -12, 5, 10) == 0x3C01   # 1 + 3*2**-12: three quarters, up
    True
    >>> round_rne(0, 0x1006, -12, 5, 10) == 0x3C02   # 1 + 6*2**-12: a tie, to even (up)
    True
    >>> round_rne(0, 0x1002, -12, 5, 10) == 0x3C00   # 1 + 2*2**-12: a tie, to even (down)
    True
    >>> round_rne(1, 1, -25, 5, 10) == 0x8000        # half the smallest subnormal: tie to -0
    True
    """
    mag = np.int64(mag)
    if mag == 0:
        return np.int64(neg) << (exp_bits + frac_bits)
    bias, lead, shift = _leading(mag, lsb, exp_bits, frac_bits)
    if 1 - bias <= lead < bias and 1 <= shift <= 62:   # normal, below the top binade: the common case
        m = mag >> shift
        rem = mag - (m << shift)
        half = np.int64(1) << (shift - 1)
        if rem > half or (rem == half and (m & 1) == 1):
            m += 1
        # adding (m - 2**frac_bits) carries into the exponent field when m reached 2**(frac_bits+1)
        return ((np.int64(neg) << (exp_bits + frac_bits)) + ((lead + bias) << frac_bits)
                + (m - (np.int64(1) << frac_bits)))
    e, shift = _align(mag, lsb, exp_bits, frac_bits)
    if shift <= 0:
        m = mag << (-shift)
    elif shift > 62:  # all of mag lies below half an ulp, except mag > 2**62 when shift == 63
        m = np.int64(1) if (shift == 63 and mag > (np.int64(1) << 62)) else np.int64(0)
    else:
        m = mag >> shift
        rem = mag - (m << shift)
        half = np.int64(1) << (shift - 1)
        if rem > half or (rem == half and (m & 1) == 1):
            m += 1
    return _encode(neg, m, e, exp_bits, frac_bits)


@njit(cache=True)
def round_u32(neg, mag, lsb, exp_bits, frac_bits, nearest):
    """``round_rne`` (``nearest``) or ``round_rz`` of ``(-1)**neg * mag * 2**lsb`` for ``0 <= mag < 2**32``,
    written without branches (a loop of it vectorises); the bits as an int32.

    Pre-conditions: ``mag`` a uint32, ``lsb`` an int32, ``exp_bits + frac_bits < 32`` or f32.
    Post-condition: ``round_u32(neg, mag, lsb, eb, fb, nearest) == int32(round_rne(...))`` (or
    ``round_rz``), zeros keeping their sign.

    >>> int(round_u32(0, np.uint32(0x1003), np.int32(-12), 5, 10, True)) == round_rne(0, 0x1003, -12, 5, 10)
    True
    >>> int(round_u32(1, np.uint32(3), np.int32(-150), 8, 23, False)) == -0x7FFFFFFF   # -2**-149: 0x80000001
    True
    >>> int(round_u32(0, np.uint32(0xFFFFFFFF), np.int32(100), 8, 23, False)) == 0x7F800000   # inf
    True
    """
    # int32/uint32 throughout, each step cast back (numba widens to int64): 8 lanes per AVX2 op
    i32 = np.int32
    u32 = np.uint32
    mag = u32(mag)
    bias = i32((1 << (exp_bits - 1)) - 1)
    emask = i32((1 << exp_bits) - 1)
    lead = i32(lsb + i32(31 - i32(leading_zeros(mag))))   # exponent of mag's leading bit
    e = max(lead, i32(1 - bias))                          # the result's exponent (emin: subnormal)
    shift = i32(e - frac_bits - lsb)                      # right shift keeping frac_bits below 2**e
    # shift <= 0: exact, m = mag << -shift (m < 2**(frac_bits + 1), no bit lost)
    m_left = u32(mag << u32(i32(-shift) & 31))
    # shift >= 1: r = mag >> (shift - 1) keeps the rounding bit as its last bit; past 32 nothing is left
    s1 = i32(shift - 1)
    s1c = i32(s1 & 31)
    r = u32(0) if s1 > 31 else u32(mag >> u32(s1c))
    m_right = u32(r >> 1)
    if nearest:   # up: the rounding bit set, and any bit below it (sticky) or m odd (a tie to even)
        sticky = u32(mag & u32(u32(u32(1) << u32(s1c)) - u32(1))) != 0
        up = (r & 1) != 0 and (sticky or (m_right & 1) != 0)
        m_right = u32(m_right + u32(up))
    m = m_right if shift > 0 else m_left
    # exponent field + (m - 2**frac_bits): a subnormal (m < 2**frac_bits at emin) gets field 0, a
    # carry (m == 2**(frac_bits + 1)) the next exponent; a field of all ones or more is infinity
    big = i32(e + bias) >= emask
    field = min(i32(e + bias), i32(emask - 1))
    body = i32(i32(field << frac_bits) + i32(i32(m) - i32(1 << frac_bits)))
    inf = i32(emask << frac_bits)
    body = inf if (big or body >= inf) else body
    body = i32(0) if mag == 0 else body
    return i32(i32(i32(neg) << (exp_bits + frac_bits)) | body)


def decode_table(fmt):
    """Decode every 16-bit pattern of ``fmt`` (``F16`` or ``BF16``): four int64 arrays of 65536.

    Returns ``(neg, sig, exp, cls)`` indexed by the bit pattern, as ``decode`` gives them.

    >>> neg, sig, exp, cls = decode_table(F16)
    >>> (int(sig[0x3C00]), int(exp[0x3C00]), int(cls[0x7C00])) == (1024, 0, INF)
    True
    """
    if not isinstance(fmt, FloatFormat) or fmt.nbits != 16:
        raise ValueError(f"decode_table: fmt must be F16 or BF16, got {fmt!r}")
    return _decode_all(fmt.exp_bits, fmt.frac_bits)


@njit(cache=True)
def _decode_all(exp_bits, frac_bits):
    n = 1 << 16
    neg = np.empty(n, np.int64)
    sig = np.empty(n, np.int64)
    exp = np.empty(n, np.int64)
    cls = np.empty(n, np.int64)
    for b in range(n):
        neg[b], sig[b], exp[b], cls[b] = decode(b, exp_bits, frac_bits)
    return neg, sig, exp, cls


def f32_bits_to_float(bits):
    """The Python float of f32 bits, for readable test messages only.

    >>> f32_bits_to_float(0x3FC00000) == 1.5
    True
    """
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


def f16_bits_to_float(bits):
    """The Python float of f16 bits, for readable test messages only.

    >>> f16_bits_to_float(0xC000) == -2.0
    True
    """
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def bf16_bits_to_float(bits):
    """The Python float of bf16 bits, for readable test messages only.

    >>> bf16_bits_to_float(0x3F80) == 1.0
    True
    """
    return f32_bits_to_float((int(bits) & 0xFFFF) << 16)


FP8 = ("e4m3", "e5m2")     # the 8-bit formats of sm_89+/sm_90 (wgmma, cvt): OCP FP8 E4M3 and E5M2


def fp8_values(name):
    """The value of each of the 256 codes of ``name`` (``"e4m3"`` or ``"e5m2"``): ``float64[256]``, NaN at the NaN codes.

    e4m3 has a bias of 7, subnormals, no infinity and one NaN per sign (``S.1111.111``), so its largest finite value is
    448; e5m2 is IEEE-style: bias 15, infinities at ``S.11111.00`` and NaNs above them, largest finite value 57344.

    >>> v = fp8_values("e4m3")
    >>> float(v[0x38]), float(v[0x7E]), float(v[0x01]), bool(np.isnan(v[0x7F]))
    (1.0, 448.0, 0.001953125, True)
    >>> v = fp8_values("e5m2")
    >>> float(v[0x3C]), float(v[0x7B]), float(v[0x7C]), bool(np.isnan(v[0x7D]))
    (1.0, 57344.0, inf, True)
    """
    if name not in FP8:
        raise ValueError(f"fp8_values: name must be one of {', '.join(FP8)}, got {name!r}")
    exp_bits, frac_bits = (4, 3) if name == "e4m3" else (5, 2)
    out = np.empty(256, np.float64)
    for code in range(256):
        if name == "e4m3" and code & 0x7F == 0x7F:
            out[code] = np.nan
            continue
        if name == "e4m3" and (code >> 3) & 0xF == 0xF:          # no infinity: the top exponent holds finite values
            neg, sig, exp, cls = code >> 7, (code & 7) | 8, 8, FINITE
        else:
            neg, sig, exp, cls = decode(code, exp_bits, frac_bits)
        value = np.nan if cls == NAN else np.inf if cls == INF else sig * 2.0 ** (int(exp) - frac_bits)
        out[code] = -value if neg else value
    return out


def nearest_fp8(values, name):
    """The ``name`` code (``uint8``) of the finite value nearest each of ``values`` (an input generator's rounding,
    ties to the code of smaller magnitude, values beyond the largest finite one to it; not a conversion
    instruction's model).

    >>> nearest_fp8(np.array([1.0, -0.3, 1000.0]), "e4m3").tolist()
    [56, 170, 126]
    """
    table = fp8_values(name)
    codes = np.flatnonzero(np.isfinite(table) & (np.arange(256) != 0x80))     # -0 left out: +0 stands for zero
    order = np.argsort(table[codes], kind="stable")
    sorted_values, sorted_codes = table[codes][order], codes[order]
    x = np.asarray(values, np.float64)
    hi = np.clip(np.searchsorted(sorted_values, x), 1, sorted_values.size - 1)
    lo = hi - 1
    up, down = np.abs(sorted_values[hi] - x), np.abs(x - sorted_values[lo])
    pick_hi = (up < down) | (up == down) & (np.abs(sorted_values[hi]) < np.abs(sorted_values[lo]))
    return np.where(pick_hi, sorted_codes[hi], sorted_codes[lo]).astype(np.uint8)
