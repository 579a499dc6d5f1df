"""``@triton.jit`` kernels on warpsim: Triton's own compiler for the target, no GPU, and the core runs the PTX.

:func:`launch_jit` does what ``kernel[grid](*args, **kwargs)`` does on a GPU, with Triton's own pieces wherever
Triton has them:

1. **Specialise**: Triton's binder (``create_function_from_signature``, the one ``JITFunction.run`` uses) over the
   arguments, for a CUDA backend of the target (``GPUTarget("cuda", 80|90, 32)``); a numpy array stands in for a
   tensor (its ``data_ptr`` and ``dtype``). So constexprs, ``tt.divisibility`` 16 of pointers and ints divisible by
   16, ints equal to 1 made constants, ``do_not_specialize`` are decided by Triton, exactly as on a GPU.
2. **Compile**: ``triton.compile(ASTSource(fn, signature, constexprs, attrs), target, options)`` with the options
   the binder collected (``num_warps``, ``num_stages``, ``debug``, ...); cached in memory by
   (``fn.cache_key``: the source and what it calls, the target, the specialisation, the options), besides
   Triton's own disk cache.
3. **Load**: :func:`warpsim.ptx.load` of the PTX (ptxas decides FMA contraction). ``wgmma`` (``tl.dot`` on sm_90)
   is not modelled yet: :class:`TritonError` naming it.
4. **Launch**: the non-constexpr parameters in order, then the two scratch pointers Triton 3.x appends (global
   scratch: ``global_scratch_size`` bytes per program, zeros; profile scratch likewise; null where 0 bytes),
   ``block = 32 * num_warps``, ``smem = metadata.shared`` (Triton's dynamic shared memory); printf text
   (``tl.device_print``) is printed as the GPU prints it. The arrays get the bytes the kernel left, in place
   (:mod:`warpsim.frontends.host`).

:func:`autotune_config` is the rule for ``@triton.autotune`` without a GPU to time configs on: the pinned one
where the user pinned one, else the first config of the list (after ``prune_configs_by["early_config_prune"]``
where given). The PTX is the same as the chosen config's on a GPU; the timing choice is not made.

Supported Triton: :data:`SUPPORTED_TRITON` (the binder and ``_pack_args`` are Triton's internals); another
version is a one-line :class:`TritonError`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpsim.errors import UnsupportedType, WarpsimError
from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.host import HostArray, check_no_overlap, host_array, is_array_like, overlapping, write_back
from warpsim.ptx import load
from warpsim.ptx.jobs import default_jobs

__all__ = ["TritonError", "TritonKernel", "SUPPORTED_TRITON", "INSTALL_HINT", "require_triton", "launch_jit",
           "prepare_jit", "compile_jit", "autotune_config", "grid_dims", "clear_cache"]

SUPPORTED_TRITON = ("3.9", "3.8", "3.6")                    # major.minor versions whose internals this module was written for
INSTALL_HINT = "pip install warpsim[triton]"
WHO = "warpsim.triton"
SCRATCH = ("global_scratch", "profile_scratch")  # the two pointers Triton 3.x appends to every kernel's parameters


class TritonError(WarpsimError):
    """A Triton kernel that cannot run on warpsim (Triton missing or of another version, a kernel using what the
    core does not model); the message is one line."""


def require_triton():
    """The ``triton`` module, checked: :class:`TritonError` when it is missing or not of :data:`SUPPORTED_TRITON`."""
    try:
        import triton
    except ImportError:
        raise TritonError(f"{WHO}: Triton is not installed ({INSTALL_HINT})") from None
    version = ".".join(triton.__version__.split(".")[:2])
    if version not in SUPPORTED_TRITON:
        raise TritonError(f"{WHO}: Triton {triton.__version__} is not a version warpsim knows (it uses Triton's "
                          f"binder and compile pipeline: supported {', '.join(SUPPORTED_TRITON)}.x)")
    return triton


@dataclass(frozen=True)
class TritonKernel:
    """One compiled specialisation: the core's ``module`` and ``entry``, the ``ptx`` text, ``runtime``: the
    Python parameter names that are PTX parameters (in order, the scratch pointers after them), and Triton's
    ``metadata`` numbers: ``num_warps``, ``shared`` bytes, ``global_scratch`` and ``profile_scratch`` bytes per
    program."""

    module: object
    entry: str
    ptx: str
    runtime: tuple
    ptx_params: tuple
    num_warps: int
    shared: int
    global_scratch: int
    profile_scratch: int

    @property
    def block(self):
        return (32 * self.num_warps, 1, 1)


class _Pointer:
    """A numpy array as Triton's binder sees a tensor: ``data_ptr()`` (its address: the alignment Triton
    specialises on) and ``dtype`` (``float32`` canonicalises to ``fp32``)."""

    __slots__ = ("address", "dtype")

    def __init__(self, array):
        self.address = array.__array_interface__["data"][0]
        self.dtype = array.dtype

    def data_ptr(self):
        return self.address


_BINDERS = {}        # (JITFunction, arch) -> (binder, backend, target)
_COMPILED = {}       # (fn.cache_key, arch, specialisation, options) -> TritonKernel


def clear_cache():
    """Forget compiled kernels and binders (Triton's disk cache stays)."""
    _BINDERS.clear()
    _COMPILED.clear()


def _binder(fn, arch):
    found = _BINDERS.get((fn, arch))
    if found is None:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend
        from triton.runtime.jit import create_function_from_signature
        target = GPUTarget("cuda", int(arch.removeprefix("sm_")), 32)
        backend = make_backend(target)
        found = (create_function_from_signature(fn.signature, fn.params, backend), backend, target)
        _BINDERS[(fn, arch)] = found
    return found


def _for_binder(value, name):
    """What the binder gets for one argument: numpy arrays as :class:`_Pointer`; a CPU tensor as itself (Triton
    knows tensors); a GPU array refused (:func:`~warpsim.frontends.host.host_array`)."""
    if isinstance(value, np.ndarray):
        return _Pointer(value)
    if is_array_like(value):
        host_array(value, name, WHO)             # refuses a CUDA tensor or a CuPy array, in one line
    return value


def compile_jit(fn, args, kwargs, arch="sm_80"):
    """``(TritonKernel, bound_args)`` for ``fn`` (a ``triton.JITFunction``) called with ``args``/``kwargs``
    (Triton options such as ``num_warps`` among them), compiled for ``arch`` once per specialisation."""
    triton = require_triton()
    from triton import knobs
    arch = normalize_arch(arch)
    kwargs = dict(kwargs)
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    if hasattr(knobs.compilation, "fpsan_homomorphic_casts"):       # Triton 3.9 sets it; 3.8 has no such knob
        kwargs["fpsan_homomorphic_casts"] = knobs.compilation.fpsan_homomorphic_casts
    binder, backend, target = _binder(fn, arch)
    names = [p.name for p in fn.params]
    wrapped = [_for_binder(a, names[i] if i < len(names) else str(i)) for i, a in enumerate(args)]
    wrapped_kw = {k: _for_binder(v, k) if k in names else v for k, v in kwargs.items()}
    bound, specialization, options = binder(*wrapped, **wrapped_kw)
    key = (fn.cache_key, arch, repr(specialization), repr(sorted(options.items(), key=lambda kv: kv[0])))
    kernel = _COMPILED.get(key)
    if kernel is None:
        kernel = _COMPILED[key] = _compile(triton, fn, backend, target, arch, wrapped_kw, bound, specialization,
                                           options)
    real = dict(zip(names, args))
    real.update({k: v for k, v in kwargs.items() if k in real or k in names})
    return kernel, {name: real.get(name, value) for name, value in bound.items()}


def _compile(triton, fn, backend, target, arch, kwargs, bound, specialization, options):
    opts, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, specialization, options)
    if opts.num_ctas != 1:
        raise TritonError(f"{WHO}: {fn.__name__}: num_ctas={opts.num_ctas} (thread-block clusters) is not modelled")
    compiled = triton.compile(triton.compiler.ASTSource(fn, signature, constexprs, attrs), target=target,
                              options=opts.__dict__)
    meta = compiled.metadata
    ptx = compiled.asm["ptx"]
    try:
        module = load(ptx, filename=f"{meta.name}.{arch}.ptx", arch=arch)
    except UnsupportedType as e:
        if "wgmma" in str(e):
            raise TritonError(f"{WHO}: {fn.__name__} on {arch} uses a form of wgmma (Hopper's tl.dot) that warpsim "
                              f"does not model yet ({str(e).splitlines()[0]}); simulate it for sm_80 (mma.sync)") from None
        raise
    runtime = tuple(name for name, ty in signature.items() if ty != "constexpr")
    if any(isinstance(ty, tuple) for name, ty in signature.items()):
        raise TritonError(f"{WHO}: {fn.__name__}: tuple arguments are not supported yet")
    ptx_params = tuple(name for name, _ in module.params(meta.name))
    if len(ptx_params) != len(runtime) + len(SCRATCH):
        raise TritonError(f"{WHO}: {fn.__name__}: the PTX takes {len(ptx_params)} parameters, expected "
                          f"{len(runtime)} arguments and {len(SCRATCH)} scratch pointers")
    return TritonKernel(module, meta.name, ptx, runtime, ptx_params, meta.num_warps, meta.shared,
                        meta.global_scratch_size, meta.profile_scratch_size)


