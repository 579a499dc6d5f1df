"""``hwcheck run``: a whole program on the GPU and on the simulator, compared register by register.

For each program and params choice (a *run*): trace the program once and lower its stream to one PTX kernel
(:func:`warpsim.program.lower.lower` with ``snapshots`` and ``shared_out``: each destination register stored to
its snapshot slot after its instruction, shared memory zeroed at entry and copied out at the end). That one
text is what both sides run: the PTX interpreter, and the GPU (the driver assembles it:
:meth:`hwcheck.device.gpu.Gpu.ptx_module`). Then for each seed:

1. build the CTA's starting state as ``warpsim run`` does (:func:`warpsim.program.run.prepare`: inputs
   given, or random from the seed, placed in the global buffers at their bases);
2. simulate the kernel (a bad address stops the run before the GPU sees a kernel that would fault);
3. launch it as one CTA of the program's threads with the program's dynamic shared memory, on the same
   global-memory image; fetch the snapshot buffer, the copied-out shared memory and global memory;
4. compare every snapshot register, every shared-memory word and every element of every global
   buffer bit for bit (:mod:`hwcheck.runs.compare_program`).

The lowered kernel's float forms all carry a rounding modifier (``add.rn.f32`` ...), so ptxas contracts
nothing in it and the simulator runs it with ``ptxas="none"``.

Accesses whose result depends on the warps' order (:mod:`hwcheck.runs.races`) are reported as warnings: there
the GPU may legitimately differ. Progress goes to stderr, one line per seed; :func:`summary_table` gives one row per run; the JSON
report (written atomically) holds the counts, times and the first mismatch records of each run.

>>> from warpsim.program.program import Program
>>> def kernel(tid, *, dtype, n):
...     pass
>>> p = Program(kernel, threads=32, params={"dtype": ("f16", "bf16"), "n": (1, 2)})
>>> param_choices(p, {"n": "2"}, sweep=True)
[{'dtype': 'f16', 'n': 2}, {'dtype': 'bf16', 'n': 2}]
>>> param_choices(p, {}, sweep=False)
[{'dtype': 'f16', 'n': 1}]
"""

from __future__ import annotations

import itertools
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

from hwcheck.runs.compare_program import RegisterNames, compare_global, compare_shared, compare_snapshots
from hwcheck.errors import HwcheckError
from hwcheck.runs.races import schedule_dependent_accesses
from hwcheck.device.gpu import module_key
from hwcheck.report import REPO_ROOT, new_report, write_json_atomic
from warpsim.errors import ProgramWarning, SimulatorFault, WarpsimError
from warpsim.isa.arith import DEFAULT_ARCH
from warpsim.program.lower import KERNEL, lower
from warpsim.program.run import execute_trace, prepare
from warpsim.ptx import load as load_ptx

__all__ = ["RUN_RECORDS", "Job", "SeedResult", "ProgramRun", "ProgramOutcome", "param_choices", "plan_jobs",
           "launch_program", "run_programs", "summary_table", "programs_report"]

RUN_RECORDS = 20      # register records and memory records kept per run (every mismatch is counted)
KEYS = "portable"     # a run's module_key hashes keyed_text(): the same wherever the repository sits


def keyed_text(text: str) -> str:
    """The lowered PTX as a run's ``module_key`` hashes it: the program files' paths in its ``.file`` lines taken
    relative to the repository (they are absolute where the trace read them), so a report checks on any checkout.

    >>> keyed_text(f'.file 1 "{REPO_ROOT}/examples/gemm_smem.py"')
    '.file 1 "examples/gemm_smem.py"'
    """
    return text.replace(f'"{REPO_ROOT}/', '"')


@dataclass(frozen=True)
class Job:
    """One program file with one resolved params choice, and the inputs given for it."""

    path: str
    program: object
    params: dict
    inputs: dict

    @property
    def label(self) -> str:
        params = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.program.name}" + (f" ({params})" if params else "")


