"""A first launch's compile on every core: the interpreter's families compiled in parallel processes.

On a cold Numba cache (a fresh install, or sources that changed: :mod:`warpsim.numba_cache`) the first call of
:func:`warpsim.ptx.interp.run_cta` compiles the interpreter and every instruction family it calls, one function after
another on one core: some 255 functions, minutes on a small machine. Numba compiles in one thread per process, but its
cache is shared on disk, and a caller finds a callee compiled by another process there. So before that first call,
:func:`compile_families` splits the families (:data:`GROUPS`, each a caller with the callees only it uses) over
``jobs`` processes: helper processes compile their share into the cache while this one compiles its own, then this
one compiles ``run_cta`` itself, which loads every family from the cache instead of compiling it.

The whole of it is one ``warpsim:compile`` event of Numba's event API (:mod:`numba.core.event`), its data a
:class:`Progress` (parts compiled of how many, helpers still at work), so that a command can say how far a first run
is (:func:`warpsim.commands.program_args.announce_compiling`) without this layer knowing who listens.

The results cannot change: the helpers compile the same functions for the same argument types, into the cache the
launch reads (a signature that did not match would only be compiled again, costing time). Contract:

- it runs only when ``run_cta`` has no cached code for the launch's argument types (warm: it returns at once);
- ``jobs`` is the launch's own default (``$WARPSIM_JOBS``, else the CPUs this process may use: ``1`` compiles in
  this process alone, as before), at most :data:`MAX_JOBS`, and 1 in a worker of a process pool;
- a helper that fails or is killed costs only time: this process compiles what is missing when ``run_cta`` is typed;
- on a cold cache ``run_cta`` is compiled here (``run_cta.compile``), so the launch's first call only runs.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import pickle
import subprocess
import sys
import threading

import numpy as np
from numba import typeof
from numba.core import event

from warpsim.ptx.jobs import default_jobs

__all__ = ["GROUPS", "HOPPER_GROUPS", "MAX_JOBS", "RUN_CTA_SECONDS", "EVENT", "DONE", "Progress", "family_calls",
           "compile_families", "jobs_wanted", "partition", "is_cached", "is_cold"]

MAX_JOBS = 4
RUN_CTA_SECONDS = 17.0              # run_cta's own compile (with warp_simple), its families in the cache

# (group, host seconds of its cold compile on a 2-CPU AMD EPYC, 2026-12-07), heaviest first. A group is compiled
# in one process, callees before callers, so that no process compiles another's functions while typing its own.
GROUPS = (
    ("floats", 38.0),               # the float family's warp path (warp_simple, which calls it and the integer
    ("integer", 22.0),              # family's, compiles with run_cta: 3 s), the integer family's and bra
    ("bulk_copy", 18.0),            # cp.async.bulk, TMA
    ("wgmma", 14.0),
    ("thread_op", 13.0),            # every family's per-thread form
    ("collectives", 12.0),          # shfl/vote/match/redux, bar, the warp's ld/st and cp.async, cluster
    ("mma", 8.0),
    ("ldmatrix", 6.5),
    ("mbarrier", 6.0),
)


HOPPER_GROUPS = ("bulk_copy", "wgmma", "mbarrier")   # with the cluster functions: run_cta's ``hopper`` families
EVENT = "warpsim:compile"                            # the Numba event kind a first launch's compile is
DONE = "warpsim-precompiled"                         # a helper's line: a group compiled


class Progress:
    """How far a first launch's compile is: ``parts`` of ``total`` done (a group of families each, in this process or
    a helper, and ``run_cta`` last) and ``helpers``, the helper processes still compiling. Written by
    :func:`compile_families` and the threads that read its helpers, read by whoever listens to :data:`EVENT`."""

    def __init__(self, total, helpers=0):
        self.total, self.parts, self.helpers = total, 0, helpers
        self._lock = threading.Lock()

    def advance(self):
        with self._lock:
            self.parts += 1

    def helper_done(self):
        with self._lock:
            self.helpers -= 1


def family_calls(args):
    """``{group: [(dispatcher, argument types)]}``: the compiled families :func:`~warpsim.ptx.interp.run_cta` calls,
    each with the types of the arguments it passes them, from ``args``, the tuple a launch passes ``run_cta`` (with
    ``hopper`` None, the variant without :data:`HOPPER_GROUPS` and the cluster functions).

    The argument lists are ``run_cta``'s (and those of the helpers it inlines: ``warp_collective``,
    ``thread_arith``); ``tests/ptx/test_precompile.py`` checks them against the signatures the cache holds."""
    from warpsim.ptx import families as f
    from warpsim.ptx.families import bulk_copy, cluster, collectives, control, floats, integer, mbarrier, memory
    from warpsim.ptx.families import async_copy, barriers, ldmatrix, mma, wgmma
    from warpsim.ptx.interp import run_cta

    names = run_cta.py_func.__code__.co_varnames[:run_cta.py_func.__code__.co_argcount]
    a = dict(zip(names, args))
    code, opnd, regs, pc, smem, gmem, ends = (a[k] for k in ("code", "opnd", "regs", "pc", "smem", "gmem", "ends"))
    local, const, kparam, fparam = a["local"], a["const"], a["kparam"], a["fparam"]
    pend, npend, groups, pend_map, fault = a["pend"], a["npend"], a["groups"], a["pend_map"], a["fault"]
    status, bar_id, mt, shadow, sstate, finds = a["status"], a["bar_id"], a["mt"], a["shadow"], a["sstate"], a["finds"]
    mbar, ctx, csmem, cmbar = a["mbar"], a["ctx"], a["csmem"], a["cmbar"]
    i = np.int64(0)                                       # p, w, lane, t, group, gmask, alive, steps: int64
    op = code.dtype.type(0)                               # op = code[p, OP]
    r = regs[0, 0]                                        # regs[w, lane]
    clock = a["clocks"][0]                                # clocks[w]
    calls = {
        "floats": [(floats.warp_float_rows, (i, op, i, i, i, code, opnd, regs, pc, mt))],
        "integer": [(integer.warp_integer, (i, op, i, i, i, code, opnd, regs, pc)),
                    (control.warp_branch, (i, i, i, i, code, opnd, pc))],
        "bulk_copy": [(bulk_copy.warp_bulk_copy, (i, i, i, i, code, opnd, regs, pc, smem, gmem, ends, local, const,
                                                  kparam, fparam, mbar, fault, csmem, cmbar, ctx, pend_map, a["blog"],
                                                  i))],
        "wgmma": [(wgmma.warp_wgmma_op, (i, i, i, code, opnd, regs, pc, smem, a["mma_arch"], a["wgpend"], fault,
                                         pend_map)),
                  (wgmma.wgmma_touch, (i, code, opnd, a["wgpend"][0], i))],
        "thread_op": [(integer.thread_integer, (i, op, i, i, i, code, opnd, r, pc, a["ccf"], ctx, clock)),
                      (floats.thread_float, (i, op, i, code, opnd, r, pc, mt)),
                      (memory.thread_ld_st, (i, op, i, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam,
                                             pend_map, pc, fault, shadow, sstate, finds)),
                      (f.thread_op, (i, op, i, i, i, code, opnd, a["copies"], r, pc, status, a["stack"], a["depth"],
                                     a["ccf"], smem, gmem, ends, local, const, kparam, fparam, pend, npend, groups,
                                     pend_map, ctx, clock, a["prbuf"], a["prrec"], a["nprint"], fault, mt, shadow,
                                     sstate, finds))],
        "collectives": [(collectives.sync_members, (i, op, i, i, code, opnd, regs)),
                        (collectives.warp_collectives, (i, op, i, i, code, opnd, regs, pc, fault, sstate, finds)),
                        (barriers.warp_barrier, (i, i, i, i, code, opnd, regs, pc, status, a["bars"][0],
                                                 a["bars"][1], bar_id, fault)),
                        (async_copy.warp_cp_async, (i, op, i, i, i, code, opnd, regs, pc, smem, gmem, ends, pend,
                                                    npend, groups, pend_map, shadow, sstate, finds)),
                        (memory.warp_shared_global, (i, op, i, i, i, code, opnd, regs, pc, smem, gmem, ends,
                                                     pend_map, fault, shadow, sstate, finds)),
                        (memory.warp_ld_param, (i, i, i, i, code, opnd, regs, pc, gmem, ends, smem, local, const,
                                                kparam, fparam, fault)),
                        (control.warp_exit, (i, op, i, i, i, pc, status, a["depth"], npend)),
                        (cluster.generic_dsmem, (i, i, i, code, opnd, regs, ctx)),
                        (cluster.warp_dsmem, (i, op, i, i, i, code, opnd, regs, pc, csmem, ctx, fault)),
                        (cluster.warp_bar_cluster, (i, i, i, i, i, code, pc, status, bar_id, a["cl"], fault))],
        "mma": [(mma.warp_mma_sync, (i, i, i, code, opnd, regs, pc, a["mma_arch"], fault))],
        "ldmatrix": [(ldmatrix.warp_matrix, (i, op, i, i, code, opnd, regs, pc, smem, pend_map, fault, shadow, sstate,
                                             finds))],
        "mbarrier": [(mbarrier.warp_mbarrier, (i, i, i, i, code, opnd, regs, pc, status, bar_id, smem, gmem, ends,
                                               local, const, kparam, fparam, mbar, pend, npend, groups, pend_map,
                                               fault, cmbar, ctx)),
                     (mbarrier.wake_mbarrier_waiters, (code, opnd, regs, pc, status, bar_id, smem, gmem, ends, local,
                                                       const, kparam, fparam, mbar, fault))],
    }
    if a["hopper"] is None:                               # run_cta compiled without sm_90's families
        calls = {g: [(fn, vals) for fn, vals in c if fn.py_func.__module__ != cluster.__name__]
                 for g, c in calls.items() if g not in HOPPER_GROUPS}
    return {g: [(fn, tuple(typeof(v) for v in vals)) for fn, vals in calls[g]] for g, _ in GROUPS if g in calls}


def jobs_wanted():
    """How many processes compile: the launch's own ``--jobs`` default (:func:`warpsim.ptx.jobs.default_jobs`:
    ``$WARPSIM_JOBS``, else the CPUs this process may use), at most :data:`MAX_JOBS`; 1 in a worker of a
    ``multiprocessing`` pool (hwcheck's fuzz workers, a launch's ``jobs``), whose siblings share the CPUs already."""
    if multiprocessing.parent_process() is not None:
        return 1
    return min(default_jobs(), MAX_JOBS)


def partition(weights, jobs, head=0.0):
    """The groups of ``weights`` (``[(name, seconds)]``) split over ``jobs`` processes, heaviest group first to the
    least loaded (longest processing time first): a list of ``jobs`` lists of names, the first this process's, which
    starts with ``head`` seconds of its own (``run_cta``'s compile, after the families: not parallel work, but a
    share with it keeps groups that share callees in one process, which a split by weight alone does not, and
    each process would compile them: measured, the same wall time and 20 s more CPU time).

    >>> partition([("a", 6.0), ("b", 4.0), ("c", 3.0), ("d", 2.0)], 2)
    [['a', 'd'], ['b', 'c']]
    >>> partition([("a", 6.0), ("b", 4.0), ("c", 3.0), ("d", 2.0)], 2, head=5.0)
    [['b', 'd'], ['a', 'c']]
    """
    loads = [[head if k == 0 else 0.0, k, []] for k in range(max(1, jobs))]
    for name, seconds in sorted(weights, key=lambda ws: -ws[1]):
        least = min(loads, key=lambda entry: (entry[0], entry[1]))
        least[0] += seconds
        least[2].append(name)
    return [entry[2] for entry in loads]


def is_cached(dispatcher, sig):
    """Whether Numba's on-disk cache holds ``dispatcher``'s code for the argument types ``sig``; None when the cache
    cannot be read that way (another Numba's internals: tests/ptx/test_precompile.py would say so)."""
    try:
        cache = dispatcher._cache
        return cache._index_key(sig, dispatcher.targetctx.codegen()) in cache._cache_file._load_index()
    except Exception:
        return None


def is_cold(run_cta, args):
    """Whether the first call of ``run_cta`` with ``args`` would compile it (no code in memory or in the cache); False
    when that cannot be told (the launch then compiles in its own process, as before: no helper started for nothing)."""
    sig = tuple(typeof(v) for v in args)
    if run_cta.overloads.get(sig) is not None:
        return False
    return is_cached(run_cta, sig) is False


def _helper_source():
    return ("import sys; from warpsim.ptx.precompile import _compile_entries; "
            "_compile_entries(sys.stdin.buffer.read())")


def _entries(calls, names):
    return [(name, [(fn.py_func.__module__, fn.py_func.__qualname__, sig) for fn, sig in calls[name]])
            for name in names]


def _compile_entries(blob):
    """A helper process: compile each group ``(name, [(module, function, sig)])`` of the pickled list (callees
    first), writing ``DONE`` and the group's name on a line of stdout when it is done. Importing this module ran
    ``warpsim/__init__``: the same cache directory and typing rules as the launching process."""
    for name, entries in pickle.loads(blob):
        for module, qualname, sig in entries:
            getattr(importlib.import_module(module), qualname).compile(sig)
        sys.stdout.write(f"{DONE} {name}\n")
        sys.stdout.flush()


def _follow(proc, progress):
    """A thread's work: one part of ``progress`` per group ``proc`` says it compiled, and the helper done at its end."""
    for line in proc.stdout:
        if line.startswith(DONE.encode()):
            progress.advance()
    progress.helper_done()


def compile_families(run_cta, args, jobs=None):
    """Before the first call of ``run_cta(*args)`` on a cold cache, compile its families on ``jobs`` processes and
    then ``run_cta`` itself (see the module docstring), as one :data:`EVENT`. Returns the number of helper processes
    it started (0: warm, or one job). An exception here (Ctrl-C) kills the helpers before it propagates."""
    jobs = jobs_wanted() if jobs is None else jobs
    if not is_cold(run_cta, args):
        return 0
    sig = tuple(typeof(v) for v in args)
    if jobs < 2:
        with event.trigger_event(EVENT, data=Progress(1)):
            run_cta.compile(sig)
        return 0
    calls = family_calls(args)
    shares = partition([(g, w) for g, w in GROUPS if g in calls], jobs, head=RUN_CTA_SECONDS)
    progress = Progress(sum(len(share) for share in shares) + 1)
    with event.trigger_event(EVENT, data=progress):
        helpers = _compile_shares(calls, shares, progress)
        run_cta.compile(sig)
        progress.advance()
    return helpers


def _compile_shares(calls, shares, progress):
    """Start a helper per share after the first and compile the first here; wait for the helpers. Returns how many
    were started."""
    # the helpers import warpsim from where this process did (a script may have put it on sys.path itself)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=root + (os.pathsep + path if path else ""))
    helpers = []
    for share in shares[1:]:
        if not share:
            continue
        try:
            proc = subprocess.Popen([sys.executable, "-c", _helper_source()], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        except OSError:
            break                                                 # no process to spare: compile here, as before
        helpers.append(proc)
        progress.helpers += 1
        threading.Thread(target=_follow, args=(proc, progress), name="warpsim-precompile", daemon=True).start()
        try:
            proc.stdin.write(pickle.dumps(_entries(calls, share)))
            proc.stdin.close()
        except OSError:
            pass
    try:
        for name in shares[0]:
            for fn, sig in calls[name]:
                fn.compile(sig)
            progress.advance()
    except BaseException:
        for proc in helpers:
            proc.kill()
        raise
    finally:
        for proc in helpers:
            proc.wait()
    return len(helpers)
