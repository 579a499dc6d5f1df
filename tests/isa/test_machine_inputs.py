"""Machine state and the conformance input generators."""

import numpy as np
import pytest

from warpsim.isa import MMA_FRAGMENTS, from_fragment
from warpsim.isa.inputs import MMA_CLASSES, ldmatrix_inputs, mma_inputs
from warpsim.machine import GLOBAL_ALIGN, Machine


def test_machine_state_and_global_buffers():
    m = Machine(warps=4, regs_per_thread=16, smem_bytes=1024, gmem_bytes=100)
    assert m.regs.shape == (4, 32, 16) and m.regs.dtype == np.uint32
    assert m.smem.dtype == np.uint8 and m.threads == 128
    m.gmem[:100] = 7
    a = m.alloc_global("a", 10)
    b = m.alloc_global("b", 3000)
    assert a == 0 and b == GLOBAL_ALIGN and m.gmem.size >= b + 3000 and (m.gmem[:100] == 7).all()
    m.write_global("b", np.arange(4, dtype=np.uint32))
    assert m.read_global("b", np.uint32)[:4].tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="already exists"):
        m.alloc_global("a", 4)
    with pytest.raises(KeyError, match="no buffer 'c'"):
        m.global_view("c")
    with pytest.raises(ValueError, match="do not fit"):
        m.write_global("a", np.zeros(3, np.uint32))
    m.bar_sync()
    assert m.barriers == 1


def test_machine_argument_errors():
    with pytest.raises(ValueError, match="warps must be >= 1"):
        Machine(warps=0, regs_per_thread=4, smem_bytes=0)
    with pytest.raises(TypeError, match="regs_per_thread must be an int"):
        Machine(warps=1, regs_per_thread=4.0, smem_bytes=0)
    m = Machine(warps=1, regs_per_thread=4, smem_bytes=64)
    with pytest.raises(ValueError, match=r"warp must be an int in \[0, 1\)"):
        m.execute_ld(1, "shared", [0], np.zeros(32, np.int64), size=4)
    with pytest.raises(ValueError, match="32 integer byte addresses"):
        m.execute_ld(0, "shared", [0], np.zeros(31, np.int64), size=4)
    with pytest.raises(ValueError, match="space must be 'shared' or 'global'"):
        m.execute_ld(0, "local", [0], np.zeros(32, np.int64), size=4)


@pytest.mark.parametrize("cls", MMA_CLASSES)
def test_mma_inputs_deterministic(cls):
    for ab, cd in (("f16", "f32"), ("bf16", "f32"), ("f16", "f16")):
        x = mma_inputs(cls, 4, ab=ab, cd=cd, rng=np.random.default_rng(3))
        y = mma_inputs(cls, 4, ab=ab, cd=cd, rng=np.random.default_rng(3))
        for u, v in zip(x, y):
            assert u.dtype == np.uint32 and np.array_equal(u, v)
        if cd == "f16":
            c = from_fragment(MMA_FRAGMENTS[("m16n8k16", "C.f16")], x[2])
            assert c.max() <= 0xFFFF


def test_mma_inputs_classes_have_their_character():
    rng = np.random.default_rng(4)
    a, _, _ = mma_inputs("special", 50, rng=rng)
    A = from_fragment(MMA_FRAGMENTS[("m16n8k16", "A")], a)
    assert ((A & 0x7C00) == 0x7C00).any() and (A == 0).any()
    a, _, _ = mma_inputs("subnormal", 10, rng=rng)
    A = from_fragment(MMA_FRAGMENTS[("m16n8k16", "A")], a)
    assert ((A & 0x7C00) == 0).mean() > 0.5
    a, b, _ = mma_inputs("ordinary", 10, shape="m16n8k8", ab="bf16", rng=rng)
    assert a.shape == (10, 32, 2) and b.shape == (10, 32, 1)
    with pytest.raises(ValueError, match="cls must be one of"):
        mma_inputs("huge", 1, rng=rng)
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        mma_inputs("ordinary", 1, rng=3)


def test_ldmatrix_inputs():
    smem, addrs = ldmatrix_inputs(5, num=2, trans=False, smem_bytes=512, rng=np.random.default_rng(0))
    assert smem.shape == (5, 512) and smem.dtype == np.uint8 and addrs.shape == (5, 32)
    assert (addrs % 16 == 0).all() and (addrs >= 0).all() and (addrs + 16 <= 512).all()
    with pytest.raises(ValueError, match="multiple of 16"):
        ldmatrix_inputs(1, num=1, trans=False, smem_bytes=100, rng=np.random.default_rng(0))
