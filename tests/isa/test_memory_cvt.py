"""ld/st of 16..128 bits and cvt.rn.{f16,bf16}x2.f32, against straightforward references."""

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from warpsim.isa import cvt_f32_to_16, cvt_pack
from warpsim.isa.cvt import BF16_CODE, F16_CODE
from warpsim.machine import Machine


@pytest.mark.parametrize("space", ["shared", "global"])
@pytest.mark.parametrize("size", [4, 8, 16])
def test_load_store_words(space, size):
    rng = np.random.default_rng(size)
    m = Machine(warps=2, regs_per_thread=8, smem_bytes=2048)
    base = 0
    if space == "global":
        base = m.alloc_global("buf", 2048)
    mem = m.smem if space == "shared" else m.gmem
    mem[base:base + 2048] = rng.integers(0, 256, 2048, dtype=np.uint8)
    addrs = base + rng.permutation(2048 // size)[:32] * size
    regs = list(range(1, 1 + max(1, size // 4)))
    m.execute_ld(1, space, regs, addrs, size=size)
    for lane in range(32):
        for r, reg in enumerate(regs):
            want = int.from_bytes(mem[addrs[lane] + 4 * r: addrs[lane] + 4 * r + 4].tobytes(), "little")
            assert int(m.regs[1, lane, reg]) == want, f"ld lane {lane} reg {reg}"
    assert not m.regs[0].any() and not m.regs[1, :, 0].any()
    mem[base:base + 2048] = 0
    m.execute_st(1, space, regs, addrs, size=size)
    for lane in range(32):
        got = mem[addrs[lane]: addrs[lane] + size]
        want = np.array(m.regs[1, lane, regs], np.uint32).view(np.uint8)
        assert np.array_equal(got, want), f"st lane {lane}"


def test_16_bit_access_uses_one_half():
    m = Machine(warps=1, regs_per_thread=2, smem_bytes=128)
    m.smem[:] = np.arange(128, dtype=np.uint8)
    m.regs[0, :, 0] = 0xAAAABBBB
    addrs = np.arange(32) * 2
    m.execute_ld(0, "shared", [0], addrs, size=2, half=1)
    assert int(m.regs[0, 3, 0]) == 0x0706BBBB     # lane 3: bytes 6, 7 -> bits 16..31
    m.execute_ld(0, "shared", [0], addrs, size=2, half=0)
    assert int(m.regs[0, 3, 0]) == 0x07060706
    m.regs[0, :, 1] = 0x12345678
    m.execute_st(0, "shared", [1], addrs + 64, size=2, half=1)
    assert m.smem[64 + 6] == 0x34 and m.smem[64 + 7] == 0x12 and m.smem[64 + 5] == 0x12


def test_memory_faults():
    m = Machine(warps=1, regs_per_thread=4, smem_bytes=256)
    addrs = np.arange(32) * 8
    with pytest.raises(SimulatorFault, match=r"^ld\.shared\.v4\.b32: warp 0 lane 1: address 0x8 is not 16-byte aligned$"):
        m.execute_ld(0, "shared", [0, 1, 2, 3], addrs, size=16)
    with pytest.raises(SimulatorFault, match=r"^st\.shared\.v2\.b32: warp 0 lane 0: address 0xfc \+ 8 bytes is outside"):
        m.execute_st(0, "shared", [0, 1], np.full(32, 252), size=8)
    with pytest.raises(SimulatorFault, match=r"ld\.global\.b32: warp 0 lane 0: address 0x0 \+ 4 bytes is outside global memory \[0, 0x0\)"):
        m.execute_ld(0, "global", [0], np.zeros(32, np.int64), size=4)
    addrs = np.arange(32) * 4
    addrs[31] = 256
    m.regs[0, :, 0] = 7
    with pytest.raises(SimulatorFault, match="lane 31"):
        m.execute_st(0, "shared", [0], addrs, size=4)
    assert not m.smem.any(), "a faulting store wrote memory"
    with pytest.raises(ValueError, match="size must be one of"):
        m.execute_ld(0, "shared", [0], addrs, size=3)
    with pytest.raises(ValueError, match="2 register indices"):
        m.execute_ld(0, "shared", [0], addrs, size=8)
    with pytest.raises(SimulatorFault, match="register index 9 is outside"):
        m.execute_ld(0, "shared", [9], np.zeros(32, np.int64), size=4)


def f32_bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


def test_cvt_f16_matches_ieee_rne():
    """numpy's float32 -> float16 conversion is IEEE round-to-nearest-even: the outside truth."""
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    exps = rng.integers(100, 150, 20000).astype(np.uint32)      # focus on the f16 range and its edges
    bits[::2] = (bits[::2] & 0x807FFFFF) | (exps[::2] << 23)
    vals = bits.view(np.float32)
    bits = bits[~np.isnan(vals)]
    with np.errstate(over="ignore"):
        want = bits.view(np.float32).astype(np.float16).view(np.uint16)
    got = cvt_pack(np.zeros_like(bits), bits, to="f16") & 0xFFFF
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"f32 {int(bits[bad[0]]):#010x}: expected {int(want[bad[0]]):#06x}, got {int(got[bad[0]]):#06x}"


def test_cvt_bf16_matches_rne_formula():
    """bf16 RNE of a non-NaN f32 is (x + 0x7FFF + ((x >> 16) & 1)) >> 16 (carry into the exponent
    gives inf when it must)."""
    rng = np.random.default_rng(12)
    bits = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    bits = bits[~np.isnan(bits.view(np.float32))]
    x = bits.astype(np.uint64)
    want = ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint32)
    got = cvt_pack(bits, np.zeros_like(bits), to="bf16") >> 16
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"f32 {int(bits[bad[0]]):#010x}: expected {int(want[bad[0]]):#06x}, got {int(got[bad[0]]):#06x}"


@pytest.mark.parametrize("x,f16_bits,what", [
    (65519.0, 0x7BFF, "below the overflow tie"), (65520.0, 0x7C00, "overflow tie -> inf"),
    (-1e9, 0xFC00, "-overflow"), (2.0 ** -25, 0x0000, "half the smallest subnormal: tie to +0"),
    (-(2.0 ** -25), 0x8000, "-0 keeps its sign"), (3 * 2.0 ** -26, 0x0001, "0.75 ulp -> 1 ulp"),
    (1 + 2.0 ** -11, 0x3C00, "tie to even (down)"), (1 + 3 * 2.0 ** -11, 0x3C02, "tie to even (up)"),
    (float("inf"), 0x7C00, "inf"), (-0.0, 0x8000, "-0"),
])
def test_cvt_f16_cases(x, f16_bits, what):
    assert cvt_f32_to_16(int(f32_bits(x)), F16_CODE) == f16_bits, what


def test_cvt_nan_and_packing_order():
    """NaN -> canonical 0x7FFF (an assumption to be checked on the GPU); a goes to the upper half."""
    for nan in (0x7FC00000, 0xFFC00001, 0x7F800001):
        assert cvt_f32_to_16(nan, F16_CODE) == 0x7FFF and cvt_f32_to_16(nan, BF16_CODE) == 0x7FFF
    m = Machine(warps=1, regs_per_thread=3, smem_bytes=0)
    m.regs[0, :, 0] = f32_bits(1.0)
    m.regs[0, :, 1] = f32_bits(-2.0)
    m.execute_cvt_pack(0, 2, 0, 1, to="f16")
    assert int(m.regs[0, 7, 2]) == 0x3C00C000
    m.execute_cvt_pack(0, 0, 0, 1, to="bf16")
    assert int(m.regs[0, 7, 0]) == 0x3F80C000
    with pytest.raises(ValueError, match="to must be 'f16' or 'bf16'"):
        m.execute_cvt_pack(0, 0, 0, 1, to="f8")
    with pytest.raises(TypeError, match="a must be a numpy array of uint32"):
        cvt_pack(np.zeros(3, np.float32), np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="one shape"):
        cvt_pack(np.zeros(3, np.uint32), np.zeros(4, np.uint32))
