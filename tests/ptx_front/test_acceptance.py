"""Acceptance of the PTX front doors: real CuTe C++ and CuTe DSL kernels run from their PTX, bit for bit.

- ``examples/cute_cpp/gemm_smem.cu`` (nvcc, sm_80 and sm_90): every accumulator equals the one
  ``examples/gemm_smem.py`` computes for the same inputs (its random inputs of seeds 0..4), for all
  8 combinations of f16/bf16 x qk/pv x swizzle yes/no;
- the two other CuTe C++ kernels and the three CuTe DSL kernels against the arithmetic model
  (``warpsim.program.reference.gemm_reference``) or, for the copy, the input itself.
"""

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import warpsim
from warpsim.frontends.kernel import open_kernel
from warpsim.program.program import load_program
from warpsim.program.reference import gemm_reference
from warpsim.testing import assert_bits_equal

ROOT = Path(__file__).resolve().parents[2]
SEEDS = range(5)
ARCHS = ("sm_80", "sm_90")
pytestmark = pytest.mark.usefixtures("need_interpreter", "need_nvcc")


@lru_cache(maxsize=None)
def kernel(source, name, arch):
    return open_kernel(ROOT / source, name, arch=arch)


def f16_bits(rng, shape, dtype="f16"):
    """Finite random 16-bit patterns of ``dtype`` (f16 or bf16), magnitudes below 2."""
    values = rng.uniform(-2.0, 2.0, shape)
    if dtype == "f16":
        return values.astype(np.float16).view(np.uint16)
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def where_accumulator(index):
    """The (warp, lane, register) of the seed's TiledMMA that holds accumulator (m, n) (4 warps along M)."""
    m, n = index
    warp, row, col = m // 16, m % 16, n % 8
    lane = (row % 8) * 4 + col // 2
    return f"warp {warp} lane {lane} reg {(n // 8) * 4 + (row // 8) * 2 + col % 2}"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("product", ["qk", "pv"])
@pytest.mark.parametrize("swizzle", ["yes", "no"])
def test_gemm_smem_cpp_matches_the_python_program(arch, dtype, product, swizzle):
    program = load_program(ROOT / "examples/gemm_smem.py")
    name = f"gemm_smem_{dtype}_{product}_{'swizzle' if swizzle == 'yes' else 'plain'}"
    k = kernel("examples/cute_cpp/gemm_smem.cu", name, arch)
    second, out = ("k", "s") if product == "qk" else ("v", "o")
    for seed in SEEDS:
        want = warpsim.run_program(program, {"dtype": dtype, "product": product, "swizzle": swizzle}, seed=seed,
                                   arch=arch.replace("_", ""))
        args = {"q": want.inputs["q"], second: want.inputs[second], out: np.zeros((64, 64), np.float32)}
        got = k.buffers(k.launch(grid=1, block=128, args=args))[out].view(np.uint32).reshape(64, 64)
        assert_bits_equal(got, want.outputs[out].reshape(64, 64), dtype="f32", where=where_accumulator,
                          name=f"{name} {arch} seed {seed}: {out}")


@pytest.mark.parametrize("arch", ARCHS)
def test_gemm_k8_warps2x2(arch):
    k = kernel("examples/cute_cpp/gemm_k8_warps2x2.cu", "gemm_k8_warps2x2", arch)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        depth = 16 * (1 + seed)                                 # run-time K: 1..5 k-tiles
        a, b = f16_bits(rng, (32, depth)), f16_bits(rng, (32, depth))
        res = k.launch(grid=1, block=128, args={"a": a, "b": b, "c": np.zeros((32, 32), np.float32), "K": depth})
        want = gemm_reference(a, b, ab="f16", cd="f32", arch=arch.replace("_", ""), k_block=8)
        assert_bits_equal(k.buffers(res)["c"].view(np.uint32).reshape(32, 32), want, dtype="f32",
                          name=f"gemm_k8_warps2x2 {arch} K={depth}")


@pytest.mark.parametrize("arch", ARCHS)
def test_gemm_f16acc_warps1x2(arch):
    k = kernel("examples/cute_cpp/gemm_f16acc_warps1x2.cu", "gemm_f16acc_warps1x2", arch)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        depth = 32 * (1 + seed % 3)
        a, b = f16_bits(rng, (16, depth)), f16_bits(rng, (32, depth))
        res = k.launch(grid=1, block=64, args={"a": a, "b": b, "c": np.zeros((16, 32), np.uint16), "K": depth})
        want = (gemm_reference(a, b, ab="f16", cd="f16", arch=arch.replace("_", ""), k_block=16) & 0xFFFF)
        assert_bits_equal(k.buffers(res)["c"].view(np.uint16).reshape(16, 32), want.astype(np.uint16), dtype="f16",
                          name=f"gemm_f16acc_warps1x2 {arch} K={depth}")


