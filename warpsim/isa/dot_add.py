"""The fused dot-add of Hopper's ``wgmma`` for tf32, fp8 (e4m3, e5m2) and 8-bit integer inputs, bit-exact.

One output element is ``d = c + sum_k a[k] * b[k]`` over the instruction's whole k (8 for tf32, 32 for fp8 and
integers), in one step:

1. Decoding: tf32 is an f32 bit pattern whose 13 low fraction bits are ignored; e4m3 has no infinity and one NaN
   code (``S.1111.111``), its exponent 15 otherwise normal; e5m2 is IEEE-like. A normal input is ``1.f * 2**e``, a
   subnormal ``0.f * 2**emin`` (no flush to zero). A zero takes the exponent ``zero_exp`` (``DotModel``; on
   Hopper :data:`NO_PART` for both families: a zero takes no part in the largest exponent).
2. Products are exact: significand product, exponent ``ea + eb`` (not renormalised; a product with a zero factor
   keeps ``zero_exp + e_other`` and a zero significand).
3. The products and ``c`` are aligned to the largest exponent ``emax`` among them, each keeping ``frac_bits`` fraction
   bits below ``2**emax`` but none below ``2**min_quantum`` (``DotModel``: -158 for tf32, so that with a zero ``c``
   and only tiny products the sum's last bit is ``2**-158``, 9 below f32's smallest subnormal), the bits shifted out
   truncated toward zero on the magnitude, and summed exactly.
4. The sum is rounded to the output: f32 by truncation to ``out_frac`` fraction bits (23 for tf32; 13 for fp8: the
   f32 it writes has its 10 low fraction bits zero), subnormals kept, ``2**128`` or more giving inf; f16 by
   round-to-nearest-even. Every zero result is ``+0``.
5. Special values: a NaN input, ``inf * 0``, or ``+inf`` and ``-inf`` together give the canonical NaN (``0x7FFFFFFF``
   f32, ``0x7FFF`` f16); otherwise an infinity wins with its sign.

Integers: ``d = c + sum_k a[k] * b[k]`` exactly, wrapped to 32 bits, or clamped to the s32 range with ``.satfinite``.

Evidence: :data:`SM90_TF32` and :data:`SM90_FP8` name theirs (the campaign ``hwcheck.campaigns.wgmma_types`` on an
H100; the parameters' sources, MMA-Sim arXiv 2511.10909, stated as facts in docs/hardware-model.md).
Everything here computes on integers.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = ["DotModel", "NO_PART", "SM90_TF32", "SM90_FP8", "DOT_TYPES", "DOT_CD", "dot_add", "int_dot_add", "dot_add_matrix",
           "model_for"]

# input type codes (after mma's f16 = 0, bf16 = 1), accumulator codes (f32 = 0, f16 = 1, s32 = 2)
DOT_TYPES = {"tf32": 2, "e4m3": 3, "e5m2": 4, "s8": 5, "u8": 6}
DOT_CD = {"f32": 0, "f16": 1, "s32": 2}
_TF32, _E4M3, _E5M2, _S8, _U8 = 2, 3, 4, 5, 6


@dataclass(frozen=True)
class DotModel:
    """The parameters of one input family's fused dot-add: ``frac_bits`` kept below the largest exponent, ``out_frac``
    the fraction bits of an f32 result, ``zero_exp`` the exponent a zero input takes, ``min_quantum`` the exponent of
    the smallest bit an aligned term keeps (:data:`NO_PART`: no floor); ``evidence``."""

    name: str
    frac_bits: int
    out_frac: int
    zero_exp: int
    min_quantum: int
    evidence: str


NO_PART = -(1 << 20)      # a zero_exp below every product's exponent: zeros take no part in the alignment

SM90_TF32 = DotModel("sm90 tf32", frac_bits=25, out_frac=23, zero_exp=NO_PART, min_quantum=-158,
                     evidence=("hwcheck.campaigns.wgmma_types on an H100 (conformance/h100/wgmma-types-first-compare/): "
                               "2,097,152 tf32 accumulator words (SS and RS, four classes) the GPU's bits; 26 fraction bits "
                               "differ on 92,858 of them, a zero at exponent -126 (MMA-Sim's rule) on 107, at -232 "
                               "on 1, at -245 or below on none. MMA-Sim arXiv 2511.10909 for the 25 bits. The floor "
                               "2**-158: the streamed campaign of 10^6 tf32 instructions (conformance/h100/"
                               "wgmma-types-stream-seed1/) differed from the model without it on 20 of 1,024,000,000 "
                               "words, all with c zero and tiny products; a floor at -158 gives exactly those 20 words "
                               "(every recorded one the GPU's bits) and changes no other, at -157 or -159 it changes "
                               "other counts (15 and 4 in the RS kernel where the GPU had 12)"))
SM90_FP8 = DotModel("sm90 fp8", frac_bits=13, out_frac=13, zero_exp=NO_PART, min_quantum=NO_PART,
                    evidence=("hwcheck.campaigns.wgmma_types on an H100: 5,242,880 fp8 accumulator words (e4m3, e5m2, "
                              "mixed; f32 and f16; SS and RS; four classes) the GPU's bits (conformance/h100/"
                              "wgmma-types-first-compare/); then 512 CTAs of five classes, the class 'sparse' made to "
                              "pin the zero exponent: a zero at -126 (MMA-Sim's rule) differs on 10,083 words, at -140 "
                              "on 404, at -150 or below on none (conformance/h100/wgmma-types-second-compare/). Triton's "
                              "e4m3 GEMM, 8,192 outputs the H100's bits. MMA-Sim arXiv 2511.10909 for the 13 bits"))


def model_for(t):
    """The :class:`DotModel` of input type ``t`` (``"tf32"``, ``"e4m3"``, ``"e5m2"``)."""
    return SM90_TF32 if t == "tf32" else SM90_FP8


@njit(cache=True, inline="always")
def _fields(neg, e, f, fb, bias, top):
    """``(kind, neg, sig, exp, frac)`` of a float's sign, biased exponent ``e`` and fraction ``f`` (``fb`` bits):
    kind 0 finite, 1 inf, 2 NaN (``e == top``; a ``top`` the exponent never reaches: no infinity or NaN here)."""
    if e == top:
        return (2 if f else 1), neg, 0, 0, fb
    if e == 0:
        return 0, neg, f, 1 - bias, fb
    return 0, neg, f | (1 << fb), e - bias, fb


@njit(cache=True, inline="always")
def _decode(bits, t):
    """``(kind, neg, sig, exp, frac)`` of an element of type ``t``: value ``sig * 2**(exp - frac)``."""
    if t == _TF32:
        return _fields((bits >> 31) & 1, (bits >> 23) & 0xFF, (bits >> 13) & 0x3FF, 10, 127, 255)
    if t == _E4M3:
        if bits & 0x7F == 0x7F:                          # S.1111.111: e4m3's NaN; no infinity
            return 2, (bits >> 7) & 1, 0, 0, 3
        return _fields((bits >> 7) & 1, (bits >> 3) & 0xF, bits & 7, 3, 7, 99)
    return _fields((bits >> 7) & 1, (bits >> 2) & 0x1F, bits & 3, 2, 15, 31)


@njit(cache=True, inline="always")
def _decode_c(bits, cd):
    """The accumulator's ``(kind, neg, sig, exp, frac)``: f32 (``cd`` 0) or f16 in the low 16 bits."""
    if cd == 0:
        return _fields((bits >> 31) & 1, (bits >> 23) & 0xFF, bits & 0x7FFFFF, 23, 127, 255)
    return _fields((bits >> 15) & 1, (bits >> 10) & 0x1F, bits & 0x3FF, 10, 15, 31)


