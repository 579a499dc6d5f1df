"""``warpsim run`` for a user's kernel: a ``.cu`` (nvcc), a ``.ptx``, or a CuTe DSL ``.py`` file.

``warpsim run SOURCE --kernel NAME [--grid X,Y,Z] [--block X,Y,Z] [--arg NAME=VALUE ...] [--smem BYTES]
[--arch sm_80|sm_90] [--nvcc-flags "FLAGS"] [--cta I] [--dump NAME,... --out DIR] [--ray [ADDRESS] | --no-ray]
[--strict]``

``--strict`` runs ``warpsim check`` on the kernel first (:mod:`warpsim.commands.check`): with findings, it
prints them and exits 1 without launching.

``--ray`` runs the grid's CTAs as Ray tasks (:mod:`warpsim.ptx.grid`): the buffers are the sequential
launch's, bit for bit, or the command stops with an error naming the CTA and the byte that make the
CTAs depend on each other; ``--no-ray`` (the default) runs them in sequence.

``--arg NAME=VALUE`` gives one kernel parameter, named as in the source (or by position, or by its PTX
name); VALUE is ``FILE.npy`` (a buffer: its dtype and bytes are used as they are), an integer or a
float (a scalar), or ``zeros:DTYPE:SHAPE`` (a zero buffer, e.g. ``zeros:f32:64x64``). Without
``--dump`` it prints the launch and, per buffer, its shape, dtype and a short digest of its bytes;
with ``--dump s,o --out DIR`` it writes ``DIR/s.npy``... (each written to a temporary name, then
renamed). Device ``printf`` text goes to stdout as the kernel runs (not with ``--ray``).

A ``.py`` file is routed here only when it follows the CuTe DSL convention (it assigns a module-level
``WARPSIM``, see :mod:`warpsim.ptx.compile`); any other ``.py`` is a warpsim program, run by
:mod:`warpsim.commands.run` as before.

Exit status: 0; 2 for a user error (one line, no traceback): a missing compiler or DSL, nvcc's errors,
an unknown kernel (the line lists the module's kernels), a bad or missing argument, a fault.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from warpsim.ptx.compile import ARCHS, CUDA_SUFFIXES, is_dsl_source

__all__ = ["routes_here", "add_arguments", "run", "parse_arg_value", "DTYPES"]

DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64, "u8": np.uint8,
          "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32, "i32": np.int32,
          "u64": np.uint64, "i64": np.int64}


def routes_here(argv):
    """Whether ``warpsim run ARGV`` is for this command: its first positional argument is a ``.cu``, a
    ``.ptx`` or a CuTe DSL ``.py`` file."""
    for arg in argv:
        if arg.startswith("-"):
            return False             # options before the file: the program command's usage
        suffix = Path(arg).suffix.lower()
        return suffix == ".ptx" or suffix in CUDA_SUFFIXES or (suffix == ".py" and is_dsl_source(arg))
    return False


def add_arguments(parser):
    parser.add_argument("source", help="a .cu file (compiled by nvcc), a .ptx file, or a CuTe DSL .py file "
                                       "that assigns WARPSIM")
    parser.add_argument("--kernel", required=True, help="the kernel: its name in the source, or its PTX entry name")
    parser.add_argument("--grid", default="1", help="grid dimensions X[,Y[,Z]] (default 1)")
    parser.add_argument("--block", default="128", help="block dimensions X[,Y[,Z]] (default 128)")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a kernel parameter: NAME=FILE.npy, NAME=1024, NAME=0.5, NAME=zeros:f32:64x64 "
                             "(repeatable; NAME as in the source, or the position)")
    parser.add_argument("--smem", type=int, default=0, help="dynamic shared memory in bytes (default 0)")
    parser.add_argument("--arch", default="sm_90", help=f"compile target and tensor-core model: {', '.join(ARCHS)} "
                                                        "(default sm_90)")
    parser.add_argument("--nvcc-flags", default="", metavar="FLAGS", help="more nvcc flags, written with = as they start with a dash: --nvcc-flags=\"-DTILE=64 -O2\"")
    parser.add_argument("--ptxas", default="auto", metavar="PATH|auto|none",
                        help="who decides which mul+add pairs become one FMA, as on the GPU: a ptxas path; auto (the "
                             "one beside nvcc, else the nvidia-cuda-nvcc wheel's; default); none (PTX without contraction)")
    parser.add_argument("--cubin", default=None, metavar="FILE",
                        help="the cubin the GPU runs: the contraction is checked against its SASS")
    parser.add_argument("--cta", default=None, help="run only this CTA: an index, or X,Y,Z")
    parser.add_argument("--dump", default=None, metavar="NAME,...", help="write these buffers to --out DIR as NAME.npy")
    parser.add_argument("--out", default=None, metavar="DIR", help="directory for --dump")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="run the grid's CTAs in parallel on a Ray cluster (ADDRESS, or the one Ray finds, else "
                             "a new local one); CTAs that depend on each other are refused (see --no-ray)")
    parser.add_argument("--strict", action="store_true",
                        help="run the type-provenance check first (warpsim check) and do not launch a kernel "
                             "with findings (exit 1)")
    parser.add_argument("--no-ray", action="store_true",
                        help="run the CTAs in sequence in this process (the default; the way out for dependent CTAs)")


def parse_arg_value(text, what):
    """A ``--arg`` value: an array from ``.npy``, ``zeros:DTYPE:SHAPE``, or an int / float scalar.

    parse_arg_value("12", "--arg n") == 12
    parse_arg_value("zeros:f32:2x3", "--arg c").shape == (2, 3)
    """
    if text.startswith("zeros:"):
        parts = text.split(":")
        if len(parts) != 3 or parts[1] not in DTYPES:
            raise ValueError(f"{what}={text}: expected zeros:DTYPE:SHAPE with DTYPE one of {', '.join(DTYPES)}")
        try:
            shape = tuple(int(v) for v in parts[2].split("x"))
        except ValueError:
            raise ValueError(f"{what}={text}: SHAPE is integers joined by x, e.g. 64x64") from None
        return np.zeros(shape, DTYPES[parts[1]])
    if text.endswith(".npy"):
        try:
            return np.load(text, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ValueError(f"{what}={text}: cannot read: {e}") from None
    for convert in (lambda t: int(t, 0), float):
        try:
            return convert(text)
        except ValueError:
            pass
    raise ValueError(f"{what}={text}: expected FILE.npy, an integer, a float or zeros:DTYPE:SHAPE")


def _args(pairs):
    args = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--arg {pair}: expected NAME=VALUE")
        args[name] = parse_arg_value(value, f"--arg {name}")
    return args


def _digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def _save_atomically(folder, name, array):
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".npy")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, array, allow_pickle=False)
        os.replace(tmp, folder / f"{name}.npy")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class _GridResult:
    """What ``launch`` returns, for a grid run on Ray: ``buffers`` and ``stats``."""

    buffers: dict
    stats: dict


def _launch_on_ray(kernel, grid, block, values, args):
    """The launch, its CTAs as Ray tasks (:mod:`warpsim.ptx.grid`); Ray is imported here only."""
    try:
        import ray
    except ImportError as e:
        raise ValueError(f"--ray: Ray is not installed ({e}); pip install 'warpsim[ray]'") from None
    from warpsim.ptx.grid import launch_grid
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=args.ray or None, log_to_driver=False, logging_level="ERROR")
        except Exception as e:
            raise ValueError(f"--ray: cannot connect to a Ray cluster at {args.ray or 'the local machine'}: "
                             f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    try:
        run, buffers = launch_grid(kernel.module.text, kernel.name, grid, block, kernel.core_args(values), ray=True,
                                   smem=args.smem, arch=kernel.arch.replace("_", ""))
    finally:
        if started:
            ray.shutdown()
    return _GridResult(buffers, {"ctas": run.ctas, "ray_tasks": run.tasks, "wall_s": round(run.wall_s, 3)})


def run(args):
    """Compile, launch, report; returns the exit status (errors are raised for the CLI to print)."""
    from warpsim.ptx.front import open_kernel, parse_dim3
    if args.dump and not args.out:
        raise ValueError("--dump needs --out DIR")
    values = _args(args.arg)                              # bad values fail before compiling
    grid, block = parse_dim3(args.grid, "--grid"), parse_dim3(args.block, "--block")
    cta = None
    if args.cta is not None:
        cta = parse_dim3(args.cta, "--cta") if "," in args.cta else int(args.cta)
    if args.ray is not None and (args.no_ray or cta is not None):
        raise ValueError("--ray: not with " + ("--no-ray" if args.no_ray else "--cta (one CTA runs in this process)"))
    kernel = open_kernel(args.source, args.kernel, arch=args.arch, nvcc_flags=tuple(args.nvcc_flags.split()),
                         ptxas=args.ptxas, cubin=args.cubin)
    if args.ray is not None:
        kernel.module.check_shared(kernel.name, args.smem, kernel.arch.replace("_", ""))   # before any Ray task
        result = _launch_on_ray(kernel, grid, block, values, args)
    else:
        result = kernel.launch(grid=grid, block=block, args=values, smem=args.smem, cta=cta)
    buffers = kernel.buffers(result)
    if args.dump:
        wanted = [n.strip() for n in args.dump.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in buffers]
        if unknown:
            raise ValueError(f"--dump {','.join(unknown)}: not a buffer of {kernel.name}; "
                             f"its buffers: {', '.join(buffers) or 'none'}")
        for name in wanted:
            _save_atomically(Path(args.out), name, buffers[name])
        sys.stdout.write(f"wrote {', '.join(f'{args.out}/{n}.npy' for n in wanted)}\n")
        return 0
    sys.stdout.write(f"{kernel.name}: grid {grid}, block {block}, smem {args.smem} B, {kernel.arch}"
                     f"{'' if cta is None else f', CTA {cta} only'}\n")
    sys.stdout.write(f"  {kernel.module.contraction.describe()}\n")
    stats = getattr(result, "stats", None) or {}
    for key, value in (stats.items() if isinstance(stats, dict) else []):
        sys.stdout.write(f"  {key}: {value}\n")
    for name, array in buffers.items():
        sys.stdout.write(f"  {name}: {array.shape} {array.dtype} sha256:{_digest(array)}\n")
    return 0
