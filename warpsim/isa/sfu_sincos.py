"""``sin.approx{.ftz}.f32`` and ``cos.approx{.ftz}.f32`` as the SFU's fixed-point datapath (sm_90, proven on the H200).

What the H200 runs (docs/numerics.md, "MUFU.SIN and MUFU.COS"): ptxas emits ``FMUL.RZ t = x * 0x3E22F983``
(1/(2 pi) rounded to nearest) and then ``MUFU.SIN``/``MUFU.COS`` of ``t``; the ``.ftz`` and plain forms are
the same two instructions. The MUFU step, as modelled here (every width below is a named constant):

1. **Reduction.** ``key = floor(|t| * 2**25) mod 2**25``: 2 quadrant bits ``q`` and 23 bits ``r`` of the
   position in the quadrant (the H200's results depend on the sign of ``t`` and this key only: 0 exceptions
   over all 2**32 inputs, ``hwcheck.campaigns.mufu32_probe``). ``t`` infinite or NaN gives the canonical NaN.
2. **Quadrant.** Both functions evaluate one curve, ``sin(pi/2 * r / 2**23)`` on the first quadrant. ``sin``
   reads ``r`` mirrored (``2**23 - 1 - r``, the one's complement) in quadrants 1 and 3 and is negative in
   quadrants 2 and 3 (times the sign of ``t``); ``cos`` reads it mirrored in quadrants 0 and 2 and is
   negative in quadrants 1 and 2, whatever the sign of ``t``.
3. **Quadratic interpolation.** The top :data:`SEGMENT_BITS` of ``r`` pick a segment's coefficients
   ``(c0, c1, c2)`` (non-negative integers), the low :data:`OFFSET_BITS` are the offset ``u``:
   ``sum = c0 * 2**31 + c1 * u * 2**19 - c2 * square(u)``, where ``square`` is a truncated squarer: ``u*u``
   less every partial product of weight below ``2**19`` (:func:`approx_square`).
4. **Result.** ``sum`` is a fixed-point number with ``2**56`` standing for 1.0, normalised and truncated to
   24 significant bits (a zero sum gives a zero); the sign from step 2.

The coefficients (``data/sfu_sincos_sm90.json``) are not written by hand: ``warpsim.isa.sfu_sincos_derive``
solves them, per segment, from (key, result) pairs measured on the GPU (each result bounds ``sum`` to an interval;
the integer triples inside every interval are found by search). The structure (widths, truncations, the
squarer) is the one bcarlet/ptx-math found for sm_70/sm_75 (read for facts, not copied); its model agreed
with every H200 result then at hand (1.3·10^6). **Proven on the H200** (2026-12-01, :data:`HARDWARE_PROOF`):
``python -m hwcheck.campaigns.sincos_probe --out DIR`` built the key tables from all 2**32 inputs, derived the
coefficients there (equal to the shipped ones), found the model equal to the GPU at every key (23,326,001
per function) and swept the four forms over all 2**32 inputs each: 0 mismatches. The PTX loader decodes these
forms only while :data:`HARDWARE_PROOF` names that report (a regenerated coefficient file must be proven again;
:data:`PENDING_REASON` is the refusal then). sm_80: the same SASS (``hwcheck.device.sass``); its SFU bits unproven.

>>> c = coefficients()
>>> hex(f32_sin_approx(0x00000000, c)), hex(f32_sin_approx(0x80000000, c)), hex(f32_cos_approx(0, c))
('0x0', '0x80000000', '0x3f800000')
>>> hex(f32_sin_approx(0x7F800000, c)), hex(sincos_key(0x3E800000))       # sin(inf); t = 0.25: quadrant 1
('0x7fffffff', '0x800000')
>>> approx_square(1 << 16) == 1 << 32, approx_square(3) == 0                # what the truncation drops
(True, True)
"""

from __future__ import annotations

import functools
import json
import os

import numpy as np
from numba import njit, prange

from warpsim.isa.floats import bit_length
from warpsim.isa.fparith import f32_mul
from warpsim.isa.rounding import RZ

