"""Compile CUDA C++ to a cubin with NVRTC, with no GPU: the offline check of hwcheck's generated code.

NVRTC is the compiler CuPy's ``RawModule`` uses on the GPU machine. Here it is reached through the
``cuda-bindings`` wheel (``cuda.bindings.nvrtc``), which loads ``libnvrtc`` from the
``nvidia-cuda-nvrtc`` wheel through ``cuda.pathfinder``; no driver and no device are involved.

``compile_cuda(source, arch="sm_90")`` compiles with the options CuPy adds itself
(:data:`CUPY_OPTIONS`, then ``-arch=sm_NN``) plus hwcheck's own (:data:`HWCHECK_OPTIONS`), so that a
source that compiles here compiles there too. A compile error raises :class:`NvrtcError` carrying the
compiler log; a missing NVRTC raises :class:`~hwcheck.errors.HwcheckError` saying what to install.

>>> gpu_arch("sm90"), gpu_arch(90), gpu_arch("sm_80")
('sm_90', 'sm_90', 'sm_80')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hwcheck.errors import HwcheckError

__all__ = ["CUPY_OPTIONS", "HWCHECK_OPTIONS", "Compiled", "NvrtcError", "gpu_arch", "nvrtc_version",
           "compile_cuda"]

# Options CuPy's RawModule passes to NVRTC besides its include paths and -arch
# (cupy/_core/core.pyx: assemble_cupy_compiler_options; cupy/cuda/compiler.py: _compile_with_cache_cuda).
CUPY_OPTIONS = ("--std=c++17", "-ftz=true")
# hwcheck's own options, given to RawModule too: lowered kernels declare registers they may not use.
HWCHECK_OPTIONS = ("--diag-suppress=177,550",)

_INSTALL_HINT = "pip install cuda-bindings nvidia-cuda-nvrtc"


class NvrtcError(HwcheckError):
    """NVRTC rejected a source; ``log`` holds the compiler's full log."""

    def __init__(self, message: str, log: str):
        super().__init__(f"{message}\n{log}" if log else message)
        self.log = log


@dataclass(frozen=True)
class Compiled:
    """A compiled source: the cubin, the PTX NVRTC made on the way, and the log (warnings)."""

    arch: str
    cubin: bytes
    ptx: str
    log: str


def gpu_arch(arch) -> str:
    """``sm_NN`` from ``"sm_NN"``, ``"smNN"``, ``"NN"`` or ``NN``; ``ValueError`` otherwise.

    >>> gpu_arch("89")
    'sm_89'
    """
    match = re.fullmatch(r"(?:sm_?)?(\d{2,3})", str(arch).strip())
    if match is None or isinstance(arch, bool):
        raise ValueError(f"nvrtc: arch must look like 'sm_90', got {arch!r}")
    return f"sm_{match.group(1)}"


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise HwcheckError(f"hwcheck: NVRTC is not available ({_INSTALL_HINT}): {e}") from None
    return nvrtc


def _check(nvrtc, result, what):
    err = result[0] if isinstance(result, tuple) else result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise HwcheckError(f"hwcheck: NVRTC {what} failed: {err.name}")
    return result[1:] if isinstance(result, tuple) else ()


def nvrtc_version() -> tuple[int, int]:
    """NVRTC's ``(major, minor)``; raises ``HwcheckError`` where NVRTC cannot be loaded."""
    nvrtc = _nvrtc()
    try:
        major, minor = _check(nvrtc, nvrtc.nvrtcVersion(), "nvrtcVersion")
    except RuntimeError as e:   # cuda.bindings raises RuntimeError when libnvrtc is not found
        raise HwcheckError(f"hwcheck: NVRTC is not available ({_INSTALL_HINT}): {e}") from None
    return int(major), int(minor)


def _read(nvrtc, prog, size_fn, get_fn, what) -> bytes:
    """NVRTC's ``what`` (log, PTX, cubin) into a buffer of its own: NVRTC writes into the buffer it is given, and a
    ``bytes`` object of length 1 is CPython's shared singleton (``b" " * 1 is b" "``): an empty log (its one NUL)
    written there turned every later ``b" "`` of the process into ``b"\\x00"``."""
    (size,) = _check(nvrtc, size_fn(prog), what)
    buf = bytearray(size)
    _check(nvrtc, get_fn(prog, buf), what)
    return bytes(buf)


def compile_cuda(source: str, *, arch="sm_90", options=(), name: str = "hwcheck.cu") -> Compiled:
    """Compile ``source`` to a cubin for ``arch`` with CuPy's and hwcheck's options plus ``options``.

    Post-condition: the returned cubin is what NVRTC made for ``-arch=sm_NN``; ``log`` is empty
    unless NVRTC warned. Raises :class:`NvrtcError` (with the log) when the source does not compile.

    >>> c = compile_cuda('extern "C" __global__ void k(unsigned* p) { p[0] = 1u; }')
    >>> c.arch, c.cubin[:4] == b"\\x7fELF", ".entry k" in c.ptx
    ('sm_90', True, True)
    """
    if not isinstance(source, str):
        raise TypeError(f"nvrtc: source must be a str, got {type(source).__name__}")
    arch = gpu_arch(arch)
    nvrtc_version()                       # a missing libnvrtc becomes one HwcheckError here
    nvrtc = _nvrtc()
    flags = [o.encode() for o in (*CUPY_OPTIONS, f"-arch={arch}", *HWCHECK_OPTIONS, *options)]
    (prog,) = _check(nvrtc, nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
                     "nvrtcCreateProgram")
    try:
        result = nvrtc.nvrtcCompileProgram(prog, len(flags), flags)
        log = _read(nvrtc, prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, "log")
        log = log.rstrip(b"\0").decode(errors="replace").strip()
        if result[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise NvrtcError(f"nvrtc: compiling {name} for {arch} failed ({result[0].name})", log)
        cubin = _read(nvrtc, prog, nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN, "cubin")
        ptx = _read(nvrtc, prog, nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, "ptx").rstrip(b"\0").decode()
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return Compiled(arch=arch, cubin=cubin, ptx=ptx, log=log)
