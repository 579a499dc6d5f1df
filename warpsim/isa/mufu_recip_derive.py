"""Solving the coefficients of ``MUFU.RCP``/``RSQ``/``SQRT`` (``warpsim.isa.mufu_recip``) from a GPU's results.

The H200's results at the keys (:func:`reference_inputs`: one binade, two for RSQ and SQRT) decide every
other input's. :func:`derive` solves one function's coefficients from them: per segment a least-squares
start, then the nearest ``(c1, c2)`` for which an integer ``c0 << a0 + bias`` puts every key's ``sum`` into
the range its result allows, then the one ``bias`` that all segments share.

``python -m warpsim.isa.mufu_recip_derive --derive-from PROBE_DIR_OR_NPZ [--out PATH]`` reads the key tables
from a ``python -m hwcheck.campaigns.mufu32_probe`` folder or a ``warpsim.isa.mufu32`` npz file, derives the three
functions, refuses unless the model then equals the given results at every key, and writes the coefficient
file (default ``warpsim/isa/data/mufu_recip_sm90.json``, which ``mufu_recip.recip_tables`` loads).

>>> from warpsim.isa.mufu_recip import recip_tables
>>> [hex(int(v)) for v in model_results("rcp", recip_tables()[0])[[0, -1]]]     # 1/1.0, 1/(2 - 2**-23)
['0x3f800000', '0x3f000001']
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict

import numpy as np
from numba import njit, prange

from warpsim.files import write_atomic
from warpsim.isa import mufu32
from warpsim.isa.mufu_recip import (DATA, DATAPATHS, RECIP_NAMES, mufu_rcp, mufu_rsq, mufu_sqrt, pack,
                                    square_truncated)

__all__ = ["reference_inputs", "key_results", "derive", "model_results", "main"]

_MANT = 0x7FFFFF                        # an f32's 23 mantissa bits


def reference_inputs(name: str) -> np.ndarray:
    """The inputs whose results decide every other: ``x`` in [1, 2) (RCP), in [1, 4) (RSQ, SQRT), in order.

    >>> [hex(int(v)) for v in reference_inputs("sqrt")[[0, -1]]]
    ['0x3f800000', '0x407fffff']
    """
    return np.uint32(0x3F800000) + np.arange(DATAPATHS[name].keys, dtype=np.uint32)


def key_results(name: str, table: np.ndarray) -> np.ndarray:
    """The results at :func:`reference_inputs` from a ``warpsim.isa.mufu32`` key table (``build_tables``'s
    layout: RCP ``(e_in + e_out - 253) << 23 | mantissa`` by mantissa; RSQ ``(2 e_out + e_in - 379)``, SQRT
    ``(2 e_out - e_in - 126)`` in the same place, by ``(e_in & 1) << 23 | mantissa``)."""
    t = np.asarray(table, dtype=np.int64)
    if t.size != DATAPATHS[name].keys:
        raise ValueError(f"{name}: a key table of {t.size} entries, not {DATAPATHS[name].keys}")
    tv, mant = t >> 23, t & _MANT
    if name == "rcp":
        eo = 126 + tv                                    # e_in = 127
    else:
        e = np.where(np.arange(t.size) < (1 << 23), 127, 128)
        key = ((e & 1) << 23) | (np.arange(t.size) & _MANT)
        tv, mant = t[key] >> 23, t[key] & _MANT
        eo = (379 + tv - e) >> 1 if name == "rsqrt" else (126 + tv + e) >> 1
    return ((eo << 23) | mant).astype(np.uint32)


@njit(cache=True)
def _bounds(significands, carries, first, lead, a1, a2, s1, s2, sq_in, sq_out, c1, c2):
    """The range ``[lo, hi)`` of ``c0 << a0 + bias`` that gives every ``xl >= first`` of one segment its result
    (``lo >= hi``: none)."""
    lo, hi = -(np.int64(1) << 62), np.int64(1) << 62
    for xl in range(first, significands.size):
        g = s1 * ((c1 * xl) << a1) + s2 * ((c2 * (square_truncated(xl << sq_in) >> sq_out)) << a2)
        shift = lead - 23 + carries[xl]
        lo = max(lo, (np.int64(significands[xl]) << shift) - g)
        hi = min(hi, (np.int64(significands[xl] + 1) << shift) - g)
        if lo >= hi:
            break
    return lo, hi


def _exact(name: str, index: int) -> bool:
    """The keys outside the polynomial: RSQ at ``x = 1`` (``4**n``)."""
    return name == "rsqrt" and index == 0


def derive(name: str, results: np.ndarray, window: int = 4) -> tuple:
    """``(bias, coefficients)`` (an int and a ``(segments, 3)`` int64 array) with which the datapath of ``name``
    gives ``results`` (the H200's, at :func:`reference_inputs`); ``ValueError`` where no coefficients within
    ``window`` of the least-squares start fit a segment, or no one bias fits all segments."""
    dp = DATAPATHS[name]
    a0, a1, a2 = dp.term_shifts
    s1, s2 = dp.term_signs
    r = np.asarray(results, dtype=np.int64)
    sig, exp = (r & _MANT) | (1 << 23), (r >> 23) & 0xFF
    carry = exp - exp[1]                                 # 1 where the result is one binade up (1.0)
    if not np.all((carry == 0) | (carry == 1)):
        raise ValueError(f"{name}: the results at [1, {1 << (1 + dp.parity)}) span more than two binades")
    xl = np.arange(1 << dp.low_bits)
    squares = np.array([square_truncated(int(v) << dp.square_shifts[0]) for v in xl], np.int64)
    squares >>= dp.square_shifts[1]
    columns = np.stack([np.ones(xl.size), s1 * xl * 2.0 ** a1, s2 * squares * 2.0 ** a2], 1)
    scale = np.abs(columns).max(0)
    ranges, c12 = [], []
    for seg in range(dp.segments):
        part = slice(seg << dp.low_bits, (seg + 1) << dp.low_bits)
        first = 1 if _exact(name, part.start) else 0
        target = (sig[part] + 0.5) * 2.0 ** (dp.lead - 23 + carry[part])
        start, *_ = np.linalg.lstsq(columns[first:] / scale, target[first:] / 2.0 ** dp.lead, rcond=None)
        start = np.rint(start * 2.0 ** dp.lead / scale).astype(np.int64)
        tries = sorted(((d1, d2) for d1 in range(-window, window + 1) for d2 in range(-window, window + 1)),
                       key=lambda d: (abs(d[0]) + abs(d[1]), d))
        for d1, d2 in tries:
            lo, hi = _bounds(sig[part], carry[part], first, dp.lead, a1, a2, s1, s2, *dp.square_shifts,
                             int(start[1] + d1), int(start[2] + d2))
            if lo < hi:
                break
        else:
            raise ValueError(f"{name}: segment {seg}: no (c1, c2) within {window} of {start[1:].tolist()} fits")
        ranges.append((lo, hi))
        c12.append((int(start[1] + d1), int(start[2] + d2)))
    bias = _shared_bias(name, ranges, 1 << a0)
    c0 = [(lo + (bias - lo) % (1 << a0) - bias) >> a0 for lo, _ in ranges]
    return bias, np.array([(c, *c12[i]) for i, c in enumerate(c0)], np.int64)


def _shared_bias(name: str, ranges, unit: int) -> int:
    """The least ``b`` in [0, unit) such that every range holds a number ``== b (mod unit)``."""
    def fits(b):
        return all(lo + (b - lo) % unit < hi for lo, hi in ranges)
    for b in sorted({lo % unit for lo, _ in ranges}):     # the least such b is some range's lower end
        if fits(b):
            return b
    raise ValueError(f"{name}: no one bias fits every segment (the datapath's shape does not hold)")


@njit(cache=True, parallel=True)
def _all(code, x, t, out):
    # an index (rcp, rsqrt, sqrt), not the function: a cached kernel with a function in its signature cannot
    # be reloaded in another process
    for i in prange(x.size):
        out[i] = mufu_rcp(x[i], t) if code == 0 else (mufu_rsq(x[i], t) if code == 1 else mufu_sqrt(x[i], t))


_MODELS = ("rcp", "rsqrt", "sqrt")


def model_results(name: str, t: np.ndarray) -> np.ndarray:
    """The model's results at :func:`reference_inputs` with coefficient array ``t``."""
    x = reference_inputs(name)
    out = np.empty(x.size, np.uint32)
    _all(_MODELS.index(name), x, np.ascontiguousarray(t, dtype=np.uint32), out)
    return out


def _key_tables(path: str) -> tuple:
    """``(tables, source)``: the three key tables from a ``hwcheck.campaigns.mufu32_probe`` folder or a
    ``warpsim.isa.mufu32`` npz file (the file formats are mufu32's), and what is known of the GPU run behind them."""
    if os.path.isdir(path):
        tables = mufu32.build_tables(path)
        return {name: tables[name] for name in RECIP_NAMES}, {}
    return dict(zip(RECIP_NAMES, mufu32.key_tables(RECIP_NAMES, path))), mufu32.table_source(path)


def _json(out: dict) -> str:
    """``out`` as JSON, one segment's coefficients a line."""
    parts = []
    for key, value in out.items():
        if key in RECIP_NAMES:
            rows = ",\n    ".join(json.dumps(row) for row in value["coefficients"])
            parts.append(f'  "{key}": {{"datapath": {json.dumps(value["datapath"])}, "bias": {value["bias"]},\n'
                         f'   "coefficients": [\n    {rows}]}}')
        else:
            parts.append(f'  "{key}": {json.dumps(value)}')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m warpsim.isa.mufu_recip_derive", description=__doc__.split("\n")[0])
    ap.add_argument("--derive-from", dest="source", required=True,
                    help="a `python -m hwcheck.campaigns.mufu32_probe` output folder, or an npz of mufu32 key tables")
    ap.add_argument("--out", default=DATA, help=f"the coefficient file to write (default: {DATA})")
    args = ap.parse_args(argv)
    try:
        tables, probe = _key_tables(args.source)
        out = {"source": {"derived_from": os.path.basename(os.path.normpath(args.source)),
                          "command": "python -m warpsim.isa.mufu_recip_derive --derive-from SOURCE", "probe": probe}}
        for name in RECIP_NAMES:
            want = key_results(name, tables[name])
            bias, coefficients = derive(name, want)
            bad = np.flatnonzero(model_results(name, pack(bias, coefficients.tolist())) != want)
            if bad.size:
                raise ValueError(f"{name}: the derived model differs at {bad.size} keys, first x = "
                                 f"{int(reference_inputs(name)[bad[0]]):#010x}")
            out[name] = {"datapath": asdict(DATAPATHS[name]), "bias": bias, "coefficients": coefficients.tolist()}
            print(f"{name}: {len(coefficients)} segments, bias {bias:#x}, equal at all {want.size} keys")
        write_atomic(args.out, lambda f: f.write(_json(out).encode()))
    except (OSError, ValueError, KeyError) as e:
        message = e.args[0] if isinstance(e, KeyError) else e
        print(f"python -m warpsim.isa.mufu_recip_derive: {message}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
