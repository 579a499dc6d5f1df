"""Written through the copy view, read through the MMA view: the seed's point, in simulated registers.

After the program ran, each thread's fragment storage (``tSrQ``, ``tSrK``, ``tOrVt``) was written only
by ldmatrix instructions addressed through the ``retile_D`` copy views. The test reads the same
storage through the MMA view: MMA-view element ``i`` lives in slot ``tSrK.address(i)`` and is, by
the MMA partition (CuTe's ``partition_B`` of an identity tensor, checked against real CuTe in the
oracle tests), input element ``(n, k)``. Every slot of every thread must hold exactly that input.
"""

from pathlib import Path

import numpy as np
import pytest

from warpsim.cute import make_identity_tensor, make_smem_ptr, make_tensor, warp_lanes
from warpsim.cute.calls import copy_calls
from warpsim.program import load_program
from warpsim.program.run import run_program

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gemm_smem.py"


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


def check_fragment(name, dump, thr_for_warp, partition, source, fragment):
    """dump[t, slot of MMA-view element i] == source[coordinate of element i for thread t]."""
    slots = fragment.address_table()                               # thread-independent storage slots
    assert sorted(slots.tolist()) == list(range(dump.shape[1])), f"{name}: the MMA view covers every slot once"
    for w in range(4):
        coords = getattr(thr_for_warp(w), partition)(make_identity_tensor((64, 64))).coord_table()
        for lane in range(32):
            t = 32 * w + lane
            want = source[coords[lane, :, 0], coords[lane, :, 1]]
            got = dump[t, slots]
            if not np.array_equal(want, got):
                i = int(np.flatnonzero(want != got)[0])
                pytest.fail(f"{name}: thread {t} (warp {w} lane {lane}) MMA-view element {i} in slot {slots[i]} "
                            f"(register r{slots[i] // 2} half {slots[i] % 2}) holds {int(got[i]):#06x}, expected "
                            f"input{tuple(int(c) for c in coords[lane, i])} = {int(want[i]):#06x}")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_qk_fragments_hold_what_the_mma_view_says(program, dtype):
    r = run_program(program, {"dtype": dtype, "product": "qk"}, seed=11)
    traits = program.fn.__globals__["kernel_traits"](dtype)
    mma = traits.tiled_mma
    sK = make_tensor(make_smem_ptr(0x2000, dtype), traits.smem_layout_kv)
    sQ = make_tensor(make_smem_ptr(0, dtype), traits.smem_layout_q)
    thr = mma.get_slice(0)
    check_fragment("tSrK", r.tensors["tSrK"], lambda w: mma.get_slice(warp_lanes(w)), "partition_B",
                   r.inputs["k"], thr.partition_fragment_B(sK))
    check_fragment("tSrQ", r.tensors["tSrQ"], lambda w: mma.get_slice(warp_lanes(w)), "partition_A",
                   r.inputs["q"], thr.partition_fragment_A(sQ))


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_pv_transposed_fragment_holds_what_the_mma_view_says(program, dtype):
    """tOrVt's MMA view is over V^T (d, key); V^T(d, key) is input V[key, d]."""
    r = run_program(program, {"dtype": dtype, "product": "pv"}, seed=12)
    traits = program.fn.__globals__["kernel_traits"](dtype)
    mma = traits.tiled_mma
    twin = make_tensor(make_smem_ptr(0x2000, dtype), traits.smem_layout_vt_no_swizzle)
    check_fragment("tOrVt", r.tensors["tOrVt"], lambda w: mma.get_slice(warp_lanes(w)), "partition_B",
                   r.inputs["v"].T, mma.get_slice(0).partition_fragment_B(twin))


def test_copy_view_writes_every_slot_the_mma_view_reads(program):
    """The slots the ldmatrix calls of the copy view write are exactly the fragment's slots, once each."""
    from warpsim.cute import Copy_Atom, SM75_U32x4_LDSM_N, make_tiled_copy_B, _
    traits = program.fn.__globals__["kernel_traits"]("f16")
    mma = traits.tiled_mma
    sK = make_tensor(make_smem_ptr(0x2000, "f16"), traits.smem_layout_kv)
    copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), mma)
    for w in range(4):
        tSrK = mma.get_slice(warp_lanes(w)).partition_fragment_B(sK)
        thr_copy = copy_B.get_slice(warp_lanes(w))
        src, view = thr_copy.partition_S(sK), thr_copy.retile_D(tSrK)
        written = np.concatenate([copy_calls(copy_B, src[_, _, i], view[_, _, i]).dst.ravel() for i in range(4)])
        assert sorted(written.tolist()) == sorted(tSrK.address_table().tolist())
