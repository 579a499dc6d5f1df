"""IEEE-rounded float arithmetic of PTX, bit-exact, in integers: add sub mul fma div sqrt rcp.

One model serves f32, f16 and bf16 (``exp_bits``, ``frac_bits``): every operation computes its
exact result from the decoded integer significands, then rounds it once (``rounding.round_bits``)
in the mode asked for. That is IEEE 754's definition of these operations, which PTX states for
``add sub mul fma div.rnd sqrt.rnd rcp.rnd`` with a rounding modifier ("Floating-Point Instructions":
``.rn .rz .rm .rp``, "IEEE 754 compliant"). ``mad.f32`` is ``fma.f32`` on sm_20 and later.

Modifiers, in the order applied:

- ``.ftz``: every subnormal input is read as a zero of its sign; then a subnormal *result* (after
  rounding, bits with a zero exponent field) becomes a zero of its sign. For ``fma``/``mul``/``add``
  "subnormal" is IEEE 754's tininess after rounding (section 7.5): the exact result rounded to the
  format's full precision *as though the exponent range were unbounded* lies below the smallest
  normal ``2**emin``. So an exact result that rounds up to ``2**emin`` only thanks to the coarser
  subnormal spacing is flushed: it is within half an ulp of ``2**emin`` in the subnormal grid but
  more than a quarter ulp below it (the H200, ``fma.rn.ftz`` on f32 and f16; see docs/numerics.md).
  ``div``/``sqrt``/``rcp`` flush the rounded bits.
- NaN: any NaN result is the canonical NaN, all bits set but the sign: ``0x7FFFFFFF`` (f32),
  ``0x7FFF`` (f16, bf16), whatever the input payloads (PTX, "Floating-Point Instructions": "NaN
  payloads are not preserved ... the canonical NaN"; checked on the H200 for f16/bf16 by
  ``hwcheck campaign --instr cvt`` and for these ops by ``--instr float``).
- ``.sat``: the result is clamped to ``[+0.0, 1.0]``; a NaN becomes ``+0.0``; ``-0.0`` becomes
  ``+0.0`` (assumed from "[+0.0, 1.0]", see docs/numerics.md).
- ``.relu`` (f16/bf16 ``fma``): a negative result (``-0.0`` included) becomes ``+0.0``; a NaN stays
  the canonical NaN.

Zeros follow IEEE 754 section 6.3: an exact zero sum of non-zero terms, or of zeros of opposite
signs, is ``+0`` in every mode but ``.rm``, where it is ``-0``.

Every result is ``uint32`` bits (16-bit formats in the low half). Examples (f32):

>>> hex(f32_add(0x3F800000, 0x33800000, RN, False, False))   # 1 + 2**-24: a tie, to even
'0x3f800000'
>>> hex(f32_add(0x3F800000, 0x33800000, RP, False, False))
'0x3f800001'
>>> hex(f32_fma(0x3F800001, 0x3F800001, 0xBF800002, RN, False, False))   # exact: 2**-46
'0x28800000'
>>> hex(f32_mul(0x00800000, 0x3F000000, RN, True, False))     # 2**-127 is subnormal: flushed
'0x0'
>>> hex(f32_fma(0x0158583B, 0x324ADDB4, 0x80800000, RN, True, False))   # -2**-126 + 2**-150.6: tiny
'0x80000000'
>>> hex(f32_fma(0x80800000, 0x9AFD5D9F, 0x80800000, RN, True, False))   # -2**-126 + 2**-199: not
'0x80800000'
>>> hex(f32_div(0x3F800000, 0x40400000, RN, False))           # 1/3
'0x3eaaaaab'
>>> hex(f32_sqrt(0x40000000, RN, False)), hex(f32_sqrt(0xBF800000, RN, False))
('0x3fb504f3', '0x7fffffff')
"""

import numpy as np
from numba import njit

from warpsim.isa.floats import FINITE, INF, NAN, bit_length, decode
from warpsim.isa.rounding import RM, RN, RNA, RP, RZ, round_bits

