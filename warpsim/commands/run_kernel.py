"""``warpsim run`` for a user's kernel: a ``.cu`` (nvcc), a ``.ptx``, or a CuTe DSL ``.py`` file.

``warpsim run SOURCE --kernel NAME [--grid X,Y,Z] [--block X,Y,Z] [--arg NAME=VALUE ...] [--smem BYTES]
[--arch sm_80|sm_90] [--nvcc-flags "FLAGS"] [--cta I|X,Y,Z] [--max-steps N] [--dump NAME,... --out DIR]
[--jobs N] [--ray [ADDRESS] | --no-ray] [--strict] [--sanitize[=TOOLS]]``

``--sanitize[=race,sync,init,mem|all]`` runs the kernel under the sanitizer instead (:mod:`warpsim.commands.sanitize`,
docs/guides/sanitizer.md): its report, exit 1 when it finds anything.

``--strict`` runs ``warpsim check`` on the kernel first (:mod:`warpsim.commands.check`): with findings, it
prints them and exits 1 without launching.

``--jobs N`` (default: ``$WARPSIM_JOBS``, else every CPU this process may use) lets a launch still running after a second spread the CTAs
left over N processes (:mod:`warpsim.ptx.jobs`): the result is the sequential launch's, bit for bit, whatever N (CTAs
that depend on each other run in sequence), and so is the order of the printf lines; ``--jobs 1`` never forks.

``--ray`` runs the grid's CTAs as Ray tasks (:mod:`warpsim.frontends.grid`): the buffers are the sequential
launch's, bit for bit, or the command stops with an error naming the CTA and the byte that make the
CTAs depend on each other; ``--no-ray`` (the default) runs them in sequence.

``--kernel NAME`` is the name the source gives the kernel or its PTX entry name, exactly
(:func:`warpsim.frontends.kernel.find_entry`): a name that is only part of entry names, or that names several (a
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
``WARPSIM``, see :mod:`warpsim.frontends.cute_dsl`); any other ``.py`` is a warpsim program, run by
:mod:`warpsim.commands.run` as before.

Exit status: 0; 2 for a user error (one line naming the input, no traceback): a missing compiler or DSL,
nvcc's errors, an unknown kernel (the line lists the module's kernels), a bad, missing or repeated argument, a
fault, a dump that cannot be written.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass

import numpy as np

from warpsim.commands.kernel_args import add_kernel_arguments
from warpsim.commands.program_args import note
from warpsim.files import dump_names, make_out_dir, write_atomic
from warpsim.frontends.args import arg_values, parse_cta
from warpsim.ptx.jobs import check_jobs, default_jobs

__all__ = ["add_arguments", "run"]


def add_arguments(parser):
    add_kernel_arguments(parser)
    parser.add_argument("--sanitize", nargs="?", const="all", default=None, metavar="TOOLS",
                        help="run the sanitizer instead (warpsim sanitize): race,sync,init,mem or all (the default); "
                             "its report, exit 1 when it finds anything")
    parser.add_argument("--dump", default=None, metavar="NAME,...", help="write these buffers to --out DIR as NAME.npy")
    parser.add_argument("--out", default=None, metavar="DIR", help="directory for --dump")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes for a long launch's CTAs (default: every CPU); the same bits whatever N")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="run the grid's CTAs in parallel on a Ray cluster (ADDRESS, or the one Ray finds, else "
                             "a new local one); CTAs that depend on each other are refused (see --no-ray)")
    parser.add_argument("--strict", action="store_true",
                        help="run the type-provenance check first (warpsim check) and do not launch a kernel "
                             "with findings (exit 1)")
    parser.add_argument("--no-ray", action="store_true",
                        help="run the CTAs in sequence in this process (the default; the way out for dependent CTAs)")


def _digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


@dataclass
class _GridResult:
    """What ``launch`` returns, for a grid run on Ray: ``buffers`` and ``stats``."""

    buffers: dict
    stats: dict


def _launch_on_ray(kernel, grid, block, values, args):
    """The launch, its CTAs as Ray tasks (:mod:`warpsim.frontends.grid`); Ray is imported here only."""
    try:
        import ray
    except ImportError as e:
        raise ValueError(f"--ray: Ray is not installed ({e}); pip install 'warpsim[ray]'") from None
    from warpsim.frontends.grid import launch_grid
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
    from warpsim.frontends.kernel import open_kernel, parse_dim3
    if args.sanitize is not None:
        if args.dump is not None or args.ray is not None:
            raise ValueError("--sanitize: not with " + ("--dump" if args.dump is not None else "--ray"))
        from warpsim.commands import sanitize
        args.tool, args.json, args.uninit = args.sanitize, None, []
        return sanitize.run(args)
    if args.dump is not None and not args.out:
        raise ValueError("--dump needs --out DIR")
    if args.out is not None and args.dump is None:
        raise ValueError(f"--out {args.out}: needs --dump NAME,... (without it the summary goes to stdout)")
    wanted = dump_names(args.dump, "buffer", "y") if args.dump is not None else None
    if args.out is not None:
        make_out_dir(args.out, check_only=True)           # before the run, not after it
    jobs = default_jobs() if args.jobs is None else check_jobs(args.jobs)
    values, labels = arg_values(args.arg, args.seed)      # bad values fail before compiling
    grid, block = parse_dim3(args.grid, "--grid"), parse_dim3(args.block, "--block")
    cta = None if args.cta is None else parse_cta(args.cta, grid)
    cluster = None if getattr(args, "cluster", None) is None else parse_dim3(args.cluster, "--cluster")
    if args.ray is not None and (args.no_ray or cta is not None):
        raise ValueError("--ray: not with " + ("--no-ray" if args.no_ray else "--cta (one CTA runs in this process)"))
    kernel = open_kernel(args.source, args.kernel, arch=args.arch, nvcc_flags=tuple(args.nvcc_flags.split()),
                         ptxas=args.ptxas, cubin=args.cubin, progress=note("run"))
    values = kernel.core_args(values, what=labels)        # each checked against its parameter's PTX type
    names = {p.source_name or p.name for p in kernel.params} | {p.name for p in kernel.params}
    unknown = [n for n in wanted or () if n not in names and n.split(".")[0] not in names]
    if unknown:
        raise ValueError(f"--dump {','.join(unknown)}: not a parameter of {kernel.name}; its parameters: "
                         f"{', '.join(p.source_name or p.name for p in kernel.params) or 'none'}")
    dims, _ = kernel.module.cluster_dims(kernel.name, grid, cluster)       # a bad --cluster before the run
    if args.ray is not None and dims != (1, 1, 1):
        raise ValueError(f"--ray: {kernel.name} runs in clusters of {','.join(map(str, dims))} CTAs, which run "
                         f"together in one process")
    if args.ray is not None:
        kernel.module.check_shared(kernel.name, args.smem, kernel.arch.replace("_", ""))   # before any Ray task
        result = _launch_on_ray(kernel, grid, block, values, args)
    else:
        result = kernel.launch(grid=grid, block=block, args=values, smem=args.smem, cta=cta, max_steps=args.max_steps,
                               cluster=cluster, progress=note("run"), jobs=jobs)
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
    sys.stdout.write(f"{kernel.name}: grid {grid}, block {block}"
                     f"{'' if dims == (1, 1, 1) else f', cluster {dims}'}, smem {args.smem} B, {kernel.arch}"
                     f"{'' if cta is None else f', CTA {cta} only'}\n")
    sys.stdout.write(f"  {kernel.module.contraction.describe()}\n")
    stats = getattr(result, "stats", None) or {}
    for key, value in (stats.items() if isinstance(stats, dict) else []):
        sys.stdout.write(f"  {key}: {value}\n")
    for name, array in buffers.items():
        sys.stdout.write(f"  {name}: {array.shape} {array.dtype} sha256:{_digest(array)}\n")
    return 0
