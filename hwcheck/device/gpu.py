"""The CUDA GPU through CuPy: open it, describe it, compile modules for it, move arrays, launch.

CuPy is imported only when a GPU is opened, so the rest of hwcheck (and its offline tests) work
without it. Where CuPy or a GPU is missing, :meth:`Gpu.open` raises one line::

    hwcheck: no CUDA GPU visible (cupy: No module named 'cupy'; install it with pip install -e ".[gpu]")

Modules compile with CuPy's ``RawModule`` (NVRTC) for the device's own arch (CuPy passes
``-arch=sm_NN`` from ``cupy.cuda.Device().compute_capability``), with :data:`hwcheck.device.nvrtc.HWCHECK_OPTIONS`.
Compiled modules are cached on disk by CuPy, keyed by a hash of the source, the options, the arch,
the NVRTC version and CuPy's version, in ``$CUPY_CACHE_DIR`` (default ``~/.cupy/kernel_cache``);
:attr:`GpuModule.key` is hwcheck's own hash of source, arch and CuPy version, for reports.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from hwcheck.errors import HwcheckError
from hwcheck.device.nvrtc import HWCHECK_OPTIONS

__all__ = ["GpuInfo", "GpuModule", "Gpu", "import_cupy", "cuda_version_string", "module_key",
           "DEFAULT_DYNAMIC_SHARED_BYTES"]

DEFAULT_DYNAMIC_SHARED_BYTES = 48 * 1024   # a launch may ask for more only after the kernel opts in


def cuda_version_string(version: int) -> str:
    """CUDA's integer version as text.

    >>> cuda_version_string(13000), cuda_version_string(12080)
    ('13.0', '12.8')
    """
    return f"{version // 1000}.{version % 1000 // 10}"


def module_key(source: str, arch: str, cupy_version: str) -> str:
    """hwcheck's cache key of a module: sha256 of source, arch and CuPy version (16 hex digits).

    >>> len(module_key("src", "sm_90", "14.2.0")), module_key("a", "sm_90", "1") != module_key("a", "sm_80", "1")
    (16, True)
    """
    return hashlib.sha256("\0".join((source, arch, cupy_version)).encode()).hexdigest()[:16]


def import_cupy():
    """The ``cupy`` module, or ``HwcheckError`` (one line) where it cannot be imported."""
    try:
        import cupy
    except Exception as e:   # ImportError, or a broken CUDA install raising anything at import
        raise HwcheckError(f"hwcheck: no CUDA GPU visible (cupy: {_one_line(e)}; install it with "
                           f"pip install -e \".[gpu]\")") from None
    return cupy


def _one_line(error) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _safe(get, default):
    """``get()``, or ``default`` where the query fails: a report field is never worth a failed run."""
    try:
        return get()
    except Exception:
        return default


def _kernel_driver_version() -> str | None:
    """The NVIDIA kernel driver's version (e.g. ``580.65.06``), from ``/proc``; None where unknown."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            words = f.readline().split()
    except OSError:
        return None
    for word in words:
        if word[:1].isdigit() and word.count(".") >= 1:
            return word
    return None


@dataclass(frozen=True)
class GpuInfo:
    """What a report records about the GPU and its software."""

    device: int
    name: str
    compute_capability: str       # "90"
    arch: str                     # "sm_90"
    driver_version: str | None    # kernel driver, e.g. "580.65.06"
    driver_cuda_version: str      # CUDA version the driver supports, e.g. "13.0"
    runtime_version: str          # CUDA runtime CuPy uses
    nvrtc_version: str
    cupy_version: str
    memory_bytes: int
    cache_dir: str

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class GpuModule:
    """A compiled module: CuPy's ``RawModule`` and hwcheck's key of it."""

    raw: object
    key: str
    compile_seconds: float