__all__ = [
    "RN", "RZ", "RM", "RP", "RNA",
    "canonical_nan", "flush_subnormal", "finish",
    "fp_fma", "fp_div", "fp_sqrt",
    "f32_add", "f32_sub", "f32_mul", "f32_fma", "f32_div", "f32_rcp", "f32_sqrt",
    "f16_add", "f16_sub", "f16_mul", "f16_fma", "bf16_add", "bf16_sub", "bf16_mul", "bf16_fma",
    "f16x2_add", "f16x2_sub", "f16x2_mul", "f16x2_fma",
    "bf16x2_add", "bf16x2_sub", "bf16x2_mul", "bf16x2_fma",
]

_MUL = 0   # fp_fma without an addend
_FMA = 1


@njit(cache=True)
def canonical_nan(exp_bits, frac_bits):
    """The canonical NaN of a format: every bit set but the sign.

    >>> hex(canonical_nan(8, 23)), hex(canonical_nan(5, 10))
    ('0x7fffffff', '0x7fff')
    """
    return (np.int64(1) << (exp_bits + frac_bits)) - 1


@njit(cache=True)
def flush_subnormal(bits, exp_bits, frac_bits):
    """``bits`` with a subnormal read as a zero of its sign (``.ftz``); other values unchanged.

    >>> hex(flush_subnormal(0x807FFFFF, 8, 23)), hex(flush_subnormal(0x3C00, 5, 10))
    ('0x80000000', '0x3c00')
    """
    bits = np.int64(bits)
    if (bits >> frac_bits) & ((np.int64(1) << exp_bits) - 1) == 0:
        return bits & (np.int64(1) << (exp_bits + frac_bits))
    return bits


@njit(cache=True)
def finish(bits, exp_bits, frac_bits, ftz, sat, relu):
    """Apply ``.ftz`` to a result, then ``.sat`` (clamp to ``[+0, 1]``, NaN to ``+0``) or ``.relu``.

    >>> hex(finish(0xBF800000, 8, 23, False, True, False)), hex(finish(0x7FFFFFFF, 8, 23, False, True, False))
    ('0x0', '0x0')
    >>> hex(finish(0xC000, 5, 10, False, False, True)), hex(finish(0x7FFF, 5, 10, False, False, True))
    ('0x0', '0x7fff')
    """
    bits = np.int64(bits)
    if ftz:
        bits = flush_subnormal(bits, exp_bits, frac_bits)
    signbit = np.int64(1) << (exp_bits + frac_bits)
    is_nan = (bits & (signbit - 1)) > (((np.int64(1) << exp_bits) - 1) << frac_bits)
    if sat:
        one = ((np.int64(1) << (exp_bits - 1)) - 1) << frac_bits
        if is_nan or (bits & signbit) != 0:
            return np.int64(0)
        return one if bits > one else bits
    if relu and not is_nan and (bits & signbit) != 0:
        return np.int64(0)
    return bits


@njit(cache=True)
def _zero_sum_sign(na, nb, rnd):
    """Sign of an exact zero sum of two terms of signs ``na``, ``nb`` (IEEE 754 section 6.3)."""
    if na == nb:
        return na
    return np.int64(1) if rnd == RM else np.int64(0)