__all__ = ["INV_TWO_PI", "KEY_BITS", "QUARTER_BITS", "SEGMENT_BITS", "OFFSET_BITS", "C0_SHIFT", "C1_SHIFT",
           "SQUARE_DROPPED", "ONE_BIT", "SEGMENTS", "DATA", "HARDWARE_PROOF", "PENDING_REASON", "SINCOS_OPS",
           "sincos_key", "approx_square", "mufu_sincos", "mufu_sin", "mufu_cos", "f32_sin_approx",
           "f32_sin_approx_ftz", "f32_cos_approx", "f32_cos_approx_ftz", "coefficients", "sincos_batch",
           "sincos_range", "mufu_from_keys", "quarter_of", "load_coefficients"]

INV_TWO_PI = 0x3E22F983     # FMUL.RZ's immediate: 1/(2 pi) rounded to nearest f32 (0.15915494)
KEY_BITS = 25               # fraction bits of |t| the SFU keeps: 2 quadrant bits, then QUARTER_BITS
QUARTER_BITS = 23           # the position within a quadrant, r
SEGMENT_BITS = 6            # top bits of r: the coefficient segment (64 segments)
OFFSET_BITS = QUARTER_BITS - SEGMENT_BITS    # low bits of r: the offset u within the segment (17)
C0_SHIFT = 31               # sum = c0 << C0_SHIFT + (c1 * u) << C1_SHIFT - c2 * approx_square(u)
C1_SHIFT = 19
SQUARE_DROPPED = 19         # the squarer leaves out every partial product of weight below 2**19
ONE_BIT = 56                # the sum's bit that stands for 1.0
SEGMENTS = 1 << SEGMENT_BITS
DATA = os.path.join(os.path.dirname(__file__), "data", "sfu_sincos_sm90.json")

# The device run that compared this model with the H200 at every input; None while that is pending.
HARDWARE_PROOF = "conformance/h200/h200-sincos-probe.json"
PENDING_REASON = ("modelled (warpsim.isa.sfu_sincos) but not yet proven on the H200 at every input; "
                  "pending `PYTHONPATH=. python -m hwcheck.campaigns.sincos_probe --out DIR` on an H200 "
                  "(docs/numerics.md, \"MUFU.SIN and MUFU.COS\")")

_KEY_MASK = (1 << KEY_BITS) - 1
_QUARTER_MASK = (1 << QUARTER_BITS) - 1
_OFFSET_MASK = (1 << OFFSET_BITS) - 1
_FRAC_SHIFT = ONE_BIT - 23          # the sum's bits below the 24 a result keeps
_NAN = np.uint32(0x7FFFFFFF)


# -- the datapath -----------------------------------------------------------------------------------------------

@njit(cache=True)
def sincos_key(t):
    """``floor(|t| * 2**25) mod 2**25`` for the f32 bits ``t`` (finite): quadrant ``key >> 23``, ``r`` below.

    >>> sincos_key(0x3F000000) == 1 << 24, sincos_key(0xBF000000) == 1 << 24, sincos_key(0x4B000000)   # 0.5, 2**23
    (True, True, 0)
    """
    t = np.uint32(t)
    e = np.int64((t >> 23) & 0xFF)
    if e == 0:                                   # subnormal or zero: below 2**-25
        return np.int64(0)
    m = np.int64(t & 0x7FFFFF) | (1 << 23)        # |t| * 2**25 = m * 2**(e - 125)
    sh = e - 125
    if sh >= KEY_BITS:                           # an integer multiple of 2**25: no fraction bits left
        return np.int64(0)
    if sh >= 0:
        return (m << sh) & _KEY_MASK
    return (m >> -sh) if sh > -24 else np.int64(0)


