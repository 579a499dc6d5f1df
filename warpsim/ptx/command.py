"""``warpsim run`` for a user's kernel: a ``.cu`` (nvcc), a ``.ptx``, or a CuTe DSL ``.py`` file.

``warpsim run SOURCE --kernel NAME [--grid X,Y,Z] [--block X,Y,Z] [--arg NAME=VALUE ...] [--smem BYTES]
[--arch sm_80|sm_90] [--nvcc-flags "FLAGS"] [--cta I|X,Y,Z] [--max-steps N] [--dump NAME,... --out DIR]
[--ray [ADDRESS] | --no-ray] [--strict]``

``--strict`` runs ``warpsim check`` on the kernel first (:mod:`warpsim.commands.check`): with findings, it
prints them and exits 1 without launching.

``--ray`` runs the grid's CTAs as Ray tasks (:mod:`warpsim.ptx.grid`): the buffers are the sequential
launch's, bit for bit, or the command stops with an error naming the CTA and the byte that make the
CTAs depend on each other; ``--no-ray`` (the default) runs them in sequence.

``--kernel NAME`` is the name the source gives the kernel or its PTX entry name, exactly
(:func:`warpsim.ptx.front.find_entry`): a name that is only part of entry names, or that names several (a
template's instances), is an error listing them.

``--arg NAME=VALUE`` gives one kernel parameter once, named as in the source (or by position, or by its PTX
name); VALUE is

- ``FILE.npy``: a buffer of its values (numbers only; a big-endian file is converted), or, for a scalar
  parameter, a one-element array of the parameter's PTX type (``.f32``: float32, ``.u32``: a 4-byte integer);
- ``raw:FILE``: a buffer of the file's bytes as they are (of a ``.npy``, its data in the file's byte order,
  whatever its dtype), as ``uint8``;
- ``zeros:DTYPE:SHAPE``: a zero buffer, e.g. ``zeros:f32:64x64``;
- an integer or a float: a scalar (0 is the null pointer for a pointer parameter; no other number is).

Without ``--dump`` it prints the launch and, per buffer, its shape, dtype and a short digest of its bytes;
with ``--dump s,o --out DIR`` it writes ``DIR/s.npy``... (each written whole or not at all, mode 0666 less the
umask). ``--max-steps N`` stops the launch after N warp instructions (an error). Device ``printf`` text goes to
stdout as the kernel runs (not with ``--ray``). A fault names a parameter as the source does
(``buffer out (_Z4copyPfS_i_param_1)``).

A ``.py`` file is routed here only when it follows the CuTe DSL convention (it assigns a module-level
``WARPSIM``, see :mod:`warpsim.ptx.compile`); any other ``.py`` is a warpsim program, run by
:mod:`warpsim.commands.run` as before.

Exit status: 0; 2 for a user error (one line naming the input, no traceback): a missing compiler or DSL,
nvcc's errors, an unknown kernel (the line lists the module's kernels), a bad, missing or repeated argument, a
fault, a dump that cannot be written.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from warpsim.files import dump_names, load_npy, make_out_dir, write_atomic
from warpsim.ptx.compile import ARCHS, CUDA_SUFFIXES, is_dsl_source
from warpsim.ptx.front import NUMERIC_KINDS
from warpsim.ptx.launch import DEFAULT_MAX_STEPS

__all__ = ["routes_here", "add_arguments", "run", "parse_arg_value", "arg_values", "parse_cta", "DTYPES"]

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
                        help="a kernel parameter, once each (NAME as in the source, or the position): NAME=FILE.npy "
                             "(its values: numbers, a big-endian file converted; for a scalar parameter one element "
                             "of its PTX type), NAME=raw:FILE (the file's bytes as they are, as uint8), NAME=1024, "
                             "NAME=0.5, NAME=zeros:f32:64x64")
    parser.add_argument("--smem", type=int, default=0, help="dynamic shared memory in bytes (default 0)")
    parser.add_argument("--arch", default="sm_90", help=f"compile target and tensor-core model: {', '.join(ARCHS)} "
                                                        "(default sm_90)")
    parser.add_argument("--nvcc-flags", default="", metavar="FLAGS", help="more nvcc flags, written with = as they start with a dash: --nvcc-flags=\"-DTILE=64 -O2\"")
    parser.add_argument("--ptxas", default="auto", metavar="PATH|auto|none",
                        help="who decides which mul+add pairs become one FMA, as on the GPU: a ptxas path; auto (the "
                             "one beside nvcc, else the nvidia-cuda-nvcc wheel's; default); none (PTX without contraction)")
    parser.add_argument("--cubin", default=None, metavar="FILE",
                        help="the cubin the GPU runs: the contraction is checked against its SASS")
    parser.add_argument("--cta", default=None, metavar="I|X,Y,Z", help="run only this CTA: an index, or X,Y,Z (from 0)")
    parser.add_argument("--max-steps", type=_positive, default=DEFAULT_MAX_STEPS, metavar="N",
                        help=f"warp instructions allowed for the launch (default {DEFAULT_MAX_STEPS})")
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


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def parse_arg_value(text, what):
    """A ``--arg`` value: an array from ``FILE.npy`` (numbers, in native byte order) or ``raw:FILE`` (its bytes
    as ``uint8``), ``zeros:DTYPE:SHAPE``, or an int / float scalar; ``ValueError`` starting ``WHAT=TEXT``.

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
            shape = (-1,)
        if any(v < 0 for v in shape):
            raise ValueError(f"{what}={text}: SHAPE is non-negative integers joined by x, e.g. 64x64")
        return np.zeros(shape, DTYPES[parts[1]])
    if text.startswith("raw:"):
        return _raw_bytes(text[len("raw:"):], f"{what}={text}")
    if text.endswith(".npy"):
        array = load_npy(f"{what}={text}", text,
                         objects_hint=f"give numbers, or the bytes as they are: {what}=raw:FILE")
        if array.dtype.kind not in NUMERIC_KINDS:
            raise ValueError(f"{what}={text}: holds {array.dtype.str}, not numbers; save a numeric array, or pass "
                             f"the file's bytes as they are: {what}=raw:{text}")
        return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))
    for convert in (lambda t: int(t, 0), float):
        try:
            return convert(text)
        except ValueError:
            pass
    raise ValueError(f"{what}={text}: expected FILE.npy, raw:FILE, an integer, a float or zeros:DTYPE:SHAPE")


