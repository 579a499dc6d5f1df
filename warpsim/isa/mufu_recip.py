"""``MUFU.RCP``, ``MUFU.RSQ``, ``MUFU.SQRT`` of sm_90 as the SFU computes them: quadratic interpolation in fixed point.

The model (one :class:`Datapath` per function, :data:`DATAPATHS`). The input's significand ``1.m`` (RSQ and
SQRT: scaled by the exponent's parity into [1, 4)) selects a *segment* by the top ``segment_bits`` of ``m``
(RSQ, SQRT: with the parity above them) and leaves the low bits ``xl``. With the segment's coefficients
``c0, c1, c2`` and the function's one constant ``bias``, in integers::

    sum = (c0 << a0) + s1 * (c1 * xl << a1) + s2 * (c2 * square(xl) << a2) + bias

where ``square`` is :func:`square_truncated` (RCP squares ``xl << 1`` and drops 2 bits of the square). The
result's significand is ``sum`` from its leading one (bit ``lead``; one higher only where the result is 1.0),
truncated to 24 bits; its exponent follows from the input's alone: RCP ``253 - e`` (``254 - e`` at 1.0), RSQ
``126 - k/2``, SQRT ``127 + k/2``, ``k`` the input's unbiased exponent made even downward. RSQ of ``4**n``
is ``2**-n`` exactly, outside the polynomial (whose exponent cannot hold 1.0).

Where it comes from. The datapath's shape (segment bits, term alignments, the truncated squarer, the one
bias) is the one bcarlet/ptx-math found for sm_5x..sm_75 by reverse engineering; on the H200 that published
model gives the H200's result at every key of the three functions (0 mismatches over the 2**23 + 2**24 +
2**24 keys of ``warpsim/isa/data/mufu32_sm90.npz``, checked offline on 2026-12-01; docs/numerics.md). The
coefficients are OURS, solved from the H200's results alone by ``warpsim.isa.mufu_recip_derive``
(``python -m warpsim.isa.mufu_recip_derive --derive-from PROBE_DIR_OR_NPZ``), which refuses to write unless
the model then equals the given results at every key; the result is ``data/mufu_recip_sm90.json`` (12 kB),
which :func:`recip_tables` loads.

The coefficient array ``t`` each model takes (uint32, the same type as the other MUFU tables):
``t[0], t[1]`` the bias's low and high words, then ``c0, c1, c2`` of segment 0, 1, ...

>>> t = recip_tables()
>>> hex(mufu_rcp(0x40000000, t[0])), hex(mufu_rsq(0x40800000, t[1])), hex(mufu_sqrt(0x40800000, t[2]))
('0x3f000000', '0x3f000000', '0x40000000')
>>> square_truncated(3), 0x1FFFF ** 2 - square_truncated(0x1FFFF)     # what the dropped columns held
(0, 4456449)
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

import numpy as np
from numba import njit, prange

__all__ = ["Datapath", "DATAPATHS", "RECIP_NAMES", "DATA", "square_truncated", "mufu_rcp", "mufu_rsq", "mufu_sqrt",
           "mufu_rcp64h", "f64_rcp_approx_ftz", "rcp64h_range", "recip_tables", "pack"]

_NAN = np.uint32(0x7FFFFFFF)           # the canonical NaN every MUFU returns
_INF = np.uint32(0x7F800000)
_SIGN = np.uint32(0x80000000)
_MANT = 0x7FFFFF
_SQUARE_KEPT_FROM = 19                 # the squarer's partial products keep columns 19 and up
DATA = os.path.join(os.path.dirname(__file__), "data", "mufu_recip_sm90.json")


@dataclass(frozen=True)
class Datapath:
    """One function's fixed-point datapath (the module docstring's ``sum``)."""
    name: str
    segment_bits: int          # mantissa bits that select the segment (RSQ, SQRT: the parity above them)
    parity: bool               # the input's exponent parity selects a half of the segments
    term_shifts: tuple         # (a0, a1, a2): where c0, c1*xl, c2*square(xl) enter the sum
    term_signs: tuple          # (s1, s2): the signs of the c1 and c2 terms
    square_shifts: tuple       # (in, out): square(xl << in) >> out
    lead: int                  # the sum's bit that holds the result's leading one

    @property
    def low_bits(self) -> int:
        """The bits of ``xl``."""
        return 23 - self.segment_bits

    @property
    def segments(self) -> int:
        return 1 << (self.segment_bits + self.parity)

    @property
    def keys(self) -> int:
        """The inputs of one binade (two for RSQ, SQRT) that together decide every result."""
        return 1 << (23 + self.parity)


DATAPATHS = {
    "rcp": Datapath("rcp", 7, False, (30, 17, 0), (-1, 1), (1, 2), 55),
    "rsqrt": Datapath("rsqrt", 6, True, (31, 17, 0), (-1, 1), (0, 0), 56),
    "sqrt": Datapath("sqrt", 6, True, (33, 18, 0), (1, -1), (0, 0), 58),
}
RECIP_NAMES = tuple(DATAPATHS)


@njit(cache=True)
def square_truncated(x):
    """``x * x`` (``x < 2**18``) as a folded squarer sums it, with every partial-product bit in the columns below
    19 dropped before the sum: so ``x * x - dropped``, never more than ``x * x``."""
    x = np.int64(x)
    low = (np.int64(1) << _SQUARE_KEPT_FROM) - 1
    dropped = x & 0x3FF                                  # the diagonal, x_i * 2**(2i) for i <= 9: bit i to 2i
    dropped = (dropped | (dropped << 8)) & 0x00FF00FF
    dropped = (dropped | (dropped << 4)) & 0x0F0F0F0F
    dropped = (dropped | (dropped << 2)) & 0x33333333
    dropped = (dropped | (dropped << 1)) & 0x55555555
    for i in range(9):                                   # row i: x_i * x_j * 2**(i+j+1) for j > i
        dropped += (((x >> (i + 1)) << (2 * i + 2)) & low) & -((x >> i) & 1)
    return x * x - dropped


def _shape(dp: Datapath) -> tuple:
    """The datapath as the kernels read it (a tuple of ints, constant to Numba)."""
    return (dp.low_bits, *dp.term_shifts, *dp.term_signs, *dp.square_shifts, dp.lead)


_RCP, _RSQ, _SQRT = (_shape(DATAPATHS[name]) for name in RECIP_NAMES)


@njit(cache=True)
def _sum(t, segment, xl, shape):
    """The datapath's ``sum`` for one segment and ``xl`` (int64; every term below 2**59)."""
    low_bits, a0, a1, a2, s1, s2, sq_in, sq_out, lead = shape
    j = 2 + 3 * segment
    bias = np.int64(t[0]) | (np.int64(t[1]) << 32)
    c1_term = (np.int64(t[j + 1]) * xl) << a1
    c2_term = (np.int64(t[j + 2]) * (square_truncated(xl << sq_in) >> sq_out)) << a2
    return (np.int64(t[j]) << a0) + s1 * c1_term + s2 * c2_term + bias


