"""min/max/abs/neg/copysign/testp/setp/set (warpsim.isa.fpcompare) against straightforward references.

The references read values through numpy's float types (exact for f16 and f32; bf16 through its f32
widening) and restate PTX's rules: min/max of a NaN and a number is the number, of two NaNs (or any
NaN with .NaN) the canonical NaN; -0 < +0; .xorsign.abs; IEEE ordered and unordered comparisons.
Every 16-bit op runs over a dense grid of pairs; f32 over edges and random bits.
"""

import itertools
import math

import numpy as np
import pytest

from warpsim.isa import fpcompare as fc
from warpsim.isa.fpbatch import float_minmax, float_setp, float_testp

FMT = {"f32": (8, 23), "f16": (5, 10), "bf16": (8, 7)}


def as_float(bits, t):
    if t == "f32":
        return float(np.array([bits], np.uint32).view(np.float32)[0])
    if t == "f16":
        return float(np.array([bits], np.uint16).view(np.float16)[0])
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


def ref_minmax(a, b, t, is_max, nan_mode=False, xorsign_abs=False, ftz=False):
    eb, fb = FMT[t]
    sb = 1 << (eb + fb)
    if ftz:
        a, b = [x & sb if (x >> fb) & ((1 << eb) - 1) == 0 else x for x in (a, b)]
    sign = 0
    if xorsign_abs:
        sign = (a ^ b) & sb
        a, b = a & (sb - 1), b & (sb - 1)
    fa, fb_ = as_float(a, t), as_float(b, t)
    if (math.isnan(fa) and math.isnan(fb_)) or (nan_mode and (math.isnan(fa) or math.isnan(fb_))):
        return sb - 1                             # the canonical NaN; .xorsign leaves a NaN's sign alone
    if math.isnan(fa):
        return b | sign
    if math.isnan(fb_):
        return a | sign
    key = lambda x, v: (v, -1 if x & sb else 0)   # -0 below +0
    lo, hi = sorted([(key(a, fa), a), (key(b, fb_), b)])
    return (hi if is_max else lo)[1] | sign


def ref_setp(a, b, t, cmp):
    x, y = as_float(a, t), as_float(b, t)
    unordered = math.isnan(x) or math.isnan(y)
    if cmp == "num":
        return not unordered
    if cmp == "nan":
        return unordered
    if unordered:
        return cmp.endswith("u")
    base = cmp[:-1] if cmp.endswith("u") and cmp not in ("eq", "ne") else cmp
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[base]


F32_EDGES = [0x0, 0x80000000, 0x1, 0x80000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x7F7FFFFF,
             0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x40000000, 0xC0000000]
H_GRID = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3C01, 0x7BFF, 0xFBFF, 0x7C00,
          0xFC00, 0x7E00, 0xFE01, 0x7C01, 0x4000, 0xC000, 0x3555, 0x0080, 0x3F80, 0xBF80, 0x7F80, 0x7FC0]


@pytest.mark.parametrize("t", ["f32", "f16", "bf16"])
def test_minmax_every_modifier(t):
    values = F32_EDGES if t == "f32" else H_GRID
    for a, b in itertools.product(values, repeat=2):
        for is_max, nan_mode, xs, ftz in itertools.product([False, True], repeat=4):
            if t == "bf16" and ftz:
                continue
            want = ref_minmax(a, b, t, is_max, nan_mode, xs, ftz)
            eb, fb = FMT[t]
            got = int(fc.fp_minmax(a, b, eb, fb, is_max, ftz, nan_mode, xs))
            assert got == want, (f"{'max' if is_max else 'min'} nan={nan_mode} xorsign={xs} ftz={ftz} {t} "
                                 f"{a:#x} {b:#x}: want {want:#x}, got {got:#x}")


