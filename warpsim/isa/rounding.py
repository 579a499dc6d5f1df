"""PTX rounding modes, and the one rounding of an exact value into f16, bf16 or f32 bits.

The rounding modifiers of PTX (section "Rounding Modifiers") name four IEEE 754 directions and one
more: ``.rn`` nearest, ties to even; ``.rz`` toward zero; ``.rm`` toward -inf; ``.rp`` toward +inf;
``.rna`` nearest, ties away from zero (``cvt.rna.tf32.f32``). The integer-rounding forms of ``cvt``
(``.rni .rzi .rmi .rpi``) use the same directions; ``ROUNDING`` maps every name to its code.

``round_bits(neg, mag, lsb, exp_bits, frac_bits, rnd)`` rounds the exact value
``(-1)**neg * mag * 2**lsb`` (``mag`` a non-negative int64 below ``2**62``) once, IEEE 754 style:
subnormals are kept (gradual underflow), a zero keeps the sign given, and a value past the largest
finite one overflows as IEEE 754 section 7.4 says per direction: to an infinity for ``.rn``/``.rna``,
to the largest finite value for ``.rz``, and for ``.rm``/``.rp`` to the infinity on their side and the
largest finite value on the other.

Examples (f16: 5 exponent bits, 10 fraction bits; 1 + 3 * 2**-12 lies 3/4 of an ulp above 1.0):

>>> [hex(round_bits(0, 0x1003, -12, 5, 10, r)) for r in (RN, RZ, RM, RP, RNA)]
['0x3c01', '0x3c00', '0x3c00', '0x3c01', '0x3c01']
>>> [hex(round_bits(1, 0x1002, -12, 5, 10, r)) for r in (RN, RNA, RM, RP)]   # -(1 + 2**-11): a tie
['0xbc00', '0xbc01', '0xbc01', '0xbc00']
>>> [hex(round_bits(0, 1, 16, 5, 10, r)) for r in (RN, RZ, RM, RP)]          # 2**16 overflows
['0x7c00', '0x7bff', '0x7bff', '0x7c00']
"""

import numpy as np
from numba import njit

from warpsim.isa.floats import bit_length

__all__ = ["RN", "RZ", "RM", "RP", "RNA", "ROUNDING", "INT_ROUNDING", "rounding_code", "round_bits",
           "max_finite", "inf_bits"]

RN = 0    # nearest, ties to even
RZ = 1    # toward zero
RM = 2    # toward -inf
RP = 3    # toward +inf
RNA = 4   # nearest, ties away from zero
ROUNDING = {"rn": RN, "rz": RZ, "rm": RM, "rp": RP, "rna": RNA}
INT_ROUNDING = {"rni": RN, "rzi": RZ, "rmi": RM, "rpi": RP}   # cvt's round-to-integer forms


def rounding_code(name, allowed=("rn", "rz", "rm", "rp")):
    """The code of the rounding modifier ``name`` (with or without its dot), if ``allowed``.

    >>> rounding_code(".rz"), rounding_code("rpi", allowed=("rni", "rpi"))
    (1, 3)
    """
    key = name[1:] if isinstance(name, str) and name.startswith(".") else name
    if key not in allowed:
        raise ValueError(f"rounding modifier {name!r} is not one of {', '.join('.' + a for a in allowed)}")
    return {**ROUNDING, **INT_ROUNDING}[key]


@njit(cache=True)
def max_finite(neg, exp_bits, frac_bits):
    """Bits of the largest finite magnitude of a format, with sign ``neg``.

    >>> hex(max_finite(1, 5, 10)), hex(max_finite(0, 8, 23))
    ('0xfbff', '0x7f7fffff')
    """
    return ((np.int64(neg) << (exp_bits + frac_bits))
            | ((((np.int64(1) << exp_bits) - 1) << frac_bits) - 1))


@njit(cache=True)
def inf_bits(neg, exp_bits, frac_bits):
    """Bits of the infinity of a format, with sign ``neg``.

    >>> hex(inf_bits(1, 8, 23))
    '0xff800000'
    """
    return (np.int64(neg) << (exp_bits + frac_bits)) | (((np.int64(1) << exp_bits) - 1) << frac_bits)


@njit(cache=True)
def _round_up(neg, q, rem, shift, rnd):
    """Whether the truncated magnitude ``q`` moves up one ulp, ``rem`` being the ``shift`` bits cut off."""
    if rem == 0:
        return False
    if rnd == RZ:
        return False
    if rnd == RM:
        return neg != 0
    if rnd == RP:
        return neg == 0
    if shift > 63:            # rem < 2**62 <= half
        return False
    half = np.int64(1) << (shift - 1)
    if rnd == RNA:
        return rem >= half
    return rem > half or (rem == half and (q & 1) == 1)


@njit(cache=True)
def round_bits(neg, mag, lsb, exp_bits, frac_bits, rnd):
    """Bits of ``(-1)**neg * mag * 2**lsb`` rounded once by mode ``rnd`` (see the module docstring).

    Pre-conditions: ``0 <= mag < 2**62``; ``rnd`` one of ``RN RZ RM RP RNA``.
    Post-condition: for ``RN`` and ``RZ`` the bits equal ``floats.round_rne`` / ``floats.round_rz``.

    >>> hex(round_bits(1, 0, 0, 8, 23, RM))              # a zero keeps the sign given
    '0x80000000'
    >>> hex(round_bits(0, 1, -150, 8, 23, RP)), hex(round_bits(0, 1, -150, 8, 23, RN))
    ('0x1', '0x0')
    >>> hex(round_bits(1, 3, -150, 8, 23, RN))           # -1.5 * 2**-149: a tie, to even
    '0x80000002'
    """
    mag = np.int64(mag)
    sign = np.int64(neg) << (exp_bits + frac_bits)
    if mag == 0:
        return sign
    bias = (np.int64(1) << (exp_bits - 1)) - 1
    lead = lsb + bit_length(mag) - 1
    e = lead if lead > 1 - bias else 1 - bias
    shift = (e - frac_bits) - lsb              # right shift leaving frac_bits bits below 2**e
    if shift <= 0:
        m = mag << (-shift)                    # exact: m < 2**(frac_bits + 1)
    else:
        q = mag >> shift if shift < 63 else np.int64(0)
        rem = mag - (q << shift) if shift < 63 else mag
        m = q + np.int64(_round_up(neg, q, rem, shift, rnd))
    one = np.int64(1) << frac_bits
    if m >= 2 * one:                           # rounding carried into the next binade
        m >>= 1
        e += 1
    if m < one:                                # subnormal (or rounded to zero)
        return sign | m
    if e > bias:                               # overflow, IEEE 754 section 7.4
        to_inf = rnd == RN or rnd == RNA or (rnd == RP and neg == 0) or (rnd == RM and neg != 0)
        return inf_bits(neg, exp_bits, frac_bits) if to_inf else max_finite(neg, exp_bits, frac_bits)
    return sign | ((e + bias) << frac_bits) | (m - one)
