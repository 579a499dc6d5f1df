"""``warpsim run``: run a program file on the simulated CTA, print a summary or dump per-thread tensors.

``warpsim run PROGRAM [--param k=v ...] [--input name=FILE.npy ...] [--seed S] [--dump a,b --out DIR]
[--arch sm80|sm90] [--trace vector|thread] [--strict] [--sanitize[=TOOLS]]``

``--sanitize`` runs the program's kernel under the sanitizer instead (as ``warpsim sanitize PROGRAM.py``).

Without ``--dump`` it prints a summary: the CTA, the warp instructions executed per kind, the
outputs checked bit for bit against the program's reference (for the examples: the arithmetic model
applied element by element in k-block order), and the time taken. With ``--dump`` it writes
``DIR/NAME.npy`` per named per-thread tensor: ``(threads, slots)`` raw bits at program exit, in CuTe's
storage order, ``uint16`` for 16-bit elements and ``uint32`` for 32-bit ones (each file written whole or
not at all), and still checks the outputs against the reference (the summary's ``check`` lines).

Exit status: 0; 1 when an output differs from the reference; 2 for a user error (one line, no
traceback; see :mod:`warpsim.commands`).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from warpsim.commands.program_args import (add_program_arguments, dump_names, load_program_args, make_out_dir,
                                           reporting_warnings, run_options)
from warpsim.errors import ProgramError
from warpsim.files import write_atomic

__all__ = ["add_arguments", "run", "format_summary", "format_checks", "compare_outputs", "check_reference"]


def add_arguments(parser):
    add_program_arguments(parser)
    parser.add_argument("--dump", default=None, metavar="NAME,...",
                        help="write these per-thread tensors to --out DIR as NAME.npy instead of the summary")
    parser.add_argument("--out", default=None, metavar="DIR", help="directory for --dump")
    parser.add_argument("--sanitize", nargs="?", const="all", default=None, metavar="TOOLS",
                        help="run the sanitizer instead (warpsim sanitize PROGRAM.py): race,sync,init,mem or all "
                             "(the default); its report, exit 1 when it finds anything")


def compare_outputs(outputs, expected):
    """``[(name, equal_count, total, first_mismatch)]`` with ``first_mismatch`` ``(index, want, got)`` or None.

    ``expected[name]`` must have the output's shape (a reshape could hide a transposed reference) and
    hold integers (raw bits); ``ValueError`` names the output otherwise.
    """
    rows = []
    for name, want in expected.items():
        got = outputs[name]
        want = np.asarray(want)
        if want.shape != got.shape:
            raise ValueError(f"the reference's {name!r} has shape {want.shape}; the output has {got.shape}")
        if want.dtype.kind not in "ui":
            raise ValueError(f"the reference's {name!r} holds {want.dtype}; expected raw bits "
                             f"(unsigned integers, as the output's {got.dtype})")
        want = want.astype(got.dtype)
        equal = got == want
        first = None
        if not equal.all():
            index = tuple(int(i) for i in np.argwhere(~equal)[0])
            first = (index, int(want[index]), int(got[index]))
        rows.append((name, int(equal.sum()), int(equal.size), first))
    return rows


def check_reference(program, result):
    """The rows of :func:`compare_outputs` against ``program.reference``, or None without one.

    The reference must return ``{output name: raw bits}``; ``ProgramError``/``ValueError`` otherwise.
    """
    if program.reference is None:
        return None
    expected = program.reference(result.params, result.inputs, result.arch)
    if not isinstance(expected, dict):
        raise ProgramError(f"program {program.name}: its reference must return {{output name: raw bits}}, "
                           f"got {type(expected).__name__}")
    unknown = [n for n in expected if n not in result.outputs]
    if unknown:
        raise ProgramError(f"program {program.name}: its reference names {unknown[0]!r}, "
                           f"which is not an output ({', '.join(result.outputs)})")
    try:
        return compare_outputs(result.outputs, expected)
    except ValueError as e:
        raise ProgramError(f"program {program.name}: {e}") from None


def format_checks(trace, checks):
    """The summary's lines about the reference check."""
    if checks is None:
        return ["check: the program gives no reference to check its outputs against"]
    lines = []
    for name, equal, size, first in checks:
        b = next(b for b in trace.buffers if b.name == name)
        shape = "x".join(str(e) for e in b.shape)
        verdict = "bit-identical" if first is None else "MISMATCH"
        line = (f"check {name} ({shape} {b.dtype}) against the reference (arithmetic model): "
                f"{equal}/{size} elements equal: {verdict}")
        if first is not None:
            index, want, got = first
            line += f"; first at {list(index)}: expected {want:#x}, got {got:#x}"
        lines.append(line)
    return lines


