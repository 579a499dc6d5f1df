"""Input generators for conformance campaigns: raw register fragments and shared memory.

``mma_inputs(cls, count, *, shape, ab, cd, rng) -> (a, b, c)`` gives PTX fragments for ``count``
instructions of input class ``cls``:

- ``ordinary``: finite values in [-1, 1);
- ``random-bits``: any bit patterns (NaN and inf included);
- ``wide-exp``: finite values with exponents spread over the whole format (subnormals included);
- ``cancellation``: pairs of products that cancel exactly or nearly (last bit flipped), small c;
- ``subnormal``: mostly subnormal inputs, tiny c;
- ``special``: ordinary values with inf, NaN, +0 and -0 mixed in;
- ``overflow``: sums near the output's largest finite value (2**128 for f32, 65504 for f16);
- ``ties``: sums that sit exactly halfway between two output values (f16 RNE ties; truncation
  boundaries for f32).

The evidence classes (``EVIDENCE_CLASSES``) are built so that the result depends on one model
parameter (``warpsim.isa.arith.ArchModel``): with the parameter moved by one (or to the other block
size) a good share of the outputs change. Each output is a large term (``c``, or a product) that sits
on a rounding boundary (an f16 tie, or an exact f32 value that truncation keeps), plus one to three
tiny products of random sign whose bits lie around the model's last kept bit ``2**(emax - F)``:
whether a tiny term survives its truncation decides the rounding.

- ``frac-bits`` (``F``): ``c`` in [1, 2) (and, for f16 output, a product of half an ulp), tiny
  products between ``2**-28`` and ``2**-21``: their survival depends on ``F``;
- ``block`` (``L``, and sm_80's rounding between blocks): as ``frac-bits``, with the large term and
  one tiny product in k = 0..7 and another tiny product in k = 8..15: a block of 8 rounds the
  first half before the second is added;
- ``floor`` (``ez_f32`` / ``ez_f16``): ``c = 0`` and every product below ``2**EZ`` (the two non-zero
  ones in the same half of k), so that the block exponent is the floor itself: bf16 -> f32: an
  exact multiple of ``2**-149`` plus one product between ``2**-161`` and ``2**-155`` of random sign;
  f16 -> f16: an odd multiple of ``2**-25`` (an RNE tie of f16's subnormals) plus one product
  between ``2**-48`` and ``2**-41``. With f16
  inputs and f32 output the floor cannot act (products are at least ``2**-48``, far above
  ``2**-133``): that combination gets the f16 construction and proves nothing about ``ez_f32``.

``ldmatrix_inputs(count, *, num, trans, smem_bytes, rng) -> (smem, addrs)``: random shared memory
and random 16-byte-aligned row addresses.

``cvt_inputs(cls, count, *, to, rng) -> (a, b)``: f32 bit patterns for ``cvt.rn.{to}x2.f32``, of class

- ``random-bits``: any 32-bit patterns (NaNs of every payload, infinities, subnormals);
- ``range``: finite values whose exponents span the destination's range and a little beyond;
- ``subnormal``: f32 subnormals and values in the destination's subnormal range;
- ``ties``: exact midpoints between neighbouring destination values (the overflow midpoint included),
  a quarter of them moved one f32 ulp up or down;
- ``special``: zeros, infinities, NaNs (quiet, signalling, both signs) and the destination's edges
  (largest finite, overflow threshold, smallest subnormal and half of it), mixed with ``range``.

Everything is deterministic given ``rng``.

>>> import numpy as np
>>> a, b, c = mma_inputs("ordinary", 3, rng=np.random.default_rng(0))
>>> a.shape, b.shape, c.shape, a.dtype == np.uint32
((3, 32, 4), (3, 32, 2), (3, 32, 4), True)
"""

import numpy as np

from warpsim.isa.cvt import cvt_pack
from warpsim.isa.fragments import MMA_FRAGMENTS, to_fragment
from warpsim.isa.mma import TYPE_COMBOS

__all__ = ["MMA_CLASSES", "EVIDENCE_CLASSES", "CVT_CLASSES", "mma_inputs", "mma_matrices", "ldmatrix_inputs",
           "cvt_inputs"]

MMA_CLASSES = ("ordinary", "random-bits", "wide-exp", "cancellation", "subnormal", "special",
               "overflow", "ties")
# class -> the ArchModel parameters it discriminates (see the module docstring)
EVIDENCE_CLASSES = {"frac-bits": ("frac_bits",), "block": ("block",), "floor": ("ez_f32", "ez_f16")}
CVT_CLASSES = ("random-bits", "range", "subnormal", "ties", "special")
_FMT = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23)}   # (exp_bits, frac_bits)


