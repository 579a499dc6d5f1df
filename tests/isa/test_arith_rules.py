"""Directed tests, one per rule of the tensor-core model (warpsim/isa/arith.py, docs/hardware-model.md §4).

Each case is a dot product run as one mma output element through the fragment maps. Expected bits
are worked out by hand in each docstring from the rule, never taken from warpsim's output. Rules
with no hardware evidence here (sm_80's second block, the EZ floor, special values) say so and cite
their source: Khattak & Mikaitis arXiv 2512.07004 (models A100TC.m / H100TC.m) and Xie et al.,
MMA-Sim arXiv 2511.10909.
"""

import numpy as np
import pytest

from warpsim.isa import mma_dot
from warpsim.isa.floats import f16_bits_to_float, f32_bits_to_float

F16_NAN, F32_NAN = 0x7FFF, 0x7FFFFFFF
F32_INF, F16_INF = 0x7F800000, 0x7C00


def f16(x):
    """f16 bits of an exactly representable value."""
    v = np.float16(x)
    assert float(v) == x, f"{x!r} is not an f16 value"
    return int(np.array(v).view(np.uint16))


def bf16(x):
    v = np.float32(x)
    bits = int(np.array(v).view(np.uint32))
    assert float(v) == x and bits & 0xFFFF == 0, f"{x!r} is not a bf16 value"
    return bits >> 16


def f32(x):
    v = np.float32(x)
    assert float(v) == x, f"{x!r} is not an f32 value"
    return int(np.array(v).view(np.uint32))


def dot(a, b, c, *, ab="f16", cd="f32", arch="sm90", shape="m16n8k16"):
    """One output element: ``a``, ``b`` lists of 16-bit patterns (k = 0..), ``c`` bits."""
    k = 16 if shape == "m16n8k16" else 8
    av = np.zeros(k, np.uint32)
    bv = np.zeros(k, np.uint32)
    av[:len(a)] = a
    bv[:len(b)] = b
    return int(mma_dot(av, bv, np.array(c, np.uint32), ab=ab, cd=cd, arch=arch, shape=shape))


def check(got, want, what, fmt="f32"):
    show = f32_bits_to_float if fmt == "f32" else f16_bits_to_float
    assert got == want, f"{what}: expected {want:#x} ({show(want)!r}), got {got:#x} ({show(got)!r})"


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_products_are_exact(arch):
    """(1 + 2**-10)**2 = 1 + 2**-9 + 2**-20 needs 21 bits: exact in f32, lost by an f16 product."""
    x = f16(1 + 2 ** -10)
    check(dot([x], [x], 0, arch=arch), f32(1 + 2 ** -9 + 2 ** -20), "exact product")


def test_per_term_truncation_sm90():
    """sm90 (F = 25): 1 + 15 terms of 1.5 * 2**-24 (= 3 * 2**-25, kept whole) = 1 + 45 * 2**-25;
    f32 truncation keeps 1 + 11 * 2**-23. (Rounding each term to nearest would give the same here,
    so the negative case below pins the direction.)"""
    a = [f16(1.0)] + [f16(1.5 * 2 ** -12)] * 15
    b = [f16(1.0)] + [f16(2 ** -12)] * 15
    check(dot(a, b, 0, arch="sm90"), f32(1 + 11 * 2 ** -23), "15 small terms")


def test_per_term_truncation_toward_zero_on_magnitude_sm80():
    """sm80 (F = 24), k = 0..7 only (hardware-backed block): 1 - 7 terms of 1.5 * 2**-24.
    Each term keeps 24 fraction bits below 2**0: 1.5 * 2**-24 -> 1 * 2**-24 on the magnitude, so
    the sum is 1 - 7 * 2**-24 (exact in f32). Flooring (toward -inf) would give 1 - 14 * 2**-24,
    exact rounding 1 - 10.5 * 2**-24 -> another value."""
    a = [f16(1.0)] + [f16(-1.5 * 2 ** -12)] * 7
    b = [f16(1.0)] + [f16(2 ** -12)] * 7
    check(dot(a, b, 0, arch="sm80"), f32(1 - 7 * 2 ** -24), "truncation toward zero")


@pytest.mark.parametrize("arch,want", [("sm90", 1 + 3 * 2 ** -23), ("sm80", 1.0)])
def test_fraction_bits_kept(arch, want):
    """1 + 15 terms of 2**-25. sm90 keeps F = 25 bits: 1 + 15 * 2**-25 -> truncated to f32:
    1 + 3 * 2**-23. sm80 keeps F = 24: every 2**-25 term truncates to 0 in both blocks: 1.0.
    (sm80's second block has no hardware vectors here: Khattak & Mikaitis A100TC.m, MMA-Sim.)"""
    a = [f16(1.0)] + [f16(2 ** -13)] * 15
    b = [f16(1.0)] + [f16(2 ** -12)] * 15
    check(dot(a, b, 0, arch=arch), f32(want), f"F bits under {arch}")


