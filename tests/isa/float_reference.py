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
    e = _log2_floor_estimate(x)
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    m = x / Fraction(2) ** (e - fb)
    assert m.denominator == 1 and (1 << fb) <= m < (2 << fb)
    return ((e + bias) << fb) | (int(m) - (1 << fb))


def _log2_floor_estimate(x):
    """``floor(log2(x))`` of a positive Fraction, within one (the callers correct it): from the bit
    lengths, since ``float(x)`` overflows for f64 products."""
    return x.numerator.bit_length() - x.denominator.bit_length()


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
    e = _log2_floor_estimate(a) if a >= Fraction(2) ** emin else emin
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


# ---- reference operations: IEEE 754 specials spelled out, PTX's canonical NaN and modifiers ----

def canonical_nan(fmt):
    eb, fb = fmt
    return (1 << (eb + fb)) - 1


def flush(bits, fmt):
    eb, fb = fmt
    return bits & (1 << (eb + fb)) if is_subnormal(bits, fmt) else bits


def _inf(neg, fmt):
    eb, fb = fmt
    return ((1 << (eb + fb)) if neg else 0) | (((1 << eb) - 1) << fb)


def _post(bits, fmt, ftz, sat, relu):
    eb, fb = fmt
    if ftz:
        bits = flush(bits, fmt)
    v = value(bits, fmt)
    if sat:
        if v == "nan" or is_negative(bits, fmt):
            return 0
        one = ((1 << (eb - 1)) - 1) << fb
        return one if (v == "inf" or v > 1) else bits
    if relu and v != "nan" and is_negative(bits, fmt):
        return 0
    return bits


def _sqrt_exact(x):
    """sqrt of a positive Fraction as a Fraction lying strictly between the same dyadic neighbours of
    200 bits, exact when the root is: isqrt on a scaled integer, plus half a unit when inexact."""
    num, den = x.numerator, x.denominator
    # x = num/den; sqrt(x) = sqrt(num * den) / den
    m = num * den << 400
    r = math.isqrt(m)
    root = Fraction(r, den << 200)
    if r * r != m:
        root += Fraction(1, den << 201)
    return root


def ref_arith(op, operands, fmt, mode="rn", ftz=False, sat=False, relu=False):
    """The bits of PTX ``{op}.{mode}{.ftz}{.sat}{.relu}`` for ``op`` in add sub mul fma div sqrt rcp."""
    eb, fb = fmt
    one = ((1 << (eb - 1)) - 1) << fb
    sign_bit = 1 << (eb + fb)
    xs = [flush(x, fmt) if ftz else x for x in operands]
    if op == "add":
        op, xs = "fma", [xs[0], one, xs[1]]
    elif op == "sub":
        op, xs = "fma", [xs[0], one, xs[1] ^ sign_bit]
    elif op == "rcp":
        op, xs = "div", [one, xs[0]]
    vals = [value(x, fmt) for x in xs]
    negs = [is_negative(x, fmt) for x in xs]
    nan = canonical_nan(fmt)
    if "nan" in vals:
        return _post(nan, fmt, ftz, sat, relu)
    isinf = [isinstance(v, str) for v in vals]
    if op in ("fma", "mul"):
        pn = negs[0] ^ negs[1]
        if (isinf[0] and vals[1] == 0) or (isinf[1] and vals[0] == 0):
            r = nan
        elif isinf[0] or isinf[1]:
            r = nan if (op == "fma" and isinf[2] and negs[2] != pn) else _inf(pn, fmt)
        elif op == "fma" and isinf[2]:
            r = xs[2]
        else:
            p = vals[0] * vals[1]
            if op == "mul":
                r = to_bits(p, pn, fmt, mode)
            else:
                s = p + vals[2]
                if s == 0:
                    if p == 0 and vals[2] == 0:
                        neg = (pn or negs[2]) if mode == "rm" else (pn and negs[2])
                    else:
                        neg = mode == "rm"
                    r = sign_bit if neg else 0
                else:
                    r = to_bits(s, False, fmt, mode)
    elif op == "div":
        n = negs[0] ^ negs[1]
        if (isinf[0] and isinf[1]) or (vals[0] == 0 and vals[1] == 0):
            r = nan
        elif isinf[0] or vals[1] == 0:
            r = _inf(n, fmt)
        elif isinf[1] or vals[0] == 0:
            r = sign_bit if n else 0
        else:
            r = to_bits(vals[0] / vals[1], n, fmt, mode)
    elif op == "sqrt":
        v = vals[0]
        if v == "inf" or (not isinf[0] and v == 0):
            r = xs[0]
        elif v == "-inf" or v < 0:
            r = nan
        else:
            r = to_bits(_sqrt_exact(v), False, fmt, mode)
    else:
        raise ValueError(op)
    return _post(r, fmt, ftz, sat, relu)
