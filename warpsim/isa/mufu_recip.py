"""``MUFU.RCP``, ``MUFU.RSQ``, ``MUFU.SQRT`` of sm_90 as the SFU computes them: quadratic interpolation in fixed point.

The model (one :class:`Datapath` per function, :data:`DATAPATHS`). The input's significand ``1.m`` (RSQ and
SQRT: scaled by the exponent's parity into [1, 4)) selects a *segment* by the top ``segment_bits`` of ``m``
(RSQ, SQRT: with the parity above them) and leaves the low bits ``xl``. With the segment's coefficients
``c0, c1, c2`` and the function's one constant ``bias``, in integers::

    sum = (c0 << a0) + s1 * (c1 * xl << a1) + s2 * (c2 * square(xl) << a2) + bias

where ``square`` is :func:`square_truncated` (RCP squares ``xl << 1`` and drops 2 bits of the square). The
result's significand is ``sum`` from its leading one (bit ``lead``; one higher only where the result is 1.0),
truncated to 24 bits; its exponent follows from the input's alone: RCP ``253 - e`` (``254 - e`` at 1.0), RSQ
``126 - k/2``, SQRT ``127 + k/2``, ``k`` the input's unbiased exponent made even downward. RSQ of ``4**n``
is ``2**-n`` exactly, outside the polynomial (whose exponent cannot hold 1.0).

Where it comes from. The datapath's shape (segment bits, term alignments, the truncated squarer, the one
bias) is the one bcarlet/ptx-math found for sm_5x..sm_75 by reverse engineering; on the H200 that published
model gives the H200's result at every key of the three functions (0 mismatches over the 2**23 + 2**24 +
2**24 keys of ``warpsim/isa/data/mufu32_sm90.npz``, checked offline on 2026-12-01; docs/numerics.md). The
coefficients are OURS: :func:`derive` solves them from the H200's results alone (``python -m
warpsim.isa.mufu_recip --derive-from PROBE_DIR_OR_NPZ``): per segment a least-squares start, then the
nearest ``(c1, c2)`` for which an integer ``c0 << a0 + bias`` puts every key's ``sum`` into the range its
result allows, then the one ``bias`` that all segments share. The derivation refuses to write unless the
model then equals the given results at every key; the result is ``data/mufu_recip_sm90.json`` (12 kB).

The coefficient array ``t`` each model takes (uint32, the same type as the other MUFU tables):
``t[0], t[1]`` the bias's low and high words, then ``c0, c1, c2`` of segment 0, 1, ...

>>> t = recip_tables()
>>> hex(mufu_rcp(0x40000000, t[0])), hex(mufu_rsq(0x40800000, t[1])), hex(mufu_sqrt(0x40800000, t[2]))
('0x3f000000', '0x3f000000', '0x40000000')
>>> square_truncated(3), 0x1FFFF ** 2 - square_truncated(0x1FFFF)     # what the dropped columns held
(0, 4456449)
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass

import numpy as np
from numba import njit, prange

__all__ = ["Datapath", "DATAPATHS", "RECIP_NAMES", "DATA", "square_truncated", "mufu_rcp", "mufu_rsq", "mufu_sqrt",
           "mufu_rcp64h", "f64_rcp_approx_ftz", "rcp64h_range", "recip_tables", "reference_inputs", "key_results",
           "derive", "model_results", "main"]

_NAN = np.uint32(0x7FFFFFFF)           # the canonical NaN every MUFU returns
_INF = np.uint32(0x7F800000)
_SIGN = np.uint32(0x80000000)
_MANT = 0x7FFFFF
_SQUARE_KEPT_FROM = 19                 # the squarer's partial products keep columns 19 and up
DATA = os.path.join(os.path.dirname(__file__), "data", "mufu_recip_sm90.json")


@dataclass(frozen=True)
class Datapath:
    """One function's fixed-point datapath (the module docstring's ``sum``)."""
    name: str
    segment_bits: int          # mantissa bits that select the segment (RSQ, SQRT: the parity above them)
    parity: bool               # the input's exponent parity selects a half of the segments
    term_shifts: tuple         # (a0, a1, a2): where c0, c1*xl, c2*square(xl) enter the sum
    term_signs: tuple          # (s1, s2): the signs of the c1 and c2 terms
    square_shifts: tuple       # (in, out): square(xl << in) >> out
    lead: int                  # the sum's bit that holds the result's leading one

    @property
    def low_bits(self) -> int:
        """The bits of ``xl``."""
        return 23 - self.segment_bits

    @property
    def segments(self) -> int:
        return 1 << (self.segment_bits + self.parity)

    @property
    def keys(self) -> int:
        """The inputs of one binade (two for RSQ, SQRT) that together decide every result."""
        return 1 << (23 + self.parity)


DATAPATHS = {
    "rcp": Datapath("rcp", 7, False, (30, 17, 0), (-1, 1), (1, 2), 55),
    "rsqrt": Datapath("rsqrt", 6, True, (31, 17, 0), (-1, 1), (0, 0), 56),
    "sqrt": Datapath("sqrt", 6, True, (33, 18, 0), (1, -1), (0, 0), 58),
}
RECIP_NAMES = tuple(DATAPATHS)


@njit(cache=True)
def square_truncated(x):
    """``x * x`` (``x < 2**18``) as a folded squarer sums it, with every partial-product bit in the columns below
    19 dropped before the sum: so ``x * x - dropped``, never more than ``x * x``."""
    x = np.int64(x)
    low = (np.int64(1) << _SQUARE_KEPT_FROM) - 1
    dropped = x & 0x3FF                                  # the diagonal, x_i * 2**(2i) for i <= 9: bit i to 2i
    dropped = (dropped | (dropped << 8)) & 0x00FF00FF
    dropped = (dropped | (dropped << 4)) & 0x0F0F0F0F
    dropped = (dropped | (dropped << 2)) & 0x33333333
    dropped = (dropped | (dropped << 1)) & 0x55555555
    for i in range(9):                                   # row i: x_i * x_j * 2**(i+j+1) for j > i
        dropped += (((x >> (i + 1)) << (2 * i + 2)) & low) & -((x >> i) & 1)
    return x * x - dropped


def _shape(dp: Datapath) -> tuple:
    """The datapath as the kernels read it (a tuple of ints, constant to Numba)."""
    return (dp.low_bits, *dp.term_shifts, *dp.term_signs, *dp.square_shifts, dp.lead)


_RCP, _RSQ, _SQRT = (_shape(DATAPATHS[name]) for name in RECIP_NAMES)


@njit(cache=True)
def _sum(t, segment, xl, shape):
    """The datapath's ``sum`` for one segment and ``xl`` (int64; every term below 2**59)."""
    low_bits, a0, a1, a2, s1, s2, sq_in, sq_out, lead = shape
    j = 2 + 3 * segment
    bias = np.int64(t[0]) | (np.int64(t[1]) << 32)
    c1_term = (np.int64(t[j + 1]) * xl) << a1
    c2_term = (np.int64(t[j + 2]) * (square_truncated(xl << sq_in) >> sq_out)) << a2
    return (np.int64(t[j]) << a0) + s1 * c1_term + s2 * c2_term + bias


