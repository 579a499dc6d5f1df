"""Bad input to atoms, tiled MMA/copy, tensors and call tables: ValueError/TypeError naming both sides."""

import numpy as np
import pytest

from warpsim.cute import (
    Copy_Atom, DInt, MMA_Atom, SM75_U16x8_LDSM_T, SM75_U32x4_LDSM_N, SM80_16x8x16_F32F16F16F32_TN,
    UniversalCopy, _, make_layout, make_smem_ptr, make_tensor, make_tiled_copy, make_tiled_copy_B,
    make_tiled_mma, partition_fragment_C,
)
from warpsim.cute.calls import copy_calls, gemm_calls


@pytest.fixture
def seed():
    return make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (64, 16, 16))


def smem(shape, stride, dtype="f16"):
    return make_tensor(make_smem_ptr(0, dtype), make_layout(shape, stride))


def test_tile_that_does_not_divide_the_shape(seed):
    s60 = smem((60, 64), (64, 1))
    with pytest.raises(ValueError, match=r"tile \(_64,_16\).*does not divide the tensor shape \(_60,_64\)"):
        seed.get_slice(0).partition_A(s60)
    with pytest.raises(ValueError, match=r"partition_fragment_A.*\(_60,_64\)"):
        seed.get_slice(0).partition_fragment_A(s60)
    with pytest.raises(ValueError, match=r"\(_64,_16\).*\(_64,_60\)"):
        partition_fragment_C(seed, (64, 60))
    copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), seed)
    with pytest.raises(ValueError, match=r"copy tile \(_16,_16\) does not divide the tensor shape \(_24,_64\)"):
        copy_B.get_slice(0).partition_S(smem((24, 64), (64, 1)))


def test_copy_atom_incompatible_with_the_mma_fragment(seed):
    one_warp = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN())
    with pytest.raises(ValueError, match=r"SM75_U32x4_LDSM_N cannot serve the MMA's B fragment .*SM80_16x8x16.*"
                                         r"moves 8 f16 values per thread.*gives each thread 4"):
        make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), one_warp)
    with pytest.raises(ValueError, match="moves f32 elements, but the MMA's B fragment holds f16"):
        make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f32"), seed)
    copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), seed)
    with pytest.raises(ValueError, match="moves f16 elements, but the tensor holds f32"):
        copy_B.get_slice(0).retile_D(make_tensor("f32", make_layout(((2, 2), 8, 4))))


def test_dtype_the_atom_cannot_move():
    with pytest.raises(ValueError, match="SM75_U16x8_LDSM_T cannot move f32 elements"):
        Copy_Atom(SM75_U16x8_LDSM_T(), "f32")
    with pytest.raises(ValueError, match=r"UniversalCopy<uint16_t> cannot move u32 elements"):
        Copy_Atom(UniversalCopy(16), "u32")
    with pytest.raises(ValueError, match="unknown element type 'f64'"):
        Copy_Atom(SM75_U32x4_LDSM_N(), "f64")


def test_copy_that_cannot_vectorize_into_registers(seed):
    """CuTe refuses this at compile time ("src failed to vectorize into registers"): the rows of a
    column-major K are not 8 contiguous elements."""
    copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), seed)
    sKt = smem((64, 64), (1, 64))
    frag = seed.get_slice(0).partition_fragment_B(sKt)
    thr = copy_B.get_slice(0)
    with pytest.raises(ValueError, match="SM75_U32x4_LDSM_N: the src values of a call are not 8 consecutive f16"):
        copy_calls(copy_B, thr.partition_S(sKt), thr.retile_D(frag))


def test_gemm_shapes_must_fit(seed):
    s = smem((64, 64), (64, 1))
    thr = seed.get_slice(0)
    a, b = thr.partition_fragment_A(s), thr.partition_fragment_B(s)
    acc = partition_fragment_C(seed, (64, 64))
    with pytest.raises(ValueError, match=r"A \(\(_2,_2,_2\),_1,_4\), B \(\(_2,_2\),_8\)"):
        gemm_calls(seed, a, b[_, _, 0], acc)
    with pytest.raises(ValueError, match="C does not match A's M and B's N"):
        gemm_calls(seed, b, a, acc)
    with pytest.raises(TypeError, match="A must be a register tensor"):
        gemm_calls(seed, s, b, acc)


def test_thread_indices(seed):
    with pytest.raises(ValueError, match="thread 128 is not below the TiledMMA's 128 threads"):
        seed.get_slice(128)
    with pytest.raises(ValueError, match=r"thread ids \[128, 129"):
        seed.get_slice(np.arange(100, 132))
    with pytest.raises(ValueError, match="negative thread index"):
        seed.get_slice(-1)
    with pytest.raises(TypeError, match="thread index must be an integer or a lane vector"):
        seed.get_slice("a")


def test_tensors_and_pointers():
    s = smem((64, 64), (64, 1))
    with pytest.raises(TypeError, match="use t.address"):
        s[3]
    with pytest.raises(TypeError, match="expected a pointer, register storage"):
        make_tensor(5, make_layout(4))
    with pytest.raises(ValueError, match="not aligned to the 2-byte f16 element"):
        make_smem_ptr(3, "f16")
    with pytest.raises(ValueError, match="needs a static layout"):
        make_tensor("f32", make_layout(DInt(4)))
    with pytest.raises(ValueError, match="needs 8 slots, storage has 4"):
        make_tensor(np.zeros(4, np.uint32), make_layout(8))
    with pytest.raises(TypeError, match="only register tensor elements can be written"):
        s[0] = 1


def test_construction_errors():
    with pytest.raises(ValueError, match="more than 3 modes"):
        make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1, 1)))
    with pytest.raises(ValueError, match="permutation modes must be static"):
        make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (DInt(64), 16, 16))
    with pytest.raises(ValueError, match="thr_layout must be a static Layout"):
        make_tiled_copy(Copy_Atom(UniversalCopy(128), "f16"), make_layout((DInt(32), 4)))
    with pytest.raises(TypeError, match="expected an MMA operation"):
        MMA_Atom(5)
    with pytest.raises(TypeError, match="expected an MMA atom or operation"):
        make_tiled_mma("x")


def test_partition_mismatch_names_the_value_mode():
    """The atom moves 1 value per thread; a 32-value mode 0 is not a partition by it."""
    tiled = make_tiled_copy(Copy_Atom(UniversalCopy(16), "f16"))
    with pytest.raises(ValueError, match=r"\(src _32, dst _32\) does not match the instruction's 1/1 values per "
                                         r"thread: mode 0 of a partitioned tensor is the atom's value mode"):
        copy_calls(tiled, smem(32, 1), make_tensor("f16", make_layout(32)))
