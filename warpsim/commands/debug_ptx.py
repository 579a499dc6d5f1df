"""``warpsim debug`` for a user's kernel: a ``.cu`` (nvcc), a ``.ptx``, or a CuTe DSL ``.py`` file.

``warpsim debug SOURCE --kernel NAME [--grid X,Y,Z] [--block X,Y,Z] [--arg NAME=VALUE ...] [--smem BYTES]
[--arch sm_80|sm_90] [--nvcc-flags "FLAGS"] [--max-steps N] [--commands FILE]``

The kernel and its arguments are ``warpsim run``'s (:mod:`warpsim.commands.run_kernel`); the debugger's commands
are :data:`warpsim.debug.ptx_repl.PTX_COMMANDS`, read from ``--commands FILE`` (``-``: stdin), else
from the terminal (readline history, colour) or a pipe. Exit status: 0; 1 when a command of a script
failed; 2 for a user error in the arguments, the source or the kernel (one line, no traceback).
"""

from __future__ import annotations

import sys

from warpsim.frontends.args import arg_values
from warpsim.frontends.compiled import ARCHS
from warpsim.ptx.launch import DEFAULT_MAX_STEPS

__all__ = ["add_arguments", "run"]


def add_arguments(parser):
    parser.add_argument("source", help="a .cu file (compiled by nvcc), a .ptx file, or a CuTe DSL .py file "
                                       "that assigns WARPSIM")
    parser.add_argument("--kernel", required=True, help="the kernel: its name in the source, or its PTX entry name")
    parser.add_argument("--grid", default="1", help="grid dimensions X[,Y[,Z]] (default 1)")
    parser.add_argument("--block", default="128", help="block dimensions X[,Y[,Z]] (default 128)")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a kernel parameter, once each: NAME=FILE.npy, NAME=raw:FILE, NAME=1024, NAME=0.5, "
                             "NAME=zeros:f32:64x64 (as warpsim run)")
    parser.add_argument("--smem", type=int, default=0, help="dynamic shared memory in bytes (default 0)")
    parser.add_argument("--arch", default="sm_90", help=f"compile target and tensor-core model: {', '.join(ARCHS)}")
    parser.add_argument("--nvcc-flags", default="", metavar="FLAGS", help="more nvcc flags, written with =: "
                                                                          "--nvcc-flags=\"-DTILE=64\"")
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS,
                        help=f"warp instructions allowed for the launch (default {DEFAULT_MAX_STEPS})")
    parser.add_argument("--commands", metavar="FILE",
                        help="run the debugger commands in FILE (one per line, # comments; - for stdin) and exit")


def run(args):
    """Run ``warpsim debug`` on a kernel with parsed ``args``; returns the exit status (raises user errors)."""
    from warpsim.debug.ptx_repl import PtxRepl
    from warpsim.debug.ptx_session import PtxSession
    from warpsim.debug.repl import use_color
    from warpsim.frontends.kernel import parse_dim3
    script = None
    if args.commands == "-":
        script = sys.stdin.read().splitlines()
    elif args.commands is not None:
        try:
            with open(args.commands, encoding="utf-8") as f:
                script = f.read().splitlines()
        except OSError as e:
            raise ValueError(f"--commands {args.commands}: {e.strerror or e}") from None
    values, _labels = arg_values(args.arg)
    grid, block = parse_dim3(args.grid, "--grid"), parse_dim3(args.block, "--block")
    session = PtxSession.open(args.source, args.kernel, grid, block, values, smem=args.smem, arch=args.arch,
                              nvcc_flags=args.nvcc_flags.split(), max_steps=args.max_steps)
    kernel = session.front
    repl = PtxRepl(session, sys.stdout, use_color(sys.stdout))
    d = session.decoded
    repl.write(f"warpsim debug: {args.source}: kernel {kernel.name}, grid {grid}, block {block}, {kernel.arch}: "
               f"{d.code.shape[0]} instructions, {len(d.reg_names)} registers per thread, {session.warps} warps. "
               f"`help` lists the commands.")
    repl.execute("where")
    if script is not None:
        return repl.run_script(script)
    if sys.stdin.isatty():
        return repl.interact()
    return repl.run_script(sys.stdin)
