"""Table-driven tests over the atom registries: layouts against the PTX ISA's fragment descriptions.

The PTX maps below are written from the PTX ISA sections "Matrix fragments for mma.m16n8k16 /
mma.m16n8k8 with floating point type" and "Warp-level matrix load instruction: ldmatrix"
(REFERENCE.md §3), independently of CuTe: lane ``l`` has group ``g = l // 4`` and thread-in-group
``t = l % 4``.
"""

import numpy as np
import pytest

import warpsim.cute as cute
from warpsim.cute import layout_table

MMA = list(cute.MMA_OPS.values())
LDSM = [op for op in cute.COPY_OPS.values() if isinstance(op, cute.atoms.LDSM)]
DTYPES = list(cute.DTYPES)


def _table_2d(layout):
    """``layout(t, v)`` as an int array [threads, values]."""
    t, v = int(cute.size(layout, 0)), int(cute.size(layout, 1))
    return layout_table(layout).reshape(v, t).T


def _ptx_pairs(m_base, k_base):
    """(row, col) of value v = 2r + h of a lane, for a list of per-register (row, col) bases."""
    def at(lane, v):
        g, t = lane // 4, lane % 4
        r, h = divmod(v, 2)
        return m_base[r](g, t), k_base[r](g, t) + h
    return at


# PTX: A of m16n8k16: regs {(g, 2t..)}, {(g+8, 2t..)}, {(g, 2t+8..)}, {(g+8, 2t+8..)}
PTX_A16 = _ptx_pairs([lambda g, t: g, lambda g, t: g + 8, lambda g, t: g, lambda g, t: g + 8],
                     [lambda g, t: 2 * t, lambda g, t: 2 * t, lambda g, t: 2 * t + 8, lambda g, t: 2 * t + 8])
# A of m16n8k8: {(g, 2t..)}, {(g+8, 2t..)}
PTX_A8 = _ptx_pairs([lambda g, t: g, lambda g, t: g + 8], [lambda g, t: 2 * t, lambda g, t: 2 * t])
# B (k x n): {(k = 2t.., n = g)}, {(k = 2t+8.., n = g)} -> as (n, k)
PTX_B16 = _ptx_pairs([lambda g, t: g, lambda g, t: g], [lambda g, t: 2 * t, lambda g, t: 2 * t + 8])
PTX_B8 = _ptx_pairs([lambda g, t: g], [lambda g, t: 2 * t])
# C/D: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
PTX_C = _ptx_pairs([lambda g, t: g, lambda g, t: g + 8], [lambda g, t: 2 * t, lambda g, t: 2 * t])


@pytest.mark.parametrize("op", MMA, ids=[op.name for op in MMA])
def test_mma_layouts_are_bijections_onto_their_tiles(op):
    m, n, k = op.Shape_MNK
    assert int(cute.size(op.ThrID)) == 32
    for name, layout, tile in (("A", op.ALayout, m * k), ("B", op.BLayout, n * k), ("C", op.CLayout, m * n)):
        table = layout_table(layout)
        assert sorted(table.tolist()) == list(range(tile)), f"{op.name} {name}Layout {layout} is not a bijection onto {tile}"


@pytest.mark.parametrize("op", MMA, ids=[op.name for op in MMA])
def test_mma_layouts_match_ptx_fragments(op):
    m, n, k = op.Shape_MNK
    ptx_a, ptx_b = (PTX_A16, PTX_B16) if k == 16 else (PTX_A8, PTX_B8)
    for name, layout, rows, ptx in (("A", op.ALayout, m, ptx_a), ("B", op.BLayout, n, ptx_b), ("C", op.CLayout, m, PTX_C)):
        table = _table_2d(layout)
        for lane in range(32):
            for v in range(table.shape[1]):
                r, c = ptx(lane, v)
                assert table[lane, v] == r + rows * c, (
                    f"{op.name} {name}: lane {lane} value {v}: CuTe layout gives index {table[lane, v]} = "
                    f"({table[lane, v] % rows}, {table[lane, v] // rows}), PTX says ({r}, {c})")