@njit(cache=True)
def _significand(t, odd, m, shape):
    """``(carry, mantissa)``: the result's 23 mantissa bits from the sum's leading one, which sits at bit
    ``lead + carry`` (``carry`` 1 only where the result is a power of two above the usual binade)."""
    low_bits, lead = shape[0], shape[8]
    v = _sum(t, (odd << (23 - low_bits)) | (m >> low_bits), m & ((np.int64(1) << low_bits) - 1), shape)
    carry = v >> (lead + 1)
    return carry, (v >> (lead - 23 + carry)) & _MANT


@njit(cache=True)
def mufu_rcp(a, t):
    """``MUFU.RCP``: ``1/x``, odd in the sign; subnormal inputs read as zero, results below 2**-126 are zero."""
    a = np.uint32(a)
    s, e, m = a & _SIGN, np.int64((a >> 23) & 0xFF), np.int64(a & _MANT)
    if e == 0xFF:
        return _NAN if m else s
    if e == 0:
        return s | _INF
    carry, mant = _significand(t, np.int64(0), m, _RCP)     # carry: x = 2**k, the result 1.0 * 2**-k
    eo = 253 + carry - e
    return s if eo <= 0 else np.uint32(s | (eo << 23) | mant)


@njit(cache=True)
def _half_exponent(e):
    """``(odd, k/2)``: ``odd`` 1 where the unbiased exponent ``e - 127`` is odd; ``k`` it made even downward."""
    k = e - 127
    odd = k & 1
    return odd, (k - odd) >> 1


@njit(cache=True)
def mufu_rsq(a, t):
    """``MUFU.RSQ``: ``1/sqrt(x)``; ``-0 -> -inf``, negative inputs NaN, subnormal inputs read as zero."""
    a = np.uint32(a)
    s, e, m = a & _SIGN, np.int64((a >> 23) & 0xFF), np.int64(a & _MANT)
    if e == 0xFF:
        return _NAN if m or s else np.uint32(0)
    if e == 0:
        return s | _INF
    if s:
        return _NAN
    odd, half = _half_exponent(e)
    if odd == 0 and m == 0:                              # x = 4**n: 2**-n exactly
        return np.uint32((127 - half) << 23)
    return np.uint32(((126 - half) << 23) | _significand(t, odd, m, _RSQ)[1])


