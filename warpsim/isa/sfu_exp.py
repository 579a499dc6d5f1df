"""``MUFU.EX2`` and ``MUFU.LG2`` of sm_90 as the SFU computes them: a quadratic per segment, in fixed point.

Both functions reduce the input to a 23-bit argument ``f`` and split it into a segment ``s = f >> 17``
(64 segments) and an offset ``u = f mod 2**17``. One accumulator sums, in integers,

    S = c0[s] * 2**A0  +  c1[s] * u * 2**A1  ±  c2[s] * sq(u)  +  B

where ``sq(u)`` is the SFU's truncated squarer: ``u * u`` without the partial products' bits in its 19
lowest columns (:func:`truncated_square`), and ``B`` one constant per function. Then:

======  ======================================  ===============================================================
MUFU    argument ``f``                          result
======  ======================================  ===============================================================
EX2     ``floor(|x| * 2**23) mod 2**23``; for   ``A0 = 32, A1 = 19, +``: 1.0 is ``2**57``; the mantissa is
        ``x < 0`` (and ``f != 0``) its one's   ``S``'s bits 34..56, the exponent ``n`` (``n + 1`` below zero)
        complement ``2**23 - 1 - f``            from the integer part of ``|x|``
LG2     the mantissa of ``x = 2**k * m``        ``A0 = 30, A1 = 18, -``: 1.0 is ``2**56``; ``|S + k * 2**56|``
                                                without its 20 lowest bits, normalised toward zero (sign:
                                                ``k < 0``); ``x = 1`` alone gives +0
======  ======================================  ===============================================================

This is the datapath that the ``ptx-math`` project (github bcarlet/ptx-math) found for sm_5x..sm_75; the
H200 follows it at every key (docs/numerics.md, "MUFU.EX2 and MUFU.LG2"). The coefficients
(``data/sfu_exp_sm90.json``, 64 x 3 integers and ``B`` per function) are solved from the H200's results by
``python -m warpsim.isa.sfu_exp_derive --from PROBE_DIR`` (``warpsim.isa.sfu_exp_derive``; a
``hwcheck.campaigns.mufu32_probe`` run), which refuses to write them unless the model then gives the H200's result at
every key. LG2's sum for ``m = 0``
is about ``2**-23.2``, not 0: ``lg2(0.5) = -0.99999988`` and ``lg2(2**-126) = -125.99999``.

Proven on: sm_90, by equality with the lookup model the H200 matched on all 2**32 inputs (0 differences on
all 2**32 inputs, offline); the H200 sweep of this code itself is pending. sm_80: assumed (same SASS).

>>> t = ex2_coefficients()
>>> hex(mufu_ex2(0x3F800000, t)), hex(mufu_ex2(0xBF800000, t)), hex(mufu_ex2(0x3F000000, t))
('0x40000000', '0x3f000000', '0x3fb504f3')
>>> t = lg2_coefficients()
>>> hex(mufu_lg2(0x41000000, t)), hex(mufu_lg2(0x00800000, t)), hex(mufu_lg2(0x3F000000, t))
('0x40400000', '0xc2fbffff', '0xbf7ffffe')
"""

from __future__ import annotations

import json
import os

import numpy as np
from numba import njit

from warpsim.isa.floats import bit_length

__all__ = ["SEGMENT_BITS", "OFFSET_BITS", "SQUARER_DROPPED_COLUMNS", "DATAPATHS", "LG2_CUT_BITS", "DATA",
           "truncated_square", "ex2_mantissa", "lg2_sum", "mufu_ex2", "mufu_lg2", "ex2_coefficients",
           "lg2_coefficients", "pack"]

