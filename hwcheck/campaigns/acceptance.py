"""Running campaigns into reports, and the acceptance set (issues 4 and 6) in one command.

:func:`run_one` runs one campaign on a GPU, keeps the finished cases when a GPU error stops it,
and writes its report (``"status"``: ``pass``, ``fail`` or ``error``). :func:`run_acceptance` runs
:data:`ACCEPTANCE`, one report per line, then every example program (:func:`example_programs`), every
combination of its params, :data:`PROGRAM_SEEDS` random inputs each, through ``hwcheck run``'s
machinery into ``NAME-programs.json``; it prints a summary table last (``only`` picks one half):

========================  ==============================================================  ==========
report                    campaign                                                        count/case
========================  ==============================================================  ==========
``NAME-mma-m16n8k16``     mma m16n8k16, 3 types x 8 classes (10^6 per type)                 125,000
``NAME-mma-m16n8k8``      mma m16n8k8, 3 types x 8 classes (10^5 per type)                   12,500
``NAME-mma-evidence``     mma, both shapes, 3 types x 3 evidence classes, model variants    100,000
``NAME-ldmatrix``         the 6 ldmatrix variants, random memory and row addresses           100,000
``NAME-cvt``              cvt.rn.{f16,bf16}x2.f32, 5 input classes (10^6 per type)          200,000
``NAME-programs``         every example program, every params combination                  20 seeds
========================  ==============================================================  ==========

``--only ptx`` runs the PTX examples into ``NAME-ptx-programs.json``, ``--only flash`` the flash-attention
kernels into ``NAME-flash-programs.json``, ``--only flash-dsl`` the CuTe DSL flash kernels at the same launches
into ``NAME-flash-dsl-programs.json``, ``--only as-compiled`` the kernels of ``examples/cute_cpp/as_compiled/``
(nvcc's default flags) into ``NAME-as-compiled-programs.json``, ``--only hopper`` the wgmma kernels of
``examples/hopper/`` into ``NAME-hopper-programs.json``, ``--only hopper-tma`` its TMA kernels (TMA copies, the TMA +
mbarrier + wgmma GEMMs) into ``NAME-hopper-tma-programs.json`` (:mod:`hwcheck.runs.ptx_examples`);
``--only corpus`` the corpus of real compilers' PTX (``tests/corpus``) into ``NAME-corpus-programs.json``.

>>> report_prefix("NVIDIA H200"), report_prefix("NVIDIA H100 80GB HBM3")
('h200', 'h100-80gb-hbm3')
"""

from __future__ import annotations

import glob
import os
import re
import sys
import traceback
from dataclasses import dataclass

from hwcheck.campaigns.campaign import (CASE_RECORDS, CHUNK, build_cases, campaign_status, first_mismatches,
                                        group_totals, make_runner, run_campaign, summary_table, variant_totals,
                                        warm_up)
from hwcheck.arch import model_arch
from hwcheck.errors import HwcheckError
from hwcheck.progress import Progress
from hwcheck.report import REPO_ROOT, command_line, new_report, write_json_atomic
from warpsim.isa.arith import DEFAULT_ARCH
from warpsim.isa.inputs import EVIDENCE_CLASSES, MMA_CLASSES

__all__ = ["ACCEPTANCE", "PROGRAM_SEEDS", "ONLY", "Outcome", "run_one", "run_acceptance", "report_prefix",
           "campaign_report", "example_programs", "run_example_programs"]

# (report name, instruction, build_cases options, count per case)
ACCEPTANCE = (
    ("mma-m16n8k16", "mma", {"shapes": ["m16n8k16"], "classes": list(MMA_CLASSES)}, 125_000),
    ("mma-m16n8k8", "mma", {"shapes": ["m16n8k8"], "classes": list(MMA_CLASSES)}, 12_500),
    ("mma-evidence", "mma", {"classes": list(EVIDENCE_CLASSES)}, 100_000),
    ("ldmatrix", "ldmatrix", {}, 100_000),
    ("cvt", "cvt", {}, 200_000),
)
PROGRAM_SEEDS = 20       # random inputs per example program and params combination
ONLY = ("all", "campaigns", "programs", "ptx", "flash", "flash-dsl", "as-compiled", "corpus", "hopper", "hopper-tma")
_EXAMPLES = os.path.join(REPO_ROOT, "examples")


