"""Where the CuTe layer and the ISA layer meet: every atom's layouts agree with PTX's fragment maps.

``warpsim.cute`` declares the atoms as CuTe does (``include/cute/atom/mma_traits_sm80.hpp``,
``copy_traits_sm75.hpp``; checked against real CuTe by the oracle tests); ``warpsim.isa`` declares
PTX's fragment maps (checked against the PTX text and hardware by ``tests/isa``). Neither imports the
other; this test walks both registries and checks that thread ``t``'s value ``v`` is, in both, the
same element of the same operand. Value ``v`` of a 16-bit operand is register ``v // 2``, half
``v % 2`` (docs/hardware-model.md §1); an f32 value is a whole register.
"""

import pytest

import warpsim.cute as cute
from warpsim.cute import layout_table
from warpsim.isa import MMA_FRAGMENTS, ldmatrix_map, mma_name

MMA = list(cute.MMA_OPS.values())
LDSM = [op for op in cute.COPY_OPS.values() if isinstance(op, cute.atoms.LDSM)]


def _tv_table(layout):
    """``layout(t, v)`` as an int array [threads, values]."""
    threads, values = int(cute.size(layout, 0)), int(cute.size(layout, 1))
    return layout_table(layout).reshape(values, threads).T


def _operands(op):
    """(name, CuTe TV layout, CuTe tile rows, ISA map, ISA (row, col) -> CuTe (first, second) swap)."""
    m, n, k = op.Shape_MNK
    shape = f"m16n8k{k}"
    cd = "C.f16" if op.ValTypeC == "f16" else "C.f32"
    return [("A", op.ALayout, m, MMA_FRAGMENTS[(shape, "A")], False),       # CuTe (M,K), PTX (M,K)
            ("B", op.BLayout, n, MMA_FRAGMENTS[(shape, "B")], True),        # CuTe (N,K), PTX (K,N)
            ("C", op.CLayout, m, MMA_FRAGMENTS[(shape, cd)], False)]        # CuTe (M,N), PTX (M,N)


@pytest.mark.parametrize("op", MMA, ids=[op.name for op in MMA])
def test_mma_atom_layouts_agree_with_ptx_fragments(op):
    for name, layout, rows, fmap, swap in _operands(op):
        table = _tv_table(layout)
        assert table.shape == (32, fmap.regs * fmap.halves), f"{op.name} {name}: {layout} vs {fmap.name}"
        for lane in range(32):
            for v in range(table.shape[1]):
                idx = int(table[lane, v])
                cute_at = (idx % rows, idx // rows)
                row, col = fmap.at(lane, v // fmap.halves, v % fmap.halves)
                ptx_at = (col, row) if swap else (row, col)
                assert cute_at == ptx_at, (
                    f"{op.name} {name}: lane {lane} value {v}: CuTe {layout} gives {cute_at}, "
                    f"PTX map {fmap.name} gives {ptx_at}")


@pytest.mark.parametrize("op", MMA, ids=[op.name for op in MMA])
def test_mma_atom_names_its_ptx_instruction(op):
    """The atom's own name (CuTe knows nothing of isa) is the one the ISA builds."""
    m, n, k = op.Shape_MNK
    assert op.ValTypeA == op.ValTypeB and op.ValTypeC == op.ValTypeD
    assert op.ptx == mma_name(f"m{m}n{n}k{k}", op.ValTypeA, op.ValTypeD)


@pytest.mark.parametrize("op", LDSM, ids=[op.name for op in LDSM])
def test_ldsm_atom_layouts_agree_with_ldmatrix_map(op):
    """Source element ``8i + c`` is column ``c`` of the row whose address lane ``i`` gives."""
    atom = cute.Copy_Atom(op, "f16")
    src, dst = _tv_table(atom.ValLayoutSrc), _tv_table(atom.ValLayoutDst)
    imap = ldmatrix_map(op.num, op.trans)
    assert op.ptx == imap.name
    for lane in imap.addr_lanes:
        assert src[lane].tolist() == list(range(8 * lane, 8 * lane + 8)), f"{op.name}: lane {lane} source row"
    assert dst.shape == (32, 2 * op.num)
    for lane in range(32):
        for v in range(dst.shape[1]):
            matrix, row, col = imap.at(lane, v // 2, v % 2)
            source_lane = int(imap.addr_lane[matrix, row])
            assert int(dst[lane, v]) == 8 * source_lane + col, (
                f"{op.name}: lane {lane} value {v}: CuTe element {int(dst[lane, v])}, "
                f"PTX: matrix {matrix} row {row} (address of lane {source_lane}) col {col}")