SEGMENT_BITS = 6                   # the argument's top bits: 64 segments, one (c0, c1, c2) each
OFFSET_BITS = 17                   # the offset u within a segment: 23 - SEGMENT_BITS bits
SQUARER_DROPPED_COLUMNS = 19       # sq(u) leaves out every partial-product bit of weight below 2**19
_OFFSET_MASK = (1 << OFFSET_BITS) - 1
_DROPPED_MASK = (1 << SQUARER_DROPPED_COLUMNS) - 1
DATA = os.path.join(os.path.dirname(__file__), "data", "sfu_exp_sm90.json")

_NAN = np.uint32(0x7FFFFFFF)       # the canonical NaN every MUFU returns
_INF = np.uint32(0x7F800000)
_ONE = np.uint32(0x3F800000)


# (c0 shift, c1 shift, sign of the c2 term, the weight of 1.0) of each function's accumulator
EX2_C0_SHIFT, EX2_C1_SHIFT, EX2_ONE = 32, 19, 57
LG2_C0_SHIFT, LG2_C1_SHIFT, LG2_ONE = 30, 18, 56
DATAPATHS = {"ex2": (EX2_C0_SHIFT, EX2_C1_SHIFT, 1, EX2_ONE), "lg2": (LG2_C0_SHIFT, LG2_C1_SHIFT, -1, LG2_ONE)}
LG2_CUT_BITS = 20                  # LG2 clears the 20 lowest bits of |S + k * 2**56| before normalising


# -- the datapath ------------------------------------------------------------------------------------------------