@njit(cache=True)
def _significand(t, odd, m, shape):
    """``(carry, mantissa)``: the result's 23 mantissa bits from the sum's leading one, which sits at bit
    ``lead + carry`` (``carry`` 1 only where the result is a power of two above the usual binade)."""
    low_bits, lead = shape[0], shape[8]
    v = _sum(t, (odd << (23 - low_bits)) | (m >> low_bits), m & ((np.int64(1) << low_bits) - 1), shape)
    carry = v >> (lead + 1)
    return carry, (v >> (lead - 23 + carry)) & _MANT


@njit(cache=True)
def mufu_rcp(a, t):
    """``MUFU.RCP``: ``1/x``, odd in the sign; subnormal inputs read as zero, results below 2**-126 are zero."""
    a = np.uint32(a)
    s, e, m = a & _SIGN, np.int64((a >> 23) & 0xFF), np.int64(a & _MANT)
    if e == 0xFF:
        return _NAN if m else s
    if e == 0:
        return s | _INF
    carry, mant = _significand(t, np.int64(0), m, _RCP)     # carry: x = 2**k, the result 1.0 * 2**-k
    eo = 253 + carry - e
    return s if eo <= 0 else np.uint32(s | (eo << 23) | mant)


@njit(cache=True)
def _half_exponent(e):
    """``(odd, k/2)``: ``odd`` 1 where the unbiased exponent ``e - 127`` is odd; ``k`` it made even downward."""
    k = e - 127
    odd = k & 1
    return odd, (k - odd) >> 1


