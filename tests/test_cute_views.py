"""Copy views and MMA views of one fragment share storage (the seed's retile_D point).

For every oracle configuration and every warp: shared memory holds, at each element, a unique
tag; copying through the copy view (``copy_calls`` of ``partition_S`` -> ``retile_D``, executed with
the atom's own thread/value semantics) writes the tags into numpy register storage; reading the same storage through the MMA view (the fragment
from ``partition_fragment_*``) must give, element by element, the shared element that
``partition_*`` of the shared tensor names, and that element must be the one at the (row, col)
the identity partition names.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracle"))

import warpsim.cute as cute  # noqa: E402
from tv_build import fragment, mma_setup, partition  # noqa: E402
from tv_cases import mma_configs  # noqa: E402
from warpsim.cute import _  # noqa: E402
from warpsim.cute.calls import copy_calls  # noqa: E402

CONFIGS = mma_configs()


def _table_2d(layout):
    t, v = int(cute.size(layout, 0)), int(cute.size(layout, 1))
    return cute.layout_table(layout).reshape(v, t).T


def received_addresses(atom, calls):
    """Per call, lane and destination value: the shared address the atom delivers there.

    The atom's semantics as CuTe states it: source (thread i, value j) supplies atom element
    ``ValLayoutSrc(i, j)``, destination (thread l, value v) receives element ``ValLayoutDst(l, v)``
    (test_cute_atoms.py checks both against the PTX ISA). Atom thread i of a warp is lane i mod
    the atom's thread count.
    """
    src_tab, dst_tab = _table_2d(atom.ValLayoutSrc), _table_2d(atom.ValLayoutDst)
    threads = src_tab.shape[0]
    supplier = {}
    for i in range(threads):
        for j in range(src_tab.shape[1]):
            supplier.setdefault(int(src_tab[i, j]), (i, j))
    n_calls, lanes, _v = calls.src.shape
    out = np.empty((n_calls, lanes, dst_tab.shape[1]), dtype=np.int64)
    for lane in range(lanes):
        base = lane - lane % threads
        for v in range(dst_tab.shape[1]):
            i, j = supplier[int(dst_tab[lane % threads, v])]
            out[:, lane, v] = calls.src[:, base + i, j]
    return out


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c.name for c in CONFIGS])
def test_write_through_copy_view_read_through_mma_view(cfg):
    setup = mma_setup(cfg)
    tm = setup.tiled_mma
    for name in "AB":
        smem, twin = setup.tensors[name]
        ebytes = smem.engine.element_bytes
        ident = cute.make_identity_tensor(setup.shape_mk[name])
        copy = setup.copies[name]
        for w in range(tm.size() // 32):
            lanes = cute.warp_lanes(w)
            frag = fragment(tm.get_slice(0), name, twin)
            tcopy = copy.get_slice(lanes)
            calls = copy_calls(copy, tcopy.partition_S(smem), tcopy.retile_D(frag))
            storage = np.full((32, frag.engine.size), -1, dtype=np.int64)     # per lane: shared tags
            received = received_addresses(copy.atom, calls)
            for c in range(len(calls)):
                storage[:, calls.dst[c]] = received[c] // ebytes
            mma_view = partition(tm.get_slice(lanes), name, smem)
            want = mma_view.address_table() // ebytes                       # [lanes, size]
            got = storage[:, frag.slot_table()]
            bad = np.argwhere(got != want)
            assert not len(bad), (f"{cfg.name} {name} thread {int(lanes[bad[0][0]])}: MMA-view element {bad[0][1]} "
                                  f"(slot {frag.slot_table()[bad[0][1]]}) holds shared element {got[tuple(bad[0])]}, "
                                  f"partition_{name} says {want[tuple(bad[0])]}")
            coords = partition(tm.get_slice(lanes), name, ident).coord_table()   # [lanes, size, 2]
            at_coord = np.vectorize(lambda r, c: smem.address(int(r), int(c)))(coords[..., 0], coords[..., 1]) // ebytes
            assert np.array_equal(at_coord, want), f"{cfg.name} {name} warp {w}: (row, col) disagree with addresses"


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c.name for c in CONFIGS])
def test_copy_view_covers_each_slot_once(cfg):
    setup = mma_setup(cfg)
    thr = setup.tiled_mma.get_slice(0)
    for name in "AB":
        frag = fragment(thr, name, setup.tensors[name][1])
        view = setup.copies[name].get_slice(0).retile_D(frag)
        assert sorted(view.slot_table().tolist()) == sorted(frag.slot_table().tolist()) == list(range(frag.engine.size))


def test_storage_is_shared_between_views():
    tm = cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN(), cute.make_layout((4, 1, 1)), (64, 16, 16))
    sK = cute.make_tensor(cute.make_smem_ptr(0, "f16"), cute.tile_to_shape(
        cute.composition(cute.Swizzle(3, 3, 3), cute.make_layout((8, 64), (64, 1))), (64, 64)))
    frag = tm.get_slice(0).partition_fragment_B(sK)
    view = cute.make_tiled_copy_B(cute.Copy_Atom(cute.SM75_U32x4_LDSM_N(), "f16"), tm).get_slice(0).retile_D(frag)
    view[_, 1, 2][5] = 0x3C00
    assert view.storage is frag.storage
    slot = view[_, 1, 2].address(5)
    assert frag.storage[slot] == 0x3C00 and int(np.count_nonzero(frag.storage)) == 1
    mma_index = int(np.nonzero(frag.slot_table() == slot)[0][0])
    assert frag[mma_index] == 0x3C00
