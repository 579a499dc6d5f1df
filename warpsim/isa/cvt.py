"""``cvt``: float to float, float to integer, integer to float, and the packed x2 forms, bit-exact.

The packed form used by the tensor-core programs, ``cvt.rn.{f16,bf16}x2.f32 d, a, b``, has its own
fast entry points (``cvt_pack``, ``warp_cvt_pack``). Every other form goes through three scalar
models, each rounding the exact input once (``rounding.round_bits``) and then applying the modifiers:

- ``cvt_float(bits, src, dst, rnd, ftz, sat, relu, satfinite)``: between f32, f16, bf16 and tf32
  (``FLOAT_CODES``). Widening is exact. ``.ftz`` flushes f32 subnormal inputs and f32 subnormal
  results, except on cvt to f16, where the H200 flushes nothing (an f32 subnormal is below f16's
  smallest subnormal, so only ``.rm``/``.rp`` show it: ``cvt.rm.ftz.f16.f32`` of ``0x80000001`` is
  ``0x8001``); ``.sat`` clamps to ``[+0, 1]`` (NaN to ``+0``); ``.relu`` clamps negatives to ``+0``;
  ``.satfinite`` turns a result that would be infinite (an infinite input included) into the largest
  finite value of its sign. A NaN gives the destination's canonical NaN (all bits but the sign set),
  except where the H200 shows otherwise (see "NaN" below). tf32 is an f32 register whose low 13 bits
  are zero: 10 fraction bits.
- ``cvt_float_to_int(bits, src, dst, rnd, ftz)``: ``.rni .rzi .rmi .rpi`` to ``s8 .. u64``
  (``INT_TYPES``). PTX: float-to-integer conversions saturate to the destination's range; NaN gives
  0, except to s64/u64: ``0x8000000000000000``, and from f64 to every integer: its top bit alone
  (``0x80000000`` ...; the H200, see "NaN"). The result is the destination's bits, zero-extended to a
  uint64.
- ``cvt_int_to_float(bits, src, dst, rnd)``: an integer register (its low ``width`` bits, sign-
  extended for signed types) rounded to a float format with ``.rn .rz .rm .rp``.
- ``cvt_round_int(bits, fmt, rnd, ftz)``: ``cvt.{rni,rzi,rmi,rpi}.f32.f32`` (and f16, f64): the float
  rounded to an integral value in its own format, the sign of a zero kept.

f64 (``FLOAT_CODES["f64"]``, a 64-bit register's bits in an int64) goes through the same three models:
narrowing rounds once, widening is exact, ``.ftz`` concerns f32 inputs and results only (PTX: ".ftz ...
applies only to single precision inputs and results"). f64's NaNs keep their payloads (the H200,
``hwcheck campaign --instr f64`` of 2026-12-01; docs/numerics.md, "f64"):

- a NaN converted *to* f64 keeps its sign and payload, quietened (f32 ``0x7FC00001 ->
  0x7FF8000020000000``), except under ``cvt.ftz.f64.f32``, which gives f32's canonical NaN widened,
  ``0x7FFFFFFFE0000000``, whatever the NaN; ``cvt.rni.f64.f64`` of a NaN gives it quietened;
- a NaN converted *from* f64 to f32, f16 or bf16 keeps its sign and the top of its fraction, quietened
  (``0xFFF0000000000001 -> 0xFFC00000``, ``0x7FF4000000000000 -> 0x7FE00000``); ``.sat`` makes it +0;
- a NaN converted from f64 to an integer gives the destination's top bit alone: ``0x8000000000000000``
  (s64, u64), ``0x80000000`` (s32, u32: nonzero on the H200, the value assumed), ``0x8000``/``0x80``
  (16 and 8 bits: assumed; ``tests/ptx/test_ptx_f64_gpu.py`` asks).

PTX ISA, "cvt": "the value converted from input a is stored in the upper half of d and the value
converted from input b is stored in the lower half of d". Each conversion rounds to nearest, ties
to even (``.rn``), keeps subnormals (no ``.ftz``), overflows to an infinity of the input's sign,
and keeps the sign of a zero.

NaN: a NaN input gives the canonical NaN of the destination format (``0x7FFF``, ``0x7FFFFFFF``),
whatever its sign and payload. PTX does not say so; the H200 does (hwcheck's cvt campaign, input
class "special", 200,000 pairs per format with 0 mismatches: conformance/h200/h200-cvt.json; and
``hwcheck campaign --instr float``, 2026-12-01). Four exceptions, measured on the H200 by that float
campaign and by tests/ptx/test_ptx_float_gpu.py (docs/numerics.md):

- ``cvt.f32.bf16`` keeps the NaN: the bf16 bits move to the upper half, sign and payload kept, a
  signalling NaN not quietened (``0xFFB8 -> 0xFFB80000``);
- ``cvt.rna.tf32.f32`` truncates a NaN's fraction to tf32's 10 bits, sign kept, nothing rounded or
  quietened (``0xFF989315 -> 0xFF988000``; a payload only in the low 13 bits leaves an infinity:
  ``0xFF800001 -> 0xFF800000``); with ``.satfinite`` the truncated bits then lose one tf32 unit, as an
  infinity does to become the largest finite value (``0x7FC00000 -> 0x7FBFE000``,
  ``0x7F800001 -> 0x7F7FE000``);
- ``cvt.rn.tf32.f32`` and ``cvt.rz.tf32.f32`` (``.relu`` too) give f32's canonical NaN with tf32's
  13 low bits cleared, ``0x7FFFE000``, whatever the NaN (tests/ptx/test_ptx_float_gpu.py, 2026-12-01);
- to s64 and u64 a NaN gives ``0x8000000000000000`` (to narrower integers 0; f64 sources: above).

>>> import numpy as np
>>> hex(cvt_pack_bits(0x3F800000, 0x40000000, BF16_CODE))   # a = 1.0 upper, b = 2.0 lower
'0x3f804000'
>>> hex(cvt_pack_bits(0x477FF000, 0x477FEFFF, F16_CODE))    # 65520 -> inf (tie, to even); below -> 65504
'0x7c007bff'
"""

