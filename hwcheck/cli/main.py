"""The ``hwcheck`` command (also ``python -m hwcheck``).

Subcommands:

- ``hwcheck campaign --instr mma|ldmatrix|cvt|float|f64|int|wgmma [--shapes ...] [--types ...] [--variants ...]
  [--forms GLOB,...] [--classes ...] --count N [--seed S] [--chunk C] [--arch sm_80|sm_90] [--report FILE]
  [--ray [ADDRESS] [--workers N] [--simulate-only]]``: raw-instruction conformance against the GPU
  (:mod:`hwcheck.campaigns.campaign`), on one machine or on a Ray cluster (:mod:`hwcheck.campaigns.cluster`);
  ``--instr int`` runs every integer PTX form (:mod:`hwcheck.campaigns.int_cases`) as raw PTX on the GPU and in
  the PTX interpreter; ``--instr wgmma --module FILE`` streams ``--count`` wgmma instructions per input type (tf32,
  e4m3, e5m2, s8, u8) through :mod:`hwcheck.campaigns.wgmma_types`, the model's neighbours counted beside;
- ``hwcheck collect [--variants ...] [--start S] [--count N] [--stride K] --out FILE.npz``: the GPU's
  results of the MUFU approximations (not modelled yet) over a sweep of inputs (:mod:`hwcheck.campaigns.mufu`);
- ``hwcheck acceptance --out DIR [--scale F] [--only
  campaigns|programs|ptx|corpus|flash|flash-dsl|as-compiled|hopper|hopper-tma]
  [--seeds N]``: the
  acceptance set of campaigns and example programs, one report each (:mod:`hwcheck.campaigns.acceptance`);
- ``hwcheck run PROGRAM [--param k=v ...] [--params all] [--input name=FILE.npy ...] [--seeds N]
  [--seed S] [--arch sm_80|sm_90] [--trace vector|thread] [--report FILE]``: a whole program on the GPU
  and on the simulator, every register snapshot, shared memory and global memory compared
  (:mod:`hwcheck.runs.run`); ``hwcheck run k.cu|k.ptx|k_dsl.py --kernel NAME --grid ... --block ... --arg ...``
  runs the very same PTX on the GPU and the simulator, buffers and every written register
  (:mod:`hwcheck.cli.ptx`, :mod:`hwcheck.runs.ptx_run`);
- ``hwcheck fuzz --count N [--seed S] [--float] [--ptxas PATH|auto|none] [--arch sm_80|sm_90] [--workers W]
  [--time-limit SECONDS] [--report FILE]``: N random integer PTX programs (:mod:`hwcheck.campaigns.ptx_fuzz`), each
  run on the GPU and the simulator, buffers and every written register; ``--float``: float programs made for testing
  ptxas's FMA contraction instead (:mod:`hwcheck.campaigns.ptx_fuzz_float`); ``--time-limit``: the programs done
  by then, seeds S..S+n-1, reported;
- ``hwcheck lower PROGRAM [--param k=v ...] [--trace vector|thread] [-o k.ptx] [--compile] [--arch sm_80|sm_90]``:
  the PTX ``hwcheck run`` launches for the program on the GPU and on the simulator (:mod:`warpsim.program.lower`
  with snapshots and shared memory copied out), on stdout or into a file; ``--compile`` assembles it offline
  with ptxas (no GPU) and prints what ptxas said. Exit status 0, or 2 when it does not assemble.

Exit status: 0 when everything matched, 1 on any mismatch, 2 for a usage or setup error (bad
argument, no CuPy, no GPU, compile failure), 3 when a run stopped on an error (a report is still
written, with ``"status": "error"``), 130 after Ctrl-C (a ``--ray`` campaign writes a report with
``"status": "partial"``). Expected errors print one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from hwcheck.errors import HwcheckError
from warpsim import __version__
from warpsim.commands.program_args import arch_option
from warpsim.isa.arith import DEFAULT_ARCH

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_MISMATCH", "EXIT_USAGE", "EXIT_ERROR"]

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
INT_COUNT = 4096   # --instr int: random operand tuples per form when --count is not given


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and an exception (no usage dump, no exit inside)."""

    def error(self, message):
        raise _UsageError(f"{self.prog}: {message}")


