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

The sanitizer and the debugger take Triton kernels too: ``simulate(sanitize="race,sync")`` (or ``"all"``; also
``WARPSIM_SANITIZE=TOOLS`` in the environment, and the pytest plugin's ``--warpsim-sanitize``) runs every launch
under the sanitizer and raises ``AssertionError`` with the report when it finds anything; :func:`sanitize` runs one
launch and returns the report; :func:`debug` steps one launch in warpsim's debugger, its source lines the
``@triton.jit`` function's own (Triton's PTX carries them).
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.switch import Switch
from warpsim.frontends.triton import (INSTALL_HINT, SUPPORTED_TRITON, TritonError, autotune_config, clear_cache,
                                      compile_jit, launch_jit, prepare_jit, require_triton)

__all__ = ["simulate", "install", "uninstall", "launch", "sanitize", "debug", "active", "TritonError",
           "SUPPORTED_TRITON", "INSTALL_HINT", "clear_cache", "ENV", "ENV_ARCH", "ENV_SANITIZE"]

ENV = "WARPSIM_TRITON"
ENV_ARCH = "WARPSIM_TRITON_ARCH"
ENV_SANITIZE = "WARPSIM_SANITIZE"          # the sanitizer's tools for every launch (the pytest plugin sets it too)


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
    if settings.get("debug") is not None:
        session = debug_session(self, grid, args, kwargs, settings["arch"])
        settings["debug"].append(session)
        return None
    tools = settings.get("sanitize") or os.environ.get(ENV_SANITIZE) or None
    if tools is None:
        return launch_jit(self, grid, args, kwargs, settings["arch"], settings["quiet"])
    from warpsim.sanitize import sanitizing_launcher, settle
    launcher = sanitizing_launcher(tools, self.__name__)
    report = launch_jit(self, grid, args, kwargs, settings["arch"], settings["quiet"], launcher=launcher)
    return settle(report, settings, self.__name__)


def debug_session(fn, grid, args, kwargs, arch="sm_80"):
    """A debugger :class:`~warpsim.debug.session.Session` over ``fn[grid](*args, **kwargs)`` (nothing run yet): the
    compiled PTX, whose ``.loc`` lines are the ``@triton.jit`` function's own, so ``list``, ``break FILE:LINE`` and
    ``where`` speak its Python source. The arrays are not written back (the session holds its own copies)."""
    import inspect
    from warpsim.debug.session import Session
    kernel, _bound, dims, _hosts, core_args = prepare_jit(fn, grid, args, kwargs, arch)
    if 0 in dims:
        raise ValueError(f"warpsim.triton.debug: {fn.__name__}: grid {dims} launches nothing")
    try:
        source = inspect.getsourcefile(fn.fn)
    except (TypeError, AttributeError):
        source = None
    return Session(kernel.module, kernel.entry, dims, kernel.block, core_args, smem=kernel.shared,
                   arch=normalize_arch(arch).replace("_", ""), source=source)


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
def simulate(arch="sm_80", config=None, quiet=False, sanitize=None):
    """Inside, ``kernel[grid](...)`` of Triton kernels runs on warpsim for ``arch`` (see the module doc).
    ``config``: the ``@triton.autotune`` config to run (a ``triton.Config`` or an index; default: the first);
    ``quiet``: printf text is kept in the result, not printed; ``sanitize``: the sanitizer's tools
    (``"race,sync,init,mem"`` or ``"all"``): each launch runs under it, a finding raises ``AssertionError`` with the
    report. Blocks nest; the innermost decides. :class:`TritonError` when Triton is missing or of another version."""
    if sanitize is not None:
        from warpsim.sanitize import parse_tools
        parse_tools(sanitize)                            # a bad tool name fails here, not at the first launch
    with _switch.on({"arch": normalize_arch(arch), "config": config, "quiet": quiet, "sanitize": sanitize}):
        yield


def sanitize(kernel, grid, *args, tools="all", arch="sm_80", config=None, quiet=True, **kwargs):
    """Run ``kernel[grid](*args, **kwargs)`` on warpsim under the sanitizer (``tools``); the
    :class:`~warpsim.sanitize.report.Report` of its launch (``.findings``, ``.text()``, ``.result``), the arrays
    written back. ``kernel``: a ``@triton.jit`` function or an autotune/heuristics wrapper."""
    settings = {"arch": normalize_arch(arch), "config": config, "quiet": quiet, "sanitize": tools, "reports": []}
    with _switch.on(settings):
        kernel.run(*args, grid=grid, warmup=False, **kwargs)
    if not settings["reports"]:
        raise ValueError(f"warpsim.triton.sanitize: grid {grid} launches nothing")
    return settings["reports"][-1]


def debug(kernel, grid, *args, commands=None, arch="sm_80", config=None, **kwargs):
    """Step ``kernel[grid](*args, **kwargs)`` in warpsim's debugger (the ``warpsim debug`` command language; ``help``
    lists it): ``commands``, a list of command lines, run as a script and the exit status returned (0, or 1 when
    one failed); without, the terminal (or stdin) drives it. The source lines are the ``@triton.jit`` function's.
    The arrays are not written back."""
    import sys
    from warpsim.debug.repl import Repl, use_color
    settings = {"arch": normalize_arch(arch), "config": config, "quiet": True, "debug": []}
    with _switch.on(settings):
        kernel.run(*args, grid=grid, warmup=False, **kwargs)
    if not settings["debug"]:
        raise ValueError(f"warpsim.triton.debug: grid {grid} launches nothing")
    session = settings["debug"][-1]
    repl = Repl(session, sys.stdout, use_color(sys.stdout))
    repl.write(f"warpsim debug: {getattr(kernel, '__name__', 'kernel')} ({session.kernel}), grid "
               f"{session.grid}, block {session.block}, {arch}. `help` lists the commands.")
    repl.execute("where")
    if commands is not None:
        return repl.run_script(list(commands))
    return repl.interact() if sys.stdin.isatty() else repl.run_script(sys.stdin)


def install(arch="sm_80", config=None, quiet=False):
    """Turn the switch on until :func:`uninstall` (what ``WARPSIM_TRITON=1`` does at import)."""
    _switch.push({"arch": normalize_arch(arch), "config": config, "quiet": quiet})


def uninstall():
    """Turn the switch off (what :func:`install` and ``WARPSIM_TRITON=1`` turned on, and any block around)."""
    _switch.pop()


if os.environ.get(ENV, "").strip() not in ("", "0"):
    install(os.environ.get(ENV_ARCH, "sm_80"))
