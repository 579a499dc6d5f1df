"""On a real GPU (skipped without CuPy or a GPU, and without a way to the PTX): the front doors' PTX, loaded by
the driver, gives the bits warpsim gives when it runs the same PTX.

The PTX is what ``warpsim.frontends`` makes (nvcc and the CuTe headers for the C++ kernels, the CuTe DSL for
the DSL ones) for the device's arch (sm_80 or sm_90; sm_89 runs sm_80 code), or, on a GPU machine without those,
the PTX exported where they are (``python -m hwcheck.runs.ptx_examples --export DIR --arch sm_90``, then
``HWCHECK_PTX_DIR=DIR``), loaded with ``cupy.RawModule(path=...)`` and launched with the same inputs. CuTe DSL
tensors with static shapes are 8-byte structs holding the pointer alone, passed as the device pointer; the
16-byte structs of ``tile_cp_async_dsl.py`` are left to the simulator tests. Run:
``python -m pytest -q -m gpu tests/ptx_front`` (with ``HWCHECK_PTX_DIR=DIR`` on a machine without the compilers).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from hwcheck.runs.ptx_run import PTX_DIR_ENV, exported_ptx
from warpsim.frontends.kernel import open_kernel
from warpsim.frontends.nvcc import cute_include_dir
from warpsim.frontends.source import compile_source
from warpsim.toolchain import find_nvcc

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
SEEDS = range(5)


@pytest.fixture(scope="module")
def device():
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        major, minor = cp.cuda.Device(0).compute_capability[:1], cp.cuda.Device(0).compute_capability[1:]
    except Exception as e:                       # noqa: BLE001 -- no driver / no device: skip with its words
        pytest.skip(f"no CUDA GPU: {e}")
    arch = {"80": "sm_80", "86": "sm_80", "89": "sm_80", "90": "sm_90"}.get(major + minor)
    if arch is None:
        pytest.skip(f"no tensor-core model for compute capability {major + minor}")
    return cp, arch


def compiled_or_skip(source, arch):
    """``source``'s PTX for ``arch``: exported (``$HWCHECK_PTX_DIR``) if there, else compiled here; skips, saying
    what is missing, where neither can be had."""
    compiled = exported_ptx(source, arch)
    if compiled is not None:
        return compiled
    if str(source).endswith(".cu"):
        if find_nvcc() is None:
            pytest.skip(f"nvcc not found and no exported PTX of {source.name} (set {PTX_DIR_ENV})")
        if cute_include_dir() is None:
            pytest.skip(f"the CuTe headers (pip install nvidia-cutlass) not found and no exported PTX of "
                        f"{source.name} (set {PTX_DIR_ENV})")
    elif importlib.util.find_spec("cutlass") is None:
        pytest.skip(f"CuTe DSL not installed (pip install 'warpsim[dsl]') and no exported PTX of {source.name} "
                    f"(set {PTX_DIR_ENV})")
    return compile_source(source, arch)


def gpu_run(cp, tmp_path, source, kernel_name, arch, grid, block, args, smem=0):
    """Launch ``kernel_name`` of ``source``'s PTX on the GPU; ``args`` in parameter order (arrays or np scalars);
    returns the arrays after the run."""
    compiled = compiled_or_skip(source, arch)
    warp_kernel = open_kernel(source, kernel_name, arch=arch, compiled=compiled)
    text = next(t for t in compiled.modules if f".entry {warp_kernel.name}(" in t)
    path = tmp_path / f"{warp_kernel.name}.ptx"
    path.write_text(text)
    function = cp.RawModule(path=str(path)).get_function(warp_kernel.name)
    device_args = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    function(grid, block, tuple(device_args), shared_mem=smem)
    cp.cuda.Device().synchronize()
    return [cp.asnumpy(a) if isinstance(a, cp.ndarray) else a for a in device_args]


def sim_run(source, kernel_name, arch, grid, block, args, smem=0):
    k = open_kernel(source, kernel_name, arch=arch, compiled=compiled_or_skip(source, arch))
    res = k.launch(grid=grid, block=block, args=dict(enumerate(args)), smem=smem)
    return [res.buffers.get(p.name) for p in k.params]          # None for a scalar


def same_bits(got, want):
    return np.array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def f16(rng, shape):
    return rng.uniform(-2, 2, shape).astype(np.float16).view(np.uint16)


@pytest.mark.parametrize("name", [f"gemm_smem_{d}_{p}_{s}" for d in ("f16", "bf16") for p in ("qk", "pv")
                                  for s in ("swizzle", "plain")])
def test_gemm_smem_cpp_on_the_gpu(device, tmp_path, name):
    cp, arch = device
    source = ROOT / "examples/cute_cpp/gemm_smem.cu"
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        bits = f16(rng, (64, 64)) if "_f16_" in name else (rng.uniform(-2, 2, (64, 64)).astype(np.float32)
                                                          .view(np.uint32) >> 16).astype(np.uint16)
        args = [bits, f16(rng, (64, 64)) if "_f16_" in name else bits[::-1].copy(), np.zeros((64, 64), np.float32)]
        gpu = gpu_run(cp, tmp_path, source, name, arch, (1, 1, 1), (128, 1, 1), args)
        sim = sim_run(source, name, arch, 1, 128, args)
        assert same_bits(sim[2].reshape(64, 64), gpu[2]), f"{name} seed {seed}: warpsim and the GPU differ"


@pytest.mark.parametrize("source, name, shapes, block", [
    ("gemm_k8_warps2x2.cu", "gemm_k8_warps2x2", ((32, 64), (32, 64), (32, 32)), 128),
    ("gemm_f16acc_warps1x2.cu", "gemm_f16acc_warps1x2", ((16, 96), (32, 96), (16, 32)), 64),
])
def test_other_cpp_kernels_on_the_gpu(device, tmp_path, source, name, shapes, block):
    cp, arch = device
    rng = np.random.default_rng(0)
    out = np.zeros(shapes[2], np.float32 if "k8" in name else np.uint16)
    args = [f16(rng, shapes[0]), f16(rng, shapes[1]), out, np.int32(shapes[0][1])]
    gpu = gpu_run(cp, tmp_path, ROOT / "examples/cute_cpp" / source, name, arch, (1, 1, 1), (block, 1, 1), args)
    sim = sim_run(ROOT / "examples/cute_cpp" / source, name, arch, 1, block, [*args[:3], int(args[3])])
    assert same_bits(sim[2].reshape(shapes[2]), gpu[2])


def test_dsl_mma_on_the_gpu(device, tmp_path):
    cp, arch = device
    source = ROOT / "examples/cute_dsl/mma_ldmatrix_dsl.py"
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        args = [f16(rng, (16, 16)), f16(rng, (8, 16)), np.zeros((16, 8), np.float32)]
        gpu = gpu_run(cp, tmp_path, source, "mma_kernel", arch, (1, 1, 1), (32, 1, 1), args, smem=768)
        sim = sim_run(source, "mma_kernel", arch, 1, 32, args, smem=768)
        assert same_bits(sim[2].reshape(16, 8), gpu[2]), f"seed {seed}"
