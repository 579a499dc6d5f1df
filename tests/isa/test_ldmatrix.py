"""ldmatrix against a reference written here from the PTX ISA text ("Warp-level matrix load
instruction: ldmatrix"), for every variant, plus its faults."""

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from warpsim.isa import ldmatrix
from warpsim.isa.inputs import ldmatrix_inputs
from warpsim.machine import Machine

VARIANTS = [(num, trans) for num in (1, 2, 4) for trans in (False, True)]


def b16(smem, addr):
    return int(smem[addr]) | (int(smem[addr + 1]) << 8)


def reference(smem, addrs, num, trans):
    """Lane l, register j: matrix j's rows come from lanes 8j..8j+7. Without .trans the lane gets
    row l//4, columns 2(l%4) and 2(l%4)+1; with .trans, column l//4 of rows 2(l%4) and 2(l%4)+1."""
    out = np.zeros((32, num), np.uint32)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for j in range(num):
            if trans:
                lo = b16(smem, int(addrs[8 * j + 2 * t]) + 2 * g)
                hi = b16(smem, int(addrs[8 * j + 2 * t + 1]) + 2 * g)
            else:
                row = int(addrs[8 * j + g])
                lo, hi = b16(smem, row + 4 * t), b16(smem, row + 4 * t + 2)
            out[lane, j] = lo | (hi << 16)
    return out


@pytest.mark.parametrize("num,trans", VARIANTS)
def test_ldmatrix_matches_ptx_reference(num, trans):
    rng = np.random.default_rng(num * 2 + trans)
    smem, addrs = ldmatrix_inputs(40, num=num, trans=trans, smem_bytes=1024, rng=rng, ignored="random")
    got = ldmatrix(smem, addrs, num=num, trans=trans)
    assert got.shape == (40, 32, num)
    for i in range(40):
        want = reference(smem[i], addrs[i], num, trans)
        bad = np.argwhere(got[i] != want)
        assert bad.size == 0, (f"x{num} trans={trans} entry {i} lane {bad[0][0]} reg {bad[0][1]}: "
                               f"expected {int(want[tuple(bad[0])]):#010x}, got {int(got[i][tuple(bad[0])]):#010x}")


def test_unbatched_smem_is_shared_and_any_int_dtype():
    rng = np.random.default_rng(3)
    smem = rng.integers(0, 256, 512, dtype=np.uint8)
    addrs = (rng.integers(0, 32, (2, 3, 32)) * 16).astype(np.uint16)
    got = ldmatrix(smem, addrs, num=4, trans=True)
    assert got.shape == (2, 3, 32, 4)
    assert np.array_equal(got[1, 2], reference(smem, addrs[1, 2], 4, True))


@pytest.mark.parametrize("num", [1, 2, 4])
def test_ignored_lanes_are_not_checked(num):
    smem = np.arange(256, dtype=np.uint8)
    addrs = np.full(32, 0x1003, np.int64)            # misaligned and out of range
    addrs[:8 * num] = np.arange(8 * num) % 16 * 16
    ldmatrix(smem, addrs, num=num)                   # no fault from lanes >= 8 * num
    if num < 4:
        addrs[8 * num] = 0x1003
        ldmatrix(smem, addrs, num=num)


def test_faults_name_instruction_lane_and_address():
    smem = np.zeros(0x2000, np.uint8)
    addrs = np.zeros(32, np.int64)
    addrs[5] = 0x1003
    with pytest.raises(SimulatorFault, match=r"^ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16: lane 5: "
                                             r"address 0x1003 is not 16-byte aligned$"):
        ldmatrix(smem, addrs, num=4)
    addrs[5] = 0x2000 - 8
    with pytest.raises(SimulatorFault, match=r"lane 5: address 0x1ff8 \+ 16 bytes is outside shared memory \[0, 0x2000\)"):
        ldmatrix(smem, addrs, num=4)
    addrs[5] = -16
    with pytest.raises(SimulatorFault, match=r"lane 5: address -0x10"):
        ldmatrix(smem, addrs, num=4)
    batch = np.zeros((3, 32), np.int64)
    batch[2, 9] = 8
    with pytest.raises(SimulatorFault, match=r"x2.trans.shared.b16: entry 2 lane 9: address 0x8 is not 16-byte aligned"):
        ldmatrix(smem, batch, num=2, trans=True)


def test_machine_fault_message_has_the_warp():
    m = Machine(warps=2, regs_per_thread=4, smem_bytes=0x2000)
    addrs = np.zeros(32, np.int64)
    addrs[5] = 0x1003
    with pytest.raises(SimulatorFault) as e:
        m.execute_ldmatrix(1, [0, 1, 2, 3], addrs, num=4)
    assert str(e.value) == ("ldmatrix.sync.aligned.m8n8.x4.shared.b16: warp 1 lane 5: "
                            "address 0x1003 is not 16-byte aligned")
    assert not m.regs.any(), "a faulting ldmatrix wrote registers"


def test_argument_errors():
    smem = np.zeros(256, np.uint8)
    addrs = np.zeros(32, np.int64)
    with pytest.raises(ValueError, match="num must be 1, 2 or 4"):
        ldmatrix(smem, addrs, num=3)
    with pytest.raises(TypeError, match="smem must be a numpy array of uint8"):
        ldmatrix(smem.astype(np.int8), addrs, num=1)
    with pytest.raises(TypeError, match="addrs must be a numpy array of integers"):
        ldmatrix(smem, addrs.astype(float), num=1)
    with pytest.raises(ValueError, match=r"addrs must have shape \(\.\.\., 32\)"):
        ldmatrix(smem, np.zeros(16, np.int64), num=1)
    with pytest.raises(ValueError, match="leading shapes differ"):
        ldmatrix(np.zeros((2, 256), np.uint8), np.zeros((3, 32), np.int64), num=1)
    with pytest.raises(TypeError, match="trans must be a bool"):
        ldmatrix(smem, addrs, num=1, trans="yes")