@dataclass(frozen=True)
class Outcome:
    """What one campaign came to: its results, status, error (if any), summary and exit status."""

    results: list
    status: str
    error: str | None
    table: str
    exit_status: int
    report: str | None


def report_prefix(gpu_name: str) -> str:
    """A file-name prefix from a GPU's name: lower case, without ``NVIDIA``, words joined by ``-``."""
    words = re.sub(r"[^a-z0-9]+", " ", gpu_name.lower()).split()
    return "-".join(w for w in words if w != "nvidia") or "gpu"


def campaign_report(command: str, gpu, *, cases, results, settings: dict, status: str, error) -> dict:
    """The JSON report of one campaign (see :mod:`hwcheck.report` for the common head); ``gpu`` may be
    None (a cluster run fills ``"gpu"`` in from its checkers)."""
    report = new_report(command, gpu.info.as_dict() if gpu is not None else None)
    report.update({
        "status": status,
        "error": error,
        "settings": settings,
        "totals": {
            "cases_planned": len(cases), "cases_run": len(results),
            "instructions": sum(r.count for r in results),
            "registers_compared": sum(r.compared for r in results),
            "mismatched_registers": sum(r.mismatched for r in results),
            "wall_s": round(sum(r.wall_s for r in results), 3),
        },
        "instructions": [{"instruction": ptx, "count": count, "mismatched_registers": bad, "wall_s": round(wall, 3)}
                         for ptx, count, bad, wall in group_totals(results)],
        "cases": [r.as_dict() for r in results],
    })
    variants = variant_totals(results)
    if variants:   # evidence classes: which neighbour values of the model the GPU rules out
        report["model_variants"] = {
            "simulator_arch": settings.get("simulator_arch"),
            "mismatched_registers": variants,
            "ruled_out": [name for name, bad in variants.items() if bad],
            "not_ruled_out": [name for name, bad in variants.items() if not bad],
        }
    return report


def run_one(gpu, cases, *, count: int, seed: int = 0, chunk: int = CHUNK, arch=None, report=None,
            command: str = "", progress=None, extra=None) -> Outcome:
    """Run ``cases`` on ``gpu`` and write the report to ``report`` (a path, or None for none).

    An error while compiling or running (a failed kernel; an unknown tensor-core model; a bug, whose
    traceback goes into the report's settings) stops the campaign: the cases finished so far are
    reported with ``"status": "error"`` and exit status 3.
    """
    progress = Progress() if progress is None else progress
    instr = cases[0].instr
    settings = {"instr": instr, "count_per_case": count, "seed": seed, "chunk": chunk, "simulator_arch": None,
                "records_per_case": CASE_RECORDS, **(extra or {})}
    results: list = []
    error = None
    try:
        model = model_arch(gpu.info.compute_capability, arch) if instr == "mma" else DEFAULT_ARCH
        if instr == "mma":
            settings["simulator_arch"] = model
        runner = make_runner(gpu, cases)
        settings.update(module_key=runner.module.key, compile_s=round(runner.module.compile_seconds, 3))
        settings["simulator_warmup_s"] = round(warm_up(cases, model), 3)
        # int: every form keeps its own first records (the operand tuples are the finding), not 200 in all
        kept = CASE_RECORDS * len(cases) if instr == "int" else 200
        run_campaign(cases, runner, count=count, seed=seed, chunk=chunk, arch=model, progress=progress,
                     results=results, total_records=kept)
    except HwcheckError as e:
        error = str(e)
    except Exception as e:   # a bug: keep what finished, and the traceback, in the report
        error = f"hwcheck: internal error: {type(e).__name__}: {e}"
        settings["traceback"] = traceback.format_exc()
    status = "error" if error else campaign_status(results)
    if report is not None:
        try:
            write_json_atomic(report, campaign_report(command, gpu, cases=cases, results=results,
                                                      settings=settings, status=status, error=error))
        except HwcheckError as e:   # the results still reach the terminal
            error, status, report = (f"{error}; {e}" if error else str(e)), "error", None
    exit_status = {"pass": 0, "fail": 1, "error": 3}[status]
    table = summary_table(results)
    shown = first_mismatches(results)
    if shown:
        table += "\nfirst mismatches (all kept records are in the report):\n" + "\n".join(shown)
    return Outcome(results, status, error, table, exit_status, report)


