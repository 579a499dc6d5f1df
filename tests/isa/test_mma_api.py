"""The batched mma API: argument checks, shapes, batching, and the warp primitive agreeing with it."""

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from warpsim.isa import mma_m16n8k8, mma_m16n8k16, mma_params, new_fault, warp_mma
from warpsim.isa.inputs import mma_inputs
from warpsim.machine import Machine

COMBOS = [("f16", "f32"), ("bf16", "f32"), ("f16", "f16")]


def frags(n, a_regs=4, b_regs=2, c_regs=4, lead=None):
    lead = (n,) if lead is None else lead
    return (np.zeros(lead + (32, a_regs), np.uint32), np.zeros(lead + (32, b_regs), np.uint32),
            np.zeros(lead + (32, c_regs), np.uint32))


def test_validation_errors():
    a, b, c = frags(2)
    with pytest.raises(TypeError, match=r"mma_m16n8k16: a must have dtype uint32.*float32"):
        mma_m16n8k16(a.astype(np.float32), b, c)
    with pytest.raises(TypeError, match="mma_m16n8k16: b must be a numpy array"):
        mma_m16n8k16(a, b.tolist(), c)
    with pytest.raises(ValueError, match=r"mma_m16n8k16: a must have shape \(\.\.\., 32, 4\)"):
        mma_m16n8k16(a[..., :2], b, c)
    with pytest.raises(ValueError, match=r"c must have shape \(\.\.\., 32, 2\)"):
        mma_m16n8k16(a, b, c, cd="f16")
    with pytest.raises(ValueError, match="leading shapes differ"):
        mma_m16n8k16(a, b[:1], c)
    with pytest.raises(ValueError, match="ab must be one of"):
        mma_m16n8k16(a, b, c, ab="f32")
    with pytest.raises(ValueError, match="cd must be one of"):
        mma_m16n8k16(a, b, c, cd="bf16")
    with pytest.raises(ValueError, match=r"ab='bf16' with cd='f16' is not a PTX mma type combination"):
        mma_m16n8k16(a, b, c[..., :2], ab="bf16", cd="f16")
    with pytest.raises(ValueError, match="unknown architecture 'sm75'"):
        mma_m16n8k16(a, b, c, arch="sm75")
    with pytest.raises(ValueError, match=r"mma_m16n8k8: a must have shape \(\.\.\., 32, 2\)"):
        mma_m16n8k8(a, b, c)


@pytest.mark.parametrize("ab,cd", COMBOS)
def test_batch_shapes_and_independence(ab, cd):
    """Leading dims are kept; each entry equals the same entry run alone; serial equals parallel."""
    rng = np.random.default_rng(5)
    a, b, c = mma_inputs("ordinary", 6, ab=ab, cd=cd, rng=rng)
    d = mma_m16n8k16(a.reshape(2, 3, 32, 4), b.reshape(2, 3, 32, 2), c.reshape((2, 3) + c.shape[1:]), ab=ab, cd=cd)
    assert d.shape == (2, 3) + c.shape[1:] and d.dtype == np.uint32
    alone = mma_m16n8k16(a[4], b[4], c[4], ab=ab, cd=cd)
    assert np.array_equal(d[1, 1], alone)
    assert np.array_equal(mma_m16n8k16(a, b, c, ab=ab, cd=cd, parallel=False), d.reshape(c.shape))
    empty = mma_m16n8k16(a[:0], b[:0], c[:0], ab=ab, cd=cd)
    assert empty.shape == (0,) + c.shape[1:]


@pytest.mark.parametrize("shape", ["m16n8k16", "m16n8k8"])
@pytest.mark.parametrize("ab,cd", COMBOS)
def test_warp_primitive_matches_batched(shape, ab, cd):
    """warp_mma on a register file, with D written over C (in place), equals the batched API."""
    rng = np.random.default_rng(9)
    a, b, c = mma_inputs("wide-exp", 3, shape=shape, ab=ab, cd=cd, rng=rng)
    run = mma_m16n8k16 if shape == "m16n8k16" else mma_m16n8k8
    want = run(a, b, c, ab=ab, cd=cd, arch="sm80")
    na, nb, nc = a.shape[-1], b.shape[-1], c.shape[-1]
    a_regs, b_regs, c_regs = np.arange(na) + 10, np.arange(nb) + 2, np.arange(nc) + 5
    params = mma_params(shape, ab, cd, "sm80")
    for i in range(3):
        regs = np.zeros((32, 16), np.uint32)
        regs[:, a_regs], regs[:, b_regs], regs[:, c_regs] = a[i], b[i], c[i]
        fault = new_fault()
        assert warp_mma(regs, a_regs, b_regs, c_regs, c_regs, *params, fault) and not fault.any()
        assert np.array_equal(regs[:, c_regs], want[i]), f"entry {i}"
        assert np.array_equal(regs[:, a_regs], a[i]) and np.array_equal(regs[:, b_regs], b[i])


def test_warp_primitive_faults():
    regs = np.zeros((32, 8), np.uint32)
    params = mma_params("m16n8k16", "f16", "f32")
    fault = new_fault()
    ok = warp_mma(regs, np.arange(4), np.array([4, 8]), np.arange(4), np.arange(4), *params, fault)
    assert not ok and list(fault) == [3, 0, 8, 8]
    fault = new_fault()
    assert not warp_mma(regs, np.arange(4), np.arange(2), np.arange(4), np.arange(4), 0, 1, 1, 16, 25, -21, fault)
    assert fault[0] == 4
    m = Machine(warps=1, regs_per_thread=8, smem_bytes=0)
    with pytest.raises(SimulatorFault, match=r"^mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32: "
                                             r"warp 0: register index 9 is outside \[0, 8\)$"):
        m.execute_mma(0, [0, 1, 2, 3], [4, 5, 6, 9], [0, 1], [0, 1, 2, 3])


def test_machine_mma_matches_batched():
    rng = np.random.default_rng(1)
    a, b, c = mma_inputs("cancellation", 2, ab="bf16", rng=rng)
    m = Machine(warps=2, regs_per_thread=12, smem_bytes=0)
    m.regs[1, :, 0:4], m.regs[1, :, 4:6], m.regs[1, :, 6:10] = a[1], b[1], c[1]
    m.execute_mma(1, [6, 7, 8, 9], [0, 1, 2, 3], [4, 5], [6, 7, 8, 9], ab="bf16", arch="sm90")
    assert np.array_equal(m.regs[1, :, 6:10], mma_m16n8k16(a[1], b[1], c[1], ab="bf16"))
    assert not m.regs[0].any()


def test_warp_primitives_reject_bad_operand_shapes():
    """Short register lists or address arrays are faults, not out-of-bounds reads."""
    from warpsim.isa import warp_ld, warp_ldmatrix
    regs = np.zeros((32, 8), np.uint32)
    params = mma_params("m16n8k16", "f16", "f32")
    fault = new_fault()
    assert not warp_mma(regs, np.arange(2), np.arange(2), np.arange(4), np.arange(4), *params, fault)
    assert list(fault) == [5, 0, 2, 4]
    fault = new_fault()
    assert not warp_ldmatrix(regs, np.arange(4), np.zeros(64, np.uint8), np.zeros(8, np.int64), 4, fault)
    assert fault[0] == 5
    fault = new_fault()
    assert not warp_ld(regs, np.arange(1), np.zeros(64, np.uint8), np.zeros(31, np.int64), 4, 0, fault)
    assert fault[0] == 5