@njit(cache=True)
def mufu_rsq(a, t):
    """``MUFU.RSQ``: ``1/sqrt(x)``; ``-0 -> -inf``, negative inputs NaN, subnormal inputs read as zero."""
    a = np.uint32(a)
    s, e, m = a & _SIGN, np.int64((a >> 23) & 0xFF), np.int64(a & _MANT)
    if e == 0xFF:
        return _NAN if m or s else np.uint32(0)
    if e == 0:
        return s | _INF
    if s:
        return _NAN
    odd, half = _half_exponent(e)
    if odd == 0 and m == 0:                              # x = 4**n: 2**-n exactly
        return np.uint32((127 - half) << 23)
    return np.uint32(((126 - half) << 23) | _significand(t, odd, m, _RSQ)[1])


@njit(cache=True)
def mufu_sqrt(a, t):
    """``MUFU.SQRT``: ``sqrt(x)``; ``-0 -> -0``, negative inputs NaN, subnormal inputs read as zero."""
    a = np.uint32(a)
    s, e, m = a & _SIGN, np.int64((a >> 23) & 0xFF), np.int64(a & _MANT)
    if e == 0xFF:
        return _NAN if m or s else _INF
    if e == 0:
        return s
    if s:
        return _NAN
    odd, half = _half_exponent(e)
    return np.uint32(((127 + half) << 23) | _significand(t, odd, m, _SQRT)[1])


# -- rcp.approx.ftz.f64: UNPROVEN on sm_90 (the PTX interpreter refuses it; docs/numerics.md) -------------------

@njit(cache=True)
def mufu_rcp64h(h, t):
    """``MUFU.RCP64H`` as modelled (UNPROVEN on sm_90): the high word of ``1/x`` from the high word ``h`` of an
    f64 ``x``, through the RCP datapath (``t``: its coefficients) on the 20 fraction bits ``h`` holds.

    The result's mantissa is RCP's for the f32 ``1.f`` (``f`` the 20 bits, 3 zero bits below them) cut to its top
    20 bits; ``+-0`` and subnormal inputs give ``+-inf``, ``+-inf`` gives ``+-0``, NaN the high word
    ``0x7FFFFFFF``, results below 2**-1022 ``+-0``. The published sm_5x model (bcarlet/ptx-math) has this
    shape; ``hwcheck sweep --forms rcp.approx.ftz.f64`` on an H200 is what would prove it there.
    """
    h = np.uint32(h)
    s, e, f = h & _SIGN, np.int64((h >> 20) & 0x7FF), np.int64(h & 0xFFFFF)
    if e == 0x7FF:
        return _NAN if f else s
    if e == 0:
        return s | np.uint32(0x7FF00000)
    carry, mant = _significand(t, np.int64(0), f << 3, _RCP)
    eo = 2045 + carry - e                               # 1/x = 2**(carry - 1) * 1.mant * 2**-(e - 1023)
    return s if eo <= 0 else np.uint32(s | (eo << 20) | (mant >> 3))


@njit(cache=True)
def f64_rcp_approx_ftz(a, t):
    """``rcp.approx.ftz.f64`` as ptxas 13 compiles it for sm_90 (UNPROVEN): only the input's high word is read;
    the result is ``MUFU.RCP64H`` of it over a zero low word. ``a``: the f64 bits (uint64)."""
    return np.uint64(mufu_rcp64h(np.uint32(np.uint64(a) >> np.uint64(32)), t)) << np.uint64(32)


@njit(cache=True, parallel=True)
def _range64h(start, t, out):
    for i in prange(out.size):
        out[i] = mufu_rcp64h(np.uint32((start + i) & 0xFFFFFFFF), t)