def param_choices(program, given: dict, *, sweep: bool) -> list:
    """The resolved params of each run: ``given`` with defaults, or (``sweep``) every combination of the
    choices of the params not given, in declaration order. ``ValueError`` for a bad param, or a param
    without choices that is not given."""
    if not sweep or any(key not in program.params for key in given):
        return [program.resolve_params(given)]           # raises for an unknown param
    axes = []
    for key, spec in program.params.items():
        if key in given:
            axes.append([given[key]])
        elif isinstance(spec, (tuple, list)):
            axes.append(list(spec))
        else:
            raise ValueError(f"program {program.name}: param {key!r} ({spec.__name__}) has no choices to sweep; "
                             f"give it with --param {key}=VALUE")
    return [program.resolve_params(dict(zip(program.params, combo))) for combo in itertools.product(*axes)]


def plan_jobs(programs, given: dict, inputs: dict, *, sweep: bool, mode: str = "vector", seed: int = 0) -> list:
    """The jobs for ``programs`` (``[(path, Program)]``), each traced and its inputs checked once here,
    so that a bad program, param or input is a ``ValueError``/``ProgramError`` before any GPU work.

    An input a job does not declare is left out of that job; one that no job declares is an error.
    """
    jobs, used = [], set()
    for path, program in programs:
        for params in param_choices(program, given, sweep=sweep):
            declared = {b.name for b in program.buffers(params) if b.role == "input"}
            mine = {k: v for k, v in inputs.items() if k in declared}
            used.update(mine)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ProgramWarning)
                prepare(program, params, mine, seed=seed, mode=mode)
            jobs.append(Job(path, program, params, mine))
    unknown = sorted(set(inputs) - used)
    if unknown:
        raise ValueError(f"--input {unknown[0]}: no run of {', '.join(p for p, _ in programs)} has an input of "
                         f"that name")
    return jobs


@dataclass
class SeedResult:
    """One seed of one run: counts of compared and mismatching registers, shared words, global elements."""

    seed: int
    registers: int = 0
    registers_bad: int = 0
    smem_words: int = 0
    smem_bad: int = 0
    global_elements: int = 0
    global_bad: int = 0
    sim_s: float = 0.0
    gpu_s: float = 0.0
    first_bad_instruction: int | None = None

    @property
    def mismatched(self) -> int:
        return self.registers_bad + self.smem_bad + self.global_bad

    def as_dict(self) -> dict:
        return {"seed": self.seed, "registers_compared": self.registers, "mismatched_registers": self.registers_bad,
                "smem_words_compared": self.smem_words, "mismatched_smem_words": self.smem_bad,
                "global_elements_compared": self.global_elements, "mismatched_global_elements": self.global_bad,
                "first_mismatching_instruction": self.first_bad_instruction,
                "sim_s": round(self.sim_s, 6), "gpu_s": round(self.gpu_s, 6)}

    def progress_line(self, label: str) -> str:
        return (f"{label} seed {self.seed}: {self.registers} registers, {self.registers_bad} differ; "
                f"shared {self.smem_words} words, {self.smem_bad} differ; global {self.global_elements} "
                f"elements, {self.global_bad} differ (sim {self.sim_s * 1e3:.1f} ms, gpu {self.gpu_s * 1e3:.1f} ms)")


