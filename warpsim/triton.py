"""Run ``@triton.jit`` kernels on warpsim, unchanged, bit for bit, with no GPU.

The switch::

    import warpsim.triton
    with warpsim.triton.simulate(arch="sm_80"):
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)      # numpy arrays (or CPU torch tensors); out in place

Inside ``simulate()``, every ``kernel[grid](...)`` of a ``@triton.jit`` function (through ``@triton.heuristics``
and ``@triton.autotune`` too) compiles with Triton's own compiler for ``arch`` (``sm_80`` or ``sm_90``),
specialised as Triton specialises for those arguments, runs on the simulated GPU, and leaves the results in the
arrays. ``@triton.autotune`` runs its first config (after ``early_config_prune``) unless ``simulate(config=...)``
pins one (a ``triton.Config`` or an index). See :mod:`warpsim.frontends.triton` for how, and docs/triton.md.

The environment: ``WARPSIM_TRITON=1`` when ``warpsim.triton`` is imported turns the switch on for the whole
process (``WARPSIM_TRITON_ARCH``: the arch, default ``sm_80``), as ``TRITON_INTERPRET=1`` does for Triton's
interpreter. :func:`install` / :func:`uninstall` do the same by hand. :func:`launch` runs one kernel without the
switch and returns the core's result (``.printf``, ``.stats``).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.triton import (INSTALL_HINT, SUPPORTED_TRITON, TritonError, autotune_config, clear_cache,
                                      launch_jit, require_triton)

__all__ = ["simulate", "install", "uninstall", "launch", "active", "TritonError", "SUPPORTED_TRITON", "INSTALL_HINT",
           "clear_cache", "ENV", "ENV_ARCH"]

ENV = "WARPSIM_TRITON"
ENV_ARCH = "WARPSIM_TRITON_ARCH"

_lock = threading.Lock()
_stack = []            # the settings of the simulate() blocks entered (innermost last), or of install()
_saved = {}            # the methods the switch replaced: (class, name) -> function


def active():
    """The settings in force (``{"arch", "config", "quiet"}``), or None when the switch is off."""
    return _stack[-1] if _stack else None


def launch(kernel, grid, *args, arch="sm_80", quiet=False, **kwargs):
    """Run ``kernel[grid](*args, **kwargs)`` on warpsim once, switch or not; the core's ``LaunchResult``
    (``kernel``: a ``@triton.jit`` function, or a ``@triton.autotune``/``@triton.heuristics`` wrapper)."""
    with simulate(arch=arch, quiet=quiet):
        return _run_interface(kernel, grid, args, kwargs)


def _run_interface(kernel, grid, args, kwargs):
    return kernel.run(*args, grid=grid, warmup=False, **kwargs)


def _jit_run(self, *args, grid, warmup, **kwargs):
    settings = active()
    if warmup:                                          # compile only, as JITFunction.warmup does
        from warpsim.frontends.triton import compile_jit
        return compile_jit(self, args, kwargs, settings["arch"])[0]
    return launch_jit(self, grid, args, kwargs, settings["arch"], settings["quiet"])


def _autotune_run(self, *args, **kwargs):
    self.nargs = dict(zip(self.arg_names, args))
    config = autotune_config(self, {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")},
                             active()["config"])
    self.best_config = config
    if config.pre_hook is not None:
        config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
    try:
        return self.fn.run(*args, **kwargs, **config.all_kwargs())
    finally:
        self.nargs = None


def _patch():
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction
    for cls, name, new in ((JITFunction, "run", _jit_run), (Autotuner, "run", _autotune_run)):
        _saved[(cls, name)] = cls.__dict__[name]
        setattr(cls, name, new)


def _unpatch():
    for (cls, name), old in _saved.items():
        setattr(cls, name, old)
    _saved.clear()


def _push(arch, config, quiet):
    require_triton()
    settings = {"arch": normalize_arch(arch), "config": config, "quiet": quiet}
    with _lock:
        if not _stack:
            _patch()
        _stack.append(settings)
    return settings


def _pop(settings):
    with _lock:
        _stack.remove(settings)
        if not _stack:
            _unpatch()


@contextmanager
def simulate(arch="sm_80", config=None, quiet=False):
    """Inside, ``kernel[grid](...)`` of Triton kernels runs on warpsim for ``arch`` (see the module doc).
    ``config``: the ``@triton.autotune`` config to run (a ``triton.Config`` or an index; default: the first);
    ``quiet``: printf text is kept in the result, not printed. Blocks nest; the innermost decides.
    :class:`TritonError` when Triton is missing or of another version."""
    settings = _push(arch, config, quiet)
    try:
        yield
    finally:
        _pop(settings)


def install(arch="sm_80", config=None, quiet=False):
    """Turn the switch on until :func:`uninstall` (what ``WARPSIM_TRITON=1`` does at import)."""
    _push(arch, config, quiet)


def uninstall():
    """Turn off what :func:`install` turned on (all of it)."""
    with _lock:
        if _stack:
            _stack.clear()
            _unpatch()


if os.environ.get(ENV, "").strip() not in ("", "0"):
    install(os.environ.get(ENV_ARCH, "sm_80"))