def _csv(text: str) -> list:
    return [v.strip() for v in text.split(",") if v.strip()]


def _at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


_positive = _at_least(1)


def _scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"must be in (0, 100], got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from hwcheck.campaigns.campaign import CHUNK, INSTRS
    parser = _Parser(prog="hwcheck", description="Check warpsim against a real GPU, register by register.")
    parser.add_argument("--version", action="version", version=f"hwcheck (warpsim {__version__})")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True
    c = sub.add_parser("campaign", help="raw-instruction conformance with generated inputs")
    c.add_argument("--instr", required=True, choices=(*INSTRS, "wgmma"))
    c.add_argument("--module", metavar="FILE", help="wgmma: examples/hopper/wgmma_types.cu built for sm_90a (a cubin "
                   "or PTX; nvcc -arch=sm_90a -cubin)")
    c.add_argument("--shapes", type=_csv, help="mma shapes: m16n8k16,m16n8k8 (default both)")
    c.add_argument("--types", type=_csv, help="mma: f16.f32,bf16.f32,f16.f16 (ab.cd); cvt: f16,bf16")
    c.add_argument("--variants", type=_csv, help="ldmatrix: x1,x2,x4,x1.trans,x2.trans,x4.trans; "
                   "float: PTX forms such as fma.rz.ftz.f32,min.NaN.f16x2 (default all modelled forms)")
    c.add_argument("--forms", type=_csv, metavar="GLOB,...",
                   help="int: integer PTX forms by glob, e.g. 'bfe.*,setp.*.s32' (default all)")
    c.add_argument("--classes", type=_csv, help="input classes (default all of the instruction's; "
                   "int: directed,random)")
    c.add_argument("--count", type=_positive, default=None,
                   help="instructions per case (cvt, float, int: per thread, rounded up to whole warps; int: "
                        "random operand tuples per form, default 4096; the directed class has its own size)")
    c.add_argument("--seed", type=_at_least(0), default=0)
    c.add_argument("--chunk", type=_at_least(32), default=CHUNK, help=f"instructions per batch (default {CHUNK})")
    c.add_argument("--arch", type=arch_option, metavar="{sm_80,sm_90}",
                   help="simulator model (default: from the GPU)")
    c.add_argument("--report", metavar="FILE", help="write a JSON report")
    c.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the chunks on a Ray cluster: ADDRESS (e.g. 10.0.0.1:6379), or without one the running "
                        "cluster Ray finds (RAY_ADDRESS, `ray start --head` here), else a new local one")
    c.add_argument("--workers", type=_positive, help="with --ray: simulator actors (default: the cluster's CPUs)")
    c.add_argument("--simulate-only", action="store_true",
                   help="with --ray: no GPU; the simulator again on checker actors (checks the distribution, "
                        "not the hardware)")
    m = sub.add_parser("collect", help="the GPU's results of the MUFU approximations over a sweep of inputs")
    m.add_argument("--variants", type=_csv, help="MUFU forms such as ex2.approx.f32,tanh.approx.f16x2 (default all)")
    m.add_argument("--start", type=_at_least(0), default=0, help="first input bit pattern (default 0)")
    m.add_argument("--count", type=_positive, help="inputs per f32/f64 form (default 2**24; 16-bit forms: all 65536)")
    m.add_argument("--stride", type=_positive, default=1, help="step between input patterns (default 1)")
    m.add_argument("--out", required=True, metavar="FILE.npz", help="inputs and results per form")
    sw = sub.add_parser("sweep", help="every input of the f32 MUFU forms (div: random pairs) on the GPU against "
                                      "warpsim's model")
    sw.add_argument("--forms", type=_csv, help="forms such as ex2.approx.ftz.f32,lg2.approx.f32 (default all)")
    sw.add_argument("--exhaustive", action="store_true", help="all 2**32 inputs (the default when --count is not given)")
    sw.add_argument("--start", type=_at_least(0), default=0, help="first input bit pattern (default 0)")
    sw.add_argument("--count", type=_positive, help="inputs per form (default 2**32)")
    sw.add_argument("--chunk-bits", type=_positive, default=28, help="inputs per chunk: 2**N (default 28)")
    sw.add_argument("--report", metavar="FILE", help="write a JSON report")
    a = sub.add_parser("acceptance", help="the acceptance set of campaigns, one report each")
    a.add_argument("--out", required=True, metavar="DIR", help="directory for the reports")
    a.add_argument("--scale", type=_scale, default=1.0, help="multiply every count (e.g. 0.01 for a smoke run)")
    a.add_argument("--name", help="report name prefix (default: from the GPU, e.g. h200)")
    a.add_argument("--seed", type=_at_least(0), default=0)
    a.add_argument("--only", choices=("all", "campaigns", "programs", "ptx", "corpus", "flash",
                                             "flash-dsl", "as-compiled", "hopper", "hopper-tma"),
                   default="all",
                   help="run only the instruction campaigns or only the example programs (default all: both); "
                        "ptx: the PTX examples, buffers and every written register; corpus: the same for "
                        "the corpus of real compilers' PTX (tests/corpus); flash: the same for the "
                        "CuTe C++ flash-attention forward's kernels; flash-dsl: the CuTe DSL ones at the same "
                        "launches; as-compiled: the CuTe C++ kernels built with nvcc's default flags; hopper: "
                        "the wgmma kernels of examples/hopper (sm_90a); hopper-tma: its TMA copies and TMA GEMMs")
    a.add_argument("--seeds", type=_positive, help="seeds per example program run (default 20 x --scale, at least 2)")
    a.add_argument("--workers", type=_positive, default=1,
                   help="with a PTX set (--only ptx, corpus, flash, flash-dsl, as-compiled, hopper, hopper-tma): "
                        "processes running the examples at once, each with its own GPU context (default 1)")
    a.add_argument("--ptxas", default="auto", metavar="PATH|auto|none",
                   help="with a PTX set: the simulator's FMA contraction (as hwcheck run --ptxas; none: without it, "
                        "beside the GPU's real code, to count what contraction changes)")
    a.add_argument("--no-trace", action="store_true", help="with a PTX set: compare the buffers only")
    f = sub.add_parser("fuzz", help="random integer (or --float) PTX programs on the GPU and the simulator, every "
                                    "register")
    f.add_argument("--count", type=_positive, required=True, help="how many programs (seeds S..S+N-1)")
    f.add_argument("--float", dest="float_programs", action="store_true",
                   help="f32/f16x2 programs made for testing ptxas's FMA contraction of mul + add/sub pairs")
    f.add_argument("--ptxas", default="auto", metavar="PATH|auto|none",
                   help="who decides the simulator's FMA contraction (as hwcheck run --ptxas; none: without)")
    f.add_argument("--seed", type=_at_least(0), default=0, help="the first program's seed (default 0)")
    f.add_argument("--arch", type=arch_option, metavar="{sm_80,sm_90}",
                   help="simulator model (default: from the GPU)")
    f.add_argument("--report", metavar="FILE", help="write a JSON report (failing programs' PTX included)")
    f.add_argument("--workers", type=_positive, default=1,
                   help="processes, each with its own GPU context and simulator (default 1)")
    f.add_argument("--time-limit", type=_positive, metavar="SECONDS",
                   help="start no program after this many seconds; the report then holds seeds S..S+n-1 of the "
                        "n done (a device call's limit: the programs run so far are kept)")
    r = sub.add_parser("run", help="run a program on the GPU and on the simulator; compare every register")
    r.add_argument("program", help="a .py file that defines `program = warpsim.Program(...)` (as warpsim run)")
    r.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="a program param, e.g. --param dtype=bf16 (repeatable)")
    r.add_argument("--params", choices=("given", "all"), default="given",
                   help="all: every combination of the choices of the params not given with --param")
    r.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input buffer as raw bits (uint16 for 16-bit types); the others are random per seed")
    r.add_argument("--seeds", type=_positive, default=1, help="how many seeds (random inputs) per run (default 1)")
    r.add_argument("--seed", type=_at_least(0), default=0, help="the first seed (default 0)")
    r.add_argument("--arch", type=arch_option, metavar="{sm_80,sm_90}",
                   help="simulator model (default: from the GPU)")
    r.add_argument("--trace", choices=("vector", "thread"), default="vector", help="tracing mode (default vector)")
    r.add_argument("--report", metavar="FILE", help="write a JSON report")
    lo = sub.add_parser("lower", help="the PTX hwcheck run launches for a program; --compile assembles it")
    lo.add_argument("program", help="a .py file that defines `program = warpsim.Program(...)` (as warpsim run)")
    lo.add_argument("--param", action="append", default=[], metavar="K=V",
                    help="a program param, e.g. --param dtype=bf16 (repeatable)")
    lo.add_argument("--trace", choices=("vector", "thread"), default="vector", help="tracing mode (default vector)")
    lo.add_argument("-o", "--out", metavar="FILE", help="write the PTX to FILE (default: stdout)")
    lo.add_argument("--compile", action="store_true", help="assemble it with ptxas (no GPU needed); print its log")
    lo.add_argument("--arch", type=arch_option, metavar="{sm_80,sm_90}", default=DEFAULT_ARCH,
                    help="the GPU to assemble for (default sm_90)")
    return parser