@njit(cache=True)
def _add_exact(xn, xm, xl, yn, ym, yl, exp_bits, frac_bits, rnd):
    """Round ``(-1)**xn xm 2**xl + (-1)**yn ym 2**yl`` once; both magnitudes non-zero, below ``2**50``.

    When aligning both exactly would need more than 62 bits, the smaller term lies wholly more than
    12 bits below the larger one's leading bit; it is then cut at a position 2 bits below the
    larger's last kept bit plus one guard bit, with a sticky bit for what was cut. The sum then lies
    strictly between the same two neighbours as the exact sum, far below every rounding position.
    """
    if xl + bit_length(xm) < yl + bit_length(ym):   # x: the term with the higher leading bit
        xn, xm, xl, yn, ym, yl = yn, ym, yl, xn, xm, xl
    if xl <= yl:
        ym = ym << (yl - xl)
        lsb = xl
    elif bit_length(xm) + (xl - yl) <= 62:
        xm = xm << (xl - yl)
        lsb = yl
    else:
        s = 60 - bit_length(xm)
        lsb = xl - s
        k = lsb - yl
        kept = ym >> k if k < 63 else np.int64(0)
        sticky = np.int64(1) if (kept << k if k < 63 else np.int64(0)) != ym else np.int64(0)
        xm = xm << (s + 1)
        ym = (kept << 1) | sticky
        lsb -= 1
    if xn == yn:
        return round_bits(xn, xm + ym, lsb, exp_bits, frac_bits, rnd)
    diff = xm - ym
    if diff == 0:
        return _zero_sum_sign(xn, yn, rnd) << (exp_bits + frac_bits)
    if diff < 0:
        return round_bits(yn, -diff, lsb, exp_bits, frac_bits, rnd)
    return round_bits(xn, diff, lsb, exp_bits, frac_bits, rnd)


@njit(cache=True)
def fp_fma(a, b, c, op, exp_bits, frac_bits, rnd, ftz):
    """``a * b + c`` (``op == 1``) or ``a * b`` (``op == 0``, ``c`` ignored), rounded once, ``.ftz`` on inputs
    and result; before ``.sat``/``.relu`` (see ``finish``). Bits as an int64.

    >>> hex(fp_fma(0x3C00, 0x3C00, 0xBC00, 1, 5, 10, RN, False)), hex(fp_fma(0x3C00, 0x3C00, 0xBC00, 1, 5, 10, RM, False))
    ('0x0', '0x8000')
    """
    if ftz:
        a = flush_subnormal(a, exp_bits, frac_bits)
        b = flush_subnormal(b, exp_bits, frac_bits)
        c = flush_subnormal(c, exp_bits, frac_bits)
    signs = exp_bits + frac_bits
    na, sa, ea, ca = decode(a, exp_bits, frac_bits)
    nb, sb, eb, cb = decode(b, exp_bits, frac_bits)
    nc, sc, ec, cc = decode(c, exp_bits, frac_bits)
    has_c = op == _FMA
    nan = canonical_nan(exp_bits, frac_bits)
    if ca == NAN or cb == NAN or (has_c and cc == NAN):
        return nan
    pn = na ^ nb
    a_zero = ca == FINITE and sa == 0
    b_zero = cb == FINITE and sb == 0
    if (ca == INF and b_zero) or (cb == INF and a_zero):
        return nan
    if ca == INF or cb == INF:
        if has_c and cc == INF and nc != pn:
            return nan
        return (pn << signs) | (((np.int64(1) << exp_bits) - 1) << frac_bits)
    if has_c and cc == INF:
        return np.int64(c) & ((np.int64(1) << (signs + 1)) - 1)
    c_zero = (not has_c) or sc == 0
    if a_zero or b_zero:
        if not has_c:
            return pn << signs
        if c_zero:
            return _zero_sum_sign(pn, nc, rnd) << signs
        return finish(c, exp_bits, frac_bits, ftz, False, False)   # exact: c itself
    plsb = ea + eb - 2 * frac_bits
    if c_zero:
        r = round_bits(pn, sa * sb, plsb, exp_bits, frac_bits, rnd)
    else:
        r = _add_exact(pn, sa * sb, plsb, nc, sc, ec - frac_bits, exp_bits, frac_bits, rnd)
    if ftz and (r & ((np.int64(1) << signs) - 1)) == (np.int64(1) << frac_bits):
        # rounded to the smallest normal 2**emin: tiny if the exact result rounded at full precision
        # with an unbounded exponent lies below it. Scaled by 2**k both binades around 2**emin are
        # normal, and 2**emin becomes the exponent field 1 + k.
        k = frac_bits + 2
        if c_zero:
            t = round_bits(pn, sa * sb, plsb + k, exp_bits, frac_bits, rnd)
        else:
            t = _add_exact(pn, sa * sb, plsb + k, nc, sc, ec - frac_bits + k, exp_bits, frac_bits, rnd)
        if (t & ((np.int64(1) << signs) - 1)) < ((1 + k) << frac_bits):
            return r & (np.int64(1) << signs)
    return finish(r, exp_bits, frac_bits, ftz, False, False)


