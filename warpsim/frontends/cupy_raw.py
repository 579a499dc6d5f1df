"""CuPy's ``RawKernel`` and ``RawModule`` offline: CUDA C++ source compiled with nvcc for the target, launched on
warpsim with CuPy's call convention ``kernel(grid, block, args, shared_mem=0)`` on numpy arrays.

Kernels are found as the driver finds them for CuPy: ``RawKernel(code, name)`` by the exact symbol (an ``extern "C"``
function's name; a C++ function's symbol is mangled, so its plain name is CuPy's ``CUDA_ERROR_NOT_FOUND``, here a
``ValueError`` saying so), ``RawModule(code=..., name_expressions=[...]).get_function(name)`` by a name listed in
``name_expressions`` (CuPy asks NVRTC for its mangled symbol; here the one entry that demangles to it) or an exact one.

Arguments as CuPy passes them (``cupy/_core/_carray`` and ``cupy.cuda.function``): an array is a pointer to its
first element (here: a numpy array, its memory, results written back in place); a numpy scalar is its own bytes; a
Python ``int`` is an ``int64``, a ``float`` a ``float64``, a ``bool`` a ``bool_``. The kernel's parameter reads as
many of those bytes as its type holds, as the driver does (a Python ``int`` for an ``int`` parameter: its low 4
bytes); fewer bytes than the parameter holds is a ``ValueError``, where on a GPU the rest would be garbage.

Compiled with ``nvcc -ptx`` (:mod:`warpsim.frontends.nvcc`: the source is written to a file named by its hash,
then cached by content), with CuPy's ``options`` passed to nvcc; CuPy compiles with NVRTC, whose defaults
(``-fmad=true``, no fast math) are nvcc's, so the PTX computes the same.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import numpy as np

from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.host import HostArray, check_no_overlap, host_array, is_array_like, overlapping, write_back
from warpsim.frontends.kernel import entry_params, find_entry, parse_dim3
from warpsim.frontends.nvcc import compile_cuda
from warpsim.ptx import load
from warpsim.ptx.jobs import default_jobs

__all__ = ["RawKernel", "RawModule", "scalar_bits"]

WHO = "warpsim.cupy"
_MODULES = {}          # (code hash, options, arch) -> (PtxModule, PTX text)


def scalar_bits(value, ptx_type, name):
    """The number the core packs for a scalar argument ``value`` given to a ``.ptx_type`` parameter, as CuPy and the
    driver pass it: the value's bytes (numpy scalar; ``int`` as int64, ``float`` as float64), the parameter's width of
    them.

    scalar_bits(5, "s32", "n") == 5
    scalar_bits(np.float32(1.5), "f32", "a") == 1.5
    scalar_bits(-1, "u32", "n") == 0xFFFFFFFF
    """
    if isinstance(value, bool):
        value = np.bool_(value)
    elif isinstance(value, int):
        value = np.int64(value)
    elif isinstance(value, float):
        value = np.float64(value)
    if not isinstance(value, np.generic):
        raise TypeError(f"{WHO}: argument {name}: a {type(value).__name__}; give a numpy array, a numpy scalar, "
                        f"an int, a float or a bool")
    raw = value.tobytes()
    width = int(ptx_type[1:]) // 8 if ptx_type[1:].isdigit() else 0
    if len(raw) < width:
        raise ValueError(f"{WHO}: argument {name}: {value.dtype} has {len(raw)} bytes, the parameter "
                         f".{ptx_type} reads {width} (give np.{'float' if ptx_type[0] == 'f' else 'int'}"
                         f"{8 * width}(...))")
    raw = raw[:width]
    if ptx_type[0] == "f":
        return float(np.frombuffer(raw, {2: np.float16, 4: np.float32, 8: np.float64}[width])[0])
    return int.from_bytes(raw, "little", signed=ptx_type[0] == "s")


class RawKernel:
    """``RawKernel(code, name, options=())``: CuPy's constructor (``backend``, ``jitify``, ... are accepted and
    ignored); ``arch`` (a warpsim extra): the target, ``sm_80`` or ``sm_90``. Calling it
    ``kernel(grid, block, args, shared_mem=0)`` runs the kernel and returns the core's ``LaunchResult``."""

    def __init__(self, code, name, options=(), backend="nvcc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, arch="sm_80", *, _expressions=()):
        self.code, self.name, self.options = code, name, tuple(options)
        self.arch = normalize_arch(arch)
        self._module = None
        self._entry = None
        self._expressions = tuple(_expressions)        # RawModule's name_expressions
        self.quiet = False

    def _load(self):
        if self._module is None:
            digest = hashlib.sha256(self.code.encode()).hexdigest()[:24]
            key = (digest, self.options, self.arch)
            if key not in _MODULES:
                folder = Path(tempfile.gettempdir()) / "warpsim-cupy"
                folder.mkdir(parents=True, exist_ok=True)
                path = folder / f"raw_{digest}.cu"
                if not path.is_file():
                    path.write_text(self.code, encoding="utf-8")
                ptx = compile_cuda(path, self.arch, self.options)
                _MODULES[key] = (load(ptx, filename=f"{self.name}.{self.arch}.ptx", arch=self.arch), ptx)
            self._module, self.ptx = _MODULES[key]
            self._entry = self._find(list(entry_params(self.ptx)))
        return self._module

    def _find(self, entries):
        """The entry the driver would give CuPy for ``self.name`` (see the module docstring)."""
        if self.name in entries:
            return self.name
        if self.name in self._expressions:
            return find_entry(entries, self.name)
        try:
            mangled = find_entry(entries, self.name)
        except ValueError:
            raise ValueError(f"{WHO}: no kernel {self.name!r} in the module (CUDA_ERROR_NOT_FOUND on a GPU; "
                             f"it has: {', '.join(entries) or 'none'})") from None
        raise ValueError(f"{WHO}: no kernel {self.name!r}: CUDA_ERROR_NOT_FOUND on a GPU too, as {self.name} is a C++ "
                         f"function (its symbol is {mangled}); declare it extern \"C\", or use RawModule(code=..., "
                         f"name_expressions=[{self.name!r}]).get_function({self.name!r})")

    @property
    def ptx_params(self):
        return self._load().params(self._entry)

    def __call__(self, grid, block, args, *, shared_mem=0):
        module = self._load()
        params = module.params(self._entry)
        if len(args) != len(params):
            raise ValueError(f"{WHO}: {self.name} takes {len(params)} arguments, got {len(args)}")
        hosts, keys, values = [], [], {}
        for i, (value, (pname, ptype)) in enumerate(zip(args, params)):
            what = f"{i} ({pname})"
            if is_array_like(value):
                host = HostArray(host_array(value, what, WHO), what)
                hosts.append(host)
                keys.append(pname)
                values[pname] = host.data
            else:
                values[pname] = scalar_bits(value, ptype, what)
        pairs = overlapping(hosts)
        result = module.launch(self._entry, grid=parse_dim3(grid, "grid"), block=parse_dim3(block, "block"),
                               args=values, smem=int(shared_mem), arch=self.arch.replace("_", ""), quiet=self.quiet,
                               jobs=default_jobs())
        check_no_overlap(pairs, result.buffers, list(zip(hosts, keys)), f"{WHO}: {self.name}")
        write_back(hosts, result.buffers, keys, f"{WHO}: {self.name}")
        return result


class RawModule:
    """``RawModule(code=..., options=(), name_expressions=None)``: CuPy's constructor (``path=`` and ``backend``,
    ``jitify``, ... are not taken / ignored); ``arch`` (a warpsim extra) as :class:`RawKernel`'s.
    ``get_function(name)``: the kernel ``name`` names (see the module docstring), called as a :class:`RawKernel`."""

    def __init__(self, code=None, path=None, options=(), backend="nvcc", translate_cucomplex=False, *,
                 enable_cooperative_groups=False, name_expressions=None, jitify=False, arch="sm_80"):
        if code is None or path is not None:
            raise ValueError(f"{WHO}: RawModule takes code= (CUDA C++ source); path= (a cubin or PTX file) is not "
                             f"supported")
        self.code, self.options, self.arch = code, tuple(options), arch
        self.name_expressions = tuple(name_expressions or ())

    def get_function(self, name):
        kernel = RawKernel(self.code, name, self.options, arch=self.arch, _expressions=self.name_expressions)
        kernel._load()                                   # an unknown name fails here, as in CuPy
        return kernel
