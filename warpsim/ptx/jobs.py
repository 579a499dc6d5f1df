"""A launch's CTAs on every core (``--jobs N``): the sequential launch's bits, in parallel where that is provably the same.

:meth:`PtxRun.run <warpsim.ptx.launch.PtxRun.run>` runs CTAs in order, 0 first, on one global memory: a CTA sees what
earlier CTAs wrote. That is the result warpsim promises, whatever ``jobs`` is. With ``jobs > 1`` a launch that is still
running after :data:`FAN_OUT_AFTER` seconds (short ones never pay for a process) finishes the CTA it is in, then cuts
the CTAs left into contiguous *spans* (:data:`SPANS_PER_JOB` a process) that this process and ``jobs - 1`` forked ones
take in turn from a shared counter, so that a process that finishes early takes more. Each span runs from the memory
as it is at that boundary, recording its *access sets* (:func:`warpsim.ptx.shadow.new_access_sets`): the global bytes
it read before writing them itself (its exposed reads) and the bytes it wrote.

The spans are then merged in order. Span ``k``'s run equals the one the sequential launch would make exactly when no
byte it read exposed was written by an earlier span (what it read is then what the sequential launch gives it: the
memory at the boundary); its writes then go over the memory in order, the last writer of a byte winning as in the
sequential launch. The first span whose exposed reads meet an earlier span's writes, that faulted, or that would pass
the launch's ``max_steps``, and every span after it, run again in this process in sequence from the merged memory,
which is the sequential launch's memory there. So the result (buffers, printf lines and their order, counts, the last
CTA's registers and shared memory, a fault's message) is the sequential launch's bit for bit; only the time differs.

A span's bytes count as written when a store, atomic or ``cp.async`` recorded them or their value changed. Not every
kind of access is recorded, so a launch stays in sequence (no fan-out) when its kernel has bulk copies or TMA
(``cp.async.bulk``, ``cp.reduce.async.bulk``), runs clusters of several CTAs, has the sanitizer or a profile on, or the
platform cannot fork (:func:`why_sequential`). Reads of a printf's format string are not recorded (a kernel whose CTAs
write one would be wrong here).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time

import numpy as np

from warpsim.machine import byte_ranges, ranges_mask
from warpsim.ptx.opcodes import Op
from warpsim.ptx.rows import OP
from warpsim.ptx.shadow import A_EXPOSED, A_WRITTEN, S_ON, new_access_sets

__all__ = ["FAN_OUT_AFTER", "SPANS_PER_JOB", "ENV_JOBS", "default_jobs", "check_jobs", "why_sequential", "Fan"]

FAN_OUT_AFTER = 0.25    # seconds: a launch running longer than this spreads its remaining CTAs over the jobs
SPANS_PER_JOB = 4       # spans of the CTAs left per process: the processes that finish early take more


ENV_JOBS = "WARPSIM_JOBS"


def default_jobs() -> int:
    """``--jobs``'s default, and what the Python front ends (``warpsim.triton``, ``warpsim.numba``, ``warpsim.cupy``)
    launch with: ``$WARPSIM_JOBS`` where set (``ValueError`` naming it unless an int from 1 to 1024), else the CPUs
    this process may run on."""
    text = os.environ.get(ENV_JOBS, "").strip()
    if text:
        try:
            return check_jobs(int(text), ENV_JOBS)
        except ValueError:
            raise ValueError(f"{ENV_JOBS}={text!r}: must be an int from 1 to 1024 (processes)") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:                  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_jobs(jobs, what="--jobs") -> int:
    """``jobs`` as a positive int; ``ValueError`` naming ``what`` otherwise."""
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or not 1 <= jobs <= 1024:
        raise ValueError(f"{what} must be an int from 1 to 1024 (processes), got {jobs!r}")
    return int(jobs)


def why_sequential(run) -> str | None:
    """Why the launch ``run`` (a :class:`~warpsim.ptx.launch.PtxRun`) cannot fan out, or None when it can."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return "this platform cannot fork"
    if len(run._states) > 1:
        return "clusters of several CTAs run together"
    if run.sstate[S_ON] != 0:
        return "the sanitizer is on"
    if run._cycles.shape[0]:
        return "a profile is being taken"
    if (run.decoded.code[:, OP] == Op.CP_BULK).any():
        return "bulk copies (TMA) are not in the access sets"
    return None


def _run_span(run, first, stop, snapshot, done, slot, tick=None):
    """CTA groups ``first .. stop-1`` of ``run`` from global memory ``snapshot``, with access sets; what they did.
    ``done[slot:slot + 4]``: this process's CTA groups in finished spans and in this one, its warp instructions in
    finished spans and in this one; ``tick()`` after each slice."""
    m = run.machine
    m.gmem[...] = snapshot
    run.shadow, run.sstate, run.finds = new_access_sets(m.gmem.size)
    run.printf = []
    run._counts[...] = 0
    run._ctx[13] = 0
    if run.shared is not None:
        run.shared = []
    run._next = first
    run._stop_at = stop
    run._begin()
    n = 1 << 15
    while run._next < stop:
        began = time.perf_counter()
        run.step(n)
        done[slot + 1], done[slot + 3] = run._next - first, run.steps
        if tick is not None:
            tick()
        n = max(1024, min(4 * n, int(n * 0.1 / max(time.perf_counter() - began, 1e-6))))
    done[slot] += done[slot + 1]
    done[slot + 2] += done[slot + 3]
    done[slot + 1] = done[slot + 3] = 0
    bits = run.shadow[0]
    written = ((bits & A_WRITTEN) != 0) | (m.gmem != snapshot)
    return {"writes": byte_ranges(written), "values": m.gmem[written], "exposed": byte_ranges((bits & A_EXPOSED) != 0),
            "printf": run.printf, "counts": run._counts.copy(), "steps": run.steps, "shared": run.shared,
            "regs": m.regs.copy(), "smem": m.smem.copy()}