@pytest.mark.parametrize("arch,want", [("sm90", 2 + 2 ** -22), ("sm80", 2.0)])
def test_block_size(arch, want):
    """k0 = 1, k1 = 2**-24; k8 = 1, k9..11 = 2**-24. sm90, one block of 16: 2 + 4 * 2**-24 =
    2 + 2**-22 (exact). sm80, blocks of 8: block 1 = 1 + 2**-24, truncated to f32: 1.0; block 2 =
    1 + 1 + 3 * 2**-24, truncated: 2.0. No hardware vectors exercise sm80's second block here:
    the rule rests on MMA-Sim (arXiv 2511.10909, Ampere split-k) and Khattak & Mikaitis (fma=8)."""
    tiny_a, tiny_b = f16(2 ** -12), f16(2 ** -12)
    a = [f16(1.0), tiny_a] + [0] * 6 + [f16(1.0), tiny_a, tiny_a, tiny_a]
    b = [f16(1.0), tiny_b] + [0] * 6 + [f16(1.0), tiny_b, tiny_b, tiny_b]
    check(dot(a, b, 0, arch=arch), f32(want), f"block size under {arch}")


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_m16n8k8_is_one_block(arch):
    """m16n8k8 is one block of 8 on both architectures: 1 + 7 * 2**-24 with F >= 24 keeps every
    term: 1 + 7 * 2**-24 -> f32 truncation 1 + 3 * 2**-23."""
    a = [f16(1.0)] + [f16(2 ** -12)] * 7
    b = [f16(1.0)] + [f16(2 ** -12)] * 7
    check(dot(a, b, 0, arch=arch, shape="m16n8k8"), f32(1 + 3 * 2 ** -23), "k8 block")


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_ez_floor_f32(arch):
    """c = 0 and k >= 2 are zero terms, so emax >= EZ (-133 sm90, -132 sm80) and terms keep bits
    down to 2**(EZ - F) = 2**-158 / 2**-156 only. bf16: t0 = 2**-148 + 2**-155,
    t1 = -(1 + 2**-7)**2 * 2**-149 = -(2**-149 + 2**-155 + 2**-163). Exact sum 2**-149 - 2**-163
    truncates to +0; with the floor t1 loses 2**-163 and the sum is exactly 2**-149 (0x00000001).
    No hardware evidence here for sm80 (A100/L40S vectors have no zeros) and none in the vectors for
    sm90: Khattak & Mikaitis min_exp_limit; docs/hardware-model.md §4 (H200 run)."""
    a = [bf16((1 + 2 ** -7) * 2 ** -74), bf16(-(1 + 2 ** -7) * 2 ** -75)]
    b = [bf16(2 ** -74), bf16((1 + 2 ** -7) * 2 ** -74)]
    check(dot(a, b, 0, ab="bf16", arch=arch), 0x00000001, f"EZ floor f32 under {arch}")


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_ez_floor_f16(arch):
    """f16 output, c = 0: emax >= EZ (-21 sm90, -20 sm80), terms keep bits down to 2**-46 / 2**-44.
    t0 = 1.5 * 2**-24, t1 = 2**-27 * (1 + 2**-9), t2 = -(1 + 2**-10)**2 * 2**-27
    = -(2**-27 + 2**-36 + 2**-47). Exact sum 1.5 * 2**-24 - 2**-47 rounds (RNE) to 2**-24 (0x0001);
    with the floor t2 loses 2**-47, the sum is the tie 1.5 * 2**-24 and rounds to even: 0x0002.
    Source: Khattak & Mikaitis (min_exp_limit -21 / -20); no hardware vector has a zero term."""
    a = [f16(1.5 * 2 ** -12), f16((1 + 2 ** -9) * 2 ** -13), f16(-(1 + 2 ** -10) * 2 ** -13)]
    b = [f16(2 ** -12), f16(2 ** -14), f16((1 + 2 ** -10) * 2 ** -14)]
    check(dot(a, b, 0, cd="f16", arch=arch), 0x0002, f"EZ floor f16 under {arch}", "f16")


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
@pytest.mark.parametrize("cd", ["f32", "f16"])
def test_nan_and_inf_rules(arch, cd):
    """Any NaN input, inf * 0, or +inf with -inf give the canonical NaN; otherwise an infinity wins
    with its sign. Source: MMA-Sim (arXiv 2511.10909) and docs/hardware-model.md §4 (H200); no
    hardware vectors here contain specials, none at all for sm80."""
    nan, inf = (F32_NAN, F32_INF) if cd == "f32" else (F16_NAN, F16_INF)
    one, two = f16(1.0), f16(2.0)
    pinf, ninf, qnan = 0x7C00, 0xFC00, 0x7E01
    cases = [
        ([qnan], [one], 0, nan, "NaN in a"),
        ([one] * 9 + [qnan], [one] * 10, 0, nan, "NaN in a at k = 9 (second sm80 block)"),
        ([pinf], [0], 0, nan, "inf * 0"),
        ([pinf, ninf], [one, one], 0, nan, "+inf and -inf"),
        ([pinf], [two], 0, inf, "+inf * 2"),
        ([pinf], [f16(-2.0)], 0, inf | (0x80000000 if cd == "f32" else 0x8000), "+inf * -2"),
        ([one], [one], inf, inf, "c = +inf"),
        ([ninf], [one], inf, nan, "c = +inf with a -inf product"),
    ]
    for a, b, c, want, what in cases:
        check(dot(a, b, c, cd=cd, arch=arch), want, f"{what} ({cd}, {arch})", cd)
    c_nan = 0x7FC00001 if cd == "f32" else 0xFE01
    check(dot([one], [one], c_nan, cd=cd, arch=arch), nan, f"c = NaN ({cd}, {arch})", cd)


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
@pytest.mark.parametrize("cd", ["f32", "f16"])
def test_zero_results_are_positive(arch, cd):
    """Every zero result is +0: -0 + 0 * x, and an exact cancellation of c = -1 by +1.
    Source: MMA-Sim; docs/hardware-model.md §4."""
    neg_zero = 0x80000000 if cd == "f32" else 0x8000
    minus_one = f32(-1.0) if cd == "f32" else f16(-1.0)
    check(dot([0x8000], [f16(3.0)], neg_zero, cd=cd, arch=arch), 0, f"-0 + (-0 * 3) ({cd})", cd)
    check(dot([f16(1.0)], [f16(1.0)], minus_one, cd=cd, arch=arch), 0, f"-1 + 1 ({cd})", cd)


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_subnormal_inputs_are_kept(arch):
    """The smallest f16 subnormal 2**-24 times 1 is 2**-24 in f32 (no flush to zero); a bf16
    subnormal 2**-133 squared with c = 2**-149 stays 2**-149 (the product is far below)."""
    check(dot([0x0001], [f16(1.0)], 0, arch=arch), f32(2.0 ** -24), "f16 subnormal")
    check(dot([0x0001] * 16, [f16(1.0)] * 16, 0, arch=arch), f32(2.0 ** -20), "16 f16 subnormals")
    check(dot([0x0001], [0x0001], 0x00000001, ab="bf16", arch=arch), 0x00000001, "bf16 subnormal product")


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_f32_overflow_under_truncation(arch):
    """bf16: 2**64 * 2**63 twice is 2**128: inf even though the result is truncated. c = the largest
    f32 plus 1.0: truncation keeps the largest f32 (0x7F7FFFFF). Source: docs/hardware-model.md §4."""
    big_a, big_b = bf16(2.0 ** 64), bf16(2.0 ** 63)
    check(dot([big_a, big_a], [big_b, big_b], 0, ab="bf16", arch=arch), F32_INF, "2**127 + 2**127")
    check(dot([bf16(-(2.0 ** 64))] * 2, [big_b] * 2, 0, ab="bf16", arch=arch), F32_INF | 0x80000000, "-2**128")
    check(dot([f16(1.0)], [f16(1.0)], 0x7F7FFFFF, arch=arch), 0x7F7FFFFF, "max f32 + 1")


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_f16_rounding_and_overflow(arch):
    """f16 output is rounded to nearest even: 65504 + 16 -> inf, 65504 + 15 -> 65504; 1 + 2**-11 is
    a tie -> 1.0 (even); 1 + 2**-10 + 2**-11 -> 1 + 2**-9; 1 + 2**-11 + 2**-20 -> 1 + 2**-10."""
    c = f16(65504.0)
    check(dot([f16(4.0)], [f16(4.0)], c, cd="f16", arch=arch), F16_INF, "65504 + 16", "f16")
    check(dot([f16(3.0)], [f16(5.0)], c, cd="f16", arch=arch), c, "65504 + 15", "f16")
    check(dot([f16(-4.0)], [f16(4.0)], c | 0x8000, cd="f16", arch=arch), F16_INF | 0x8000, "-65504 - 16", "f16")
    half_ulp = [f16(2 ** -6)], [f16(2 ** -5)]
    check(dot(*half_ulp, f16(1.0), cd="f16", arch=arch), f16(1.0), "tie to even (down)", "f16")
    check(dot(*half_ulp, f16(1 + 2 ** -10), cd="f16", arch=arch), f16(1 + 2 ** -9), "tie to even (up)", "f16")
    check(dot([f16(2 ** -6), f16(2 ** -10)], [f16(2 ** -5), f16(2 ** -10)], f16(1.0), cd="f16", arch=arch),
          f16(1 + 2 ** -10), "above the tie", "f16")


