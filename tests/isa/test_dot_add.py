"""warpsim.isa.dot_add, the fused dot-add of wgmma's tf32, fp8 and integer forms, against arithmetic done another way:
every fp8 code's value (decoded here from the format's definition), tf32's ignored low bits, exact sums, the
integers' wrap-around and saturation, the special values, and the rounding of each output."""

import numpy as np
import pytest

from warpsim.isa.dot_add import DOT_CD, DOT_TYPES, NO_PART, SM90_FP8, SM90_TF32, dot_add, dot_add_matrix, int_dot_add

ONE = {"e4m3": 0x38, "e5m2": 0x3C}
FIELDS = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15)}


def _fp8_value(code, t):
    """The value of an fp8 code from the format's definition (OCP FP8: e4m3 has no infinity, one NaN per sign)."""
    e_bits, f_bits, bias = FIELDS[t]
    sign = -1.0 if code & 0x80 else 1.0
    e, f = (code >> f_bits) & ((1 << e_bits) - 1), code & ((1 << f_bits) - 1)
    if t == "e4m3" and e == 15 and f == 7 or t == "e5m2" and e == 31 and f:
        return float("nan")
    if t == "e5m2" and e == 31:
        return sign * float("inf")
    if e == 0:
        return sign * f / (1 << f_bits) * 2.0 ** (1 - bias)
    return sign * (1 + f / (1 << f_bits)) * 2.0 ** (e - bias)


def _one(a, b, ta, tb, c=0, cd="f32"):
    fp8 = ta != "tf32"
    model = SM90_FP8 if fp8 else SM90_TF32
    return int(dot_add(np.array(a, np.int64), np.array(b, np.int64), len(a), DOT_TYPES[ta], DOT_TYPES[tb], c,
                       DOT_CD[cd], model.frac_bits, model.out_frac, model.zero_exp, model.min_quantum))


@pytest.mark.parametrize("t", ["e4m3", "e5m2"])
def test_every_fp8_code_times_one_is_its_value(t):
    for code in range(256):
        got = np.array([_one([code], [ONE[t]], t, t)], np.uint32).view(np.float32)[0]
        want = _fp8_value(code, t)
        if np.isnan(want):
            assert _one([code], [ONE[t]], t, t) == 0x7FFFFFFF, hex(code)
        elif want == 0:
            assert _one([code], [ONE[t]], t, t) == 0, hex(code)          # every zero result is +0
        else:
            assert got == np.float32(want), (hex(code), got, want)


def test_tf32_ignores_the_low_13_bits():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1 << 32, (200, 8), dtype=np.uint64).astype(np.int64)
    b = rng.integers(0, 1 << 32, (200, 8), dtype=np.uint64).astype(np.int64)
    c = rng.integers(0, 1 << 32, 200, dtype=np.uint64).astype(np.int64)
    for i in range(200):
        full = _one(a[i], b[i], "tf32", "tf32", int(c[i]))
        masked = _one(a[i] & ~0x1FFF, b[i] & ~0x1FFF, "tf32", "tf32", int(c[i]))
        assert full == masked


def test_small_integer_sums_are_exact():
    """Sums of products of small integers lose nothing: equal to numpy's f32 arithmetic on the same values."""
    rng = np.random.default_rng(4)
    values = np.array([s * v for v in (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16) for s in (1, -1)], np.float32)
    for t in ("e4m3", "e5m2", "tf32"):
        k = 8 if t == "tf32" else 32
        for _ in range(50):
            a, b = rng.choice(values, k), rng.choice(values, k)
            c = np.float32(rng.integers(-1000, 1000))
            if t == "tf32":
                ab, bb = a.view(np.uint32), b.view(np.uint32)
            else:
                lut = {_fp8_value(code, t): code for code in range(255, -1, -1) if not np.isnan(_fp8_value(code, t))}
                ab, bb = [lut[float(v)] for v in a], [lut[float(v)] for v in b]
            got = np.array([_one(ab, bb, t, t, int(c.view(np.uint32)))], np.uint32).view(np.float32)[0]
            want = np.float32(np.dot(a.astype(np.float64), b.astype(np.float64)) + c)
            assert got == want or (got == 0 and want == 0)


