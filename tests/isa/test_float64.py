"""f64 arithmetic, selection, comparison and conversion (warpsim.isa.fp64, cvt) against Python's exact
``fractions`` arithmetic (tests/isa/float_reference.py, no code shared) and directed IEEE cases."""

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from float_reference import ref_arith, to_bits, value
from hypothesis import given, settings
from hypothesis import strategies as st

from warpsim.isa import fp64
from warpsim.isa.cvt import cvt_convert
from warpsim.isa.fp64 import CMP, DEFAULT_NAN, MASK64, RM, RN, RP, RZ, TESTP, bits

F64 = (11, 52)
F32 = (8, 23)
MODES = {"rn": RN, "rz": RZ, "rm": RM, "rp": RP}
FUNCS = {"add": fp64.f64_add, "sub": fp64.f64_sub, "mul": fp64.f64_mul, "fma": fp64.f64_fma,
         "div": fp64.f64_div, "sqrt": fp64.f64_sqrt, "rcp": fp64.f64_rcp}
ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1}
SIGN = 1 << 63
QNAN = 0x7FF8000000000000
INF = 0x7FF0000000000000
ONE = 0x3FF0000000000000
D_NAN = DEFAULT_NAN & MASK64


def ub(x):
    """The f64 bits of the Python float ``x`` as an unsigned int."""
    return bits(x) & MASK64


def s64(u):
    return u - (1 << 64) if u >> 63 else u


def model(op, xs, mode):
    return FUNCS[op](*[s64(x) for x in xs], MODES[mode]) & MASK64


def is_nan(x):
    return (x & ~SIGN) > INF


def reference(op, xs, mode):
    """The exact result (float_reference) with f64's NaN rule (the H200): the first NaN operand in the order
    ``fp64.NAN_ORDER`` (one operand: it), quietened, sign kept (``sub`` too), else the default NaN for an
    invalid operation."""
    for i in fp64.NAN_ORDER.get(op, range(len(xs))):
        if is_nan(xs[i]):
            return xs[i] | fp64.QUIET_BIT
    r = ref_arith(op, list(xs), F64, mode)
    return D_NAN if r == (1 << 63) - 1 else r


# ---- operands ---------------------------------------------------------------------------------------

def _compose(sign, exp_field, frac):
    return (sign << 63) | (exp_field << 52) | frac


any_bits = st.integers(0, MASK64)
fractions_ = st.one_of(st.integers(0, (1 << 52) - 1), st.sampled_from([0, 1, (1 << 52) - 1, 1 << 51]),
                       st.integers(0, 63).map(lambda k: ((1 << 52) - 1) >> k << k))     # short significands
near_one = st.builds(_compose, st.integers(0, 1), st.integers(1013, 1033), fractions_)
tiny = st.builds(_compose, st.integers(0, 1), st.integers(0, 60), fractions_)             # subnormals and near
huge = st.builds(_compose, st.integers(0, 1), st.integers(2000, 2046), fractions_)
specials = st.sampled_from([0, SIGN, INF, INF | SIGN, QNAN, QNAN | SIGN | 5, INF | 1, ONE, ONE | SIGN,
                            0x7FEFFFFFFFFFFFFF, 0x0010000000000000, 1, 0x000FFFFFFFFFFFFF])
f64_bits = st.one_of(any_bits, near_one, near_one, tiny, huge, specials)


# ---- arithmetic against the exact reference -----------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(op=st.sampled_from(sorted(FUNCS)), mode=st.sampled_from(sorted(MODES)),
       xs=st.tuples(f64_bits, f64_bits, f64_bits))
def test_arith_is_the_exact_result_rounded_once(op, mode, xs):
    xs = xs[:ARITY[op]]
    assert model(op, xs, mode) == reference(op, xs, mode), (op, mode, [hex(x) for x in xs])


