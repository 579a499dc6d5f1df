"""The seed's example, verbatim (issue 3), and the rest of docs/hardware-model.md §1's printed texts.

The expected strings are what CuTe C++ 4.x prints for thread 0 (docs/hardware-model.md §1, from runs of the
tutorial's kernel); the oracle tests check the same quantities for every thread against nvcc.
"""

import contextlib
import io

import numpy as np

from warpsim.cute import *  # the seed's example starts this way


def test_seed_example_verbatim():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (64, 16, 16))
        atom = composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1)))
        sK = make_tensor(make_smem_ptr(0, "f16"), tile_to_shape(atom, (64, 64)))
        tSrK = tiled_mma.get_slice(0).partition_fragment_B(sK)
        copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), tiled_mma)
        view = copy_B.get_slice(0).retile_D(tSrK)
        print(tSrK.layout)   # ((_2,_2),_8,(_2,_2)):((_1,_2),_4,(_32,_64))
        print(view.layout)   # ((_8,_1),_4,_4):((_1,_0),_8,_32)
    assert out.getvalue() == "((_2,_2),_8,(_2,_2)):((_1,_2),_4,(_32,_64))\n((_8,_1),_4,_4):((_1,_0),_8,_32)\n"


def _seed():
    tiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (64, 16, 16))
    kv = tile_to_shape(composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1))), (64, 64))
    vt = tile_to_shape(composition(Swizzle(3, 3, 3), make_layout((64, 64), (1, 64))), (64, 64))
    return tiled_mma, kv, vt


def test_reference_section_1_texts():
    tiled_mma, kv, vt = _seed()
    thr = tiled_mma.get_slice(0)
    sQ = make_tensor(make_smem_ptr(0, "f16"), kv)
    sK = make_tensor(make_smem_ptr(8192, "f16"), kv)
    sVt = make_tensor(make_smem_ptr(16384, "f16"), vt)
    sVt_twin = make_tensor(make_smem_ptr(16384, "f16"), make_layout((64, 64), (1, 64)))
    copy_A = make_tiled_copy_A(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), tiled_mma)
    copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), tiled_mma)
    copy_V = make_tiled_copy_B(Copy_Atom(SM75_U16x8_LDSM_T(), "f16"), tiled_mma)
    assert str(kv) == "Sw<3,3,3> o _0 o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))"
    # K: MMA view and copy view
    tSrK = thr.partition_fragment_B(sK)
    assert str(thr.partition_B(sK).layout) == "((_2,_2),_8,(_2,_2)):((_1,8),_512,(16,32))"
    assert str(tSrK.layout) == "((_2,_2),_8,(_2,_2)):((_1,_2),_4,(_32,_64))"
    assert str(copy_B.get_slice(0).retile_D(tSrK).layout) == "((_8,_1),_4,_4):((_1,_0),_8,_32)"
    # V transposed, fragment from the un-swizzled twin
    tOrVt = thr.partition_fragment_B(sVt_twin)
    assert str(tOrVt.layout) == "((_2,_2),_8,_4):((_1,_2),_4,_32)"
    assert str(copy_V.get_slice(0).retile_D(tOrVt).layout) == "((_8,_1),_4,_4):((_1,_0),_8,_32)"
    # Q
    tSrQ = thr.partition_fragment_A(sQ)
    assert str(tSrQ.layout) == "((_2,_2,_2),_1,(_2,_2)):((_1,_2,_4),_0,(_8,_16))"
    assert str(copy_A.get_slice(0).retile_D(tSrQ).layout) == "((_8,_1),_1,_4):((_1,_0),_0,_8)"
    # the tiled copy of K
    text = str(copy_B).splitlines()
    assert text[:3] == ["TiledCopy", "  Tiler_MN:       (_16,_16)",
                        "  TiledLayout_TV: ((_4,_8,_4),((_2,_2),(_2,_1))):((_32,_1,_0),((_16,_128),(_8,_0)))"]
    # V written with the K layout and read through the transposed one: the same bytes
    for key, d in [(0, 0), (5, 17), (63, 63), (40, 9)]:
        assert sVt.address(d, key) == sK.address(key, d) + 8192


def test_seed_copy_loop_shapes_and_counts():
    """The seed's loop: copy k-block i through the copy views, gemm on the MMA views."""
    from warpsim.cute.calls import copy_calls, gemm_calls
    tiled_mma, kv, _vt = _seed()
    sQ = make_tensor(make_smem_ptr(0, "f16"), kv)
    sK = make_tensor(make_smem_ptr(8192, "f16"), kv)
    lanes = warp_lanes(1)
    thr = tiled_mma.get_slice(lanes)
    tSrQ, tSrK = thr.partition_fragment_A(sQ), thr.partition_fragment_B(sK)
    acc = partition_fragment_C(tiled_mma, (64, 64))
    copy_A = make_tiled_copy_A(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), tiled_mma).get_slice(lanes)
    copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), tiled_mma).get_slice(lanes)
    tCsQ, tCrQ = copy_A.partition_S(sQ), copy_A.retile_D(tSrQ)
    tCsK, tCrK = copy_B.partition_S(sK), copy_B.retile_D(tSrK)
    ldsm = mma = 0
    for i in range(4):
        a = copy_calls(copy_A.tiled_copy, tCsQ[_, _, i], tCrQ[_, _, i])
        b = copy_calls(copy_B.tiled_copy, tCsK[_, _, i], tCrK[_, _, i])
        assert a.src.shape == (1, 32, 8) and b.src.shape == (4, 32, 8)
        ldsm += len(a) + len(b)
        mma += len(gemm_calls(tiled_mma, tSrQ[_, _, i], tSrK[_, _, i], acc))
    assert (ldsm, mma) == (20, 32)
    # every lane's row address is 16-byte aligned, as ldmatrix requires
    assert np.all(tCsK.address_table() % 2 == 0) and np.all(b.src[..., 0] % 16 == 0)
