"""Shared helpers of the PTX front-door tests: what they need, and a skip with the reason where it is missing.

In CI (``CI=true``) nvcc and the CuTe DSL are required: a missing one fails instead of skipping.
The acceptance tests also need the PTX interpreter (``warpsim.ptx.load``).
"""

import importlib.util
import os

import pytest

from warpsim.toolchain import find_nvcc

IN_CI = os.environ.get("CI") == "true"


def _need(ok, reason):
    if ok:
        return
    if IN_CI:
        pytest.fail(f"{reason} (required in CI)")
    pytest.skip(reason)


def has_interpreter():
    try:
        from warpsim import ptx
    except ImportError:
        return False
    return hasattr(ptx, "load")


@pytest.fixture
def need_nvcc():
    _need(find_nvcc() is not None, "nvcc not found on PATH or under CUDA_HOME")


@pytest.fixture
def need_dsl():
    _need(importlib.util.find_spec("cutlass") is not None, "CuTe DSL not installed (pip install 'warpsim[dsl]')")


@pytest.fixture
def need_interpreter():
    if not has_interpreter():
        pytest.skip("the PTX interpreter (warpsim.ptx.load) is not in this tree yet")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private compile cache, so a test sees its own compiles."""
    monkeypatch.setenv("WARPSIM_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"
