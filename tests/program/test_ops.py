"""Each operation on small programs, checked against an outside truth (numpy data movement, the ISA's
``cvt`` helper checked against IEEE rounding in ``tests/isa``, PTX's operand order)."""

import numpy as np
import pytest

from warpsim.cute import (
    Copy_Atom, UniversalCopy, make_fragment_like, make_layout, make_smem_ptr, make_tensor, make_tiled_copy,
)
from warpsim.isa.cvt import BF16_CODE, F16_CODE, cvt_f32_to_16
from warpsim.program import Program, clear, convert, copy, syncthreads
from warpsim.program.run import run_program


def rows_copy(dtype, bits, cols):
    """Thread t of a warp moves `bits` of row t per call: a (32, cols) tile."""
    per = bits // (32 if dtype == "f32" else 16)
    return make_tiled_copy(Copy_Atom(UniversalCopy(bits), dtype), make_layout((32, 1)), make_layout((1, per)))


@pytest.mark.parametrize("to", ["f16", "bf16"])
def test_convert_rounds_each_element_into_its_own_half(to):
    """y[t, j] = cvt.rn(x[t, j]); the even slot is the low half, the odd slot the high half (PTX cvt: a -> upper)."""
    load, store = rows_copy("f32", 128, 8), rows_copy(to, 64, 8)

    def kernel(tid, *, x, y):
        tx = load.get_slice(tid).partition_S(x)
        fx = make_fragment_like(tx)                       # f32 registers shaped like the thread's part of x
        copy(load, tx, fx)
        ty = store.get_slice(tid).partition_D(y)
        fy = make_fragment_like(ty)                       # 16-bit registers shaped like its part of y
        convert(fx, fy)
        copy(store, fy, ty)

    program = Program(kernel, threads=32, inputs={"x": ((32, 8), "f32")}, outputs={"y": ((32, 8), to)})
    rng = np.random.default_rng(7)
    x = rng.integers(0, 1 << 32, (32, 8), dtype=np.uint64).astype(np.uint32)
    x[::3] = (rng.uniform(-70000, 70000, (11, 8)).astype(np.float32)).view(np.uint32)   # finite, some overflow f16
    r = run_program(program, inputs={"x": x})
    code = F16_CODE if to == "f16" else BF16_CODE
    want = np.array([[cvt_f32_to_16(int(v), code) for v in row] for row in x], np.uint16)
    bad = np.argwhere(r.outputs["y"] != want)
    assert not bad.size, (f"y{tuple(bad[0])}: cvt of {int(x[tuple(bad[0])]):#010x} expected {int(want[tuple(bad[0])]):#06x}, "
                          f"got {int(r.outputs['y'][tuple(bad[0])]):#06x}")
    assert r.stats.instructions["cvt.rn." + to + "x2.f32"] == 4          # 8 elements = 4 registers per thread


def test_clear_zeroes_every_register_of_a_fragment():
    load = rows_copy("f32", 128, 8)

    def kernel(tid, *, x, y):
        tx = load.get_slice(tid).partition_S(x)
        frag = make_fragment_like(tx)
        copy(load, tx, frag)
        clear(frag)
        copy(load, frag, load.get_slice(tid).partition_D(y))

    x = np.arange(1, 257, dtype=np.uint32).reshape(32, 8)
    r = run_program(Program(kernel, threads=32, inputs={"x": ((32, 8), "f32")}, outputs={"y": ((32, 8), "f32")}),
                    inputs={"x": x})
    assert (r.outputs["y"] == 0).all() and r.stats.instructions["mov.b32"] == 2


@pytest.mark.parametrize("bits", [16, 32, 64, 128])
def test_global_to_shared_to_global_through_a_transposed_layout(bits):
    """Memory-to-memory copies (through scratch registers) of every width move the bytes numpy says.

    x (32 x 64, row-major) goes to shared memory, is read back through the column-major view of a
    (64 x 32) tile, and written out row-major: y = x.T.
    """
    per = bits // 16
    to_smem = make_tiled_copy(Copy_Atom(UniversalCopy(bits), "u16"), make_layout((32, 1)), make_layout((1, per)))
    # each thread reads one column of x^T's (64 x 32) column-major image: 16-bit accesses only
    from_smem = make_tiled_copy(Copy_Atom(UniversalCopy(16), "u16"), make_layout((32, 1), (1, 0)), make_layout((1, 1)))

    def kernel(tid, *, x, y):
        s = make_tensor(make_smem_ptr(0, "u16"), make_layout((32, 64), (64, 1)))
        t = to_smem.get_slice(tid)
        copy(to_smem, t.partition_S(x), t.partition_D(s))
        syncthreads()
        st = make_tensor(make_smem_ptr(0, "u16"), make_layout((64, 32), (1, 64)))    # (j, i) -> s[i, j]
        f = from_smem.get_slice(tid)
        copy(from_smem, f.partition_S(st), f.partition_D(y))

    program = Program(kernel, threads=32, smem_bytes=4096, inputs={"x": ((32, 64), "u16")},
                      outputs={"y": ((64, 32), "u16")})
    r = run_program(program, seed=bits)
    assert np.array_equal(r.outputs["y"], r.inputs["x"].T)
    width = {16: "b16", 32: "b32", 64: "v2.b32", 128: "v4.b32"}[bits]
    # 32 x 64 elements of 16 bits, 32 lanes x `bits` per warp instruction
    assert r.stats.instructions[f"ld.global.{width}"] == 32 * 64 * 16 // (32 * bits)
    assert r.stats.instructions[f"st.shared.{width}"] == 32 * 64 * 16 // (32 * bits)


