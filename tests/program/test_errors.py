"""Bad programs get clear errors naming the operation, the tensors, the source line and the lanes."""

import inspect
import warnings

import numpy as np
import pytest

from warpsim import ProgramError, ProgramWarning, SimulatorFault
from warpsim.cute import (
    Copy_Atom, SM75_U16x8_LDSM_T, SM75_U32x4_LDSM_N, SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x16_F32F16F16F32_TN,
    Swizzle, UniversalCopy, _, composition, make_layout, make_smem_ptr, make_tensor, make_tiled_copy,
    make_fragment_like, make_tiled_copy_A, make_tiled_copy_B, make_tiled_mma, partition_fragment_C,
    tile_to_shape,
)
from warpsim.program import Program, clear, copy, gemm, syncthreads
from warpsim.program.run import run_program

MMA = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((1, 1, 1)), (16, 16, 16))   # one warp
SWIZZLED_ATOM = composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1)))
SWIZZLED = tile_to_shape(SWIZZLED_ATOM, (64, 64))


def line_of(fn, text):
    """The source line number of the first line of ``fn`` containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def one_warp(fn, **kw):
    return Program(fn, threads=32, smem_bytes=16384, **kw)


# -- copies ------------------------------------------------------------------------------------

def shape_mismatch(tid):
    sQ = make_tensor(make_smem_ptr(0, "f16"), tile_to_shape(SWIZZLED_ATOM, (16, 64)))
    sK = make_tensor(make_smem_ptr(8192, "f16"), SWIZZLED)
    thr = MMA.get_slice(tid)
    tSrK = thr.partition_fragment_B(sK)
    copy_a = make_tiled_copy_A(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), MMA).get_slice(tid)
    copy_b = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), MMA).get_slice(tid)
    copy(copy_a.tiled_copy, copy_a.partition_S(sQ)[_, _, 0], copy_b.retile_D(tSrK)[_, _, 0])   # Q (8,1) into K's (8,4)


def test_copy_between_tensors_of_different_shapes():
    with pytest.raises(ProgramError) as e:
        run_program(one_warp(shape_mismatch))
    message = str(e.value)
    assert "copy(SM75_U32x4_LDSM_N)" in message and "shapes do not match" in message
    assert f"test_errors.py:{line_of(shape_mismatch, 'into K')}" in message
    assert "smem f16 tensor" in message and "rmem f16 tensor" in message


def transposed_atom_on_k_major(tid):
    sK = make_tensor(make_smem_ptr(0, "f16"), SWIZZLED)      # (n, k), k contiguous: ldmatrix.trans needs n rows
    thr = MMA.get_slice(tid)
    tSrK = thr.partition_fragment_B(sK)
    tc = make_tiled_copy_B(Copy_Atom(SM75_U16x8_LDSM_T(), "f16"), MMA)
    thr_copy = tc.get_slice(tid)
    copy(tc, thr_copy.partition_S(sK)[_, _, 0], thr_copy.retile_D(tSrK)[_, _, 0])


def test_ldmatrix_on_a_layout_the_atom_cannot_serve():
    with pytest.raises(ProgramError) as e:
        run_program(one_warp(transposed_atom_on_k_major))
    message = str(e.value)
    assert "copy(SM75_U16x8_LDSM_T)" in message and "vectorize" in message
    assert f"test_errors.py:{line_of(transposed_atom_on_k_major, 'copy(tc')}" in message


def misaligned_rows(tid):
    sK = make_tensor(make_smem_ptr(8192 + 2, "f16"), SWIZZLED)     # every row 2 bytes off
    tSrK = MMA.get_slice(tid).partition_fragment_B(sK)
    tc = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), MMA)
    thr_copy = tc.get_slice(tid)
    copy(tc, thr_copy.partition_S(sK)[_, _, 1], thr_copy.retile_D(tSrK)[_, _, 1])


def test_ldmatrix_rows_must_be_16_byte_aligned():
    with pytest.raises(ProgramError) as e:
        run_program(one_warp(misaligned_rows))
    message = str(e.value)
    assert "not 16-byte aligned" in message and "lane 0" in message and "0x2022" in message
    assert "src element" in message and f"test_errors.py:{line_of(misaligned_rows, 'copy(tc')}" in message


def register_to_register(tid):
    a = make_tensor("f32", (4,))
    b = make_tensor("f32", (4,))
    clear(a)
    copy(Copy_Atom(UniversalCopy(32), "f32"), a, b)


def test_register_to_register_copy_is_refused():
    with pytest.raises(ProgramError, match="register-to-register"):
        run_program(one_warp(register_to_register))


def gemm_wrong_type(tid):
    s = make_tensor(make_smem_ptr(0, "bf16"), SWIZZLED)
    thr = MMA.get_slice(tid)
    acc = partition_fragment_C(MMA, (64, 64))
    clear(acc)
    tA = make_tensor("bf16", thr.partition_fragment_A(s).layout)        # bf16 registers for an f16 mma
    gemm(MMA, tA[_, _, 0], thr.partition_fragment_B(s)[_, _, 0], acc)


def test_gemm_with_fragments_of_another_type():
    with pytest.raises(ProgramError, match="A holds bf16, but the atom takes f16"):
        run_program(one_warp(gemm_wrong_type))


# -- divergence and barriers ---------------------------------------------------------------------

def divergent(tid):
    if tid % 32 < 16:                       # lanes disagree
        syncthreads()


def test_divergent_branch_vector_mode():
    with pytest.raises(ProgramError) as e:
        run_program(one_warp(divergent))
    message = str(e.value)
    assert f"test_errors.py:{line_of(divergent, 'lanes disagree')}" in message
    assert "lanes 0-15: True" in message and "lanes 16-31: False" in message


def test_divergent_branch_thread_mode():
    with pytest.raises(ProgramError) as e:
        run_program(one_warp(divergent), mode="thread")
    message = str(e.value)
    assert "divergent lanes in warp 0" in message and "lanes 0-15 issue bar.sync" in message
    assert "lanes 16-31 have finished" in message
    assert f"test_errors.py:{line_of(divergent, 'syncthreads()')}" in message


def uneven_barriers(tid):
    if tid // 32 == 0:                      # warp-uniform: fine for lanes, but warp 1 skips the barrier
        syncthreads()


def test_warp_uniform_branch_is_allowed_but_barriers_must_match():
    with pytest.raises(ProgramError, match=r"warp 0: 1, warp 1: 0"):
        run_program(Program(uneven_barriers, threads=64))


def lane_dependent_registers(tid):
    frag = make_tensor("f32", (32,))
    clear(frag[tid % 32])                   # each lane a different register


def test_lane_dependent_register_index():
    with pytest.raises(ProgramError):
        run_program(one_warp(lane_dependent_registers))


def test_operation_outside_a_program():
    with pytest.raises(ProgramError, match="outside a traced program"):
        syncthreads()


def raises_inside(tid):
    return {}["missing"]                    # a bug in the program


def test_exception_in_program_names_the_line():
    with pytest.raises(ProgramError) as e:
        run_program(one_warp(raises_inside))
    assert "KeyError" in str(e.value) and f"test_errors.py:{line_of(raises_inside, 'a bug')}" in str(e.value)


# -- registers read before written ---------------------------------------------------------------

def forgot_clear(tid):
    s = make_tensor(make_smem_ptr(0, "f16"), SWIZZLED)
    thr = MMA.get_slice(tid)
    acc = partition_fragment_C(MMA, (64, 64))
    tA, tB = thr.partition_fragment_A(s), thr.partition_fragment_B(s)
    ca = make_tiled_copy_A(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), MMA).get_slice(tid)
    cb = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), MMA).get_slice(tid)
    copy(ca.tiled_copy, ca.partition_S(s)[_, _, 0], ca.retile_D(tA)[_, _, 0])
    copy(cb.tiled_copy, cb.partition_S(s)[_, _, 0], cb.retile_D(tB)[_, _, 0])
    gemm(MMA, tA[_, _, 0], tB[_, _, 0], acc)                    # acc never cleared


def test_read_before_write_warns_and_strict_raises():
    program = one_warp(forgot_clear)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_program(program)
    found = [w for w in caught if issubclass(w.category, ProgramWarning)]
    assert len(found) == 1, [str(w.message) for w in caught]
    message = str(found[0].message)
    assert message.startswith("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    # registers are allocated at first use: tA's 128 f16 slots take r0-r63, tB's r64-r127, acc from r128
    assert f"test_errors.py:{line_of(forgot_clear, 'acc never cleared')}" in message and "reads r128," in message
    with pytest.raises(ProgramError, match="which no instruction wrote before"):
        run_program(program, strict=True)


# -- simulated faults ----------------------------------------------------------------------------

def out_of_shared_memory(tid):
    sK = make_tensor(make_smem_ptr(16384, "f16"), SWIZZLED)      # past the 16 KiB of the CTA
    tSrK = MMA.get_slice(tid).partition_fragment_B(sK)
    tc = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), MMA)
    thr_copy = tc.get_slice(tid)
    copy(tc, thr_copy.partition_S(sK)[_, _, 0], thr_copy.retile_D(tSrK)[_, _, 0])


def test_fault_names_instruction_warp_lane_value_and_line():
    with pytest.raises(SimulatorFault) as e:
        run_program(one_warp(out_of_shared_memory))
    message = str(e.value)
    assert message.startswith("ldmatrix.sync.aligned.m8n8.x4.shared.b16: warp 0 lane 0: address 0x4000")
    assert "outside shared memory" in message
    assert f"test_errors.py:{line_of(out_of_shared_memory, 'copy(tc')}" in message


def misaligned_global(tid, *, x):
    tc = make_tiled_copy(Copy_Atom(UniversalCopy(64), "f16"), make_layout((32, 1)), make_layout((1, 4)))
    thr = tc.get_slice(tid)
    shifted = make_tensor(make_smem_ptr(2, "f16"), make_layout((32, 4), (4, 1)))
    src = thr.partition_S(shifted)
    copy(tc, src, make_fragment_like(src))   # 8-byte loads at 2 + 8 t


def test_misaligned_vector_load_faults():
    with pytest.raises(SimulatorFault) as e:
        run_program(one_warp(misaligned_global, inputs={"x": ((4,), "f16")}))
    message = str(e.value)
    assert message.startswith("ld.shared.v2.b32: warp 0 lane 0: address 0x2 is not 8-byte aligned")
    assert f"test_errors.py:{line_of(misaligned_global, '8-byte loads')}" in message


# -- program declarations and inputs ---------------------------------------------------------------

def nothing(tid, *, x, n=4):
    pass


def test_bad_params_and_inputs():
    program = Program(nothing, threads=32, params={"n": (4, 8)}, inputs={"x": ((4, 4), "bf16")})
    with pytest.raises(ValueError, match=r"param n='5' is not one of the choices: 4, 8"):
        run_program(program, {"n": "5"})
    with pytest.raises(ValueError, match=r"unknown input 'y' \(inputs: x\)"):
        run_program(program, inputs={"y": np.zeros((4, 4), np.uint16)})
    with pytest.raises(ValueError, match=r"must have shape \(4, 4\)"):
        run_program(program, inputs={"x": np.zeros((4, 5), np.uint16)})
    with pytest.raises(ValueError, match=r"give raw bits \(uint16\) or bfloat16 values, got float32"):
        run_program(program, inputs={"x": np.zeros((4, 4), np.float32)})
    with pytest.raises(ValueError, match="multiple of 32"):
        Program(nothing, threads=48).threads({})
    with pytest.raises(TypeError):
        Program(nothing, threads=32, params={"n": ()})
    assert run_program(program, {"n": 8}).params == {"n": 8}


def test_bf16_atom_program_runs():
    """A bf16 MMA through ldmatrix on one warp: the ops accept the atom's own fragment types."""
    mma = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN(), make_layout((1, 1, 1)), (16, 16, 16))

    def kernel(tid):
        s = make_tensor(make_smem_ptr(0, "bf16"), SWIZZLED)
        thr = mma.get_slice(tid)
        acc = partition_fragment_C(mma, (64, 64))
        clear(acc)
        tA, tB = thr.partition_fragment_A(s), thr.partition_fragment_B(s)
        ca = make_tiled_copy_A(Copy_Atom(SM75_U32x4_LDSM_N(), "bf16"), mma).get_slice(tid)
        cb = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "bf16"), mma).get_slice(tid)
        copy(ca.tiled_copy, ca.partition_S(s)[_, _, 0], ca.retile_D(tA)[_, _, 0])
        copy(cb.tiled_copy, cb.partition_S(s)[_, _, 0], cb.retile_D(tB)[_, _, 0])
        gemm(mma, tA[_, _, 0], tB[_, _, 0], acc)

    r = run_program(Program(kernel, threads=32, smem_bytes=8192))
    # a 64x64 tile on one warp's 16x8 atom: 4 M x 8 N calls for the one k-block
    assert r.stats.instructions["mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"] == 32
    assert (r.tensors["acc"] == 0).all()          # shared memory is zero: 0 * 0 + 0 = +0