def test_derived_mma_atoms_share_the_f16_layouts():
    base = {16: cute.SM80_16x8x16_F16F16F16F16_TN(), 8: cute.SM80_16x8x8_F16F16F16F16_TN()}
    for op in MMA:
        ref = base[op.Shape_MNK[2]]
        assert (op.ALayout, op.BLayout, op.CLayout, op.ThrID) == (ref.ALayout, ref.BLayout, ref.CLayout, ref.ThrID)
        assert op.ptx == f"mma.sync.aligned.m16n8k{op.Shape_MNK[2]}.row.col.{op.ValTypeD}.{op.ValTypeA}.{op.ValTypeB}.{op.ValTypeC}"


@pytest.mark.parametrize("op", LDSM, ids=[op.name for op in LDSM])
def test_ldmatrix_layouts_match_ptx(op):
    """Elements are numbered by source row: row ``i`` (supplied by lane ``i``) holds elements 8i..8i+7."""
    atom = cute.Copy_Atom(op, "f16")
    dst = _table_2d(atom.ValLayoutDst)
    src = _table_2d(atom.ValLayoutSrc)
    rows = 8 * op.num
    for lane in range(32):
        g, t = lane // 4, lane % 4
        if lane < rows:
            assert src[lane].tolist() == list(range(8 * lane, 8 * lane + 8)), f"{op.name}: lane {lane} source row"
        for v in range(dst.shape[1]):
            j, h = divmod(v, 2)
            r, c = (2 * t + h, g) if op.trans else (g, 2 * t + h)
            assert dst[lane, v] == (8 * j + r) * 8 + c, (
                f"{op.name}: lane {lane} value {v} (register {j}, half {h}): CuTe element {dst[lane, v]}, "
                f"PTX matrix {j} row {r} col {c}")
    assert op.ptx == f"ldmatrix.sync.aligned.m8n8.x{op.num}{'.trans' if op.trans else ''}.shared.b16"


@pytest.mark.parametrize("op", list(cute.COPY_OPS.values()), ids=list(cute.COPY_OPS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_copy_atom_layouts(op, dtype):
    """Dst and Ref are bijections; the source rows of distinct threads partition the same elements."""
    try:
        atom = cute.Copy_Atom(op, dtype)
    except ValueError as e:
        assert op.name in str(e) and dtype in str(e)
        assert op.name.endswith("LDSM_T") or "UniversalCopy<uint16_t>" in op.name, f"{op.name} should move {dtype}"
        return
    for name in ("Dst", "Ref"):
        table = layout_table(getattr(atom, f"ValLayout{name}"))
        assert sorted(table.tolist()) == list(range(table.size)), f"{op.name}/{dtype} ValLayout{name} is not a bijection"
    src = _table_2d(atom.ValLayoutSrc)
    rows = {tuple(r) for r in src.tolist()}
    flat = sorted(e for r in rows for e in r)
    assert flat == sorted(layout_table(atom.ValLayoutDst).tolist()), f"{op.name}/{dtype}: source rows do not cover the tile once"
    assert atom.NumValSrc * cute.dtype_bits(dtype) == op.SRegisters[0] * op.SRegisters[1]


def test_registries_are_built_from_the_definitions():
    assert set(cute.MMA_OPS) == {
        "SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x8_F32BF16BF16F32_TN",
        "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN"}
    assert {op.name for op in LDSM} == {"SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
                                        "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T"}
    assert [op.bits for op in cute.COPY_OPS.values() if isinstance(op, cute.UniversalCopy)] == [16, 32, 64, 128]
    with pytest.raises(ValueError, match="UniversalCopy"):
        cute.UniversalCopy(8)


@pytest.mark.parametrize("op", MMA, ids=[op.name for op in MMA])
@pytest.mark.parametrize("thr", [(1, 1, 1), (2, 2, 1), (4, 1, 1), (1, 4, 1)])
def test_tiled_mma_tv_layouts_cover_their_tiles(op, thr):
    """C is a bijection; A is shared by the thr_N threads of a row of atoms, B by the thr_M ones."""
    tm = cute.make_tiled_mma(op, cute.make_layout(thr))
    tile = cute.tile_shape(tm)
    for name, (i, j), copies in (("A", (0, 2), thr[1]), ("B", (1, 2), thr[0]), ("C", (0, 1), 1)):
        counts = np.bincount(layout_table(tm.get_layout_TV(name)), minlength=tile[i] * tile[j])
        assert counts.size == tile[i] * tile[j] and np.all(counts == copies), (
            f"{op.name} {thr} {name}: elements covered {sorted(set(counts.tolist()))} times, expected {copies}")
