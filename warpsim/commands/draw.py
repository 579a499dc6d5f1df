"""``warpsim draw``: pictures of TV layouts, bank maps and register files from the command line.

::

    warpsim draw mma --atom SM80_16x8x16_F32F16F16F32_TN --thr 4,1,1 --tile 64,16,16 --operand A -o a.svg
    warpsim draw mma --config seed -o mma.png                 # the config's tiled MMA, A, B and C
    warpsim draw copy --config seed --fragment K --highlight 5 -o copy_K.svg
    warpsim draw banks --config seed --fragment K --warp 0 --call 0 --phase 1 -o banks_K.svg
    warpsim draw banks --config seed --fragment K --no-swizzle -o banks_K_plain.svg
    warpsim draw regs examples/gemm_smem.py --line 129 --warp 0 --regs tSrK -o tSrK.svg

``--config`` takes what ``warpsim explain`` takes (``seed``, ``seed-bf16`` or a ``PATH.py``), and
``--fragment`` one of its fragments (default: the first). Without ``-o`` the SVG goes to stdout;
``-o FILE.png`` needs the extra ``warpsim[draw]`` (Pillow). ``draw banks`` also prints the bank
model's totals for the fragment's copy (every warp, every call) and the marked phase. ``draw regs``
runs a program file (``warpsim run``'s arguments) to a point and draws a warp's registers as the
debugger's ``print`` shows them: ``--at N`` after N warp instructions, ``--line L`` before the first
instruction of source line L, else at the end.
"""

import argparse
import sys

from warpsim import cute
from warpsim.commands.program_args import (add_program_arguments, load_program_args, reporting_warnings,
                                           run_options)
from warpsim.debug.copy_banks import BankTotals, fragment_accesses
from warpsim.draw.bankmap import bank_map
from warpsim.draw.tv import draw_tiled_copy, draw_tiled_mma
from warpsim.explain import ConfigError, resolve_config
from warpsim.machine import MAX_THREADS_PER_CTA

__all__ = ["add_arguments", "run", "parse_ints"]

_MAX_TILE = 1024     # elements per mode of a drawn tile: a larger picture is no use to anyone


def parse_ints(text, what, count=None, allow_underscore=False):
    """``"4,1,1"`` -> ``(4, 1, 1)`` (``_`` kept as CuTe's ``_`` where allowed); ``ValueError`` naming ``what``.

    >>> parse_ints("64,_,16", "--tile", 3, allow_underscore=True)[1] is cute._
    True
    """
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if allow_underscore and part == "_":
            out.append(cute._)
            continue
        try:
            value = int(part)
        except ValueError:
            raise ValueError(f"{what}: expected comma-separated integers, got {text!r}") from None
        if value <= 0:
            raise ValueError(f"{what}: values must be positive, got {text!r}")
        out.append(value)
    if count is not None and len(out) != count:
        raise ValueError(f"{what}: expected {count} values, got {text!r}")
    return tuple(out)


def _fragment(cfg, name):
    if name is None:
        return cfg.fragments[0]
    for spec in cfg.fragments:
        if spec.name == name:
            return spec
    raise ConfigError(f"no fragment {name!r} in config {cfg.name}; it has {', '.join(s.name for s in cfg.fragments)}")


def _common(parser):
    parser.add_argument("-o", "--output", help="FILE.svg or FILE.png (PNG needs warpsim[draw]); default: SVG on stdout")
    parser.add_argument("--scale", type=float, default=2.0, help="PNG pixels per SVG unit (default 2)")


def _config_args(parser, what):
    parser.add_argument("--config", default="seed",
                        help="'seed', 'seed-bf16' or a PATH.py as for warpsim explain (default seed)")
    if what:
        parser.add_argument("--fragment", help=f"the fragment {what} (default: the config's first; seed: Q, K, Vt)")


def _atom_name(text):
    """``--atom``: a name of ``cute.MMA_OPS`` or ``cute.GMMA_OPS``; else one line naming the families (argparse prints
    it as ``argument --atom: ...``; listing the 260 names would bury it)."""
    if text in cute.MMA_OPS or text in cute.GMMA_OPS:
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is not an atom warpsim knows: SM80_16x8x{{8,16}}_<D><A><B><C>_TN (e.g. SM80_16x8x16_F32F16F16F32_TN), "
        f"SM90_64xNx16_<D><A><B>_<SS|RS> (e.g. SM90_64x64x16_F32F16F16_SS) or SM90_64xNx{{8,32}}_<D><A><B>_<SS|RS>_TN "
        f"(e.g. SM90_64x64x32_F32E4M3E4M3_SS_TN), N in {', '.join(map(str, cute.atoms.mma_sm90.GMMA_N))}")