def test_sm80_f16_block_rounding():
    """sm80 rounds the first block to f16 before the second: k0: 1 * 1, k1: 2**-11 (a tie at 1.0:
    -> 1.0), k8: 2**-11 (again a tie at 1.0 -> 1.0): 1.0. sm90 sums both: 1 + 2**-10 exactly.
    No hardware vectors exercise sm80's second block (MMA-Sim split-k; Khattak & Mikaitis fma=8)."""
    a = [f16(1.0), f16(2 ** -6)] + [0] * 6 + [f16(2 ** -6)]
    b = [0, f16(2 ** -5)] + [0] * 6 + [f16(2 ** -5)]
    check(dot(a, b, f16(1.0), cd="f16", arch="sm80"), f16(1.0), "sm80 two f16 roundings", "f16")
    check(dot(a, b, f16(1.0), cd="f16", arch="sm90"), f16(1 + 2 ** -10), "sm90 one rounding", "f16")


def test_ez_cases_depend_on_the_floor():
    """The two EZ cases above change when the floor is removed (a model with EZ = -1000): the
    tests can fail, and the floor, not another rule, decides them."""
    from dataclasses import replace

    from warpsim.isa import SM90
    no_floor = replace(SM90, name="sm90-no-floor", ez_f32=-1000, ez_f16=-1000)
    a = [bf16((1 + 2 ** -7) * 2 ** -74), bf16(-(1 + 2 ** -7) * 2 ** -75)]
    b = [bf16(2 ** -74), bf16((1 + 2 ** -7) * 2 ** -74)]
    check(dot(a, b, 0, ab="bf16", arch=no_floor), 0, "f32 case without the floor")
    a = [f16(1.5 * 2 ** -12), f16((1 + 2 ** -9) * 2 ** -13), f16(-(1 + 2 ** -10) * 2 ** -13)]
    b = [f16(2 ** -12), f16(2 ** -14), f16((1 + 2 ** -10) * 2 ** -14)]
    check(dot(a, b, 0, cd="f16", arch=no_floor), 0x0001, "f16 case without the floor", "f16")


