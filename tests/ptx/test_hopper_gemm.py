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


@pytest.mark.parametrize("arg,message", [
    ("tma_a=tensormap:64x300:128B:random:f16:128x256", r"parameter tma_a .*: box extent 0 \(innermost first\) is 300: "
                                                        r"1 to 256"),
    ("tma_a=tensormap:64:128B:random:f16:128x256", r"--arg tma_a=tensormap:64:128B:random:f16:128x256: BOX 64 has 1 "
                                                   r"extents for a tensor of 2 axes"),
    ("tma_a=zeros:f16:64", r"parameter 'tma_a' is a 128-byte struct .*or, for a CUtensorMap, a warpsim\.TensorMap"),
])
def test_a_bad_tensor_map_argument_is_one_line_naming_it(arg, message):
    import re
    import subprocess
    import sys
    _kernel("gemm_tn")
    out = subprocess.run([sys.executable, "-m", "warpsim", "run", SOURCE, "--kernel", "gemm_tn", "--grid", "2,2",
                          "--block", "256", "--smem", "50176", "--arg", arg,
                          "--arg", "tma_b=tensormap:64x64:128B:random:f16:128x256", "--arg", "c=zeros:f32:128x128",
                          "--arg", "M=128", "--arg", "N=128", "--arg", "K=256"], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
    assert re.search(message, out.stderr), out.stderr
