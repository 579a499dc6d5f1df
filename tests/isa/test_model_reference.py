"""The Numba kernel against a second, independent implementation of the model written with exact
rationals (``fractions.Fraction``) straight from docs/hardware-model.md §4, on every input class.

The hardware is the outside truth (test_conformance.py, and the GPU campaigns); this test checks that
the fast integer kernel computes the model as stated for the inputs the vectors do not reach
(zeros, specials, subnormals, overflow, ties, sm80's second block, the evidence classes).

The reference takes its parameters from its own table, ``PARAMS``, written from the sources, never
from the code under test; ``test_reference_table_is_the_isa_table`` fails when either side changes.
"""

import zlib
from collections import namedtuple
from fractions import Fraction

import numpy as np
import pytest

from warpsim.isa import ARCHS, MMA_FRAGMENTS, from_fragment, mma_m16n8k8, mma_m16n8k16
from warpsim.isa.arith import PARAMETERS
from warpsim.isa.inputs import EVIDENCE_CLASSES, MMA_CLASSES, mma_inputs

# carry: the format in which a block of 8's result becomes the next block's c: "output" (the model,
# both architectures' sources) or "f32" (an alternative for f16 output, only for evidence tests)
Params = namedtuple("Params", "block frac_bits ez_f32 ez_f16 source carry", defaults=("output",))

# The model's numbers per architecture, from the sources (not from warpsim.isa):
PARAMS = {
    "sm80": Params(
        block=8, frac_bits=24, ez_f32=-132, ez_f16=-20,
        source="Khattak & Mikaitis arXiv 2512.07004, A100TC.m (fma=8, min_exp_limit -132 / -20), checked "
               "against their A100 and L40S vectors (k = 0..7 only); MMA-Sim arXiv 2511.10909 (Ampere: "
               "24 fraction bits, k16 as two halves). No hardware run here: the block split, the floor "
               "and F beyond the vectors are unproven for sm80."),
    "sm90": Params(
        block=16, frac_bits=25, ez_f32=-133, ez_f16=-21,
        source="Khattak & Mikaitis arXiv 2512.07004, H100TC.m (fma=16, min_exp_limit -133 / -21) and "
               "their H100/H200 vectors; MMA-Sim arXiv 2511.10909 (Hopper: 25 fraction bits); the H200 "
               "evidence campaign (conformance/h200/h200-mma-evidence.json): every neighbour value "
               "disagrees with the GPU, see docs/evidence.md."),
}
CLASSES = MMA_CLASSES + tuple(EVIDENCE_CLASSES)

FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23)}


def ref_decode(bits, fmt):
    """('nan', 0) / ('inf', sign) / (Fraction value, sign)."""
    eb, fb = FORMATS[fmt]
    sign = (bits >> (eb + fb)) & 1
    e = (bits >> fb) & ((1 << eb) - 1)
    f = bits & ((1 << fb) - 1)
    bias = (1 << (eb - 1)) - 1
    if e == (1 << eb) - 1:
        return ("nan", 0) if f else ("inf", sign)
    mag = Fraction(f, 1 << fb) * Fraction(2) ** (1 - bias) if e == 0 else \
        Fraction((1 << fb) + f, 1 << fb) * Fraction(2) ** (e - bias)
    return (-mag if sign else mag), sign


def floor_log2(x):
    """floor(log2(x)) of a positive Fraction."""
    n, d = x.numerator, x.denominator
    e = n.bit_length() - d.bit_length()
    return e if Fraction(2) ** e <= x else e - 1


def exponent(x, fmt):
    """Exponent of the leading position: floor(log2|x|), at least the format's emin."""
    eb, _ = FORMATS[fmt]
    return max(floor_log2(abs(x)), 2 - (1 << (eb - 1)))


def ref_round(v, fmt, mode):
    """Bits of the Fraction v rounded (mode 'rz' or 'rne'); zero results are +0."""
    eb, fb = FORMATS[fmt]
    bias = (1 << (eb - 1)) - 1
    if v == 0:
        return 0
    sign = 1 if v < 0 else 0
    a = abs(v)
    e = max(floor_log2(a), 1 - bias)
    scaled = a / Fraction(2) ** (e - fb)
    m = int(scaled) if mode == "rz" else round(scaled)   # Fraction.__round__: ties to even
    if m == 0:
        return 0
    if m >= 2 << fb:
        m //= 2
        e += 1
    top = ((1 << eb) - 1) << fb
    if m < (1 << fb):
        return (sign << (eb + fb)) | m
    if e + bias >= (1 << eb) - 1:
        return (sign << (eb + fb)) | top
    return (sign << (eb + fb)) | ((e + bias) << fb) | (m - (1 << fb))


