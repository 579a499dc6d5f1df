"""What the verbs that run a program file share: its arguments, loading it, reporting its warnings.

``warpsim run``, ``warpsim debug`` and ``warpsim draw regs`` take the same program arguments
(:func:`add_program_arguments`) and load the program the same way (:func:`load_program_args`); what
the program does that is suspicious but defined (:class:`~warpsim.errors.ProgramWarning`) is printed
as ``warpsim <verb>: warning: ...`` lines on stderr (:func:`reporting_warnings`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
import warnings

from warpsim.errors import ProgramWarning
from warpsim.isa.arith import DEFAULT_ARCH, arch_name, arch_option_names
from warpsim.files import dump_names, make_out_dir
from warpsim.program.arguments import load_inputs, parse_pairs

__all__ = ["arch_option", "add_program_arguments", "program_params", "program_inputs", "parse_pairs", "load_inputs",
           "load_program_args", "run_options", "reporting_warnings", "announce_compiling", "CompileProgress", "note",
           "count_option",
           "dump_names",
           "make_out_dir"]


def arch_option(text):
    """``--arch``'s type: the model name of ``sm_80`` / ``sm_90`` (``sm80``, ``sm90`` are taken too)."""
    try:
        return arch_name(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: choose one of {', '.join(arch_option_names())}") from None


def add_program_arguments(parser):
    """The arguments that choose a program run, shared by ``warpsim run``, ``debug`` and ``draw regs``:
    ``PROGRAM``, ``--param``, ``--input``, ``--seed``, ``--arch``, ``--trace``, ``--strict``."""
    parser.add_argument("program", help="a .py file that defines `program = warpsim.Program(...)`")
    parser.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="a program param, e.g. --param dtype=bf16 (repeatable)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input buffer as raw bits (uint16 for 16-bit types), e.g. --input q=q.npy")
    parser.add_argument("--seed", type=count_option, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--arch", type=arch_option, default=DEFAULT_ARCH, metavar="{sm_80,sm_90}",
                        help="tensor-core arithmetic model (default sm_90)")
    parser.add_argument("--trace", choices=("vector", "thread"), default="vector",
                        help="tracing mode: a warp at once (default) or thread by thread")
    parser.add_argument("--strict", action="store_true",
                        help="a read of a register never written is an error, not a warning")
    parser.add_argument("--max-smem-bytes", type=count_option, default=None, metavar="BYTES",
                        help="allow this much shared memory per CTA (default: the arch's, 227 KB on sm90, "
                             "163 KB on sm80)")


def program_params(args):
    """``{name: value string}`` of the ``--param K=V`` arguments; ``ValueError`` for a malformed one."""
    return parse_pairs("--param", args.param)


def program_inputs(args):
    """``{name: array}`` of the ``--input NAME=FILE.npy`` arguments; ``ValueError`` for an unreadable file."""
    return load_inputs(args.input)


def load_program_args(args):
    """``(program, params, inputs)`` of the program arguments: the program file loaded, ``--param`` and
    ``--input`` parsed and read. Raises ``ProgramError``/``ValueError`` naming the file or option."""
    from warpsim.program.program import load_program   # imported when used: keeps start-up light
    program = load_program(args.program)
    return program, program_params(args), program_inputs(args)


def run_options(args):
    """The keyword arguments of ``run_program`` and ``Session`` that the program arguments choose."""
    return {"seed": args.seed, "arch": args.arch, "mode": args.trace, "strict": args.strict,
            "max_smem_bytes": args.max_smem_bytes}


_ANNOUNCE = {"verb": None, "said": False, "listening": False}   # one listener for the process
PROGRESS_SECONDS = 5.0          # a first run's compile reports how far it is every this many seconds


