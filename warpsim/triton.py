"""Run ``@triton.jit`` kernels on warpsim, unchanged, bit for bit, with no GPU.

The switch::

    import warpsim.triton
    with warpsim.triton.simulate(arch="sm_80"):
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)      # numpy arrays (or CPU torch tensors); out in place

Inside ``simulate()``, every ``kernel[grid](...)`` of a ``@triton.jit`` function (through ``@triton.heuristics``
and ``@triton.autotune`` too) compiles with Triton's own compiler for ``arch`` (``sm_80`` or ``sm_90``),
specialised as Triton specialises for those arguments, runs on the simulated GPU, and leaves the results in the
arrays. ``@triton.autotune`` runs its first config (after ``early_config_prune``) unless ``simulate(config=...)``
pins one (a ``triton.Config`` or an index). See :mod:`warpsim.frontends.triton` for how, and docs/guides/triton.md.

The environment: ``WARPSIM_TRITON=1`` when ``warpsim.triton`` is imported turns the switch on for the whole
process (``WARPSIM_TRITON_ARCH``: the arch, default ``sm_80``), as ``TRITON_INTERPRET=1`` does for Triton's
interpreter. :func:`install` / :func:`uninstall` do the same by hand. :func:`launch` runs one kernel without the
switch and returns the core's result (``.printf``, ``.stats``).
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.switch import Switch
from warpsim.frontends.triton import (INSTALL_HINT, SUPPORTED_TRITON, TritonError, autotune_config, clear_cache,
                                      compile_jit, launch_jit, require_triton)

__all__ = ["simulate", "install", "uninstall", "launch", "active", "TritonError", "SUPPORTED_TRITON", "INSTALL_HINT",
           "clear_cache", "ENV", "ENV_ARCH"]

ENV = "WARPSIM_TRITON"
ENV_ARCH = "WARPSIM_TRITON_ARCH"


def _patches():
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction
    return [(JITFunction, "run", _jit_run), (Autotuner, "run", _autotune_run)]


_switch = Switch(_patches, require_triton)


def active():
    """The settings in force (``{"arch", "config", "quiet"}``), or None when the switch is off."""
    return _switch.active()


def launch(kernel, grid, *args, arch="sm_80", quiet=False, **kwargs):
    """Run ``kernel[grid](*args, **kwargs)`` on warpsim once, switch or not; the core's ``LaunchResult``
    (``kernel``: a ``@triton.jit`` function, or a ``@triton.autotune``/``@triton.heuristics`` wrapper)."""
    with simulate(arch=arch, quiet=quiet):
        return kernel.run(*args, grid=grid, warmup=False, **kwargs)


def _jit_run(self, *args, grid, warmup, **kwargs):
    settings = active()
    if warmup:                                          # compile only, as JITFunction.warmup does
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


@contextmanager
def simulate(arch="sm_80", config=None, quiet=False):
    """Inside, ``kernel[grid](...)`` of Triton kernels runs on warpsim for ``arch`` (see the module doc).
    ``config``: the ``@triton.autotune`` config to run (a ``triton.Config`` or an index; default: the first);
    ``quiet``: printf text is kept in the result, not printed. Blocks nest; the innermost decides.
    :class:`TritonError` when Triton is missing or of another version."""
    with _switch.on({"arch": normalize_arch(arch), "config": config, "quiet": quiet}):
        yield


def install(arch="sm_80", config=None, quiet=False):
    """Turn the switch on until :func:`uninstall` (what ``WARPSIM_TRITON=1`` does at import)."""
    _switch.push({"arch": normalize_arch(arch), "config": config, "quiet": quiet})


def uninstall():
    """Turn the switch off (what :func:`install` and ``WARPSIM_TRITON=1`` turned on, and any block around)."""
    _switch.pop()


if os.environ.get(ENV, "").strip() not in ("", "0"):
    install(os.environ.get(ENV_ARCH, "sm_80"))
