"""Input generators for the float instruction campaigns: register bits per operand kind and class.

``float_operands(cls, count, kinds, *, op, rng) -> tuple of arrays``: one array per source operand,
``uint32[count]`` (``uint64[count]`` for ``f64`` and the 64-bit integer kinds). ``kinds`` name each
operand's register contents: ``f64``, ``f32``, ``f16``, ``bf16`` (16-bit values in the low half), ``f16x2``,
``bf16x2`` (two values, each half generated on its own), ``s32 u32 s64 u64`` (integers). ``op`` is the PTX
opcode (``add``, ``fma``, ``cvt`` ...): the ``ties`` class builds its ties for it. Classes:

- ``random-bits``: every bit pattern equally likely (NaNs of any payload, infinities, subnormals);
- ``specials``: zeros, infinities, NaNs (quiet, signalling, both signs), the largest finite value,
  the smallest normal and subnormal, 1.0, mixed half and half with random finite values;
- ``subnormal``: mostly subnormal inputs, and small normal ones whose products and sums land in the
  subnormal range;
- ``ties``: results exactly halfway between two neighbours of the result format (and one unit of
  the input format off it): for ``add``/``sub``/``fma``, ``b`` (or ``c``) an odd multiple of half an
  ulp of ``a`` (``fma``: ``b`` a power of two); for ``mul``, short significands; for ``cvt``,
  midpoints of the destination (``dst``: ``f16``, ``bf16``, ``tf32``; to integers or integral f32:
  ``x.5``), integers of 25 or 26 bits for integer-to-float, random bits for widening (always exact);
- ``huge-tiny``: exponents at both ends of the range: sums and products that overflow (to infinity
  or the largest finite value, by rounding mode) or underflow.

Everything is deterministic given ``rng``.

>>> import numpy as np
>>> a, b = float_operands("ties", 4, ("f32", "f32"), op="add", rng=np.random.default_rng(0))
>>> a.dtype == np.uint32 and a.shape == (4,)
True
"""

import numpy as np

__all__ = ["FLOAT_CLASSES", "OPERAND_KINDS", "float_operands"]

FLOAT_CLASSES = ("random-bits", "specials", "subnormal", "ties", "huge-tiny")
_FMT = {"f32": (8, 23), "f16": (5, 10), "bf16": (8, 7), "tf32": (8, 10), "f64": (11, 52)}
_INT = {"s32": 32, "u32": 32, "s64": 64, "u64": 64}
OPERAND_KINDS = ("f32", "f16", "bf16", "f16x2", "bf16x2", "f64", *_INT)


def _compose(fmt, sign, exp_field, frac):
    eb, fb = _FMT[fmt]
    return ((sign.astype(np.uint64) << np.uint64(eb + fb)) | (exp_field.astype(np.uint64) << np.uint64(fb))
            | frac.astype(np.uint64))


def _random_exp(fmt, n, rng, lo, hi):
    """Random sign and fraction, exponent field uniform in ``[lo, hi]``."""
    eb, fb = _FMT[fmt]
    return _compose(fmt, rng.integers(0, 2, n), rng.integers(lo, hi + 1, n), rng.integers(0, 1 << fb, n))


def _specials(fmt, n, rng):
    eb, fb = _FMT[fmt]
    top = (1 << eb) - 1
    bias = top >> 1
    table = np.array([0, top << fb, (top << fb) | 1, (top << fb) | (1 << (fb - 1)), (top << fb) | ((1 << fb) - 1),
                      ((top - 1) << fb) | ((1 << fb) - 1), 1 << fb, 1, (1 << fb) - 1, bias << fb,
                      (bias << fb) | 1, (bias - 1) << fb], np.uint64)
    x = _random_exp(fmt, n, rng, 1, top - 1)
    pick = rng.random(n) < 0.5
    x[pick] = table[rng.integers(0, table.size, int(pick.sum()))]
    return x ^ (rng.integers(0, 2, n).astype(np.uint64) << np.uint64(eb + fb))