@njit(cache=True, inline="always")
def _bit_length(m):
    n = 0
    while m:
        m >>= 1
        n += 1
    return n


@njit(cache=True, inline="always")
def _align(sig, exp, frac, neg, emax, frac_bits):
    """A term ``sig * 2**(exp - frac)`` as a multiple of ``2**(emax - frac_bits)``, truncated toward zero, signed."""
    s = frac_bits - frac + exp - emax
    v = sig << s if s >= 0 else (sig >> (-s) if -s < 63 else np.int64(0))
    return -v if neg else v


@njit(cache=True)
def dot_add(a, b, k, ta, tb, c, cd, frac_bits, out_frac, zero_exp, min_quantum):
    """The bits of ``c + sum a[i] * b[i]`` (``i < k``): ``a``/``b`` int64 element bits of types ``ta``/``tb``
    (:data:`DOT_TYPES`), ``c`` the accumulator's bits (f32, or f16 in the low 16: ``cd`` 0 or 1); the model's
    ``frac_bits``, ``out_frac``, ``zero_exp``, ``min_quantum``. See the module docstring."""
    nan = False
    pinf = False
    ninf = False
    emax = np.int64(-(1 << 40))
    for i in range(k):                                   # specials and the largest exponent
        ka, na, sa, ea, fa = _decode(a[i], ta)
        kb, nb, sb, eb, fb = _decode(b[i], tb)
        if ka == 2 or kb == 2:
            nan = True
        elif ka == 1 or kb == 1:
            if (ka == 1 and kb == 0 and sb == 0) or (kb == 1 and ka == 0 and sa == 0):
                nan = True
            elif na ^ nb:
                ninf = True
            else:
                pinf = True
        else:
            emax = max(emax, (ea if sa else zero_exp) + (eb if sb else zero_exp))
    kc, nc, sc, ec, fc = _decode_c(c, cd)
    if kc == 2:
        nan = True
    elif kc == 1:
        if nc:
            ninf = True
        else:
            pinf = True
    if nan or (pinf and ninf):
        return np.int64(0x7FFFFFFF) if cd == 0 else np.int64(0x7FFF)
    if pinf or ninf:
        if cd == 0:
            return np.int64(0xFF800000) if ninf else np.int64(0x7F800000)
        return np.int64(0xFC00) if ninf else np.int64(0x7C00)
    ec = ec if sc else zero_exp
    emax = max(emax, ec)
    frac_bits = min(frac_bits, emax - min_quantum)          # no bit below 2**min_quantum
    total = _align(sc, ec, fc, nc, emax, frac_bits)
    for i in range(k):                                   # the aligned products, summed exactly
        ka, na, sa, ea, fa = _decode(a[i], ta)
        kb, nb, sb, eb, fb = _decode(b[i], tb)
        if sa and sb:
            total += _align(sa * sb, ea + eb, fa + fb, na ^ nb, emax, frac_bits)
    if total == 0:
        return np.int64(0)
    neg = total < 0
    m = -total if neg else total
    e_lead = emax - frac_bits + _bit_length(m) - 1        # the exponent of the sum's leading bit
    if cd == 0:
        if e_lead >= 128:
            return np.int64(0xFF800000) if neg else np.int64(0x7F800000)
        e_eff = max(e_lead, np.int64(-126))
        q = e_eff - out_frac                               # the result's quantum: 2**q
        s = emax - frac_bits - q
        units = m << s if s >= 0 else (m >> (-s) if -s < 63 else np.int64(0))
        if units == 0:
            return np.int64(0)
        if e_lead >= -126:
            bits = ((e_eff + 127) << 23) | ((units - (np.int64(1) << out_frac)) << (23 - out_frac))
        else:
            bits = units << (23 - out_frac)
        return bits | (np.int64(0x80000000) if neg else 0)
    e_eff = max(e_lead, np.int64(-14))
    s = emax - frac_bits - (e_eff - 10)
    if s >= 0:
        units = m << s
    elif -s >= 63:
        units = np.int64(0)
    else:
        units = m >> (-s)
        rem = m - (units << (-s))
        half = np.int64(1) << (-s - 1)
        if rem > half or (rem == half and units & 1):
            units += 1
    if units >= 2048:
        units >>= 1
        e_eff += 1
    if units == 0:
        return np.int64(0)
    if e_eff > 15:
        bits = np.int64(0x7C00)
    elif units >= 1024:
        bits = ((e_eff + 15) << 10) | (units - 1024)
    else:
        bits = units
    return bits | (np.int64(0x8000) if neg else 0)