def _bits(fmt, sign, exp_field, frac):
    eb, fb = _FMT[fmt]
    return ((sign.astype(np.uint64) << (eb + fb)) | (exp_field.astype(np.uint64) << fb)
            | frac.astype(np.uint64)).astype(np.uint32)


def _from_float(fmt, x):
    """Round float values to ``fmt`` bits (input generation only; never a simulated result)."""
    x32 = np.asarray(x, np.float32)
    if fmt == "f32":
        return x32.view(np.uint32)
    if fmt == "f16":
        return x32.astype(np.float16).view(np.uint16).astype(np.uint32)
    return cvt_pack(np.zeros(x32.shape, np.uint32), x32.view(np.uint32), to="bf16") & 0xFFFF


def _uniform(fmt, shape, rng, lo=-1.0, hi=1.0):
    return _from_float(fmt, rng.uniform(lo, hi, shape))


def _wide(fmt, shape, rng, top_field=None):
    """Finite values whose exponent field is uniform in ``[0, top_field]`` (default: all finite)."""
    eb, fb = _FMT[fmt]
    top = (1 << eb) - 2 if top_field is None else top_field
    return _bits(fmt, rng.integers(0, 2, shape), rng.integers(0, top + 1, shape),
                 rng.integers(0, 1 << fb, shape))


def _specials(fmt, shape, rng):
    eb, fb = _FMT[fmt]
    inf = ((1 << eb) - 1) << fb
    choices = np.array([inf, inf | (1 << (eb + fb)), inf | 1, inf | (1 << (fb - 1)),
                        0, 1 << (eb + fb)], np.uint32)   # +inf, -inf, NaNs, +0, -0
    return choices[rng.integers(0, choices.size, shape)]