@st.composite
def cancelling_fma(draw):
    """``a, b, c`` with ``c`` within a few ulps of ``-a*b``: the product's low bits decide the result."""
    a, b = draw(near_one), draw(st.one_of(near_one, tiny, huge))
    p = struct.unpack("<d", struct.pack("<Q", a))[0] * struct.unpack("<d", struct.pack("<Q", b))[0]
    if not math.isfinite(p) or p == 0:
        return a, b, draw(f64_bits)
    c = struct.unpack("<Q", struct.pack("<d", -p))[0]
    c = (c + draw(st.integers(-3, 3))) & MASK64
    return a, b, c if (c >> 52) & 0x7FF != 0x7FF else 0


@settings(max_examples=400, deadline=None)
@given(mode=st.sampled_from(sorted(MODES)), xs=cancelling_fma())
def test_fma_cancellation_keeps_the_product_s_low_bits(mode, xs):
    assert model("fma", xs, mode) == reference("fma", xs, mode), (mode, [hex(x) for x in xs])


@settings(max_examples=200, deadline=None)
@given(mode=st.sampled_from(sorted(MODES)), a=f64_bits, b=f64_bits)
def test_add_far_apart_exponents(mode, a, b):
    """A tiny addend far below the other's last bit: only its sign and sticky bit count."""
    b = (b & ~(0x7FF << 52)) | ((b >> 52 & 0x7FF) % 200 << 52)            # b small, a anything
    assert model("add", (a, b), mode) == reference("add", (a, b), mode)
    assert model("fma", (a, ONE, b), mode) == reference("fma", (a, ONE, b), mode)


def test_rn_matches_the_host_binary64():
    """Round-to-nearest results are the host's IEEE binary64 results (numbers only)."""
    rng = np.random.default_rng(1)
    a, b = (rng.integers(0, 1 << 63, 3000, dtype=np.uint64) * np.uint64(2) + np.uint64(1) for _ in range(2))
    fa, fb = a.view(np.float64), b.view(np.float64)
    with np.errstate(all="ignore"):
        for op, want in (("add", fa + fb), ("mul", fa * fb), ("div", fa / fb), ("sqrt", np.sqrt(np.abs(fa)))):
            for i in range(a.size):
                if np.isnan(want[i]):
                    continue
                args = (int(a[i]) & ~SIGN,) if op == "sqrt" else (int(a[i]), int(b[i]))
                assert model(op, args, "rn") == int(want.view(np.uint64)[i]), (op, [hex(x) for x in args])


# ---- directed IEEE cases ------------------------------------------------------------------------------

HALF_ULP = 0x3CA0000000000000           # 2**-53: half an ulp of 1.0
MIN_SUB = 1
MAX = 0x7FEFFFFFFFFFFFFF