import numpy as np
from numba import njit, prange

from warpsim.isa.faults import FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, set_fault
from warpsim.isa.floats import FINITE, INF, NAN, decode, round_rne
from warpsim.isa.fparith import canonical_nan, finish, flush_subnormal
from warpsim.isa.rounding import RM, RN, RNA, RP, RZ, max_finite, round_bits

__all__ = ["F16_CODE", "BF16_CODE", "CVT_TYPES", "cvt_name", "cvt_f32_to_16", "cvt_pack_bits",
           "cvt_pack", "warp_cvt_pack",
           "FLOAT_CODES", "INT_TYPES", "cvt_float", "cvt_float_to_int", "cvt_int_to_float", "cvt_round_int",
           "cvt_pack_x2", "cvt_convert"]

F16_CODE = 0
BF16_CODE = 1
CVT_TYPES = {"f16": F16_CODE, "bf16": BF16_CODE}
_FORMAT = ((5, 10), (8, 7))   # (exp_bits, frac_bits) per code


def cvt_name(to):
    """``cvt.rn.{to}x2.f32``."""
    if to not in CVT_TYPES:
        raise ValueError(f"cvt: to must be 'f16' or 'bf16', got {to!r}")
    return f"cvt.rn.{to}x2.f32"


@njit(cache=True)
def cvt_f32_to_16(bits, to):
    """f32 bits rounded to f16 (``to == F16_CODE``) or bf16 bits, nearest-even: ``cvt.rn.f16.f32`` (``.ftz`` or not:
    it changes nothing to f16) and ``cvt.rn.bf16.f32``, in a few integer operations. For each of the 2**32 inputs
    the same bits as the general model, ``cvt_float`` (tests/isa/test_float_cvt.py: every exponent, boundary and
    random fractions; every input with ``--slow``).

    >>> hex(cvt_f32_to_16(0x33800000, F16_CODE))   # 2**-24: the smallest f16 subnormal
    '0x1'
    >>> hex(cvt_f32_to_16(0xFFC00001, BF16_CODE))  # a NaN: canonical 0x7FFF
    '0x7fff'
    >>> hex(cvt_f32_to_16(0x477FF000, F16_CODE)), hex(cvt_f32_to_16(0xB3000001, F16_CODE))  # 65520: inf; a tie above
    ('0x7c00', '0x8001')
    """
    x = np.int64(bits) & 0xFFFFFFFF
    a = x & 0x7FFFFFFF
    if a > 0x7F800000:
        return np.int64(0x7FFF)                             # a NaN: the canonical one
    if to != F16_CODE:                                      # bf16: f32's exponents, the low 16 bits rounded off
        return (x + 0x7FFF + ((x >> 16) & 1)) >> 16         # (a carry into the exponent is right, up to inf)
    sign = (x >> 16) & 0x8000
    if a >= 0x477FF000:                                     # 65520 (a tie, to even) and above: infinity
        return sign | 0x7C00
    if a >= 0x38800000:                                     # an f16 normal: exponent rebiased by 127 - 15 = 112,
        m = a - 0x38000000                                  # 13 fraction bits rounded off
        return sign | ((m + 0xFFF + ((m >> 13) & 1)) >> 13)
    if a <= 0x33000000:                                     # at most 2**-25, half the smallest subnormal: zero
        return sign
    shift = 126 - (a >> 23)                                 # an f16 subnormal, in units of 2**-24: 14..24 bits off
    sig = (a & 0x7FFFFF) | 0x800000
    q = sig >> shift
    rest = sig & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    if rest > half or (rest == half and (q & 1) == 1):
        q += 1
    return sign | q