def _values(fmt, cls, n, rng):
    """One operand of format ``fmt`` for classes that do not depend on the other operands."""
    eb, fb = _FMT[fmt]
    top = (1 << eb) - 1
    if cls == "random-bits":
        return rng.integers(0, 1 << (1 + eb + fb), n, dtype=np.uint64)
    if cls == "specials":
        return _specials(fmt, n, rng)
    if cls == "subnormal":
        x = _random_exp(fmt, n, rng, 0, 0)                  # subnormals (and zeros)
        r = rng.random(n)
        low = r < 0.15                                      # the smallest normals
        x[low] = _random_exp(fmt, int(low.sum()), rng, 1, 2)
        mid = r > 0.7                                       # around 1: products with the others stay tiny
        x[mid] = _random_exp(fmt, int(mid.sum()), rng, (top >> 1) - 2, (top >> 1) + 1)
        return x
    # huge-tiny: the top and bottom few binades
    x = _random_exp(fmt, n, rng, top - 4, top - 1)
    low = rng.random(n) < 0.4
    x[low] = _random_exp(fmt, int(low.sum()), rng, 0, 4)
    return x


def _half_ulp_multiple(fmt, a, rng):
    """An odd small multiple of half an ulp of ``a`` (a finite normal), random sign, as ``fmt`` bits."""
    eb, fb = _FMT[fmt]
    n = a.size
    e = (a >> np.uint64(fb)) & np.uint64((1 << eb) - 1)
    e_b = e.astype(np.int64) - fb - 1                      # exponent field of half an ulp of a
    k = rng.choice(np.array([1, 3, 5, 1]), n)              # 1, 3 and 5 half-ulps: 1.0, 1.5, 1.25 significands
    frac = np.where(k == 1, 0, np.where(k == 3, 1 << (fb - 1), 1 << (fb - 2))).astype(np.uint64)
    e_b = e_b + np.where(k == 1, 0, np.where(k == 3, 1, 2))
    ok = e_b >= 1
    b = _compose(fmt, rng.integers(0, 2, n), np.maximum(e_b, 1), frac)
    nudge = (rng.random(n) < 0.25).astype(np.uint64)       # one unit of b off the tie
    return np.where(ok, b + nudge, np.uint64(0))


def _ties(fmt, nops, op, n, rng):
    eb, fb = _FMT[fmt]
    top = (1 << eb) - 1
    a = _random_exp(fmt, n, rng, fb + 3, top - 2)
    if op in ("add", "sub"):
        return [a, _half_ulp_multiple(fmt, a, rng)][:nops]
    if op == "fma":
        bias = top >> 1
        b = _compose(fmt, rng.integers(0, 2, n), rng.integers(bias - 2, bias + 3, n), np.zeros(n, np.int64))
        prod = a.copy()                                    # |a * b| has a's significand
        prod_e = ((a >> np.uint64(fb)) & np.uint64(top)).astype(np.int64) + (
            ((b >> np.uint64(fb)) & np.uint64(top)).astype(np.int64) - bias)
        prod = (prod & ~(np.uint64(top) << np.uint64(fb))) | (np.clip(prod_e, 1, top - 1).astype(np.uint64)
                                                             << np.uint64(fb))
        return [a, b, _half_ulp_multiple(fmt, prod, rng)]
    if op == "mul":   # odd significands u, v of k and l bits, k + l = fb + 3: u * v has fb + 2 bits (a tie) or fb + 3
        bias = top >> 1
        k = (fb + 3) // 2
        ops = []
        for bits in (k, fb + 3 - k):
            u = rng.integers(1 << (bits - 2), 1 << (bits - 1), n) * 2 + 1          # odd, exactly `bits` bits
            frac = ((u - (1 << (bits - 1))) << (fb - bits + 1)).astype(np.uint64)
            ops.append(_compose(fmt, rng.integers(0, 2, n), rng.integers(max(1, bias - 20), min(top - 1, bias + 20) + 1, n),
                                frac))
        return ops[:nops]
    # the rest: short significands, so that results have a few bits more than the format
    keep = (fb + 3) // 2
    mask = np.uint64(((1 << keep) - 1) << (fb - keep))
    ops = [a & (mask | ~np.uint64((1 << fb) - 1))]
    for _ in range(nops - 1):
        x = _random_exp(fmt, n, rng, max(1, (top >> 1) - 20), min(top - 1, (top >> 1) + 20))
        ops.append(x & (mask | ~np.uint64((1 << fb) - 1)))
    return ops