def add_arguments(parser):
    """Add ``warpsim draw``'s sub-commands (``mma``, ``copy``, ``banks``) to ``parser``."""
    sub = parser.add_subparsers(dest="what", metavar="WHAT")
    sub.required = True
    parser.verbs = {}
    mma = parser.verbs["mma"] = sub.add_parser("mma", help="TV layouts of a tiled MMA's A, B and C (as CuTe's print_svg)")
    mma.add_argument("--atom", type=_atom_name, metavar="NAME",
                     help="MMA atom, e.g. SM80_16x8x16_F32F16F16F32_TN, or a warpgroup's SM90_64x64x16_F32F16F16_SS "
                          "(default: the --config's tiled MMA)")
    mma.add_argument("--thr", default="1,1,1", help="atom layout over (M,N,K), e.g. 4,1,1 (with --atom)")
    mma.add_argument("--tile", help="tile (M,N,K), e.g. 64,16,16; _ for the natural size (with --atom)")
    _config_args(mma, None)
    mma.add_argument("--operand", choices=["A", "B", "C"], help="draw only this operand")
    mma.add_argument("--highlight", type=int, metavar="T", help="outline the values of thread T")
    _common(mma)
    copy = parser.verbs["copy"] = sub.add_parser("copy", help="source and destination TV layouts of a fragment's tiled copy")
    _config_args(copy, "whose copy to draw")
    copy.add_argument("--side", choices=["S", "D"], help="draw only the source (S) or destination (D)")
    copy.add_argument("--highlight", type=int, metavar="T", help="outline the values of thread T")
    _common(copy)
    banks = parser.verbs["banks"] = sub.add_parser("banks", help="bank map of a fragment's shared tensor, one access phase marked")
    _config_args(banks, "whose shared tensor and copy to use")
    banks.add_argument("--warp", type=int, default=0, help="warp of the marked access (default 0)")
    banks.add_argument("--call", type=int, default=0, help="copy call (instruction) of the marked access (default 0)")
    banks.add_argument("--phase", type=int, default=0, help="phase of the marked access (default 0)")
    banks.add_argument("--no-mark", action="store_true", help="mark no access")
    banks.add_argument("--no-swizzle", action="store_true",
                       help="the same program on the shared layout without its swizzle")
    banks.add_argument("--rows", help="draw only rows START:STOP of the tile")
    _common(banks)
    regs = parser.verbs["regs"] = sub.add_parser("regs", help="a warp's register file at a point of a program run (the debugger's regs)")
    add_program_arguments(regs)
    where = regs.add_mutually_exclusive_group()
    where.add_argument("--at", type=int, metavar="N", help="after the first N warp instructions of the program's kernel (default: all of them)")
    where.add_argument("--line", type=int, metavar="L", help="before the first instruction of source line L")
    regs.add_argument("--warp", type=int, help="the warp (default: the last executed instruction's)")
    regs.add_argument("--fmt", choices=["hex", "f16x2", "bf16x2", "f32"], default="hex",
                      help="how a register reads (default hex)")
    regs.add_argument("--regs", metavar="REGS",
                      help="%%r36..%%r51, r36-r51, a register tensor's name (default: those of the warp's last and "
                           "next instruction)")
    _common(regs)


def _write(scene, args):
    if args.output:
        try:
            scene.save(args.output, scale=args.scale)
        except ImportError as e:          # PNG without Pillow: the message is the install hint
            raise ValueError(str(e)) from None
    else:
        sys.stdout.write(scene.svg())


def _as_option(option, value, fn, *args):
    """``fn(*args)``; its ``ValueError`` about ``value`` is restated as about the user's ``option``."""
    try:
        return fn(*args)
    except ValueError as e:
        if value is None or option.lstrip("-") not in str(e):
            raise
        raise ValueError(f"{option} {value}: {str(e).split(': ', 1)[-1]}") from None