@dataclass
class ProgramRun:
    """One job on the GPU: what was built for it, its seeds, and the first mismatch records."""

    job: Job
    instructions: int = 0
    threads: int = 0
    registers_per_thread: int = 0
    smem_bytes: int = 0
    snapshot_slots: int = 0
    module_key: str = ""
    lower_s: float = 0.0
    compile_s: float = 0.0
    wall_s: float = 0.0
    seeds: list = field(default_factory=list)
    records: list = field(default_factory=list)
    memory_records: list = field(default_factory=list)
    bad_instructions: set = field(default_factory=set)
    warnings: list = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.seeds)

    @property
    def mismatched(self) -> int:
        return sum(s.mismatched for s in self.seeds)

    def as_dict(self) -> dict:
        params = {k: v if isinstance(v, (bool, int, float, str)) else repr(v) for k, v in self.job.params.items()}
        return {"program": self.job.path, "name": self.job.program.name, "params": params,
                "inputs_given": sorted(self.job.inputs), "instructions": self.instructions,
                "threads": self.threads, "registers_per_thread": self.registers_per_thread,
                "smem_bytes": self.smem_bytes, "snapshot_slots": self.snapshot_slots,
                "module_key": self.module_key, "lower_s": round(self.lower_s, 3),
                "compile_s": round(self.compile_s, 3), "wall_s": round(self.wall_s, 3),
                "seeds_run": len(self.seeds), "registers_compared": self.total("registers"),
                "mismatched_registers": self.total("registers_bad"),
                "mismatching_instructions": sorted(self.bad_instructions),
                "smem_words_compared": self.total("smem_words"), "mismatched_smem_words": self.total("smem_bad"),
                "global_elements_compared": self.total("global_elements"),
                "mismatched_global_elements": self.total("global_bad"), "warnings": self.warnings,
                "seeds": [s.as_dict() for s in self.seeds],
                "mismatches": [{"seed": seed, **r.as_dict()} for seed, r in self.records],
                "memory_mismatches": [{"seed": seed, **r.as_dict()} for seed, r in self.memory_records]}


@dataclass(frozen=True)
class ProgramOutcome:
    """What :func:`run_programs` came to: its runs, status, error, summary text and exit status."""

    runs: list
    status: str
    error: str | None
    table: str
    exit_status: int
    report: str | None