def _campaign_options(args) -> dict:
    options = {}
    if args.forms is not None and args.instr != "int":
        raise _UsageError("hwcheck campaign: --forms applies to --instr int only")
    if args.count is None:
        if args.instr != "int":
            raise _UsageError("hwcheck campaign: the following arguments are required: --count")
        args.count = INT_COUNT
    if args.instr == "int":
        if args.shapes is not None or args.types is not None or args.variants is not None:
            raise _UsageError("hwcheck campaign: --shapes, --types and --variants do not apply to --instr int "
                              "(use --forms)")
        options.update(forms=args.forms, classes=args.classes)
    elif args.instr == "mma":
        if args.variants is not None:
            raise _UsageError("hwcheck campaign: --variants applies to --instr ldmatrix only")
        options.update(shapes=args.shapes or None, types=args.types, classes=args.classes)
    elif args.instr in ("float", "f64"):
        if args.shapes is not None or args.types is not None:
            raise _UsageError(f"hwcheck campaign: --shapes and --types do not apply to --instr {args.instr} "
                              f"(use --variants)")
        options.update(variants=args.variants, classes=args.classes)
    elif args.instr == "cvt":
        if args.variants is not None or args.shapes is not None:
            raise _UsageError("hwcheck campaign: --shapes and --variants do not apply to --instr cvt")
        options.update(types=args.types, classes=args.classes)
    else:
        if args.shapes is not None or args.types is not None:
            raise _UsageError("hwcheck campaign: --shapes and --types do not apply to --instr ldmatrix")
        options.update(variants=args.variants, classes=args.classes)
    return {k: v for k, v in options.items() if v is not None}


