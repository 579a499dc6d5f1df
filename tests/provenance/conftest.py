"""What the provenance tests need: nvcc for the CuTe C++ kernels, the CuTe DSL for the DSL examples; a skip with
the reason where one is missing (in CI, ``CI=true``, a failure)."""

import importlib.util
import os

import pytest

from warpsim.toolchain import find_nvcc


def _need(ok, reason):
    if ok:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (required in CI)")
    pytest.skip(reason)


@pytest.fixture
def need_nvcc():
    _need(find_nvcc() is not None, "nvcc not found on PATH or under CUDA_HOME")


@pytest.fixture
def need_dsl():
    _need(importlib.util.find_spec("cutlass") is not None, "CuTe DSL not installed (pip install 'warpsim[dsl]')")


# a CuTe DSL kernel source for warpsim check, not a test module (importing it needs the DSL); this list
# shadows the root conftest's for this folder, so it repeats its rule: a conftest is no doctest module
collect_ignore = ["attn_tile_dsl.py", "conftest.py"]
