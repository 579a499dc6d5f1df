"""Solving the coefficients of ``MUFU.EX2`` and ``MUFU.LG2`` (``warpsim.isa.sfu_exp``) from a GPU's results.

Each H200 result pins the accumulator ``S`` (``sfu_exp``'s datapath) of its argument ``f`` to an interval:
EX2 at ``x = f * 2**-23`` directly (1.0 at ``2**57``), LG2 through ``|S + k * 2**56|`` before the cut of its
20 lowest bits. :func:`solve` takes, per segment, the least-squares quadratic through the intervals' midpoints
and searches the integers ``(c1, c2)`` around it for the one that leaves the widest range for the offset
``c0 << A0 + B``; then the least ``B`` below one unit of ``c0`` that suits every segment. :func:`derive`
solves both functions and refuses unless the model then gives the H200's result at every probe input.

``python -m warpsim.isa.sfu_exp_derive --from PROBE_DIR [--source JSON] [--out PATH]`` reads a
``python -m hwcheck.campaigns.mufu32_probe`` output folder (:func:`probe_keys`) and writes the coefficient file
(default ``warpsim/isa/data/sfu_exp_sm90.json``, which ``sfu_exp.ex2_coefficients`` and
``sfu_exp.lg2_coefficients`` load).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from numba import njit, prange

from warpsim.files import write_atomic
from warpsim.isa.sfu_exp import (DATA, DATAPATHS, LG2_CUT_BITS, LG2_ONE, OFFSET_BITS, SEGMENT_BITS, mufu_ex2,
                                 mufu_lg2, pack, truncated_square)

__all__ = ["probe_keys", "solve", "derive", "model_results", "model_mismatches", "main"]

_ONE = np.uint32(0x3F800000)       # 1.0f: LG2 gives +0 there, outside the accumulator


def probe_keys(probe_dir: str) -> dict:
    """The H200's results that :func:`derive` solves from, read from a ``hwcheck.campaigns.mufu32_probe`` folder
    (uint32): ``inputs`` and ``results`` per function: EX2 at every sign-magnitude key (``+-f * 2**-23``, 2**24
    inputs), LG2 on exponents 1, 126, 127, 128 and 254 (5 * 2**23 inputs). ``ValueError`` naming what is missing.
    """
    def load(name, key):
        path = os.path.join(probe_dir, f"{name}.npz")
        with np.load(path) as d:
            if key not in d.files:
                raise ValueError(f"{path} has no {key!r}: the probe's hypothesis failed there")
            arr = d[key]
        wide = arr.dtype == np.int64
        return np.cumsum(arr.view(np.uint64 if wide else np.uint32), dtype=np.uint64 if wide else np.uint32)

    f = np.arange(1 << 23, dtype=np.uint32)
    pos = (f.astype(np.float32) * np.float32(2.0 ** -23)).view(np.uint32)      # exact: f < 2**24
    ex2_in = np.concatenate([pos, pos | np.uint32(0x80000000)])
    ex2_out = load("ex2", "ex2_signmag_F23").astype(np.uint32)   # normalised: the x in [0, 1) and (-1, 0] results
    m = np.arange(1 << 23, dtype=np.uint32)
    lg2_in = np.concatenate([(np.uint32(e) << np.uint32(23)) | m for e in (126, 127, 128, 1, 254)])
    lg2_out = np.concatenate([load("lg2", "lg2_126_128"), load("lg2", "lg2_e1"), load("lg2", "lg2_e254")])
    return {"ex2": (ex2_in, ex2_out), "lg2": (lg2_in, lg2_out)}


def _magnitude_bounds(bits):
    """``[lo, hi)`` of the LG2 sums ``|S + k * 2**56|`` (before the cut) that give the result ``bits``."""
    bits = bits.astype(np.int64)
    e, mant = (bits >> 23) & 0xFF, (bits & 0x7FFFFF) | (1 << 23)
    p = np.maximum(e - 127 + LG2_ONE, 23)
    lo = mant << (p - 23)
    hi = lo + (np.int64(1) << np.maximum(p - 23, LG2_CUT_BITS))
    return lo, hi


def _sum_bounds(name, inputs, results):
    """``[lo, hi)`` per argument ``f`` (2**23) of the accumulator ``S`` that the H200's results allow."""
    one = DATAPATHS[name][3]
    lo = np.full(1 << 23, -(1 << 62), np.int64)
    hi = np.full(1 << 23, 1 << 62, np.int64)
    if name == "ex2":
        keep = inputs < np.uint32(0x3F800000)          # x in [0, 1): f is the key itself, 1.0 at 2**57
        f = (inputs[keep].view(np.float32).astype(np.float64) * 2.0 ** 23).astype(np.int64)
        r = (results[keep].astype(np.int64) & 0x7FFFFF) | (1 << 23)
        lo[f], hi[f] = r << (one - 23), (r + 1) << (one - 23)
        return lo, hi
    keep = inputs != _ONE                              # 1.0 is a special case: +0
    inputs, results = inputs[keep], results[keep]
    k = ((inputs >> np.uint32(23)).astype(np.int64) & 0xFF) - 127
    f = (inputs & np.uint32(0x7FFFFF)).astype(np.int64)
    vlo, vhi = _magnitude_bounds(results)
    neg = (results >> np.uint32(31)).astype(bool)
    slo = np.where(neg, -vhi + 1, vlo) - (k << one)             # S + k 2**56 = +-v
    shi = np.where(neg, -vlo + 1, vhi) - (k << one)
    np.maximum.at(lo, f, slo)
    np.minimum.at(hi, f, shi)
    return lo, hi


