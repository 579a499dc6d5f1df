"""``warpsim explain``: which shared-memory element lands in which register slot, through which view.

``warpsim explain [--config seed|seed-bf16|PATH.py] [--threads 0,5|0-3] [--json]``
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


def run(args):
    """Run ``warpsim explain`` with parsed ``args``; returns the exit status (raises user errors)."""
    from warpsim.explain import explain, format_text   # imported when used: keeps start-up light
    report = explain(args.config, args.threads)
    if args.json:
        json.dump(report, sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(report))
    return 0