def grid_dims(grid, bound):
    """``(x, y, z)`` of a Triton grid: a tuple of 1 to 3 ints, or a callable of the bound arguments (``META``)."""
    if callable(grid):
        grid = grid(bound)
    grid = tuple(int(g) for g in grid)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"{WHO}: grid {grid}: give one to three ints")
    return grid + (1,) * (3 - len(grid))


def launch_jit(fn, grid, args, kwargs, arch="sm_80", quiet=False, launcher=None):
    """Run ``fn[grid](*args, **kwargs)`` on warpsim (see the module doc); the core's ``LaunchResult``. A grid with
    a zero dimension launches nothing (as on a GPU) and returns None. ``launcher(module, entry, launch keywords,
    names)``: runs the launch instead of ``PtxModule.launch`` and returns ``(LaunchResult or None, what to return)``;
    ``names`` maps PTX parameter names to the kernel's (``warpsim.triton`` runs the sanitizer so); the arrays are
    written back from the result as after a plain launch."""
    kernel, bound, dims, hosts, core_args = prepare_jit(fn, grid, args, kwargs, arch)
    if 0 in dims:
        return None
    pairs = overlapping(hosts)
    model = normalize_arch(arch).replace("_", "")
    launch = dict(grid=dims, block=kernel.block, args=core_args, smem=kernel.shared, arch=model, quiet=quiet)
    if launcher is None:
        result = returned = kernel.module.launch(kernel.entry, jobs=default_jobs(), **launch)
    else:
        result, returned = launcher(kernel.module, kernel.entry, launch, dict(zip(kernel.ptx_params, kernel.runtime)))
    if result is not None:
        keys = [kernel.ptx_params[kernel.runtime.index(h.name)] for h in hosts]
        check_no_overlap(pairs, result.buffers, list(zip(hosts, keys)), f"{WHO}: {fn.__name__}")
        write_back(hosts, result.buffers, keys, f"{WHO}: {fn.__name__}")
    return returned


