"""``@cuda.jit`` kernels (numba-cuda) on warpsim: ``numba.cuda.compile_ptx`` for the target, no GPU, the core runs it.

:func:`launch_dispatcher` does what ``kernel[grid, block, stream, sharedmem](*args)`` does on a GPU with host
arrays (Numba copies them to the device and back):

1. **Type** each argument as Numba's CUDA dispatcher types it (``typeof(value, Purpose.argument)``: a float32
   C-contiguous vector is ``float32[::1]``, a Python int ``int64``, a float ``float64``);
2. **Compile** ``compile_ptx(py_func, argtypes, cc=(8, 0)|(9, 0))`` with the kernel's own options (``fastmath``,
   ``lineinfo``, ``debug``, ``opt``, ``launch_bounds``), once per (function, argument types, target, options);
3. **Launch**: every array as Numba passes one, ``meminfo, parent, nitems, itemsize, data, shape..., strides...``
   (null ``meminfo`` and ``parent``; strides in bytes, so a strided view is addressed as on a GPU); scalars as
   the PTX parameter takes them; results written back into the arrays (:mod:`warpsim.frontends.host`).

Not modelled: ``cuda.to_device`` / device arrays (there is no device: pass numpy arrays), records and complex
scalars as arguments, cooperative launches.
"""

from __future__ import annotations

import numpy as np

from warpsim.errors import WarpsimError
from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.host import HostArray, check_no_overlap, host_array, is_array_like, overlapping, write_back
from warpsim.frontends.kernel import parse_dim3
from warpsim.ptx import load
from warpsim.ptx.jobs import default_jobs

__all__ = ["NumbaError", "NumbaKernel", "INSTALL_HINT", "require_numba_cuda", "compile_dispatcher",
           "launch_dispatcher", "clear_cache"]

INSTALL_HINT = "pip install warpsim[numba]"
WHO = "warpsim.numba"
OPTIONS = ("debug", "lineinfo", "fastmath", "opt", "launch_bounds")    # the kernel options compile_ptx takes


class NumbaError(WarpsimError):
    """A Numba CUDA kernel that cannot run on warpsim (numba-cuda missing, an argument of a kind not modelled); the
    message is one line."""


def require_numba_cuda():
    """``numba.cuda``, or :class:`NumbaError` with the install hint."""
    try:
        from numba import cuda
        from numba.cuda import compile_ptx  # noqa: F401 -- numba-cuda's, not the deprecated in-tree target
    except ImportError:
        raise NumbaError(f"{WHO}: numba-cuda is not installed ({INSTALL_HINT})") from None
    return cuda


class NumbaKernel:
    """One compiled specialisation: the core's ``module``, its ``entry``, the ``ptx`` text and the ``argtypes``."""

    __slots__ = ("module", "entry", "ptx", "argtypes", "ptx_types")

    def __init__(self, module, entry, ptx, argtypes):
        self.module, self.entry, self.ptx, self.argtypes = module, entry, ptx, argtypes
        self.ptx_types = [t for _, t in module.params(entry)]


_COMPILED = {}        # (py_func, argtypes, arch, options) -> NumbaKernel


def clear_cache():
    _COMPILED.clear()


def _argtype(value, name):
    from numba.core.typing.typeof import Purpose, typeof
    if is_array_like(value):
        value = host_array(value, name, WHO)
    try:
        return typeof(value, Purpose.argument)
    except ValueError as e:
        raise NumbaError(f"{WHO}: argument {name}: Numba cannot type a {type(value).__name__} ({e})") from None