class CompileProgress:
    """What a long first-run compile says while it lasts: ``started(name)`` / ``ended()`` as Numba begins and ends
    compiling a function (nested: the compiled kernel's callees), ``tick()`` (from a timer) every ``interval``
    seconds of one compile writes ``warpsim VERB: still compiling (N s so far; now NAME)``, and the outermost
    ``ended()`` after any such line ``warpsim VERB: compiled in N s``. A first launch's whole compile
    (:mod:`warpsim.ptx.precompile`: helper processes, then the interpreter) is one ``opened(progress)`` /
    ``closed()``: its lines count from its start, say how many of its parts are done (``progress.parts`` of
    ``progress.total``) and what this process waits for between its compiles, and only ``closed()`` says
    ``compiled in``. ``clock`` and ``write`` are injected (tests)."""

    def __init__(self, verb, clock, write, interval=PROGRESS_SECONDS):
        self.verb, self.clock, self.write, self.interval = verb, clock, write, interval
        self.stack, self.began, self.next, self.reported = [], None, None, False
        self.session = None

    def _begin(self):
        self.began = self.clock()
        self.next = self.began + self.interval
        self.reported = False

    def _done(self):
        if self.reported:
            self.write(f"warpsim {self.verb()}: compiled in {self.clock() - self.began:.0f} s\n")
            self.reported = False

    def opened(self, progress):
        if not self.stack:
            self._begin()
        self.session = progress

    def closed(self):
        self.session = None
        if not self.stack:
            self._done()

    def started(self, name):
        if not self.stack and self.session is None:
            self._begin()
        self.stack.append(name)

    def ended(self):
        if self.stack:
            self.stack.pop()
        if not self.stack and self.session is None:
            self._done()

    def tick(self):
        if not (self.stack or self.session is not None) or self.clock() < self.next:
            return
        so_far = f"{self.clock() - self.began:.0f} s so far"
        now = self.stack[-1] if self.stack else None
        if self.session is not None:
            so_far += f"; {self.session.parts} of {self.session.total} parts done"
            helpers = self.session.helpers
            if now is None:
                now = f"waiting for {helpers} helper process{'es' if helpers != 1 else ''}" if helpers else "loading"
            elif helpers:
                now += f", {helpers} helper process{'es' if helpers != 1 else ''} beside it"
        self.write(f"warpsim {self.verb()}: still compiling ({so_far}; now {now})\n")
        self.next = self.clock() + self.interval
        self.reported = True


def _stderr(text):
    sys.stderr.write(text)
    sys.stderr.flush()


def announce_compiling(verb):
    """From now on, the first time Numba compiles a kernel (its cache is empty: a fresh install's first
    run), print one line on stderr naming ``verb``, so a first run's wait is not silence; while a compile lasts,
    a line every :data:`PROGRESS_SECONDS` says how long so far and what it compiles (:class:`CompileProgress`)."""
    _ANNOUNCE["verb"] = verb
    if _ANNOUNCE["listening"]:
        return
    import threading
    import time
    from numba.core import event      # imported when used: explain and draw mma never load Numba

    from warpsim.ptx.precompile import EVENT

    progress = CompileProgress(lambda: _ANNOUNCE["verb"], time.monotonic, _stderr)
    lock = threading.Lock()

    def beat():
        while True:
            time.sleep(1.0)
            with lock:
                progress.tick()

    def say_once():
        if not _ANNOUNCE["said"]:
            _ANNOUNCE["said"] = True
            _stderr(f"warpsim {_ANNOUNCE['verb']}: compiling the simulator's kernels, first run only ...\n")
            threading.Thread(target=beat, name="warpsim-compile-progress", daemon=True).start()

    class Once(event.Listener):
        def on_start(self, ev):
            say_once()
            dispatcher = (ev.data or {}).get("dispatcher")
            with lock:
                progress.started(getattr(getattr(dispatcher, "py_func", None), "__qualname__", "a kernel"))

        def on_end(self, _event):
            with lock:
                progress.ended()

    class FirstLaunch(event.Listener):                    # warpsim.ptx.precompile's whole first-launch compile
        def on_start(self, ev):
            say_once()
            with lock:
                progress.opened(ev.data)

        def on_end(self, _event):
            with lock:
                progress.closed()

    event.register("numba:compile", Once())
    event.register(EVENT, FirstLaunch())
    _ANNOUNCE["listening"] = True


@functools.lru_cache(maxsize=None)
def note(verb):
    """A callable that prints one line ``warpsim <verb>: <line>`` on stderr (a long load's notice): the same one for
    a verb each time, so the loads it is passed to stay cached."""
    def say(line):
        sys.stderr.write(f"warpsim {verb}: {line}\n")
        sys.stderr.flush()
    return say


def count_option(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


@contextlib.contextmanager
def reporting_warnings(verb):
    """Inside, a :class:`~warpsim.errors.ProgramWarning` is collected; on leaving, each is printed as one
    line ``warpsim <verb>: warning: <message>`` on stderr (other warnings are shown as Python shows them).
    When Numba compiles a kernel inside (no cached machine code yet: a first run), one line says so."""
    announce_compiling(verb)
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ProgramWarning)
            yield
    finally:                              # after the block: warnings.showwarning is Python's again
        for w in caught:
            if issubclass(w.category, ProgramWarning):
                sys.stderr.write(f"warpsim {verb}: warning: {w.message}\n")
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