@njit(cache=True)
def approx_square(u):
    """``u*u`` less the partial products of weight below ``2**SQUARE_DROPPED`` (``u < 2**OFFSET_BITS``).

    ``u*u`` is the sum of the terms ``b_i * 2**(2i)`` (one per bit ``b_i``) and ``b_i * b_j * 2**(i+j+1)``
    (``i < j``); the squarer adds only those whose weight is ``2**SQUARE_DROPPED`` or more.

    >>> approx_square(0x1FFFF) < 0x1FFFF ** 2, approx_square(1 << 10) == 1 << 20
    (True, True)
    """
    u = np.int64(u)
    dropped = np.int64(0)
    low = (1 << SQUARE_DROPPED) - 1
    for i in range((SQUARE_DROPPED + 1) // 2):  # rows whose lowest weight 2**(2i) can be below 2**19
        if (u >> i) & 1:
            row = (np.int64(1) << (2 * i)) + (((u >> (i + 1)) << (i + 1)) << (i + 1))
            dropped += row & low
    return u * u - dropped


@njit(cache=True)
def _curve(r, c):
    """The first-quadrant curve at ``r`` (23 bits) as f32 magnitude bits, from the coefficient rows ``c``."""
    seg = r >> OFFSET_BITS
    u = r & _OFFSET_MASK
    s = ((np.int64(c[seg, 0]) << C0_SHIFT) + ((np.int64(c[seg, 1]) * u) << C1_SHIFT)
         - np.int64(c[seg, 2]) * approx_square(u))
    if s <= 0:
        return np.uint32(0)
    n = bit_length(s) - 1                        # the leading bit
    if n < ONE_BIT:
        s <<= ONE_BIT - n
    return np.uint32(((127 - max(ONE_BIT - n, 0)) << 23) | ((s >> _FRAC_SHIFT) & 0x7FFFFF))


@njit(cache=True)
def quarter_of(key, is_cos):
    """``(r, negative)``: the curve's argument and the quadrant's sign for the 25-bit ``key`` (see step 2)."""
    q = key >> QUARTER_BITS
    r = key & _QUARTER_MASK
    if (q & 1) == (0 if is_cos else 1):
        r = _QUARTER_MASK - r
    neg = (q == 1 or q == 2) if is_cos else q >= 2
    return r, np.int64(neg)


@njit(cache=True)
def mufu_sincos(t, is_cos, c):
    """``MUFU.COS`` (``is_cos``) or ``MUFU.SIN`` of the f32 bits ``t``; ``c``: int64[64, 3] coefficients."""
    t = np.uint32(t)
    if (t & 0x7F800000) == 0x7F800000:
        return _NAN
    r, neg = quarter_of(sincos_key(t), is_cos)
    if not is_cos:
        neg ^= np.int64(t >> 31)
    return np.uint32((neg << 31) | _curve(r, c))


@njit(cache=True)
def mufu_sin(t, c):
    """``MUFU.SIN`` of the f32 bits ``t`` (a turn: ``sin(2 pi t)``)."""
    return mufu_sincos(t, False, c)


@njit(cache=True)
def mufu_cos(t, c):
    """``MUFU.COS`` of the f32 bits ``t`` (a turn: ``cos(2 pi t)``)."""
    return mufu_sincos(t, True, c)


@njit(cache=True)
def f32_sin_approx(a, c):
    """``sin.approx.f32``: ``MUFU.SIN(FMUL.RZ(a, 1/(2 pi)))`` as ptxas emits it."""
    return mufu_sincos(f32_mul(a, INV_TWO_PI, RZ, False, False), False, c)


@njit(cache=True)
def f32_cos_approx(a, c):
    """``cos.approx.f32``: ``MUFU.COS(FMUL.RZ(a, 1/(2 pi)))`` as ptxas emits it."""
    return mufu_sincos(f32_mul(a, INV_TWO_PI, RZ, False, False), True, c)


@njit(cache=True)
def f32_sin_approx_ftz(a, c):
    """``sin.approx.ftz.f32``: the same SASS as :func:`f32_sin_approx` (a subnormal gives a zero key)."""
    return f32_sin_approx(a, c)


@njit(cache=True)
def f32_cos_approx_ftz(a, c):
    """``cos.approx.ftz.f32``: the same SASS as :func:`f32_cos_approx`."""
    return f32_cos_approx(a, c)


SINCOS_OPS = {("sin", False): f32_sin_approx, ("sin", True): f32_sin_approx_ftz,
              ("cos", False): f32_cos_approx, ("cos", True): f32_cos_approx_ftz}


# -- the coefficients and the batched API --------------------------------------------------------------------

def load_coefficients(path: str) -> np.ndarray:
    """The int64[64, 3] coefficients of a coefficient file (``python -m warpsim.isa.sfu_sincos_derive``)."""
    with open(path) as f:
        rows = json.load(f)["coefficients"]
    c = np.array(rows, dtype=np.int64)
    if c.shape != (SEGMENTS, 3) or (c < 0).any():
        raise ValueError(f"{path}: coefficients must be {SEGMENTS} rows of 3 non-negative integers")
    return c


@functools.lru_cache(maxsize=None)
def _shipped():
    c = load_coefficients(DATA)
    c.setflags(write=False)
    return c


def coefficients() -> np.ndarray:
    """The shipped coefficients (``data/sfu_sincos_sm90.json``), int64[64, 3], read-only."""
    return _shipped()


def _op(op, ftz):
    if (op, bool(ftz)) not in SINCOS_OPS:
        raise ValueError(f"{op}.approx{'.ftz' if ftz else ''}.f32: not a form of warpsim.isa.sfu_sincos "
                         f"(ops: cos, sin)")
    return list(SINCOS_OPS).index((op, bool(ftz)))


# The kernels take a form's index, not its function: a cached kernel with a function in its signature cannot
# be reloaded in another process (see warpsim.isa.mufu32's kernels).
@njit(cache=True, inline="always")       # inlined: the loop over lanes is unswitched on code
def _form(code, a, c):
    """The model of form ``code``, the index of its key in ``SINCOS_OPS``: sin, sin.ftz, cos, cos.ftz."""
    if code == 0:
        return f32_sin_approx(a, c)
    if code == 1:
        return f32_sin_approx_ftz(a, c)
    if code == 2:
        return f32_cos_approx(a, c)
    return f32_cos_approx_ftz(a, c)


@njit(cache=True, parallel=True)
def _batch(code, a, c, out):
    for i in prange(a.size):
        out[i] = _form(code, a[i], c)


@njit(cache=True, parallel=True)
def _range(code, start, c, out):
    for i in prange(out.size):
        out[i] = _form(code, np.uint32((start + i) & 0xFFFFFFFF), c)


def sincos_batch(op: str, a: np.ndarray, *, ftz: bool = False, c: np.ndarray | None = None) -> np.ndarray:
    """``{op}.approx{.ftz}.f32`` (``op`` ``sin`` or ``cos``) over an array of register bits, in parallel.

    >>> [hex(int(v)) for v in sincos_batch("cos", np.array([0x00000000, 0x7FC00000], np.uint32))]
    ['0x3f800000', '0x7fffffff']
    """
    code = _op(op, ftz)
    a = np.ascontiguousarray(a, dtype=np.uint32)
    out = np.empty(a.size, np.uint32)
    _batch(code, a.ravel(), coefficients() if c is None else c, out)
    return out.reshape(a.shape)


def sincos_range(op: str, start: int, out: np.ndarray, *, ftz: bool = False, c: np.ndarray | None = None):
    """``out[i]`` = the model's result for input bits ``start + i`` (mod 2**32): an exhaustive sweep's half."""
    _range(_op(op, ftz), np.int64(start), coefficients() if c is None else c, out)
    return out


@njit(cache=True, parallel=True)
def mufu_from_keys(keys, is_cos, c):
    """``MUFU.SIN``/``MUFU.COS`` at each 25-bit key for a positive ``t`` (a key table's model)."""
    out = np.empty(keys.size, np.uint32)
    for i in prange(keys.size):
        r, neg = quarter_of(np.int64(keys[i]), is_cos)
        out[i] = np.uint32((neg << 31) | _curve(r, c))
    return out
