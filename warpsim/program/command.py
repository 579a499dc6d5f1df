"""``warpsim run``: run a program file on the simulated CTA, print a summary or dump per-thread tensors.

``warpsim run PROGRAM [--param k=v ...] [--input name=FILE.npy ...] [--seed S] [--dump a,b --out DIR]
[--arch sm80|sm90] [--trace vector|thread] [--strict]``

Without ``--dump`` it prints a summary: the CTA, the warp instructions executed per kind, the
outputs checked bit for bit against the program's reference (for the examples: the arithmetic model
applied element by element in k-block order), and the time taken. With ``--dump`` it writes
``DIR/NAME.npy`` per named per-thread tensor: ``(threads, slots)`` raw bits at program exit, in CuTe's
storage order, ``uint16`` for 16-bit elements and ``uint32`` for 32-bit ones.

Exit status: 0; 1 when an output differs from the reference; 2 for a user error (one line, no traceback).
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np

from warpsim.errors import ProgramWarning, WarpsimError

__all__ = ["add_arguments", "add_program_arguments", "program_params", "program_inputs", "run_command",
           "format_summary", "compare_outputs", "parse_pairs", "load_inputs"]


def add_program_arguments(parser):
    """The arguments that choose a program run, shared by ``warpsim run`` and ``warpsim debug``:
    ``PROGRAM``, ``--param``, ``--input``, ``--seed``, ``--arch``, ``--trace``, ``--strict``."""
    parser.add_argument("program", help="a .py file that defines `program = warpsim.Program(...)`")
    parser.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="a program param, e.g. --param dtype=bf16 (repeatable)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input buffer as raw bits (uint16 for 16-bit types), e.g. --input q=q.npy")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--arch", choices=("sm80", "sm90"), default="sm90",
                        help="tensor-core arithmetic model (default sm90)")
    parser.add_argument("--trace", choices=("vector", "thread"), default="vector",
                        help="tracing mode: a warp at once (default) or thread by thread")
    parser.add_argument("--strict", action="store_true",
                        help="a read of a register never written is an error, not a warning")


def add_arguments(parser):
    add_program_arguments(parser)
    parser.add_argument("--dump", default=None, metavar="NAME,...",
                        help="write these per-thread tensors to --out DIR as NAME.npy instead of the summary")
    parser.add_argument("--out", default=None, metavar="DIR", help="directory for --dump")


def program_params(args):
    """``{name: value string}`` of the ``--param K=V`` arguments; ``ValueError`` for a malformed one."""
    return parse_pairs("--param", args.param)


def program_inputs(args):
    """``{name: array}`` of the ``--input NAME=FILE.npy`` arguments; ``ValueError`` for an unreadable file."""
    return load_inputs(args.input)


def parse_pairs(option, items):
    """``{key: value}`` from ``["key=value", ...]`` (``--param``, ``--input``); ``ValueError`` names a bad item.

    >>> parse_pairs("--param", ["dtype=bf16", "product=pv"])
    {'dtype': 'bf16', 'product': 'pv'}
    """
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{option} {item!r}: expected NAME=VALUE")
        out[key] = value
    return out


def load_inputs(items):
    """``{name: array}`` from ``--input NAME=FILE.npy`` items; ``ValueError`` for a file that is not a .npy array."""
    inputs = {}
    for name, path in parse_pairs("--input", items).items():
        try:
            inputs[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ValueError(f"--input {name}={path}: cannot read a .npy array ({e})") from None
    return inputs


def compare_outputs(outputs, expected):
    """``[(name, equal_count, total, first_mismatch)]`` with ``first_mismatch`` ``(index, want, got)`` or None."""
    rows = []
    for name, want in expected.items():
        got = outputs[name]
        want = np.asarray(want).astype(got.dtype).reshape(got.shape)
        equal = got == want
        first = None
        if not equal.all():
            index = tuple(int(i) for i in np.argwhere(~equal)[0])
            first = (index, int(want[index]), int(got[index]))
        rows.append((name, int(equal.sum()), int(equal.size), first))
    return rows


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
    if checks is None:
        lines.append("check: the program gives no reference to check its outputs against")
    for name, equal, size, first in checks or ():
        b = next(b for b in trace.buffers if b.name == name)
        shape = "x".join(str(e) for e in b.shape)
        verdict = "bit-identical" if first is None else "MISMATCH"
        line = (f"check {name} ({shape} {b.dtype}) against the reference (arithmetic model): "
                f"{equal}/{size} elements equal: {verdict}")
        if first is not None:
            index, want, got = first
            line += f"; first at {list(index)}: expected {want:#x}, got {got:#x}"
        lines.append(line)
    trace_ms = f"{stats.trace_seconds * 1e3:.1f} ms" if stats.trace_seconds else "cached"
    lines.append(f"time: trace {trace_ms}, execute {stats.execute_seconds * 1e3:.2f} ms, "
                 f"total {wall_seconds:.2f} s (wall, this command)")
    return "\n".join(lines) + "\n"


def _dump(result, names, out):
    valid = sorted(result.tensors)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in result.tensors]
    if unknown or not wanted:
        raise ValueError(f"--dump: unknown per-thread tensor {unknown[0] if unknown else names!r} "
                         f"(valid: {', '.join(valid) or 'none'})")
    os.makedirs(out, exist_ok=True)
    lines = []
    for name in wanted:
        array = result.tensors[name]
        path = os.path.join(out, f"{name}.npy")
        np.save(path, array)
        lines.append(f"wrote {path}: {array.shape} {array.dtype.name}")
    return "\n".join(lines) + "\n"


def run_command(args, start=None):
    """Run ``warpsim run`` with parsed ``args``; returns the exit status (raises user errors)."""
    from warpsim.program.program import load_program
    from warpsim.program.run import run_program
    start = time.perf_counter() if start is None else start
    if args.dump is not None and not args.out:
        raise ValueError("--dump needs --out DIR")
    program = load_program(args.program)
    params = program_params(args)
    inputs = program_inputs(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProgramWarning)
        result = run_program(program, params, inputs, seed=args.seed, arch=args.arch, mode=args.trace,
                             strict=args.strict)
    for w in caught:
        if issubclass(w.category, ProgramWarning):
            sys.stderr.write(f"warpsim run: warning: {w.message}\n")
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if args.dump is not None:
        sys.stdout.write(_dump(result, args.dump, args.out))
        return 0
    checks = None
    if program.reference is not None:
        expected = program.reference(result.params, result.inputs, args.arch)
        unknown = [n for n in expected if n not in result.outputs]
        if unknown:
            raise WarpsimError(f"program {program.name}: its reference names {unknown[0]!r}, "
                               f"which is not an output ({', '.join(result.outputs)})")
        checks = compare_outputs(result.outputs, expected)
    sys.stdout.write(format_summary(args.program, result, checks, time.perf_counter() - start))
    return 1 if checks and any(first is not None for *_rest, first in checks) else 0
