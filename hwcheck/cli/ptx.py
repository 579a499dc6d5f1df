"""``hwcheck run k.cu|k.ptx|k_dsl.py --kernel NAME ...``: the command line of :mod:`hwcheck.runs.ptx_run`.

``hwcheck run SOURCE --kernel NAME [--grid X,Y,Z] [--block X,Y,Z] --arg NAME=VALUE ... [--smem BYTES]
[--seeds N] [--seed S] [--arch sm_80|sm_90] [--no-trace] [--trace-capacity N] [--trace-window FROM:TO]
[--report FILE]``

``hwcheck run`` comes here when its first argument is a ``.cu``, ``.ptx`` or CuTe DSL ``.py`` file (as
``warpsim run`` routes); a warpsim Python program goes to :mod:`hwcheck.runs.run` as before. VALUE is
``random:DTYPE:SHAPE`` (new per seed), ``zeros:DTYPE:SHAPE``, ``FILE.npy`` or a number; a CuTe DSL tensor
struct adds its fields after ``;`` (``a=random:f16:64x64;s32:64;s32:64``).
"""

from __future__ import annotations

import argparse
import sys

from hwcheck.errors import HwcheckError
from warpsim.commands.program_args import arch_option
from warpsim.isa.arith import DEFAULT_ARCH

__all__ = ["routes_here", "main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line raised as ``HwcheckError`` (exit status 2 in ``hwcheck``)."""

    def error(self, message):
        raise HwcheckError(f"{self.prog}: {message}")


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


def routes_here(argv) -> bool:
    """Whether ``hwcheck run ARGV`` is for a PTX source (its first positional argument)."""
    from warpsim.frontends.args import routes_here as ptx_source
    return ptx_source(list(argv))


def _window(text: str):
    first, sep, last = text.partition(":")
    try:
        return int(first or 0), int(last) if sep and last else 0xFFFFFFFF
    except ValueError:
        raise ValueError(f"--trace-window {text}: expected FROM:TO, two step numbers (TO may be left out)") from None


def build_parser():
    _positive = _at_least(1)
    p = _Parser(prog="hwcheck run", description="Run a .cu/.ptx/CuTe DSL kernel on the GPU and on the simulator; "
                                                 "compare every buffer and every written register.")
    p.add_argument("source", help="a .cu file (nvcc), a .ptx file, or a CuTe DSL .py file that assigns WARPSIM")
    p.add_argument("--kernel", required=True, help="the kernel: its name in the source or its PTX entry name")
    p.add_argument("--grid", default="1", help="grid X[,Y[,Z]] (default 1)")
    p.add_argument("--block", default="128", help="block X[,Y[,Z]] (default 128)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a kernel parameter: random:DTYPE:SHAPE (per seed), zeros:DTYPE:SHAPE, FILE.npy, a number; "
                        "struct fields after ';'")
    p.add_argument("--smem", type=_at_least(0), default=0, help="dynamic shared memory in bytes (default 0)")
    p.add_argument("--seeds", type=_positive, default=1, help="how many seeds (random inputs) (default 1)")
    p.add_argument("--seed", type=_at_least(0), default=0, help="the first seed (default 0)")
    p.add_argument("--arch", type=arch_option, metavar="{sm_80,sm_90}",
                   help="simulator model and compile target (default: the GPU's)")
    p.add_argument("--no-trace", action="store_true", help="compare the buffers only (no register trace, no shared memory)")
    p.add_argument("--trace-capacity", type=_positive, default=4096, help="trace records per thread (default 4096)")
    p.add_argument("--trace-window", default="0:", metavar="FROM:TO", help="record dynamic steps FROM..TO-1 only")
    p.add_argument("--ptxas", default="auto", metavar="PATH|auto|none",
                   help="the simulator's FMA contraction: auto (default; checked against the cubin the GPU runs, "
                        "assembled by the same ptxas), a ptxas path, or none (the PTX without contraction)")
    p.add_argument("--report", metavar="FILE", help="write a JSON report")
    return p


def main(argv) -> int:
    """``hwcheck run`` for a PTX source; ``argv`` after ``run``. Returns the exit status."""
    from hwcheck.arch import model_arch
    from hwcheck.device.gpu import Gpu
    from hwcheck.runs.ptx_run import CupyPtx, PtxJob, check_ptx, validate
    from warpsim.frontends.args import parse_arg
    from warpsim.errors import WarpsimError
    from hwcheck.report import command_line
    from warpsim.frontends.kernel import parse_dim3
    args = build_parser().parse_args(argv)
    try:
        specs = dict(parse_arg(a) for a in args.arg)
        job = PtxJob(args.source, args.kernel, parse_dim3(args.grid, "--grid"), parse_dim3(args.block, "--block"),
                     args.smem, specs)
        window = _window(args.trace_window)
        if not 0 <= window[0] < window[1]:
            raise ValueError(f"--trace-window {args.trace_window}: FROM must be below TO")
        validate(job, args.arch or DEFAULT_ARCH, args.seed)
    except (ValueError, TypeError, WarpsimError) as e:
        raise HwcheckError(f"hwcheck run: {e}") from None
    gpu = Gpu.open()
    arch = model_arch(gpu.info.compute_capability, args.arch)
    gpu_ptx = CupyPtx(gpu, "auto" if args.ptxas == "none" else args.ptxas)    # the GPU always runs ptxas's code
    runs, status, error, code = check_ptx(gpu_ptx, [job], seeds=args.seeds, first_seed=args.seed, arch=arch,
                                          trace=not args.no_trace, capacity=args.trace_capacity, window=window,
                                          report=args.report, command=command_line(["run", *argv]),
                                          gpu_info=gpu.info.as_dict(), ptxas=args.ptxas)
    for r in runs:
        sys.stdout.write(f"{r.job.label}: {len(r.seeds)} seeds, {r.mismatched} mismatches, {r.sites} traced "
                         f"register sites, {r.wall_s:.1f} s\n")
        for m in r.records[:5]:
            sys.stdout.write(f"  {m}\n")
    if args.report:
        sys.stdout.write(f"report: {args.report} ({status})\n")
    if error:
        sys.stderr.write(error.splitlines()[0] + "\n")
    return code