def format_summary(path, result, checks, wall_seconds):
    """The summary text of a run (see the module docstring)."""
    trace, stats = result.trace, result.stats
    params = ", ".join(f"{k}={v}" for k, v in result.params.items())
    lines = [f"{path}: {trace.program.name}" + (f" ({params})" if params else "") +
             f", arch {result.arch}, trace {trace.mode}",
             f"CTA: {trace.warps} warps ({trace.threads} threads), {trace.regs_per_thread} registers per thread, "
             f"{trace.smem_bytes} bytes of shared memory",
             "warp instructions executed:"]
    total = 0
    for ptx, count in stats.instructions.items():
        lines.append(f"  {count:7d}  {ptx}")
        total += count
    lines.append(f"  {total:7d}  total")
    lines += format_checks(trace, checks)
    trace_ms = f"{stats.trace_seconds * 1e3:.1f} ms" if stats.trace_seconds else "cached"
    lines.append(f"time: trace {trace_ms}, execute {stats.execute_seconds * 1e3:.2f} ms, "
                 f"total {wall_seconds:.2f} s (wall, this command)")
    return "\n".join(lines) + "\n"


def _dump(result, wanted, out):
    """Write ``out/NAME.npy`` for each wanted per-thread tensor, each file whole or not at all."""
    unknown = [n for n in wanted if n not in result.tensors]
    if unknown:
        raise ValueError(f"--dump: unknown per-thread tensor {unknown[0]!r} "
                         f"(valid: {', '.join(sorted(result.tensors)) or 'none'})")
    make_out_dir(out)
    lines = []
    for name in wanted:
        array = result.tensors[name]
        path = os.path.join(out, f"{name}.npy")
        write_atomic(path, lambda f: np.save(f, array))
        lines.append(f"wrote {path}: {array.shape} {array.dtype.name}")
    return lines


def run(args, start=None):
    """Run ``warpsim run`` with parsed ``args``; returns the exit status (raises user errors).
    ``start``: when the command started (default: when the command line did), for the summary's wall time."""
    from warpsim.commands import START
    from warpsim.program.run import run_program
    start = START if start is None else start
    if args.sanitize is not None:
        if args.dump is not None:
            raise ValueError("--sanitize: not with --dump")
        from warpsim.commands import sanitize
        args.tool, args.json, args.schedules = args.sanitize, None, 0
        return sanitize.run_program(args)
    if args.dump is not None and not args.out:
        raise ValueError("--dump needs --out DIR")
    if args.out is not None and args.dump is None:
        raise ValueError(f"--out {args.out}: needs --dump NAME,... (the summary goes to stdout)")
    wanted = dump_names(args.dump) if args.dump is not None else None
    program, params, inputs = load_program_args(args)
    with reporting_warnings("run"):
        result = run_program(program, params, inputs, **run_options(args))
    checks = check_reference(program, result)
    if wanted is not None:
        lines = _dump(result, wanted, args.out) + format_checks(result.trace, checks)
        sys.stdout.write("\n".join(lines) + "\n")
    else:
        sys.stdout.write(format_summary(args.program, result, checks, time.perf_counter() - start))
    return 1 if checks and any(first is not None for *_rest, first in checks) else 0
