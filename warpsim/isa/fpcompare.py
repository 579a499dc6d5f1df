"""PTX float selection, sign and comparison instructions, bit-exact: min max abs neg copysign testp setp set.

None of these rounds; each is a choice among its inputs, a sign change, or a predicate. One model
serves f32, f16 and bf16 (``exp_bits``, ``frac_bits``); packed x2 forms apply it to each half.

- ``min``/``max`` (PTX "min", "max"): of a NaN and a number, the number; of two NaNs, the canonical
  NaN (all bits set but the sign); with ``.NaN``, any NaN input gives the canonical NaN. ``-0.0`` is
  taken as less than ``+0.0`` (assumed: see docs/numerics.md). ``.xorsign.abs``: the min/max of
  ``|a|`` and ``|b|`` with the sign bit set to ``sign(a) xor sign(b)``, unless the result is a NaN
  (PTX: the canonical NaN, its sign left alone). ``.ftz`` reads subnormal inputs as
  zeros of their sign (a result is an input, so it is then never subnormal).
- ``abs``/``neg``: the sign bit cleared / flipped; a NaN input gives the canonical NaN (PTX leaves
  the NaN unspecified; the H200 returns ``0x7FFFFFFF`` / ``0x7FFF`` whatever the sign and payload).
  ``.ftz`` first flushes a subnormal input to a zero of its sign.
- ``copysign d, a, b``: ``b`` with the sign bit of ``a``.
- ``testp.{finite,infinite,number,notanumber,normal,subnormal}``: the class of the input bits.
  ``normal`` is true for ``+0`` and ``-0`` as well (the H200; PTX does not say), ``subnormal`` false.
- ``setp``/``set``: IEEE 754 comparisons; ``-0 == +0``; ordered ones (``eq ne lt le gt ge``) are false
  when either input is NaN, unordered ones (``equ neu ltu leu gtu geu``) true; ``num``: neither is
  NaN; ``nan``: either is. ``.ftz`` flushes subnormal inputs first. On x2 types ``setp ... p|q``
  writes the lower halves' result to ``p`` and the upper halves' to ``q`` (PTX ISA, "Half Precision
  Comparison Instructions: setp": ``p`` from ``a[0:15]``, ``b[0:15]``; the H200 agrees).

Which of these rules the H200 confirms, and which are assumed, is listed in docs/numerics.md.

>>> hex(f32_min(0x7FC00000, 0xBF800000, False, False, False))   # NaN and -1: -1
'0xbf800000'
>>> hex(f32_min(0x7FC00000, 0xBF800000, False, True, False))    # .NaN
'0x7fffffff'
>>> hex(f32_max(0x80000000, 0x00000000, False, False, False))   # max(-0, +0) = +0
'0x0'
>>> hex(f32_min(0xC0000000, 0x3F800000, False, False, True))    # .xorsign.abs: -min(2, 1)
'0xbf800000'
>>> bool(f32_setp(0x7FC00000, 0x3F800000, CMP["ltu"], False)), bool(f32_setp(0x80000000, 0, CMP["eq"], False))
(True, True)
>>> bool(f32_testp(0x00000001, TESTP["subnormal"])), bool(f32_testp(0x00000001, TESTP["normal"]))
(True, False)
>>> bool(f32_testp(0x80000000, TESTP["normal"])), bool(f32_testp(0, TESTP["subnormal"]))   # zeros
(True, False)
"""

import numpy as np
from numba import njit

from warpsim.isa.fparith import canonical_nan, flush_subnormal

__all__ = [
    "CMP", "TESTP", "cmp_code", "class_code",
    "fp_minmax", "fp_compare", "fp_testp", "fp_sign",
    "f32_min", "f32_max", "f32_abs", "f32_neg", "f32_copysign", "f32_testp", "f32_setp", "f32_set",
    "f16_min", "f16_max", "bf16_min", "bf16_max", "f16x2_min", "f16x2_max", "bf16x2_min", "bf16x2_max",
    "f16_abs", "f16_neg", "bf16_abs", "bf16_neg", "f16x2_abs", "f16x2_neg", "bf16x2_abs", "bf16x2_neg",
    "f16_setp", "bf16_setp", "f16x2_setp", "bf16x2_setp", "f16x2_set", "bf16x2_set",
]