def compile_dispatcher(dispatcher, args, arch="sm_80"):
    """The :class:`NumbaKernel` of ``dispatcher`` (a ``@cuda.jit`` kernel) for ``args``, compiled once."""
    require_numba_cuda()
    from numba.cuda import compile_ptx
    arch = normalize_arch(arch)
    names = list(getattr(dispatcher.py_func, "__code__").co_varnames[:len(args)])
    argtypes = tuple(_argtype(a, names[i] if i < len(names) else str(i)) for i, a in enumerate(args))
    options = {k: dispatcher.targetoptions.get(k) for k in OPTIONS if dispatcher.targetoptions.get(k) is not None}
    key = (dispatcher.py_func, argtypes, arch, tuple(sorted(options.items())))
    kernel = _COMPILED.get(key)
    if kernel is None:
        cc = tuple(int(c) for c in arch.removeprefix("sm_"))
        try:
            ptx, _ = compile_ptx(dispatcher.py_func, argtypes, cc=cc, **options)
        except AttributeError as e:         # numba-cuda's typing refers to numpy names numpy removed (row_stack)
            if not str(e).startswith("module 'numpy' has no attribute"):
                raise
            import numba
            raise NumbaError(f"{WHO}: numba-cuda (numba {numba.__version__}) does not run with numpy "
                             f"{np.__version__}: {e} (seen with numpy 2.4, which removed row_stack): upgrade "
                             f"numba-cuda, or use an older numpy") from None
        module = load(ptx, filename=f"{dispatcher.py_func.__name__}.{arch}.ptx", arch=arch)
        if len(module.kernels) != 1:
            raise NumbaError(f"{WHO}: {dispatcher.py_func.__name__}: {len(module.kernels)} kernels in the PTX")
        kernel = _COMPILED[key] = NumbaKernel(module, module.kernels[0], ptx, argtypes)
    return kernel


def _scalar(value, ptx_type, name):
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (complex, np.complexfloating)):
        raise NumbaError(f"{WHO}: argument {name}: complex scalars are not modelled yet")
    if isinstance(value, (int, np.integer)) and ptx_type[0] in "ub" and int(value) < 0:
        return int(value) + (1 << (8 * int(ptx_type[1:])))        # the two's complement bits
    return value


def launch_dispatcher(dispatcher, grid, block, args, arch="sm_80", sharedmem=0, quiet=False, launcher=None):
    """Run ``dispatcher[grid, block, 0, sharedmem](*args)`` on warpsim (see the module doc); the core's
    ``LaunchResult``. ``launcher(module, entry, launch keywords, names)``: runs the launch instead of
    ``PtxModule.launch`` and returns ``(LaunchResult or None, what to return)``; ``names`` maps PTX parameter names
    to the kernel's (``warpsim.numba`` runs the sanitizer so)."""
    kernel = compile_dispatcher(dispatcher, args, arch)
    names = list(dispatcher.py_func.__code__.co_varnames[:len(args)])
    values, hosts, keys = [], [], []
    params = [p for p, _ in kernel.module.params(kernel.entry)]
    for i, value in enumerate(args):
        name = names[i] if i < len(names) else str(i)
        if is_array_like(value):
            array = host_array(value, name, WHO)
            host = HostArray(array, name)
            keys.append(params[len(values) + 4])
            hosts.append(host)
            values += [0, 0, array.size, array.itemsize, host.data, *array.shape, *array.strides]
        else:
            values.append(_scalar(value, kernel.ptx_types[len(values)], name))
    if len(values) != len(params):
        raise NumbaError(f"{WHO}: {dispatcher.py_func.__name__}: {len(values)} parameter values for the PTX's "
                         f"{len(params)} (an argument type not modelled)")
    values = [_scalar(v, t, "?") if isinstance(v, (int, np.integer)) else v for v, t in zip(values, kernel.ptx_types)]
    pairs = overlapping(hosts)
    launch = dict(grid=parse_dim3(grid, "grid"), block=parse_dim3(block, "block"), args=dict(zip(params, values)),
                  smem=int(sharedmem), arch=normalize_arch(arch).replace("_", ""), quiet=quiet)
    if launcher is None:
        result = returned = kernel.module.launch(kernel.entry, jobs=default_jobs(), **launch)
    else:
        result, returned = launcher(kernel.module, kernel.entry, launch, dict(zip(keys, (h.name for h in hosts))))
    if result is not None:
        check_no_overlap(pairs, result.buffers, list(zip(hosts, keys)), f"{WHO}: {dispatcher.py_func.__name__}")
        write_back(hosts, result.buffers, keys, f"{WHO}: {dispatcher.py_func.__name__}")
    return returned