def _wgmma_campaign(args, argv) -> int:
    """``--instr wgmma``: the streamed campaign of :mod:`hwcheck.campaigns.wgmma_types` (``--count`` instructions per
    input type, ``--chunk`` CTAs a chunk, ``--workers`` processes, each with the GPU)."""
    from hwcheck.campaigns import wgmma_types
    for name in ("shapes", "types", "variants", "forms", "classes", "arch", "ray"):
        if getattr(args, name) is not None:
            raise _UsageError(f"hwcheck campaign: --{name} does not apply to --instr wgmma")
    if args.count is None or args.report is None or (args.module is None and not args.simulate_only):
        raise _UsageError("hwcheck campaign --instr wgmma: --count, --report and --module (or --simulate-only) "
                          "are required")
    forwarded = ["--per-type", str(args.count), "--seed", str(args.seed), "--chunk", str(args.chunk),
            "--report", args.report, *(["--module", args.module] if args.module else []),
            *(["--workers", str(args.workers)] if args.workers else []),
            *(["--simulate-only"] if args.simulate_only else [])]
    from hwcheck.report import command_line
    return wgmma_types.main(forwarded, command_line(argv))


def _cmd_campaign(args, argv) -> int:
    if args.instr == "wgmma":
        return _wgmma_campaign(args, argv)
    if args.module is not None:
        raise _UsageError("hwcheck campaign: --module applies to --instr wgmma only")
    from hwcheck.campaigns.acceptance import run_one
    from hwcheck.campaigns.campaign import build_cases
    from hwcheck.device.gpu import Gpu
    from hwcheck.report import command_line
    try:
        cases = build_cases(args.instr, **_campaign_options(args))
    except ValueError as e:
        raise _UsageError(f"hwcheck campaign: {e}") from None
    if args.ray is not None:
        if args.instr == "int":
            raise _UsageError("hwcheck campaign: --ray does not run --instr int yet (it runs on one GPU in minutes)")
        return _campaign_on_ray(args, argv, cases)
    if args.workers is not None or args.simulate_only:
        raise _UsageError("hwcheck campaign: --workers and --simulate-only apply with --ray only")
    gpu = Gpu.open()
    outcome = run_one(gpu, cases, count=args.count, seed=args.seed, chunk=args.chunk, arch=args.arch,
                      report=args.report, command=command_line(argv))
    return _finish(outcome)