def launch_program(gpu, module, lowered, image: np.ndarray):
    """Run a lowered program (``snapshots`` and ``shared_out``) on ``gpu`` as one CTA with global memory ``image``
    (``uint8``); returns the snapshot buffer ``uint32[slots, threads]``, the final shared memory and global
    memory (``uint8``)."""
    gmem = gpu.put(np.ascontiguousarray(image, dtype=np.uint8))
    table = gpu.put(lowered.table)
    snap = gpu.output((lowered.snap_positions, lowered.threads))
    smem = gpu.output((lowered.smem_launch // 4,))
    gpu.launch(module, KERNEL, 1, lowered.threads, (gmem, table, snap, smem), shared_mem=lowered.smem_launch)
    smem_bytes = gpu.get(smem).view(np.uint8)[:lowered.smem_bytes]
    return gpu.get(snap), np.ascontiguousarray(smem_bytes), gpu.get(gmem)


class _Checker:
    """One job's trace, lowering and loaded kernel (GPU and simulator); checks one seed at a time."""

    def __init__(self, gpu, job: Job, run: ProgramRun, mode: str):
        self.gpu, self.job, self.run, self.mode = gpu, job, run, mode
        self.trace = job.program.trace(job.params, mode=mode)
        t = self.trace
        start = time.perf_counter()
        self.lowered = lower(t.stream, warps=t.warps, regs=t.regs_per_thread, smem_bytes=t.smem_bytes,
                             snapshots=True, shared_out=True)          # every register zeroed, as the stream assumes
        self.sim_module = load_ptx(self.lowered.text, f"{job.label}.ptx", ptxas="none")
        run.lower_s = time.perf_counter() - start
        run.instructions, run.threads = len(t.stream), t.threads
        run.registers_per_thread, run.smem_bytes = t.regs_per_thread, t.smem_bytes
        run.snapshot_slots = self.lowered.snap_positions
        self.names = RegisterNames(t.tensors)
        run.warnings.extend(schedule_dependent_accesses(t.stream))
        self.module = gpu.ptx_module(self.lowered.text)
        run.module_key = module_key(keyed_text(self.lowered.text), gpu.info.arch, gpu.info.cupy_version)
        run.compile_s = self.module.compile_seconds

    def check(self, seed: int, arch: str) -> SeedResult:
        run, low = self.run, self.lowered
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ProgramWarning)
            trace, machine, _inputs, _t = prepare(self.job.program, self.job.params, self.job.inputs, seed=seed,
                                                  mode=self.mode)
        for w in caught:
            if issubclass(w.category, ProgramWarning) and str(w.message) not in run.warnings:
                run.warnings.append(str(w.message))
        image = machine.gmem.copy()
        result = SeedResult(seed)
        start = time.perf_counter()
        try:
            trace.check_addresses(smem_bytes=machine.smem.size, gmem_bytes=machine.gmem.size)
            sim = self.sim_module.launch(KERNEL, block=low.threads, arch=arch, quiet=True, smem=low.smem_launch,
                                         args={"gmem": machine.gmem, "table": low.table,
                                               "snap": np.full(low.snap_positions * low.threads, 0xFFFFFFFF,
                                                               np.uint32),
                                               "smem_out": np.full(low.smem_launch // 4, 0xFFFFFFFF, np.uint32)})
        except SimulatorFault as e:
            raise HwcheckError(f"hwcheck run: {self.job.label} seed {seed}: the simulator faulted, so the kernel "
                               f"was not launched: {e}") from None
        want_snap = sim.buffers["snap"].reshape(low.snap_positions, low.threads)
        machine.gmem[...] = sim.buffers["gmem"]
        machine.smem[...] = sim.buffers["smem_out"].view(np.uint8)[:machine.smem.size]
        result.sim_s = time.perf_counter() - start
        start = time.perf_counter()
        got_snap, got_smem, got_gmem = launch_program(self.gpu, self.module, low, image)
        result.gpu_s = time.perf_counter() - start
        left = RUN_RECORDS - len(run.records)
        regs = compare_snapshots(trace.stream, low.snap_slots, self.names, want_snap, got_snap, limit=left)
        smem = compare_shared(machine.smem, got_smem, limit=RUN_RECORDS - len(run.memory_records))
        gmem = compare_global(trace.buffers, machine.gmem, got_gmem,
                              limit=RUN_RECORDS - len(run.memory_records) - len(smem.records))
        result.registers, result.registers_bad = regs.compared, regs.mismatched
        result.smem_words, result.smem_bad = smem.compared, smem.mismatched
        result.global_elements, result.global_bad = gmem.compared, gmem.mismatched
        result.first_bad_instruction = regs.instructions[0] if regs.instructions else None
        run.bad_instructions.update(regs.instructions)
        run.records.extend((seed, r) for r in regs.records)
        run.memory_records.extend((seed, r) for r in smem.records + gmem.records)
        return result


def _warm_up(jobs, seed, arch, mode) -> float:
    """Simulate the first job once, so that Numba's compile (a minute or two on a cold cache, then cached on
    disk) is not charged to the first seed's time; returns the seconds spent."""
    start = time.perf_counter()
    for job in jobs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ProgramWarning)
            trace, machine, _inputs, _t = prepare(job.program, job.params, job.inputs, seed=seed, mode=mode)
        try:
            execute_trace(trace, machine, arch=arch)
        except SimulatorFault:
            pass                      # reported with its seed by the run itself
    return time.perf_counter() - start


def run_programs(gpu, jobs, *, seeds: int, first_seed: int = 0, arch: str = DEFAULT_ARCH, mode: str = "vector",
                 report=None, command: str = "", log=None, extra=None) -> ProgramOutcome:
    """Check each job on ``gpu`` for seeds ``first_seed .. first_seed + seeds - 1`` (simulator model ``arch``).

    An error (a GPU or compile error, a simulator fault, a bug: its traceback goes into the report) stops
    everything; the seeds finished so far are reported with ``"status": "error"`` and exit status 3.
    """
    log = sys.stderr if log is None else log
    settings = {"programs": sorted({j.path for j in jobs}), "module_keys": KEYS, "seeds": seeds,
                "first_seed": first_seed,
                "simulator_arch": arch, "trace_mode": mode, "records_per_run": RUN_RECORDS, **(extra or {})}
    runs, error = [], None
    try:
        settings["simulator_warmup_s"] = round(_warm_up(jobs[:1], first_seed, arch, mode), 3)
        for n, job in enumerate(jobs, 1):
            run = ProgramRun(job)
            runs.append(run)
            start = time.perf_counter()
            checker = _Checker(gpu, job, run, mode)
            label = f"[{n}/{len(jobs)}] {job.label}"
            for seed in range(first_seed, first_seed + seeds):
                result = checker.check(seed, arch)
                run.seeds.append(result)
                log.write(result.progress_line(label) + "\n")
                log.flush()
            for message in run.warnings:
                log.write(f"{label}: warning: {message}\n")
            run.wall_s = time.perf_counter() - start
    except HwcheckError as e:
        error = str(e)
    except WarpsimError as e:
        error = f"hwcheck run: {e}"
    except Exception as e:   # a bug: keep what finished, and the traceback, in the report
        error = f"hwcheck: internal error: {type(e).__name__}: {e}"
        settings["traceback"] = traceback.format_exc()
    status = "error" if error else ("fail" if any(r.mismatched for r in runs) else "pass")
    if report is not None:
        try:
            write_json_atomic(report, programs_report(command, gpu, runs, settings=settings, status=status,
                                                      error=error))
        except HwcheckError as e:   # the results still reach the terminal
            error, status, report = (f"{error}; {e}" if error else str(e)), "error", None
    table = summary_table(runs)
    shown = [f"{r.job.label} seed {seed}: {m}" for r in runs for seed, m in r.records + r.memory_records][:5]
    if shown:
        table += "\nfirst mismatches (all kept records are in the report):\n" + "\n".join(shown)
    return ProgramOutcome(runs, status, error, table, {"pass": 0, "fail": 1, "error": 3}[status], report)


def programs_report(command: str, gpu, runs, *, settings: dict, status: str, error) -> dict:
    """The JSON report of ``hwcheck run`` (see :mod:`hwcheck.report` for the common head)."""
    report = new_report(command, gpu.info.as_dict())
    report.update({
        "kind": "program",
        "status": status,
        "error": error,
        "settings": settings,
        "totals": {
            "runs": len(runs), "seeds_run": sum(len(r.seeds) for r in runs),
            "instructions_per_seed": sum(r.instructions for r in runs),
            "registers_compared": sum(r.total("registers") for r in runs),
            "mismatched_registers": sum(r.total("registers_bad") for r in runs),
            "smem_words_compared": sum(r.total("smem_words") for r in runs),
            "mismatched_smem_words": sum(r.total("smem_bad") for r in runs),
            "global_elements_compared": sum(r.total("global_elements") for r in runs),
            "mismatched_global_elements": sum(r.total("global_bad") for r in runs),
            "wall_s": round(sum(r.wall_s for r in runs), 3),
        },
        "runs": [r.as_dict() for r in runs],
    })
    return report


def summary_table(runs) -> str:
    """One row per run, then a total line.

    Columns: registers compared and mismatching (``bad``), instructions with a mismatching register
    (``bad instrs``), shared-memory words, global-buffer elements, and times summed over the seeds.
    """
    head = ("program", "params", "seeds", "instrs", "registers", "bad", "bad instrs", "smem words", "bad",
            "global elems", "bad", "sim s", "gpu s", "wall s")
    rows = [head]
    for r in runs:
        params = " ".join(f"{k}={v}" for k, v in r.job.params.items()) or "-"
        rows.append((r.job.program.name, params, str(len(r.seeds)), str(r.instructions),
                     str(r.total("registers")), str(r.total("registers_bad")), str(len(r.bad_instructions)),
                     str(r.total("smem_words")), str(r.total("smem_bad")), str(r.total("global_elements")),
                     str(r.total("global_bad")), f"{r.total('sim_s'):.2f}", f"{r.total('gpu_s'):.2f}",
                     f"{r.wall_s:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in rows]
    bad = sum(r.mismatched for r in runs)
    lines.append(f"{len(runs)} runs, {sum(len(r.seeds) for r in runs)} seeds: "
                 f"{sum(r.total('registers') for r in runs)} registers, {sum(r.total('registers_bad') for r in runs)} "
                 f"mismatching; {bad} mismatches in all: {'PASS' if bad == 0 else 'FAIL'}")
    return "\n".join(lines)