def ref_block(avals, bvals, c_bits, ab, cd, params, out=None):
    """One block's result bits in format ``out`` (default ``cd``, the format of ``c_bits``)."""
    out = out or cd
    eb, fb = FORMATS[out]
    nan_bits = 0x7FFFFFFF if out == "f32" else 0x7FFF
    inf_bits = ((1 << eb) - 1) << fb
    c, c_sign = ref_decode(c_bits, cd)
    nan, pinf, ninf = c == "nan", c == "inf" and not c_sign, c == "inf" and c_sign
    for x, y in zip(avals, bvals):
        (vx, sx), (vy, sy) = ref_decode(x, ab), ref_decode(y, ab)
        if "nan" in (vx, vy):
            nan = True
        elif "inf" in (vx, vy):
            if vx == 0 or vy == 0:
                nan = True
            elif sx ^ sy:
                ninf = True
            else:
                pinf = True
    if nan or (pinf and ninf):
        return nan_bits
    if pinf or ninf:
        return inf_bits | ((1 << (eb + fb)) if ninf else 0)
    terms = []   # (value, exponent) of the non-zero terms
    for x, y in zip(avals, bvals):
        vx, vy = ref_decode(x, ab)[0], ref_decode(y, ab)[0]
        if vx != 0 and vy != 0:
            terms.append((vx * vy, exponent(vx, ab) + exponent(vy, ab)))
    if c != 0:
        terms.append((c, exponent(c, cd)))
    ez = params.ez_f32 if out == "f32" else params.ez_f16
    emax = max([ez] + [e for _, e in terms])
    unit = Fraction(2) ** (emax - params.frac_bits)
    total = 0
    for v, _ in terms:
        t = int(abs(v) / unit)          # truncation toward zero of the magnitude
        total += -t if v < 0 else t
    return ref_round(total * unit, out, "rz" if out == "f32" else "rne")


def ref_dot(avals, bvals, c_bits, ab, cd, params):
    """One output's bits under ``params`` (a ``Params``, or anything with its fields)."""
    k = len(avals)
    step = min(params.block, k)
    fmt = cd
    for k0 in range(0, k, step):
        last = k0 + step >= k
        out = cd if last or params.carry == "output" else params.carry
        c_bits = ref_block(avals[k0:k0 + step], bvals[k0:k0 + step], c_bits, ab, fmt, params, out)
        fmt = out
    return c_bits


def ref_mma(a, b, c, shape, ab, cd, params):
    """``D`` matrices ``[count, 16, 8]`` of the reference model for PTX fragments ``a, b, c``."""
    A = from_fragment(MMA_FRAGMENTS[(shape, "A")], a)
    B = from_fragment(MMA_FRAGMENTS[(shape, "B")], b)
    C = from_fragment(MMA_FRAGMENTS[(shape, f"C.{cd}")], c)
    D = np.zeros(C.shape, np.int64)
    for i in range(C.shape[0]):
        for m in range(16):
            for n in range(8):
                D[i, m, n] = ref_dot([int(x) for x in A[i, m]], [int(x) for x in B[i, :, n]], int(C[i, m, n]),
                                     ab, cd, params)
    return D


def test_reference_table_is_the_isa_table():
    """Each architecture's numbers in warpsim.isa equal this file's table: a changed constant on either
    side fails here (and the kernel-vs-reference tests then say which outputs move)."""
    assert sorted(PARAMS) == sorted(ARCHS)
    for name, params in PARAMS.items():
        model = ARCHS[name]
        for field in PARAMETERS:
            assert getattr(model, field) == getattr(params, field), (
                f"{name}.{field}: warpsim.isa has {getattr(model, field)}, the reference table "
                f"{getattr(params, field)} ({params.source})")


def compare(cls, count, shape, ab, cd, arch, seed):
    rng = np.random.default_rng(seed)
    a, b, c = mma_inputs(cls, count, shape=shape, ab=ab, cd=cd, rng=rng)
    run = mma_m16n8k16 if shape == "m16n8k16" else mma_m16n8k8
    d = run(a, b, c, ab=ab, cd=cd, arch=arch)
    A = from_fragment(MMA_FRAGMENTS[(shape, "A")], a)
    B = from_fragment(MMA_FRAGMENTS[(shape, "B")], b)
    cmap = MMA_FRAGMENTS[(shape, f"C.{cd}")]
    C, D = from_fragment(cmap, c), from_fragment(cmap, d)
    params = PARAMS[arch]
    for i in range(count):
        for m in range(16):
            for n in range(8):
                want = ref_dot([int(x) for x in A[i, m]], [int(x) for x in B[i, :, n]], int(C[i, m, n]),
                               ab, cd, params)
                got = int(D[i, m, n])
                assert got == want, (
                    f"{cls} {shape} {ab}->{cd} {arch} entry {i} (m={m}, n={n}), lane/reg of D "
                    f"{divmod(int(cmap.src[m, n]) // cmap.halves, cmap.regs)}: expected {want:#x}, got {got:#x}; "
                    f"a={[hex(int(x)) for x in A[i, m]]} b={[hex(int(x)) for x in B[i, :, n]]} c={int(C[i, m, n]):#x}")


COMBOS = [("f16", "f32"), ("bf16", "f32"), ("f16", "f16")]


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("ab,cd", COMBOS)
@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_kernel_matches_reference_model(cls, ab, cd, arch):
    seed = zlib.crc32(f"{cls} {ab} {cd} {arch}".encode())
    compare(cls, 1, "m16n8k16", ab, cd, arch, seed=seed)
    compare(cls, 1, "m16n8k8", ab, cd, arch, seed=seed + 1)


@pytest.mark.slow
@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("ab,cd", COMBOS)
@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_kernel_matches_reference_model_campaign(cls, ab, cd, arch):
    compare(cls, 20, "m16n8k16", ab, cd, arch, seed=12345)
    compare(cls, 10, "m16n8k8", ab, cd, arch, seed=54321)