def _solve_segments(name, lo, hi):
    """Per segment the integers ``(c1, c2)`` near the least-squares quadratic through the allowed sums for
    which an offset ``A = c0 << A0 + B`` fits every argument; then the least ``B`` below one unit of ``c0``."""
    c0_shift, c1_shift, sign, _ = DATAPATHS[name]
    u = np.arange(1 << OFFSET_BITS, dtype=np.int64)
    sq = _squares()
    found = []
    for seg in range(1 << SEGMENT_BITS):
        slo, shi = lo[seg << OFFSET_BITS:(seg + 1) << OFFSET_BITS], hi[seg << OFFSET_BITS:(seg + 1) << OFFSET_BITS]
        if np.any(shi <= slo):
            raise ValueError(f"{name}: segment {seg}: the H200's results contradict each other under this datapath")
        quad, lin, _ = np.polyfit(u.astype(np.float64), (slo + shi) / 2.0, 2)
        best = None
        for c1 in range(int(round(lin / 2.0 ** c1_shift)) - 1, int(round(lin / 2.0 ** c1_shift)) + 2):
            for c2 in range(int(round(sign * quad)) - 2, int(round(sign * quad)) + 3):
                var = ((c1 * u) << c1_shift) + sign * c2 * sq
                alo, ahi = int((slo - var).max()), int((shi - var).min())
                if ahi > alo and (best is None or ahi - alo > best[3] - best[2]):
                    best = (c1, c2, alo, ahi)
        if best is None:
            raise ValueError(f"{name}: segment {seg}: no quadratic of this datapath gives the H200's results")
        found.append(best)
    unit = 1 << c0_shift
    bias = max(alo % unit for _, _, alo, _ in found)
    c0 = [-((bias - alo) // unit) for _, _, alo, _ in found]                      # ceil((alo - bias) / unit)
    bad = [s for s, (c, (_, _, _, ahi)) in enumerate(zip(c0, found)) if (c << c0_shift) + bias >= ahi]
    if bad:
        raise ValueError(f"{name}: no one constant B suits every segment (segments {bad[:8]})")
    return {"bias": bias, "c0": c0, "c1": [b[0] for b in found], "c2": [b[1] for b in found]}


def _squares():
    u = np.arange(1 << OFFSET_BITS, dtype=np.int64)
    out = np.empty_like(u)
    _squares_kernel(u, out)
    return out


@njit(cache=True)
def _squares_kernel(u, out):
    for i in range(u.size):
        out[i] = truncated_square(u[i])


@njit(cache=True, parallel=True)
def _apply(is_lg2, x, t, out):
    # a flag, not the function: a cached kernel with a function in its signature cannot be reloaded
    for i in prange(x.size):
        out[i] = mufu_lg2(x[i], t) if is_lg2 else mufu_ex2(x[i], t)


def model_results(name: str, inputs: np.ndarray, coeffs: np.ndarray) -> np.ndarray:
    """``mufu_{name}`` (``name`` ``ex2`` or ``lg2``) with ``coeffs`` (:func:`pack`'s layout) on every input.

    >>> from warpsim.isa.sfu_exp import ex2_coefficients, lg2_coefficients
    >>> [hex(int(v)) for v in model_results("lg2", np.array([0x40000000], np.uint32), lg2_coefficients())]
    ['0x3f800000']
    """
    out = np.empty(inputs.size, np.uint32)
    _apply(name != "ex2", np.ascontiguousarray(inputs, np.uint32), coeffs, out)
    return out


def model_mismatches(name: str, inputs: np.ndarray, results: np.ndarray, coeffs: np.ndarray) -> np.ndarray:
    """The indices where ``mufu_{name}`` with ``coeffs`` does not give ``results``.

    >>> from warpsim.isa.sfu_exp import ex2_coefficients
    >>> model_mismatches("ex2", np.array([0x3F800000], np.uint32), np.array([0x40000000], np.uint32),
    ...                  ex2_coefficients()).size
    0
    """
    return np.flatnonzero(model_results(name, inputs, coeffs) != results)


def solve(name: str, inputs: np.ndarray, results: np.ndarray) -> dict:
    """One function's coefficients (``{"bias", "c0", "c1", "c2"}``, ints) from results at every argument:
    EX2 the results for ``x = f * 2**-23`` (all ``f``), LG2 for whole exponents (all mantissas);
    ``ValueError`` naming the segment where no quadratic of the datapath fits. Unchecked: :func:`derive`."""
    return _solve_segments(name, *_sum_bounds(name, inputs, results))


def derive(keys: dict) -> dict:
    """Both functions' coefficients (``{"ex2": {"bias", "c0", "c1", "c2"}, "lg2": ...}``, ints) solved from
    :func:`probe_keys`; ``ValueError`` unless the model then gives the H200's result on every input there."""
    out = {}
    for name in ("ex2", "lg2"):
        inputs, results = keys[name]
        coeffs = solve(name, inputs, results)
        bad = model_mismatches(name, inputs, results, pack(coeffs))
        if bad.size:
            pairs = [f"{int(inputs[i]):08x}->{int(results[i]):08x}" for i in bad[:4]]
            raise ValueError(f"{name}: the solved model misses {bad.size} of {inputs.size} H200 results: {pairs}")
        out[name] = coeffs
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m warpsim.isa.sfu_exp_derive", description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="probe", required=True,
                    help="a `python -m hwcheck.campaigns.mufu32_probe` output folder")
    ap.add_argument("--source", default="", help="JSON: how the probe was run (command, GPU, driver, date)")
    ap.add_argument("--out", default=DATA, help=f"the coefficients file to write (default: {DATA})")
    args = ap.parse_args(argv)
    try:
        keys = probe_keys(args.probe)
        coeffs = derive(keys)
    except (OSError, ValueError) as e:
        print(f"python -m warpsim.isa.sfu_exp_derive: {e}", file=sys.stderr)
        return 2
    doc = {"source": json.loads(args.source) if args.source else {},
           "derived_by": ("python -m warpsim.isa.sfu_exp_derive --from PROBE_DIR "
                          "(the probe: python -m hwcheck.campaigns.mufu32_probe)"),
           "checked": {name: f"the model gives the H200's result on all {keys[name][0].size} probe inputs"
                       for name in coeffs},
           **coeffs}
    text = json.dumps(doc, indent=1) + "\n"
    write_atomic(args.out, lambda f: f.write(text.encode()))
    biases = ", ".join(f"{name} B = {c['bias']:#x}" for name, c in coeffs.items())
    print(f"wrote {args.out}: 64 segments of (c0, c1, c2) per function; {biases}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