@njit(cache=True)
def truncated_square(u):
    """``u * u`` (``u < 2**17``) as the SFU's squarer gives it: the bits of its partial products (``u_i`` at
    column ``2i``; ``u_i * u_j``, ``i < j``, doubled, at ``i + j + 1``) in columns below 19 are dropped.

    >>> truncated_square(0), truncated_square(1 << 16), truncated_square(3)
    (0, 4294967296, 0)
    >>> truncated_square((1 << 17) - 1) == ((1 << 17) - 1) ** 2 - 4456449
    True
    """
    u = np.int64(u)
    dropped = np.int64(0)
    for i in range(SQUARER_DROPPED_COLUMNS // 2 + 1):             # rows starting below column 19
        row = (((u >> (i + 1)) << (2 * i + 2)) | (np.int64(1) << (2 * i))) & _DROPPED_MASK
        dropped += row & -((u >> i) & 1)
    return u * u - dropped


@njit(cache=True)
def _accumulate(f, t, c0_shift, c1_shift, c2_sign):
    s = 1 + 3 * (f >> OFFSET_BITS)
    u = f & _OFFSET_MASK
    return ((np.int64(t[s]) << c0_shift) + ((np.int64(t[s + 1]) * u) << c1_shift)
            + c2_sign * np.int64(t[s + 2]) * truncated_square(u) + np.int64(t[0]))


@njit(cache=True)
def ex2_mantissa(f, t):
    """The 23-bit mantissa of ``2**(f / 2**23)`` (``0 <= f < 2**23``) that ``MUFU.EX2`` gives: ``S``'s bits
    34..56. ``t``: the EX2 coefficients (:func:`pack`)."""
    return np.uint32((_accumulate(np.int64(f), t, EX2_C0_SHIFT, EX2_C1_SHIFT, 1) >> (EX2_ONE - 23)) & 0x7FFFFF)


@njit(cache=True)
def lg2_sum(m, t):
    """``log2(1 + m / 2**23)`` times ``2**56`` as ``MUFU.LG2``'s accumulator holds it (``0 <= m < 2**23``).
    ``t``: the LG2 coefficients (:func:`pack`)."""
    return _accumulate(np.int64(m), t, LG2_C0_SHIFT, LG2_C1_SHIFT, -1)


@njit(cache=True, inline="always")        # inlined: the PTX forms wrap it element by element
def mufu_ex2(a, t):
    """``MUFU.EX2``: ``2**x``, subnormal inputs read as 0, results below ``2**-126`` flushed to +0.
    ``t``: the EX2 coefficients (:func:`ex2_coefficients`)."""
    a = np.uint32(a)
    s, e, m = a >> 31, np.int64((a >> 23) & 0xFF), np.int64(a & 0x7FFFFF)
    if e == 0xFF:
        return _NAN if m else (np.uint32(0) if s else _INF)
    if e == 0:
        return _ONE
    sh = e - 127
    if sh >= 8:                                   # |x| >= 256
        return np.uint32(0) if s else _INF
    mm = m | 0x800000
    q = mm << sh if sh >= 0 else (mm >> -sh if sh > -24 else np.int64(0))
    n, f = q >> 23, q & 0x7FFFFF
    if s == 0:
        eo = 127 + n
        return _INF if eo >= 255 else np.uint32((eo << 23) | ex2_mantissa(f, t))
    if f == 0:
        eo = 127 - n
        return np.uint32(0) if eo <= 0 else np.uint32(eo << 23)
    eo = 126 - n
    return np.uint32(0) if eo <= 0 else np.uint32((eo << 23) | ex2_mantissa(0x7FFFFF - f, t))


@njit(cache=True, inline="always")        # inlined: the PTX forms wrap it element by element
def mufu_lg2(a, t):
    """``MUFU.LG2``: ``log2(x)``; subnormal inputs read as 0 (``-inf``), negative ones give NaN.
    ``t``: the LG2 coefficients (:func:`lg2_coefficients`)."""
    a = np.uint32(a)
    s, e, m = a >> 31, np.int64((a >> 23) & 0xFF), np.int64(a & 0x7FFFFF)
    if e == 0xFF:
        return _NAN if m or s else _INF
    if e == 0:
        return np.uint32(0xFF800000)
    if s:
        return _NAN
    if a == _ONE:                                 # exactly 1.0: +0 (the sum itself is not 0 there)
        return np.uint32(0)
    v = lg2_sum(m, t) + ((e - 127) << LG2_ONE)
    sign = np.int64(0)
    if v < 0:
        sign, v = np.int64(1), -v
    v &= ~np.int64((1 << LG2_CUT_BITS) - 1)
    p = bit_length(v) - 1
    mant = v >> (p - 23) if p >= 23 else v << (23 - p)
    return np.uint32((sign << 31) | ((p - LG2_ONE + 127) << 23) | (mant & 0x7FFFFF))


# -- the coefficients --------------------------------------------------------------------------------------------

def pack(coeffs: dict) -> np.ndarray:
    """One function's coefficients as the kernels read them: uint32 ``[B, c0[0], c1[0], c2[0], c0[1], ...]``.

    >>> pack({"bias": 5, "c0": [1, 2], "c1": [3, 4], "c2": [6, 7]}).tolist()
    [5, 1, 3, 6, 2, 4, 7]
    """
    rows = np.stack([np.asarray(coeffs[k], np.int64) for k in ("c0", "c1", "c2")], axis=1).ravel()
    out = np.concatenate([[int(coeffs["bias"])], rows])
    if out.min() < 0 or out.max() >= 1 << 32:
        raise ValueError(f"sfu_exp: coefficients outside 0..2**32-1: {out.min()}..{out.max()}")
    return out.astype(np.uint32)


_LOADED: dict = {}


def _coefficients(name: str, path: str) -> np.ndarray:
    key = (path, name)
    if key not in _LOADED:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: the MUFU.EX2/LG2 coefficients are missing; "
                                    f"`python -m warpsim.isa.sfu_exp_derive --from PROBE_DIR` writes them")
        with open(path) as f:
            _LOADED[key] = pack(json.load(f)[name])
    return _LOADED[key]


def ex2_coefficients(path: str = DATA) -> np.ndarray:
    """The EX2 coefficients of the H200 (:func:`pack`'s layout), loaded once per process."""
    return _coefficients("ex2", path)


def lg2_coefficients(path: str = DATA) -> np.ndarray:
    """The LG2 coefficients of the H200 (:func:`pack`'s layout), loaded once per process."""
    return _coefficients("lg2", path)
