"""``warpsim debug``: step through any front end's kernel on the simulated GPU, in one command language.

``warpsim debug PROGRAM.py [--param k=v ...] [--input name=FILE.npy ...] [--seed S] [--arch sm80|sm90]
[--trace vector|thread] [--strict] [--commands FILE]`` debugs a Python CuTe-dialect program as the PTX
kernel its trace lowers to (the program arguments are ``warpsim run``'s);
``warpsim debug SOURCE --kernel NAME [--grid X,Y,Z] [--block X,Y,Z] [--arg NAME=VALUE ...] [--smem BYTES]
[--arch sm_80|sm_90] [--nvcc-flags "FLAGS"] [--max-steps N] [--commands FILE]`` a kernel of a ``.cu``
(nvcc), a ``.ptx`` or a CuTe DSL ``.py`` file (the kernel arguments are ``warpsim run``'s,
:mod:`warpsim.commands.run_kernel`). Both go through one :class:`~warpsim.debug.session.Session` and one
command language (:mod:`warpsim.debug.repl`), read from ``--commands FILE`` (``-``: stdin), else from the
terminal (readline history, colour, Enter repeats) or a pipe. Exit status: 0; 1 when a command of a
script failed; 2 for a user error in the arguments, the program or the kernel (one line, no traceback).
"""

from __future__ import annotations

import sys

from warpsim.commands.program_args import (add_program_arguments, load_program_args, reporting_warnings,
                                           run_options)
from warpsim.frontends.args import arg_values
from warpsim.frontends.compiled import ARCHS
from warpsim.ptx.launch import DEFAULT_MAX_STEPS

__all__ = ["add_arguments", "add_kernel_arguments", "run", "run_kernel"]

_COMMANDS_HELP = "run the debugger commands in FILE (one per line, # comments; - for stdin) and exit"


def add_arguments(parser):
    """The arguments of ``warpsim debug PROGRAM.py`` (a Python CuTe-dialect program)."""
    add_program_arguments(parser)
    parser.add_argument("--commands", metavar="FILE", help=_COMMANDS_HELP)


def add_kernel_arguments(parser):
    """The arguments of ``warpsim debug SOURCE --kernel NAME`` (a .cu, .ptx or CuTe DSL file)."""
    parser.add_argument("source", help="a .cu file (compiled by nvcc), a .ptx file, or a CuTe DSL .py file "
                                       "that assigns WARPSIM")
    parser.add_argument("--kernel", required=True, help="the kernel: its name in the source, or its PTX entry name")
    parser.add_argument("--grid", default="1", help="grid dimensions X[,Y[,Z]] (default 1)")
    parser.add_argument("--block", default="128", help="block dimensions X[,Y[,Z]] (default 128)")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a kernel parameter, once each: NAME=FILE.npy, NAME=raw:FILE, NAME=1024, NAME=0.5, "
                             "NAME=zeros:f32:64x64 (as warpsim run)")
    parser.add_argument("--smem", type=int, default=0, help="dynamic shared memory in bytes (default 0)")
    parser.add_argument("--arch", default="sm_90", help=f"compile target and tensor-core model: {', '.join(ARCHS)}")
    parser.add_argument("--nvcc-flags", default="", metavar="FLAGS", help="more nvcc flags, written with =: "
                                                                          "--nvcc-flags=\"-DTILE=64\"")
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS,
                        help=f"warp instructions allowed for the launch (default {DEFAULT_MAX_STEPS})")
    parser.add_argument("--commands", metavar="FILE", help=_COMMANDS_HELP)


def _script(args):
    if args.commands == "-":
        return sys.stdin.read().splitlines()
    if args.commands is not None:
        try:
            with open(args.commands, encoding="utf-8") as f:
                return f.read().splitlines()
        except OSError as e:
            raise ValueError(f"--commands {args.commands}: {e.strerror or e}") from None
    return None


def _drive(session, script, header):
    from warpsim.debug.repl import Repl, use_color
    repl = Repl(session, sys.stdout, use_color(sys.stdout))
    repl.write(f"{header}. `help` lists the commands.")
    repl.execute("where")
    if script is not None:
        return repl.run_script(script)
    if sys.stdin.isatty():
        return repl.interact()
    return repl.run_script(sys.stdin)


def run(args):
    """Run ``warpsim debug`` on a program file with parsed ``args``; returns the exit status (raises user errors)."""
    from warpsim.debug.session import Session
    script = _script(args)
    program, params, inputs = load_program_args(args)
    with reporting_warnings("debug"):
        session = Session.program(program, params, inputs, **run_options(args))
    trace = session.traced.trace
    params = ", ".join(f"{k}={v}" for k, v in trace.params.items())
    header = (f"warpsim debug: {args.program}: {program.name}" + (f" ({params})" if params else "") +
              f", arch {args.arch}: {len(trace.stream)} warp instructions traced, lowered to "
              f"{session.decoded.code.shape[0]} PTX instructions; {trace.warps} warps, "
              f"{trace.regs_per_thread} registers per thread (%r0..%r{trace.regs_per_thread - 1})")
    return _drive(session, script, header)


def run_kernel(args):
    """Run ``warpsim debug`` on a kernel with parsed ``args``; returns the exit status (raises user errors)."""
    from warpsim.debug.session import Session
    from warpsim.frontends.kernel import parse_dim3
    script = _script(args)
    values, _labels = arg_values(args.arg)
    grid, block = parse_dim3(args.grid, "--grid"), parse_dim3(args.block, "--block")
    session = Session.open(args.source, args.kernel, grid, block, values, smem=args.smem, arch=args.arch,
                           nvcc_flags=args.nvcc_flags.split(), max_steps=args.max_steps)
    kernel = session.front
    d = session.decoded
    header = (f"warpsim debug: {args.source}: kernel {kernel.name}, grid {grid}, block {block}, {kernel.arch}: "
              f"{d.code.shape[0]} instructions, {len(d.reg_names)} registers per thread, {session.warps} warps")
    return _drive(session, script, header)
