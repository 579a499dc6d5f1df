"""``python -m hwcheck.campaigns.sincos_probe --out DIR``: derive MUFU.SIN/COS's coefficients on a GPU, prove the model.

One command does every step that needs the GPU's results for ``sin.approx.f32``/``cos.approx.f32``
(``warpsim.isa.sfu_sincos``), because those results (2**25 keys per function) are too big to bring home:

1. **Key tables.** A kernel runs ``{sin,cos}.approx.ftz.f32`` on all 2**32 inputs, reduces each input as the
   model does (``t = FMUL.RZ(x, 1/(2 pi))``, ``key = floor(|t| * 2**25) mod 2**25``, ``sin``'s result with
   the sign of ``t`` taken out) and writes the result at its key; a second pass counts the inputs whose
   result differs from what their key holds (the key hypothesis: 0 expected). Keys no input reaches (odd
   keys of quadrants 2 and 3: ``t >= 0.5`` has no bit of weight ``2**-25``) stay unfilled.
2. **Derivation** (on the host's CPUs, ``warpsim.isa.sfu_sincos_derive``) from every filled key of both
   tables; the model with the derived coefficients is compared with both tables at every filled key, and the
   coefficients with the shipped ones (``warpsim/isa/data/sfu_sincos_sm90.json``).
3. **Sweep.** ``sin.approx.f32``, ``sin.approx.ftz.f32``, ``cos.approx.f32``, ``cos.approx.ftz.f32`` on the
   GPU over all 2**32 inputs (``--sweep-count`` fewer), compared in chunks with the model (derived
   coefficients; the shipped ones where the derivation failed).

It writes to ``DIR``: ``sincos-probe.json`` (the report: every count, the first mismatches, the GPU),
``sfu_sincos_sm90.json`` (the derived coefficient file, to be copied over the shipped one) and
``sincos_keys_sample.npz`` (both tables at every segment's first and last offsets in each quadrant and
every 1024th key: a test sample); where the derivation fails, ``sincos_failed_segments.npz`` (both tables
wherever they read the first :data:`FAILED_SEGMENTS_KEPT` failed segments). Exit status 0 when every step found 0 mismatches, 1 otherwise, 2 when
it could not run (one line: no CuPy, no GPU, a compile error).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from hwcheck.device.gpu import Gpu
from hwcheck.campaigns.mufu_sweep import mismatch_records, range_kernel
from hwcheck.report import command_line, new_report, write_json_atomic
from warpsim.errors import WarpsimError
from warpsim.files import WriteError, write_atomic
from warpsim.isa.sfu_sincos import KEY_BITS, OFFSET_BITS, QUARTER_BITS, coefficients, sincos_range
from warpsim.isa.sfu_sincos_derive import (DerivationError, coefficient_file_text, count_mismatches,
                                           derive_coefficients, observations_from_keys)

__all__ = ["OPS", "SWEEP_FORMS", "UNFILLED", "KEEP", "FAILED_SEGMENTS_KEPT", "probe_source", "sample_keys",
           "segment_keys", "probe", "main"]

OPS = ("sin", "cos")
SWEEP_FORMS = tuple(f"{op}.approx{ftz}.f32" for op in OPS for ftz in ("", ".ftz"))
UNFILLED = 0xFFFFFFFF          # a key no input reached (no MUFU result has these bits: its NaN is 0x7FFFFFFF)
KEEP = 16
FAILED_SEGMENTS_KEPT = 4       # segments whose whole key range is written when the derivation fails there
_GRID, _BLOCK = 132 * 64, 256

_SOURCE = r"""
__device__ __forceinline__ unsigned sincos_key(unsigned t) {   // floor(|t| * 2**25) mod 2**25
  int e = (t >> 23) & 0xff;
  if (e == 0) return 0u;
  unsigned long long m = (t & 0x7fffffu) | 0x800000u;
  int sh = e - 125;
  if (sh >= 25) return 0u;
  if (sh >= 0) return (unsigned)((m << sh) & 0x1ffffffu);
  return sh > -24 ? (unsigned)(m >> -sh) : 0u;
}
"""

_KEYS = r"""
extern "C" __global__ void sincos_keys_%(op)s(unsigned* table, unsigned long long* counts, unsigned* first,
                                             int pass) {
  unsigned long long valid = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < (1ULL << 32);
       i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i;
    float y;
    asm volatile("%(op)s.approx.ftz.f32 %%0, %%1;" : "=f"(y) : "f"(__uint_as_float(x)));
    float tf;                                   // FMUL.RZ as ptxas emits it (no .ftz: written out)
    asm volatile("mul.rz.f32 %%0, %%1, 0f3E22F983;" : "=f"(tf) : "f"(__uint_as_float(x)));
    unsigned t = __float_as_uint(tf);
    if ((t & 0x7f800000u) == 0x7f800000u) continue;
    unsigned key = sincos_key(t), norm = __float_as_uint(y) ^ (%(odd)d ? (t & 0x80000000u) : 0u);
    if (pass == 0) { table[key] = norm; continue; }
    ++valid;
    if (table[key] != norm) {
      unsigned long long k = atomicAdd(&counts[1], 1ULL);
      if (k < %(keep)d) { first[2 * k] = x; first[2 * k + 1] = __float_as_uint(y); }
    }
  }
  if (pass) atomicAdd(&counts[0], valid);
}
"""


def _sweep_name(form):
    return f"sincos_sweep_{form.replace('.', '_')}"


def probe_source() -> str:
    """The CUDA source of every kernel the probe runs."""
    return (_SOURCE + "".join(_KEYS % {"op": op, "odd": int(op == "sin"), "keep": KEEP} for op in OPS)
            + "".join(range_kernel(_sweep_name(f), f) for f in SWEEP_FORMS))


def sample_keys() -> np.ndarray:
    """The keys of the test sample: each segment's first two and last two offsets in every quadrant, every
    1024th key (sorted, distinct).

    >>> k = sample_keys(); int(k.size), int(k[0]), int(k[-1]) == (1 << 25) - 1
    (33536, 0, True)
    """
    starts = np.arange(1 << (KEY_BITS - OFFSET_BITS), dtype=np.int64) << OFFSET_BITS   # 4 quadrants x 64 segments
    ends = starts + (1 << OFFSET_BITS) - 1
    keys = np.concatenate([starts, starts + 1, ends - 1, ends, np.arange(0, 1 << KEY_BITS, 1024)])
    return np.unique(keys).astype(np.uint32)


def _key_tables(gpu, module, log):
    """Step 1: ``({op: table}, {op: report section})``."""
    tables, sections = {}, {}
    for op in OPS:
        table = gpu.output(1 << 25)
        counts = gpu.put(np.zeros(2, np.uint64))
        first = gpu.put(np.zeros(2 * KEEP, np.uint32))
        for p in (0, 1):
            gpu.launch(module, f"sincos_keys_{op}", _GRID, _BLOCK, (table, counts, first, np.int32(p)))
        c, f, host = gpu.get(counts), gpu.get(first), gpu.get(table)
        n = int(min(int(c[1]), KEEP))
        sections[op] = {"inputs": int(c[0]), "exceptions": int(c[1]), "keys_filled": int(np.sum(host != UNFILLED)),
                        "first_exceptions": [{"input": f"0x{int(f[2 * k]):08x}", "gpu": f"0x{int(f[2 * k + 1]):08x}"}
                                             for k in range(n)]}
        tables[op] = host
        log(f"{op}: key table: {sections[op]['keys_filled']} keys filled, {int(c[0])} inputs, "
            f"{int(c[1])} differ from their key's result")
    return tables, sections


def _derive(tables, out_dir, info, log):
    """Step 2: ``(coefficients or None, report section)``; writes the coefficient file when one is derived."""
    obs = None
    for op, table in tables.items():
        keys = np.flatnonzero(table != UNFILLED)
        part = observations_from_keys(table[keys], op == "cos", keys)
        obs = part if obs is None else obs + part
    try:
        c, segments = derive_coefficients(obs)
    except DerivationError as e:
        log(f"derivation failed: {e}")
        _write_segments(tables, out_dir, e.segments[:FAILED_SEGMENTS_KEPT])
        return None, {"error": str(e), "failed_segments": e.segments}
    shipped = coefficients()
    section = {"segments_with_one_triple": sum(1 for s in segments if s["fit"] == 1),
               "triples_per_segment": [s["fit"] for s in segments],
               "equal_to_shipped": bool(np.array_equal(c, shipped)),
               "rows_differing_from_shipped": [int(s) for s in np.flatnonzero((c != shipped).any(axis=1))],
               "model_vs_keys": {}}
    for op, table in tables.items():
        keys = np.flatnonzero(table != UNFILLED)
        n, first = count_mismatches(c, table[keys], op == "cos", keys)
        section["model_vs_keys"][op] = {"keys": int(keys.size), "mismatches": n, "first": first}
        log(f"{op}: the derived model differs at {n} of {keys.size} keys")
    doc = {"source": {"gpu": info, "command": "python -m hwcheck.campaigns.sincos_probe", "data": "every filled key of "
                      "the sin and cos key tables (all 2**32 inputs of {sin,cos}.approx.ftz.f32)"},
           "derived_from": "hwcheck.campaigns.sincos_probe key tables", "observations": int(obs.r.size),
           "segments_with_one_triple": section["segments_with_one_triple"],
           "mismatches": {op: section["model_vs_keys"][op]["mismatches"] for op in tables},
           "coefficients": c.tolist()}
    write_atomic(os.path.join(out_dir, "sfu_sincos_sm90.json"), lambda f: f.write(coefficient_file_text(doc).encode()))
    log(f"coefficients derived ({'equal to' if section['equal_to_shipped'] else 'DIFFERENT from'} the shipped ones)")
    return c, section


def _sweep(gpu, module, c, start, count, chunk_bits, log):
    """Step 3: ``{form: report section}``."""
    chunk = min(1 << chunk_bits, count)
    dev = gpu.output(chunk)
    model = np.empty(chunk, np.uint32)
    sections = {}
    for form in SWEEP_FORMS:
        op, ftz = form.split(".")[0], ".ftz" in form
        bad, first, done = 0, [], 0
        while done < count:
            n = min(chunk, count - done)
            s = (start + done) & 0xFFFFFFFF
            gpu.launch(module, _sweep_name(form), _GRID, _BLOCK, (dev, np.uint64(s), np.uint64(n)))
            host = gpu.get(dev)[:n]
            sincos_range(op, s, model[:n], ftz=ftz, c=c)
            diff = np.flatnonzero(host != model[:n])
            bad += diff.size
            idx = diff[:KEEP - len(first)]
            first += mismatch_records((s + idx) & 0xFFFFFFFF, host[idx], model[idx])
            done += n
        sections[form] = {"inputs": done, "start": f"0x{start:08x}", "mismatches": bad, "first_mismatches": first}
        log(f"sweep {form}: {done} inputs, {bad} mismatches")
    return sections


def segment_keys(segments, is_cos: bool) -> np.ndarray:
    """The keys of quadrants 0 and 1 at which ``sin`` (or ``cos``) reads ``segments`` of the first-quadrant
    curve: ``r`` itself and its mirror ``2**23 - 1 - r`` (quadrants 2 and 3 repeat them with the other sign).

    >>> k = segment_keys([0], False); int(k.size), int(k[0]), int(k[-1]) == (1 << 24) - 1
    (262144, 0, True)
    """
    parts = [np.zeros(0, np.int64)]
    for s in segments:
        r = (np.int64(s) << OFFSET_BITS) + np.arange(1 << OFFSET_BITS, dtype=np.int64)
        mirror = (1 << QUARTER_BITS) - 1 - r
        parts += [mirror, (1 << QUARTER_BITS) + r] if is_cos else [r, (1 << QUARTER_BITS) + mirror]
    return np.unique(np.concatenate(parts)).astype(np.uint32)


def _write_segments(tables, out_dir, segments):
    """Both key tables where they read the failed ``segments`` (``sincos_failed_segments.npz``: ``segments``,
    ``{op}_keys_at`` and ``{op}_keys``): what the next analysis needs, small enough to bring back."""
    arrays = {"segments": np.array(segments, np.int64)}
    for op in tables:
        keys = segment_keys(segments, op == "cos")
        arrays.update({f"{op}_keys_at": keys, f"{op}_keys": tables[op][keys]})
    write_atomic(os.path.join(out_dir, "sincos_failed_segments.npz"), lambda f: np.savez_compressed(f, **arrays))


def _write_sample(tables, out_dir):
    keys = sample_keys()
    arrays = {"keys": keys, **{f"{op}_keys": tables[op][keys] for op in tables}}
    write_atomic(os.path.join(out_dir, "sincos_keys_sample.npz"), lambda f: np.savez_compressed(f, **arrays))


def probe(gpu, out_dir, *, sweep_start=0, sweep_count=1 << 32, chunk_bits=28, command="", log=None) -> int:
    """Run the three steps on ``gpu`` (``hwcheck.device.gpu.Gpu``'s interface) and write ``out_dir``'s files (the folder
    made if missing); 0 when every count is 0, 1 otherwise. ``WriteError`` (a ``WarpsimError``) naming the folder
    or file that cannot be made."""
    t0 = time.perf_counter()

    def say(msg):
        (log or sys.stderr).write(f"[{time.perf_counter() - t0:6.1f} s] {msg}\n")

    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise WriteError(f"python -m hwcheck.campaigns.sincos_probe: cannot make the folder {out_dir}: "
                         f"{e.strerror or e}") from None
    module = gpu.module(probe_source())
    tables, keys = _key_tables(gpu, module, say)
    _write_sample(tables, out_dir)
    c, derivation = _derive(tables, out_dir, gpu.info.as_dict(), say)
    sweep = _sweep(gpu, module, coefficients() if c is None else c, sweep_start, sweep_count, chunk_bits, say)
    ok = (c is not None and not any(k["exceptions"] for k in keys.values())
          and not any(v["mismatches"] for v in derivation["model_vs_keys"].values())
          and not any(v["mismatches"] for v in sweep.values()))
    data = new_report(command, gpu.info.as_dict())
    data.update(status="pass" if ok else "fail", kind="sincos-probe", key_tables=keys, derivation=derivation,
                sweep_coefficients="derived" if c is not None else "shipped", sweep=sweep,
                wall_s=round(time.perf_counter() - t0, 1))
    write_json_atomic(os.path.join(out_dir, "sincos-probe.json"), data)
    say(f"{'PASS' if ok else 'FAIL'}: report {os.path.join(out_dir, 'sincos-probe.json')}")
    return 0 if ok else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hwcheck.campaigns.sincos_probe", description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for the report, the coefficient file and the sample")
    ap.add_argument("--sweep-start", type=lambda s: int(s, 0), default=0, help="first input of the sweep (default 0)")
    ap.add_argument("--sweep-count", type=lambda s: int(s, 0), default=1 << 32,
                    help="inputs swept per form (default all 2**32; 0: keys and derivation only)")
    ap.add_argument("--chunk-bits", type=int, default=28, help="inputs per sweep chunk: 2**N (default 28)")
    args = ap.parse_args(argv)
    try:
        gpu = Gpu.open()
        return probe(gpu, args.out, sweep_start=args.sweep_start, sweep_count=args.sweep_count,
                     chunk_bits=args.chunk_bits, command=command_line(argv).replace("hwcheck", "python -m "
                                                                                  "hwcheck.campaigns.sincos_probe", 1))
    except WarpsimError as e:                    # no CuPy or GPU, a compile error, a file that cannot be written
        print(str(e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
