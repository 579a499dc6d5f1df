"""The CuTe DSL flash-attention forward (``examples/cute_dsl/flash_fwd.py``) in the simulator, against float64 numpy.

- its PTX says what the recipe says (``ex2.approx.ftz.f32``, ``fma.rn.f32``, ``mul.rn.f32``, packed ``cvt.rn``,
  ``ldmatrix.trans``, ``cp.async``, ``shfl.sync.bfly``) and nothing ``ptxas`` may contract (``mul.f32``,
  ``add.f32`` without a rounding mode);
- small cases run (B=1, H=1, N=64 and 80, d=64; f16 and bf16; causal and not): O within a tolerance of T
  and LSE within 1e-3 of the float64 reference, the simulator checking every access stays in the buffers
  (N=80: the tails of Q, K, V are zero-filled, rows >= N not stored);
- ``--slow``: d=128, B=2, H=2, N up to 200.

The bit-exact proof is hwcheck on the H200 (``hwcheck/runs/ptx_examples.py``).
"""

import importlib.util
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest


ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "examples/cute_dsl/flash_fwd.py"
O_TOLERANCE = {"f16": 4e-3, "bf16": 2e-2}
LSE_TOLERANCE = 1e-3

pytestmark = pytest.mark.skipif(importlib.util.find_spec("cutlass") is None,
                                reason="CuTe DSL not installed (pip install 'warpsim[dsl]')")


def variant(dtype, d, causal):
    return f"flash_fwd_{dtype}_d{d}" + ("_causal" if causal else "")


VARIANT_NAMES = [variant(t, d, c) for t in ("f16", "bf16") for d in (64, 128) for c in (False, True)]


@lru_cache(maxsize=None)
def compiled():
    from warpsim.frontends.source import compile_source
    return compile_source(SOURCE, "sm_80")


@lru_cache(maxsize=None)
def kernel(name):
    from warpsim.frontends.kernel import open_kernel
    return open_kernel(SOURCE, name, arch="sm_80", compiled=compiled())


def module_of(name):
    """The PTX module of one variant (its ``.entry`` is ``<name>_<n>``)."""
    hits = [m for m in compiled().modules if re.search(rf"\.entry\s+{name}_\d+\s*\(", m)]
    assert len(hits) == 1, f"{name}: {len(hits)} modules"
    return hits[0]


def inputs(rng, shape, dtype):
    """Q, K or V: standard normal values rounded to T; the 16-bit patterns (uint16) and their float64 values."""
    values = rng.standard_normal(shape).astype(np.float32)
    if dtype == "f16":
        bits = values.astype(np.float16).view(np.uint16)
        return bits, bits.view(np.float16).astype(np.float64)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)          # truncated: exact bf16 values
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def reference(q, k, v, causal):
    """float64 attention: O [B, H, N, d] and LSE [B, H, N] (natural log), softmax scale 1/sqrt(d)."""
    n, d = q.shape[-2:]
    s = np.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(d)
    if causal:
        s = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, s)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", p / total, v), (m + np.log(total))[..., 0]


