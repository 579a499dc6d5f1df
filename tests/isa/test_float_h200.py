"""Float facts measured on the H200 that PTX leaves open, pinned with the measured bits.

Source of every pair below: H200, hwcheck campaign --instr float, 2026-12-01 (``--count 20000`` over
all forms, then ``--count 4096`` per form and class with the inputs of the mismatching lanes kept).
"GPU" pairs are mismatch records of that run: an input and the bits the H200 wrote where warpsim's
model then differed. "matched" pairs are lanes of the same runs where the model already agreed; they
pin the side of each rule that must not move. Each rule and its evidence: docs/numerics.md.
"""

import numpy as np
import pytest

from warpsim.isa.cvt import cvt_convert
from warpsim.isa.fpbatch import float_arith, float_setp, float_sign, float_testp


def _u32(*xs):
    return np.array(xs, np.uint32)


# ---- abs/neg of a NaN: the canonical NaN, per 16-bit half on x2 types -------------------------------

SIGN_NAN = [   # (op, ftz, type, input, GPU)
    ("abs", False, "f32", 0x7FB05A3B, 0x7FFFFFFF), ("abs", False, "f32", 0xFFFB0777, 0x7FFFFFFF),
    ("abs", False, "f32", 0xFF800001, 0x7FFFFFFF), ("abs", False, "f32", 0x7FC00000, 0x7FFFFFFF),
    ("neg", False, "f32", 0x7FAB7A16, 0x7FFFFFFF), ("neg", False, "f32", 0xFF800001, 0x7FFFFFFF),
    ("neg", False, "f32", 0x7FC00000, 0x7FFFFFFF),
    ("abs", True, "f32", 0xFFDC494B, 0x7FFFFFFF), ("neg", True, "f32", 0x7FF76DD3, 0x7FFFFFFF),
    ("neg", True, "f32", 0x7FFFFFFF, 0x7FFFFFFF),
    ("abs", False, "f16", 0xFD6A, 0x7FFF), ("abs", False, "f16", 0x7C01, 0x7FFF), ("abs", False, "f16", 0xFE00, 0x7FFF),
    ("neg", False, "f16", 0xFF08, 0x7FFF), ("neg", False, "f16", 0x7E00, 0x7FFF),
    ("abs", False, "bf16", 0xFFA3, 0x7FFF), ("abs", False, "bf16", 0x7F81, 0x7FFF),
    ("neg", False, "bf16", 0x7FC0, 0x7FFF), ("neg", False, "bf16", 0xFFC0, 0x7FFF),
    ("abs", False, "f16x2", 0x7D704AC7, 0x7FFF4AC7), ("abs", False, "f16x2", 0x09F87ED4, 0x09F87FFF),
    ("abs", False, "f16x2", 0xFFFF7E00, 0x7FFF7FFF),
    ("neg", False, "f16x2", 0x589AFFD3, 0xD89A7FFF), ("neg", False, "f16x2", 0x7E000000, 0x7FFF8000),
    ("neg", False, "f16x2", 0xFE00FE00, 0x7FFF7FFF),
    ("abs", False, "bf16x2", 0xFFF105AA, 0x7FFF05AA), ("abs", False, "bf16x2", 0x807FFF81, 0x007F7FFF),
    ("neg", False, "bf16x2", 0x7FDCB82A, 0x7FFF382A), ("neg", False, "bf16x2", 0x80007F81, 0x00007FFF),
]


@pytest.mark.parametrize("op, ftz, t, a, gpu", SIGN_NAN)
def test_abs_neg_of_nan_is_canonical(op, ftz, t, a, gpu):
    got = int(float_sign(op, _u32(a), type=t, ftz=ftz)[0])
    assert got == gpu, f"{op}{'.ftz' if ftz else ''}.{t} {a:#x}: H200 {gpu:#x}, model {got:#x}"


def test_abs_neg_of_numbers_only_touch_the_sign():
    # matched: every non-NaN lane of the runs above
    assert int(float_sign("neg", _u32(0x7F800000))[0]) == 0xFF800000
    assert int(float_sign("abs", _u32(0x80000001), ftz=True)[0]) == 0
    assert int(float_sign("neg", _u32(0x3C008001), type="f16x2")[0]) == 0xBC000001


# ---- .ftz on fma: tininess after rounding, with an unbounded exponent --------------------------------

