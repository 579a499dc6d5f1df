"""An independent reference for IEEE-rounded float ops: Python's exact ``Fraction`` and a plain
rounding written from IEEE 754's definitions (no code shared with warpsim.isa).

A format is ``(exp_bits, frac_bits)``. ``value(bits, fmt)`` gives a Fraction, ``"inf"``, ``"-inf"``
or ``"nan"`` (and the sign of a zero through ``is_negative``); ``to_bits(x, neg, fmt, mode)`` rounds
an exact Fraction with the rounding ``mode`` in ``"rn" "rz" "rm" "rp" "rna"``.
"""

from fractions import Fraction
import math

F32 = (8, 23)
F16 = (5, 10)
BF16 = (8, 7)


def params(fmt):
    eb, fb = fmt
    bias = (1 << (eb - 1)) - 1
    return eb, fb, bias, 1 - bias


def value(bits, fmt):
    eb, fb, bias, emin = params(fmt)
    sign = -1 if (bits >> (eb + fb)) & 1 else 1
    e = (bits >> fb) & ((1 << eb) - 1)
    f = bits & ((1 << fb) - 1)
    if e == (1 << eb) - 1:
        return "nan" if f else ("inf" if sign > 0 else "-inf")
    if e == 0:
        return sign * Fraction(f, 1 << fb) * Fraction(2) ** emin
    return sign * (1 + Fraction(f, 1 << fb)) * Fraction(2) ** (e - bias)


def is_negative(bits, fmt):
    eb, fb = fmt
    return bool((bits >> (eb + fb)) & 1)


def is_subnormal(bits, fmt):
    eb, fb = fmt
    return (bits >> fb) & ((1 << eb) - 1) == 0 and bits & ((1 << fb) - 1) != 0


def largest(fmt):
    eb, fb, bias, emin = params(fmt)
    return (2 - Fraction(1, 1 << fb)) * Fraction(2) ** bias


def encode(x, fmt):
    """Bits of a non-negative Fraction that is exactly representable (or ``inf``)."""
    eb, fb, bias, emin = params(fmt)
    if x == "inf":
        return ((1 << eb) - 1) << fb
    if x == 0:
        return 0
    ulp_min = Fraction(2) ** (emin - fb)
    if x < Fraction(2) ** emin:
        m = x / ulp_min
        assert m.denominator == 1
        return int(m)
    e = math.floor(math.log2(x))
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    m = x / Fraction(2) ** (e - fb)
    assert m.denominator == 1 and (1 << fb) <= m < (2 << fb)
    return ((e + bias) << fb) | (int(m) - (1 << fb))


def to_bits(x, neg, fmt, mode):
    """Round the exact value ``x`` (a Fraction; its sign, or ``neg`` for a zero) to ``fmt`` bits."""
    eb, fb, bias, emin = params(fmt)
    sign_bit = 1 << (eb + fb)
    if x != 0:
        neg = x < 0
    a = abs(x)
    if a == 0:
        return sign_bit if neg else 0
    # the grid of representable magnitudes around a: spacing of a's binade (subnormal spacing below 2**emin)
    e = math.floor(math.log2(a)) if a >= Fraction(2) ** emin else emin
    while Fraction(2) ** e > a and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (e - fb)
    lo = (a // ulp) * ulp
    hi = lo + ulp
    if lo == a:
        r = a
    else:
        toward_pos_inf = not neg
        if mode == "rz":
            r = lo
        elif mode == "rp":
            r = hi if toward_pos_inf else lo
        elif mode == "rm":
            r = lo if toward_pos_inf else hi
        else:
            mid = (lo + hi) / 2
            if a < mid:
                r = lo
            elif a > mid:
                r = hi
            elif mode == "rna":
                r = hi
            else:
                r = lo if (lo / ulp) % 2 == 0 else hi
    if r > largest(fmt):
        to_inf = mode in ("rn", "rna") or (mode == "rp" and not neg) or (mode == "rm" and neg)
        r = "inf" if to_inf else largest(fmt)
    return (sign_bit if neg else 0) | encode(r, fmt)