@njit(cache=True)
def _normalise(sig, exp, frac_bits):
    """A finite non-zero ``(sig, exp)`` with the leading bit of ``sig`` moved to position ``frac_bits``."""
    s = frac_bits + 1 - bit_length(sig)
    return sig << s, exp - s


@njit(cache=True)
def fp_div(a, b, exp_bits, frac_bits, rnd, ftz):
    """``a / b`` rounded once (IEEE 754 division), ``.ftz`` on inputs and result; bits as an int64.

    >>> hex(fp_div(0x3C00, 0x0000, 5, 10, RN, False)), hex(fp_div(0x0000, 0x8000, 5, 10, RN, False))
    ('0x7c00', '0x7fff')
    """
    if ftz:
        a = flush_subnormal(a, exp_bits, frac_bits)
        b = flush_subnormal(b, exp_bits, frac_bits)
    signs = exp_bits + frac_bits
    na, sa, ea, ca = decode(a, exp_bits, frac_bits)
    nb, sb, eb, cb = decode(b, exp_bits, frac_bits)
    n = na ^ nb
    nan = canonical_nan(exp_bits, frac_bits)
    inf = (n << signs) | (((np.int64(1) << exp_bits) - 1) << frac_bits)
    if ca == NAN or cb == NAN or (ca == INF and cb == INF):
        return nan
    a_zero = ca == FINITE and sa == 0
    b_zero = cb == FINITE and sb == 0
    if a_zero and b_zero:
        return nan
    if ca == INF or b_zero:
        return inf
    if cb == INF or a_zero:
        return n << signs
    sa, ea = _normalise(sa, ea, frac_bits)
    sb, eb = _normalise(sb, eb, frac_bits)
    extra = frac_bits + 3                 # quotient bits: frac_bits + 3 or + 4, then a sticky bit
    num = sa << extra
    q = num // sb
    sticky = np.int64(1) if q * sb != num else np.int64(0)
    r = round_bits(n, 2 * q + sticky, ea - eb - extra - 1, exp_bits, frac_bits, rnd)
    return finish(r, exp_bits, frac_bits, ftz, False, False)


@njit(cache=True)
def _isqrt(m):
    """``floor(sqrt(m))`` for ``0 <= m < 2**62``: a float64 estimate corrected in integers."""
    r = np.int64(np.sqrt(np.float64(m)))
    while r * r > m:
        r -= 1
    while (r + 1) * (r + 1) <= m:
        r += 1
    return r


