"""Grids of CTAs, in sequence or in parallel on a Ray cluster, with the CTAs' independence checked.

A grid is ``ctas`` runs of one per-CTA function over one global memory (``uint8[G]``, as
:class:`warpsim.machine.Machine` keeps it). ``cta_fn(cta, mem)`` simulates CTA ``cta``: it reads and
writes the bytes of ``mem`` (a :class:`GlobalMemory`) through :meth:`GlobalMemory.read` and
:meth:`GlobalMemory.write`, or works on ``mem.data`` directly and reports the bytes it read with
:meth:`GlobalMemory.mark_read` (an interpreter that loads from ``data`` in njit code does that).

- :func:`run_grid` without Ray runs the CTAs in order, 0 first, on one memory: a CTA sees what earlier
  CTAs wrote. This is the single-process run and the way out for CTAs that depend on each other.
- With Ray, tasks of a few CTAs each run on the cluster's workers; every CTA starts from the grid's
  initial memory (sent once, through Ray's object store) and sends back only the byte ranges it read
  and the bytes it wrote. The driver merges the writes, and refuses (:class:`GridDependenceError`)
  when the CTAs were not independent: two CTAs wrote one byte, or a CTA read a byte another CTA
  wrote. Otherwise the merged memory is bit-identical to the single-process run's.

What counts as written: the bytes given to :meth:`GlobalMemory.write`, and every byte whose value changed
(so a CTA function that writes ``mem.data`` directly is caught too, except where it wrote the value
that was there already). Atomics to global memory are writes: two CTAs adding to one counter are refused.

>>> import numpy as np
>>> def double(cta, mem):                  # CTA i doubles byte i
...     mem.write(cta, mem.read(cta, 1) * 2)
>>> run_grid(double, np.arange(4, dtype=np.uint8), 4).gmem.tolist()
[0, 2, 4, 6]
>>> def shift(cta, mem):                   # CTA i copies byte i + 1 into byte i: CTA i+1 writes it
...     mem.write(cta, mem.read(cta + 1, 1))
>>> run_grid(shift, np.arange(5, dtype=np.uint8), 4).gmem.tolist()
[1, 2, 3, 4, 4]
>>> check_independent([cta_access(shift, np.arange(5, dtype=np.uint8), c) for c in range(4)])
Traceback (most recent call last):
...
warpsim.parallel.GridDependenceError: CTA 0 reads global byte 0x1 that CTA 1 writes: the CTAs depend on each other and cannot run in parallel; run them in sequence (--no-ray)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from warpsim.errors import WarpsimError
from warpsim.machine import byte_ranges

__all__ = ["CHECKS", "GridDependenceError", "GlobalMemory", "CtaAccess", "GridRun", "cta_access", "check_independent",
           "merge_writes", "run_grid"]

_WAY_OUT = "the CTAs depend on each other and cannot run in parallel; run them in sequence (--no-ray)"


class GridDependenceError(WarpsimError):
    """CTAs of a grid that was to run in parallel touched each other's global memory."""


class GlobalMemory:
    """One CTA's global memory: the bytes ``data`` (``uint8[G]``) and masks of the bytes read and written.

    >>> m = GlobalMemory(np.zeros(8, np.uint8))
    >>> m.write(2, np.array([7, 9], np.uint8)); m.read(3, 1).tolist(), m.written.nonzero()[0].tolist()
    ([9], [2, 3])
    """

    def __init__(self, data: np.ndarray):
        if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 1:
            raise TypeError(f"GlobalMemory: data must be a 1-D uint8 array, got {getattr(data, 'dtype', type(data))}")
        self.data = data
        self.reads = np.zeros(data.size, bool)
        self.written = np.zeros(data.size, bool)

    def _range(self, op, offset, nbytes):
        if not 0 <= offset <= offset + nbytes <= self.data.size:
            raise ValueError(f"GlobalMemory.{op}: bytes [{offset:#x}, {offset + nbytes:#x}) are outside the "
                             f"{self.data.size} bytes of global memory")
        return slice(offset, offset + nbytes)

    def read(self, offset: int, nbytes: int) -> np.ndarray:
        """A copy of ``nbytes`` bytes at byte ``offset``, marked read."""
        where = self._range("read", int(offset), int(nbytes))
        self.reads[where] = True
        return self.data[where].copy()

    def write(self, offset: int, values) -> None:
        """Store ``values`` (any numpy array: its bytes) at byte ``offset``, marked written."""
        raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
        where = self._range("write", int(offset), raw.size)
        self.data[where] = raw
        self.written[where] = True

    def mark_read(self, addrs, size: int) -> None:
        """Mark ``size`` bytes at each byte address of ``addrs`` read (for code that loads from ``data``)."""
        a = np.asarray(addrs, np.int64).reshape(-1)
        for offset in range(size):
            self.reads[a + offset] = True

    def mark_written(self, addrs, size: int) -> None:
        """Mark ``size`` bytes at each byte address of ``addrs`` written (a store of the value already there)."""
        a = np.asarray(addrs, np.int64).reshape(-1)
        for offset in range(size):
            self.written[a + offset] = True