FMA_FTZ = [   # (type, a, b, c, H200): a*b+c
    # GPU: -2**-126 + 2**-150.6 rounds to -2**-126 in the subnormal grid, but to 2**-126 (1 - 2**-24.6)
    # with full precision: tiny, flushed
    ("f32", 0x0158583B, 0x324ADDB4, 0x80800000, 0x80000000),
    # matched: -2**-126 + 2**-199 and 2**-126 - 2**-152.2 round to the smallest normal at full precision
    ("f32", 0x80800000, 0x9AFD5D9F, 0x80800000, 0x80800000),
    ("f32", 0xA1E79934, 0x10F16C98, 0x00800000, 0x00800000),
    # GPU: f16 likewise
    ("f16", 0x2420, 0x8400, 0x0410, 0x0000),
    ("f16", 0x3569, 0x86C3, 0x0649, 0x0000),
    ("f16x2", 0x3C018F9F, 0x76A50400, 0xE6BE0400, 0x763B0000),
    # matched: -2**-14 + 2**-26.3: not tiny at full precision
    ("f16", 0x8A84, 0x8400, 0x8400, 0x8400),
]


@pytest.mark.parametrize("t, a, b, c, gpu", FMA_FTZ)
def test_fma_ftz_flushes_what_is_tiny_after_rounding(t, a, b, c, gpu):
    got = int(float_arith("fma", _u32(a), _u32(b), _u32(c), type=t, ftz=True)[0])
    assert got == gpu, f"fma.rn.ftz.{t} {a:#x} {b:#x} {c:#x}: H200 {gpu:#x}, model {got:#x}"


@pytest.mark.parametrize("parallel", [True, False])
def test_fma_ftz_host_path_agrees(parallel):
    # fma.rn.ftz.f32 runs through the host's binary32 fma; the smallest normal goes to the integer model
    a, b, c = (_u32(*[r[i] for r in FMA_FTZ if r[0] == "f32"]) for i in (1, 2, 3))
    want = [r[4] for r in FMA_FTZ if r[0] == "f32"]
    assert float_arith("fma", a, b, c, ftz=True, parallel=parallel).tolist() == want
    assert float_arith("fma", a, b, c, ftz=True, sat=True, parallel=parallel).tolist() == [0, 0, 0x00800000]


def test_mul_ftz_follows_the_same_rule():
    # not measured (no campaign lane met the case): mul shares fma's model. (1 - 2**-24) * 2**-126 is a
    # tie in the subnormal grid that rounds to 2**-126, but exact at full precision below it: tiny
    a, b = _u32(0x3F7FFFFF, 0xBF7FFFFF), _u32(0x00800000, 0x00800000)
    for parallel in (True, False):
        assert float_arith("mul", a, b, ftz=True, parallel=parallel).tolist() == [0, 0x80000000]
        assert float_arith("mul", a, b, parallel=parallel).tolist() == [0x00800000, 0x80800000]
        assert float_arith("mul", a, b, rnd="rz", ftz=True, parallel=parallel).tolist() == [0, 0x80000000]


# ---- setp on x2 types: p from the lower halves ---------------------------------------------------------

SETP_X2 = [   # (cmp, a, b, H200 as the campaign kernel writes it: 2 * p + q)
    ("lt", 0xDC3D2695, 0x69B7A974, 1),    # lower: positive < negative false (p); upper: negative < positive (q)
    ("eq", 0x04008400, 0x8FB28400, 2),    # lower halves equal
    ("nan", 0xB7CCFEAB, 0x3C152E0B, 2),   # a NaN in the lower halves
    ("ltu", 0xFC00486F, 0x7BFF8001, 1),   # upper -inf < 65504
]


@pytest.mark.parametrize("cmp, a, b, gpu", SETP_X2)
def test_setp_f16x2_p_is_the_lower_halves(cmp, a, b, gpu):
    p, q = float_setp(cmp, _u32(a), _u32(b), type="f16x2")[0]
    assert 2 * int(p) + int(q) == gpu, f"setp.{cmp}.f16x2 {a:#x} {b:#x}: H200 2p+q = {gpu}, model p={p} q={q}"


# ---- testp.normal of a zero: true ------------------------------------------------------------------------

def test_testp_normal_is_true_for_zeros():
    x = _u32(0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F800000, 0x7FC00000)
    # GPU: both zeros; matched: subnormals, infinities, NaNs false, normals true
    assert float_testp("normal", x).tolist() == [True, True, False, False, True, False, False]
    assert float_testp("subnormal", x).tolist() == [False, False, True, True, False, False, False]


# ---- cvt: NaNs that keep their bits, 64-bit integers from a NaN ------------------------------------------

def test_cvt_f32_bf16_keeps_the_nan():
    x = _u32(0xFFB8, 0xFFAD, 0x7FC0, 0xFF81)   # GPU (0xffb8, 0xff81: signalling, not quietened)
    got = cvt_convert(x, dst="f32", src="bf16", rnd="rn").tolist()
    assert got == [0xFFB80000, 0xFFAD0000, 0x7FC00000, 0xFF810000]


