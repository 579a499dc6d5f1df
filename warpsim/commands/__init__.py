"""The ``warpsim`` command line: one module per verb (``explain``, ``run``, ``draw``, ``debug``, ``check``,
``sanitize``).

Each verb is a module ``warpsim.commands.<verb>`` with ``add_arguments(parser)`` and ``run(args) -> int``,
listed in :data:`COMMANDS` with its help; :mod:`warpsim.commands.program_args` holds what the verbs
that run a program file share (its arguments, loading it, reporting its warnings).

Exit status: 0; 1 when ``warpsim run``'s outputs differ from the reference (or a debugger script's
command failed, or ``warpsim check`` / ``run --strict`` found type-provenance mismatches, or ``warpsim sanitize`` /
``run --sanitize`` found something); 2 for an error of the user's: one line ``warpsim <command>: error: <message>`` on
stderr, no traceback. An exception raised by the user's own code (the program file, a ``--config``
file, a reference or params function) prints that code's frames of the traceback, then the one line;
exit 2. Ctrl-C prints ``warpsim <command>: interrupted``, exit 130. Anything else is a bug in warpsim:
its traceback, then ``warpsim <command>: internal error: ...``, exit 3.
"""

import argparse
import importlib
import os
import sys
import time
import traceback

from warpsim.errors import WarpsimError

__all__ = ["main", "COMMANDS", "build_parser", "START", "report_error", "user_files"]

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
    "run": ("run a program file on the simulated CTA: a summary, or dumps of per-thread tensors "
            "(a .cu, .ptx or CuTe DSL file: `warpsim run K.cu --kernel NAME ...`, see warpsim.commands.run_kernel)",
            *_verb("run")),
    "draw": ("pictures (SVG/PNG): a tiled MMA's or copy's thread/value layout, a shared tensor's bank map, "
             "a warp's registers",
             *_verb("draw")),
    "check": ("the type-provenance check of a .cu, .ptx or CuTe DSL kernel: registers produced as one float type "
              "(f16x2, bf16x2, f32) and read as another, with both source lines (see warpsim.commands.check)",
              *_verb("check")),
    "sanitize": ("run a .cu, .ptx or CuTe DSL kernel (or a program file: `warpsim sanitize PROGRAM.py`) under the "
                 "sanitizer: races, barrier and warp-sync errors, uninitialized reads, bad accesses, with both source "
                 "lines (see warpsim.commands.sanitize)",
                 *_verb("sanitize")),
    "debug": ("step through a program file on the simulated CTA: registers, fragments, data flow, banks "
              "(a .cu, .ptx or CuTe DSL file: `warpsim debug K.cu --kernel NAME ...`; one session and one "
              "command language for both, see warpsim.commands.debug)",
              *_verb("debug")),
}


def build_parser():
    parser = argparse.ArgumentParser(prog="warpsim", description="A bit-accurate warp simulator for "
                                     "tensor-core programs written with CuTe's concepts.")
    from warpsim import __version__
    parser.add_argument("--version", action="version", version=f"warpsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    parser.verbs = {}
    for name, (help_text, add_arguments, _run) in COMMANDS.items():
        parser.verbs[name] = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(parser.verbs[name])
    return parser


EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 2, 3, 130


def _routed(verb, description, add_arguments, argv):
    """``argv`` parsed by a parser of its own for ``warpsim VERB`` on the other kind of file, ``.command`` set."""
    parser = argparse.ArgumentParser(prog=f"warpsim {verb}", description=description)
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.command = verb
    return args


def _ptx_route(argv):
    """``(args, run)`` when ``argv`` is ``run`` (:mod:`warpsim.commands.run_kernel`) or ``debug``
    (:mod:`warpsim.commands.debug`) of a .cu, .ptx or CuTe DSL file, or ``sanitize`` of a dialect program
    (the verbs' other kind of file), else ``None``."""
    if argv[:1] == ["sanitize"]:
        from warpsim.commands import sanitize
        if not sanitize.routes_to_program(argv[1:]):
            return None
        return _routed("sanitize", "run a Python CuTe-dialect program's kernel under the sanitizer",
                       sanitize.add_program_arguments, argv[1:]), sanitize.run_program
    if argv[:1] not in (["run"], ["debug"]):
        return None
    from warpsim.commands import run_kernel      # imported when used: keeps start-up light
    from warpsim.commands.program_args import announce_compiling
    from warpsim.frontends.args import routes_here
    if not routes_here(argv[1:]):
        return None
    if argv[0] == "debug":
        from warpsim.commands import debug
        return _routed("debug", "step through a kernel of a .cu, .ptx or CuTe DSL file on the simulated CTAs",
                       debug.add_kernel_arguments, argv[1:]), debug.run_kernel
    args = _routed("run", "run a kernel of a .cu, .ptx or CuTe DSL file on the simulated CTAs",
                   run_kernel.add_arguments, argv[1:])
    announce_compiling("run")
    from warpsim.commands.check import strict
    return args, strict(run_kernel.run)


def main(argv=None):
    """Run the command line; returns the exit status (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    routed = _ptx_route(argv)
    if routed is not None:
        args, run = routed
    else:
        parser = build_parser()
        args, unknown = parser.parse_known_args(argv)
        if unknown:          # named by the verb's own parser: its usage, not the top level's
            verb = parser.verbs[args.command]
            verb = getattr(verb, "verbs", {}).get(getattr(args, "what", None), verb)     # draw's WHAT
            verb.error(f"unrecognized arguments: {' '.join(unknown)}")
        _help, _add, run = COMMANDS[args.command]
    prefix = f"warpsim {args.command}"
    try:
        return run(args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{prefix}: interrupted\n")
        return EXIT_INTERRUPTED
    except (Exception, SystemExit) as e:      # SystemExit: sys.exit() in the user's code
        return report_error(prefix, e, user_files(args))


def user_files(args):
    """The user's own source files among the arguments: the program file, a ``--config`` ``.py``."""
    files = [getattr(args, "program", None), getattr(args, "config", None)]
    return [os.path.abspath(f) for f in files if isinstance(f, str) and f.endswith(".py")]


def report_error(prefix, error, files=()):
    """Write ``error`` to stderr as the module docstring says; returns the exit status."""
    cause = error.__cause__ if isinstance(error, WarpsimError) else error   # a wrapped error of the user's code
    frames = [] if cause is None or isinstance(cause, WarpsimError) else _user_frames(cause, files)
    if frames:
        sys.stderr.write("Traceback (the program's own frames):\n" + "".join(traceback.format_list(frames)))
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    if isinstance(error, SystemExit):
        message = f"{where}the program file exited (sys.exit({error.code!r}))"
    elif isinstance(error, MemoryError):
        message = f"out of memory{': ' + str(error) if str(error) else ''}: is a size too large?"
    elif isinstance(error, WarpsimError) or (isinstance(error, (ValueError, TypeError, OSError)) and not frames):
        message = str(error)
    elif frames:
        message = f"{where}{type(error).__name__}: {error}"
    else:
        traceback.print_exception(type(error), error, error.__traceback__)
        sys.stderr.write(f"{prefix}: internal error (a bug in warpsim; please report it): "
                         f"{type(error).__name__}: {error}\n")
        return EXIT_INTERNAL
    lines = message.strip().splitlines() or [type(error).__name__]
    sys.stderr.write(f"{prefix}: error: {lines[0]}\n")
    return EXIT_USAGE


def _user_frames(error, files):
    """The frames of ``error``'s traceback (or of the error it was raised from) in ``files``."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.abspath(f.filename) in files]
        if frames:
            return frames
        error = error.__cause__ or error.__context__
    return []
