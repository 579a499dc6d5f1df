"""The CuTe C++ kernels of ``examples/cute_cpp/as_compiled/``, built with nvcc's default flags (FMA contraction
left to the compilers): each compiles with no rounding intrinsic in its PTX, runs on the simulator at a small
size, and its outputs are close to a float64 numpy reference (inputs uniform in [-2, 2]).

Closeness, not bits: the GPU may contract mul+add pairs into FMAs where the simulator (until it models ptxas's
choice) does not; ``hwcheck acceptance --only as-compiled`` compares them with the GPU bit for bit.
"""

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from warpsim.frontends.kernel import open_kernel, source_param_names
from warpsim.frontends.nvcc import cute_include_dir, source_nvcc_flags
from warpsim.frontends.source import compile_source

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "examples" / "cute_cpp" / "as_compiled"
pytestmark = pytest.mark.usefixtures("need_interpreter", "need_nvcc", "need_cute_headers")


@pytest.fixture
def need_cute_headers():
    if cute_include_dir() is None:
        pytest.skip("the CuTe C++ headers (cute/tensor.hpp, from the nvidia-cutlass wheel) are not installed")


@lru_cache(maxsize=None)
def kernel(source, name):
    return open_kernel(FOLDER / source, name, arch="sm_90")


def uniform(rng, shape, dtype):
    return rng.uniform(-2.0, 2.0, shape).astype(dtype)


def run(source, name, grid, args, smem=0):
    k = kernel(source, name)
    return k.buffers(k.launch(grid=grid, block=128, args=args, smem=smem))


def test_every_source_is_built_with_the_defaults():
    """No flags of its own and no rounding intrinsics: plain mul/add/sub.f32 in the PTX, none with .rn."""
    sources = sorted(FOLDER.glob("*.cu"))
    assert len(sources) >= 5
    for path in sources:
        assert source_nvcc_flags(path.read_text()) == (), path.name
        ptx = compile_source(path, "sm_90").ptx
        assert re.search(r"^\s*(mul|add|sub)\.f32", ptx, re.MULTILINE), path.name
        assert not re.search(r"^\s*(mul|add|sub)\.rn\.f32", ptx, re.MULTILINE), path.name