def to_float(bits, dtype):
    if dtype == "f16":
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@lru_cache(maxsize=None)
def example():
    """The example as a module (its host helpers: ``launch_args``); importing it compiles nothing."""
    spec = importlib.util.spec_from_file_location("flash_fwd_dsl_example", SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(dtype, d, causal, batches, heads, n, seed=0):
    """One launch of the variant; returns (O, LSE, reference O, reference LSE)."""
    rng = np.random.default_rng(seed)
    shape = (batches, heads, n, d)
    (q, qf), (k, kf), (v, vf) = (inputs(rng, shape, dtype) for _ in range(3))
    grid, smem, args = example().launch_args(q, k, v)
    kern = kernel(variant(dtype, d, causal))
    out = kern.buffers(kern.launch(grid=grid, block=128, smem=smem, args=args))
    o = to_float(out["o"].view(np.uint16).reshape(shape), dtype)
    lse = out["lse"].view(np.float32).reshape(shape[:3]).astype(np.float64)
    want_o, want_lse = reference(qf, kf, vf, causal)
    return o, lse, want_o, want_lse


def check(dtype, d, causal, batches, heads, n):
    o, lse, want_o, want_lse = run(dtype, d, causal, batches, heads, n)
    name = f"{variant(dtype, d, causal)} B={batches} H={heads} N={n}"
    o_err, lse_err = np.abs(o - want_o).max(), np.abs(lse - want_lse).max()
    assert o_err <= O_TOLERANCE[dtype], f"{name}: O max abs error {o_err:.3g} > {O_TOLERANCE[dtype]}"
    assert lse_err <= LSE_TOLERANCE, f"{name}: LSE max abs error {lse_err:.3g} > {LSE_TOLERANCE}"


# ---------------------------------------------------------------------------------------------- the PTX

@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_ptx_is_the_recipe(dtype, d, causal):
    ptx = module_of(variant(dtype, d, causal))
    ops = re.findall(r"^\s*([a-z][\w.]*)", ptx, re.MULTILINE)
    count = {op: ops.count(op) for op in set(ops)}
    s_elems, o_elems = 32, d // 2                           # a thread's elements of S (64x64) and O (64xd)
    assert count["ex2.approx.ftz.f32"] == s_elems + 2       # p per element, alpha per row
    assert count["lg2.approx.ftz.f32"] == 2
    assert count["fma.rn.f32"] == s_elems
    assert count["shfl.sync.bfly.b32"] == 8                 # max and sum, 2 rows x offsets 2, 1
    assert count[f"cvt.rn.{dtype}x2.f32"] == s_elems // 2
    assert count["div.rn.f32"] == 2
    mma = f"mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32"
    assert count[mma] == 8 * (d // 16) + (d // 8) * 4       # S: 8 n-blocks x d/16; O: d/8 n-blocks x 4
    assert count["ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"] > 0
    assert count["cp.async.ca.shared.global"] > 0
    for loose in ("mul.f32", "add.f32", "sub.f32"):          # ptxas may contract these into an fma
        assert loose not in count, f"{loose} in the PTX"
    # per tile and row: alpha's product, l * alpha, O * alpha, m_use * scale_log2; at the end: O * inv, LSE's two
    assert count["mul.rn.f32"] == 2 * (3 + o_elems // 2) + o_elems + 2 * 2
    assert count["add.rn.f32"] == s_elems + 2 * 2 + 2      # l += p; the quad sum; LSE
    assert count["sub.rn.f32"] == 2


def test_type_provenance_check_is_silent():
    """``warpsim check``: every variant's registers reach their consumers in the types they are read as (P packed
    as T into the ``mma`` of T); tests/provenance flags the bf16 kernels when P is packed as f16."""
    from warpsim.commands.check import check_source
    names, findings = check_source(SOURCE, arch="sm_80")
    assert len(names) == len(VARIANT_NAMES) and findings == []


# ---------------------------------------------------------------------------------------------- the simulator

SMALL = [(dtype, causal, n) for dtype in ("f16", "bf16") for causal in (False, True) for n in (64, 80)]


@pytest.mark.parametrize("dtype,causal,n", SMALL)
def test_small_cases_match_float64(dtype, causal, n):
    check(dtype, 64, causal, 1, 1, n)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [128, 200])
def test_larger_cases_match_float64(dtype, d, causal, n):
    check(dtype, d, causal, 2, 2, n)


# ---------------------------------------------------------------------------------------------- against the C++

CPP_SOURCE = ROOT / "examples/cute_cpp/flash_fwd.cu"


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_same_bits_as_the_cpp_kernel_where_the_instructions_agree(dtype, d, causal):
    """Against ``examples/cute_cpp/flash_fwd.cu`` on the same inputs: O bit-identical to the plain build (both
    ``div.rn.f32``), LSE bit-identical to the ``--use_fast_math`` build (both ``lg2.approx.ftz.f32 * ln 2``; the
    plain build's ``logf`` differs, as does fast math's ``div.approx`` in a few elements of O)."""
    from warpsim.frontends.kernel import open_kernel
    from warpsim.toolchain import find_nvcc
    if not CPP_SOURCE.exists() or find_nvcc() is None:
        pytest.skip("examples/cute_cpp/flash_fwd.cu or nvcc is missing")
    rng = np.random.default_rng(7)
    shape = (1, 2, 200, d)
    q, k, v = (inputs(rng, shape, dtype)[0] for _ in range(3))
    grid, smem, args = example().launch_args(q, k, v)
    name = variant(dtype, d, causal)
    dsl = kernel(name)
    ours = dsl.buffers(dsl.launch(grid=grid, block=128, smem=smem, args=args))
    for flags, same in (((), "o"), (("--use_fast_math",), "lse")):
        cpp = open_kernel(CPP_SOURCE, name, arch="sm_80", nvcc_flags=flags)
        fresh = dict(args, o=np.zeros_like(q), lse=np.zeros_like(args["lse"]))
        theirs = cpp.buffers(cpp.launch(grid=grid, block=128, smem=5 * 64 * d * 2, args=fresh))
        differ = int((ours[same].view(np.uint8) != theirs[same].view(np.uint8)).sum())
        assert differ == 0, f"{name} {' '.join(flags) or 'plain'}: {same} differs from the C++ in {differ} bytes"
