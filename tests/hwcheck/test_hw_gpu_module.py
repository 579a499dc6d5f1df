"""hwcheck.device.gpu against a stand-in for CuPy (numpy arrays; CUDA kernels compiled offline with NVRTC and
emulated with warpsim, PTX modules run by warpsim's PTX interpreter): the calls hwcheck.device.gpu makes exist and
fit together before a real GPU sees them.

The stand-in follows CuPy 14's API as read from its source (cupy/_core/raw.pyx: RawModule(code=,
options=), .compile(), .get_function(name), kernel(grid, block, args, shared_mem=); cupy/cuda/function.pyx:
Module().load(bytes), .get_function(name), Function(grid, block, args, shared_mem=);
cupy_backends/cuda/api/runtime.pyx: getDeviceProperties -> dict with b"name", totalGlobalMem)."""

import io
import sys
import types

import numpy as np
import pytest

from fake_gpu import emulate_launch
from hwcheck.campaigns.acceptance import run_one
from hwcheck.campaigns.campaign import build_cases
from hwcheck.errors import HwcheckError
from hwcheck.device.gpu import Gpu
from hwcheck.device.nvrtc import HWCHECK_OPTIONS, compile_cuda
from hwcheck.progress import Progress


class _Kernel:
    """CuPy's RawKernel: a launch above 48 KB of dynamic shared memory fails unless the kernel's
    ``max_dynamic_shared_size_bytes`` was raised (CUDA's opt-in), up to the H200's 227 KB."""

    set_attributes = []

    def __init__(self, source, name):
        self.source, self.name = source, name
        self._max_dynamic = 48 * 1024

    @property
    def max_dynamic_shared_size_bytes(self):
        return self._max_dynamic

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value):
        if value > 227 * 1024:
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE: invalid argument")
        _Kernel.set_attributes.append((self.name, value))
        self._max_dynamic = value

    def __call__(self, grid, block, args, shared_mem=0):
        assert isinstance(grid, tuple) and isinstance(block, tuple) and isinstance(args, tuple)
        if shared_mem > self._max_dynamic:
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE: invalid argument")
        emulate_launch(self.source, self.name, grid[0], block[0], args, shared_mem)


class _PtxFunction(_Kernel):
    """CuPy's ``cupy.cuda.function.Function`` of a PTX module: the same opt-in rule, run by the PTX interpreter
    with the arguments in the kernel's parameter order (as the driver packs them)."""

    def __init__(self, module, name):
        super().__init__("", name)
        self.module = module

    def __call__(self, grid, block, args, shared_mem=0):
        assert isinstance(grid, tuple) and isinstance(block, tuple) and isinstance(args, tuple)
        if shared_mem > self._max_dynamic:
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE: invalid argument")
        names = [name for name, _type in self.module.params(self.name)]
        res = self.module.launch(self.name, grid=grid, block=block, smem=shared_mem, quiet=True, shared_fill=0x5A,
                                 args=list(args))
        for name, array in zip(names, args):
            if isinstance(array, np.ndarray):
                array.reshape(-1)[:] = res.buffers[name].reshape(-1).view(array.dtype)


class _PtxModule:
    """CuPy's ``cupy.cuda.function.Module``: ``load`` of NUL-terminated PTX, ``get_function`` by entry name."""

    def load(self, data):
        from warpsim import ptx
        assert data.endswith(b"\0")
        self.module = ptx.load(data[:-1].decode(), filename="<driver>", ptxas="none")

    def get_function(self, name):
        if name not in self.module.kernels:
            raise RuntimeError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        return _PtxFunction(self.module, name)


class _RawModule:
    compiled = []

    def __init__(self, *, code, options=()):
        assert isinstance(options, tuple)
        self.code, self.options = code, options

    def compile(self):
        compile_cuda(self.code, arch="sm_90", options=tuple(o for o in self.options if o not in HWCHECK_OPTIONS))
        _RawModule.compiled.append(self.code)

    def get_function(self, name):
        if f"void {name}(" not in self.code and f"\n{name}(" not in self.code:
            raise RuntimeError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        return _Kernel(self.code, name)


