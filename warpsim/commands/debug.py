"""``warpsim debug``: step through a program file on the simulated CTA.

``warpsim debug PROGRAM [--param k=v ...] [--input name=FILE.npy ...] [--seed S] [--arch sm80|sm90]
[--trace vector|thread] [--strict] [--commands FILE]``

The program arguments are ``warpsim run``'s. Commands come from ``--commands FILE`` (``-``: stdin), else from the
terminal (interactive, with readline history) or from a pipe (:mod:`warpsim.debug.repl` lists them).
Exit status: 0; 1 when a command of a script (``--commands`` or a pipe) failed; 2 for a user error
in the arguments or the program (one line, no traceback).
"""

from __future__ import annotations

import sys

from warpsim.commands.program_args import (add_program_arguments, load_program_args, reporting_warnings,
                                           run_options)

__all__ = ["add_arguments", "run"]


def add_arguments(parser):
    add_program_arguments(parser)
    parser.add_argument("--commands", metavar="FILE",
                        help="run the debugger commands in FILE (one per line, # comments; - for stdin) and exit")


def run(args):
    """Run ``warpsim debug`` with parsed ``args``; returns the exit status (raises user errors)."""
    from warpsim.debug.repl import Repl, use_color
    from warpsim.debug.session import Session
    script = None
    if args.commands == "-":
        script = sys.stdin.read().splitlines()
    elif args.commands is not None:
        try:
            with open(args.commands, encoding="utf-8") as f:
                script = f.read().splitlines()
        except OSError as e:
            raise ValueError(f"--commands {args.commands}: {e.strerror or e}") from None
    program, params, inputs = load_program_args(args)
    with reporting_warnings("debug"):
        session = Session(program, params, inputs, **run_options(args))
    repl = Repl(session, sys.stdout, use_color(sys.stdout))
    params = ", ".join(f"{k}={v}" for k, v in session.params.items())
    trace = session.trace
    repl.write(f"warpsim debug: {args.program}: {program.name}" + (f" ({params})" if params else "") +
               f", arch {args.arch}: {len(session)} warp instructions, {trace.warps} warps, "
               f"{trace.regs_per_thread} registers per thread. `help` lists the commands.")
    repl.execute("where")
    if script is not None:
        return repl.run_script(script)
    if sys.stdin.isatty():
        return repl.interact()
    return repl.run_script(sys.stdin)