def test_minmax_named_cases():
    assert fc.f32_min(0x7FC00000, 0x3F800000, False, False, False) == 0x3F800000
    assert fc.f32_max(0x7FC00001, 0xFFC00000, False, False, False) == 0x7FFFFFFF
    assert fc.f32_min(0x00000000, 0x80000000, False, False, False) == 0x80000000
    assert fc.f32_max(0x80000000, 0x00000000, False, False, False) == 0x00000000
    assert fc.f32_min(0x00000001, 0x00000002, True, False, False) == 0x00000000   # .ftz: both +0
    assert fc.f16x2_max(0x7E00BC00, 0x3C007E00, False, False, False) == 0x3C00BC00
    assert fc.f16x2_min(0x7E00BC00, 0x3C007E00, False, True, False) == 0x7FFF7FFF
    assert fc.bf16x2_min(0xC0003F80, 0x3F80C000, False, True) == 0xBF80BF80
    assert fc.f32_min(0xFFC00000, 0x3F800000, False, True, True) == 0x7FFFFFFF   # .NaN.xorsign.abs


@pytest.mark.parametrize("t", ["f32", "f16", "bf16"])
def test_setp_every_comparison(t):
    values = F32_EDGES if t == "f32" else H_GRID
    eb, fb = FMT[t]
    for a, b in itertools.product(values, repeat=2):
        for cmp, code in fc.CMP.items():
            assert bool(fc.fp_compare(a, b, eb, fb, code, False)) == ref_setp(a, b, t, cmp), f"{cmp} {t} {a:#x} {b:#x}"


def test_setp_ftz_and_packed():
    assert fc.f32_setp(0x00000001, 0x80000000, fc.CMP["eq"], True)
    assert not fc.f32_setp(0x00000001, 0x80000000, fc.CMP["eq"], False)
    assert fc.f16x2_setp(0x7E003C00, 0x3C003C00, fc.CMP["equ"], False) == (True, True)
    assert fc.f16x2_setp(0x7E003C00, 0x3C003C00, fc.CMP["eq"], False) == (True, False)   # (p: lower, q: upper)
    assert fc.f16x2_set(0x7E003C00, 0x3C003C00, fc.CMP["eq"], False, False) == 0x0000FFFF
    assert fc.bf16x2_set(0x3F800000, 0x00003F80, fc.CMP["gt"], True) == 0x3F800000
    assert fc.f32_set(0x7FC00000, 0, fc.CMP["neu"], False, False) == 0xFFFFFFFF


def test_abs_neg_copysign_testp():
    assert fc.f32_abs(0xFFC01234, False) == 0x7FFFFFFF      # NaN: the canonical NaN (the H200)
    assert fc.f32_neg(0x00000001, True) == 0x80000000
    assert fc.f32_neg(0x00000001, False) == 0x80000001
    assert fc.f16x2_abs(0x8001BC00, True) == 0x00003C00
    assert fc.bf16x2_neg(0x3F80BF80) == 0xBF803F80
    assert fc.f32_copysign(0x80000000, 0x7FC00000) == 0xFFC00000
    want = {"finite": [1, 1, 1, 0, 0], "infinite": [0, 0, 0, 1, 0], "number": [1, 1, 1, 1, 0],
            "notanumber": [0, 0, 0, 0, 1], "normal": [1, 0, 1, 0, 0], "subnormal": [0, 1, 0, 0, 0]}
    values = [0x80000000, 0x00000001, 0x3F800000, 0xFF800000, 0x7F800001]
    for cls, flags in want.items():
        assert [int(fc.f32_testp(v, fc.TESTP[cls])) for v in values] == flags, cls
    with pytest.raises(ValueError, match="testp"):
        fc.class_code("zero")
    with pytest.raises(ValueError, match="setp"):
        fc.cmp_code("lg")


def test_batched_compare_api():
    rng = np.random.default_rng(5)
    a, b = (rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    got = float_minmax("max", a, b, type="f16x2", nan=True)
    want = [fc.f16x2_max(int(x), int(y), False, True, False) for x, y in zip(a, b)]
    assert np.array_equal(got, np.array(want, np.uint32))
    p = float_setp("ltu", a, b, type="bf16x2")
    assert p.shape == (3000, 2)
    assert all(tuple(p[i]) == fc.bf16x2_setp(int(a[i]), int(b[i]), fc.CMP["ltu"]) for i in range(3000))
    t = float_testp("subnormal", a)
    assert t.tolist() == [bool(fc.f32_testp(int(x), fc.TESTP["subnormal"])) for x in a]
    with pytest.raises(ValueError, match="no .ftz"):
        float_minmax("min", a, b, type="bf16", ftz=True)
    with pytest.raises(ValueError, match="scalar type"):
        float_testp("finite", a, type="f16x2")