@pytest.mark.parametrize("op,xs,mode,want", [
    ("add", (ONE, HALF_ULP), "rn", ONE),                                   # a tie, to even
    ("add", (ONE | 1, HALF_ULP), "rn", ONE | 2),                           # a tie, to even (up)
    ("add", (ONE, HALF_ULP), "rp", ONE | 1),
    ("add", (ONE, HALF_ULP | SIGN), "rm", 0x3FEFFFFFFFFFFFFF),
    ("add", (ONE, HALF_ULP | SIGN), "rn", 0x3FEFFFFFFFFFFFFF),             # 1 - 2**-53 is exact below 1
    ("sub", (ONE, ONE), "rn", 0), ("sub", (ONE, ONE), "rm", SIGN),         # exact zero: +0, -0 under .rm
    ("add", (SIGN, SIGN), "rn", SIGN), ("add", (SIGN, 0), "rn", 0), ("add", (SIGN, 0), "rm", SIGN),
    ("mul", (SIGN, ONE), "rn", SIGN), ("mul", (0, ONE | SIGN), "rp", SIGN),
    ("fma", (0, ONE, SIGN), "rn", 0), ("fma", (SIGN, ONE, SIGN), "rn", SIGN),
    ("mul", (MIN_SUB, 0x3FE0000000000000), "rn", 0),                       # 2**-1075: tie to even (0)
    ("mul", (MIN_SUB, 0x3FE0000000000000), "rp", MIN_SUB),
    ("mul", (3, 0x3FE0000000000000), "rn", 2),                             # 1.5 units: tie to even (2)
    ("mul", (0x0010000000000000, 0x3FE0000000000000), "rn", 0x0008000000000000),   # normal -> subnormal, exact
    ("add", (0x000FFFFFFFFFFFFF, 1), "rn", 0x0010000000000000),           # subnormals summing to 2**-1022
    ("mul", (MAX, 0x4000000000000000), "rn", INF), ("mul", (MAX, 0x4000000000000000), "rz", MAX),
    ("mul", (MAX, 0x4000000000000000), "rm", MAX), ("mul", (MAX | SIGN, 0x4000000000000000), "rm", INF | SIGN),
    ("mul", (MAX | SIGN, 0x4000000000000000), "rp", MAX | SIGN),
    ("div", (ONE, 0), "rn", INF), ("div", (ONE | SIGN, 0), "rn", INF | SIGN), ("div", (ONE, SIGN), "rz", INF | SIGN),
    ("div", (0, 0), "rn", D_NAN), ("div", (INF, INF), "rn", D_NAN), ("div", (ONE, INF | SIGN), "rn", SIGN),
    ("div", (ONE, 0x4008000000000000), "rn", 0x3FD5555555555555),
    ("div", (ONE, 0x4008000000000000), "rp", 0x3FD5555555555556),
    ("rcp", (0x4008000000000000,), "rz", 0x3FD5555555555555), ("rcp", (SIGN,), "rn", INF | SIGN),
    ("sqrt", (SIGN,), "rn", SIGN), ("sqrt", (0x4000000000000000,), "rn", 0x3FF6A09E667F3BCD),
    ("sqrt", (0x4000000000000000,), "rz", 0x3FF6A09E667F3BCC), ("sqrt", (ONE | SIGN,), "rn", D_NAN),
    ("sqrt", (INF,), "rn", INF), ("sqrt", (INF | SIGN,), "rn", D_NAN), ("sqrt", (MIN_SUB,), "rn", 0x1E60000000000000),
    ("fma", (INF, 0, ONE), "rn", D_NAN), ("fma", (INF, ONE, INF | SIGN), "rn", D_NAN),
    ("add", (INF, INF | SIGN), "rn", D_NAN), ("fma", (ONE, ONE, INF | SIGN), "rn", INF | SIGN),
])
def test_ieee_cases(op, xs, mode, want):
    assert model(op, xs, mode) == want
    assert reference(op, xs, mode) == want


@pytest.mark.parametrize("op,xs,want", [
    ("add", (0x7FF0000000000001, ONE), 0x7FF8000000000001),              # a signalling NaN, quietened
    ("add", (ONE, 0xFFF0000000000123), 0xFFF8000000000123),              # sign and payload kept
    ("add", (0x7FF4000000000000, 0xFFF8000000000001), 0xFFF8000000000001),   # two NaNs: b's
    ("add", (0x7FF8000000000009, 0x7FF0000000000003), 0x7FF8000000000003),   # b's, a signalling one too
    ("mul", (0x7FF8000000000001, 0xFFF0000000000002), 0xFFF8000000000002),   # b's
    ("fma", (ONE, 0x7FF0000000000002, 0x7FF0000000000003), 0x7FF8000000000002),   # b before c
    ("fma", (0x7FF8000000000001, ONE, 0x7FF8000000000003), 0x7FF8000000000003),   # c before a
    ("fma", (0x7FF8000000000001, 0x7FF8000000000002, 0x7FF8000000000003), 0x7FF8000000000002),   # b first
    ("fma", (INF, 0, 0x7FF0000000000003), 0x7FF8000000000003),            # a NaN before the invalid 0 * inf
    ("sub", (ONE, 0x7FF8000000000007), 0x7FF8000000000007),              # a - NaN: the NaN's sign kept
    ("sub", (0x7FF8000000000001, 0xFFF0000000000002), 0xFFF8000000000002),   # two NaNs: b's, sign kept
    ("mul", (0xFFFFFFFFFFFFFFFF, ONE), 0xFFFFFFFFFFFFFFFF),
    ("div", (INF, 0x7FF0000000000009), 0x7FF8000000000009),
    ("div", (0x7FF0000000000001, 0x7FF8000000000002), 0x7FF8000000000001),   # div: a's
    ("sqrt", (0xFFF0000000000001,), 0xFFF8000000000001),
])
def test_nan_payloads(op, xs, want):
    """Which NaN: the H200 (hwcheck campaign --instr f64, 2026-12-01; docs/numerics.md "f64")."""
    assert model(op, xs, "rn") == want
    assert reference(op, xs, "rn") == want