def _spans(run, spans, snapshot, counter, done, slot, tick=None):
    """Take spans from the shared ``counter`` until none is left: ``{span: outcome}``."""
    out = {}
    while True:
        with counter.get_lock():
            k = counter.value
            counter.value += 1
        if k >= len(spans):
            return out
        try:
            got = _run_span(run, *spans[k], snapshot, done, slot, tick)
        except Exception as e:              # this process's own fault reruns in sequence and is raised there
            got = {"fault": f"{type(e).__name__}: {e}"}
        out[k] = got


def _child(run, spans, snapshot, counter, done, slot, send):
    try:
        try:
            run._quiet = True
            send.send(_spans(run, spans, snapshot, counter, done, slot))    # at the end: a full pipe would block
        except BaseException:               # Ctrl-C, a broken pipe: the parent finds the spans missing
            pass
        send.close()
    finally:
        os._exit(0)                         # no atexit handler of the parent's (pytest, Numba) in the fork


class Fan:
    """The fan-out of one launch: asked for while CTA group ``run._next`` runs, it takes over at the next boundary
    (:meth:`at_boundary`, called by :meth:`PtxRun.run` when ``run._next == run._stop_at``): the CTAs left go in
    :data:`SPANS_PER_JOB` spans a process into a queue that this process and ``jobs - 1`` forked ones work off, each
    span from the memory at the boundary; then the spans are merged in order (see the module docstring)."""

    def __init__(self, run, jobs):
        self.run, self.jobs = run, jobs
        self.children, self.spans = [], []
        self.done = None
        self.first = self.steps_before = 0
        self.sequential_from = None     # the span from which the CTAs ran again in sequence (None: none did)
        run._stop_at = run._next + 1

    def at_boundary(self, progress=None) -> bool:
        """At ``run._stop_at``: run the CTAs left in spans and merge them; True when the launch is complete (False:
        it goes on in sequence from ``run._next``). ``progress``: called with no argument after each slice this
        process runs (:meth:`so_far` says how far the spans are)."""
        run = self.run
        run._stop_at = None
        first, total = run._next, len(run._clusters)
        jobs = self.jobs = min(self.jobs, total - first)
        if jobs < 2:
            return False
        count = min(total - first, SPANS_PER_JOB * jobs)
        bounds = [first + (total - first) * i // count for i in range(count + 1)]
        self.spans = list(zip(bounds[:-1], bounds[1:]))
        fork = multiprocessing.get_context("fork")
        counter = fork.Value("q", 0)
        self.done = fork.Array("q", 4 * jobs, lock=False)    # per process: see _run_span
        snapshot = run.machine.gmem.copy()
        for slot in range(1, jobs):
            receive, send = fork.Pipe(duplex=False)
            p = fork.Process(target=_child, args=(run, self.spans, snapshot, counter, self.done, 4 * slot, send),
                             daemon=True)
            p.start()
            send.close()
            self.children.append((p, receive))
        kept = (run.printf, run._counts.copy(), run.steps, run.shared, run.shadow, run.sstate, run.finds, run._quiet)
        self.first, self.steps_before = first, run.steps
        run._quiet = True                           # printf lines are echoed when merged, in CTA order
        if progress is not None:
            progress()
        outcomes = _spans(run, self.spans, snapshot, counter, self.done, 0, tick=progress)
        for p, receive in self.children:
            while not receive.poll(0.25):           # the others' progress while this process waits for them
                if progress is not None:
                    progress()
                if not p.is_alive() and not receive.poll(0):
                    break
            try:
                outcomes.update(receive.recv() if receive.poll(0) else {})
            except EOFError:
                pass
            p.join()
        run.printf, counts, steps, run.shared, run.shadow, run.sstate, run.finds, run._quiet = kept
        run._counts[...] = counts
        run._ctx[13] = steps
        run.machine.gmem[...] = snapshot
        self.done = None
        return self._merge(outcomes)

    def _merge(self, outcomes) -> bool:
        run, m = self.run, self.run.machine
        written = np.zeros(m.gmem.size, bool)
        steps = run.steps
        for k, (lo, _hi) in enumerate(self.spans):
            out = outcomes.get(k, {"fault": "lost"})
            if "fault" in out or steps + out["steps"] > run._max_steps or (
                    written & ranges_mask(out["exposed"], written.size)).any():
                run._next = lo                      # in sequence from here: the sequential launch's own result
                run.finished, run.last_fault = False, None
                run._begin()
                self.sequential_from = k
                return False
            wrote = ranges_mask(out["writes"], written.size)
            m.gmem[wrote] = out["values"]
            written |= wrote
            steps += out["steps"]
            run._ctx[13] = steps
            run._counts += out["counts"]
            run.printf.extend(out["printf"])
            if not run._quiet:
                for _coords, _tid, text in out["printf"]:
                    sys.stdout.write(text)
            if run.shared is not None:
                run.shared.extend(out["shared"])
            m.regs[...] = out["regs"]
            m.smem[...] = out["smem"]
        run._next = len(run._clusters)
        run.finished = True
        return True

    def so_far(self):
        """``(CTA groups, warp instructions)`` of the launch done so far, the spans' included, while they run."""
        groups = self.first + sum(self.done[0::4]) + sum(self.done[1::4])
        return groups, self.steps_before + sum(self.done[2::4]) + sum(self.done[3::4])

    def close(self):
        """Stop the forked processes still running (after a fault or Ctrl-C here, or once merged)."""
        for p, receive in self.children:
            if p.is_alive():
                p.kill()
            p.join()
            receive.close()
        self.children = []
