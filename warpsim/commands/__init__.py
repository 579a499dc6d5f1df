"""The ``warpsim`` command line: one module per verb (``explain``, ``run``, ``draw``, ``debug``).

Each verb is a module ``warpsim.commands.<verb>`` with ``add_arguments(parser)`` and ``run(args) -> int``,
listed in :data:`COMMANDS` with its help; :mod:`warpsim.commands.program_args` holds what the verbs
that run a program file share (its arguments, loading it, reporting its warnings).
User errors (a bad config file, an unknown thread, ...) are :class:`~warpsim.errors.WarpsimError`
or ``ValueError``: they print one line, ``warpsim <command>: error: <message>``, and exit with
status 2, without a traceback.
"""

import argparse
import importlib
import sys
import time

from warpsim.errors import WarpsimError

__all__ = ["main", "COMMANDS", "build_parser", "START"]

START = time.perf_counter()    # when the command line started: `warpsim run` reports its wall time from here


def _verb(name):
    """``(add_arguments, run)`` of ``warpsim.commands.<name>``, imported when used: keeps start-up light."""
    def add_arguments(parser):
        return importlib.import_module(f"warpsim.commands.{name}").add_arguments(parser)

    def run(args):
        return importlib.import_module(f"warpsim.commands.{name}").run(args)
    return add_arguments, run


COMMANDS = {
    "explain": ("which shared-memory element lands in which register slot, through which view",
                *_verb("explain")),
    "run": ("run a program file on the simulated CTA: a summary, or dumps of per-thread tensors",
            *_verb("run")),
    "draw": ("pictures (SVG/PNG): a tiled MMA's or copy's thread/value layout, a shared tensor's bank map, "
             "a warp's registers",
             *_verb("draw")),
    "debug": ("step through a program file on the simulated CTA: registers, fragments, data flow, banks",
              *_verb("debug")),
}


def build_parser():
    parser = argparse.ArgumentParser(prog="warpsim", description="A bit-accurate warp simulator for "
                                     "tensor-core programs written with CuTe's concepts.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (help_text, add_arguments, _run) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv=None):
    """Run the command line; returns the exit status (2 for user errors)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _help, _add, run = COMMANDS[args.command]
    try:
        return run(args)
    except (WarpsimError, ValueError, OSError) as e:
        sys.stderr.write(f"warpsim {args.command}: error: {e}\n")
        return 2
    except BrokenPipeError:
        return 0