@njit(cache=True)
def int_dot_add(a, b, k, ta, tb, c, satfinite):
    """The s32 bits of ``c + sum a[i] * b[i]``: ``a``/``b`` int64 bytes of types ``ta``/``tb`` (s8 5, u8 6), ``c`` the
    accumulator's bits; wrapped to 32 bits, or clamped to the s32 range when ``satfinite``."""
    total = np.int64(c & 0xFFFFFFFF)
    if total >= 1 << 31:
        total -= np.int64(1) << 32
    for i in range(k):
        x = a[i] & 0xFF
        y = b[i] & 0xFF
        if ta == _S8 and x >= 128:
            x -= 256
        if tb == _S8 and y >= 128:
            y -= 256
        total += x * y
    if satfinite:
        total = min(max(total, -(np.int64(1) << 31)), (np.int64(1) << 31) - 1)
    return total & 0xFFFFFFFF


def dot_add_matrix(a, b, c, ta, tb, cd, satfinite=False, model=None):
    """``D = A B + C`` on matrices of bit patterns: ``a`` ``[M, K]``, ``b`` ``[K, N]`` element bits of types ``ta``/``tb``
    (names of :data:`DOT_TYPES`), ``c`` ``[M, N]`` bits of ``cd`` (None: zero, scale-d false). Returns ``uint32[M, N]``.

    >>> import numpy as np
    >>> one, two = 0x38, 0x40                                   # e4m3 1.0 and 2.0
    >>> hex(int(dot_add_matrix(np.full((1, 32), one), np.full((32, 1), two), None, "e4m3", "e4m3", "f32")[0, 0]))
    '0x42800000'
    """
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    m, k = a.shape
    n = b.shape[1]
    d = np.zeros((m, n), np.uint32)
    c = np.zeros((m, n), np.int64) if c is None else np.asarray(c, np.int64)
    t_a, t_b = DOT_TYPES[ta], DOT_TYPES[tb]
    model = model or model_for(ta)
    for i in range(m):
        for j in range(n):
            col = np.ascontiguousarray(b[:, j])
            if cd == "s32":
                d[i, j] = int_dot_add(a[i], col, k, t_a, t_b, c[i, j], satfinite)
            else:
                d[i, j] = dot_add(a[i], col, k, t_a, t_b, c[i, j], DOT_CD[cd], model.frac_bits, model.out_frac,
                                  model.zero_exp, model.min_quantum)
    return d
