"""Campaigns on a Ray cluster: chunks on long-lived actors, streamed back, each counted once.

A campaign's chunks (:func:`hwcheck.campaigns.campaign.plan_chunks`, seeds as in a single-process run) are
independent, so they spread over a cluster:

- **simulator actors** (one CPU each, ``num_cpus=1``): make a chunk's inputs and simulate them.
  Each warms warpsim's Numba kernels once when it starts (:func:`hwcheck.campaigns.campaign.warm_up`) and then
  serves chunk after chunk: nothing is compiled per task;
- **checker actors**: run the chunk's inputs on their runner and compare the registers. With
  ``runner="gpu"`` a checker holds one GPU (``num_gpus=1``) and compiles the campaign's CUDA module
  once; the simulator's registers travel from the simulator actor to the checker through Ray's
  object store, never through the driver. ``runner="simulator"`` (``--simulate-only``) replaces the
  GPU with the simulator itself, on the checker actor: it checks the distribution (seeds, chunk
  accounting, records) and measures simulation throughput, not the hardware;
- the **driver** keeps a bounded window of chunks in flight, takes results as they finish (counts and
  at most :data:`hwcheck.campaigns.campaign.CASE_RECORDS` mismatch records per chunk), shows progress and
  merges the chunks in chunk order, so the results equal the single-process run's.

Every chunk has an id, ``(case index, chunk index)``. A chunk whose actor died (a killed worker, a lost
node) is run again on a live actor (a dead actor is replaced by a new one) and listed in
:attr:`ClusterRun.reruns`; a result for a chunk that is already in is dropped and counted in
:attr:`ClusterRun.duplicates`, so no chunk is counted twice. Ctrl-C cancels what is in flight, ends
the actors and returns what finished with ``partial`` set.

This module imports Ray; nothing else in warpsim or hwcheck does (``hwcheck campaign`` imports it only
with ``--ray``).
"""

from __future__ import annotations

import collections
import itertools
import time
from dataclasses import dataclass, field

import numba
import ray
import ray.exceptions

from hwcheck.arch import model_arch
from hwcheck.campaigns.acceptance import Outcome, campaign_report
from hwcheck.campaigns.campaign import (CASE_RECORDS, CHUNK, CaseResult, add_chunk, campaign_status, chunk_inputs,
                                        compare_chunk, first_mismatches, plan_chunks, summary_table, warm_up)
from hwcheck.errors import HwcheckError
from hwcheck.report import write_json_atomic
from warpsim.isa.arith import DEFAULT_ARCH

__all__ = ["RUNNERS", "MAX_ATTEMPTS", "SimulatorRunner", "ClusterRun", "connect", "run_campaign_ray",
           "run_one_ray"]

RUNNERS = ("gpu", "simulator")
MAX_ATTEMPTS = 3          # runs of one chunk before the campaign gives up on it
_POOLS = itertools.count()
_IN_FLIGHT_PER_ACTOR = 2  # chunks queued per simulator actor: enough to keep it busy, bounded memory
# Ray errors that mean "the worker, its node or its objects are gone", not "the chunk's code failed".
_LOST = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError,
         ray.exceptions.OwnerDiedError, ray.exceptions.NodeDiedError)


class SimulatorRunner:
    """A runner (``run(case, inputs)``) that is the simulator: the GPU side of ``--simulate-only``."""

    def __init__(self, arch: str):
        self.arch = arch

    def run(self, case, inputs):
        return case.simulate(inputs, self.arch)


def _make_runner(kind, cases, arch):
    """``(runner, gpu info dict or None)`` for a checker: ``kind`` is ``"gpu"``, ``"simulator"`` or a
    callable ``kind(cases) -> (runner, info)`` (tests pass a fake GPU this way)."""
    if callable(kind):
        return kind(cases)
    if kind == "gpu":
        from hwcheck.campaigns.campaign import make_runner
        from hwcheck.device.gpu import Gpu
        gpu = Gpu.open()
        return make_runner(gpu, cases), gpu.info.as_dict()
    return SimulatorRunner(arch), None