def _campaign_command(instr, options, count, seed, report) -> str:
    argv = ["campaign", "--instr", instr]
    for key, values in options.items():
        argv += [f"--{key}", ",".join(values)]
    return command_line(argv + ["--count", str(count), "--seed", str(seed), "--report", report])


def example_programs(directory: str = _EXAMPLES) -> list:
    """The example program files: ``*.py`` under ``directory`` that build a ``warpsim.Program(``, sorted.

    Raises ``HwcheckError`` when there is none (e.g. an installed package without the examples).
    """
    paths = []
    for path in sorted(glob.glob(os.path.join(directory, "*.py"))):
        with open(path, encoding="utf-8") as f:
            if "warpsim.Program(" in f.read():
                paths.append(path)
    if not paths:
        raise HwcheckError(f"hwcheck acceptance: no example programs under {directory}")
    return paths


def run_example_programs(gpu, *, report: str, seeds: int = PROGRAM_SEEDS, seed: int = 0, paths=None,
                         extra=None, log=None):
    """Every example program (``paths``, default :func:`example_programs`), every combination of its param
    choices, ``seeds`` seeds each, on ``gpu``, into ``report``: a :class:`hwcheck.runs.run.ProgramOutcome`."""
    from hwcheck.runs.run import ProgramOutcome, plan_jobs, run_programs
    from warpsim.errors import WarpsimError
    from warpsim.program.program import load_program
    paths = example_programs() if paths is None else list(paths)
    command = " ; ".join(command_line(["run", p, "--params", "all", "--seeds", str(seeds), "--seed", str(seed)])
                         for p in paths)
    try:
        jobs = plan_jobs([(p, load_program(p)) for p in paths], {}, {}, sweep=True, seed=seed)
        arch = model_arch(gpu.info.compute_capability)
    except (ValueError, TypeError, WarpsimError) as e:
        message = f"hwcheck acceptance: {e}"
        return ProgramOutcome([], "error", message, message, 3, None)
    return run_programs(gpu, jobs, seeds=seeds, first_seed=seed, arch=arch, report=report,
                        command=command,
                        extra=extra, log=log)