def _value_of(fmt, bits):
    """Float64 of bits (input generation only)."""
    if fmt == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def mma_matrices(cls, count, *, k=16, ab="f16", cd="f32", rng):
    """Matrices of bit patterns ``A [count, 16, k]``, ``B [count, k, 8]``, ``C [count, 16, 8]``."""
    if cls not in MMA_CLASSES and cls not in EVIDENCE_CLASSES:
        raise ValueError(f"mma_inputs: cls must be one of {MMA_CLASSES + tuple(EVIDENCE_CLASSES)}, got {cls!r}")
    if (ab, cd) not in TYPE_COMBOS:
        raise ValueError(f"mma_inputs: ab={ab!r} with cd={cd!r} is not a PTX mma type combination")
    sa, sb, sc = (count, 16, k), (count, k, 8), (count, 16, 8)
    if cls in EVIDENCE_CLASSES:
        return _evidence(cls, count, k, ab, cd, rng)
    if cls == "ordinary":
        return _uniform(ab, sa, rng), _uniform(ab, sb, rng), _uniform(cd, sc, rng)
    if cls == "random-bits":
        top = 1 << (32 if cd == "f32" else 16)
        return (rng.integers(0, 1 << 16, sa).astype(np.uint32), rng.integers(0, 1 << 16, sb).astype(np.uint32),
                rng.integers(0, top, sc, dtype=np.uint64).astype(np.uint32))
    if cls == "wide-exp":   # products reach at most about the output's largest finite value
        eb_in = _FMT[ab][0]
        bias_in, emax_out = (1 << (eb_in - 1)) - 1, (1 << (_FMT[cd][0] - 1)) - 1
        top = min((1 << eb_in) - 2, bias_in + emax_out // 2)
        return _wide(ab, sa, rng, top), _wide(ab, sb, rng, top), _wide(cd, sc, rng)
    if cls == "cancellation":
        a, b = _uniform(ab, sa, rng), _uniform(ab, sb, rng)
        a[:, :, 1::2] = a[:, :, 0::2] ^ 0x8000                      # a[2j+1] = -a[2j]
        b[:, 1::2, :] = b[:, 0::2, :]                               # b[2j+1] = b[2j]
        flip = rng.integers(0, 2, a[:, :, 1::2].shape).astype(np.uint32)
        a[:, :, 1::2] ^= flip                                       # half of the pairs cancel only nearly
        return a, b, _uniform(cd, sc, rng, -2.0 ** -12, 2.0 ** -12)
    if cls == "subnormal":
        eb, fb = _FMT[ab]
        exp_field = np.where(rng.random(sa) < 0.75, 0, rng.integers(1, 3, sa))
        a = _bits(ab, rng.integers(0, 2, sa), exp_field, rng.integers(0, 1 << fb, sa))
        exp_field = np.where(rng.random(sb) < 0.75, 0, rng.integers(1, 3, sb))
        b = _bits(ab, rng.integers(0, 2, sb), exp_field, rng.integers(0, 1 << fb, sb))
        ceb, cfb = _FMT[cd]
        c = _bits(cd, rng.integers(0, 2, sc), np.where(rng.random(sc) < 0.5, 0, rng.integers(1, 4, sc)),
                  rng.integers(0, 1 << cfb, sc))
        c[rng.random(sc) < 0.2] = 0
        return a, b, c
    if cls == "special":
        a, b, c = _uniform(ab, sa, rng), _uniform(ab, sb, rng), _uniform(cd, sc, rng)
        for x, fmt in ((a, ab), (b, ab), (c, cd)):
            mask = rng.random(x.shape) < 0.02
            x[mask] = _specials(fmt, x.shape, rng)[mask]
        return a, b, c
    if cls == "overflow":
        if cd == "f32":
            top = 2.0 ** 127 * rng.uniform(1.0, 2.0, sc)
            a = _uniform(ab, sa, rng, 0.5, 1.0)
            if ab == "bf16":   # products up to about 2**126 push the sum across 2**128
                a = _from_float("bf16", _value_of("bf16", a) * 2.0 ** 63)
                b = _from_float("bf16", rng.uniform(-1.0, 1.0, sb) * 2.0 ** 63)
            else:              # f16 products are small: c sits within an ulp of the top
                b = _uniform(ab, sb, rng)
                top = np.float64(np.float32(3.4028234663852886e38)) * np.ones(sc)
        else:
            a = _uniform(ab, sa, rng, 0.0, 16.0)
            b = _uniform(ab, sb, rng, -16.0, 16.0)
            top = 65504.0 - rng.uniform(0.0, 256.0, sc)
        c = _from_float(cd, top * np.where(rng.random(sc) < 0.5, -1.0, 1.0))
        return a, b, c
    # ties: a[m, 0] * b[0, n] = +-2**em is exactly half an ulp of c (exponent em + frac_bits + 1);
    # the other products cancel in exact pairs: a[2j+1] = -a[2j], b[2j+1] = b[2j] for k >= 2
    cfb = _FMT[cd][1]
    em = rng.integers(-8, 1, (count, 16))
    a = np.zeros(sa, np.uint32)
    b = np.zeros(sb, np.uint32)
    a[:, :, 0] = _from_float(ab, 2.0 ** em)
    b[:, 0, :] = _from_float(ab, np.where(rng.random((count, 8)) < 0.5, -1.0, 1.0))
    e_c = em[:, :, None] + cfb + 1
    mant = 1.0 + rng.integers(0, 1 << 10, sc) / 2.0 ** 10
    c = _from_float(cd, mant * 2.0 ** e_c * np.where(rng.random(sc) < 0.5, -1.0, 1.0))
    a[:, :, 2:] = _uniform(ab, (count, 16, k - 2), rng)
    a[:, :, 3::2] = a[:, :, 2::2] ^ 0x8000
    b[:, 2:, :] = _uniform(ab, (count, k - 2, 8), rng)
    b[:, 3::2, :] = b[:, 2::2, :]
    return a, b, c


def _signs(shape, rng):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


class _Terms:
    """Sparse A and B: each term is one k per instruction, with a value per row of A and per column
    of B (so the 128 outputs of an instruction see different products)."""

    def __init__(self, count, k, ab):
        self.ab, self.count = ab, count
        self.a = np.zeros((count, 16, k), np.uint32)
        self.b = np.zeros((count, k, 8), np.uint32)

    def put(self, pos, a_vals, b_vals):
        i = np.arange(self.count)
        self.a[i, :, pos] = _from_float(self.ab, a_vals)
        self.b[i, pos, :] = _from_float(self.ab, b_vals)

    def tiny(self, pos, rng, keep=None, lo=-14, hi=-11):
        """Products ``+-(1 + u) * 2**(ea + eb)``, ``ea``, ``eb`` in ``[lo, hi]``, at ``pos`` in the
        instructions where ``keep`` (bool per instruction; default all)."""
        n = self.count
        self.put(pos, (1 + rng.random((n, 16))) * 2.0 ** rng.integers(lo, hi + 1, (n, 16)),
                 _signs((n, 8), rng) * 2.0 ** rng.integers(lo, hi + 1, (n, 8)))
        if keep is not None:
            drop = np.flatnonzero(~keep)
            self.a[drop, :, pos[drop]] = 0


def _evidence(cls, count, k, ab, cd, rng):
    """The evidence classes (module docstring): ``(A, B, C)`` matrices."""
    sc = (count, 16, 8)
    t = _Terms(count, k, ab)
    order = np.argsort(rng.random((count, k)), axis=1)      # distinct random positions per instruction
    if cls == "floor":   # both terms in one half: a block of 8 must not see the other's result as c
        order = np.argsort(rng.random((count, 8)), axis=1) + 8 * rng.integers(0, k // 8, (count, 1))
        if ab == "bf16" and cd == "f32":   # K * 2**-149 (K < 256) plus one product near 2**-158
            t.put(order[:, 0], rng.integers(1, 256, (count, 16)) * 2.0 ** -75, _signs((count, 8), rng) * 2.0 ** -74)
            t.put(order[:, 1], (1 + rng.random((count, 16))) * 2.0 ** -80,
                  _signs((count, 8), rng) * 2.0 ** rng.integers(-81, -75, (count, 8)))
        else:                              # (2j + 1) * 2**-25 (j < 8) plus a product of subnormals
            t.put(order[:, 0], (2 * rng.integers(0, 8, (count, 16)) + 1) * 2.0 ** -13,
                  _signs((count, 8), rng) * 2.0 ** -12)
            t.put(order[:, 1], rng.integers(1, 16, (count, 16)) * 2.0 ** -24,
                  _signs((count, 8), rng) * 2.0 ** rng.integers(-24, -20, (count, 8)))
        return t.a, t.b, np.zeros(sc, np.uint32)
    if cls == "block" and k == 16:          # large term and a tiny one in k < 8, a tiny one in k >= 8
        first = np.argsort(rng.random((count, 8)), axis=1)
        big, tinies = first[:, 0], [first[:, 1], 8 + rng.integers(0, 8, count)]
        keep = [None, None]
    else:                                    # one to three tiny products per instruction
        big, tinies = order[:, 0], [order[:, 1], order[:, 2], order[:, 3]]
        many = rng.integers(1, 4, count)
        keep = [None, many >= 2, many >= 3]
    c = _from_float(cd, _signs(sc, rng) * (1 + rng.random(sc)))
    if cd == "f16":                          # half an ulp of c in [1, 2): an RNE tie
        t.put(big, np.full((count, 16), 2.0 ** -6), _signs((count, 8), rng) * 2.0 ** -5)
    for pos, kept in zip(tinies, keep):
        t.tiny(pos, rng, kept)
    return t.a, t.b, c


def mma_inputs(cls, count, *, shape="m16n8k16", ab="f16", cd="f32", rng):
    """PTX fragments ``(a, b, c)`` (uint32) for ``count`` instructions of input class ``cls``."""
    if shape not in ("m16n8k16", "m16n8k8"):
        raise ValueError(f"mma_inputs: shape must be 'm16n8k16' or 'm16n8k8', got {shape!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"mma_inputs: rng must be a numpy Generator, got {type(rng).__name__}")
    k = 16 if shape == "m16n8k16" else 8
    a, b, c = mma_matrices(cls, count, k=k, ab=ab, cd=cd, rng=rng)
    return (_pack(MMA_FRAGMENTS[(shape, "A")], a), _pack(MMA_FRAGMENTS[(shape, "B")], b),
            _pack(MMA_FRAGMENTS[(shape, f"C.{cd}")], c))


def _pack(fmap, matrix):
    return np.ascontiguousarray(to_fragment(fmap, matrix))


def ldmatrix_inputs(count, *, num, trans, smem_bytes, rng, ignored="valid"):
    """Random ``smem uint8[count, smem_bytes]`` and row addresses ``int64[count, 32]``.

    Lanes ``0 .. 8*num-1`` get random 16-byte-aligned addresses of whole rows inside shared memory.
    The other lanes get valid addresses too (``ignored="valid"``) or arbitrary ones, misaligned or
    out of range (``ignored="random"``), which ldmatrix must neither read nor check. ``trans`` is
    accepted for symmetry: the addresses do not depend on it.
    """
    if num not in (1, 2, 4):
        raise ValueError(f"ldmatrix_inputs: num must be 1, 2 or 4, got {num!r}")
    if smem_bytes < 16 or smem_bytes % 16:
        raise ValueError(f"ldmatrix_inputs: smem_bytes must be a positive multiple of 16, got {smem_bytes}")
    if ignored not in ("valid", "random"):
        raise ValueError(f"ldmatrix_inputs: ignored must be 'valid' or 'random', got {ignored!r}")
    del trans
    smem = rng.integers(0, 256, (count, smem_bytes), dtype=np.uint8)
    addrs = rng.integers(0, smem_bytes // 16, (count, 32)).astype(np.int64) * 16
    if ignored == "random":
        addrs[:, 8 * num:] = rng.integers(-64, smem_bytes + 64, (count, 32 - 8 * num))
    return smem, addrs


# f32 exponent fields spanning each destination's range: f16 from below half its smallest subnormal
# (2**-26) to above its overflow (2**17); bf16 has f32's exponent range.
_CVT_RANGE = {"f16": (101, 144), "bf16": (0, 254)}
_CVT_SUBNORMAL = {"f16": (101, 113), "bf16": (0, 1)}   # exponent fields around the subnormal range
_CVT_EDGES = {   # f32 bits at each destination's edges (their neighbours come from the ties class)
    "f16": [0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000, 0x33800000, 0x33000000, 0x33000001,
            0x387FC000, 0x38800000, 0x7F7FFFFF],
    "bf16": [0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF, 0x00010000, 0x00008000, 0x00018000,
             0x007F0000, 0x00800000, 0x00000001],
}
_F32_SPECIALS = [0x00000000, 0x7F800000, 0x7FC00000, 0x7FFFFFFF, 0x7F800001, 0x7FBFFFFF, 0x7FC00001]


def _random_f32(shape, rng, lo, hi):
    """f32 bits: random sign and fraction, exponent field uniform in ``[lo, hi]``."""
    return _bits("f32", rng.integers(0, 2, shape), rng.integers(lo, hi + 1, shape),
                 rng.integers(0, 1 << 23, shape))


def _cvt_ties(count, to, rng):
    """Exact midpoints between destination values ``p`` and ``p + 1`` (``p + 1`` may be infinity's
    pattern, read as the power of two past the largest finite value); random signs."""
    eb, fb = _FMT[to]
    bias = (1 << (eb - 1)) - 1
    top = (((1 << eb) - 1) << fb) - 1                      # largest finite magnitude pattern
    p = rng.integers(0, top + 1, count)

    def value(q):                                          # exact: <= 12 significant bits
        e, f = q >> fb, q & ((1 << fb) - 1)
        return np.where(e == 0, np.ldexp(f, 1 - bias - fb), np.ldexp(f + (1 << fb), e - bias - fb))

    mid = ((value(p) + value(p + 1)) / 2).astype(np.float32).view(np.uint32)   # exact in f32
    nudge = rng.integers(-1, 2, count) * (rng.random(count) < 0.25)
    mid = (mid.astype(np.int64) + nudge).astype(np.uint32)
    return mid | (rng.integers(0, 2, count).astype(np.uint32) << 31)


def _cvt_values(cls, count, to, rng):
    if cls == "random-bits":
        return rng.integers(0, 1 << 32, count, dtype=np.uint64).astype(np.uint32)
    if cls == "range":
        return _random_f32(count, rng, *_CVT_RANGE[to])
    if cls == "subnormal":
        x = _random_f32(count, rng, *_CVT_SUBNORMAL[to])
        f32_sub = rng.random(count) < 0.25
        x[f32_sub] &= 0x807FFFFF                           # exponent field 0: f32 subnormals
        return x
    if cls == "ties":
        return _cvt_ties(count, to, rng)
    table = np.array(_CVT_EDGES[to] + _F32_SPECIALS, np.uint32)
    x = _random_f32(count, rng, *_CVT_RANGE[to])
    pick = rng.random(count) < 0.5
    x[pick] = table[rng.integers(0, table.size, int(pick.sum()))]
    nan = rng.random(count) < 0.1                          # NaNs with random payloads
    x[nan] = 0x7F800000 | rng.integers(1, 1 << 23, int(nan.sum())).astype(np.uint32)
    return x ^ (rng.integers(0, 2, count).astype(np.uint32) << 31)


def cvt_inputs(cls, count, *, to="f16", rng):
    """f32 bits ``(a, b)``, ``uint32[count]`` each, of class ``cls`` for ``cvt.rn.{to}x2.f32``.

    >>> a, b = cvt_inputs("ties", 4, to="bf16", rng=np.random.default_rng(0))
    >>> a.shape, b.dtype == np.uint32
    ((4,), True)
    """
    if cls not in CVT_CLASSES:
        raise ValueError(f"cvt_inputs: cls must be one of {CVT_CLASSES}, got {cls!r}")
    if to not in ("f16", "bf16"):
        raise ValueError(f"cvt_inputs: to must be 'f16' or 'bf16', got {to!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"cvt_inputs: rng must be a numpy Generator, got {type(rng).__name__}")
    return _cvt_values(cls, count, to, rng), _cvt_values(cls, count, to, rng)