def test_fp8_into_f32_keeps_13_fraction_bits_truncated():
    """Each term keeps 13 fraction bits below the largest one, truncated on its magnitude: c = 2**-13 survives beside
    1.0, +-2**-14 is lost either way; 1 + 3 * 2**-14 becomes 1 + 2**-13; tf32's f32 keeps 23 bits."""
    one = 0x3F800000
    assert _one([ONE["e4m3"]], [ONE["e4m3"]], "e4m3", "e4m3", 0x39000000) == 0x3F800400     # 1 + 2**-13
    assert _one([ONE["e4m3"]], [ONE["e4m3"]], "e4m3", "e4m3", 0x38800000) == one           # 1 + 2**-14 -> 1
    assert _one([ONE["e4m3"]], [ONE["e4m3"]], "e4m3", "e4m3", 0xB8800000) == one           # 1 - 2**-14 -> 1
    assert _one([ONE["e4m3"]], [ONE["e4m3"]], "e4m3", "e4m3", 0x39400000) == 0x3F800400     # 1 + 3 * 2**-14
    assert _one([0x30], [ONE["e4m3"]], "e4m3", "e4m3", 0x39400000) & 0x3FF == 0           # 0.5 + ...: 13 bits
    tf1 = 0x3F800000
    assert _one([tf1], [tf1], "tf32", "tf32", 0x34000000) == 0x3F800001                    # 1 + 2**-23


def test_f16_accumulator_rounds_to_nearest_even():
    two = 0x40
    # 2048 + 1 (a tie between 2048 and 2050 in f16): even, 2048; 2048 + 3: 2052
    assert _one([ONE["e4m3"]], [ONE["e4m3"]], "e4m3", "e4m3", 0x6800, "f16") == 0x6800
    assert _one([ONE["e4m3"], two], [ONE["e4m3"], ONE["e4m3"]], "e4m3", "e4m3", 0x6800, "f16") == 0x6802


def test_special_values():
    inf5, ninf5, zero = 0x7C, 0xFC, 0x00
    e5 = ONE["e5m2"]
    assert _one([inf5], [zero], "e5m2", "e5m2") == 0x7FFFFFFF                 # inf * 0
    assert _one([inf5, ninf5], [e5, e5], "e5m2", "e5m2") == 0x7FFFFFFF        # +inf and -inf
    assert _one([inf5, e5], [e5, e5], "e5m2", "e5m2") == 0x7F800000
    assert _one([ninf5], [e5], "e5m2", "e5m2", 0, "f16") == 0xFC00
    assert _one([e5], [e5], "e5m2", "e5m2", 0x7FC00000) == 0x7FFFFFFF         # a NaN accumulator
    assert _one([0x7F], [ONE["e4m3"]], "e4m3", "e4m3", 0, "f16") == 0x7FFF    # e4m3's NaN


@pytest.mark.parametrize("ta,tb", [("s8", "s8"), ("u8", "s8"), ("s8", "u8"), ("u8", "u8")])
def test_integers_wrap_or_saturate(ta, tb):
    rng = np.random.default_rng(5)
    for satfinite in (False, True):
        for _ in range(200):
            a = rng.integers(0, 256, 32)
            b = rng.integers(0, 256, 32)
            c = int(rng.choice([rng.integers(-100, 100), 0x7FFFFFF0, -0x7FFFFFF0]))
            sa = [v - 256 if ta == "s8" and v >= 128 else int(v) for v in a]
            sb = [v - 256 if tb == "s8" and v >= 128 else int(v) for v in b]
            exact = c + sum(x * y for x, y in zip(sa, sb))
            want = min(max(exact, -2 ** 31), 2 ** 31 - 1) if satfinite else exact
            got = int(int_dot_add(a.astype(np.int64), b.astype(np.int64), 32, DOT_TYPES[ta], DOT_TYPES[tb],
                                  c & 0xFFFFFFFF, satfinite))
            assert got == want & 0xFFFFFFFF


def test_matrix_form_names_its_types():
    d = dot_add_matrix(np.full((2, 32), 0x40), np.full((32, 3), 0x40), None, "e4m3", "e4m3", "f32")
    assert d.shape == (2, 3) and (d == np.float32(128.0).view(np.uint32)).all()          # 32 * 2 * 2


def test_a_zero_factor_takes_no_part_in_the_tf32_alignment():
    """The H100's bits for one row of the wgmma types campaign (conformance/h100/wgmma-types-first-compare/,
    ``tf32_f32`` class ``cancel``, word 7884): ``-0 * -2**60`` beside products of subnormal size. A zero at exponent
    -126 (MMA-Sim's rule, the model before that run) would align every term to ``2**(60 - 126 - 25)`` and give +0."""
    a = [0x80000000, 0xDDC480A0, 0x8000BF00, 0x4008423C, 0x80000000, 0xDDC480A0, 0x80000000, 0x4008423C]
    b = [0x0, 0x80000000, 0xC0DA2FE3, 0x0032EE20, 0x80000000, 0x0, 0x40DA2FE3, 0x8032EE20]
    assert _one(a, b, "tf32", "tf32") == 0x000442A0
    m = SM90_TF32
    at_126 = dot_add(np.array(a, np.int64), np.array(b, np.int64), 8, DOT_TYPES["tf32"], DOT_TYPES["tf32"], 0,
                     DOT_CD["f32"], m.frac_bits, m.out_frac, -126, m.min_quantum)
    assert at_126 == 0