@njit(cache=True)
def mufu_sqrt(a, t):
    """``MUFU.SQRT``: ``sqrt(x)``; ``-0 -> -0``, negative inputs NaN, subnormal inputs read as zero."""
    a = np.uint32(a)
    s, e, m = a & _SIGN, np.int64((a >> 23) & 0xFF), np.int64(a & _MANT)
    if e == 0xFF:
        return _NAN if m or s else _INF
    if e == 0:
        return s
    if s:
        return _NAN
    odd, half = _half_exponent(e)
    return np.uint32(((127 + half) << 23) | _significand(t, odd, m, _SQRT)[1])


# -- rcp.approx.ftz.f64: proven on the H200 (conformance/h200/h200-rcp-f64-sweep.json: every high word, 0) ---------

@njit(cache=True)
def mufu_rcp64h(h, t):
    """``MUFU.RCP64H`` of sm_90: the high word of ``1/x`` from the high word ``h`` of an
    f64 ``x``, through the RCP datapath (``t``: its coefficients) on the 20 fraction bits ``h`` holds.

    The result's mantissa is RCP's for the f32 ``1.f`` (``f`` the 20 bits, 3 zero bits below them) cut to its top
    20 bits; ``+-0`` and subnormal inputs give ``+-inf``, ``+-inf`` gives ``+-0``, NaN the high word
    ``0x7FFFFFFF``, results below 2**-1022 ``+-0``. The published sm_5x model (bcarlet/ptx-math) has this
    shape; ``hwcheck sweep --forms rcp.approx.ftz.f64`` found it equal to the H200 at every one of the 2**32
    high words (2026-12-01, ``conformance/h200/h200-rcp-f64-sweep.json``).
    """
    h = np.uint32(h)
    s, e, f = h & _SIGN, np.int64((h >> 20) & 0x7FF), np.int64(h & 0xFFFFF)
    if e == 0x7FF:
        return _NAN if f else s
    if e == 0:
        return s | np.uint32(0x7FF00000)
    carry, mant = _significand(t, np.int64(0), f << 3, _RCP)
    eo = 2045 + carry - e                               # 1/x = 2**(carry - 1) * 1.mant * 2**-(e - 1023)
    return s if eo <= 0 else np.uint32(s | (eo << 20) | (mant >> 3))


@njit(cache=True)
def f64_rcp_approx_ftz(a, t):
    """``rcp.approx.ftz.f64`` as ptxas 13 compiles it for sm_90 (proven on the H200, above): only the input's
    high word is read; the result is ``MUFU.RCP64H`` of it over a zero low word. ``a``: the f64 bits (uint64)."""
    return np.uint64(mufu_rcp64h(np.uint32(np.uint64(a) >> np.uint64(32)), t)) << np.uint64(32)


@njit(cache=True, parallel=True)
def _range64h(start, t, out):
    for i in prange(out.size):
        out[i] = mufu_rcp64h(np.uint32((start + i) & 0xFFFFFFFF), t)


def rcp64h_range(start: int, out: np.ndarray) -> np.ndarray:
    """``out[i]`` = the modelled result's high word for the input high word ``start + i`` (mod 2**32); the host
    half of ``hwcheck sweep --forms rcp.approx.ftz.f64``.

    >>> [hex(int(v)) for v in rcp64h_range(0x40000000, np.empty(1, np.uint32))]    # 1/2.0 = 0.5
    ['0x3fe00000']
    """
    _range64h(np.int64(start), recip_tables()[0], out)
    return out


_LOADED: dict = {}


def recip_tables(path: str = DATA) -> tuple:
    """The coefficient arrays of ``rcp, rsqrt, sqrt`` (uint32, the layout above), loaded once per process;
    ``FileNotFoundError`` naming the file and the command that writes it."""
    if path not in _LOADED:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: the MUFU.RCP/RSQ/SQRT coefficients are missing; "
                                    f"`python -m warpsim.isa.mufu_recip_derive --derive-from PROBE_DIR` writes them")
        with open(path) as f:
            data = json.load(f)
        for name in RECIP_NAMES:
            if data[name]["datapath"] != json.loads(json.dumps(asdict(DATAPATHS[name]))):
                raise ValueError(f"{path}: {name}: coefficients for another datapath than {DATAPATHS[name]}")
        _LOADED[path] = tuple(pack(int(data[name]["bias"]), data[name]["coefficients"]) for name in RECIP_NAMES)
    return _LOADED[path]


def pack(bias: int, coefficients) -> np.ndarray:
    """One function's coefficient array as the models read it (uint32, the layout above) from its ``bias``
    (``0 <= bias < 2**64``) and its rows ``(c0, c1, c2)`` per segment (each in 0..2**32-1).

    >>> pack(5 + (1 << 32), [[1, 2, 3], [4, 5, 6]]).tolist()
    [5, 1, 1, 2, 3, 4, 5, 6]
    """
    return np.array([bias & 0xFFFFFFFF, bias >> 32] + [int(c) for row in coefficients for c in row], np.uint32)