def _raw_bytes(path, what):
    """The bytes of ``raw:FILE`` as a ``uint8`` array: a ``.npy`` file's data in the file's order and byte order
    (its header dropped), any other file whole."""
    try:
        with open(path, "rb") as f:
            is_npy = f.read(6) == b"\x93NUMPY"
    except OSError as e:
        raise ValueError(f"{what}: cannot read: {e.strerror or e}") from None
    if not is_npy:
        return np.fromfile(path, np.uint8)
    array = load_npy(what, path, objects_hint="its bytes are a pickle, not data")
    return np.frombuffer(array.tobytes(order="A"), np.uint8).copy()


def arg_values(pairs):
    """``({name: value}, {name: "--arg NAME=VALUE"})`` of the ``--arg`` items (values by
    :func:`parse_arg_value`; the second dict names each in messages); ``ValueError`` for a malformed item or a
    name given twice."""
    values, labels = {}, {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--arg {pair}: expected NAME=VALUE")
        if name in values:
            raise ValueError(f"--arg {name}: given twice ({labels[name][len('--arg '):]} and {pair})")
        values[name] = parse_arg_value(value, f"--arg {name}")
        labels[name] = f"--arg {pair}"
    return values, labels


def parse_cta(text, grid):
    """``--cta``: a CTA index (``int``, x fastest) or its ``(x, y, z)`` coordinates, from 0, inside ``grid``;
    ``ValueError`` naming ``--cta``.

    parse_cta("3", (4, 1, 1)) == 3
    parse_cta("1,0", (2, 2, 1)) == (1, 0, 0)
    """
    try:
        parts = [int(v) for v in text.split(",")]
    except ValueError:
        parts = []
    if not 1 <= len(parts) <= 3 or any(v < 0 for v in parts):
        raise ValueError(f"--cta {text}: expected a CTA index or X,Y,Z coordinates (integers from 0), e.g. 3 or 1,0,0")
    count = int(np.prod(grid))
    if len(parts) == 1 and "," not in text:
        if parts[0] >= count:
            raise ValueError(f"--cta {text}: outside the grid {grid} (CTAs 0 to {count - 1})")
        return parts[0]
    coords = tuple(parts) + (0,) * (3 - len(parts))
    if any(c >= g for c, g in zip(coords, grid)):
        raise ValueError(f"--cta {text}: outside the grid {grid}")
    return coords


def _digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


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
        with kernel.naming_params():
            run, buffers = launch_grid(kernel.module.text, kernel.name, grid, block, values, ray=True, smem=args.smem,
                                       arch=kernel.arch.replace("_", ""), max_steps=args.max_steps)
    finally:
        if started:
            ray.shutdown()
    return _GridResult(buffers, {"ctas": run.ctas, "ray_tasks": run.tasks, "wall_s": round(run.wall_s, 3)})


def run(args):
    """Compile, launch, report; returns the exit status (errors are raised for the CLI to print)."""
    from warpsim.ptx.front import open_kernel, parse_dim3
    if args.dump is not None and not args.out:
        raise ValueError("--dump needs --out DIR")
    if args.out is not None and args.dump is None:
        raise ValueError(f"--out {args.out}: needs --dump NAME,... (without it the summary goes to stdout)")
    wanted = dump_names(args.dump, "buffer", "y") if args.dump is not None else None
    if args.out is not None:
        make_out_dir(args.out, check_only=True)           # before the run, not after it
    values, labels = arg_values(args.arg)                 # bad values fail before compiling
    grid, block = parse_dim3(args.grid, "--grid"), parse_dim3(args.block, "--block")
    cta = None if args.cta is None else parse_cta(args.cta, grid)
    if args.ray is not None and (args.no_ray or cta is not None):
        raise ValueError("--ray: not with " + ("--no-ray" if args.no_ray else "--cta (one CTA runs in this process)"))
    kernel = open_kernel(args.source, args.kernel, arch=args.arch, nvcc_flags=tuple(args.nvcc_flags.split()),
                         ptxas=args.ptxas, cubin=args.cubin)
    values = kernel.core_args(values, what=labels)        # each checked against its parameter's PTX type
    names = {p.source_name or p.name for p in kernel.params} | {p.name for p in kernel.params}
    unknown = [n for n in wanted or () if n not in names and n.split(".")[0] not in names]
    if unknown:
        raise ValueError(f"--dump {','.join(unknown)}: not a parameter of {kernel.name}; its parameters: "
                         f"{', '.join(p.source_name or p.name for p in kernel.params) or 'none'}")
    if args.ray is not None:
        kernel.module.check_shared(kernel.name, args.smem, kernel.arch.replace("_", ""))   # before any Ray task
        result = _launch_on_ray(kernel, grid, block, values, args)
    else:
        result = kernel.launch(grid=grid, block=block, args=values, smem=args.smem, cta=cta, max_steps=args.max_steps)
    buffers = kernel.buffers(result)
    if wanted is not None:
        unknown = [n for n in wanted if n not in buffers]
        if unknown:
            raise ValueError(f"--dump {','.join(unknown)}: not a buffer of {kernel.name}; "
                             f"its buffers: {', '.join(buffers) or 'none'}")
        make_out_dir(args.out)
        paths = []
        for name in wanted:
            path = os.path.join(args.out, f"{name}.npy")
            write_atomic(path, lambda f, array=buffers[name]: np.save(f, array, allow_pickle=False))
            paths.append(path)
        sys.stdout.write(f"wrote {', '.join(paths)}\n")
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