def _fake_cupy(devices=1):
    cp = types.ModuleType("cupy")
    cp.__version__ = "14.2.0-fake"

    class Device:
        def __init__(self, device=0):
            self.compute_capability = "90"

        def use(self):
            return None
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: devices,
        getDeviceProperties=lambda d: {"name": b"NVIDIA H200", "totalGlobalMem": 150 << 30},
        driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000,
        deviceSynchronize=lambda: None)
    cp.cuda = types.SimpleNamespace(runtime=runtime, Device=Device,
                                    nvrtc=types.SimpleNamespace(getVersion=lambda: (13, 0)))
    cp.RawModule = _RawModule
    cp.cuda.function = types.ModuleType("cupy.cuda.function")
    cp.cuda.function.Module = _PtxModule
    cp.asarray = lambda a: np.array(a, copy=True)
    cp.asnumpy = lambda a: np.array(a, copy=True)
    cp.full = lambda shape, value, dtype: np.full(shape, value, dtype)
    return cp


@pytest.fixture
def fake_cupy(monkeypatch, nvrtc):
    cp = _fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cp.cuda)
    monkeypatch.setitem(sys.modules, "cupy.cuda.function", cp.cuda.function)
    return cp


def test_open_describes_the_device(fake_cupy):
    info = Gpu.open().info
    assert (info.name, info.compute_capability, info.arch) == ("NVIDIA H200", "90", "sm_90")
    assert (info.driver_cuda_version, info.runtime_version, info.nvrtc_version) == ("13.0", "13.0", "13.0")
    assert info.cupy_version == "14.2.0-fake" and info.memory_bytes == 150 << 30


def test_no_device_and_too_few_devices(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(devices=0))
    with pytest.raises(HwcheckError, match=r"^hwcheck: no CUDA GPU visible \(cupy: 0 device\(s\)"):
        Gpu.open()


@pytest.mark.parametrize("instr", ["mma", "ldmatrix", "cvt"])
def test_campaigns_run_through_hwcheck_gpu(fake_cupy, instr):
    cases = build_cases(instr)[:3]
    out = run_one(Gpu.open(), cases, count=40, chunk=32, progress=Progress(io.StringIO(), tty=False))
    assert out.error is None and out.status == "pass", out.error
    assert all(r.mismatched == 0 and r.compared > 0 for r in out.results)


def test_a_failing_launch_is_one_hwcheck_error(fake_cupy):
    gpu = Gpu.open()
    module = gpu.module('extern "C" __global__ void k(unsigned* p) { p[0] = 1u; }')
    with pytest.raises(HwcheckError, match=r"^hwcheck: kernel missing failed on NVIDIA H200: CUDA_ERROR_NOT_FOUND"):
        gpu.launch(module, "missing", 1, 32, ())


def test_a_program_above_48_kb_of_shared_memory_opts_in_and_runs(fake_cupy):
    """hwcheck run's launch through hwcheck.device.gpu: the lowered PTX loaded as a driver module, its arguments,
    49664 bytes of shared memory."""
    import os
    from hwcheck.runs.run import plan_jobs, run_programs
    from warpsim.program import load_program
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "big_smem_convert.py")
    jobs = plan_jobs([(path, load_program(path))], {}, {}, sweep=True)
    _Kernel.set_attributes.clear()
    out = run_programs(Gpu.open(), jobs, seeds=2, log=io.StringIO())
    assert (out.status, out.error) == ("pass", None), out.error
    assert _Kernel.set_attributes == [("warpsim_program", 0xC000 + 512)] * 4
    assert all(r.total("registers") > 0 and r.total("smem_words") == 2 * 12416 for r in out.runs)


def test_a_refused_shared_memory_size_is_one_hwcheck_error(fake_cupy):
    gpu = Gpu.open()
    module = gpu.module('extern "C" __global__ void k(unsigned* p) { p[0] = 1u; }')
    with pytest.raises(HwcheckError, match=r"^hwcheck: kernel k needs 300000 bytes of dynamic shared memory, which "
                                           r"NVIDIA H200 refused: CUDA_ERROR_INVALID_VALUE"):
        gpu.launch(module, "k", 1, 32, (np.zeros(1, np.uint32),), shared_mem=300000)
