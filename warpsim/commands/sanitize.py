"""``warpsim sanitize``: run a kernel under the sanitizer (:mod:`warpsim.sanitize`): races, sync, init, memory.

``warpsim sanitize SOURCE --kernel NAME [--tool race|sync|init|mem|all[,...]] [--uninit NAME ...] [--json FILE]
[--schedules N]``
and the kernel options of ``warpsim run`` (``--grid --block --arg --smem --arch --cta --max-steps ...``, see
:mod:`warpsim.commands.run_kernel`). ``warpsim run K.cu --sanitize[=TOOLS] ...`` is the same.

``warpsim sanitize PROGRAM.py [--param k=v ...] [--input name=FILE.npy ...] [--seed S] [--arch ...] [--trace ...]
[--tool ...] [--json FILE]`` sanitizes a Python CuTe-dialect program (no ``--kernel``): the PTX kernel its trace
lowers to (:mod:`warpsim.program.lower`) runs under the same checks, and the findings name the program's lines (the
kernel's ``.loc``). Shared addresses are the kernel's: the program's shared address ``a`` is ``0x400 + a`` there.

It prints one block per finding, worded like compute-sanitizer's (``========= Error: Race reported between Write
access ... and Read access ...``), then a summary line; ``--json FILE`` writes the findings as JSON too (whole or
not at all). ``--uninit NAME``: the kernel must write buffer NAME (a parameter, as the source names it) before it
reads it (an output-only buffer); a read of a byte not yet written is an ``init`` finding.

Exit status: 0 when nothing is found; 1 when something is; 2 for a usage error (one line, see :mod:`warpsim.commands`).
"""

from __future__ import annotations

import argparse
import sys

from warpsim.commands.kernel_args import add_kernel_arguments
from warpsim.files import write_atomic
from warpsim.sanitize import TOOLS, parse_tools, sanitize_launch

__all__ = ["add_arguments", "add_program_arguments", "run", "run_program", "routes_to_program"]


def _report_arguments(parser):
    parser.add_argument("--tool", default="all", metavar="TOOLS",
                        help=f"what to check: {', '.join(TOOLS)} or all (default), comma-separated")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the report as JSON to FILE")
    parser.add_argument("--schedules", type=_schedules, default=0, metavar="N",
                        help="also run the launch with the warps taking turns in N other orders (the reverse, then "
                             "random ones from --seed) and report buffers whose results differ (default 0)")


def _schedules(text):
    """``--schedules``: a count (:func:`~warpsim.commands.program_args.count_option`) of at most 1000 runs."""
    from warpsim.commands.program_args import count_option
    value = count_option(text)
    if value > 1000:
        raise argparse.ArgumentTypeError(f"at most 1000 other schedules, got {value}")
    return value


def add_arguments(parser):
    """The arguments of ``warpsim sanitize SOURCE --kernel NAME`` (a .cu, .ptx or CuTe DSL kernel)."""
    add_kernel_arguments(parser)
    _report_arguments(parser)
    parser.add_argument("--uninit", action="append", default=[], metavar="NAME",
                        help="a buffer the kernel must write before it reads it (output-only); once each")


def add_program_arguments(parser):
    """The arguments of ``warpsim sanitize PROGRAM.py`` (a Python CuTe-dialect program): ``warpsim run``'s."""
    from warpsim.commands.program_args import add_program_arguments as program_arguments
    program_arguments(parser)
    _report_arguments(parser)


def routes_to_program(argv) -> bool:
    """Whether ``warpsim sanitize ARGV`` is for a dialect program: no ``--kernel``, and the first ``.py`` argument is
    not a CuTe DSL source."""
    if any(a == "--kernel" or a.startswith("--kernel=") for a in argv):
        return False
    from warpsim.frontends.args import routes_here
    first = next((a for a in argv if a.endswith(".py") and not a.startswith("-")), None)
    return first is not None and first.endswith(".py") and not routes_here([first])


def _finish(report, args):
    sys.stdout.write(report.text())
    if args.json:
        write_atomic(args.json, lambda f: f.write(report.dumps().encode()))
    return 1 if report.findings else 0


def run_program(args):
    """Trace the program, lower it, launch its kernel under the sanitizer, report; the exit status."""
    from warpsim.commands.program_args import load_program_args, reporting_warnings
    from warpsim.program.lower import KERNEL
    from warpsim.program.run import prepare
    tools = parse_tools(args.tool)
    program, params, inputs = load_program_args(args)
    with reporting_warnings("sanitize"):
        trace, machine, _inputs, _t = prepare(program, params, inputs, seed=args.seed, mode=args.trace,
                                              strict=args.strict, arch=args.arch, max_smem_bytes=args.max_smem_bytes)
        trace.check_addresses(smem_bytes=machine.smem.size, gmem_bytes=machine.gmem.size)
        low = trace.lowered
        chosen = ", ".join(f"{k}={v}" for k, v in trace.params.items()) or "no params"
        report = sanitize_launch(trace.kernel, KERNEL, (1, 1, 1), (low.threads, 1, 1),
                                 {"gmem": machine.gmem, "table": low.table}, low.smem_bytes, args.arch,
                                 tools=tools, display=f"{program.name} ({chosen})", schedules=args.schedules,
                                 seed=args.seed,
                                 regions={"gmem": [(b.name, b.base, b.base + b.nbytes) for b in trace.buffers]})
    return _finish(report, args)


def run(args):
    """Compile, launch under the sanitizer, report; the exit status (errors are raised for the CLI to print)."""
    from warpsim.frontends.args import arg_values, parse_cta
    from warpsim.commands.program_args import note
    from warpsim.frontends.kernel import open_kernel, parse_dim3
    tools = parse_tools(args.tool)
    values, labels = arg_values(args.arg, args.seed)
    grid, block = parse_dim3(args.grid, "--grid"), parse_dim3(args.block, "--block")
    cta = None if args.cta is None else parse_cta(args.cta, grid)
    kernel = open_kernel(args.source, args.kernel, arch=args.arch, nvcc_flags=tuple(args.nvcc_flags.split()),
                         ptxas=args.ptxas, cubin=args.cubin, progress=note("sanitize"))
    values = kernel.core_args(values, what=labels)
    uninit = [kernel.param_name(name) for name in args.uninit]
    with kernel.naming_params():
        report = sanitize_launch(kernel.module, kernel.name, grid, block, values, args.smem,
                                 kernel.arch.replace("_", ""), cta, args.max_steps, tools, uninit,
                                 name_params=kernel.name_params, display=f"{args.kernel} ({kernel.name})",
                                 schedules=getattr(args, "schedules", 0), seed=args.seed)
    return _finish(report, args)
