"""The ``warpsim`` command line: one subcommand per tool (``explain``, ``run``, ``draw``, ``debug``).

A subcommand is a ``(help, add_arguments(parser), run(args) -> int)`` entry of :data:`COMMANDS`.
User errors (a bad config file, an unknown thread, ...) are :class:`~warpsim.errors.WarpsimError`
or ``ValueError``: they print one line, ``warpsim <command>: error: <message>``, and exit with
status 2, without a traceback.
"""

import argparse
import json
import sys
import time

from warpsim.errors import WarpsimError

__all__ = ["main", "COMMANDS", "build_parser"]


def _explain_arguments(parser):
    parser.add_argument("--config", default="seed",
                        help="'seed' (built in: Q, K, V^T of the seed; 'seed-bf16' for bf16) or a PATH.py "
                             "defining tiled_mma and fragments (see README)")
    parser.add_argument("--threads", default="0", help="threads to explain, e.g. 0,5 or 0-3 (default 0)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _explain_run(args):
    from warpsim.explain import explain, format_text   # imported when used: keeps start-up light
    report = explain(args.config, args.threads)
    if args.json:
        json.dump(report, sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(report))
    return 0


def _run_arguments(parser):
    from warpsim.program.command import add_arguments
    add_arguments(parser)


def _run_run(args):
    from warpsim.program.command import run_command   # imported when used: keeps start-up light
    return run_command(args, start=_START)


_START = time.perf_counter()

def _draw_arguments(parser):
    from warpsim.draw.command import add_arguments
    add_arguments(parser)


def _draw_run(args):
    from warpsim.draw.command import run
    return run(args)


def _debug_arguments(parser):
    from warpsim.debug.command import add_arguments
    add_arguments(parser)


def _debug_run(args):
    from warpsim.debug.command import run
    return run(args)


COMMANDS = {
    "explain": ("which shared-memory element lands in which register slot, through which view",
                _explain_arguments, _explain_run),
    "run": ("run a program file on the simulated CTA: a summary, or dumps of per-thread tensors "
            "(a .cu, .ptx or CuTe DSL file: `warpsim run K.cu --kernel NAME ...`, see warpsim.ptx.command)",
            _run_arguments, _run_run),
    "draw": ("pictures (SVG/PNG): a tiled MMA's or copy's thread/value layout, a shared tensor's bank map, "
             "a warp's registers",
             _draw_arguments, _draw_run),
    "debug": ("step through a program file on the simulated CTA: registers, fragments, data flow, banks",
              _debug_arguments, _debug_run),
}


def build_parser():
    parser = argparse.ArgumentParser(prog="warpsim", description="A bit-accurate warp simulator for "
                                     "tensor-core programs written with CuTe's concepts.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (help_text, add_arguments, _run) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def _ptx_command():
    from warpsim.ptx import command      # imported when used: keeps start-up light
    return command


def main(argv=None):
    """Run the command line; returns the exit status (2 for user errors)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if argv[:1] == ["run"] and _ptx_command().routes_here(argv[1:]):     # a .cu / .ptx / CuTe DSL file
        add_arguments, run = _ptx_command().add_arguments, _ptx_command().run
        ptx_parser = argparse.ArgumentParser(prog="warpsim run", description="run a kernel of a .cu, .ptx or "
                                             "CuTe DSL file on the simulated CTAs")
        add_arguments(ptx_parser)
        args = ptx_parser.parse_args(argv[1:])
        args.command = "run"
    else:
        args = parser.parse_args(argv)
        _help, _add, run = COMMANDS[args.command]
    try:
        return run(args)
    except (WarpsimError, ValueError, OSError) as e:
        sys.stderr.write(f"warpsim {args.command}: error: {e}\n")
        return 2
    except BrokenPipeError:
        return 0