def attention(q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    return p @ v / p.sum(-1, keepdims=True), (m + np.log(p.sum(-1, keepdims=True)))[..., 0]


@pytest.mark.parametrize("causal, B, H, N", [(False, 1, 2, 100), (True, 2, 1, 130)])
def test_flash_attention_forward(causal, B, H, N):
    rng = np.random.default_rng(0)
    q, k, v = (uniform(rng, (B, H, N, 64), np.float16) for _ in range(3))
    softmax_scale = np.float32(1 / 8)
    args = dict(q=q, k=k, v=v, o=np.zeros_like(q), lse=np.zeros((B, H, N), np.float32), N=N,
                scale_log2=float(softmax_scale * np.float32(np.log2(np.e))), softmax_scale=float(softmax_scale))
    got = run("flash_attn_fwd.cu", "flash_fwd_f16_d64" + ("_causal" if causal else ""), (-(-N // 64), H, B), args,
              smem=40960)
    o, lse = attention(q, k, v, causal)
    np.testing.assert_allclose(got["o"].astype(np.float64), o, atol=2e-3, rtol=0)    # P and O rounded to f16
    np.testing.assert_allclose(got["lse"], lse, atol=1e-5, rtol=0)


@pytest.mark.parametrize("name, out", [("gemm_tn_f32", np.float32), ("gemm_tn_f16", np.float16)])
def test_gemm_alpha_beta(name, out):
    rng = np.random.default_rng(1)
    M, N, K, alpha, beta = 128, 64, 96, 1.5, -0.75
    a, b, c = uniform(rng, (M, K), np.float16), uniform(rng, (N, K), np.float16), uniform(rng, (M, N), out)
    args = dict(a=a, b=b, c=c, M=M, N=N, K=K, alpha=alpha, beta=beta)
    got = run("gemm_alpha_beta.cu", name, (M // 64, N // 64), args)["c"].astype(np.float64)
    want = alpha * (a.astype(np.float64) @ b.astype(np.float64).T) + beta * c.astype(np.float64)
    rtol = 2e-7 * K if out is np.float32 else 2.0 ** -11                          # f32 sums; f16's last bit
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5 * K)


def test_row_softmax():
    rng = np.random.default_rng(2)
    rows, cols = 6, 300
    x = uniform(rng, (rows, cols), np.float32)
    got = run("softmax.cu", "softmax_rows", -(-rows // 4), dict(x=x, y=np.zeros_like(x), rows=rows, cols=cols))["y"]
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=2e-6, atol=0)


def test_layer_norm():
    rng = np.random.default_rng(3)
    rows, cols, eps = 3, 500, 1e-5
    x = uniform(rng, (rows, cols), np.float16)
    gamma, beta = uniform(rng, cols, np.float16), uniform(rng, cols, np.float16)
    got = run("layer_norm.cu", "layer_norm_fwd", rows,
              dict(x=x, gamma=gamma, beta=beta, y=np.zeros_like(x), mean=np.zeros(rows, np.float32),
                   rstd=np.zeros(rows, np.float32), rows=rows, cols=cols, eps=eps))
    xd = x.astype(np.float64)
    mean = xd.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((xd - mean) ** 2).mean(1, keepdims=True) + eps)
    want = (xd - mean) * rstd * gamma.astype(np.float64) + beta.astype(np.float64)
    np.testing.assert_allclose(got["mean"], mean[:, 0], atol=1e-6, rtol=0)
    np.testing.assert_allclose(got["rstd"], rstd[:, 0], rtol=1e-6, atol=0)             # rsqrt.approx: 2 ulp
    np.testing.assert_allclose(got["y"].astype(np.float64), want, rtol=2.0 ** -10, atol=1e-3)


def test_rms_norm():
    rng = np.random.default_rng(4)
    rows, cols, eps = 5, 200, 1e-6
    x, weight = uniform(rng, (rows, cols), np.float32), uniform(rng, cols, np.float32)
    got = run("rms_norm.cu", "rms_norm_fwd", -(-rows // 4),
              dict(x=x, weight=weight, y=np.zeros_like(x), rows=rows, cols=cols, eps=eps))["y"]
    xd = x.astype(np.float64)
    want = xd / np.sqrt((xd ** 2).mean(1, keepdims=True) + eps) * weight
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_the_gpu_set_launches_every_kernel():
    """``hwcheck acceptance --only as-compiled``: every kernel of the folder; the flash forward causal and not at
    N 128, 300 and 1024 with B and H 1..2, on the recipe's launch."""
    from hwcheck.runs.ptx_examples import AS_COMPILED_EXAMPLES
    from warpsim.frontends.args import parse_arg
    assert 16 <= len(AS_COMPILED_EXAMPLES) <= 24
    launched = {(Path(e[0]).name, e[1]) for e in AS_COMPILED_EXAMPLES}
    for path in FOLDER.glob("*.cu"):
        names = source_param_names(path.read_text(), "cuda")
        assert names and all((path.name, n) in launched for n in names), path.name
    flash = [(e[1], dict(parse_arg(a) for a in e[5]), e[2:5]) for e in AS_COMPILED_EXAMPLES
             if e[0].endswith("flash_attn_fwd.cu")]
    for kernel in ("flash_fwd_f16_d64", "flash_fwd_f16_d64_causal"):
        shapes = [specs["q"][2] for name, specs, _ in flash if name == kernel]
        assert sorted(n for *_, n, _d in shapes) == [128, 300, 1024]
    shapes = {specs["q"][2] for _, specs, _ in flash}
    assert {b for b, *_ in shapes} == {h for _, h, *_ in shapes} == {1, 2}
    for _, specs, (grid, block, smem) in flash:
        B, H, N, _d = specs["q"][2]
        assert (grid, block, smem) == (f"{-(-N // 64)},{H},{B}", 128, 40960) and specs["N"] == N