TF32_NAN = [   # (input, H200 .rna, H200 .rna.satfinite)
    (0xFF989315, 0xFF988000, None), (0xFFEAC6C6, 0xFFEAC000, None), (0x7FFFFFFF, 0x7FFFE000, 0x7FFFC000),
    (0x7FC00000, 0x7FC00000, 0x7FBFE000), (0xFF800001, 0xFF800000, 0xFF7FE000),
    (0xFFBE0D64, None, 0xFFBDE000), (0xFFE595C0, None, 0xFFE56000), (0x7F800001, None, 0x7F7FE000),
    (0xFFFFFFFF, None, 0xFFFFC000), (0xFFC00000, None, 0xFFBFE000),
]


@pytest.mark.parametrize("x, rna, satfinite", TF32_NAN)
def test_cvt_rna_tf32_cuts_a_nan(x, rna, satfinite):
    for want, sf in ((rna, False), (satfinite, True)):
        if want is not None:
            got = int(cvt_convert(_u32(x), dst="tf32", src="f32", rnd="rna", satfinite=sf)[0])
            assert got == want, f"cvt.rna{'.satfinite' if sf else ''}.tf32.f32 {x:#x}: H200 {want:#x}, model {got:#x}"


@pytest.mark.parametrize("dst, rnd", [("s64", "rni"), ("u64", "rzi")])
def test_cvt_nan_to_64_bit_integer(dst, rnd):
    x = _u32(0x7F911E6B, 0x7FDDFF37, 0x7F800001, 0xFFFFFFFF, 0xFFF9CE2B, 0xFFC00000,   # GPU
             0x7F800000, 0xFF800000, 0x3F000000)                                     # matched
    got = cvt_convert(x, dst=dst, src="f32", rnd=rnd).tolist()
    inf = [0x7FFFFFFFFFFFFFFF, 0x8000000000000000] if dst == "s64" else [0xFFFFFFFFFFFFFFFF, 0]
    assert got == [0x8000000000000000] * 6 + inf + [0]
    assert cvt_convert(x[:1], dst="s32", src="f32", rnd=rnd).tolist() == [0]   # matched: narrower ones give 0


# ---- H200, tests/ptx/test_ptx_float_gpu.py, 2026-12-01 (driver 580.159.04, the PTX loaded by the driver) ----

@pytest.mark.parametrize("rnd, x, gpu", [("rm", 0x807FFFFF, 0x8001), ("rp", 0x007FFFFF, 0x0001),
                                         ("rm", 0x80000001, 0x8001), ("rp", 0x00000001, 0x0001)])
def test_cvt_ftz_to_f16_flushes_nothing(rnd, x, gpu):
    """``.ftz`` on cvt f32 -> f16 leaves an f32 subnormal input as it is (the GPU's first differing lanes;
    the lanes the model changed, 22 for .rm and 18 for .rp, are exactly the H200's mismatches)."""
    got = int(cvt_convert(_u32(x), dst="f16", src="f32", rnd=rnd, ftz=True)[0])
    assert got == gpu, f"cvt.{rnd}.ftz.f16.f32 {x:#x}: H200 {gpu:#x}, model {got:#x}"


@pytest.mark.parametrize("rnd", ["rn", "rz"])
def test_cvt_ftz_to_f16_rn_rz_unchanged(rnd):
    """.rn/.rz: an f32 subnormal gives a zero of its sign with or without a flush (matched in the campaign)."""
    x = _u32(0x00000001, 0x807FFFFF, 0x80000001, 0x007FFFFF)
    assert cvt_convert(x, dst="f16", src="f32", rnd=rnd, ftz=True).tolist() == [0, 0x8000, 0x8000, 0]


def test_cvt_ftz_to_bf16_still_flushes_inputs():
    """cvt.rm.ftz.bf16.f32 and cvt.rp.ftz.bf16.f32 matched the flushing model on the H200 (same run)."""
    x = _u32(0x80000001, 0x00000001)
    assert cvt_convert(x, dst="bf16", src="f32", rnd="rm", ftz=True).tolist() == [0x8000, 0]
    assert cvt_convert(x, dst="bf16", src="f32", rnd="rp", ftz=True).tolist() == [0x8000, 0]


@pytest.mark.parametrize("rnd, relu", [("rn", False), ("rz", True), ("rz", False), ("rn", True)])
def test_cvt_rn_rz_tf32_of_a_nan_is_the_cut_canonical_nan(rnd, relu):
    """cvt.rn.tf32.f32 and cvt.rz.relu.tf32.f32: every NaN lane gave 0x7FFFE000 (first: 0xFFFFFFFF)."""
    x = _u32(0xFFFFFFFF, 0xFFC00000, 0x7F800001, 0x7FC00000, 0xFF800001, 0x7FFFFFFF)
    got = cvt_convert(x, dst="tf32", src="f32", rnd=rnd, relu=relu).tolist()
    assert got == [0x7FFFE000] * 6
