"""Lane vectors give, lane by lane, exactly what one thread at a time gives (every oracle configuration).

The one-thread path is CuTe's (the oracle tests compare it with nvcc-compiled CuTe); the lane-vector
path keeps a sliced swizzle unevaluated and computes every lane at once. For every configuration
of ``tests/oracle/tv_cases.py`` and every warp: addresses, slots, coordinates, per-lane layouts
and copy calls must agree for all 32 lanes.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracle"))

import warpsim.cute as cute  # noqa: E402
from tv_build import copy_setup, first_difference, fragment, mma_setup, partition  # noqa: E402
from tv_cases import copy_configs, mma_configs  # noqa: E402
from warpsim.cute.calls import copy_calls  # noqa: E402

MMA_CONFIGS = mma_configs()
COPY_CONFIGS = copy_configs()


def same(where, want, got):
    diff = first_difference(want, got)
    assert diff is None, f"{where}: lane-vector path differs from the one-thread path: {diff}"


def compare_tensor(where, vec, scalars):
    """A lane-vector tensor against the one-thread tensors of its lanes."""
    assert vec.lanes is not None, f"{where}: expected a lane-vector tensor"
    for i, s in enumerate(scalars):
        assert str(vec.lane(i).layout) == str(s.layout), f"{where}: lane {i}: layout {vec.lane(i).layout} vs {s.layout}"
    if vec.space == "coord":
        same(f"{where}: coordinates", np.stack([s.coord_table() for s in scalars]), vec.coord_table())
        return
    table = vec.address_table()
    same(f"{where}: address table", np.stack([s.address_table() for s in scalars]), table)
    for j in (0, len(vec) - 1):
        same(f"{where}: address({j})", np.array([s.address(j) for s in scalars]), vec.address(j))


def warps(n_threads):
    return [cute.warp_lanes(w) for w in range(max(1, n_threads // 32))]


@pytest.mark.parametrize("cfg", MMA_CONFIGS, ids=[c.name for c in MMA_CONFIGS])
def test_mma_config_lanes(cfg):
    setup = mma_setup(cfg)
    tm = setup.tiled_mma
    for lanes in warps(tm.size()):
        w = int(lanes[0]) // 32
        vthr = tm.get_slice(lanes)
        sthr = [tm.get_slice(int(t)) for t in lanes]
        for name in "AB":
            smem, twin = setup.tensors[name]
            where = f"{cfg.name} warp {w} {name}"
            vpart = partition(vthr, name, smem)
            spart = [partition(s, name, smem) for s in sthr]
            compare_tensor(f"{where} partition", vpart, spart)
            r = vpart.rank
            k_last = int(cute.size(spart[0].layout, r - 1)) - 1
            key = (cute._,) * (r - 1) + (k_last,)
            compare_tensor(f"{where} partition[..., {k_last}]", vpart[key], [s[key] for s in spart])
            vfrag = fragment(vthr, name, twin)
            sfrag = fragment(sthr[0], name, twin)
            assert str(vfrag.layout) == str(sfrag.layout), f"{where}: fragment layout depends on the path"
            vcopy = setup.copies[name].get_slice(lanes)
            scopy = [setup.copies[name].get_slice(int(t)) for t in lanes]
            vsrc = vcopy.partition_S(smem)
            ssrc = [c.partition_S(smem) for c in scopy]
            compare_tensor(f"{where} copy partition_S", vsrc, ssrc)
            view = vcopy.retile_D(vfrag)
            same(f"{where} retile_D slots", scopy[0].retile_D(sfrag).slot_table(), view.slot_table())
            vcalls = copy_calls(setup.copies[name], vsrc, view)
            for i in (0, 17, 31):
                scalls = copy_calls(setup.copies[name], ssrc[i], scopy[i].retile_D(sfrag))
                same(f"{where} copy calls lane {i} src", scalls.src, vcalls.src[:, i, :])
                same(f"{where} copy calls lane {i} dst", scalls.dst, vcalls.dst)
            ident = cute.make_identity_tensor(setup.shape_mk[name])
            compare_tensor(f"{where} partition(identity)", partition(vthr, name, ident),
                           [partition(s, name, ident) for s in sthr])
        ident_c = cute.make_identity_tensor(cfg.shape_mn)
        compare_tensor(f"{cfg.name} warp {w} partition_C(identity)", vthr.partition_C(ident_c),
                       [s.partition_C(ident_c) for s in sthr])
        if setup.c_copy is not None:
            vdst = setup.c_copy.get_slice(lanes).partition_D(setup.c_tensor)
            compare_tensor(f"{cfg.name} warp {w} copy C partition_D", vdst,
                           [setup.c_copy.get_slice(int(t)).partition_D(setup.c_tensor) for t in lanes])


@pytest.mark.parametrize("cfg", COPY_CONFIGS, ids=[c.name for c in COPY_CONFIGS])
def test_copy_config_lanes(cfg):
    setup = copy_setup(cfg)
    tc = setup.tiled_copy
    for lanes in warps(tc.size()):
        where = f"{cfg.name} warp {int(lanes[0]) // 32}"
        vthr = tc.get_slice(lanes)
        sthr = [tc.get_slice(int(t)) for t in lanes]
        vsrc, vdst = vthr.partition_S(setup.src), vthr.partition_D(setup.dst)
        ssrc, sdst = [s.partition_S(setup.src) for s in sthr], [s.partition_D(setup.dst) for s in sthr]
        compare_tensor(f"{where} partition_S", vsrc, ssrc)
        compare_tensor(f"{where} partition_D", vdst, sdst)
        vcalls = copy_calls(tc, vsrc, vdst)
        for i in (0, 31):
            scalls = copy_calls(tc, ssrc[i], sdst[i])
            same(f"{where} copy calls lane {i}", scalls.src, vcalls.src[:, i, :])
            same(f"{where} copy calls lane {i}", scalls.dst, vcalls.dst[:, i, :])


def test_lane_tensor_layout_is_refused_when_lane_dependent():
    tm = cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN(), cute.make_layout((4, 1, 1)), (64, 16, 16))
    atom = cute.composition(cute.Swizzle(3, 3, 3), cute.make_layout((8, 64), (64, 1)))
    sK = cute.make_tensor(cute.make_smem_ptr(0, "f16"), cute.tile_to_shape(atom, (64, 64)))
    part = tm.get_slice(cute.warp_lanes(0)).partition_B(sK)
    with pytest.raises(ValueError, match="lane"):
        part.layout
    assert str(part.lane(5).layout) == "((_2,_2),_8,(_2,_2)):((_1,-8),_512,(16,32))"
    plain = cute.make_tensor(cute.make_smem_ptr(0, "f16"), cute.make_layout((64, 64), (64, 1)))
    assert str(tm.get_slice(cute.warp_lanes(1)).partition_B(plain).layout) == str(tm.get_slice(33).partition_B(plain).layout)
