"""IEEE-rounded float arithmetic (warpsim.isa.fparith) against an exact reference.

The reference (tests/isa/float_reference.py) computes with Python's ``fractions.Fraction`` and
rounds by IEEE 754's definitions; it shares no code with warpsim. Directed cases cover the PTX ISA's
IEEE cases: ties in every mode, overflow to inf or to the largest finite value per mode, the sign
of zero sums, NaN payloads (always the canonical NaN), FTZ on inputs and on results, subnormal
results, .sat and .relu. Property tests draw bit patterns biased toward exponent edges and exact
ties. A mismatch names the operation, mode, inputs and both results in hex.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.isa.float_reference import BF16, F16, F32, ref_arith
from warpsim.isa import fparith as fa
from warpsim.isa.fpbatch import float_arith
from warpsim.isa.rounding import ROUNDING

MODES = ("rn", "rz", "rm", "rp")
FMTS = {"f32": F32, "f16": F16, "bf16": BF16}


def model(op, operands, fmt_name, mode="rn", ftz=False, sat=False, relu=False):
    """The scalar warpsim function of ``op`` on one element."""
    r = ROUNDING[mode]
    if fmt_name == "f32":
        fn = {"add": fa.f32_add, "sub": fa.f32_sub, "mul": fa.f32_mul, "fma": fa.f32_fma}.get(op)
        if fn is not None:
            return int(fn(*operands, r, ftz, sat))
        fn = {"div": fa.f32_div, "sqrt": fa.f32_sqrt, "rcp": fa.f32_rcp}[op]
        return int(fn(*operands, r, ftz))
    if fmt_name == "f16":
        if op == "fma":
            return int(fa.f16_fma(*operands, r, ftz, sat, relu))
        return int({"add": fa.f16_add, "sub": fa.f16_sub, "mul": fa.f16_mul}[op](*operands, r, ftz, sat))
    if op == "fma":
        return int(fa.bf16_fma(*operands, r, relu))
    return int({"add": fa.bf16_add, "sub": fa.bf16_sub, "mul": fa.bf16_mul}[op](*operands, r))


def check(op, operands, fmt_name, mode="rn", ftz=False, sat=False, relu=False):
    want = ref_arith(op, operands, FMTS[fmt_name], mode, ftz, sat, relu)
    got = model(op, operands, fmt_name, mode, ftz, sat, relu)
    mods = f"{'.ftz' if ftz else ''}{'.sat' if sat else ''}{'.relu' if relu else ''}"
    assert got == want, (f"{op}.{mode}{mods}.{fmt_name} {[hex(x) for x in operands]}: "
                         f"want {want:#x}, got {got:#x}")


# ---- directed cases -------------------------------------------------------------------------------

ONE, TWO, HALF_ULP = 0x3F800000, 0x40000000, 0x33800000          # 1.0, 2.0, 2**-24
MAX, INF, NINF, NAN_PAYLOAD = 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0xFFC01234


@pytest.mark.parametrize("mode", MODES)
def test_ties_and_directions(mode):
    want = {"rn": 0x3F800000, "rz": 0x3F800000, "rm": 0x3F800000, "rp": 0x3F800001}[mode]
    assert model("add", [ONE, HALF_ULP], "f32", mode) == want            # 1 + 2**-24: a tie
    want = {"rn": 0x3F800002, "rz": 0x3F800001, "rm": 0x3F800001, "rp": 0x3F800002}[mode]
    assert model("add", [0x3F800001, HALF_ULP], "f32", mode) == want     # odd: the tie goes up
    want = {"rn": 0xBF800000, "rz": 0xBF800000, "rm": 0xBF800001, "rp": 0xBF800000}[mode]
    assert model("sub", [0xBF800000, HALF_ULP], "f32", mode) == want           # -1 - 2**-24: a tie
    for ops in ([ONE, HALF_ULP], [0x3F800001, HALF_ULP], [0xBF800000, 0x33800001]):
        check("add", ops, "f32", mode)


@pytest.mark.parametrize("mode", MODES)
def test_overflow_per_mode(mode):
    pos = {"rn": INF, "rz": MAX, "rm": MAX, "rp": INF}[mode]
    neg = {"rn": NINF, "rz": MAX | 1 << 31, "rm": NINF, "rp": MAX | 1 << 31}[mode]
    assert model("mul", [MAX, TWO], "f32", mode) == pos
    assert model("mul", [MAX, TWO | 1 << 31], "f32", mode) == neg
    assert model("add", [MAX, MAX], "f32", mode) == pos
    assert model("mul", [0x7BFF, 0x4000], "f16", "rn") == 0x7C00


def test_nan_results_are_canonical():
    for op, ops in (("add", [NAN_PAYLOAD, ONE]), ("add", [INF, NINF]), ("mul", [0, INF]),
                    ("fma", [INF, ONE, NINF]), ("fma", [ONE, ONE, 0x7F800001]), ("div", [0, 0]),
                    ("div", [INF, NINF]), ("sqrt", [0xBF800000]), ("sqrt", [NINF])):
        for mode in MODES:
            assert model(op, ops, "f32", mode) == 0x7FFFFFFF, f"{op} {[hex(x) for x in ops]} {mode}"
    assert model("fma", [0x7E01, 0x3C00, 0x3C00], "f16") == 0x7FFF
    assert model("add", [0xFFC1, 0x3F80], "bf16") == 0x7FFF


@pytest.mark.parametrize("mode", MODES)
def test_signed_zeros(mode):
    minus = 0x80000000 if mode == "rm" else 0
    assert model("add", [ONE, ONE | 1 << 31], "f32", mode) == minus       # x + (-x)
    assert model("add", [0, 0x80000000], "f32", mode) == minus            # +0 + -0
    assert model("add", [0x80000000, 0x80000000], "f32", mode) == 0x80000000
    assert model("mul", [0x80000000, ONE], "f32", mode) == 0x80000000
    assert model("fma", [0x80000000, ONE, 0], "f32", mode) == minus
    assert model("fma", [ONE, ONE, 0xBF800000], "f32", mode) == minus
    assert model("div", [0x80000000, ONE], "f32", mode) == 0x80000000
    assert model("sqrt", [0x80000000], "f32", mode) == 0x80000000


def test_ftz_inputs_and_results():
    sub = 0x00400000                                                    # 2**-127, subnormal
    assert model("add", [sub, sub], "f32") == 0x00800000                # exact without .ftz
    assert model("add", [sub, sub], "f32", ftz=True) == 0               # both read as zero
    assert model("mul", [0x00800000, 0x3F000000], "f32") == sub         # subnormal result kept
    assert model("mul", [0x00800000, 0xBF000000], "f32", ftz=True) == 0x80000000   # flushed, sign kept
    assert model("fma", [sub, TWO, ONE], "f32", ftz=True) == ONE
    assert model("add", [0x0001, 0x0001], "f16", ftz=True) == 0
    assert model("add", [0x0001, 0x0001], "f16") == 0x0002
    assert model("div", [ONE, sub], "f32", ftz=True) == INF             # 1 / (+0)
    assert model("sqrt", [0x80400000], "f32", ftz=True) == 0x80000000   # -subnormal -> -0, not NaN


def test_subnormal_results_every_mode():
    for mode in MODES:
        for ops in ([0x00800001, 0x3F000000], [0x00000003, 0x3F000000], [0x80000003, 0x3F000000]):
            check("mul", ops, "f32", mode)
        check("div", [0x00000001, 0x40400000], "f32", mode)


def test_sat_and_relu():
    assert model("add", [ONE, ONE], "f32", sat=True) == ONE
    assert model("add", [0xBF800000, 0], "f32", sat=True) == 0
    assert model("mul", [INF, 0], "f32", sat=True) == 0                 # NaN -> +0
    assert model("fma", [0xBC00, 0x3C00, 0], "f16", relu=True) == 0
    assert model("fma", [0x7E00, 0x3C00, 0], "f16", relu=True) == 0x7FFF
    assert model("fma", [0xBF80, 0x3F80, 0x3F80], "bf16", relu=True) == 0
    assert model("add", [0x3C00, 0x3C00], "f16", sat=True) == 0x3C00
    for ops in ([ONE, 0x3F7FFFFF], [0x3F000000, 0xBF000001], [NAN_PAYLOAD, ONE]):
        check("add", ops, "f32", "rn", sat=True)


def test_div_sqrt_rcp_known_values():
    assert model("div", [ONE, 0x40400000], "f32") == 0x3EAAAAAB        # 1/3
    assert model("div", [ONE, 0x40400000], "f32", "rz") == 0x3EAAAAAA
    assert model("rcp", [0x40400000], "f32", "rp") == 0x3EAAAAAB
    assert model("sqrt", [TWO], "f32") == 0x3FB504F3
    assert model("sqrt", [TWO], "f32", "rp") == 0x3FB504F4
    assert model("sqrt", [0x00000001], "f32") == 0x1A3504F3             # sqrt(2**-149)
    assert model("rcp", [0x7F7FFFFF], "f32") == 0x00200000               # 2**-128 (rounded), subnormal


# ---- property tests against the exact reference -------------------------------------------------

def bits_of(fmt_name):
    """Bit patterns with exponent fields biased to the edges (0, 1, top finite, inf/NaN)."""
    eb, fb = FMTS[fmt_name]
    top = (1 << eb) - 1
    exp = st.one_of(st.integers(0, top), st.sampled_from([0, 1, 2, top - 1, top, (top + 1) // 2 - 1]))
    frac = st.one_of(st.integers(0, (1 << fb) - 1), st.sampled_from([0, 1, (1 << fb) - 1, 1 << (fb - 1)]))
    return st.builds(lambda s, e, f: (s << (eb + fb)) | (e << fb) | f, st.integers(0, 1), exp, frac)


def tie_pairs(fmt_name):
    """``(a, b)`` with ``b`` an odd multiple of half an ulp of ``a`` (ties and near-ties of a + b)."""
    eb, fb = FMTS[fmt_name]
    top = (1 << eb) - 2

    def make(s, e, f, k, t):
        e = min(max(e, fb + 3), top)
        a = (s << (eb + fb)) | (e << fb) | f
        b = (t << (eb + fb)) | ((e - fb - 1) << fb) | k
        return a, b
    return st.builds(make, st.integers(0, 1), st.integers(1, top), st.integers(0, (1 << fb) - 1),
                     st.sampled_from([0, 1, 1 << (fb - 1)]), st.integers(0, 1))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["add", "sub", "mul", "div"]), st.sampled_from(MODES), st.booleans(), st.booleans(),
       bits_of("f32"), bits_of("f32"))
def test_f32_binary_ops_match_exact_reference(op, mode, ftz, sat, a, b):
    check(op, [a, b], "f32", mode, ftz, sat and op != "div")


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(MODES), st.booleans(), bits_of("f32"), bits_of("f32"), bits_of("f32"))
def test_f32_fma_matches_exact_reference(mode, ftz, a, b, c):
    check("fma", [a, b, c], "f32", mode, ftz)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(MODES), st.booleans(), st.sampled_from(["add", "sub"]), tie_pairs("f32"))
def test_f32_ties_match_exact_reference(mode, ftz, op, pair):
    check(op, list(pair), "f32", mode, ftz)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(MODES), st.booleans(), st.sampled_from(["sqrt", "rcp"]), bits_of("f32"))
def test_f32_unary_ops_match_exact_reference(mode, ftz, op, a):
    check(op, [a], "f32", mode, ftz)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["f16", "bf16"]), st.sampled_from(["add", "sub", "mul", "fma"]), st.integers(0, 2),
       st.data())
def test_16_bit_ops_match_exact_reference(fmt_name, op, modifier, data):
    ops = [data.draw(bits_of(fmt_name)) for _ in range(3 if op == "fma" else 2)]
    if fmt_name == "bf16":
        check(op, ops, fmt_name, relu=(modifier == 1 and op == "fma"))
    else:
        check(op, ops, fmt_name, ftz=modifier == 2, sat=modifier == 1, relu=(modifier == 2 and op == "fma"))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["f16", "bf16"]), tie_pairs("f16"), tie_pairs("bf16"))
def test_16_bit_ties(fmt_name, pair16, pairbf):
    check("add", list(pair16 if fmt_name == "f16" else pairbf), fmt_name)


# ---- the batched API ------------------------------------------------------------------------------

def test_batched_matches_scalar_for_x2_and_modes():
    rng = np.random.default_rng(3)
    a, b, c = (rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    for mode in MODES:
        got = float_arith("fma", a, b, c, rnd=mode, parallel=False)
        want = [fa.f32_fma(int(x), int(y), int(z), ROUNDING[mode], False, False) for x, y, z in zip(a, b, c)]
        assert np.array_equal(got, np.array(want, np.uint32)), mode
    got = float_arith("fma", a, b, c, type="f16x2", relu=True)
    want = [fa.f16x2_fma(int(x), int(y), int(z), 0, False, False, True) for x, y, z in zip(a, b, c)]
    assert np.array_equal(got, np.array(want, np.uint32))
    got = float_arith("sub", a, b, type="bf16x2")
    want = [fa.bf16x2_sub(int(x), int(y), 0) for x, y in zip(a, b)]
    assert np.array_equal(got, np.array(want, np.uint32))
    got = float_arith("sqrt", a.reshape(40, 100), rnd="rm")
    assert got.shape == (40, 100) and int(got[0, 0]) == fa.f32_sqrt(int(a[0]), ROUNDING["rm"], False)


@pytest.mark.parametrize("call, message", [
    (lambda x: float_arith("div", x, x, type="f16"), "div is defined here for f32 only"),
    (lambda x: float_arith("add", x, x, type="f16", rnd="rz"), "only .rn for f16"),
    (lambda x: float_arith("add", x, x, type="bf16", ftz=True), "no .ftz or .sat for bf16"),
    (lambda x: float_arith("fma", x, x, x, relu=True), "relu"),
    (lambda x: float_arith("add", x, x, rnd="rna"), "rounding must be"),
    (lambda x: float_arith("fma", x, x), "takes 3 operands"),
    (lambda x: float_arith("pow", x, x), "op must be one of"),
    (lambda x: float_arith("add", x, x[:1]), "one shape"),
])
def test_batched_errors_name_the_instruction(call, message):
    with pytest.raises(ValueError, match=message):
        call(np.zeros(2, np.uint32))


def test_batched_rejects_other_dtypes():
    with pytest.raises(TypeError, match="uint32"):
        float_arith("add", np.zeros(2, np.float32), np.zeros(2, np.uint32))


def _f32_bits(x):
    return int(np.array([x], np.float32).view(np.uint32)[0])


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(MODES), st.integers(-90, 90), st.integers(-3, 3), st.booleans(),
       st.integers(1, 0xFE), st.integers(0, (1 << 23) - 1), st.integers(1, 0xFE), st.integers(0, (1 << 23) - 1))
def test_f32_fma_far_apart_and_cancelling(mode, shift, tweak, negate, ea, fa_, eb, fb_):
    """c a power of two ``shift`` away from a * b (the sticky alignment when far apart), a few ulps
    off, of either sign (massive cancellation at shift 0)."""
    a = (ea << 23) | fa_
    b = (min(max(eb, 64), 190) << 23) | fb_
    with np.errstate(all="ignore"):
        p = np.float32(np.float32(np.array([a], np.uint32).view(np.float32)[0])
                       * np.float32(np.array([b], np.uint32).view(np.float32)[0]))
        c = _f32_bits(np.float32(p * np.float32(2.0) ** shift))
    if (c & 0x7F800000) in (0, 0x7F800000):
        return
    c = (c + tweak) ^ (0x80000000 if negate else 0)
    check("fma", [a, b, c], "f32", mode)
    check("fma", [c, 0x3F800000, a], "f32", mode)   # an add with the same spread


def test_16_bit_fma_dense_random():
    rng = np.random.default_rng(11)
    for fmt_name in ("f16", "bf16"):
        for a, b, c in rng.integers(0, 1 << 16, (3000, 3)).tolist():
            check("fma", [a, b, c], fmt_name)
            check("mul", [a, b], fmt_name)
