"""The evidence classes discriminate: with one model parameter moved to a neighbour value, a good
share of their outputs change bits (so a hardware run of the class rules that value out).

For each class, parameter and architecture, the kernel runs the model and each neighbour variant
(``warpsim.isa.arith.neighbours``) on the same inputs; at least ``MIN_SHARE`` of the outputs must
differ. Two variants the kernel cannot compute go through the exact-fraction reference of
``test_model_reference.py`` instead: sm90's ``frac_bits = 26`` (beyond the kernel's int32 sums) and
sm80's first block carried as f32 rather than rounded to f16.
"""

import numpy as np
import pytest

from test_model_reference import PARAMS, ref_mma
from warpsim.isa import ARCHS, mma_m16n8k8, mma_m16n8k16
from warpsim.isa.arith import PARAMETERS, neighbours
from warpsim.isa.inputs import EVIDENCE_CLASSES, mma_inputs, mma_matrices

MIN_SHARE = 0.03    # of the outputs that must change under a neighbour value
COUNT = 50          # instructions per check: 6,400 outputs
RUN = {"m16n8k16": mma_m16n8k16, "m16n8k8": mma_m16n8k8}

COMBOS = [("f16", "f32"), ("bf16", "f32"), ("f16", "f16")]
# (class, parameter) -> the (shape, ab, cd) on which the class must discriminate the parameter.
# The floor of f32 output cannot act with f16 inputs (products >= 2**-48 > 2**-133): bf16 only.
# The block size shows only in m16n8k16 (m16n8k8 is one block of 8 on every architecture).
CHECKS = {
    ("frac-bits", "frac_bits"): [(s, ab, cd) for s in RUN for ab, cd in COMBOS],
    ("block", "block"): [("m16n8k16", ab, cd) for ab, cd in COMBOS],
    ("floor", "ez_f32"): [(s, "bf16", "f32") for s in RUN],
    ("floor", "ez_f16"): [(s, "f16", "f16") for s in RUN],
}


def _share_changed(cls, shape, ab, cd, base, variant, count=COUNT, seed=7):
    a, b, c = mma_inputs(cls, count, shape=shape, ab=ab, cd=cd, rng=np.random.default_rng(seed))
    run = RUN[shape]
    return float((run(a, b, c, ab=ab, cd=cd, arch=base) != run(a, b, c, ab=ab, cd=cd, arch=variant)).mean())


def test_every_parameter_has_a_class():
    covered = {p for params in EVIDENCE_CLASSES.values() for p in params}
    assert covered == set(PARAMETERS)
    assert {(cls, p) for cls, params in EVIDENCE_CLASSES.items() for p in params} == set(CHECKS)


@pytest.mark.parametrize("arch", sorted(ARCHS))
@pytest.mark.parametrize("cls, parameter", sorted(CHECKS))
def test_class_separates_its_parameters_neighbours(cls, parameter, arch):
    base = ARCHS[arch]
    variants = neighbours(base, [parameter])
    assert variants, f"{arch}: no computable neighbour of {parameter}"
    for shape, ab, cd in CHECKS[(cls, parameter)]:
        for name, variant in variants.items():
            share = _share_changed(cls, shape, ab, cd, base, variant)
            assert share >= MIN_SHARE, (f"class {cls} {shape} {ab}.{cd} under {arch}: {name} changes "
                                        f"{share:.1%} of the outputs, want >= {MIN_SHARE:.0%}")


def test_sm90_frac_bits_26_through_the_reference():
    """The kernel cannot run F = 26 with blocks of 16; the exact reference can, on fewer outputs."""
    assert "frac_bits=26" not in neighbours(ARCHS["sm90"], ["frac_bits"])
    wide = PARAMS["sm90"]._replace(frac_bits=26)
    for shape, ab, cd in [("m16n8k16", "f16", "f32"), ("m16n8k16", "f16", "f16")]:
        a, b, c = mma_inputs("frac-bits", 8, shape=shape, ab=ab, cd=cd, rng=np.random.default_rng(3))
        base = ref_mma(a, b, c, shape, ab, cd, PARAMS["sm90"])
        share = float((base != ref_mma(a, b, c, shape, ab, cd, wide)).mean())
        assert share >= MIN_SHARE, f"frac-bits {shape} {ab}.{cd}: F = 26 changes {share:.1%} of the outputs"


def test_sm80_rounding_between_blocks_through_the_reference():
    """sm80 rounds the first block of 8 to the output format before k = 8..15. The other choice for
    f16 output, carrying the first block's result as f32 (``carry="f32"``, computed by the exact
    reference: the kernel has no such option), changes the block class's bits."""
    carried = PARAMS["sm80"]._replace(carry="f32")
    a, b, c = mma_inputs("block", 8, ab="f16", cd="f16", rng=np.random.default_rng(4))
    base = ref_mma(a, b, c, "m16n8k16", "f16", "f16", PARAMS["sm80"])
    share = float((base != ref_mma(a, b, c, "m16n8k16", "f16", "f16", carried)).mean())
    assert share >= MIN_SHARE, f"block m16n8k16 f16.f16: an f32 carry changes {share:.1%} of the outputs"


INF_EXP = {"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000}   # exponent field all ones: inf or NaN


@pytest.mark.parametrize("cls", sorted(EVIDENCE_CLASSES))
def test_classes_are_finite_and_reproducible(cls):
    for ab, cd in COMBOS:
        a, b, c = mma_matrices(cls, 20, ab=ab, cd=cd, rng=np.random.default_rng(1))
        for x, fmt in ((a, ab), (b, ab), (c, cd)):
            assert not np.any(x & INF_EXP[fmt] == INF_EXP[fmt]), f"{cls} {ab}.{cd}: an inf or NaN input"
        again = mma_matrices(cls, 20, ab=ab, cd=cd, rng=np.random.default_rng(1))
        assert all(np.array_equal(p, q) for p, q in zip((a, b, c), again))
