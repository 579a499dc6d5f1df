"""``warpsim explain``: which shared-memory element lands in which register slot, through which view; or what a
wgmma matrix descriptor reads.

``warpsim explain [--config seed|seed-bf16|PATH.py] [--threads 0,5|0-3] [--json]``
``warpsim explain --descriptor BITS [--rows N] [--mn-major]``
"""

import json
import sys

__all__ = ["add_arguments", "run"]


def add_arguments(parser):
    parser.add_argument("--config", default="seed",
                        help="'seed' (built in: Q, K, V^T of the seed; 'seed-bf16' for bf16) or a PATH.py "
                             "defining tiled_mma and fragments (see README)")
    parser.add_argument("--threads", default="0", help="threads to explain, e.g. 0,5 or 0-3 (default 0)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--descriptor", metavar="BITS",
                        help="a wgmma matrix descriptor (e.g. 0x4000004000010040): its fields and the shared address "
                             "of each row's elements it reads")
    parser.add_argument("--rows", type=int, default=64, help="with --descriptor: rows (M of A, N of B; default 64)")
    parser.add_argument("--mn-major", action="store_true", help="with --descriptor: the operand is MN-major "
                                                                 "(imm-trans 1)")


def run(args):
    """Run ``warpsim explain`` with parsed ``args``; returns the exit status (raises user errors)."""
    if args.descriptor is not None:
        from warpsim.isa.wgmma import descriptor_text
        try:
            bits = int(args.descriptor, 0)
        except ValueError:
            raise ValueError(f"--descriptor {args.descriptor}: expected an integer (0x... or decimal)") from None
        if not 0 <= bits < 1 << 64 or not 1 <= args.rows <= 256:
            raise ValueError(f"--descriptor {args.descriptor} --rows {args.rows}: a 64-bit descriptor and 1 to 256 rows")
        sys.stdout.write(descriptor_text(bits, args.rows, args.mn_major) + "\n")
        return 0
    from warpsim.explain import explain, format_text   # imported when used: keeps start-up light
    report = explain(args.config, args.threads)
    if args.json:
        json.dump(report, sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(report))
    return 0
