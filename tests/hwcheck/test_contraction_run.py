"""hwcheck's GPU side runs the cubin ptxas makes, and the simulator's contraction is decided against that cubin.

A stand-in GPU (the simulator with contraction, loading through a cubin compiled the way hwcheck compiles it on
the device) agrees with hwcheck's simulator side; run with ``ptxas="none"`` the simulator differs from it in the
fused results -- the check can fail, and the report says who decided.
"""

import numpy as np
import pytest

from hwcheck.runs.ptx_run import PtxJob, SimulatorAsGpu, run_one
from warpsim.frontends.args import parse_arg
from warpsim import toolchain
from warpsim.ptx.syntax import parse_module
from tests.ptx.test_contraction import kernel

needs_ptxas = pytest.mark.skipif(toolchain.find_tool("ptxas") is None
                                 or toolchain.find_tool("nvdisasm") is None,
                                 reason="needs ptxas (CUDA toolkit or nvidia-cuda-nvcc) and nvdisasm")

KERNEL = kernel("""
  mul.f32 %f5, %f1, %f2;
  sub.f32 %f6, %f5, %f3;
  mul.f32 %f7, %f3, %f4;
  add.f32 %f8, %f1, %f7;
""", "%f6, %f8, %f1, %f2")


class CubinGpu(SimulatorAsGpu):
    """The simulator standing in for the GPU, with hwcheck's cubin step (as ``CupyPtx.cubin``) in front."""

    def __init__(self, folder):
        super().__init__()
        self.folder, self.made = folder, {}

    def cubin(self, text):
        if text not in self.made:
            path = self.folder / f"m{len(self.made)}.cubin"
            toolchain.compile_cubin(text, parse_module(text), "sm_90", toolchain.find_ptxas(), path)
            self.made[text] = str(path)
        return self.made[text]


def _job(tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(KERNEL)
    specs = dict(parse_arg(a) for a in ("inp=random:f32:32x4", "out=zeros:f32:32x4"))
    return PtxJob(str(src), "k", (1, 1, 1), (32, 1, 1), 0, specs)


@needs_ptxas
def test_simulator_decides_against_the_gpus_cubin(tmp_path):
    run = run_one(CubinGpu(tmp_path), _job(tmp_path), seeds=2, first_seed=0, arch="sm90", log=open("/dev/null", "w"))
    assert run.mismatched == 0
    c = run.contraction
    assert c["compiler"] == "ptxas" and c["pairs"] == 2 and c["cubin"].endswith(".cubin")
    assert c["gpu_code"] == "cubin from this ptxas"
    assert c["version"] == toolchain.ptxas_version(toolchain.find_ptxas())
    assert c["instrumented_pairs"] == 0 and not c["instrumented_fused_alike"]   # traced products are not fused
    assert sum(s.records for s in run.seeds) > 0


@needs_ptxas
def test_without_contraction_the_fused_results_differ(tmp_path):
    run = run_one(CubinGpu(tmp_path), _job(tmp_path), seeds=2, first_seed=0, arch="sm90", ptxas="none",
                  log=open("/dev/null", "w"))
    assert run.contraction["compiler"] == "none"
    assert run.mismatched > 0
    assert sum(s.global_bad for s in run.seeds) > 0


def test_random_arguments_take_a_bound():
    """The acceptance kernels draw inputs in [-2, 2) (random:DTYPE:SHAPE:2); a bad bound is one line."""
    from warpsim.frontends.args import concrete_args, parse_arg
    name, spec = parse_arg("x=random:f32:4096:2")
    x = concrete_args({name: spec}, 0)["x"]
    assert x.min() >= -2 and x.max() < 2 and abs(x).max() > 1.9
    for bad in ("x=random:f32:8:-1", "x=random:f32:8:two", "x=random:u32:8:2"):
        with pytest.raises(ValueError, match=r"--arg x=random:.*BOUND is a positive number"):
            parse_arg(bad)
    from hwcheck.runs.ptx_examples import AS_COMPILED_EXAMPLES
    assert all(a.endswith(":2") for e in AS_COMPILED_EXAMPLES for a in e[5] if "=random:f" in a)
