"""Hardware vectors of Khattak & Mikaitis (arXiv 2512.07004): A100/L40S under sm80, H100/H200 under sm90.

Each line is one dot product, run as one mma output element: the K products at k = 0..K-1 of row 0
of A and column 0 of B (zeros elsewhere), c at C[0, 0], placed through the PTX fragment maps
(``warpsim.isa.mma_dot``). For fp16 output c is first rounded to fp16 (nearest even), as the data's
README says, and the fp16 result is compared after widening to float32.
"""

from pathlib import Path

import numpy as np
import pytest

from warpsim.isa import cvt_f32_to_16, mma_dot
from warpsim.isa.floats import f16_bits_to_float, f32_bits_to_float

VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "khattak-mikaitis" / "vectors.npz"
GPU_ARCH = {"A100": "sm80", "L40S": "sm80", "H100": "sm90", "H200": "sm90"}
CASES = [(gpu, kind, out) for gpu in GPU_ARCH for kind, outs in (("fp16", ("fp32", "fp16")), ("bf16", ("fp32",)))
         for out in outs]


@pytest.fixture(scope="module")
def vectors():
    with np.load(VECTORS) as data:
        return {k: data[k] for k in data.files}


def widen_f16(bits):
    """f16 bits -> the f32 bits of the same value (exact), as the data files store f16 results."""
    return bits.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32)


def run(vectors, gpu, kind, out, arch):
    key = f"{gpu}_{kind}"
    a, b, c = vectors[f"{key}_a"], vectors[f"{key}_b"], vectors[f"{key}_c"]
    ab = "f16" if kind == "fp16" else "bf16"
    cd = "f32" if out == "fp32" else "f16"
    if cd == "f16":
        c = np.array([cvt_f32_to_16(int(x), 0) for x in c], np.uint32)
    d = mma_dot(a.astype(np.uint32), b.astype(np.uint32), c, ab=ab, cd=cd, arch=arch)
    return (widen_f16(d) if cd == "f16" else d), vectors[f"{key}_{out}_d"]


def describe(vectors, gpu, kind, out, got, want, i):
    key = f"{gpu}_{kind}"
    return (f"{gpu} {kind}->{out} line {i}: a={[hex(x) for x in vectors[key + '_a'][i]]} "
            f"b={[hex(x) for x in vectors[key + '_b'][i]]} c={int(vectors[key + '_c'][i]):#010x}: "
            f"expected {int(want[i]):#010x} ({f32_bits_to_float(want[i])!r}), "
            f"got {int(got[i]):#010x} ({f32_bits_to_float(got[i])!r})")


@pytest.mark.parametrize("gpu,kind,out", CASES)
def test_zero_mismatches_on_own_arch(vectors, gpu, kind, out):
    got, want = run(vectors, gpu, kind, out, GPU_ARCH[gpu])
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} of {want.size} mismatch; first: "
                           + describe(vectors, gpu, kind, out, got, want, bad[0]))


@pytest.mark.parametrize("gpu,kind,out", [c for c in CASES if c[2] == "fp32"])
def test_other_arch_mismatches(vectors, gpu, kind, out):
    """The data tells the models apart: every f32-output file disagrees with the other arch's model."""
    other = "sm90" if GPU_ARCH[gpu] == "sm80" else "sm80"
    got, want = run(vectors, gpu, kind, out, other)
    assert (got != want).sum() > 100, f"{gpu} {kind}->{out} under {other}: only {(got != want).sum()} mismatches"


def test_vectors_are_nontrivial(vectors):
    """A guard against an empty or all-zero conversion: 5000 lines per set, results spread widely."""
    d = vectors["H200_fp16_fp32_d"]
    assert d.shape == (5000,) and np.unique(d).size > 4000
    assert abs(f16_bits_to_float(int(vectors["A100_fp16_a"][0, 0])) - 0.9791) < 1e-3