class _Simulator:
    """Actor: makes and simulates chunks of ``cases`` (Numba warmed once, at start)."""

    def __init__(self, cases, arch, seed, threads):
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        self.cases, self.arch, self.seed = cases, arch, seed
        self.warmup_s = warm_up(cases, arch)

    def simulate(self, case_index, chunk):
        case = self.cases[case_index]
        start = time.perf_counter()
        inputs = chunk_inputs(case, chunk, self.seed)
        middle = time.perf_counter()
        want = case.simulate(inputs, self.arch)
        return inputs, want, middle - start, time.perf_counter() - middle

    def ping(self):
        return self.warmup_s


class _Checker:
    """Actor: runs chunks on its runner (a GPU, once opened and compiled) and compares them."""

    def __init__(self, cases, runner, arch):
        numba.set_num_threads(1)
        self.cases = cases
        self.runner, self.info, self.failure = None, None, None
        try:                                     # no GPU, no CuPy, a compile error: told by gpu_info()
            self.runner, self.info = _make_runner(runner, cases, arch)
        except HwcheckError as e:
            self.failure = str(e)
        except Exception as e:
            self.failure = f"hwcheck campaign --ray: a checker could not start: {type(e).__name__}: {e}"
        if self.failure is None and runner != "gpu":   # the simulator (or a fake GPU) runs here too: warm it
            warm_up(cases, arch)

    def gpu_info(self):
        if self.failure is not None:
            raise HwcheckError(self.failure)
        return self.info

    def check(self, case_index, chunk, simulated):
        case = self.cases[case_index]
        inputs, want, gen_s, sim_s = simulated
        start = time.perf_counter()
        got = self.runner.run(case, inputs)
        return compare_chunk(case, chunk, inputs, want, got, gen_s=gen_s, sim_s=sim_s,
                             gpu_s=time.perf_counter() - start)


@dataclass
class ClusterRun:
    """The outcome of :func:`run_campaign_ray`: per-case results (merged in chunk order), the chunk
    accounting, and how the cluster was used."""

    results: list
    chunks_planned: int
    chunks_done: int
    reruns: list = field(default_factory=list)      # {"chunk": [case, index], "attempt", "reason"}
    duplicates: int = 0
    partial: bool = False
    error: str | None = None
    parts: dict = field(default_factory=dict)       # task index -> ChunkResult, while running
    simulators: int = 0
    checkers: int = 0
    gpu: dict | None = None
    arch: str = DEFAULT_ARCH
    wall_s: float = 0.0
    stream_s: float = 0.0                           # first chunk sent .. last result in (actors warm)

    @property
    def complete(self) -> bool:
        return not self.partial and self.chunks_done == self.chunks_planned

    def as_dict(self) -> dict:
        """The report's ``cluster`` section."""
        return {"complete": self.complete, "partial": self.partial, "chunks_planned": self.chunks_planned,
                "chunks_done": self.chunks_done, "chunks_rerun": len(self.reruns), "reruns": self.reruns,
                "duplicates_dropped": self.duplicates, "simulator_actors": self.simulators,
                "checker_actors": self.checkers, "wall_s": round(self.wall_s, 3),
                "stream_s": round(self.stream_s, 3)}