# (arch, e, want): t1 = -2**e sits on the architecture's last kept bit at the floor, or just below it
@pytest.mark.parametrize("arch,e,want", [("sm90", -158, 0x1), ("sm90", -157, 0x1), ("sm80", -158, 0x2),
                                         ("sm80", -157, 0x2), ("sm80", -156, 0x1)])
def test_ez_floor_f32_unit_per_arch(arch, e, want):
    """bf16, c = 0: t0 = 2**-148, t1 = -2**e; both below every EZ, so emax = EZ and terms keep bits
    down to 2**(EZ - F): 2**-158 on sm90 (-133 - 25), 2**-156 on sm80 (-132 - 24). A kept t1 makes
    the sum 2**-148 - 2**e truncate to 2**-149 (0x1); a dropped one leaves 2**-148 (0x2). sm90 with
    EZ = -132 or F = 24 would drop 2**-158; sm80 with EZ = -133 or F = 25 would keep 2**-157
    (tests/isa/test_evidence_classes.py counts such cases on random inputs)."""
    a = [bf16(2 ** -74), bf16(-(2.0 ** (e + 79)))]
    b = [bf16(2 ** -74), bf16(2 ** -79)]
    check(dot(a, b, 0, ab="bf16", arch=arch), want, f"EZ floor f32 unit under {arch}, t1 = -2**{e}")


@pytest.mark.parametrize("arch,e,want", [("sm90", -46, 0x0001), ("sm90", -45, 0x0001), ("sm80", -46, 0x0002),
                                         ("sm80", -45, 0x0002), ("sm80", -44, 0x0001)])
def test_ez_floor_f16_unit_per_arch(arch, e, want):
    """f16 output, c = 0: t0 = 1.5 * 2**-24 (an RNE tie of f16 subnormals), t1 = -2**e. At the floor
    terms keep bits down to 2**(EZ - F): 2**-46 on sm90 (-21 - 25), 2**-44 on sm80 (-20 - 24). A
    kept t1 puts the sum below the tie: 2**-24 (0x0001); a dropped one leaves the tie, which rounds
    to even: 0x0002. sm90 with EZ = -20 or F = 24 would drop 2**-46; sm80 with EZ = -21 or F = 25
    would keep 2**-45."""
    a = [f16(1.5 * 2 ** -12), f16(-(2.0 ** (e + 24)))]
    b = [f16(2 ** -12), f16(2 ** -24)]
    check(dot(a, b, 0, cd="f16", arch=arch), want, f"EZ floor f16 unit under {arch}, t1 = -2**{e}", "f16")