def _run_mma(args):
    if args.atom:
        thr = parse_ints(args.thr, "--thr", 3)
        threads = 32 * thr[0] * thr[1] * thr[2]          # every MMA atom here is one warp's
        if threads > MAX_THREADS_PER_CTA:
            raise ValueError(f"--thr {args.thr}: {threads} threads; a CTA has at most {MAX_THREADS_PER_CTA}")
        tile = parse_ints(args.tile, "--tile", 3, allow_underscore=True) if args.tile else None
        if tile and any(t is not cute._ and t > _MAX_TILE for t in tile):
            raise ValueError(f"--tile {args.tile}: at most {_MAX_TILE} per mode in a picture")
        atom = cute.MMA_OPS.get(args.atom) or cute.GMMA_OPS[args.atom]
        tiled_mma = cute.make_tiled_mma(atom, cute.make_layout(thr), tile)
    else:
        tiled_mma = resolve_config(args.config).tiled_mma
    _write(_as_option("--highlight", args.highlight, draw_tiled_mma, tiled_mma, args.operand, args.highlight), args)
    return 0


def _run_copy(args):
    spec = _fragment(resolve_config(args.config), args.fragment)
    scene = _as_option("--highlight", args.highlight, draw_tiled_copy, spec.copy, args.side, args.highlight)
    scene.title = f"{spec.name}: {scene.title}"
    _write(scene, args)
    return 0


def _parse_rows(text):
    try:
        start, stop = (int(x) for x in text.split(":"))
    except ValueError:
        raise ValueError(f"--rows: expected START:STOP, e.g. 0:8, got {text!r}") from None
    return (start, stop)


def _unswizzled(tensor):
    if not cute.is_composed(tensor.layout):
        return tensor
    return cute.make_tensor(tensor.engine, cute.get_nonswizzle_portion(tensor.layout))


def _run_banks(args):
    cfg = resolve_config(args.config)
    spec = _fragment(cfg, args.fragment)
    smem, source = spec.smem, spec.source
    if args.no_swizzle:
        smem, source = _unswizzled(smem), _unswizzled(source)
    accesses = fragment_accesses(cfg.tiled_mma, spec.operand, smem, spec.copy, source)
    reports = [a.report() for a in accesses]
    label = f"{spec.name}{' (no swizzle)' if args.no_swizzle else ''}"
    lines = [f"{label}: {spec.copy.atom.op.name} on {smem.layout}: {BankTotals.of(reports)}"]
    phase = None
    if not args.no_mark:
        picked = [i for i, a in enumerate(accesses) if a.warp == args.warp and a.call == args.call]
        if not picked:
            calls = sum(1 for a in accesses if a.warp == accesses[0].warp)
            raise ValueError(f"--warp {args.warp} --call {args.call}: the copy has warps 0-"
                             f"{accesses[-1].warp} and calls 0-{calls - 1}")
        report = reports[picked[0]]
        if not 0 <= args.phase < len(report.phases):
            raise ValueError(f"--phase {args.phase}: {report.instruction} has phases 0-{len(report.phases) - 1}")
        phase = report.phases[args.phase]
        lines.append(f"marked: warp {args.warp} call {args.call} {report.instruction} {phase}")
    title = f"{label}: banks of {smem.layout}" + (
        f"; warp {args.warp} call {args.call} phase {args.phase}: "
        + ("conflict-free" if phase.degree == 1 else f"{phase.degree}-way") if phase else "")
    try:
        scene = bank_map(smem, phase, title).scene(rows=_parse_rows(args.rows) if args.rows else None)
    except ValueError as e:      # the bank map names its method; the user gave an option
        if not args.rows or str(e).startswith("--rows"):
            raise
        raise ValueError(f"--rows {args.rows}: {str(e).split(': ', 1)[-1]}") from None
    _write(scene, args)
    if args.output:
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _run_regs(args):
    from warpsim.debug.session import Session
    from warpsim.debug.views import register_view
    program, params, inputs = load_program_args(args)
    with reporting_warnings("draw"):
        session = Session.program(program, params, inputs, **run_options(args))
    try:
        if args.line is not None:
            session.run_to(args.line)
        elif args.at is None:
            session.cont()
        else:
            session.goto(args.at)
            if session.position < args.at:
                raise ValueError(f"goto: the program's kernel ends after {session.position} warp instructions, "
                                 f"got {args.at}")
    except ValueError as e:      # the session names its method; the user gave an option
        option = f"--line {args.line}" if args.line is not None else f"--at {args.at}"
        raise ValueError(f"{option}: {str(e).split(': ', 1)[-1]}") from None
    view = register_view(session, args.regs or (), fmt=args.fmt, warp=args.warp)
    _write(view.grid.scene(), args)
    if args.output:
        sys.stdout.write(f"{view.grid.title}\n{view.legend}\n")
    return 0


def run(args):
    """Run ``warpsim draw`` with parsed ``args``; returns the exit status."""
    return {"mma": _run_mma, "copy": _run_copy, "banks": _run_banks, "regs": _run_regs}[args.what](args)