def _campaign_on_ray(args, argv, cases) -> int:
    try:
        from hwcheck.campaigns import cluster   # Ray is imported here only
    except ImportError as e:
        raise _UsageError(f"hwcheck campaign --ray: Ray is not installed ({e}); pip install 'warpsim[ray]'") from None
    from hwcheck.report import command_line
    started = cluster.connect(args.ray or None)
    try:
        outcome = cluster.run_one_ray(cases, count=args.count, seed=args.seed, chunk=args.chunk, arch=args.arch,
                                      runner="simulator" if args.simulate_only else "gpu", workers=args.workers,
                                      report=args.report, command=command_line(argv))
    finally:
        if started:
            cluster.ray.shutdown()
    return _finish(outcome)


def _finish(outcome) -> int:
    """Print a campaign's or a run's table, report path and error; return its exit status."""
    sys.stdout.write(outcome.table + "\n")
    if outcome.report:
        sys.stdout.write(f"report: {outcome.report} ({outcome.status})\n")
    if outcome.error:
        sys.stderr.write(outcome.error + "\n")
    return outcome.exit_status


def _cmd_collect(args, argv) -> int:
    import json

    import numpy as np

    from hwcheck.device.gpu import Gpu
    from hwcheck.campaigns.mufu import collect, mufu_forms, write_npz_atomic
    from hwcheck.progress import Progress
    from hwcheck.report import command_line
    try:
        forms = mufu_forms(args.variants)
    except ValueError as e:
        raise _UsageError(f"hwcheck collect: {e}") from None
    gpu = Gpu.open()
    data = collect(gpu, forms, start=args.start, count=args.count, stride=args.stride, progress=Progress())
    arrays = {"meta": np.array(json.dumps({"command": command_line(argv), "gpu": gpu.info.as_dict(),
                                           "start": args.start, "stride": args.stride}))}
    for text, (inputs, results) in data.items():
        arrays[f"{text}:inputs"], arrays[f"{text}:results"] = inputs, results
    write_npz_atomic(args.out, arrays)
    sys.stdout.write(f"collected {', '.join(f'{t}: {len(x)}' for t, (x, _) in data.items())} -> {args.out}\n")
    return EXIT_OK


def _cmd_acceptance(args, argv) -> int:
    from hwcheck.campaigns.acceptance import example_programs, run_acceptance
    from hwcheck.device.gpu import Gpu
    from hwcheck.report import command_line
    if args.only in ("all", "programs"):
        example_programs()            # no examples found: a usage error before the GPU opens
    gpu = Gpu.open()
    return run_acceptance(gpu, out=args.out, scale=args.scale, name=args.name, seed=args.seed, only=args.only,
                          seeds=args.seeds, invoked=command_line(argv), workers=args.workers, ptxas=args.ptxas,
                          trace=not args.no_trace)