@njit(cache=True)
def cvt_pack_bits(a_bits, b_bits, to):
    """``(cvt(a) << 16) | cvt(b)`` as an int."""
    return (cvt_f32_to_16(a_bits, to) << 16) | cvt_f32_to_16(b_bits, to)


@njit(cache=True)
def warp_cvt_pack(regs_w, d_reg, a_reg, b_reg, to, fault):
    """One warp's ``cvt.rn.{f16,bf16}x2.f32 d, a, b`` on register indices (ints).

    ``to``: ``F16_CODE`` or ``BF16_CODE``. On a bad register index or type sets ``fault`` and
    changes nothing. ``d_reg`` may equal ``a_reg`` or ``b_reg``. Returns True when it executed.
    """
    if to != F16_CODE and to != BF16_CODE:
        set_fault(fault, FAULT_BAD_OPERAND, 0, to, 1)
        return False
    if regs_w.shape[0] != 32:
        set_fault(fault, FAULT_BAD_OPERAND, 0, regs_w.shape[0], 32)
        return False
    for r in (d_reg, a_reg, b_reg):
        if r < 0 or r >= regs_w.shape[1]:
            set_fault(fault, FAULT_BAD_REGISTER, 0, r, regs_w.shape[1])
            return False
    for lane in range(32):
        regs_w[lane, d_reg] = np.uint32(cvt_pack_bits(regs_w[lane, a_reg], regs_w[lane, b_reg], to))
    return True


@njit(cache=True, parallel=True)
def _cvt_batch(a, b, out, to):
    for i in prange(a.shape[0]):
        out[i] = np.uint32(cvt_pack_bits(a[i], b[i], to))