@dataclass(frozen=True)
class CtaAccess:
    """What one CTA did to global memory: the byte ranges it read, and the bytes it wrote (ranges and
    values, the values of the ranges concatenated). Small: this is what a worker sends back."""

    cta: int
    reads: np.ndarray       # int64[n, 2]: [start, stop)
    writes: np.ndarray      # int64[m, 2]
    values: np.ndarray      # uint8[sum of the write ranges' lengths]


def cta_access(cta_fn, gmem: np.ndarray, cta: int) -> CtaAccess:
    """Run CTA ``cta`` on a private copy of ``gmem``; what it read and wrote (see the module docstring)."""
    mem = GlobalMemory(gmem.copy())
    cta_fn(cta, mem)
    written = mem.written | (mem.data != gmem)
    writes = byte_ranges(written)
    values = mem.data[written]
    return CtaAccess(cta, byte_ranges(mem.reads), writes, values)


def _owner_of(writer, start, stop, cta):
    """The first byte in ``[start, stop)`` written by a CTA other than ``cta``: ``(byte, that CTA)`` or None."""
    w = writer[start:stop]
    other = np.flatnonzero((w >= 0) & (w != cta))
    return None if other.size == 0 else (start + int(other[0]), int(w[other[0]]))


def check_independent(accesses, size=None) -> np.ndarray:
    """Raise :class:`GridDependenceError` unless no two CTAs write one byte and no CTA reads a byte
    another writes; returns ``writer`` (``int32[G]``: the CTA that wrote each byte, -1 for none)."""
    accesses = sorted(accesses, key=lambda a: a.cta)
    if size is None:
        size = max([int(a.writes[-1, 1]) for a in accesses if len(a.writes)]
                   + [int(a.reads[-1, 1]) for a in accesses if len(a.reads)] + [0])
    writer = np.full(size, -1, np.int32)
    for a in accesses:
        for start, stop in a.writes:
            clash = _owner_of(writer, start, stop, a.cta)
            if clash:
                raise GridDependenceError(f"CTAs {clash[1]} and {a.cta} both write global byte {clash[0]:#x}: "
                                          f"{_WAY_OUT}")
            writer[start:stop] = a.cta
    for a in accesses:
        for start, stop in a.reads:
            clash = _owner_of(writer, start, stop, a.cta)
            if clash:
                raise GridDependenceError(f"CTA {a.cta} reads global byte {clash[0]:#x} that CTA {clash[1]} "
                                          f"writes: {_WAY_OUT}")
    return writer


def merge_writes(gmem: np.ndarray, accesses) -> np.ndarray:
    """``gmem`` with every CTA's writes applied (a new array)."""
    out = gmem.copy()
    for a in accesses:
        at = 0
        for start, stop in a.writes:
            out[start:stop] = a.values[at:at + stop - start]
            at += stop - start
    return out


@dataclass(frozen=True)
class GridRun:
    """The outcome of :func:`run_grid`: the final global memory; ``mode`` (``"sequential"`` or
    ``"ray"``), the Ray tasks used (0 in sequence) and the wall time."""

    gmem: np.ndarray
    ctas: int
    mode: str
    tasks: int
    wall_s: float


def _run_ctas(cta_fn, gmem, ctas) -> list:
    """A Ray task's work: CTAs ``ctas``, each from the initial memory."""
    return [cta_access(cta_fn, gmem, cta) for cta in ctas]


def _rerun_ctas(cta_fn, gmem, merged, writer, ctas) -> list:
    """A Ray task's check: CTAs ``ctas``, each from the memory the sequential run gives it (the bytes
    written by the CTAs before it, from ``merged``; the others from ``gmem``)."""
    return [cta_access(cta_fn, np.where((writer >= 0) & (writer < cta), merged, gmem), cta) for cta in ctas]


def _same_writes(a: CtaAccess, b: CtaAccess):
    """None when ``a`` and ``b`` wrote the same bytes with the same values, else the first byte that differs."""
    if np.array_equal(a.writes, b.writes) and np.array_equal(a.values, b.values):
        return None
    size = int(max([0] + [r[1] for r in a.writes] + [r[1] for r in b.writes]))
    images = []
    for acc in (a, b):
        image = np.full(size, -1, np.int32)
        at = 0
        for start, stop in acc.writes:
            image[start:stop] = acc.values[at:at + stop - start]
            at += stop - start
        images.append(image)
    return int(np.flatnonzero(images[0] != images[1])[0])