def prepare_jit(fn, grid, args, kwargs, arch="sm_80"):
    """What a launch of ``fn[grid](*args, **kwargs)`` needs: ``(kernel, bound arguments, grid dims, host arrays,
    the core's arguments by PTX parameter)``; the scratch buffers made for the grid."""
    kernel, bound = compile_jit(fn, args, kwargs, arch)
    dims = grid_dims(grid, bound)
    hosts, core_args = [], {}
    for name, pname in zip(kernel.runtime, kernel.ptx_params):
        value = bound[name]
        if is_array_like(value):
            host = HostArray(host_array(value, name, WHO), name)
            hosts.append(host)
            core_args[pname] = host.data
        elif isinstance(value, (bool, np.bool_)):
            core_args[pname] = int(value)
        elif value is None:
            core_args[pname] = 0
        else:
            core_args[pname] = value
    programs = dims[0] * dims[1] * dims[2]
    for pname, size in zip(kernel.ptx_params[len(kernel.runtime):], (kernel.global_scratch, kernel.profile_scratch)):
        core_args[pname] = np.zeros(size * programs, np.uint8) if size else 0
    return kernel, bound, dims, hosts, core_args


def autotune_config(tuner, kwargs, pinned=None):
    """The ``triton.Config`` an ``Autotuner`` runs with on warpsim: ``pinned`` (a ``Config``, or an index into the
    configs) where given, else the first config after ``early_config_prune`` (no GPU to time them on)."""
    configs = list(tuner.configs)
    if pinned is not None:
        if isinstance(pinned, int):
            if not -len(configs) <= pinned < len(configs):
                raise ValueError(f"{WHO}: autotune config {pinned}: the kernel has {len(configs)} configs")
            return configs[pinned]
        return pinned
    prune = getattr(tuner, "early_config_prune", None)
    if prune is not None and len(configs) > 1:
        nargs = {**dict(zip(tuner.arg_names, tuner.nargs or ())), **kwargs}
        configs = list(prune(configs, nargs, **kwargs)) or configs
    return configs[0]