def cvt_pack(a, b, *, to="f16"):
    """Batched ``cvt.rn.{to}x2.f32 d, a, b`` over uint32 arrays of f32 bits of one shape.

    >>> import numpy as np
    >>> a = np.array([0x3F800000], np.uint32); b = np.array([0xBF800000], np.uint32)
    >>> hex(int(cvt_pack(a, b, to="f16")[0]))       # 1.0 upper, -1.0 lower
    '0x3c00bc00'
    """
    name = cvt_name(to)
    for arg, x in (("a", a), ("b", b)):
        if not isinstance(x, np.ndarray) or x.dtype != np.uint32:
            raise TypeError(f"{name}: {arg} must be a numpy array of uint32 (f32 bits), got "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
    if a.shape != b.shape:
        raise ValueError(f"{name}: a and b must have one shape, got {a.shape} and {b.shape}")
    out = np.empty(a.size, np.uint32)
    if a.size:
        _cvt_batch(np.ascontiguousarray(a).ravel(), np.ascontiguousarray(b).ravel(), out, CVT_TYPES[to])
    return out.reshape(a.shape)


# ---- every other form ---------------------------------------------------------------------------

# float type -> (exp_bits, frac_bits, shift): shift = bits below the format in its register (tf32: 13)
FLOAT_CODES = {"f32": (8, 23, 0), "f16": (5, 10, 0), "bf16": (8, 7, 0), "tf32": (8, 10, 13), "f64": (11, 52, 0)}
# integer type -> (width, signed)
INT_TYPES = {"s8": (8, True), "s16": (16, True), "s32": (32, True), "s64": (64, True),
             "u8": (8, False), "u16": (16, False), "u32": (32, False), "u64": (64, False)}


@njit(cache=True)
def cvt_float(bits, s_eb, s_fb, s_shift, d_eb, d_fb, d_shift, rnd, ftz, sat, relu, satfinite):
    """``cvt{.rnd}{.ftz}{.sat|.relu}{.satfinite}.dst.src`` between float formats; bits as an int64.

    ``s_*``/``d_*``: a ``FLOAT_CODES`` entry of the source and destination.

    >>> hex(cvt_float(0x477FF000, 8, 23, 0, 5, 10, 0, RZ, False, False, False, False))   # 65520 .rz
    '0x7bff'
    >>> hex(cvt_float(0x7F800000, 8, 23, 0, 5, 10, 0, RN, False, False, False, True))    # inf .satfinite
    '0x7bff'
    >>> hex(cvt_float(0x3F801000, 8, 23, 0, 8, 10, 13, RNA, False, False, False, False))  # tf32: a tie, away
    '0x3f802000'
    >>> hex(cvt_float(0x3C01, 5, 10, 0, 8, 23, 0, RN, False, False, False, False))        # f16 -> f32 exact
    '0x3f802000'
    """
    src_f32 = s_eb == 8 and s_fb == 23
    dst_f32 = d_eb == 8 and d_fb == 23 and d_shift == 0
    x = np.int64(bits) >> s_shift
    if ftz and src_f32 and not (d_eb == 5 and d_fb == 10):      # to f16 .ftz changes nothing (the H200)
        x = flush_subnormal(x, 8, 23)
    neg, sig, exp, cls = decode(x, s_eb, s_fb)
    if cls == NAN:
        return _cvt_nan(x, s_eb, s_fb, d_eb, d_fb, d_shift, rnd, ftz, sat, relu, satfinite)
    if cls == INF:
        r = (np.int64(neg) << (d_eb + d_fb)) | (((np.int64(1) << d_eb) - 1) << d_fb)
    else:
        r = round_bits(neg, sig, exp - s_fb, d_eb, d_fb, rnd)
    if satfinite and (r & ((np.int64(1) << (d_eb + d_fb)) - 1)) == (((np.int64(1) << d_eb) - 1) << d_fb):
        r = max_finite(neg, d_eb, d_fb)
    r = finish(r, d_eb, d_fb, ftz and dst_f32, sat, relu)
    return r << d_shift


@njit(cache=True)
def _cvt_nan(x, s_eb, s_fb, d_eb, d_fb, d_shift, rnd, ftz, sat, relu, satfinite):
    """``cvt_float``'s result for the NaN source bits ``x`` (see "NaN" in the module docstring)."""
    if s_eb == 8 and s_fb == 7 and d_eb == 8 and d_fb == 23:      # bf16 -> f32: the bits, widened
        return finish(x << 16, 8, 23, False, sat, relu)
    if d_shift and rnd == RNA:                                   # f32 -> tf32 .rna: the fraction cut
        t = x & ~((np.int64(1) << d_shift) - 1)
        return t - (np.int64(1) << d_shift) if satfinite else t
    if d_shift:                                                  # .rn/.rz: f32's canonical NaN, cut
        return finish(np.int64(0x7FFFE000), 8, 23, False, sat, relu)
    if d_eb == 11:                                               # to f64: the payload, quietened
        if ftz and s_eb == 8 and s_fb == 23:                     # .ftz: f32's canonical NaN, widened
            x = canonical_nan(8, 23)
        return finish(_f64_nan(x, s_eb, s_fb), 11, 52, False, sat, relu)
    if s_eb == 11:                                               # from f64: the payload's top, quietened
        return finish(_narrow_nan(x, d_eb, d_fb), d_eb, d_fb, False, sat, relu)
    return finish(canonical_nan(d_eb, d_fb), d_eb, d_fb, False, sat, relu)


@njit(cache=True)
def _f64_nan(x, s_eb, s_fb):
    """The f64 NaN made from the NaN bits ``x`` of a format: sign and fraction kept (the fraction moved to
    the top of f64's), quietened (fraction bit 51 set): the H200 (docs/numerics.md, "f64")."""
    neg = (x >> (s_eb + s_fb)) & 1
    frac = (x & ((np.int64(1) << s_fb) - 1)) << (52 - s_fb)
    return (neg << 63) | (np.int64(0x7FF) << 52) | frac | (np.int64(1) << 51)


@njit(cache=True)
def _narrow_nan(x, d_eb, d_fb):
    """The NaN of a narrower format made from the f64 NaN bits ``x``: sign and the fraction's top ``d_fb``
    bits kept, quietened (the H200)."""
    neg = (x >> 63) & 1
    frac = (x & ((np.int64(1) << 52) - 1)) >> (52 - d_fb)
    top = ((np.int64(1) << d_eb) - 1) << d_fb
    return (neg << (d_eb + d_fb)) | top | frac | (np.int64(1) << (d_fb - 1))


@njit(cache=True)
def _int_magnitude(sig, exp, frac_bits, neg, rnd):
    """``|round(sig * 2**(exp - frac_bits))|`` by ``rnd`` for ``exp < 64``: a uint64 (integral rounding)."""
    sh = exp - frac_bits
    if sh >= 0:
        return np.uint64(sig) << np.uint64(sh)
    shift = -sh
    q = np.int64(sig) >> shift if shift < 63 else np.int64(0)
    rem = np.int64(sig) - (q << shift) if shift < 63 else np.int64(sig)
    up = False
    if rem != 0:
        if rnd == RM:
            up = neg != 0
        elif rnd == RP:
            up = neg == 0
        elif rnd == RN or rnd == RNA:
            if shift <= 63:
                half = np.int64(1) << (shift - 1)
                up = rem > half or (rem == half and (rnd == RNA or (q & 1) == 1))
    return np.uint64(q + np.int64(up))


@njit(cache=True)
def cvt_float_to_int(bits, s_eb, s_fb, width, signed, rnd, ftz):
    """``cvt.{irnd}{.ftz}{.sat}.{int}.{float}``: the destination's bits, zero-extended (a uint64).

    Saturates to the destination's range (PTX: float-to-integer conversions always do); NaN gives 0,
    to a 64-bit integer ``0x8000000000000000``, from f64 the destination's top bit alone (the H200; see
    the module docstring).

    >>> [int(cvt_float_to_int(0xC0200000, 8, 23, 32, True, r, False)) - (1 << 32) for r in (RN, RZ, RM, RP)]
    [-2, -2, -3, -2]
    >>> hex(cvt_float_to_int(0x4F800000, 8, 23, 32, True, RN, False)), int(cvt_float_to_int(0xBF800000, 8, 23, 8, False, RN, False))
    ('0x7fffffff', 0)
    """
    x = np.int64(bits)
    if ftz and s_eb == 8 and s_fb == 23:
        x = flush_subnormal(x, 8, 23)
    neg, sig, exp, cls = decode(x, s_eb, s_fb)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - width)
    hi = mask >> np.uint64(1) if signed else mask                 # largest value, as a magnitude
    lo_mag = (hi + np.uint64(1)) if signed else np.uint64(0)     # magnitude of the smallest value
    if cls == NAN:
        return np.uint64(1) << np.uint64(width - 1) if width == 64 or s_eb == 11 else np.uint64(0)
    if cls == INF or (cls == FINITE and exp >= 64):
        mag = np.uint64(0xFFFFFFFFFFFFFFFF)
    elif sig == 0:
        mag = np.uint64(0)
    else:
        mag = _int_magnitude(sig, exp, s_fb, neg, rnd)
    if neg == 0 or mag == 0:
        return hi if mag > hi else mag
    if mag > lo_mag:
        mag = lo_mag
    return (np.uint64(0) - mag) & mask