# ---- selection, sign, comparison -------------------------------------------------------------------------

def _f(x):
    return struct.unpack("<d", struct.pack("<Q", x))[0]


@settings(max_examples=300, deadline=None)
@given(a=f64_bits, b=f64_bits)
def test_compare_min_max(a, b):
    fa, fb = _f(a), _f(b)
    pyops = {"eq": fa == fb, "ne": fa != fb and not (math.isnan(fa) or math.isnan(fb)), "lt": fa < fb,
             "le": fa <= fb, "gt": fa > fb, "ge": fa >= fb}
    unordered = math.isnan(fa) or math.isnan(fb)
    for name, t in pyops.items():
        assert bool(fp64.f64_setp(s64(a), s64(b), CMP[name])) == t
        assert bool(fp64.f64_setp(s64(a), s64(b), CMP[name + "u"])) == (t or unordered)
    assert bool(fp64.f64_setp(s64(a), s64(b), CMP["nan"])) == unordered
    assert bool(fp64.f64_setp(s64(a), s64(b), CMP["num"])) == (not unordered)
    lo, hi = fp64.f64_min(s64(a), s64(b)) & MASK64, fp64.f64_max(s64(a), s64(b)) & MASK64
    if math.isnan(fa) and math.isnan(fb):
        assert lo == hi == b | fp64.QUIET_BIT                                  # two NaNs: b's (the H200)
    elif math.isnan(fa) or math.isnan(fb):
        assert lo == hi == (b if math.isnan(fa) else a)
    else:
        assert {lo, hi} == {a, b} and _f(lo) <= _f(hi)
        if fa == fb == 0 and a != b:
            assert lo >> 63 == 1 and hi >> 63 == 0                            # -0 < +0
    if math.isnan(fa):                                                       # quietened, sign kept
        assert fp64.f64_abs(s64(a)) & MASK64 == fp64.f64_neg(s64(a)) & MASK64 == a | fp64.QUIET_BIT
    else:
        assert fp64.f64_abs(s64(a)) & MASK64 == a & ~SIGN
        assert fp64.f64_neg(s64(a)) & MASK64 == a ^ SIGN
    assert fp64.f64_copysign(s64(a), s64(b)) & MASK64 == (b & ~SIGN) | (a & SIGN)


@pytest.mark.parametrize("x,classes", [
    (0, {"finite", "number", "normal"}), (SIGN, {"finite", "number", "normal"}),
    (1, {"finite", "number", "subnormal"}), (ONE, {"finite", "number", "normal"}),
    (INF | SIGN, {"infinite", "number"}), (QNAN, {"notanumber"}), (INF | 1, {"notanumber"})])
def test_testp(x, classes):
    assert {c for c, code in TESTP.items() if fp64.f64_testp(s64(x), code)} == classes


def test_set_gives_all_ones_or_one_point_zero():
    assert fp64.f64_set(bits(1.0), bits(2.0), CMP["lt"], False) == 0xFFFFFFFF
    assert fp64.f64_set(bits(1.0), bits(2.0), CMP["lt"], True) == 0x3F800000
    assert fp64.f64_set(bits(3.0), bits(2.0), CMP["lt"], True) == 0


# ---- conversions -------------------------------------------------------------------------------------------

def _cvt(x, dst, src, rnd, **kw):
    dtype = np.uint64 if src in ("f64", "s64", "u64") else np.uint32
    return int(cvt_convert(np.array([x], dtype), dst=dst, src=src, rnd=rnd, **kw)[0])


@settings(max_examples=300, deadline=None)
@given(x=f64_bits, mode=st.sampled_from(sorted(MODES)))
def test_cvt_f64_to_f32_is_rounded_once(x, mode):
    v = value(x, F64)
    got = _cvt(x, "f32", "f64", mode)
    if v == "nan":                                           # sign, the fraction's top 23 bits, quietened
        assert got == (x >> 63 << 31) | 0x7FC00000 | ((x >> 29) & 0x7FFFFF)
    elif isinstance(v, str):
        assert got == (0xFF800000 if v == "-inf" else 0x7F800000)
    else:
        assert got == to_bits(v, bool(x >> 63), F32, mode)