class Gpu:
    """One CUDA device through CuPy. Open it with :meth:`Gpu.open`."""

    def __init__(self, cupy, device: int):
        self.cupy = cupy
        self.device = device
        self.info = self._describe()

    @classmethod
    def open(cls, device: int = 0) -> "Gpu":
        """The GPU ``device``; ``HwcheckError`` (one line) where CuPy or the GPU is missing."""
        cupy = import_cupy()
        try:
            count = cupy.cuda.runtime.getDeviceCount()
            if count <= device:
                raise HwcheckError(f"hwcheck: no CUDA GPU visible (cupy: {count} device(s), "
                                   f"device {device} asked for)")
            cupy.cuda.Device(device).use()
            return cls(cupy, device)
        except HwcheckError:
            raise
        except Exception as e:   # CUDARuntimeError: no device, no driver, driver too old
            raise HwcheckError(f"hwcheck: no CUDA GPU visible (cupy: {_one_line(e)})") from None

    def _describe(self) -> GpuInfo:
        cp = self.cupy
        rt = cp.cuda.runtime
        props = _safe(lambda: rt.getDeviceProperties(self.device), {})
        name = props.get("name", b"unknown")
        cc = str(cp.cuda.Device(self.device).compute_capability)
        return GpuInfo(
            device=self.device,
            name=name.decode() if isinstance(name, bytes) else str(name),
            compute_capability=cc,
            arch=f"sm_{cc}",
            driver_version=_kernel_driver_version(),
            driver_cuda_version=_safe(lambda: cuda_version_string(rt.driverGetVersion()), "unknown"),
            runtime_version=_safe(lambda: cuda_version_string(rt.runtimeGetVersion()), "unknown"),
            nvrtc_version=_safe(lambda: "%d.%d" % tuple(cp.cuda.nvrtc.getVersion()), "unknown"),
            cupy_version=str(cp.__version__),
            memory_bytes=int(props.get("totalGlobalMem", 0)),
            cache_dir=os.environ.get("CUPY_CACHE_DIR", os.path.expanduser("~/.cupy/kernel_cache")),
        )

    def module(self, source: str) -> GpuModule:
        """Compile ``source`` for this device (or load it from CuPy's disk cache)."""
        cp = self.cupy
        start = time.perf_counter()
        try:
            raw = cp.RawModule(code=source, options=HWCHECK_OPTIONS)
            raw.compile()
        except Exception as e:   # cupy.cuda.compiler.CompileException and CUDA driver errors
            log = str(e).strip().splitlines()
            detail = "\n".join(log[:40])
            raise HwcheckError(f"hwcheck: compiling kernels for {self.info.arch} failed: "
                               f"{log[0] if log else type(e).__name__}\n{detail}") from None
        return GpuModule(raw, module_key(source, self.info.arch, self.info.cupy_version),
                         time.perf_counter() - start)

    def ptx_module(self, text: str) -> GpuModule:
        """Load PTX ``text`` (the driver's JIT assembles it for this device: ``cuModuleLoadData``) as a CuPy
        ``cupy.cuda.function.Module``, which :meth:`launch` takes as a ``RawModule``; every ``.entry`` is looked up
        once here, so a module the driver refuses fails before any launch."""
        import re
        from importlib import import_module
        start = time.perf_counter()
        try:
            raw = import_module("cupy.cuda.function").Module()
            raw.load(text.encode() + b"\0")
            for name in re.findall(r"\.entry\s+(\w+)", text):
                raw.get_function(name)
        except Exception as e:   # CUDA driver errors (cuModuleLoadData, cuModuleGetFunction)
            raise HwcheckError(f"hwcheck: the GPU driver refused the PTX module for {self.info.arch}: "
                               f"{_one_line(e)}") from None
        return GpuModule(raw, module_key(text, self.info.arch, self.info.cupy_version), time.perf_counter() - start)

    def put(self, array: np.ndarray):
        """A device copy of a numpy array."""
        return self.cupy.asarray(np.ascontiguousarray(array))

    def output(self, shape):
        """A device ``uint32`` array for results, every word 0xFFFFFFFF so unwritten words stand out."""
        return self.cupy.full(shape, 0xFFFFFFFF, dtype=np.uint32)

    def get(self, device_array) -> np.ndarray:
        """The numpy copy of a device array."""
        return self.cupy.asnumpy(device_array)

    def launch(self, module: GpuModule, name: str, grid: int, block: int, args, shared_mem: int = 0):
        """Launch kernel ``name`` and wait for it; a CUDA error becomes ``HwcheckError`` naming it.

        Above :data:`DEFAULT_DYNAMIC_SHARED_BYTES` of dynamic shared memory the kernel's
        ``max_dynamic_shared_size_bytes`` attribute is raised to ``shared_mem`` first (CUDA's opt-in).
        """
        try:
            kernel = module.raw.get_function(name)
        except Exception as e:
            raise HwcheckError(f"hwcheck: kernel {name} failed on {self.info.name}: {_one_line(e)}") from None
        if shared_mem > DEFAULT_DYNAMIC_SHARED_BYTES:
            try:
                kernel.max_dynamic_shared_size_bytes = int(shared_mem)
            except Exception as e:
                raise HwcheckError(f"hwcheck: kernel {name} needs {shared_mem} bytes of dynamic shared memory, "
                                   f"which {self.info.name} refused: {_one_line(e)}") from None
        try:
            kernel((int(grid),), (int(block),), tuple(args), shared_mem=int(shared_mem))
            self.cupy.cuda.runtime.deviceSynchronize()
        except Exception as e:
            raise HwcheckError(f"hwcheck: kernel {name} failed on {self.info.name}: {_one_line(e)}") from None
