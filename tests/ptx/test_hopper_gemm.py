"""examples/hopper/tma_gemm.cu in the core: TMA loads into swizzled stages, mbarrier full/empty ring, a wgmma consumer
warpgroup; C by registers or by a TMA store. The result must be the reference wgmma chained over k16 steps, with the
TMA's zeros for the partial tiles' outside (M, N, K not multiples of 64), bit for bit."""

import os

import numpy as np
import pytest

from warpsim.isa.tma import TensorMap
from warpsim.isa.wgmma import wgmma

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "examples", "hopper", "tma_gemm.cu")


def _kernel(name):
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (examples/hopper/tma_gemm.cu is CUDA C++)")
    pytest.importorskip("cutlass_library", reason="the CuTe headers (pip install -e '.[cute]')")
    from warpsim.frontends.kernel import open_kernel
    return open_kernel(SOURCE, name, arch="sm_90")


def _reference(a, b):
    """C = A B^T as the kernel computes it: per 64 x 64 tile, wgmma over k16 steps of the zero-padded K."""
    m, k = a.shape
    n = b.shape[0]
    kp = -(-k // 64) * 64
    ap = np.zeros((-(-m // 64) * 64, kp), np.uint16)
    bp = np.zeros((-(-n // 64) * 64, kp), np.uint16)
    ap[:m, :k], bp[:n, :k] = a.view(np.uint16), b.view(np.uint16)
    c = np.zeros(ap.shape[:1] + bp.shape[:1], np.uint32)
    for m0 in range(0, ap.shape[0], 64):
        for n0 in range(0, bp.shape[0], 64):
            acc = None
            for k0 in range(0, kp, 16):
                acc = wgmma(ap[m0:m0 + 64, k0:k0 + 16], bp[n0:n0 + 64, k0:k0 + 16].T.copy(), acc)
            c[m0:m0 + 64, n0:n0 + 64] = acc
    return c[:m, :n]


@pytest.mark.parametrize("name", ["gemm_tn", "gemm_tn_tma_store"])
def test_the_tma_wgmma_gemm_is_the_reference(name):
    kernel = _kernel(name)
    rng = np.random.default_rng(4)
    m, n, k = 100, 148, 200
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    args = {"tma_a": TensorMap(a, (64, 64), "128B"), "tma_b": TensorMap(b, (64, 64), "128B"), "M": m, "N": n, "K": k}
    c = np.zeros((m, n), np.float32)
    args.update({"c": c} if name == "gemm_tn" else {"tma_c": TensorMap(c, (64, 64))})
    result = kernel.launch(grid=(-(-n // 64), -(-m // 64), 1), block=(256, 1, 1), smem=50176, args=args)
    got = result.buffers[f"{name}_param_2"]
    assert got.shape == (m, n) and np.array_equal(got.view(np.uint32), _reference(a, b))
    assert result.stats["by_opcode"]["cp_bulk"] >= 2 * 4 * 6 and result.stats["by_opcode"]["wgmma"] > 0