def _on_ray(ray_module, task, args, batches, progress, ctas) -> list:
    """Run ``task(*args, batch)`` for each batch; the CTA accesses, as they finish. A CTA's own error
    reaches the caller as itself, not wrapped by Ray."""
    pending = [task.remote(*args, batch) for batch in batches]
    accesses = []
    while pending:
        ready, pending = ray_module.wait(pending, num_returns=1)
        try:
            accesses.extend(ray_module.get(ready[0]))
        except ray_module.exceptions.RayTaskError as e:
            for ref in pending:
                ray_module.cancel(ref)
            cause = getattr(e, "cause", None)
            raise (cause if isinstance(cause, Exception) else WarpsimError(str(e).splitlines()[0])) from None
        if progress is not None:
            progress(len(accesses), ctas)
    return sorted(accesses, key=lambda a: a.cta)


CHECKS = ("reads", "rerun")


def run_grid(cta_fn, gmem: np.ndarray, ctas: int, *, ray: bool = False, ctas_per_task: int | None = None,
             check: str = "reads", progress=None) -> GridRun:
    """Run CTAs ``0 .. ctas-1`` of ``cta_fn`` over global memory ``gmem`` (``uint8[G]``, not changed).

    ``ray=False``: in order, in this process. ``ray=True``: on the Ray cluster this process is connected
    to (``ray.init(...)`` first), ``ctas_per_task`` CTAs per task (default: about four tasks per CPU);
    ``cta_fn`` must pickle (a module-level function, or a closure cloudpickle can carry). Raises
    :class:`GridDependenceError` when the CTAs are not independent. ``check``: ``"reads"`` uses the
    bytes each CTA reports it read (:class:`GlobalMemory`); ``"rerun"``, for CTA functions that cannot
    report their reads (an interpreter loading from ``mem.data``), runs every CTA a second time, in
    parallel too, from the memory the sequential run would give it, and refuses when its writes differ
    (twice the work; the result is then exactly the sequential run's). ``progress(done, ctas)`` is called
    as tasks finish.
    """
    if not isinstance(gmem, np.ndarray) or gmem.dtype != np.uint8 or gmem.ndim != 1:
        raise TypeError(f"run_grid: gmem must be a 1-D uint8 array, got {getattr(gmem, 'dtype', type(gmem))}")
    if isinstance(ctas, bool) or not isinstance(ctas, (int, np.integer)) or ctas < 1:
        raise ValueError(f"run_grid: ctas must be a positive int, got {ctas!r}")
    if check not in CHECKS:
        raise ValueError(f"run_grid: check must be one of {', '.join(CHECKS)}, got {check!r}")
    start = time.perf_counter()
    if not ray:
        mem = GlobalMemory(gmem.copy())
        for cta in range(ctas):
            cta_fn(cta, mem)
            if progress is not None:
                progress(cta + 1, ctas)
        return GridRun(mem.data, ctas, "sequential", 0, time.perf_counter() - start)
    import ray as ray_module   # only here: warpsim needs Ray for parallel grids alone
    if ctas_per_task is None:
        cpus = max(1, int(ray_module.cluster_resources().get("CPU", 1)))
        ctas_per_task = max(1, math.ceil(ctas / (4 * cpus)))
    batches = [range(first, min(ctas, first + ctas_per_task)) for first in range(0, ctas, ctas_per_task)]
    shared = ray_module.put(gmem)
    accesses = _on_ray(ray_module, ray_module.remote(_run_ctas), (cta_fn, shared), batches, progress, ctas)
    writer = check_independent(accesses, gmem.size)
    merged = merge_writes(gmem, accesses)
    tasks = len(batches)
    if check == "rerun":
        again = _on_ray(ray_module, ray_module.remote(_rerun_ctas),
                        (cta_fn, shared, ray_module.put(merged), ray_module.put(writer)), batches, None, ctas)
        tasks *= 2
        for first, second in zip(accesses, again):
            byte = _same_writes(first, second)
            if byte is not None:
                raise GridDependenceError(
                    f"CTA {first.cta} writes global byte {byte:#x} differently after CTAs 0..{first.cta - 1} ran "
                    f"than on the initial memory: it reads what an earlier CTA writes: {_WAY_OUT}")
    return GridRun(merged, ctas, "ray", tasks, time.perf_counter() - start)