@settings(max_examples=200, deadline=None)
@given(x=st.integers(0, 0xFFFFFFFF))
def test_cvt_f32_to_f64_is_exact(x):
    got = _cvt(x, "f64", "f32", "rn")
    v = value(x, F32)
    if v == "nan":
        assert got == (x >> 31 << 63) | 0x7FF8000000000000 | ((x & 0x7FFFFF) << 29)   # payload, quietened
    else:
        assert _f(got) == struct.unpack("<f", struct.pack("<I", x))[0] and got >> 63 == x >> 31


@settings(max_examples=200, deadline=None)
@given(x=st.integers(0, MASK64), mode=st.sampled_from(sorted(MODES)))
def test_cvt_s64_u64_to_f64(x, mode):
    for src, v in (("u64", x), ("s64", x - (1 << 64) if x >> 63 else x)):
        assert _cvt(x, "f64", src, mode) == to_bits(Fraction(v), v < 0, F64, mode)


@pytest.mark.parametrize("x,dst,rnd,want", [
    (ub(2.5), "s32", "rni", 2), (ub(3.5), "s32", "rni", 4), (ub(-2.5), "s32", "rmi", 0xFFFFFFFD),
    (ub(-0.5), "u32", "rzi", 0), (ub(1e300), "s64", "rzi", 0x7FFFFFFFFFFFFFFF),
    (ub(-1e300), "s64", "rzi", 0x8000000000000000), (QNAN, "s64", "rni", 0x8000000000000000),
    (QNAN, "s32", "rni", 0x80000000), (QNAN | SIGN, "u32", "rzi", 0x80000000), (QNAN, "s16", "rpi", 0x8000),
    (ub(2.0 ** 63), "u64", "rni", 1 << 63),
    (ub(2.5), "f64", "rni", ub(2.0)), (ub(-0.25), "f64", "rpi", SIGN),
    (0x7FF0000000000001, "f64", "rni", 0x7FF8000000000001),
    (ub(1.0 + 2.0 ** -11), "f16", "rn", 0x3C00), (ub(1.0 + 2.0 ** -11), "f16", "rp", 0x3C01),
    (ub(65520.0), "f16", "rn", 0x7C00), (ub(65520.0), "f16", "rz", 0x7BFF),
    (QNAN | 3, "f16", "rn", 0x7E00), (0xFFF0000000000001, "f32", "rn", 0xFFC00000),   # NaN: the fraction's top,
    (0x7FF4000000000000, "f32", "rz", 0x7FE00000), (0xFFFC000000000000, "bf16", "rn", 0xFFE0),   # quietened
])
def test_cvt_directed(x, dst, rnd, want):
    assert _cvt(x, dst, "f64", rnd) == want


def test_cvt_ftz_and_sat_around_f64():
    assert _cvt(1, "f32", "f64", "rp") == 1                                  # 2**-1074 .rp: f32's smallest
    assert _cvt(1, "f32", "f64", "rp", ftz=True) == 0                        # .ftz flushes the f32 result
    assert _cvt(0x80000001, "f64", "f32", "rn", ftz=True) == SIGN            # .ftz flushes the f32 input
    assert _cvt(0x80000001, "f64", "f32", "rn") == 0xB6A0000000000000
    assert _cvt(0x40000000, "f64", "f32", "rn", sat=True) == ONE
    assert _cvt(0xC0000000, "f64", "f32", "rn", sat=True) == 0
    assert _cvt(0xFFF4000000000000, "f32", "f64", "rn", sat=True) == 0       # .sat: a NaN to +0
    assert _cvt(0xFFC00001, "f64", "f32", "rn") == 0xFFF8000020000000        # a NaN widened, quietened
    assert _cvt(0xFFC00001, "f64", "f32", "rn", ftz=True) == 0x7FFFFFFFE0000000   # .ftz: f32's canonical NaN