def _cvt_ties(dst, n, rng, src="f32"):
    """``src`` (f32 or f64) bits at midpoints of ``dst`` (f16, bf16, tf32, f32 from f64; else integers:
    ``x.5``), some one ``src`` ulp off."""
    seb, sfb = _FMT[src]
    sbias = (1 << (seb - 1)) - 1
    if dst in ("f16", "bf16", "tf32") or (dst == "f32" and src == "f64"):
        eb, fb = _FMT[dst]
        drop = sfb - fb                                    # source fraction bits below the destination's
        dbias = (1 << (eb - 1)) - 1
        if src == "f32":                                   # (the campaigns' inputs of 2026-12-01: kept)
            lo, hi = (101, 143) if dst == "f16" else (1, 253)
        else:                                              # normal in dst, and a few binades below
            lo, hi = sbias - dbias - 10, sbias + dbias - 1
        x = _random_exp(src, n, rng, max(lo, 1), hi)
        x = (x & ~np.uint64((1 << drop) - 1)) | np.uint64(1 << (drop - 1))
    else:
        k = rng.integers(-(1 << 20), 1 << 20, n)
        ftype, utype = (np.float32, np.uint32) if src == "f32" else (np.float64, np.uint64)
        x = (np.abs(k) + 0.5).astype(ftype).view(utype).astype(np.uint64)
        x |= (k < 0).astype(np.uint64) << np.uint64(seb + sfb)
    nudge = rng.integers(-1, 2, n) * (rng.random(n) < 0.25)
    x = (x.astype(np.int64) + nudge).astype(np.uint64)
    return x & np.uint64(0xFFFFFFFF) if src == "f32" else x


def _ints(kind, cls, n, rng):
    width = _INT[kind]
    if cls == "ties":                                      # 25 or 26 significant bits: f32 ties
        bits = rng.integers(25, 27, n)
        x = (np.uint64(1) << bits.astype(np.uint64)) | rng.integers(0, 1 << 24, n).astype(np.uint64) << np.uint64(1)
        x |= rng.integers(0, 2, n).astype(np.uint64)
    elif cls == "huge-tiny":                               # the top of the range, or 0 .. 15
        x = ((rng.integers(0, 1 << 63, n, dtype=np.uint64) | np.uint64(1 << 62)) << np.uint64(1)) >> np.uint64(64 - width)
        x = np.where(rng.random(n) < 0.5, x, rng.integers(0, 16, n).astype(np.uint64))
    else:
        x = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n).astype(np.uint64)
        x >>= rng.integers(0, width, n).astype(np.uint64)
    if kind.startswith("s"):
        x ^= np.where(rng.random(n) < 0.5, np.uint64((1 << 64) - 1), np.uint64(0))
    return x & np.uint64((1 << width) - 1) if width < 64 else x


def float_operands(cls, count, kinds, *, op, dst=None, rng):
    """Register bits for ``count`` instructions, one array per operand kind (see the module docstring)."""
    if cls not in FLOAT_CLASSES:
        raise ValueError(f"float_operands: cls must be one of {', '.join(FLOAT_CLASSES)}, got {cls!r}")
    for kind in kinds:
        if kind not in OPERAND_KINDS:
            raise ValueError(f"float_operands: kind must be one of {', '.join(OPERAND_KINDS)}, got {kind!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"float_operands: rng must be a numpy Generator, got {type(rng).__name__}")
    kind = kinds[0]
    if kind in _INT:
        return tuple(_ints(k, cls, count, rng).astype(np.uint64 if _INT[k] == 64 else np.uint32) for k in kinds)
    if cls == "ties" and op == "cvt" and kind in ("f32", "f64"):
        return tuple(_cvt_ties(dst, count, rng, kind).astype(np.uint32 if kind == "f32" else np.uint64)
                     for _ in kinds)
    base = kind[:-2] if kind.endswith("x2") else kind
    halves = [1] if kind in ("f16x2", "bf16x2") else []

    def one_set():
        if cls == "ties" and op != "cvt":
            return _ties(base, len(kinds), op, count, rng)
        if cls == "ties":                                  # widening cvt: exact, no ties to make
            return [_values(base, "random-bits", count, rng) for _ in kinds]
        return [_values(base, cls, count, rng) for _ in kinds]
    ops = one_set()
    if halves:
        hi = one_set()
        ops = [(h << np.uint64(16)) | lo for h, lo in zip(hi, ops)]
    return tuple(x.astype(np.uint64 if base == "f64" else np.uint32) for x in ops)