@njit(cache=True)
def cvt_int_to_float(bits, width, signed, d_eb, d_fb, d_shift, rnd):
    """``cvt{.rnd}.{float}.{int}``: the integer in the low ``width`` bits of ``bits`` rounded once.

    >>> hex(cvt_int_to_float(16777217, 32, True, 8, 23, 0, RN)), hex(cvt_int_to_float(16777217, 32, True, 8, 23, 0, RP))
    ('0x4b800000', '0x4b800001')
    >>> hex(cvt_int_to_float(np.uint64(2**64 - 1), 64, False, 8, 23, 0, RZ))
    '0x5f7fffff'
    """
    u = np.uint64(bits) & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - width))
    neg = np.int64(0)
    if signed and (u >> np.uint64(width - 1)) & np.uint64(1):
        neg = np.int64(1)
        u = (np.uint64(0) - u) & (np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - width))
    lsb = 0
    if u >= np.uint64(1) << np.uint64(62):      # keep 62 bits, the rest as a sticky bit
        sticky = np.uint64(1) if (u & np.uint64(7)) != np.uint64(0) else np.uint64(0)
        u = (u >> np.uint64(3)) | sticky
        lsb = 3
    return round_bits(neg, np.int64(u), lsb, d_eb, d_fb, rnd) << d_shift