def test_16_bit_loads_fill_both_halves_of_a_register():
    """Two 16-bit loads into slots 2j and 2j+1 make register j = hi << 16 | lo."""
    load = rows_copy("u16", 16, 2)

    def kernel(tid, *, x):
        tx = load.get_slice(tid).partition_S(x)
        pair = make_fragment_like(tx)
        copy(load, tx, pair)

    x = np.arange(64, dtype=np.uint16).reshape(32, 2) + 0x1000
    r = run_program(Program(kernel, threads=32, inputs={"x": ((32, 2), "u16")}), inputs={"x": x})
    assert np.array_equal(r.tensors["pair"], x)                         # storage order: slot j = column j
    regs = r.machine.regs[0, :, 0]
    assert np.array_equal(regs, x[:, 0].astype(np.uint32) | (x[:, 1].astype(np.uint32) << 16))


def _small_gemm(atom, ldsm_a, ldsm_b, dtype, cd, k):
    """One warp: C (16 x 8) = A (16 x 32) B^T (8 x 32) through shared memory and ldmatrix, k-block by k-block."""
    from warpsim.cute import (_, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma,
                              partition_fragment_C)
    from warpsim.program import gemm
    mma = make_tiled_mma(atom(), make_layout((1, 1, 1)), (16, 8, k))
    g2s = make_tiled_copy(Copy_Atom(UniversalCopy(128), dtype), make_layout((8, 4), (4, 1)), make_layout((1, 8)))
    copy_a = make_tiled_copy_A(Copy_Atom(ldsm_a(), dtype), mma)
    copy_b = make_tiled_copy_B(Copy_Atom(ldsm_b(), dtype), mma)
    store = make_tiled_copy_C(Copy_Atom(UniversalCopy(64 if cd == "f32" else 32), cd), mma)

    def kernel(tid, *, a, b, c):
        sA = make_tensor(make_smem_ptr(0, dtype), make_layout((16, 32), (32, 1)))
        sB = make_tensor(make_smem_ptr(1024, dtype), make_layout((8, 32), (32, 1)))
        t = g2s.get_slice(tid)
        copy(g2s, t.partition_S(a), t.partition_D(sA))
        copy(g2s, t.partition_S(b), t.partition_D(sB))
        syncthreads()
        thr = mma.get_slice(tid)
        tA, tB = thr.partition_fragment_A(sA), thr.partition_fragment_B(sB)
        acc = partition_fragment_C(mma, (16, 8))
        clear(acc)
        ta, tb = copy_a.get_slice(tid), copy_b.get_slice(tid)
        sa, va, sb, vb = ta.partition_S(sA), ta.retile_D(tA), tb.partition_S(sB), tb.retile_D(tB)
        for i in range(32 // k):
            copy(copy_a, sa[_, _, i], va[_, _, i])
            copy(copy_b, sb[_, _, i], vb[_, _, i])
            gemm(mma, tA[_, _, i], tB[_, _, i], acc)
        ts = store.get_slice(tid)
        copy(store, ts.retile_S(acc), ts.partition_D(c))

    return Program(kernel, threads=32, smem_bytes=1536, inputs={"a": ((16, 32), dtype), "b": ((8, 32), dtype)},
                   outputs={"c": ((16, 8), cd)})


def _gemm_cases():
    from warpsim.cute import (SM75_U32x1_LDSM_N, SM75_U32x2_LDSM_N, SM75_U32x4_LDSM_N,
                              SM80_16x8x8_F32BF16BF16F32_TN, SM80_16x8x8_F16F16F16F16_TN,
                              SM80_16x8x16_F16F16F16F16_TN, SM80_16x8x16_F32BF16BF16F32_TN)
    return [(SM80_16x8x16_F16F16F16F16_TN, SM75_U32x4_LDSM_N, SM75_U32x2_LDSM_N, "f16", "f16", 16),
            (SM80_16x8x16_F32BF16BF16F32_TN, SM75_U32x4_LDSM_N, SM75_U32x2_LDSM_N, "bf16", "f32", 16),
            (SM80_16x8x8_F16F16F16F16_TN, SM75_U32x2_LDSM_N, SM75_U32x1_LDSM_N, "f16", "f16", 8),
            (SM80_16x8x8_F32BF16BF16F32_TN, SM75_U32x2_LDSM_N, SM75_U32x1_LDSM_N, "bf16", "f32", 8)]


@pytest.mark.parametrize("arch", ["sm90", "sm80"])
@pytest.mark.parametrize("case", _gemm_cases(), ids=lambda c: c[0].__name__)
def test_other_atoms_and_ldmatrix_widths_match_the_model(case, arch):
    """m16n8k8, f16 accumulators, ldmatrix .x1/.x2: the result equals the model in k-block order."""
    from warpsim.program.reference import gemm_reference
    atom, ldsm_a, ldsm_b, dtype, cd, k = case
    r = run_program(_small_gemm(atom, ldsm_a, ldsm_b, dtype, cd, k), seed=k, arch=arch)
    want = gemm_reference(r.inputs["a"], r.inputs["b"], ab=dtype, cd=cd, arch=arch, k_block=k)
    got = r.outputs["c"]
    assert np.array_equal(got, want.astype(got.dtype)), f"first difference at {np.argwhere(got != want)[0]}"
    nums = {1: "x1", 2: "x2", 4: "x4"}
    for op in (ldsm_a(), ldsm_b()):
        assert f"ldmatrix.sync.aligned.m8n8.{nums[op.num]}.shared.b16" in r.stats.instructions
