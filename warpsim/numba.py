"""Run Numba ``@cuda.jit`` kernels on warpsim, unchanged, bit for bit, with no GPU.

::

    import warpsim.numba
    with warpsim.numba.simulate(arch="sm_80"):
        saxpy[blocks, threads](a, x, y, out)          # numpy arrays; results land in them, in place

    warpsim.numba.launch(saxpy, blocks, threads, a, x, y, out)    # the same, once, returning the core's result

Inside ``simulate()``, ``kernel[grid, block]`` (and ``[grid, block, stream, sharedmem]``) of a ``@cuda.jit``
kernel compiles it with ``numba.cuda.compile_ptx`` for ``arch`` as Numba types the arguments, and the call runs it
on the simulated GPU (see :mod:`warpsim.frontends.numba_cuda`, and docs/guides/numba.md: what differs from
``NUMBA_ENABLE_CUDASIM``). ``WARPSIM_NUMBA=1`` when ``warpsim.numba`` is imported turns the switch on for the
process (``WARPSIM_NUMBA_ARCH``: the arch, default ``sm_80``).

The sanitizer takes Numba kernels too: :func:`sanitize` runs one launch under it and returns the report;
``simulate(sanitize="race,sync")`` (and ``WARPSIM_SANITIZE=TOOLS``, which ``pytest --warpsim-sanitize`` sets) runs
every launch under it and raises ``AssertionError`` with the report when it finds anything. Findings name the
kernel's Python lines (compile with ``lineinfo=True``: ``@cuda.jit(lineinfo=True)``) and its argument names.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.numba_cuda import INSTALL_HINT, NumbaError, clear_cache, launch_dispatcher, require_numba_cuda
from warpsim.frontends.switch import Switch

__all__ = ["simulate", "install", "uninstall", "launch", "sanitize", "active", "NumbaError", "INSTALL_HINT",
           "clear_cache", "ENV", "ENV_ARCH", "ENV_SANITIZE"]

ENV = "WARPSIM_NUMBA"
ENV_ARCH = "WARPSIM_NUMBA_ARCH"
ENV_SANITIZE = "WARPSIM_SANITIZE"          # the sanitizer's tools for every launch (the pytest plugin sets it too)


class _Configured:
    """``kernel[grid, block, stream, sharedmem]`` under the switch: calling it launches on warpsim."""

    def __init__(self, dispatcher, grid, block, sharedmem):
        self.dispatcher, self.grid, self.block, self.sharedmem = dispatcher, grid, block, sharedmem

    def __call__(self, *args):
        settings = _switch.active() or {"arch": "sm_80", "quiet": False}
        tools = settings.get("sanitize") or os.environ.get(ENV_SANITIZE) or None
        if tools is None:
            return launch_dispatcher(self.dispatcher, self.grid, self.block, args, settings["arch"], self.sharedmem,
                                     settings["quiet"])
        from warpsim.sanitize import sanitizing_launcher, settle
        name = self.dispatcher.py_func.__name__
        report = launch_dispatcher(self.dispatcher, self.grid, self.block, args, settings["arch"], self.sharedmem,
                                   settings["quiet"], launcher=sanitizing_launcher(tools, name))
        return settle(report, settings, name)


def _getitem(self, config):
    if not isinstance(config, tuple) or len(config) not in (2, 3, 4):
        raise ValueError("must specify at least the griddim and blockdim")
    grid, block = config[:2]
    return _Configured(self, grid, block, config[3] if len(config) == 4 else 0)


def _patches():
    from numba.cuda.dispatcher import CUDADispatcher
    return [(CUDADispatcher, "__getitem__", _getitem)]


_switch = Switch(_patches, require_numba_cuda)


def active():
    """The settings in force (``{"arch", "quiet"}``), or None when the switch is off."""
    return _switch.active()


def launch(kernel, grid, block, *args, arch="sm_80", sharedmem=0, quiet=False):
    """Run ``kernel[grid, block, 0, sharedmem](*args)`` on warpsim once; the core's ``LaunchResult`` (``.printf``,
    ``.stats``). ``kernel``: a ``@cuda.jit`` kernel."""
    require_numba_cuda()
    return launch_dispatcher(kernel, grid, block, args, normalize_arch(arch), sharedmem, quiet)


def sanitize(kernel, grid, block, *args, tools="all", arch="sm_80", sharedmem=0, quiet=True):
    """Run ``kernel[grid, block, 0, sharedmem](*args)`` on warpsim under the sanitizer (``tools``); the
    :class:`~warpsim.sanitize.report.Report` (``.findings``, ``.text()``, ``.result``), the arrays written back."""
    from warpsim.sanitize import sanitizing_launcher
    require_numba_cuda()
    return launch_dispatcher(kernel, grid, block, args, normalize_arch(arch), sharedmem, quiet,
                             launcher=sanitizing_launcher(tools, kernel.py_func.__name__))


@contextmanager
def simulate(arch="sm_80", quiet=False, sanitize=None):
    """Inside, ``kernel[grid, block](*args)`` of ``@cuda.jit`` kernels runs on warpsim for ``arch``; ``quiet``:
    printf text is not echoed; ``sanitize``: the sanitizer's tools (``"race,sync,init,mem"`` or ``"all"``): each
    launch runs under it, a finding raises ``AssertionError`` with the report. Blocks nest. :class:`NumbaError`
    when numba-cuda is missing."""
    if sanitize is not None:
        from warpsim.sanitize import parse_tools
        parse_tools(sanitize)                            # a bad tool name fails here, not at the first launch
    with _switch.on({"arch": normalize_arch(arch), "quiet": quiet, "sanitize": sanitize}):
        yield


def install(arch="sm_80", quiet=False):
    """Turn the switch on until :func:`uninstall` (what ``WARPSIM_NUMBA=1`` does at import)."""
    _switch.push({"arch": normalize_arch(arch), "quiet": quiet})


def uninstall():
    """Turn the switch off."""
    _switch.pop()


if os.environ.get(ENV, "").strip() not in ("", "0"):
    install(os.environ.get(ENV_ARCH, "sm_80"))