def _cmd_run(args, argv) -> int:
    from hwcheck.arch import model_arch
    from hwcheck.device.gpu import Gpu
    from hwcheck.report import command_line
    from hwcheck.runs.run import plan_jobs, run_programs
    from warpsim.errors import WarpsimError
    from warpsim.program.arguments import load_inputs, parse_pairs
    from warpsim.program.program import load_program
    try:
        program = load_program(args.program)
        params = parse_pairs("--param", args.param)
        inputs = load_inputs(args.input)
        jobs = plan_jobs([(args.program, program)], params, inputs, sweep=args.params == "all", mode=args.trace,
                         seed=args.seed)
    except (ValueError, TypeError, WarpsimError) as e:
        raise _UsageError(f"hwcheck run: {e}") from None
    gpu = Gpu.open()
    try:
        arch = model_arch(gpu.info.compute_capability, args.arch)
    except ValueError as e:
        raise _UsageError(f"hwcheck run: {e}") from None
    outcome = run_programs(gpu, jobs, seeds=args.seeds, first_seed=args.seed, arch=arch, mode=args.trace,
                           report=args.report, command=command_line(argv))
    return _finish(outcome)


def _cmd_sweep(args, argv) -> int:
    from hwcheck.device.gpu import Gpu
    from hwcheck.campaigns.mufu_sweep import DIV_FORMS, HALF_FORMS, SWEEP_FORMS, parse_forms, sweep
    from hwcheck.report import command_line
    if args.exhaustive and args.count is not None:
        raise _UsageError("hwcheck sweep: --exhaustive and --count exclude each other")
    try:
        forms = parse_forms(args.forms or SWEEP_FORMS + DIV_FORMS + HALF_FORMS)
    except ValueError as e:
        raise _UsageError(f"hwcheck sweep: {e}") from None
    if args.start >= 1 << 32:
        raise _UsageError(f"hwcheck sweep: --start {args.start} is not a 32-bit pattern")
    gpu = Gpu.open()
    code = sweep(gpu, forms, start=args.start, count=args.count or 1 << 32, chunk_bits=min(args.chunk_bits, 32),
                 report=args.report, command=command_line(argv))
    sys.stdout.write(f"sweep: {'PASS' if code == 0 else 'FAIL'}" + (f"; report: {args.report}\n" if args.report
                                                                      else "\n"))
    return code


def _cmd_fuzz(args, argv) -> int:
    import functools
    from hwcheck.arch import model_arch
    from hwcheck.device.gpu import Gpu
    from hwcheck.campaigns.ptx_fuzz import fuzz
    from hwcheck.runs.ptx_run import CupyPtx, open_cupy_ptx
    from hwcheck.report import command_line
    gpu = Gpu.open()
    try:
        arch = model_arch(gpu.info.compute_capability, args.arch)
    except ValueError as e:
        raise _UsageError(f"hwcheck fuzz: {e}") from None
    kind = "float" if args.float_programs else "int"
    gpu_ptxas = "auto" if args.ptxas == "none" else args.ptxas              # the GPU always runs ptxas's code
    summary, code = fuzz(CupyPtx(gpu, gpu_ptxas), args.count, seed=args.seed, arch=arch, report=args.report,
                         command=command_line(argv), gpu_info=gpu.info.as_dict(), workers=args.workers,
                         make_gpu_ptx=functools.partial(open_cupy_ptx, gpu_ptxas), kind=kind, ptxas=args.ptxas,
                         time_limit=args.time_limit)
    sys.stdout.write(f"fuzz: {summary.programs} {'float ' * (kind == 'float')}programs, "
                     f"{summary.mismatched_programs} mismatched, "
                     f"{summary.errors} errors, {summary.trace_records_compared} register records and "
                     f"{summary.global_elements_compared} buffer elements compared, {summary.wall_s:.1f} s\n")
    if summary.programs < args.count:
        done = f"seeds {args.seed}..{args.seed + summary.programs - 1}" if summary.programs else "no program"
        sys.stdout.write(f"fuzz: stopped at the time limit ({args.time_limit} s): {done} of the {args.count} "
                         "asked for\n")
    if kind == "float":
        sys.stdout.write(f"{summary.contraction_line()}; candidate mul+add pairs: {summary.candidate_pairs} in "
                         f"{summary.programs_with_candidates} programs; fused by the simulator: "
                         f"{summary.fused_pairs} in {summary.programs_with_fused} programs\n")
    if summary.errors_by_message:
        sys.stdout.write("errors by message:\n")
        sys.stdout.writelines(f"  {n}: {what}\n" for what, n in summary.as_dict()["errors_by_message"].items())
    if summary.first_opcodes:
        sys.stdout.write("failing programs by the opcode of their first mismatching register:\n")
        sys.stdout.writelines(f"  {line}\n" for line in summary.opcode_lines())
    if args.report:
        sys.stdout.write(f"report: {args.report}\n")
    return code