CMP = {name: code for code, name in enumerate(
    ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"))}
TESTP = {name: code for code, name in enumerate(
    ("finite", "infinite", "number", "notanumber", "normal", "subnormal"))}


def cmp_code(name):
    """The code of a comparison operator of ``setp``/``set`` (``"lt"`` or ``".lt"``).

    >>> cmp_code(".geu") == CMP["geu"]
    True
    """
    key = name[1:] if isinstance(name, str) and name.startswith(".") else name
    if key not in CMP:
        raise ValueError(f"setp: comparison {name!r} is not one of {', '.join('.' + k for k in CMP)}")
    return CMP[key]


def class_code(name):
    """The code of a ``testp`` class (``"finite"`` or ``".finite"``)."""
    key = name[1:] if isinstance(name, str) and name.startswith(".") else name
    if key not in TESTP:
        raise ValueError(f"testp: class {name!r} is not one of {', '.join('.' + k for k in TESTP)}")
    return TESTP[key]


@njit(cache=True)
def _is_nan(bits, exp_bits, frac_bits):
    return (np.int64(bits) & ((np.int64(1) << (exp_bits + frac_bits)) - 1)) > (
        ((np.int64(1) << exp_bits) - 1) << frac_bits)


@njit(cache=True)
def _order_key(bits, exp_bits, frac_bits):
    """An integer increasing with the value of non-NaN ``bits``, ``-0`` just below ``+0``."""
    signs = exp_bits + frac_bits
    mag = np.int64(bits) & ((np.int64(1) << signs) - 1)
    if (np.int64(bits) >> signs) & 1:
        return -2 * mag - 1
    return 2 * mag


@njit(cache=True)
def _value_key(bits, exp_bits, frac_bits):
    """An integer increasing with the value of non-NaN ``bits``, both zeros 0."""
    signs = exp_bits + frac_bits
    mag = np.int64(bits) & ((np.int64(1) << signs) - 1)
    return -mag if (np.int64(bits) >> signs) & 1 else mag


@njit(cache=True)
def fp_minmax(a, b, exp_bits, frac_bits, is_max, ftz, nan_mode, xorsign_abs):
    """``min``/``max{.ftz}{.NaN}{.xorsign.abs}`` of ``a`` and ``b`` bits (see the module docstring).

    >>> hex(fp_minmax(0x7E00, 0x7C01, 5, 10, False, False, False, False))   # two NaNs: canonical
    '0x7fff'
    """
    signs = exp_bits + frac_bits
    a, b = np.int64(a), np.int64(b)
    if ftz:
        a = flush_subnormal(a, exp_bits, frac_bits)
        b = flush_subnormal(b, exp_bits, frac_bits)
    sign = np.int64(0)
    if xorsign_abs:
        sign = ((a ^ b) >> signs) & 1
        mask = (np.int64(1) << signs) - 1
        a, b = a & mask, b & mask
    a_nan, b_nan = _is_nan(a, exp_bits, frac_bits), _is_nan(b, exp_bits, frac_bits)
    if (a_nan and b_nan) or (nan_mode and (a_nan or b_nan)):
        return canonical_nan(exp_bits, frac_bits)
    if a_nan:
        r = b
    elif b_nan:
        r = a
    else:
        a_less = _order_key(a, exp_bits, frac_bits) < _order_key(b, exp_bits, frac_bits)
        r = (b if a_less else a) if is_max else (a if a_less else b)
    return r | (sign << signs)


@njit(cache=True)
def fp_compare(a, b, exp_bits, frac_bits, cmp, ftz):
    """``setp.{cmp}{.ftz}`` of ``a`` and ``b`` bits: a bool (see the module docstring for ``cmp``)."""
    if ftz:
        a = flush_subnormal(a, exp_bits, frac_bits)
        b = flush_subnormal(b, exp_bits, frac_bits)
    unordered = _is_nan(a, exp_bits, frac_bits) or _is_nan(b, exp_bits, frac_bits)
    if cmp == 12:     # num
        return not unordered
    if cmp == 13:     # nan
        return unordered
    if unordered:
        return cmp >= 6
    ka = _value_key(a, exp_bits, frac_bits)
    kb = _value_key(b, exp_bits, frac_bits)
    base = cmp - 6 if cmp >= 6 else cmp
    if base == 0:
        return ka == kb
    if base == 1:
        return ka != kb
    if base == 2:
        return ka < kb
    if base == 3:
        return ka <= kb
    if base == 4:
        return ka > kb
    return ka >= kb


@njit(cache=True)
def fp_testp(a, exp_bits, frac_bits, cls):
    """``testp.{cls}`` of ``a`` bits (codes from ``TESTP``)."""
    a = np.int64(a)
    e = (a >> frac_bits) & ((np.int64(1) << exp_bits) - 1)
    f = a & ((np.int64(1) << frac_bits) - 1)
    top = (np.int64(1) << exp_bits) - 1
    if cls == 0:
        return e != top
    if cls == 1:
        return e == top and f == 0
    if cls == 2:
        return not (e == top and f != 0)
    if cls == 3:
        return e == top and f != 0
    if cls == 4:   # finite and not subnormal: zeros count as normal (the H200)
        return e != top and not (e == 0 and f != 0)
    return e == 0 and f != 0


@njit(cache=True)
def fp_sign(a, exp_bits, frac_bits, ftz, negate):
    """``neg`` (``negate``) or ``abs{.ftz}`` of ``a`` bits: the sign bit flipped or cleared; a NaN gives
    the canonical NaN (the H200, see docs/numerics.md).

    >>> hex(fp_sign(0x3C00, 5, 10, False, True)), hex(fp_sign(0xFC01, 5, 10, False, False))
    ('0xbc00', '0x7fff')
    """
    a = np.int64(a)
    if ftz:
        a = flush_subnormal(a, exp_bits, frac_bits)
    signbit = np.int64(1) << (exp_bits + frac_bits)
    if _is_nan(a, exp_bits, frac_bits):
        return canonical_nan(exp_bits, frac_bits)
    return a ^ signbit if negate else a & (signbit - 1)


# ---- f32 ------------------------------------------------------------------------------------------

@njit(cache=True)
def f32_min(a, b, ftz, nan_mode, xorsign_abs):
    """``min{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b``."""
    return np.uint32(fp_minmax(a, b, 8, 23, False, ftz, nan_mode, xorsign_abs))


@njit(cache=True)
def f32_max(a, b, ftz, nan_mode, xorsign_abs):
    """``max{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b``."""
    return np.uint32(fp_minmax(a, b, 8, 23, True, ftz, nan_mode, xorsign_abs))


@njit(cache=True)
def f32_abs(a, ftz):
    """``abs{.ftz}.f32 d, a``."""
    return np.uint32(fp_sign(a, 8, 23, ftz, False))


@njit(cache=True)
def f32_neg(a, ftz):
    """``neg{.ftz}.f32 d, a``."""
    return np.uint32(fp_sign(a, 8, 23, ftz, True))


@njit(cache=True)
def f32_copysign(a, b):
    """``copysign.f32 d, a, b``: ``b`` with the sign of ``a``.

    >>> hex(f32_copysign(0x80000000, 0x3F800000))
    '0xbf800000'
    """
    return np.uint32((np.int64(a) & 0x80000000) | (np.int64(b) & 0x7FFFFFFF))


@njit(cache=True)
def f32_testp(a, cls):
    """``testp.{cls}.f32 p, a``."""
    return fp_testp(a, 8, 23, cls)


@njit(cache=True)
def f32_setp(a, b, cmp, ftz):
    """``setp.{cmp}{.ftz}.f32 p, a, b``."""
    return fp_compare(a, b, 8, 23, cmp, ftz)


@njit(cache=True)
def f32_set(a, b, cmp, ftz, as_float):
    """``set.{cmp}{.ftz}.{u32,f32}.f32 d, a, b``: ``0xFFFFFFFF``/``0`` (u32, s32) or ``1.0``/``0.0`` (f32).

    >>> hex(f32_set(0, 0x3F800000, CMP["lt"], False, True)), hex(f32_set(0, 0x3F800000, CMP["lt"], False, False))
    ('0x3f800000', '0xffffffff')
    """
    if fp_compare(a, b, 8, 23, cmp, ftz):
        return np.uint32(0x3F800000 if as_float else 0xFFFFFFFF)
    return np.uint32(0)


# ---- f16 and bf16 ---------------------------------------------------------------------------------

@njit(cache=True)
def _pack(hi, lo):
    return np.uint32(((np.int64(hi) & 0xFFFF) << 16) | (np.int64(lo) & 0xFFFF))


@njit(cache=True)
def f16_min(a, b, ftz, nan_mode, xorsign_abs):
    """``min{.ftz}{.NaN}{.xorsign.abs}.f16`` on the low 16 bits."""
    return np.uint32(fp_minmax(np.int64(a) & 0xFFFF, np.int64(b) & 0xFFFF, 5, 10, False, ftz, nan_mode, xorsign_abs))


@njit(cache=True)
def f16_max(a, b, ftz, nan_mode, xorsign_abs):
    """``max{.ftz}{.NaN}{.xorsign.abs}.f16``."""
    return np.uint32(fp_minmax(np.int64(a) & 0xFFFF, np.int64(b) & 0xFFFF, 5, 10, True, ftz, nan_mode, xorsign_abs))


@njit(cache=True)
def bf16_min(a, b, nan_mode, xorsign_abs):
    """``min{.NaN}{.xorsign.abs}.bf16``."""
    return np.uint32(fp_minmax(np.int64(a) & 0xFFFF, np.int64(b) & 0xFFFF, 8, 7, False, False, nan_mode, xorsign_abs))


@njit(cache=True)
def bf16_max(a, b, nan_mode, xorsign_abs):
    """``max{.NaN}{.xorsign.abs}.bf16``."""
    return np.uint32(fp_minmax(np.int64(a) & 0xFFFF, np.int64(b) & 0xFFFF, 8, 7, True, False, nan_mode, xorsign_abs))


@njit(cache=True)
def f16x2_min(a, b, ftz, nan_mode, xorsign_abs):
    """``min{.ftz}{.NaN}{.xorsign.abs}.f16x2``: each half on its own."""
    a, b = np.int64(a), np.int64(b)
    return _pack(f16_min(a >> 16, b >> 16, ftz, nan_mode, xorsign_abs), f16_min(a, b, ftz, nan_mode, xorsign_abs))


@njit(cache=True)
def f16x2_max(a, b, ftz, nan_mode, xorsign_abs):
    """``max{.ftz}{.NaN}{.xorsign.abs}.f16x2``."""
    a, b = np.int64(a), np.int64(b)
    return _pack(f16_max(a >> 16, b >> 16, ftz, nan_mode, xorsign_abs), f16_max(a, b, ftz, nan_mode, xorsign_abs))


@njit(cache=True)
def bf16x2_min(a, b, nan_mode, xorsign_abs):
    """``min{.NaN}{.xorsign.abs}.bf16x2``."""
    a, b = np.int64(a), np.int64(b)
    return _pack(bf16_min(a >> 16, b >> 16, nan_mode, xorsign_abs), bf16_min(a, b, nan_mode, xorsign_abs))


@njit(cache=True)
def bf16x2_max(a, b, nan_mode, xorsign_abs):
    """``max{.NaN}{.xorsign.abs}.bf16x2``."""
    a, b = np.int64(a), np.int64(b)
    return _pack(bf16_max(a >> 16, b >> 16, nan_mode, xorsign_abs), bf16_max(a, b, nan_mode, xorsign_abs))


@njit(cache=True)
def f16_abs(a, ftz):
    """``abs{.ftz}.f16``."""
    return np.uint32(fp_sign(np.int64(a) & 0xFFFF, 5, 10, ftz, False))


@njit(cache=True)
def f16_neg(a, ftz):
    """``neg{.ftz}.f16``."""
    return np.uint32(fp_sign(np.int64(a) & 0xFFFF, 5, 10, ftz, True))


@njit(cache=True)
def bf16_abs(a):
    """``abs.bf16``."""
    return np.uint32(fp_sign(np.int64(a) & 0xFFFF, 8, 7, False, False))


@njit(cache=True)
def bf16_neg(a):
    """``neg.bf16``."""
    return np.uint32(fp_sign(np.int64(a) & 0xFFFF, 8, 7, False, True))


@njit(cache=True)
def f16x2_abs(a, ftz):
    """``abs{.ftz}.f16x2``."""
    return _pack(f16_abs(np.int64(a) >> 16, ftz), f16_abs(a, ftz))


@njit(cache=True)
def f16x2_neg(a, ftz):
    """``neg{.ftz}.f16x2``."""
    return _pack(f16_neg(np.int64(a) >> 16, ftz), f16_neg(a, ftz))


@njit(cache=True)
def bf16x2_abs(a):
    """``abs.bf16x2``."""
    return _pack(bf16_abs(np.int64(a) >> 16), bf16_abs(a))


@njit(cache=True)
def bf16x2_neg(a):
    """``neg.bf16x2``."""
    return _pack(bf16_neg(np.int64(a) >> 16), bf16_neg(a))


@njit(cache=True)
def f16_setp(a, b, cmp, ftz):
    """``setp.{cmp}{.ftz}.f16 p, a, b`` on the low 16 bits."""
    return fp_compare(np.int64(a) & 0xFFFF, np.int64(b) & 0xFFFF, 5, 10, cmp, ftz)


@njit(cache=True)
def bf16_setp(a, b, cmp):
    """``setp.{cmp}.bf16 p, a, b``."""
    return fp_compare(np.int64(a) & 0xFFFF, np.int64(b) & 0xFFFF, 8, 7, cmp, False)


@njit(cache=True)
def f16x2_setp(a, b, cmp, ftz):
    """``setp.{cmp}{.ftz}.f16x2 p|q, a, b``: ``(p, q)``, ``p`` from the lower halves, ``q`` the upper.

    >>> f16x2_setp(0x3C000000, 0x00003C00, CMP["gt"], False)   # (lower: 0 > 1, upper: 1 > 0)
    (False, True)
    """
    a, b = np.int64(a), np.int64(b)
    return f16_setp(a, b, cmp, ftz), f16_setp(a >> 16, b >> 16, cmp, ftz)


@njit(cache=True)
def bf16x2_setp(a, b, cmp):
    """``setp.{cmp}.bf16x2 p|q, a, b``: ``(p, q)`` as for ``f16x2_setp``."""
    a, b = np.int64(a), np.int64(b)
    return bf16_setp(a, b, cmp), bf16_setp(a >> 16, b >> 16, cmp)


@njit(cache=True)
def f16x2_set(a, b, cmp, ftz, as_float):
    """``set.{cmp}{.ftz}.{f16x2,u32}.f16x2 d, a, b``: per half ``1.0``/``0.0`` (f16x2) or ``0xFFFF``/``0``.

    >>> hex(f16x2_set(0x3C000000, 0x00003C00, CMP["gt"], False, True))
    '0x3c000000'
    """
    lo, hi = f16x2_setp(a, b, cmp, ftz)
    true = 0x3C00 if as_float else 0xFFFF
    return _pack(true if hi else 0, true if lo else 0)


@njit(cache=True)
def bf16x2_set(a, b, cmp, as_float):
    """``set.{cmp}.{bf16x2,u32}.bf16x2 d, a, b``: per half ``1.0``/``0.0`` (bf16x2) or ``0xFFFF``/``0``."""
    lo, hi = bf16x2_setp(a, b, cmp)
    true = 0x3F80 if as_float else 0xFFFF
    return _pack(true if hi else 0, true if lo else 0)