@pytest.mark.usefixtures("need_dsl")
def test_dsl_copy():
    k = kernel("examples/cute_dsl/copy_dsl.py", "copy_kernel", "sm_80")
    src = np.random.default_rng(0).integers(0, 1 << 32, 1024, dtype=np.uint64).astype(np.uint32).view(np.float32)
    res = k.launch(grid=8, block=128, args={"src": src, "dst": np.zeros(1024, np.float32)})
    assert_bits_equal(k.buffers(res)["dst"].view(np.uint32).reshape(-1), src.view(np.uint32), name="dst")


@pytest.mark.usefixtures("need_dsl")
@pytest.mark.parametrize("arch", ARCHS)
def test_dsl_single_warp_mma(arch):
    k = kernel("examples/cute_dsl/mma_ldmatrix_dsl.py", "mma_kernel", arch)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        a, b = f16_bits(rng, (16, 16)), f16_bits(rng, (8, 16))
        res = k.launch(grid=1, block=32, smem=768, args={"a": a, "b": b, "c": np.zeros((16, 8), np.float32)})
        want = gemm_reference(a, b, ab="f16", cd="f32", arch=arch.replace("_", ""), k_block=16)
        assert_bits_equal(k.buffers(res)["c"].view(np.uint32).reshape(16, 8), want, dtype="f32", name=f"c seed {seed}")


@pytest.mark.usefixtures("need_dsl")
@pytest.mark.parametrize("arch", ARCHS)
def test_dsl_tile_cp_async_runtime_k(arch):
    k = kernel("examples/cute_dsl/tile_cp_async_dsl.py", "tile_kernel", arch)
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        depth = 32 * (1 + seed)                                 # run-time K: 1..5 k-tiles
        a, b = f16_bits(rng, (64, depth)), f16_bits(rng, (64, depth))
        args = {"a": [("u64", a), ("s32", depth), ("s32", depth)], "b": [("u64", b), ("s32", depth), ("s32", depth)],
                "c": np.zeros((64, 64), np.float32)}
        res = k.launch(grid=1, block=128, smem=8192, args=args)
        want = gemm_reference(a, b, ab="f16", cd="f32", arch=arch.replace("_", ""), k_block=16)
        assert_bits_equal(k.buffers(res)["c"].view(np.uint32).reshape(64, 64), want, dtype="f32",
                          name=f"tile_kernel {arch} K={depth}")


@pytest.mark.usefixtures("need_dsl")
def test_dsl_wgmma_gemm_is_the_reference_wgmma_chain():
    """examples/cute_dsl/wgmma_gemm_dsl.py (CuTe DSL's warpgroup MMA, K_SW128 shared memory, compiled for sm_90a): C
    is the reference wgmma over k16 steps of K, bit for bit, for K of one to three k-tiles."""
    from warpsim.isa.wgmma import wgmma
    k = kernel("examples/cute_dsl/wgmma_gemm_dsl.py", "wgmma_kernel", "sm_90")
    assert ".target sm_90a" in k.module.text
    for seed in SEEDS[:3]:
        rng = np.random.default_rng(seed)
        depth = 64 * (1 + seed)
        a, b = f16_bits(rng, (64, depth)), f16_bits(rng, (64, depth))
        args = {"a": [("u64", a), ("s32", depth), ("s32", depth)], "b": [("u64", b), ("s32", depth), ("s32", depth)],
                "c": np.zeros((64, 64), np.float32)}
        res = k.launch(grid=1, block=128, smem=16384, args=args)
        acc = None
        for k0 in range(0, depth, 16):
            acc = wgmma(a.view(np.uint16)[:, k0:k0 + 16], b.view(np.uint16)[:, k0:k0 + 16].T.copy(), acc)
        assert_bits_equal(k.buffers(res)["c"].view(np.uint32).reshape(64, 64), acc, dtype="f32",
                          name=f"wgmma_kernel K={depth}")


@pytest.mark.usefixtures("need_dsl")
def test_a_dsl_file_for_sm_90a_refuses_another_arch_in_one_line():
    from warpsim.frontends.compiled import CompileError
    with pytest.raises(CompileError, match=r"^wgmma_gemm_dsl.py: compiles only for --arch sm_90 \(its line "
                                           r"'# warpsim: arch sm_90a'\), not sm_80$"):
        open_kernel(ROOT / "examples/cute_dsl/wgmma_gemm_dsl.py", "wgmma_kernel", arch="sm_80")