def connect(address=None) -> bool:
    """Connect to the Ray cluster at ``address`` (``None``: a running one if Ray finds it, else a new
    local one); returns whether this call started Ray (the caller then shuts it down).

    Raises ``HwcheckError`` naming the address when Ray cannot connect.
    """
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    except Exception as e:   # ConnectionError, ValueError, ...: Ray's message names the cause
        where = address or "the local machine"
        raise HwcheckError(f"hwcheck campaign --ray: cannot connect to a Ray cluster at {where}: "
                           f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    return True


def _get(refs) -> list:
    """``ray.get(refs)`` for starting actors: the first actor's error as one ``HwcheckError`` line (every
    ref is fetched, so Ray reports no other error as unhandled)."""
    values, failure = [], None
    for ref in refs:
        try:
            values.append(_get_one(ref))
        except HwcheckError as e:
            failure = failure or e
    if failure is not None:
        raise failure
    return values


def _get_one(ref):
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        raise HwcheckError(str(cause) if isinstance(cause, HwcheckError) else
                           f"hwcheck campaign --ray: an actor failed to start: {type(cause).__name__}: {cause}") from None
    except ray.exceptions.RayActorError as e:
        last = [line for line in str(e).splitlines() if line.strip()][-1].strip()
        raise HwcheckError(f"hwcheck campaign --ray: an actor failed to start: {last}") from None


class _Pool:
    """Simulator and checker actors; a dead one is replaced by a new one of the same kind."""

    def __init__(self, cases, runner, seed, arch, checkers, checker_gpus):
        self.cases, self.runner, self.seed, self.arch = cases, runner, seed, arch
        self.checker_options = {"num_cpus": 0, "num_gpus": 1 if checker_gpus else 0}
        self.simulators, self.checkers = [], []
        self.started = collections.Counter()     # actors started per kind: their names
        self.serial = next(_POOLS)
        self.names: dict = {}                    # actor id (hex) -> name, of every actor started
        self.gpu = None
        self.checker_count = checkers

    def start_checkers(self) -> None:
        """Start the checkers; return once each has its runner (a GPU error stops here, before any chunk)."""
        self.checkers = [self._new_checker() for _ in range(self.checker_count)]
        self.gpu = _get([c.gpu_info.remote() for c in self.checkers])[0]

    def start_simulators(self, arch, count) -> None:
        """Start ``count`` simulator actors for model ``arch``; return once every one is warm."""
        self.arch = arch
        self.simulators = [self._new_simulator() for _ in range(count)]
        _get([s.ping.remote() for s in self.simulators])

    def _new_simulator(self):
        return self._named(ray.remote(_Simulator).options(num_cpus=1, max_restarts=0, name=self._name("simulator"))
                           .remote(self.cases, self.arch, self.seed, 1))

    def _new_checker(self):
        return self._named(ray.remote(_Checker).options(max_restarts=0, name=self._name("checker"),
                                                        **self.checker_options).remote(self.cases, self.runner, self.arch))

    def _named(self, actor):
        self.names[actor._actor_id.hex()] = self._last_name
        return actor

    def _name(self, kind) -> str:
        """``hwcheck-0-simulator-0``, ``hwcheck-0-checker-1``, ... (pool, kind, number): actors are named,
        in this job's namespace, so that a person (or a test) can find one with ``ray.util.list_named_actors``."""
        self.started[kind] += 1
        self._last_name = f"hwcheck-{self.serial}-{kind}-{self.started[kind] - 1}"
        return self._last_name

    def replace(self, actor_ids) -> list:
        """Replace every live actor whose id is in ``actor_ids`` (hex strings) by a new one; returns the
        names of the actors blamed (replaced now or earlier)."""
        for group, make in ((self.simulators, self._new_simulator), (self.checkers, self._new_checker)):
            for i, actor in enumerate(group):
                if actor._actor_id.hex() in actor_ids:
                    ray.kill(actor, no_restart=True)
                    group[i] = make()
        return sorted(self.names.get(a, a) for a in actor_ids)

    def kill(self) -> None:
        for actor in self.simulators + self.checkers:
            ray.kill(actor, no_restart=True)


def _dead_actor_ids(error, used) -> set:
    """The actors a lost chunk's error blames: its actor id when Ray names one, else both it used."""
    actor_id = getattr(error, "actor_id", None)
    if actor_id:
        return {actor_id if isinstance(actor_id, str) else actor_id.hex()}
    return {a._actor_id.hex() for a in used}


def run_campaign_ray(cases, *, count: int, seed: int = 0, chunk: int = CHUNK, arch: str | None = None,
                     runner="gpu", simulators: int | None = None, checkers: int | None = None,
                     progress=None, total_records: int = 200, model=None) -> ClusterRun:
    """Run ``cases`` for ``count`` instructions each on the connected Ray cluster (see :func:`connect`).

    ``runner``: ``"gpu"`` (checkers hold a GPU each: ``checkers`` defaults to the cluster's GPUs),
    ``"simulator"`` (``--simulate-only``) or a callable ``runner(cases) -> (runner, gpu info)``; CPU
    checkers default to one per simulator. ``simulators`` defaults to the cluster's CPUs. ``arch``:
    the tensor-core model, or ``None`` for ``model(gpu info)`` (default ``"sm90"``).
    Results (counts, kept records and inputs) equal :func:`hwcheck.campaigns.campaign.run_campaign`'s for the
    same arguments. Raises ``HwcheckError`` when the cluster lacks the resources, or a chunk fails
    (an error on the GPU, or :data:`MAX_ATTEMPTS` lost runs).
    """
    if not callable(runner) and runner not in RUNNERS:
        raise ValueError(f"run_campaign_ray: runner must be one of {RUNNERS} or a callable, got {runner!r}")
    resources = ray.cluster_resources()
    cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
    on_gpu = runner == "gpu"
    if on_gpu and gpus == 0:
        raise HwcheckError("hwcheck campaign --ray: the cluster has no GPU; add GPU nodes, or pass "
                           "--simulate-only to check the simulation side alone")
    simulators = simulators or max(1, cpus)
    if simulators > cpus:
        raise HwcheckError(f"hwcheck campaign --ray: --workers {simulators} needs {simulators} CPUs, "
                           f"the cluster has {cpus}")
    checkers = checkers or (gpus if on_gpu else simulators)
    start = time.perf_counter()
    tasks = [(ci, part) for ci, case in enumerate(cases) for part in plan_chunks(case, count, chunk)[1]]
    total = sum(part.n for _ci, part in tasks)
    pool = _Pool(cases, runner, seed, arch or DEFAULT_ARCH, checkers, on_gpu)   # a simulator checker needs arch
    run = ClusterRun([], len(tasks), 0, simulators=simulators, checkers=checkers, arch=arch or DEFAULT_ARCH)
    try:
        try:
            pool.start_checkers()
            run.gpu = pool.gpu
            run.arch = arch or (model(pool.gpu) if model is not None and pool.gpu is not None else DEFAULT_ARCH)
            pool.start_simulators(run.arch, simulators)
        except KeyboardInterrupt:     # Ctrl-C while the actors start: nothing ran
            run.partial = True
            return run
        streaming = time.perf_counter()
        try:
            _stream(pool, tasks, run, total, progress)
        except HwcheckError as e:     # keep what finished, as a single-process campaign does
            run.error, run.partial = str(e), True
        run.stream_s = time.perf_counter() - streaming
    finally:
        pool.kill()
    run.results = _merge(cases, tasks, run.parts, total_records)
    run.wall_s = time.perf_counter() - start
    return run


def _stream(pool, tasks, run, total, progress) -> None:
    """Keep chunks in flight, take results as they finish, into ``run.parts``."""
    queue = collections.deque(range(len(tasks)))
    attempts = collections.Counter()
    in_flight: dict = {}            # result ref -> (task index, actors used)
    done = run.parts
    turn = 0
    if progress is not None:
        progress.start(f"campaign on Ray ({len(pool.simulators)} simulators, {len(pool.checkers)} checkers)",
                       total)
    try:
        while queue or in_flight:
            while queue and len(in_flight) < _IN_FLIGHT_PER_ACTOR * len(pool.simulators):
                t = queue.popleft()
                case_index, part = tasks[t]
                sim = pool.simulators[turn % len(pool.simulators)]
                chk = pool.checkers[turn % len(pool.checkers)]
                turn += 1
                simulated = sim.simulate.remote(case_index, part)
                in_flight[chk.check.remote(case_index, part, simulated)] = (t, (sim, chk))
                attempts[t] += 1
            (ref,), _ = ray.wait(list(in_flight), num_returns=1)
            t, used = in_flight.pop(ref)
            case_index, part = tasks[t]
            try:
                result = ray.get(ref)
            except _LOST as e:
                _lost(pool, run, e, t, tasks, attempts, used)
                queue.appendleft(t)
                continue
            except ray.exceptions.RayTaskError as e:
                cause = getattr(e, "cause", None)
                if isinstance(cause, _LOST):
                    _lost(pool, run, cause, t, tasks, attempts, used)
                    queue.appendleft(t)
                    continue
                if isinstance(cause, HwcheckError):
                    raise HwcheckError(str(cause)) from None
                raise HwcheckError(f"hwcheck campaign --ray: chunk {part.index} of case {case_index} failed: "
                                   f"{type(cause).__name__}: {cause}") from None
            if t in done:
                run.duplicates += 1
                continue
            done[t] = result
            run.chunks_done += 1
            if progress is not None:
                progress.advance(part.n)
    except KeyboardInterrupt:
        run.partial = True
        for ref in in_flight:
            ray.cancel(ref, force=False)
    if progress is not None:
        progress.finish(f"{run.chunks_done}/{run.chunks_planned} chunks"
                        + (f", {len(run.reruns)} rerun" if run.reruns else "")
                        + (" (interrupted)" if run.partial else ""))


def _lost(pool, run, error, t, tasks, attempts, used) -> None:
    case_index, part = tasks[t]
    blamed = pool.replace(_dead_actor_ids(error, used))
    reason = f"{type(error).__name__}: {', '.join(blamed)} lost"
    if attempts[t] >= MAX_ATTEMPTS:
        raise HwcheckError(f"hwcheck campaign --ray: chunk {part.index} of case {case_index} was lost "
                           f"{attempts[t]} times; last: {reason}")
    run.reruns.append({"chunk": [case_index, part.index], "attempt": attempts[t], "reason": reason})


def _merge(cases, tasks, done, total_records) -> list:
    """Per case, its finished chunks added in chunk order (as :func:`hwcheck.campaigns.campaign.run_campaign`)."""
    results = []
    for ci, case in enumerate(cases):
        parts = sorted((done[t] for t, (c, _p) in enumerate(tasks) if c == ci and t in done),
                       key=lambda r: r.chunk.index)
        if not parts:
            continue
        result = CaseResult(case, sum(p.chunk.n for p in parts))
        kept = sum(len(r.records) for r in results)
        for part in parts:
            add_chunk(result, part, max(0, min(CASE_RECORDS, total_records - kept)))
        result.wall_s = result.gen_s + result.sim_s + result.gpu_s
        results.append(result)
    return results


def run_one_ray(cases, *, count: int, seed: int = 0, chunk: int = CHUNK, arch=None, runner="gpu",
                workers=None, report=None, command: str = "", progress=None):
    """:func:`run_campaign_ray` into a report, as :func:`hwcheck.campaigns.acceptance.run_one` does on one machine.

    The report has a ``cluster`` section (:meth:`ClusterRun.as_dict`: chunks planned, done and rerun,
    whether the run is complete). ``"status"``: ``pass``/``fail``; ``error`` (exit 3) when a chunk
    failed; ``partial`` (exit 130) after Ctrl-C. Returns a :class:`hwcheck.campaigns.acceptance.Outcome`.
    """
    instr = cases[0].instr
    settings = {"instr": instr, "count_per_case": count, "seed": seed, "chunk": chunk, "simulator_arch": None,
                "records_per_case": CASE_RECORDS, "runner": runner if isinstance(runner, str) else "custom"}
    model = (lambda info: model_arch(info["compute_capability"], None)) if instr == "mma" else None
    run = ClusterRun([], 0, 0)
    try:
        run = run_campaign_ray(cases, count=count, seed=seed, chunk=chunk, arch=arch if instr == "mma" else DEFAULT_ARCH,
                               runner=runner, simulators=workers, progress=progress, model=model)
        error = run.error
    except HwcheckError as e:
        error = str(e)
    if instr == "mma":
        settings["simulator_arch"] = run.arch
    status = "error" if error else "partial" if run.partial else campaign_status(run.results)
    if report is not None:
        data = campaign_report(command, None, cases=cases, results=run.results, settings=settings, status=status,
                               error=error)
        data.update(gpu=run.gpu, cluster=run.as_dict())
        try:
            write_json_atomic(report, data)
        except HwcheckError as e:
            error, status, report = (f"{error}; {e}" if error else str(e)), "error", None
    table = summary_table(run.results)
    shown = first_mismatches(run.results)
    if shown:
        table += "\nfirst mismatches (all kept records are in the report):\n" + "\n".join(shown)
    table += (f"\ncluster: {run.chunks_done}/{run.chunks_planned} chunks on {run.simulators} simulators and "
              f"{run.checkers} checkers, {len(run.reruns)} rerun, {'complete' if run.complete else 'INCOMPLETE'}")
    exit_status = {"pass": 0, "fail": 1, "error": 3, "partial": 130}[status]
    return Outcome(run.results, status, error, table, exit_status, report)
