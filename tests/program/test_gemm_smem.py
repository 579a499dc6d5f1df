"""The seed's program end to end: its accumulator against the arithmetic model, bit for bit.

The expectation never comes from the warp machinery: ``gemm_reference`` applies the ISA's
tensor-core model (``warpsim.isa.arith.mma_tile``, itself checked against hardware vectors in
``tests/isa``) element by element, k-block after k-block in order, starting from +0. A match means
the global -> shared fill, the swizzled layouts, the ldmatrix addresses, the retile_D copy views,
the MMA views, the mma order and the store all put every element where it belongs.
"""

from pathlib import Path

import numpy as np
import pytest

from warpsim.cute import make_identity_tensor, warp_lanes
from warpsim.isa.inputs import MMA_CLASSES, mma_matrices
from warpsim.program import load_program
from warpsim.program.reference import gemm_reference
from warpsim.program.run import run_program

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gemm_smem.py"
CASES = [(dtype, product) for dtype in ("f16", "bf16") for product in ("qk", "pv")]


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


def adversarial_inputs(cls, dtype, product, seed):
    """Q (64x64) from 16 A matrices of input class ``cls``; K (n, k) or V (k, n) from 32 B matrices."""
    rng = np.random.default_rng(seed)
    a, b, _c = mma_matrices(cls, 48, k=16, ab=dtype, cd="f32", rng=rng)   # A [48,16,16], B [48,16,8]
    q = a[:16].reshape(4, 4, 16, 16).transpose(0, 2, 1, 3).reshape(64, 64)     # (m-block, k-block) tiles
    kn = b[16:].reshape(4, 8, 16, 8).transpose(0, 2, 1, 3).reshape(64, 64)     # (k, n): k-blocks x n-blocks
    second = kn.T if product == "qk" else kn                                    # K[n, k] or V[k, n]
    name = "k" if product == "qk" else "v"
    return {"q": q.astype(np.uint16), name: np.ascontiguousarray(second).astype(np.uint16)}


def expected_output(inputs, dtype, product, arch):
    b_nk = inputs["k"] if product == "qk" else inputs["v"].T
    return gemm_reference(inputs["q"], b_nk, ab=dtype, cd="f32", arch=arch, k_block=16)


def assert_equal_bits(where, want, got):
    bad = np.argwhere(want != got)
    if bad.size:
        m, n = bad[0]
        pytest.fail(f"{where}: {len(bad)} of {want.size} outputs differ; first S[{m}, {n}]: "
                    f"expected {int(want[m, n]):#010x}, got {int(got[m, n]):#010x}")


@pytest.mark.parametrize("arch", ["sm90", "sm80"])
@pytest.mark.parametrize("dtype,product", CASES)
def test_random_inputs_match_the_model(program, dtype, product, arch):
    for seed in (0, 1):
        r = run_program(program, {"dtype": dtype, "product": product}, seed=seed, arch=arch)
        out = "s" if product == "qk" else "o"
        assert r.outputs[out].shape == (64, 64) and r.outputs[out].dtype == np.uint32
        assert_equal_bits(f"{dtype} {product} {arch} seed {seed}",
                          expected_output(r.inputs, dtype, product, arch), r.outputs[out])


@pytest.mark.parametrize("arch", ["sm90", "sm80"])
@pytest.mark.parametrize("dtype,product", CASES)
def test_adversarial_inputs_match_the_model(program, dtype, product, arch):
    out = "s" if product == "qk" else "o"
    for k, cls in enumerate(MMA_CLASSES):
        inputs = adversarial_inputs(cls, dtype, product, seed=100 + k)
        r = run_program(program, {"dtype": dtype, "product": product}, inputs, arch=arch)
        assert_equal_bits(f"{dtype} {product} {arch} class {cls}", expected_output(inputs, dtype, product, arch),
                          r.outputs[out])


def test_random_inputs_are_finite_values_below_one(program):
    r = run_program(program, {"dtype": "f16"}, seed=3)
    q = r.inputs["q"].view(np.float16).astype(np.float64)
    assert np.isfinite(q).all() and (q >= -1).all() and (q < 1).all() and len(np.unique(q)) > 1000
    r = run_program(program, {"dtype": "bf16"}, seed=3)
    v = (r.inputs["q"].astype(np.uint32) << 16).view(np.float32)
    assert np.isfinite(v).all() and (v >= -1).all() and (v < 1).all()
    again = run_program(program, {"dtype": "bf16"}, seed=3)
    assert np.array_equal(again.inputs["q"], r.inputs["q"])       # default_rng(seed): reproducible


@pytest.mark.parametrize("dtype,product", CASES)
def test_accumulator_registers_hold_the_output(program, dtype, product):
    """acc's storage slot i of each thread holds element partition_C(identity)[i] of the output."""
    r = run_program(program, {"dtype": dtype, "product": product}, seed=5)
    out = r.outputs["s" if product == "qk" else "o"]
    acc = r.tensors["acc"]
    assert acc.shape == (128, 32) and acc.dtype == np.uint32
    traits = r.trace.program.fn.__globals__["kernel_traits"](dtype)
    for w in range(4):
        coords = traits.tiled_mma.get_slice(warp_lanes(w)).partition_C(make_identity_tensor((64, 64))).coord_table()
        for lane in range(32):
            t = 32 * w + lane
            m, n = coords[lane, :, 0], coords[lane, :, 1]      # fragment index i -> (m, n); slot i = index i
            if not np.array_equal(acc[t], out[m, n]):
                i = int(np.flatnonzero(acc[t] != out[m, n])[0])
                pytest.fail(f"thread {t} acc slot {i}: holds {int(acc[t, i]):#x}, output[{m[i]}, {n[i]}] is "
                            f"{int(out[m[i], n[i]]):#x}")


def test_instruction_counts(program):
    """4 warps: 8 global loads and shared stores, 20 ldmatrix.x4, 32 mma, 16 64-bit stores per warp."""
    r = run_program(program, {"dtype": "f16", "product": "qk"})
    assert r.stats.instructions == {
        "ld.global.v4.b32": 32, "st.shared.v4.b32": 32, "bar.sync": 4, "mov.b32": 32,
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16": 80,
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32": 128, "st.global.v2.b32": 64}
    r = run_program(program, {"dtype": "bf16", "product": "pv"})
    assert r.stats.instructions["ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"] == 64