@njit(cache=True)
def cvt_round_int(bits, eb, fb, rnd, ftz):
    """``cvt.{rni,rzi,rmi,rpi}{.ftz}.f32.f32`` (or f16): an integral value in the same format.

    >>> [hex(cvt_round_int(0xBF000000, 8, 23, r, False)) for r in (RN, RZ, RM, RP)]   # -0.5
    ['0x80000000', '0x80000000', '0xbf800000', '0x80000000']
    """
    x = np.int64(bits)
    if ftz:
        x = flush_subnormal(x, eb, fb)
    neg, sig, exp, cls = decode(x, eb, fb)
    if cls == NAN:
        return _f64_nan(x, eb, fb) if eb == 11 else canonical_nan(eb, fb)
    if cls == INF or exp >= fb:
        return x
    if sig == 0:
        return x
    mag = np.int64(_int_magnitude(sig, exp, fb, neg, rnd))
    return round_bits(neg, mag, 0, eb, fb, RN)


@njit(cache=True)
def cvt_pack_x2(a, b, d_eb, d_fb, rnd, relu, satfinite):
    """``cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b``: ``a`` upper, ``b`` lower.

    >>> hex(cvt_pack_x2(0xBF800000, 0x477FF000, 5, 10, RZ, True, False))   # relu(-1) upper, 65520 .rz lower
    '0x7bff'
    """
    if rnd == RN and not relu and not satfinite:
        to = F16_CODE if d_eb == 5 else BF16_CODE
        return np.uint32((cvt_f32_to_16(a, to) << 16) | cvt_f32_to_16(b, to))
    hi = cvt_float(a, 8, 23, 0, d_eb, d_fb, 0, rnd, False, False, relu, satfinite)
    lo = cvt_float(b, 8, 23, 0, d_eb, d_fb, 0, rnd, False, False, relu, satfinite)
    return np.uint32((hi << 16) | lo)


@njit(cache=True, parallel=True)
def _convert_kernel(x, out, kind, s0, s1, s2, d0, d1, d2, rnd, ftz, sat, relu, satfinite):
    for i in prange(x.shape[0]):
        if kind == 0:
            out[i] = np.uint64(cvt_float(x[i], s0, s1, s2, d0, d1, d2, rnd, ftz, sat, relu, satfinite))
        elif kind == 1:
            out[i] = cvt_float_to_int(x[i], s0, s1, d0, d1 != 0, rnd, ftz)
        elif kind == 2:
            out[i] = np.uint64(cvt_int_to_float(x[i], s0, s1 != 0, d0, d1, d2, rnd))
        else:
            out[i] = np.uint64(cvt_round_int(x[i], s0, s1, rnd, ftz))