def _cmd_lower(args, argv) -> int:
    import tempfile
    from hwcheck.report import write_text_atomic
    from warpsim.errors import ContractionError, WarpsimError
    from warpsim.ptx.syntax import parse_module
    from warpsim.program.arguments import parse_pairs
    from warpsim.program.lower import lower
    from warpsim.program.program import load_program
    from warpsim.toolchain import compile_cubin, find_ptxas
    from hwcheck.arch import ptx_target
    try:
        program = load_program(args.program)
        params = program.resolve_params(parse_pairs("--param", args.param))
        t = program.trace(params, mode=args.trace)
    except (ValueError, TypeError, WarpsimError) as e:
        raise _UsageError(f"hwcheck lower: {e}") from None
    lowered = lower(t.stream, warps=t.warps, regs=t.regs_per_thread, smem_bytes=t.smem_bytes, snapshots=True,
                    shared_out=True)
    summary = (f"{program.name}: {len(t.stream)} warp instructions, {lowered.threads} threads, "
               f"{t.regs_per_thread} registers per thread, {lowered.smem_bytes} bytes of shared memory, "
               f"{lowered.snap_positions} register snapshot slots")
    ptxas = find_ptxas("auto", lowered.text) if args.compile else None
    if args.compile and ptxas is None:
        raise _UsageError("hwcheck lower: --compile needs ptxas (pip install nvidia-cuda-nvcc, or a CUDA toolkit "
                          "on PATH)")
    if args.out:
        write_text_atomic(args.out, lowered.text, what="-o")
        sys.stdout.write(f"wrote {args.out}: {summary}\n")
    else:
        sys.stdout.write(lowered.text)
        sys.stderr.write(summary + "\n")
    if args.compile:
        name = os.path.basename(args.out) if args.out else "warpsim_program.ptx"
        arch = ptx_target(args.arch)
        with tempfile.TemporaryDirectory(prefix="hwcheck-lower-") as tmp:
            out = os.path.join(tmp, "k.cubin")                        # compile_cubin writes k.cubin.ptx beside it
            try:
                compile_cubin(lowered.text, parse_module(lowered.text, name), arch, ptxas, out, filename=name)
            except ContractionError as e:
                sys.stderr.write(f"hwcheck lower: {name} does not assemble for {arch}: "
                                 f"{str(e).replace(out + '.ptx', name)}\n")
                return EXIT_USAGE
            size = os.path.getsize(out)
        report = sys.stdout if args.out else sys.stderr   # stdout holds the PTX when there is no -o
        report.write(f"assembled {name} for {arch} with ptxas: {size} bytes of cubin\n")
    return EXIT_OK


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["run"]:
            from hwcheck.cli import ptx       # a .cu/.ptx/CuTe DSL source: the PTX route
            if ptx.routes_here(argv[1:]):
                return ptx.main(argv[1:])
        args = build_parser().parse_args(argv)
        command = {"campaign": _cmd_campaign, "acceptance": _cmd_acceptance, "run": _cmd_run,
                   "lower": _cmd_lower, "fuzz": _cmd_fuzz, "collect": _cmd_collect,
                   "sweep": _cmd_sweep}[args.command]
        return command(args, argv)
    except _UsageError as e:
        sys.stderr.write(f"{e}\n")
        return EXIT_USAGE
    except HwcheckError as e:
        sys.stderr.write(f"{e}\n")   # one line; a compile failure adds the compiler's log
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("hwcheck: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
