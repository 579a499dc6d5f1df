"""Table-driven tests over the atom registries: bijections, copy-atom recasts, registries.

Agreement of the atoms with PTX's fragment maps is in ``tests/test_atoms_agree_with_isa.py``.
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


@pytest.mark.parametrize("op", MMA, ids=[op.name for op in MMA])
def test_mma_layouts_are_bijections_onto_their_tiles(op):
    m, n, k = op.Shape_MNK
    assert int(cute.size(op.ThrID)) == 32
    for name, layout, tile in (("A", op.ALayout, m * k), ("B", op.BLayout, n * k), ("C", op.CLayout, m * n)):
        table = layout_table(layout)
        assert sorted(table.tolist()) == list(range(tile)), f"{op.name} {name}Layout {layout} is not a bijection onto {tile}"


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