_IRND = {"rni": RN, "rzi": RZ, "rmi": RM, "rpi": RP}
_FRND = {"rn": RN, "rz": RZ, "rm": RM, "rp": RP, "rna": RNA}


def cvt_convert(x, *, dst, src, rnd, ftz=False, sat=False, relu=False, satfinite=False):
    """Batched ``cvt.{rnd}{.ftz}{.sat}{.relu}{.satfinite}.{dst}.{src} d, a`` over register bits.

    ``x``: uint32 (uint64 for 64-bit integer sources) holding the source's bits (16-bit ones in the
    low half). Returns uint64 bits of the destination (16-bit ones in the low half, integers
    zero-extended). ``rnd``: ``rn rz rm rp`` (``rna`` for tf32) between floats and from integers,
    ``rni rzi rmi rpi`` to integers and float-to-same-float rounding.

    >>> import numpy as np
    >>> [hex(int(v)) for v in cvt_convert(np.array([0x3FC00000, 0xC0200000], np.uint32), dst="s32", src="f32", rnd="rni")]
    ['0x2', '0xfffffffe']
    >>> hex(int(cvt_convert(np.array([0x7F7FF000], np.uint32), dst="tf32", src="f32", rnd="rna")[0]))
    '0x7f800000'
    """
    name = (f"cvt.{rnd}{'.ftz' if ftz else ''}{'.sat' if sat else ''}{'.relu' if relu else ''}"
            f"{'.satfinite' if satfinite else ''}.{dst}.{src}")
    if not isinstance(x, np.ndarray) or x.dtype not in (np.uint32, np.uint64):
        raise TypeError(f"{name}: x must be a numpy array of uint32 or uint64 (register bits), got "
                        f"{getattr(x, 'dtype', type(x).__name__)}")
    for label, t in (("dst", dst), ("src", src)):
        if t not in FLOAT_CODES and t not in INT_TYPES:
            raise ValueError(f"{name}: {label} must be one of {', '.join([*FLOAT_CODES, *INT_TYPES])}, got {t!r}")
    if src == "tf32":
        raise ValueError(f"{name}: tf32 is a destination type only")
    if src in INT_TYPES and dst in INT_TYPES:
        raise ValueError(f"{name}: integer-to-integer cvt is not a float conversion")
    if (relu or satfinite) and not (src == "f32" and dst in ("f16", "bf16", "tf32")):
        raise ValueError(f"{name}: .relu and .satfinite are defined for f32 to f16/bf16/tf32 only")
    if (dst == "tf32") != (rnd == "rna") and not (dst == "tf32" and rnd in ("rn", "rz")):
        raise ValueError(f"{name}: .rna is for tf32 only (tf32 takes .rna, .rn or .rz)")
    same_float = src == dst and src in FLOAT_CODES
    if dst in INT_TYPES or same_float:
        if rnd not in _IRND:
            raise ValueError(f"{name}: rounding to an integer must be one of {', '.join(_IRND)}, got {rnd!r}")
        r = _IRND[rnd]
    else:
        if rnd not in _FRND:
            raise ValueError(f"{name}: rounding must be one of {', '.join(_FRND)}, got {rnd!r}")
        r = _FRND[rnd]
    if sat and (dst in INT_TYPES or src in INT_TYPES):
        sat = False   # integer conversions saturate anyway; PTX accepts .sat there
    flat = np.ascontiguousarray(x).ravel().astype(np.uint64)
    out = np.empty(flat.size, np.uint64)
    if src in INT_TYPES:
        (w, signed), d = INT_TYPES[src], FLOAT_CODES[dst]
        _convert_kernel(flat, out, 2, w, int(signed), 0, *d, r, False, False, False, False)
    elif dst in INT_TYPES:
        (w, signed), s = INT_TYPES[dst], FLOAT_CODES[src]
        _convert_kernel(flat, out, 1, *s, w, int(signed), 0, r, ftz, False, False, False)
    elif same_float:
        s = FLOAT_CODES[src]
        _convert_kernel(flat, out, 3, *s, *s, r, ftz, False, False, False)
    else:
        _convert_kernel(flat, out, 0, *FLOAT_CODES[src], *FLOAT_CODES[dst], r, ftz, sat, relu, satfinite)
    return out.reshape(x.shape)
