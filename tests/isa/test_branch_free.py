"""The branch-free decoding and rounding of warpsim.isa.floats (what the vectorised mma kernel uses)
against the plain ``decode`` / ``round_rz`` / ``round_rne``, over every 16-bit pattern and over
magnitudes and exponents chosen at every boundary (zero, subnormal, normal, top binade, overflow,
shifts of 0, 1, 31, 32, 33 and far beyond).

The plain functions are the reference here: they are the ones the hardware vectors and the
exact-rational model (test_model_reference.py) check end to end. A mismatch names the input.
"""

import numpy as np
import pytest
from numba import njit

from warpsim.isa.floats import INF, NAN, ZERO_EXP, decode, decode_fields, round_rne, round_rz, round_u32

FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23)}


@njit(cache=False)
def _decode_mismatches(patterns, exp_bits, frac_bits, as_int32):
    bad = np.zeros(0, np.int64)
    for i in range(patterns.shape[0]):
        bits = patterns[i]
        neg, sig, exp, cls = decode(bits, exp_bits, frac_bits)
        arg = np.int64(np.int32(bits)) if as_int32 else bits   # f32 bits held as a signed int32
        n2, s2, e2, special = decode_fields(arg, exp_bits, frac_bits)
        if cls == INF or cls == NAN:
            ok = special and s2 == 0 and e2 == ZERO_EXP and n2 == neg
        else:
            ok = (not special) and n2 == neg and s2 == sig and e2 == exp
        if not ok:
            bad = np.append(bad, bits)
    return bad


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_decode_fields_every_16_bit_pattern(fmt):
    eb, fb = FORMATS[fmt]
    bad = _decode_mismatches(np.arange(1 << 16, dtype=np.int64), eb, fb, False)
    assert bad.size == 0, f"{fmt}: decode_fields differs from decode for {[hex(int(b)) for b in bad[:8]]}"


def test_decode_fields_f32_as_int32():
    rng = np.random.default_rng(7)
    edges = [0, 1, 0x7FFFFF, 0x800000, 0x3F800000, 0x7F7FFFFF, 0x7F800000, 0x7F800001, 0x7FFFFFFF]
    patterns = np.concatenate([np.array(edges + [e | 0x80000000 for e in edges], np.int64),
                               rng.integers(0, 1 << 32, 200_000, dtype=np.int64)])
    bad = _decode_mismatches(patterns, 8, 23, True)
    assert bad.size == 0, f"f32: decode_fields differs from decode for {[hex(int(b)) for b in bad[:8]]}"


@njit(cache=False)
def _round_mismatches(mags, lsbs, negs, exp_bits, frac_bits, nearest):
    bad = np.zeros(0, np.int64)
    for i in range(mags.shape[0]):
        if nearest:
            want = round_rne(negs[i], mags[i], lsbs[i], exp_bits, frac_bits)
        else:
            want = round_rz(negs[i], mags[i], lsbs[i], exp_bits, frac_bits)
        got = round_u32(negs[i], np.uint32(mags[i]), np.int32(lsbs[i]), exp_bits, frac_bits, nearest)
        if np.int64(got) != np.int64(np.int32(want)):
            bad = np.append(bad, i)
    return bad


def _round_cases(exp_bits, frac_bits, rng):
    """Magnitudes of every bit length 0..32 (and their neighbours) at exponents around every boundary."""
    bias = (1 << (exp_bits - 1)) - 1
    widths = rng.integers(0, 33, 400_000)
    mags = rng.integers(0, 1 << 32, widths.size, dtype=np.uint64) >> (32 - widths).astype(np.uint64)
    specials = [0, 1, 2, 3, (1 << frac_bits) - 1, 1 << frac_bits, (1 << (frac_bits + 1)) - 1,
                (1 << (frac_bits + 1)) + 1, (1 << 31) - 1, 1 << 31, (1 << 31) + 1, (1 << 32) - 1]
    mags = np.concatenate([np.array(specials, np.uint64), mags]).astype(np.int64)
    # lsb such that the result's leading bit sits anywhere from far below emin to past emax
    lead = rng.integers(-2 * bias - frac_bits - 40, bias + 4, mags.size)
    nbits = np.array([int(m).bit_length() for m in mags])
    lsbs = lead - np.maximum(nbits, 1) + 1
    negs = rng.integers(0, 2, mags.size)
    return mags, lsbs.astype(np.int64), negs.astype(np.int64)


@pytest.mark.parametrize("fmt,nearest", [("f32", False), ("f16", True), ("f16", False), ("bf16", True)])
def test_round_u32_equals_round_rz_rne(fmt, nearest):
    eb, fb = FORMATS[fmt]
    mags, lsbs, negs = _round_cases(eb, fb, np.random.default_rng(11))
    bad = _round_mismatches(mags, lsbs, negs, eb, fb, nearest)
    if bad.size:
        i = int(bad[0])
        want = (round_rne if nearest else round_rz)(int(negs[i]), int(mags[i]), int(lsbs[i]), eb, fb)
        got = round_u32(int(negs[i]), np.uint32(mags[i]), np.int32(lsbs[i]), eb, fb, nearest)
        raise AssertionError(f"{fmt} {'rne' if nearest else 'rz'}: {bad.size} mismatches; first: neg={negs[i]} "
                             f"mag={int(mags[i]):#x} lsb={lsbs[i]}: expected {want & 0xFFFFFFFF:#x}, "
                             f"got {int(got) & 0xFFFFFFFF:#x}")