def rcp64h_range(start: int, out: np.ndarray) -> np.ndarray:
    """``out[i]`` = the modelled result's high word for the input high word ``start + i`` (mod 2**32); the host
    half of ``hwcheck sweep --forms rcp.approx.ftz.f64``.

    >>> [hex(int(v)) for v in rcp64h_range(0x40000000, np.empty(1, np.uint32))]    # 1/2.0 = 0.5
    ['0x3fe00000']
    """
    _range64h(np.int64(start), recip_tables()[0], out)
    return out


_MODELS = {"rcp": mufu_rcp, "rsqrt": mufu_rsq, "sqrt": mufu_sqrt}
_LOADED: dict = {}


def recip_tables(path: str = DATA) -> tuple:
    """The coefficient arrays of ``rcp, rsqrt, sqrt`` (uint32, the layout above), loaded once per process;
    ``FileNotFoundError`` naming the file and the command that writes it."""
    if path not in _LOADED:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: the MUFU.RCP/RSQ/SQRT coefficients are missing; "
                                    f"`python -m warpsim.isa.mufu_recip --derive-from PROBE_DIR` writes them")
        with open(path) as f:
            data = json.load(f)
        for name in RECIP_NAMES:
            if data[name]["datapath"] != json.loads(json.dumps(asdict(DATAPATHS[name]))):
                raise ValueError(f"{path}: {name}: coefficients for another datapath than {DATAPATHS[name]}")
        _LOADED[path] = tuple(_pack(int(data[name]["bias"]), data[name]["coefficients"]) for name in RECIP_NAMES)
    return _LOADED[path]


def _pack(bias: int, coefficients) -> np.ndarray:
    t = np.array([bias & 0xFFFFFFFF, bias >> 32] + [int(c) for row in coefficients for c in row], np.uint32)
    return t


# -- the H200's results at the keys, and the derivation ------------------------------------------------------

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
def _all(fn, x, t, out):
    for i in prange(x.size):
        out[i] = fn(x[i], t)


def model_results(name: str, t: np.ndarray) -> np.ndarray:
    """The model's results at :func:`reference_inputs` with coefficient array ``t``."""
    x = reference_inputs(name)
    out = np.empty(x.size, np.uint32)
    _all(_MODELS[name], x, np.ascontiguousarray(t, dtype=np.uint32), out)
    return out


def _key_tables(path: str) -> tuple:
    """``(tables, source)``: the three key tables from a ``hwcheck.mufu32_probe`` folder or a
    ``warpsim.isa.mufu32`` npz file, and what is known of the GPU run behind them."""
    from warpsim.isa import mufu32          # the file formats are mufu32's (which builds on this module)
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
    import argparse
    ap = argparse.ArgumentParser(prog="python -m warpsim.isa.mufu_recip", description=__doc__.split("\n")[0])
    ap.add_argument("--derive-from", dest="source", required=True,
                    help="a `python -m hwcheck.mufu32_probe` output folder, or an npz of mufu32 key tables")
    ap.add_argument("--out", default=DATA, help=f"the coefficient file to write (default: {DATA})")
    args = ap.parse_args(argv)
    from warpsim.files import write_atomic
    try:
        tables, probe = _key_tables(args.source)
        out = {"source": {"derived_from": os.path.basename(os.path.normpath(args.source)),
                          "command": "python -m warpsim.isa.mufu_recip --derive-from SOURCE", "probe": probe}}
        for name in RECIP_NAMES:
            want = key_results(name, tables[name])
            bias, coefficients = derive(name, want)
            bad = np.flatnonzero(model_results(name, _pack(bias, coefficients.tolist())) != want)
            if bad.size:
                raise ValueError(f"{name}: the derived model differs at {bad.size} keys, first x = "
                                 f"{int(reference_inputs(name)[bad[0]]):#010x}")
            out[name] = {"datapath": asdict(DATAPATHS[name]), "bias": bias, "coefficients": coefficients.tolist()}
            print(f"{name}: {len(coefficients)} segments, bias {bias:#x}, equal at all {want.size} keys")
        write_atomic(args.out, lambda f: f.write(_json(out).encode()))
    except (OSError, ValueError, KeyError) as e:
        print(f"python -m warpsim.isa.mufu_recip: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
