"""Campaigns on a local Ray cluster: throughput with 1 and 2 workers, per-task overhead, a 64-node projection.

Run from the repository root: ``PYTHONPATH=. python bench/bench_ray.py [--quick] [--cores-per-node N]``.

The campaign is ``mma m16n8k16 f16.f32``, class ``ordinary``, in ``--simulate-only`` mode (no GPU here):
a simulator actor makes and simulates each chunk, a checker actor simulates it again and compares, so
each instruction is simulated twice, as a GPU campaign simulates it once and runs it once. Measured in
one run, on one local cluster (``ray.init(num_cpus=2)``), Numba warm in every actor:

- baseline: the same chunks in this process, one thread (``run_campaign`` with the simulator as GPU);
- Ray with 1 and 2 simulator actors (and as many checkers): instructions per second while streaming
  (actors already warm), and the ratio of the two;
- per-task overhead: chunks of 32 instructions, where the work is nearly nothing: (Ray's time per
  chunk with one worker) - (the baseline's time per chunk);
- the projection for 64 nodes: from the measured cost per instruction (one worker) and the per-task
  overhead, for chunks of the default size, assuming each core runs one simulator actor and chunks
  scale linearly (they share nothing), capped by the driver taking one result per measured overhead.

With one worker, Ray runs a simulator and a checker actor (two processes on two cores), so it can beat
the one-thread baseline, which does both simulations in turn.
"""

import argparse
import io
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numba                                                        # noqa: E402
import ray                                                          # noqa: E402

from hwcheck.campaigns.campaign import CHUNK, build_cases, run_campaign, warm_up   # noqa: E402
from hwcheck.campaigns.cluster import SimulatorRunner, run_campaign_ray       # noqa: E402
from hwcheck.progress import Progress                               # noqa: E402
from hostinfo import host_line                                      # noqa: E402


def quiet():
    return Progress(io.StringIO(), tty=False)


def local(cases, count, chunk):
    """Seconds for the campaign in this process, one Numba thread, after warm-up."""
    numba.set_num_threads(1)
    warm_up(cases, "sm90")
    start = time.perf_counter()
    run_campaign(cases, SimulatorRunner("sm90"), count=count, chunk=chunk, progress=quiet())
    return time.perf_counter() - start


def on_ray(cases, count, chunk, workers):
    run = run_campaign_ray(cases, count=count, chunk=chunk, runner="simulator", simulators=workers,
                           progress=quiet())
    assert run.complete, run.as_dict()
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts (CI smoke: about a minute)")
    parser.add_argument("--cores-per-node", type=int, default=64, help="for the projection (default 64)")
    args = parser.parse_args()
    count, chunk = (4096, 1024) if args.quick else (131072, 8192)
    tiny_count = 512 if args.quick else 4096                      # chunks of 32: overhead-bound
    cases = build_cases("mma", shapes=["m16n8k16"], types=["f16.f32"], classes=["ordinary"])
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([os.environ["PYTHONPATH"]]
                                                              if os.environ.get("PYTHONPATH") else []))
    print(host_line())
    print(f"ray {ray.__version__}")
    print(f"campaign: mma m16n8k16 f16.f32 ordinary, {count} instructions in chunks of {chunk}, simulate-only")

    base = local(cases, count, chunk)
    base_tiny = local(cases, tiny_count, 32)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        one = on_ray(cases, count, chunk, 1)
        two = on_ray(cases, count, chunk, 2)
        tiny = on_ray(cases, tiny_count, 32, 1)
    finally:
        ray.shutdown()

    chunks = one.chunks_planned
    rate = {name: count / s for name, s in (("local", base), ("1", one.stream_s), ("2", two.stream_s))}
    print(f"  in-process baseline (1 thread): {rate['local']:,.0f} instr/s ({base:.2f} s)")
    print(f"  Ray, 1 worker : {rate['1']:,.0f} instr/s ({one.stream_s:.2f} s streaming, {one.wall_s:.2f} s with "
          f"actor start and warm-up)")
    print(f"  Ray, 2 workers: {rate['2']:,.0f} instr/s ({two.stream_s:.2f} s streaming, {two.wall_s:.2f} s with "
          f"actor start and warm-up)")
    print(f"  ratio 2 workers / 1 worker: {rate['2'] / rate['1']:.2f}x; 1 worker / in-process: "
          f"{rate['1'] / rate['local']:.2f}x")
    tiny_chunks = tiny.chunks_planned
    overhead = tiny.stream_s / tiny_chunks - base_tiny / tiny_chunks
    print(f"  per-task overhead (chunks of 32, 1 worker): {overhead * 1e3:.2f} ms per chunk "
          f"(Ray {tiny.stream_s / tiny_chunks * 1e3:.2f} ms, in-process {base_tiny / tiny_chunks * 1e3:.2f} ms)")

    per_instr = (one.stream_s / chunks - overhead) / chunk   # one worker: simulation cost of an instruction
    nodes, cores = 64, args.cores_per_node
    actors = nodes * cores
    big = CHUNK                                        # the default chunk of a campaign
    per_chunk = per_instr * big + overhead
    linear = actors / per_chunk
    driver_cap = 1 / max(overhead, 1e-6)               # if the driver spent the whole overhead per result
    chunk_rate = min(linear, driver_cap)
    print(f"projection, {nodes} nodes x {cores} cores ({actors} simulator actors, as many checkers), "
          f"default chunks of {big}:")
    print(f"  measured: {per_instr * 1e6:.1f} us per instruction on one worker (simulated twice: simulate-only), "
          f"+ {overhead * 1e3:.2f} ms per chunk -> {per_chunk:.2f} s per chunk")
    print(f"  linear: {linear:,.0f} chunks/s = {linear * big:,.0f} instr/s; the driver takes at least "
          f"{driver_cap:,.0f} results/s (if each cost it the whole per-task overhead)")
    print(f"  -> {chunk_rate * big:,.0f} instr/s: 10^9 instructions in {1e9 / (chunk_rate * big):,.0f} s "
          f"(a GPU campaign simulates once: about half the simulation cost, while the GPUs keep up)")


if __name__ == "__main__":
    main()