@njit(cache=True)
def fp_sqrt(a, exp_bits, frac_bits, rnd, ftz):
    """``sqrt(a)`` rounded once (IEEE 754); ``sqrt(-0) == -0``, a negative non-zero input gives NaN.

    >>> hex(fp_sqrt(0x4400, 5, 10, RN, False)), hex(fp_sqrt(0x8000, 5, 10, RN, False))   # sqrt(4), sqrt(-0)
    ('0x4000', '0x8000')
    """
    if ftz:
        a = flush_subnormal(a, exp_bits, frac_bits)
    na, sa, ea, ca = decode(a, exp_bits, frac_bits)
    if ca == NAN or (na == 1 and not (ca == FINITE and sa == 0)):
        return canonical_nan(exp_bits, frac_bits)
    if ca == INF or sa == 0:
        return np.int64(a) & ((np.int64(1) << (exp_bits + frac_bits + 1)) - 1)
    sa, ea = _normalise(sa, ea, frac_bits)
    p = ea - frac_bits                    # a == sa * 2**p
    t = frac_bits + 5                     # sa << t has 2 * (frac_bits + 3) bits: a root of frac_bits + 3
    if (p - t) & 1:
        t += 1
    m = sa << t
    root = _isqrt(m)
    sticky = np.int64(1) if root * root != m else np.int64(0)
    r = round_bits(0, 2 * root + sticky, (p - t) // 2 - 1, exp_bits, frac_bits, rnd)
    return finish(r, exp_bits, frac_bits, ftz, False, False)


# ---- f32 ------------------------------------------------------------------------------------------

@njit(cache=True)
def f32_fma(a, b, c, rnd, ftz, sat):
    """``fma{.rnd}{.ftz}{.sat}.f32 d, a, b, c`` (and ``mad``): bits in, bits out."""
    return np.uint32(finish(fp_fma(a, b, c, _FMA, 8, 23, rnd, ftz), 8, 23, False, sat, False))


@njit(cache=True)
def f32_mul(a, b, rnd, ftz, sat):
    """``mul{.rnd}{.ftz}{.sat}.f32 d, a, b``."""
    return np.uint32(finish(fp_fma(a, b, 0, _MUL, 8, 23, rnd, ftz), 8, 23, False, sat, False))


@njit(cache=True)
def f32_add(a, b, rnd, ftz, sat):
    """``add{.rnd}{.ftz}{.sat}.f32 d, a, b``: exactly ``fma(a, 1.0, b)``."""
    return np.uint32(finish(fp_fma(a, 0x3F800000, b, _FMA, 8, 23, rnd, ftz), 8, 23, False, sat, False))


@njit(cache=True)
def f32_sub(a, b, rnd, ftz, sat):
    """``sub{.rnd}{.ftz}{.sat}.f32 d, a, b``: ``a + (-b)`` (the sign of a NaN ``b`` does not matter)."""
    return f32_add(a, np.int64(b) ^ 0x80000000, rnd, ftz, sat)


@njit(cache=True)
def f32_div(a, b, rnd, ftz):
    """``div{.rnd}{.ftz}.f32 d, a, b`` with ``.rnd`` in ``.rn .rz .rm .rp`` (IEEE 754 division)."""
    return np.uint32(fp_div(a, b, 8, 23, rnd, ftz))


@njit(cache=True)
def f32_rcp(a, rnd, ftz):
    """``rcp{.rnd}{.ftz}.f32 d, a``: ``1.0 / a`` rounded once."""
    return np.uint32(fp_div(0x3F800000, a, 8, 23, rnd, ftz))


@njit(cache=True)
def f32_sqrt(a, rnd, ftz):
    """``sqrt{.rnd}{.ftz}.f32 d, a``."""
    return np.uint32(fp_sqrt(a, 8, 23, rnd, ftz))


# ---- f16 and bf16, scalar and packed --------------------------------------------------------------
# PTX: add/sub/mul/fma on .f16/.f16x2 take .rn (and .ftz, .sat; fma also .relu); on .bf16/.bf16x2
# .rn only (fma also .relu). The rounding argument is kept for the PTX dispatch's uniform call.

@njit(cache=True)
def _h_fma(a, b, c, op, eb, fb, rnd, ftz, sat, relu):
    return finish(fp_fma(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF, op, eb, fb, rnd, ftz), eb, fb, False, sat, relu)


@njit(cache=True)
def f16_fma(a, b, c, rnd, ftz, sat, relu):
    """``fma.rn{.ftz}{.sat|.relu}.f16 d, a, b, c`` on the low 16 bits."""
    return np.uint32(_h_fma(a, b, c, _FMA, 5, 10, rnd, ftz, sat, relu))


@njit(cache=True)
def f16_mul(a, b, rnd, ftz, sat):
    """``mul.rn{.ftz}{.sat}.f16``."""
    return np.uint32(_h_fma(a, b, 0, _MUL, 5, 10, rnd, ftz, sat, False))


@njit(cache=True)
def f16_add(a, b, rnd, ftz, sat):
    """``add.rn{.ftz}{.sat}.f16``: ``fma(a, 1.0, b)``."""
    return np.uint32(_h_fma(a, 0x3C00, b, _FMA, 5, 10, rnd, ftz, sat, False))


@njit(cache=True)
def f16_sub(a, b, rnd, ftz, sat):
    """``sub.rn{.ftz}{.sat}.f16``."""
    return f16_add(a, np.int64(b) ^ 0x8000, rnd, ftz, sat)


@njit(cache=True)
def bf16_fma(a, b, c, rnd, relu):
    """``fma.rn{.relu}.bf16 d, a, b, c`` on the low 16 bits."""
    return np.uint32(_h_fma(a, b, c, _FMA, 8, 7, rnd, False, False, relu))


@njit(cache=True)
def bf16_mul(a, b, rnd):
    """``mul.rn.bf16``."""
    return np.uint32(_h_fma(a, b, 0, _MUL, 8, 7, rnd, False, False, False))


@njit(cache=True)
def bf16_add(a, b, rnd):
    """``add.rn.bf16``: ``fma(a, 1.0, b)``."""
    return np.uint32(_h_fma(a, 0x3F80, b, _FMA, 8, 7, rnd, False, False, False))


@njit(cache=True)
def bf16_sub(a, b, rnd):
    """``sub.rn.bf16``."""
    return bf16_add(a, np.int64(b) ^ 0x8000, rnd)


@njit(cache=True)
def _pack(hi, lo):
    return np.uint32(((np.int64(hi) & 0xFFFF) << 16) | (np.int64(lo) & 0xFFFF))


@njit(cache=True)
def f16x2_fma(a, b, c, rnd, ftz, sat, relu):
    """``fma.rn{.ftz}{.sat|.relu}.f16x2``: each half on its own.

    >>> hex(f16x2_fma(0x3C004000, 0x40003C00, 0x3C00BC00, RN, False, False, False))   # (1*2+1, 2*1-1)
    '0x42003c00'
    """
    a, b, c = np.int64(a), np.int64(b), np.int64(c)
    return _pack(f16_fma(a >> 16, b >> 16, c >> 16, rnd, ftz, sat, relu), f16_fma(a, b, c, rnd, ftz, sat, relu))


@njit(cache=True)
def f16x2_mul(a, b, rnd, ftz, sat):
    """``mul.rn{.ftz}{.sat}.f16x2``."""
    a, b = np.int64(a), np.int64(b)
    return _pack(f16_mul(a >> 16, b >> 16, rnd, ftz, sat), f16_mul(a, b, rnd, ftz, sat))


@njit(cache=True)
def f16x2_add(a, b, rnd, ftz, sat):
    """``add.rn{.ftz}{.sat}.f16x2``."""
    a, b = np.int64(a), np.int64(b)
    return _pack(f16_add(a >> 16, b >> 16, rnd, ftz, sat), f16_add(a, b, rnd, ftz, sat))


@njit(cache=True)
def f16x2_sub(a, b, rnd, ftz, sat):
    """``sub.rn{.ftz}{.sat}.f16x2``."""
    return f16x2_add(a, np.int64(b) ^ 0x80008000, rnd, ftz, sat)


@njit(cache=True)
def bf16x2_fma(a, b, c, rnd, relu):
    """``fma.rn{.relu}.bf16x2``."""
    a, b, c = np.int64(a), np.int64(b), np.int64(c)
    return _pack(bf16_fma(a >> 16, b >> 16, c >> 16, rnd, relu), bf16_fma(a, b, c, rnd, relu))


@njit(cache=True)
def bf16x2_mul(a, b, rnd):
    """``mul.rn.bf16x2``."""
    a, b = np.int64(a), np.int64(b)
    return _pack(bf16_mul(a >> 16, b >> 16, rnd), bf16_mul(a, b, rnd))


@njit(cache=True)
def bf16x2_add(a, b, rnd):
    """``add.rn.bf16x2``."""
    a, b = np.int64(a), np.int64(b)
    return _pack(bf16_add(a >> 16, b >> 16, rnd), bf16_add(a, b, rnd))


@njit(cache=True)
def bf16x2_sub(a, b, rnd):
    """``sub.rn.bf16x2``."""
    return bf16x2_add(a, np.int64(b) ^ 0x80008000, rnd)
