"""bench/bench_ptx_gemm.py --quick runs and its two front ends agree (no time is asserted)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.usefixtures("need_interpreter", "need_nvcc")
def test_bench_ptx_gemm_quick(capsys):
    spec = importlib.util.spec_from_file_location("bench_ptx_gemm", ROOT / "bench/bench_ptx_gemm.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for label in ("parse + decode", "launch (one CTA)", "traced execute", "launch / traced execute",
                  "warp instructions"):
        assert label in out