def run_acceptance(gpu, *, out: str, scale: float = 1.0, name=None, seed: int = 0, stream=None,
                   only: str = "all", seeds=None, invoked=None, workers: int = 1, ptxas: str = "auto",
                   trace: bool = True) -> int:
    """Run :data:`ACCEPTANCE` and the example programs on ``gpu``, reports under ``out``; print the
    summary table last. ``only``: ``"campaigns"`` or ``"programs"`` runs one half, ``"ptx"`` the PTX examples
    (``NAME-ptx-programs.json``), ``"flash"`` the flash-attention kernels (``hwcheck.runs.ptx_examples.FLASH_EXAMPLES``,
    ``NAME-flash-programs.json``), ``"flash-dsl"`` the CuTe DSL ones at the same launches (``FLASH_DSL_EXAMPLES``,
    ``NAME-flash-dsl-programs.json``), ``"as-compiled"`` the kernels built with nvcc's defaults
    (``AS_COMPILED_EXAMPLES``, ``NAME-as-compiled-programs.json``), ``"corpus"`` the corpus (``CORPUS_EXAMPLES``,
    ``NAME-corpus-programs.json``), ``"hopper"`` / ``"hopper-tma"`` the Hopper kernels (``HOPPER_EXAMPLES``,
    ``HOPPER_TMA_EXAMPLES``); ``seeds``: per program
    run (default ``PROGRAM_SEEDS * scale``, at least 2); ``invoked``: the command line for the reports
    (default: this process's).

    Returns 0 when everything passed, 1 when anything mismatched, 3 when anything stopped on an error.
    """
    if only not in ONLY:
        raise ValueError(f"run_acceptance: only must be one of {ONLY}, got {only!r}")
    stream = sys.stdout if stream is None else stream
    prefix = name or report_prefix(gpu.info.name)
    invoked = command_line() if invoked is None else invoked
    rows = []
    worst = 0
    for report_name, instr, options, count in (ACCEPTANCE if only in ("all", "campaigns") else ()):
        n = max(32, round(count * scale))
        if instr == "cvt":
            n = -(-n // 32) * 32            # whole warps of conversions
        path = os.path.join(out, f"{prefix}-{report_name}.json")
        outcome = run_one(gpu, build_cases(instr, **options), count=n, seed=seed, report=path,
                          command=_campaign_command(instr, options, n, seed, path),
                          extra={"invoked_as": invoked})
        stream.write(outcome.table + "\n")
        if outcome.error:
            stream.write(f"{report_name}: {outcome.error.splitlines()[0]}\n")
        stream.flush()
        for ptx, total, bad, wall in group_totals(outcome.results):
            rows.append((path, ptx, f"{total:,}", str(bad), f"{wall:.1f}", outcome.status))
        if not outcome.results:
            rows.append((path, "-", "0", "-", "-", outcome.status))
        worst = max(worst, {"pass": 0, "fail": 1, "error": 3}[outcome.status])
    # every example of the set: buffers, written registers
    if only in ("ptx", "corpus", "flash", "flash-dsl", "as-compiled", "hopper", "hopper-tma"):
        from hwcheck.runs.ptx_examples import (AS_COMPILED_EXAMPLES, CORPUS_EXAMPLES, FLASH_DSL_EXAMPLES,
                                               FLASH_EXAMPLES, FLASH_TRACE_CAPACITY, HOPPER_EXAMPLES,
                                               HOPPER_TMA_EXAMPLES, run_ptx_examples)
        n = seeds if seeds is not None else max(2, round(PROGRAM_SEEDS * scale))
        path = os.path.join(out, f"{prefix}-{only}-programs.json")
        flash = {"flash": FLASH_EXAMPLES, "flash-dsl": FLASH_DSL_EXAMPLES, "as-compiled": AS_COMPILED_EXAMPLES}
        more = {"examples": flash[only], "capacity": FLASH_TRACE_CAPACITY} if only in flash else {}
        if only in ("corpus", "hopper", "hopper-tma"):              # hwcheck's default trace capacity
            more = {"examples": {"corpus": CORPUS_EXAMPLES, "hopper": HOPPER_EXAMPLES,
                                 "hopper-tma": HOPPER_TMA_EXAMPLES}[only]}
        runs, status, error, code = run_ptx_examples(gpu, report=path, seeds=n, seed=seed, workers=workers,
                                                     ptxas=ptxas, trace=trace, **more)
        if error:
            stream.write(f"ptx programs: {error.splitlines()[0]}\n")
        for r in runs:                  # each row its own outcome: the set's error may be another job's
            own = "error" if r.error else ("fail" if r.mismatched else ("pass" if r.seeds else "not run"))
            rows.append((path, f"ptx {os.path.basename(r.job.source)} {r.job.kernel}", f"{len(r.seeds)} seeds",
                         str(r.mismatched), f"{r.wall_s:.1f}", own))
        worst = max(worst, code)
    if only in ("all", "programs"):
        n = seeds if seeds is not None else max(2, round(PROGRAM_SEEDS * scale))
        path = os.path.join(out, f"{prefix}-programs.json")
        outcome = run_example_programs(gpu, report=path, seeds=n, seed=seed, extra={"invoked_as": invoked})
        stream.write(outcome.table + "\n")
        if outcome.error:
            stream.write(f"programs: {outcome.error.splitlines()[0]}\n")
        stream.flush()
        for r in outcome.runs:
            params = " ".join(f"{k}={v}" for k, v in r.job.params.items())
            rows.append((path, f"program {r.job.program.name} {params}".rstrip(), f"{len(r.seeds)} seeds",
                         str(r.mismatched), f"{r.wall_s:.1f}", outcome.status))
        if not outcome.runs:
            rows.append((path, "programs", "0", "-", "-", outcome.status))
        worst = max(worst, outcome.exit_status)
    info = gpu.info
    head = ("report", "instruction", "count", "mismatches", "wall s", "status")
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(len(head))]
    lines = [f"acceptance on {info.name} ({info.arch}), driver {info.driver_version}, CUDA {info.runtime_version}, "
             f"CuPy {info.cupy_version}, scale {scale}:"]
    for row in [head, *rows]:
        lines.append("  ".join(c.rjust(w) if 2 <= i <= 4 else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    lines.append(f"acceptance: {'PASS' if worst == 0 else 'FAIL' if worst == 1 else 'ERROR'}")
    stream.write("\n".join(lines) + "\n")
    stream.flush()
    return worst
