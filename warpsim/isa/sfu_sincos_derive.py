"""Solving the coefficients of ``MUFU.SIN``/``MUFU.COS`` (``warpsim.isa.sfu_sincos``) from results measured on a GPU.

Each measured result pins the datapath's fixed-point ``sum`` (``sfu_sincos``, step 3) to an interval: a
result ``2**(e-127) * 1.f`` comes from exactly the sums whose leading 24 bits, normalised to ``2**56``, are
``1.f`` (:func:`sum_interval`). In a segment every observation ``(u, [lo, hi))`` is a linear constraint on
the integer triple ``(c0, c1, c2)``:

    lo <= c0 * 2**31 + c1 * (u << 19) - c2 * approx_square(u) < hi

:func:`derive_coefficients` solves each segment: a least-squares fit to the interval midpoints gives a
centre; a search over ``c2`` and ``c1`` around it (widened until something fits) intersects the bounds
every observation puts on ``c0`` (Numba, stopping at the first empty intersection). Every triple found
satisfies every observation; the one nearest the fit is kept and the number of others reported (with all
2**25 keys of a GPU each segment's triples give the same results at every key, so any one is the model).
Observations that break the structure itself (a sign the quadrant rule does not give, a NaN for a finite
``t``, a result above 1) are counted and make the derivation fail.

``python -m warpsim.isa.sfu_sincos_derive --from FILE.npz [--write PATH]`` derives from a file holding
either key tables (``sin_keys``/``cos_keys``: the result at every key for ``t >= 0``, 2**25 each, as
``hwcheck.campaigns.sincos_probe`` writes them) or measured inputs (``inputs`` with ``sin`` and/or ``cos``), checks
the model with the result against every observation, prints a line per segment, and with ``--write``
writes the coefficient file (JSON: the rows, how they were obtained, the counts).

>>> lo, hi = sum_interval(np.array([0x3F800000, 0x3F000000, 0], np.uint32))    # 1.0, 0.5, 0
>>> [int(v) for v in lo] == [1 << 56, 1 << 55, 0] and [int(v) for v in hi] == [(1 << 56) + (1 << 33), (1 << 55) + (1 << 32), 1]
True
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from numba import njit, prange

from warpsim.isa.fparith import f32_mul
from warpsim.isa.rounding import RZ
from warpsim.isa.sfu_sincos import (C0_SHIFT, C1_SHIFT, INV_TWO_PI, KEY_BITS, OFFSET_BITS, ONE_BIT, SEGMENTS,
                                    approx_square, mufu_from_keys, quarter_of, sincos_key)

__all__ = ["DerivationError", "Observations", "observations_from_inputs", "observations_from_keys", "sum_interval",
           "derive_coefficients", "count_mismatches", "coefficient_file_text", "main"]

_FRAC_SHIFT = ONE_BIT - 23
_WINDOWS = ((64, 8), (512, 32), (4096, 128))     # half-widths in c1 and c2 searched around the fit, in turn


class DerivationError(ValueError):
    """The data does not fit the datapath: the message says where; ``segments`` lists the segments that failed
    (empty when results broke the structure before any segment was solved)."""

    def __init__(self, message, segments=()):
        super().__init__(message)
        self.segments = list(segments)


class Observations:
    """Measured results reduced to the curve: ``r`` (23 bits), ``mag`` (the result without its sign) and how
    many observations broke the structure (``broken``, the first few in ``broken_first``: text)."""

    def __init__(self, r, mag, broken=0, broken_first=()):
        self.r = np.asarray(r, np.int64)
        self.mag = np.asarray(mag, np.uint32)
        self.broken = int(broken)
        self.broken_first = list(broken_first)

    def __add__(self, other):
        return Observations(np.concatenate([self.r, other.r]), np.concatenate([self.mag, other.mag]),
                            self.broken + other.broken, self.broken_first + other.broken_first)


@njit(cache=True, parallel=True)
def _reduce_keys(keys, neg_t, results, is_cos, r, ok):
    for i in prange(keys.size):
        rr, neg = quarter_of(np.int64(keys[i]), is_cos)
        if not is_cos:
            neg ^= neg_t[i]
        y = results[i]
        r[i] = rr
        ok[i] = (y >> 31) == neg and (y & 0x7FFFFFFF) <= 0x3F800000


def _observe(keys, neg_t, results, is_cos, describe):
    r = np.empty(keys.size, np.int64)
    ok = np.empty(keys.size, np.bool_)
    _reduce_keys(keys.astype(np.int64), neg_t.astype(np.int64), results, is_cos, r, ok)
    bad = np.flatnonzero(~ok)
    first = [f"{describe(i)} -> 0x{int(results[i]):08x}" for i in bad[:8]]
    return Observations(r[ok], results[ok] & np.uint32(0x7FFFFFFF), bad.size, first)


def observations_from_keys(table: np.ndarray, is_cos: bool, keys: np.ndarray | None = None) -> Observations:
    """A key table as observations: ``table[i]`` the GPU's result for a ``t >= 0`` with key ``keys[i]``
    (default: ``i``, a table over every key)."""
    name = "cos" if is_cos else "sin"
    keys = np.arange(table.size, dtype=np.int64) if keys is None else np.asarray(keys, np.int64)
    return _observe(keys, np.zeros(table.size, np.int64), np.asarray(table, np.uint32), is_cos,
                    lambda i: f"{name} key 0x{int(keys[i]):07x}")


@njit(cache=True, parallel=True)
def _t_of(x, t):
    for i in prange(x.size):
        t[i] = f32_mul(x[i], INV_TWO_PI, RZ, False, False)


@njit(cache=True, parallel=True)
def _keys_of(t, keys):
    for i in prange(t.size):
        keys[i] = sincos_key(t[i])


def observations_from_inputs(inputs: np.ndarray, results: np.ndarray, is_cos: bool) -> Observations:
    """``{sin,cos}.approx.f32`` measured at ``inputs``: each reduced through ``FMUL.RZ`` and the key; inputs
    whose ``t`` is infinite or NaN are left out (their result is the NaN, not the curve)."""
    x = np.ascontiguousarray(inputs, np.uint32)
    t = np.empty(x.size, np.uint32)
    _t_of(x, t)
    finite = (t & np.uint32(0x7F800000)) != np.uint32(0x7F800000)
    x, t, y = x[finite], t[finite], np.ascontiguousarray(results, np.uint32)[finite]
    keys = np.empty(t.size, np.int64)
    _keys_of(t, keys)
    name = "cos" if is_cos else "sin"
    return _observe(keys, (t >> np.uint32(31)).astype(np.int64), y, is_cos, lambda i: f"{name}(0x{int(x[i]):08x})")


def sum_interval(mag: np.ndarray):
    """``(lo, hi)``, int64: the sums that give each result magnitude (f32 bits, at most 1.0) are ``lo <= sum < hi``."""
    mag = np.asarray(mag, np.int64)
    e, f = mag >> 23, (mag & 0x7FFFFF) | (1 << 23)
    k = 127 - e                                  # how far the sum was shifted up to normalise it
    lo = np.where(k <= _FRAC_SHIFT, f << np.maximum(_FRAC_SHIFT - k, 0), 0)
    hi = np.where(k <= _FRAC_SHIFT, (f + 1) << np.maximum(_FRAC_SHIFT - k, 0), 0)
    deep = k > _FRAC_SHIFT                       # sums below 2**33: ceil(f / 2**(k - 33))
    if deep.any():
        d = np.minimum(k - _FRAC_SHIFT, 62)
        lo = np.where(deep, -((-f) >> d), lo)
        hi = np.where(deep, -((-(f + 1)) >> d), hi)
    zero = mag == 0
    return np.where(zero, 0, lo), np.where(zero, 1, hi)


@njit(cache=True)
def _square_all(u):
    out = np.empty(u.size, np.int64)
    for i in range(u.size):
        out[i] = approx_square(u[i])
    return out


@njit(cache=True)
def _search(a, b, lo, hi, c1_lo, c1_hi, c2_lo, c2_hi, centre, found):
    """Every feasible triple in the window: rows ``(c0_lo, c0_hi, c1, c2)`` written to ``found`` (its
    length caps them); returns how many triples (c0 values) fit, and the row count."""
    one = np.int64(1) << C0_SHIFT
    total, rows = np.int64(0), 0
    for c2 in range(c2_lo, c2_hi + 1):
        for c1 in range(c1_lo, c1_hi + 1):
            low, high = np.int64(-(1 << 62)), np.int64(1 << 62)
            for i in range(a.size):
                rest = c1 * a[i] - c2 * b[i]
                # lo <= c0 * one + rest <= hi - 1
                l0 = -((rest - lo[i]) // one)     # ceil((lo - rest) / one)
                h0 = (hi[i] - 1 - rest) // one
                if l0 > low:
                    low = l0
                if h0 < high:
                    high = h0
                if low > high:
                    break
            if low <= high and high >= 0:
                low = max(low, np.int64(0))
                total += high - low + 1
                if rows < found.shape[0]:
                    found[rows, 0], found[rows, 1], found[rows, 2], found[rows, 3] = low, high, c1, c2
                rows += 1
    return total, rows


def _solve_segment(u, lo, hi):
    # u: distinct offsets, each with its interval [lo, hi)
    """``(triple, count, why, window)``: the triple nearest the least-squares fit, the number of triples in the
    window ``(c1 half-width, c2 half-width)`` that fit every observation, or ``None`` and why not."""
    order = np.argsort(hi - lo, kind="stable")   # the tightest constraints first: infeasible triples fail fast
    u, lo, hi = u[order], lo[order], hi[order]
    a = u << np.int64(C1_SHIFT)
    b = _square_all(u)
    if u.size < 3:
        return None, 0, f"{u.size} distinct offsets (3 needed)", None
    m = np.stack([np.full(u.size, 2.0 ** C0_SHIFT), a.astype(np.float64), -b.astype(np.float64)], axis=1)
    scale = np.abs(m).max(axis=0)
    scale[scale == 0] = 1.0
    mid = (lo.astype(np.float64) + hi.astype(np.float64)) / 2
    fit = np.linalg.lstsq(m / scale, mid, rcond=None)[0] / scale
    found = np.zeros((4096, 4), np.int64)
    for r1, r2 in _WINDOWS:
        c1c, c2c = int(round(fit[1])), int(round(fit[2]))
        total, rows = _search(a, b, lo, hi, max(c1c - r1, 0), c1c + r1, max(c2c - r2, 0), c2c + r2, fit, found)
        if total:
            break
    else:
        return None, 0, "no integer triple satisfies every observation near the least-squares fit", None
    best, best_d = None, None
    for low, high, c1, c2 in found[:min(rows, found.shape[0])]:
        c0 = int(min(max(round(fit[0]), low), high))
        d = abs(c0 - fit[0]) * 2.0 ** C0_SHIFT + np.abs(m[:, 1:] @ (np.array([c1, c2]) - fit[1:])).max()
        if best_d is None or d < best_d:
            best, best_d = (c0, int(c1), int(c2)), d
    return best, int(total), "", (r1, r2)


def derive_coefficients(obs: Observations):
    """``(coefficients int64[64, 3], per-segment list of dicts: observations, triples that fit, why not)``.

    Raises :class:`DerivationError` (a ``ValueError``) naming the segments where nothing fits, or the results
    that break the structure.
    """
    if obs.broken:
        raise DerivationError(f"{obs.broken} results break the sin/cos structure (sign, NaN or above 1), first: "
                              + ", ".join(obs.broken_first))
    order = np.argsort(obs.r, kind="stable")     # by segment, then offset
    r = obs.r[order]
    lo, hi = sum_interval(obs.mag[order])
    bounds = np.searchsorted(r, np.arange(SEGMENTS + 1, dtype=np.int64) << OFFSET_BITS)
    rows, info, failed, bad = np.zeros((SEGMENTS, 3), np.int64), [], [], []
    for s in range(SEGMENTS):
        part = slice(bounds[s], bounds[s + 1])
        su, slo, shi = r[part] & ((1 << OFFSET_BITS) - 1), lo[part], hi[part]
        n = su.size
        if n:                                    # one interval per offset: intersect repeated ones
            starts = np.flatnonzero(np.r_[True, su[1:] != su[:-1]])
            slo, shi = np.maximum.reduceat(slo, starts), np.minimum.reduceat(shi, starts)
            su = su[starts]
            if (slo >= shi).any():                # two different results, or one no sum gives
                failed.append(f"segment {s}: no sum gives the result(s) at offset 0x{int(su[slo >= shi][0]):05x}")
                bad.append(s)
                info.append({"segment": s, "observations": n, "offsets": int(su.size), "fit": 0, "window": None})
                continue
        triple, count, why, window = _solve_segment(su, slo, shi)
        info.append({"segment": s, "observations": n, "offsets": int(su.size), "fit": count,
                     "window": window})
        if triple is None:
            failed.append(f"segment {s}: {why}")
            bad.append(s)
            continue
        rows[s] = triple
    if failed:
        raise DerivationError("; ".join(failed), bad)
    return rows, info


def count_mismatches(c: np.ndarray, table: np.ndarray, is_cos: bool, keys: np.ndarray | None = None):
    """``(mismatches, first ones as text)`` of the model with ``c`` against a key table: ``table[i]`` the GPU's
    result for a ``t >= 0`` with key ``keys[i]`` (default ``i``: every key)."""
    keys = np.arange(table.size, dtype=np.uint32) if keys is None else np.asarray(keys, np.uint32)
    model = mufu_from_keys(keys, is_cos, c)
    bad = np.flatnonzero(model != table)
    return int(bad.size), [f"key 0x{int(keys[i]):07x}: gpu 0x{int(table[i]):08x} model 0x{int(model[i]):08x}"
                           for i in bad[:8]]


def coefficient_file_text(doc: dict) -> str:
    """The coefficient file's JSON text: ``doc`` indented, its ``coefficients`` one row per line.

    >>> print(coefficient_file_text({"source": {}, "coefficients": [[0, 1, 2], [3, 4, 5]]}), end="")
    {
     "source": {},
     "coefficients": [
      [0, 1, 2],
      [3, 4, 5]
     ]
    }
    """
    head = json.dumps({k: v for k, v in doc.items() if k != "coefficients"}, indent=1)
    rows = ",\n".join(f"  {json.dumps(list(map(int, r)))}" for r in doc["coefficients"])
    return head[:-2] + (",\n" if len(doc) > 1 else "\n") + f' "coefficients": [\n{rows}\n ]\n}}\n'


def _load(path):
    """Observations and a checker from an npz of key tables or of measured inputs."""
    from warpsim.isa.sfu_sincos import sincos_batch
    with np.load(path) as d:
        arrays = {k: d[k] for k in d.files}
    obs, checks = Observations([], []), []
    for op in ("sin", "cos"):
        if f"{op}_keys" in arrays:
            table = arrays[f"{op}_keys"].astype(np.uint32)
            if table.size != 1 << KEY_BITS:
                raise ValueError(f"{path}: {op}_keys has {table.size} entries, not 2**{KEY_BITS}")
            obs += observations_from_keys(table, op == "cos")
            checks.append((op, lambda c, t=table, o=op: count_mismatches(c, t, o == "cos")))
        elif op in arrays and "inputs" in arrays:
            x, y = arrays["inputs"].astype(np.uint32), arrays[op].astype(np.uint32)
            obs += observations_from_inputs(x, y, op == "cos")

            def check(c, x=x, y=y, o=op):
                got = sincos_batch(o, x, c=c)
                bad = np.flatnonzero(got != y)
                return int(bad.size), [f"{o}(0x{int(x[i]):08x}): gpu 0x{int(y[i]):08x} model 0x{int(got[i]):08x}"
                                       for i in bad[:8]]
            checks.append((op, check))
    if not checks:
        raise ValueError(f"{path}: neither sin_keys/cos_keys nor inputs with sin/cos")
    return obs, checks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m warpsim.isa.sfu_sincos_derive", description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="data", required=True, help="npz: sin_keys/cos_keys, or inputs with sin/cos")
    ap.add_argument("--write", metavar="PATH", help="write the coefficient file (JSON) here")
    ap.add_argument("--source", default="", help="JSON: how the data was measured (command, GPU, driver, date)")
    args = ap.parse_args(argv)
    prog = "python -m warpsim.isa.sfu_sincos_derive"
    try:
        obs, checks = _load(args.data)
        c, info = derive_coefficients(obs)
    except (OSError, ValueError, KeyError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    for s in info:
        print(f"segment {s['segment']:2d}: {s['observations']} observations, {s['offsets']} offsets, "
              f"{s['fit']} triples fit within c1 +-{s['window'][0]}, c2 +-{s['window'][1]}; "
              f"{c[s['segment']].tolist()}")
    counts = {}
    for op, check in checks:
        n, first = check(c)
        counts[op] = n
        print(f"{op}: the derived model differs from {n} observations{': ' + ', '.join(first) if n else ''}")
    if args.write:
        from warpsim.files import write_atomic
        doc = {"source": json.loads(args.source) if args.source else {}, "derived_from": os.path.basename(args.data),
               "observations": int(obs.r.size), "segments_with_one_triple": sum(1 for s in info if s["fit"] == 1),
               "mismatches": counts, "coefficients": c.tolist()}
        write_atomic(args.write, lambda f: f.write(coefficient_file_text(doc).encode()))
        print(f"wrote {args.write}")
    return 1 if any(counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
