"""The CuTe C++ flash-attention forward (``examples/cute_cpp/flash_fwd.cu`` and its fast-math build): its PTX is
the recipe's, and the simulator's O and LSE agree with a float64 numpy reference within the recipe's
tolerances (``examples/flash_fwd_check.py``).

The simulated runs need the f32 MUFU models (``ex2``, and for fast math ``rcp``/``lg2`` ``.approx.ftz.f32``) in
the PTX interpreter; until they are there those tests skip, saying so. ``--slow`` adds the fast-math build
(a second nvcc compile: its PTX, and every variant of both builds simulated at B = H = 2 with a tail, and at
N = 512).
"""

import importlib.util
import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from warpsim.frontends.source import compile_source
from warpsim.toolchain import find_nvcc

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI") == "true"
VARIANTS = [(dtype, d, causal) for dtype in ("f16", "bf16") for d in (64, 128) for causal in (False, True)]


def _load_driver():
    spec = importlib.util.spec_from_file_location("flash_fwd_check", ROOT / "examples" / "flash_fwd_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


flash = _load_driver()

MUFU_PROBE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry probe(.param .u64 out)
{
  .reg .f32 %f<5>;
  mov.f32 %f1, 0f3F800000;
  ex2.approx.ftz.f32 %f2, %f1;
  rcp.approx.ftz.f32 %f3, %f1;
  lg2.approx.ftz.f32 %f4, %f1;
  ret;
}
"""


@lru_cache(maxsize=None)
def _mufu_models():
    """Whether the PTX interpreter runs ``ex2``/``rcp``/``lg2`` ``.approx.ftz.f32``."""
    from warpsim import ptx
    from warpsim.errors import UnsupportedType
    try:
        ptx.load(MUFU_PROBE, filename="probe.ptx").decoded("probe")
    except UnsupportedType:
        return False
    return True


@pytest.fixture
def need_nvcc():
    if find_nvcc() is None:
        if IN_CI:
            pytest.fail("nvcc not found (required in CI)")
        pytest.skip("nvcc not found on PATH or under CUDA_HOME")


@pytest.fixture
def need_simulator(need_nvcc):
    if not _mufu_models():
        pytest.skip("the f32 MUFU models (ex2/rcp/lg2 .approx.ftz.f32) are not in the PTX interpreter yet")


@lru_cache(maxsize=None)
def _ptx(fast_math):
    return compile_source(flash.SOURCES[fast_math], "sm_90").ptx


def _body(ptx, kernel):
    start = ptx.index(f".entry {kernel}(")
    return ptx[start:ptx.index("\n}", start)]


def _count(body, pattern):
    return len(re.findall(rf"^\s+{pattern}\s", body, re.MULTILINE))


# ------------------------------------------------------------------------------------------- the PTX

@pytest.mark.parametrize("fast_math", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["plain", "fast_math"])
def test_the_ptx_is_the_recipes(fast_math, need_nvcc):
    """Per KV tile each thread computes 2 rows x 16 scores: 32 ex2 of one fma each, 2 ex2 for the rescale,
    16 + 2 max.f32 per row, 2 shuffles per row for the max and 2 for the final sum; the matrix products
    are d/2 + d/2 mma (Q K^T and P V); P and O are packed by cvt.rn.<T>x2.f32. Fast math only adds .ftz
    and changes 1/l and ln l; nvcc contracts nothing."""
    ftz = r"\.ftz" if fast_math else ""
    ptx = _ptx(fast_math)
    for dtype, d, causal in VARIANTS:
        name = flash.kernel_name(dtype, d, causal)
        body = _body(ptx, name)
        counts = {
            "ex2": _count(body, r"ex2\.approx\.ftz\.f32"),
            "fma": _count(body, rf"fma\.rn{ftz}\.f32"),
            "max": _count(body, rf"max{ftz}\.f32"),
            "shfl": _count(body, r"shfl\.sync\.bfly\.b32"),
            "mma": _count(body, rf"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.{dtype}\.{dtype}\.f32"),
            "cvt": _count(body, rf"cvt\.rn\.{dtype}x2\.f32"),
            "ldmatrix": _count(body, r"ldmatrix\.sync\.aligned\.x4\.m8n8\.shared\.b16"),
            "ldmatrix.trans": _count(body, r"ldmatrix\.sync\.aligned\.x4\.trans\.m8n8\.shared\.b16"),
        }
        want = {"ex2": 34, "fma": 32 if fast_math else counts["fma"], "max": 36, "shfl": 8, "mma": d,
                "cvt": 16 + d // 4, "ldmatrix": d // 16 * 5, "ldmatrix.trans": d // 4}
        assert counts == want, name
        assert counts["fma"] >= 32, name
        assert not re.search(r"^\s+(mad(\.\w+)*\.f32|fma\.r[zmp]|ex2\.approx\.f32)\s", body, re.MULTILINE), name
        if fast_math:
            assert _count(body, r"lg2\.approx\.ftz\.f32") == 2, name
            assert _count(body, r"(rcp|div)\.approx\.ftz\.f32") == 2, name
        else:
            assert _count(body, r"(rcp|div)\.rn\.f32") == 2 and "lg2" not in body, name
            assert ".ftz" not in body.replace("ex2.approx.ftz.f32", ""), name


@pytest.mark.parametrize("fast_math", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["plain", "fast_math"])
def test_type_provenance_is_silent(fast_math, need_nvcc):
    """``warpsim check``: P is packed in the input type and every mma operand is what it reads as."""
    from warpsim.commands.check import check_source
    names, findings = check_source(flash.SOURCES[fast_math], arch="sm_90")
    assert sorted(names) == sorted(flash.kernel_name(*v) for v in VARIANTS) and findings == []


# ------------------------------------------------------------------------------------------- simulated runs

def _assert_close(dtype, d, causal, *, B=1, H=1, N=64, fast_math=False, seed=0):
    got = flash.check(dtype, d, causal, B=B, H=H, N=N, seed=seed, fast_math=fast_math)
    assert got["ok"], (f"{flash.kernel_name(dtype, d, causal)} B={B} H={H} N={N} fast_math={fast_math}: "
                       f"O error {got['o_error']:.3g} (tolerance {got['o_tolerance']}), "
                       f"LSE error {got['lse_error']:.3g} (tolerance {got['lse_tolerance']})")
    return got


@pytest.mark.parametrize("dtype,N,causal", [("f16", 64, False), ("f16", 80, True), ("bf16", 64, True),
                                            ("bf16", 80, False)])
def test_small_cases_match_float64(dtype, N, causal, need_simulator):
    got = _assert_close(dtype, 64, causal, N=N)
    assert got["o_error"] > 0          # the kernel rounds: an exact match would mean the reference was not used


def test_a_sequence_of_one_and_rows_past_n(need_simulator):
    """N = 1: one valid row and column; the 63 rows past N are computed, masked, and not stored (the
    buffers are exactly [B, H, N, d]: a store past them would fault)."""
    q, k, v = flash.random_inputs(1, 1, 1, 64, "f16")
    o, lse = flash.run_flash_fwd(q, k, v, dtype="f16", causal=True)
    assert np.array_equal(o, v)                             # softmax of one score is 1: O is V's row exactly
    score = flash.to_float(q, "f16")[0, 0, 0] @ flash.to_float(k, "f16")[0, 0, 0]
    assert abs(float(lse[0, 0, 0]) - score / 8) < 1e-5                # LSE = m * scale + ln 1


def test_the_driver_command(capsys, need_simulator):
    assert flash.main(["--dtype", "bf16", "--N", "80", "--causal"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flash_fwd_bf16_d64_causal B=1 H=1 N=80 seed 0: O max abs error ") and out.endswith(": ok\n")


def test_the_driver_refuses_bad_options(capsys):
    assert flash.main(["--N", "0"]) == 2
    assert capsys.readouterr().err == "flash_fwd_check: --B, --H and --N must be at least 1\n"
    with pytest.raises(ValueError, match="no variant for dtype 'f32'"):
        flash.kernel_name("f32", 64, False)


@pytest.mark.slow
@pytest.mark.parametrize("fast_math", [False, True], ids=["plain", "fast_math"])
@pytest.mark.parametrize("dtype,d,causal", VARIANTS)
def test_every_variant_matches_float64(dtype, d, causal, fast_math, need_simulator):
    _assert_close(dtype, d, causal, B=2, H=2, N=200, fast_math=fast_math, seed=1)
    _assert_close(dtype, d, causal, N=512, fast_math=fast_math, seed=2)