@pytest.mark.parametrize("a, b, gpu, without", [
    # tf32_f32, class sparse, chunk 139, word 302743: 6.85e-42 - 1.1e-46, exactly 4888.998 units of 2**-149
    ([0, 0x1182E1BF, 0xA59D0A55, 0, 0, 0, 0, 0],
     [0x0A3C94BF, 0xA1203459, 0x94F9336F, 0x96DE8107, 0x9B80A68F, 0x30AE7A0C, 0xD804F6A4, 0x2D6FB809], 0x1319, 0x1318),
    # tf32_f32_rs, class sparse, chunk 119, word 638126: 4.75e-44 + 1.7e-46, exactly 34.0017 units of 2**-149
    ([0, 0x1AC2956C, 0, 0, 0, 0x2D48EC9A, 0, 0],
     [0x9088771F, 0x1C327218, 0xA25E2D2F, 0xA1DC7D98, 0xE323818F, 0x059DC593, 0x097EE1AD, 0x6E1F6785], 0x21, 0x22),
])
def test_tf32_terms_keep_no_bit_below_2_to_the_minus_158(a, b, gpu, without):
    """Two of the 20 words of the streamed campaign (10^6 tf32 instructions on an H100, seed 1,
    conformance/h100/wgmma-types-stream-seed1/) where the model without a floor differed: a zero accumulator and
    products of subnormal size. Each term keeps no bit below 2**-158, so the sum is 4889 (not 4888.998 truncated)
    and 33 + 0 (not 34.0017 truncated) units of 2**-149."""
    assert _one(a, b, "tf32", "tf32") == gpu
    m = SM90_TF32
    no_floor = dot_add(np.array(a, np.int64), np.array(b, np.int64), 8, DOT_TYPES["tf32"], DOT_TYPES["tf32"], 0,
                       DOT_CD["f32"], m.frac_bits, m.out_frac, m.zero_exp, NO_PART)
    assert no_floor == without


def test_zeros_take_no_part_in_the_fp8_alignment():
    """The H100's bits for a row of the campaign's class ``sparse`` (conformance/h100/wgmma-types-second-compare/,
    ``e4m3_f32`` word 743): every A element zero, B up to 448 (2**8), a tiny accumulator. The GPU keeps c's 13
    fraction bits (0x01746c00); zeros at exponent -126 (MMA-Sim's rule) would align c to 2**(-118 - 13): 0x01740000."""
    b = [0x3F, 0x59, 0x2C, 0x96, 0xBD, 0x15, 0x0D, 0xEC, 0xF8, 0x57, 0x3B, 0x73, 0x7E, 0xDB, 0x6F, 0xE3,
         0xBB, 0xEE, 0x1C, 0x0F, 0x09, 0x40, 0x31, 0x54, 0x9C, 0xD4, 0xF3, 0x48, 0xAC, 0xAC, 0x8D, 0x77]
    assert _one([0] * 32, b, "e4m3", "e4m3", 0x01746C76) == 0x01746C00
    m = SM90_FP8
    at_126 = dot_add(np.zeros(32, np.int64), np.array(b, np.int64), 32, DOT_TYPES["e4m3"], DOT_TYPES["e4m3"],
                     0x01746C76, DOT_CD["f32"], m.frac_bits, m.out_frac, -126, m.min_quantum)
    assert at_126 == 0x01740000


@pytest.mark.parametrize("t", ["e4m3", "e5m2"])
def test_the_host_fp8_table_is_the_dot_adds_decoding(t):
    """floats.fp8_values (inputs and references) and dot_add's decoder (the tensor core's model) agree on every code."""
    from warpsim.isa.dot_add import _decode
    from warpsim.isa.floats import fp8_values, nearest_fp8
    table = fp8_values(t)
    for code in range(256):
        kind, neg, sig, exp, frac = _decode(code, DOT_TYPES[t])
        want = np.nan if kind == 2 else (-1.0) ** neg * (np.inf if kind == 1 else sig * 2.0 ** (exp - frac))
        assert np.array_equal(table[code], want, equal_nan=True), hex(code)
    codes = np.flatnonzero(np.isfinite(table) & (np.arange(256) != 0x80))
    assert np.array_equal(nearest_fp8(table[codes], t), codes)        # every finite code is its own nearest
