"""cvt between floats, to and from integers, and to integral floats, against the exact reference.

Widening (f16/bf16 -> f32) runs over all 65536 inputs; the narrowing and integer forms over edges,
exact ties of the destination (and their neighbours) and random bits, in every rounding mode. The
reference (tests/isa/float_reference.py) is ``fractions.Fraction`` arithmetic with IEEE 754's
rounding, written apart from warpsim.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from numba import njit, prange

from tests.isa.float_reference import BF16, F16, F32, canonical_nan, flush, is_negative, largest, to_bits, value
from warpsim.isa.cvt import BF16_CODE, F16_CODE, INT_TYPES, cvt_convert, cvt_f32_to_16, cvt_float, cvt_pack, cvt_pack_x2
from warpsim.isa.rounding import RN, RZ

FMT = {"f32": F32, "f16": F16, "bf16": BF16, "tf32": (8, 10)}
MODES = ("rn", "rz", "rm", "rp")


def _f32_inputs(seed, n=3000):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    exp = rng.integers(95, 150, n).astype(np.uint32)   # around f16's range
    x[: n // 3] = (x[: n // 3] & 0x807FFFFF) | (exp[: n // 3] << 23)
    x[n // 3: n // 2] &= 0x80FFE000 | 0x7F000000      # short fractions: many exact ties for f16/bf16/tf32
    edges = [0, 0x80000000, 1, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001, 0xFFBFFFFF, 0x477FEFFF,
             0x477FF000, 0x477FF001, 0x33000000, 0x33000001, 0x387FC000, 0x7F7FF000, 0x3F801000]
    return np.concatenate([np.array(edges + [e ^ 0x80000000 for e in edges], np.uint32), x])


def ref_narrow(bits, dst, mode, relu=False, satfinite=False):
    v = value(bits, F32)
    fmt = FMT[dst]
    if v == "nan":
        if dst == "tf32" and mode == "rna":   # the H200: the fraction cut to 10 bits (.satfinite: one unit less)
            return (bits & 0xFFFFE000) - (0x2000 if satfinite else 0)
        return 0x7FFFE000 if dst == "tf32" else canonical_nan(fmt)   # the H200: .rn/.rz to tf32, cut
    neg = is_negative(bits, F32)
    sign = -1 if neg else 1
    if isinstance(v, str):
        r = to_bits(sign * largest(fmt) * (1 if satfinite else 4), neg, fmt, "rn")
    else:
        r = to_bits(v, neg, fmt, mode)
        if satfinite and isinstance(value(r, fmt), str):
            r = to_bits(sign * largest(fmt), neg, fmt, "rn")
    if relu and is_negative(r, fmt):
        r = 0
    return r << 13 if dst == "tf32" else r


@pytest.mark.parametrize("dst", ["f16", "bf16"])
@pytest.mark.parametrize("mode", MODES)
def test_f32_to_16_bit_every_mode(dst, mode):
    x = _f32_inputs(1)
    for relu, satfinite in ((False, False), (True, False), (False, True)):
        got = cvt_convert(x, dst=dst, src="f32", rnd=mode, relu=relu, satfinite=satfinite)
        for xi, g in zip(x.tolist(), got.tolist()):
            want = ref_narrow(xi, dst, mode, relu, satfinite)
            assert g == want, f"cvt.{mode} relu={relu} satfinite={satfinite}.{dst}.f32 {xi:#x}: want {want:#x}, got {g:#x}"


def test_tf32_round_ties_away():
    x = _f32_inputs(2)
    for mode in ("rna", "rn", "rz"):
        got = cvt_convert(x, dst="tf32", src="f32", rnd=mode)
        for xi, g in zip(x.tolist(), got.tolist()):
            want = ref_narrow(xi, "tf32", mode)
            assert g == want, f"cvt.{mode}.tf32.f32 {xi:#x}: want {want:#x}, got {g:#x}"


@pytest.mark.parametrize("src", ["f16", "bf16"])
def test_widening_is_exact_for_every_pattern(src):
    x = np.arange(1 << 16, dtype=np.uint32)
    got = cvt_convert(x, dst="f32", src=src, rnd="rn")
    for xi, g in zip(x.tolist(), got.tolist()):
        v = value(xi, FMT[src])
        nan = xi << 16 if src == "bf16" else 0x7FFFFFFF   # the H200: bf16 NaNs keep their bits
        want = nan if v == "nan" else to_bits(Fraction(0) if isinstance(v, str) else v,
                                              is_negative(xi, FMT[src]), F32, "rn")
        if isinstance(v, str) and v != "nan":
            want = 0x7F800000 | (0x80000000 if v == "-inf" else 0)
        assert g == want, f"cvt.f32.{src} {xi:#x}: want {want:#x}, got {g:#x}"


def ref_to_int(bits, dst, mode, ftz=False):
    width, signed = INT_TYPES[dst]
    if ftz:
        bits = flush(bits, F32)
    v = value(bits, F32)
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    if v == "nan":
        return 1 << 63 if width == 64 else 0   # the H200: 0x8000000000000000 to s64 and u64
    if isinstance(v, str):
        n = hi if v == "inf" else lo
    else:
        fl = math.floor(v)
        if mode == "rzi":
            n = math.trunc(v)
        elif mode == "rmi":
            n = fl
        elif mode == "rpi":
            n = math.ceil(v)
        else:
            d = v - fl
            n = fl + (1 if d > Fraction(1, 2) or (d == Fraction(1, 2) and fl % 2) else 0)
        n = min(max(n, lo), hi)
    return n & ((1 << width) - 1)


@pytest.mark.parametrize("dst", list(INT_TYPES))
def test_f32_to_integer_every_mode(dst):
    x = _f32_inputs(3, 1500)
    halves = np.array([0x3F000000, 0x3FC00000, 0x40200000, 0xBF000000, 0xBFC00000, 0x4F000000, 0x4F800000,
                       0xCF000000, 0x5F000000, 0xDF000000, 0x5F800000, 0x00000001, 0x80000001], np.uint32)
    x = np.concatenate([halves, x])
    for mode in ("rni", "rzi", "rmi", "rpi"):
        for ftz in (False, True):
            got = cvt_convert(x, dst=dst, src="f32", rnd=mode, ftz=ftz)
            for xi, g in zip(x.tolist(), got.tolist()):
                want = ref_to_int(xi, dst, mode, ftz)
                assert g == want, f"cvt.{mode}{'.ftz' if ftz else ''}.{dst}.f32 {xi:#x}: want {want:#x}, got {g:#x}"


@pytest.mark.parametrize("src", ["s32", "u32", "s64", "u64", "s16"])
def test_integer_to_float_every_mode(src):
    width, signed = INT_TYPES[src]
    rng = np.random.default_rng(4)
    x = rng.integers(0, 1 << 63, 2000, dtype=np.uint64) >> rng.integers(0, 63, 2000).astype(np.uint64)
    x = x * np.uint64(2) + rng.integers(0, 2, 2000).astype(np.uint64)
    x = np.concatenate([np.array([0, 1, (1 << 24) + 1, (1 << 24) + 3, (1 << 63), (1 << 64) - 1, (1 << 31),
                                  (1 << 32) - 1, 0x7FFF, 0x8000, 0xFFFF], np.uint64), x]) & np.uint64((1 << width) - 1)
    for dst in ("f32", "f16", "bf16"):
        for mode in MODES:
            got = cvt_convert(x, dst=dst, src=src, rnd=mode)
            for xi, g in zip(x.tolist(), got.tolist()):
                n = xi - (1 << width) if signed and xi >> (width - 1) else xi
                want = to_bits(Fraction(n), False, FMT[dst], mode)
                assert g == want, f"cvt.{mode}.{dst}.{src} {n}: want {want:#x}, got {g:#x}"


def test_round_to_integral_float():
    x = _f32_inputs(5, 1500)
    for mode, f in (("rni", None), ("rzi", math.trunc), ("rmi", math.floor), ("rpi", math.ceil)):
        got = cvt_convert(x, dst="f32", src="f32", rnd=mode)
        for xi, g in zip(x.tolist(), got.tolist()):
            v = value(xi, F32)
            if v == "nan":
                want = 0x7FFFFFFF
            elif isinstance(v, str):
                want = xi
            else:
                if f is None:
                    fl = math.floor(v)
                    d = v - fl
                    n = fl + (1 if d > Fraction(1, 2) or (d == Fraction(1, 2) and fl % 2) else 0)
                else:
                    n = f(v)
                want = to_bits(Fraction(n), is_negative(xi, F32), F32, "rn")
            assert g == want, f"cvt.{mode}.f32.f32 {xi:#x}: want {want:#x}, got {g:#x}"


def test_pack_x2_agrees_with_the_existing_rn_pack():
    x = _f32_inputs(6)
    y = x[::-1].copy()
    for to, (eb, fb) in (("f16", (5, 10)), ("bf16", (8, 7))):
        want = cvt_pack(x, y, to=to)
        got = np.array([cvt_pack_x2(int(a), int(b), eb, fb, RN, False, False) for a, b in zip(x, y)], np.uint32)
        assert np.array_equal(got, want), to
    assert cvt_pack_x2(0x477FF000, 0xBF800000, 5, 10, RZ, True, False) == 0x7BFF0000


@pytest.mark.parametrize("kwargs, message", [
    (dict(dst="s32", src="f32", rnd="rn"), "rounding to an integer"),
    (dict(dst="f16", src="f32", rnd="rni"), "rounding must be"),
    (dict(dst="f16", src="f32", rnd="rna"), "rna"),
    (dict(dst="f32", src="tf32", rnd="rn"), "destination type only"),
    (dict(dst="s32", src="u32", rnd="rni"), "integer-to-integer"),
    (dict(dst="f16", src="f16x2", rnd="rn"), "src must be one of"),
    (dict(dst="f32", src="f16", rnd="rn", relu=True), "relu"),
])
def test_cvt_errors_name_the_instruction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cvt_convert(np.zeros(2, np.uint32), **kwargs)


@pytest.mark.parametrize("src", ["f16", "bf16"])
def test_16_bit_float_to_integer_every_pattern(src):
    x = np.arange(1 << 16, dtype=np.uint32)
    for mode, dst in (("rni", "s32"), ("rzi", "u16"), ("rmi", "s16"), ("rpi", "s64")):
        got = cvt_convert(x, dst=dst, src=src, rnd=mode)
        width, signed = INT_TYPES[dst]
        lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        for xi, g in zip(x.tolist()[::7], got.tolist()[::7]):
            v = value(xi, FMT[src])
            if v == "nan":
                want = 1 << 63 if width == 64 else 0
            elif isinstance(v, str):
                want = (hi if v == "inf" else lo) & ((1 << width) - 1)
            else:
                f = {"rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}.get(mode)
                if f is None:
                    fl = math.floor(v)
                    n = fl + (1 if v - fl > Fraction(1, 2) or (v - fl == Fraction(1, 2) and fl % 2) else 0)
                else:
                    n = f(v)
                want = min(max(n, lo), hi) & ((1 << width) - 1)
            assert g == want, f"cvt.{mode}.{dst}.{src} {xi:#x}: want {want:#x}, got {g:#x}"


# cvt_f32_to_16 (cvt.rn.f16.f32 and cvt.rn.bf16.f32 in integer operations) against the general model, cvt_float


@njit(cache=True, parallel=True)
def _f32_to_16_differences(first, count, to, ftz):
    """How many of the f32 bit patterns ``first .. first + count - 1`` cvt_f32_to_16 rounds otherwise than cvt_float
    (``.ftz`` given to cvt_float: to f16 it changes nothing), and the smallest such pattern (-1: none)."""
    d_eb, d_fb = (5, 10) if to == F16_CODE else (8, 7)
    found = np.zeros(count // 65536 + 1, np.int64)
    first_bad = np.full(count // 65536 + 1, -1, np.int64)
    for chunk in prange(count // 65536 + 1):
        for i in range(chunk * 65536, min(count, (chunk + 1) * 65536)):
            x = first + i
            if cvt_f32_to_16(x, to) != cvt_float(x, 8, 23, 0, d_eb, d_fb, 0, RN, ftz, False, False, False):
                found[chunk] += 1
                if first_bad[chunk] < 0:
                    first_bad[chunk] = x
    bad = first_bad[first_bad >= 0]
    return int(found.sum()), (int(bad.min()) if bad.size else -1)


@njit(cache=True)
def _f32_to_16_batch(x, to):
    out = np.empty(x.shape[0], np.int64)
    for i in range(x.shape[0]):
        out[i] = cvt_f32_to_16(x[i], to)
    return out


def _sample_each_exponent(seed):
    """Every sign and exponent with its boundary fractions (the f16/bf16 ties and their neighbours) and 2,048 random
    fractions: 1.2 M patterns."""
    rng = np.random.default_rng(seed)
    head = (np.arange(512, dtype=np.int64) << 23)[:, None]
    edges = np.array([0, 1, 2, 0x7FFFFF, 0x7FFFFE, 0x400000, 0x3FFFFF, 0x1000, 0x0FFF, 0x1001, 0x2000, 0x3000, 0x8000,
                      0x7FFF, 0x8001, 0x10000, 0x18000, 0x7FE000, 0x7FF000, 0x7FEFFF], np.int64)
    shifts = np.arange(14, 25, dtype=np.int64)                      # f16 subnormal ties: half of 2**shift and beside
    ties = np.concatenate([(1 << (shifts - 1)) + k for k in (-1, 0, 1)] + [(3 << (shifts - 1)) + k for k in (-1, 0, 1)])
    frac = np.concatenate([edges, ties & 0x7FFFFF, rng.integers(0, 1 << 23, 2048)])
    return (head | frac[None, :]).reshape(-1)


@pytest.mark.parametrize("to, ftz", [(F16_CODE, False), (F16_CODE, True), (BF16_CODE, False)])
def test_cvt_f32_to_16_is_cvt_float_on_every_exponent(to, ftz):
    x = _sample_each_exponent(7)
    want = cvt_convert(x.astype(np.uint32), dst="f16" if to == F16_CODE else "bf16", src="f32", rnd="rn", ftz=ftz)
    got = _f32_to_16_batch(x, to)
    bad = np.flatnonzero(got != want.astype(np.int64))
    assert bad.size == 0, f"{bad.size} differ, first {int(x[bad[0]]):#010x}: {got[bad[0]]:#x} != {int(want[bad[0]]):#x}"


@pytest.mark.slow
@pytest.mark.parametrize("to, ftz", [(F16_CODE, False), (F16_CODE, True), (BF16_CODE, False)])
def test_cvt_f32_to_16_is_cvt_float_on_every_input(to, ftz):
    assert _f32_to_16_differences(0, 1 << 32, to, ftz) == (0, -1)
