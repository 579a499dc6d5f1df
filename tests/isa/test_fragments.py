"""PTX fragment maps: the tables of warpsim.isa.fragments against PTX's formulas, written here again
per value index the way the PTX ISA sections state them ("Matrix fragments for mma.m16n8k16 with
floating point type", "Matrix fragments for mma.m16n8k8", "Warp-level matrix load instruction:
ldmatrix")."""

import numpy as np
import pytest

from warpsim.isa import LDMATRIX_MAPS, MMA_FRAGMENTS, from_fragment, to_fragment
from warpsim.isa.arith import CD_TYPES
from warpsim.isa.fragments import MMA_REGS
from warpsim.isa.mma import MMA_REG_COUNTS, SHAPES


def ptx_a_k16(lane, i):
    g, t = lane // 4, lane % 4
    row = g if i in (0, 1, 4, 5) else g + 8
    col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
    return row, col


def ptx_b_k16(lane, i):
    g, t = lane // 4, lane % 4
    return t * 2 + (i & 1) + (8 if i >= 2 else 0), g


def ptx_c(lane, i):
    g, t = lane // 4, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


def ptx_a_k8(lane, i):
    g, t = lane // 4, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


def ptx_b_k8(lane, i):
    g, t = lane // 4, lane % 4
    return t * 2 + (i & 1), g


FORMULAS = {
    ("m16n8k16", "A"): (ptx_a_k16, 8, 2), ("m16n8k16", "B"): (ptx_b_k16, 4, 2),
    ("m16n8k16", "C.f32"): (ptx_c, 4, 1), ("m16n8k16", "C.f16"): (ptx_c, 4, 2),
    ("m16n8k8", "A"): (ptx_a_k8, 4, 2), ("m16n8k8", "B"): (ptx_b_k8, 2, 2),
    ("m16n8k8", "C.f32"): (ptx_c, 4, 1), ("m16n8k8", "C.f16"): (ptx_c, 4, 2),
}


@pytest.mark.parametrize("key", sorted(FORMULAS))
def test_mma_fragment_matches_ptx(key):
    fmap = MMA_FRAGMENTS[key]
    formula, nvals, per_reg = FORMULAS[key]
    assert fmap.regs * fmap.halves == nvals and fmap.halves == per_reg
    for lane in range(32):
        for i in range(nvals):
            got = fmap.at(lane, i // per_reg, i % per_reg)
            assert got == formula(lane, i), f"{fmap.name}: lane {lane} value {i}: PTX {formula(lane, i)}, table {got}"


@pytest.mark.parametrize("key", sorted(FORMULAS))
def test_mma_fragment_is_a_bijection(key):
    fmap = MMA_FRAGMENTS[key]
    cells = {fmap.at(l, r, h) for l in range(32) for r in range(fmap.regs) for h in range(fmap.halves)}
    assert len(cells) == 32 * fmap.regs * fmap.halves == fmap.shape[0] * fmap.shape[1]


@pytest.mark.parametrize("key", sorted(FORMULAS))
def test_to_from_fragment_round_trip(key):
    fmap = MMA_FRAGMENTS[key]
    rng = np.random.default_rng(7)
    top = 1 << (16 if fmap.halves == 2 else 32)
    m = rng.integers(0, top, (3,) + fmap.shape, dtype=np.uint64).astype(np.uint32)
    frag = to_fragment(fmap, m)
    assert frag.shape == (3, 32, fmap.regs) and frag.dtype == np.uint32
    assert np.array_equal(from_fragment(fmap, frag), m)


@pytest.mark.parametrize("num,trans", sorted(LDMATRIX_MAPS))
def test_ldmatrix_map_matches_ptx(num, trans):
    m = LDMATRIX_MAPS[(num, trans)]
    assert m.addr_lanes == tuple(range(8 * num))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for j in range(num):
            for h in range(2):
                want = (j, 2 * t + h, g) if trans else (j, g, 2 * t + h)
                assert m.at(lane, j, h) == want, f"{m.name}: lane {lane} reg {j} half {h}"


def test_fragment_errors():
    fmap = MMA_FRAGMENTS[("m16n8k16", "A")]
    with pytest.raises(ValueError, match="to_fragment"):
        to_fragment(fmap, np.zeros((16, 8)))
    with pytest.raises(ValueError, match="from_fragment"):
        from_fragment(fmap, np.zeros((32, 2), np.uint32))


def test_registers_per_operand_are_read_off_the_maps():
    """PTX: m16n8k16 takes 4 A, 2 B registers (k8: 2, 1); C/D 4 for f32, 2 for packed f16 pairs."""
    assert MMA_REGS == {("m16n8k16", "f32"): (4, 2, 4), ("m16n8k16", "f16"): (4, 2, 2),
                        ("m16n8k8", "f32"): (2, 1, 4), ("m16n8k8", "f16"): (2, 1, 2)}
    for (shape, cd), regs in MMA_REGS.items():
        assert tuple(MMA_REG_COUNTS[SHAPES[shape], CD_TYPES[cd]]) == regs
