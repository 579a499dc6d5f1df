"""The 16-bit MUFU approximations, bit-exact on sm_90: ``ex2.approx`` and ``tanh.approx`` on f16/bf16/x2.

PTX specifies ``ex2.approx.f16``, ``ex2.approx.ftz.bf16``, ``tanh.approx.f16`` and ``tanh.approx.bf16``
(and their x2 forms) by error bounds only. A 16-bit input has 65536 patterns, so the GPU's whole
function fits in a table: ``data/mufu16_sm90.npz`` holds one ``uint16[65536]`` per scalar form
(:data:`MUFU16_FORMS`), entry ``x`` the result bits of the input bits ``x``. The models below look
the result up; they claim nothing beyond the table.

How the tables were obtained: ``hwcheck collect`` (``hwcheck/campaigns/mufu.py``) ran the eight forms on an
NVIDIA H200 (sm_90, driver 580.159.04, NVRTC 13.0, 2026-12-01) over every input pattern: a scalar
form on ``x = 0 .. 65535``; an x2 form on the register ``x << 16 | (x ^ 0x8000)`` (``x`` in the upper
half, ``x`` with its sign flipped in the lower half, so each half sees all 65536 patterns). Every
half of every x2 result equals the scalar form's result on that half's input (0 mismatches in
4 × 131072), so the x2 forms are the scalar tables applied per half. ``python -m warpsim.isa.mufu16
--from FILE.npz`` rebuilds the data file from such a collection, and refuses a collection whose x2
halves disagree with its scalar results; ``--check FILE.npz`` compares a new collection with the
shipped tables, every input of every form. On sm_80 (ptxas accepts the f16 forms from sm_75, the bf16
forms from sm_90 only) the same tables are assumed, unproven: docs/numerics.md, "MUFU, 16-bit".

Scalar models (``@njit``, register bits in, result bits out, 16-bit values in the low half):
``f16_ex2_approx``, ``f16x2_ex2_approx``, ``bf16_ex2_approx_ftz``, ``bf16x2_ex2_approx_ftz``,
``f16_tanh_approx``, ``f16x2_tanh_approx``, ``bf16_tanh_approx``, ``bf16x2_tanh_approx``. Numba
freezes the tables into the machine code of every function that calls them; these are not cached
on disk, but their cached callers are (the PTX interpreter's ``warpsim.ptx.families.floats.fpu``), and Numba does
not notice a changed data file: after rebuilding it, remove warpsim's Numba cache (:mod:`warpsim.numba_cache`, a
changed ``.py`` file gets a new one by itself).
Batched: ``float_mufu16(op, a, *, type, ftz=False)``.

>>> hex(f16_ex2_approx(0x3C00)), hex(bf16_ex2_approx_ftz(0xFF80))   # 2**1; 2**-inf
('0x4000', '0x0')
>>> hex(f16x2_tanh_approx(0x7C00FC00))                             # tanh(+inf), tanh(-inf)
'0x3c00bc00'
>>> import numpy as np
>>> [hex(int(v)) for v in float_mufu16("ex2", np.array([0x40003F80], np.uint32), type="bf16x2", ftz=True)]
['0x40804000']
"""

import argparse
import os
import sys
import zipfile

import numpy as np
from numba import njit

from warpsim.files import WriteError, write_atomic

__all__ = ["MUFU16_FORMS", "X2_FORMS", "DATA_PATH", "load_tables", "tables_from_collection", "check_collection",
           "Mufu16DataError",
           "f16_ex2_approx", "f16x2_ex2_approx", "bf16_ex2_approx_ftz", "bf16x2_ex2_approx_ftz",
           "f16_tanh_approx", "f16x2_tanh_approx", "bf16_tanh_approx", "bf16x2_tanh_approx",
           "mufu16_table", "float_mufu16", "main"]

MUFU16_FORMS = ("ex2.approx.f16", "ex2.approx.ftz.bf16", "tanh.approx.f16", "tanh.approx.bf16")
X2_FORMS = {form: form + "x2" for form in MUFU16_FORMS}   # scalar form -> its x2 form
DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mufu16_sm90.npz")
_PATTERNS = np.arange(65536, dtype=np.uint32)


class Mufu16DataError(ValueError):
    """A collection or data file that cannot give the tables; the message names the file and the form."""


def load_tables(path=DATA_PATH) -> dict:
    """``{scalar form: uint16[65536]}`` from a data file written by :func:`main`.

    >>> sorted(load_tables()) == sorted(MUFU16_FORMS)
    True
    """
    with np.load(path) as data:
        missing = [f for f in MUFU16_FORMS if f not in data.files]
        if missing:
            raise Mufu16DataError(f"{path}: no table for {', '.join(missing)}")
        tables = {f: np.ascontiguousarray(data[f]) for f in MUFU16_FORMS}
    for form, t in tables.items():
        if t.dtype != np.uint16 or t.shape != (65536,):
            raise Mufu16DataError(f"{path}: {form}: expected uint16[65536], got {t.dtype}{list(t.shape)}")
    return tables


def _sweep(data, name, form) -> np.ndarray:
    """``form``'s results (uint32) after checking its inputs are the collection's sweep of all 65536."""
    for part in ("inputs", "results"):
        if f"{form}:{part}" not in data:
            scalar = form[:-2] if form.endswith("x2") else form
            raise Mufu16DataError(f"{name}: no {form}:{part} (collect with --variants {scalar},{X2_FORMS[scalar]})")
    expected = (_PATTERNS << np.uint32(16)) | (_PATTERNS ^ np.uint32(0x8000)) if form.endswith("x2") else _PATTERNS
    inputs = np.asarray(data[f"{form}:inputs"])
    results = np.asarray(data[f"{form}:results"])
    if inputs.shape != (65536,) or results.shape != (65536,) or not np.array_equal(inputs, expected):
        raise Mufu16DataError(f"{name}: {form}: the inputs are not hwcheck collect's sweep of all 65536 patterns")
    return results.astype(np.uint32)


def _x2_halves(packed, table):
    """``(half, input bits, got, want)`` arrays of the x2 results whose halves differ from ``table``."""
    rows = []
    for half, shift, flip in (("upper", 16, 0), ("lower", 0, 0x8000)):
        got = (packed >> np.uint32(shift)) & np.uint32(0xFFFF)
        x = _PATTERNS ^ np.uint32(flip)
        bad = np.flatnonzero(got != table[x])
        rows += [(half, int(x[i]), int(got[i]), int(table[x[i]])) for i in bad]
    return rows


def tables_from_collection(data, name="collection") -> dict:
    """The tables from a ``hwcheck collect`` result (a mapping ``"FORM:inputs"``/``"FORM:results"`` ->
    uint32 arrays, as its ``.npz`` holds), after checking the sweep's layout and that each x2 form's
    halves equal the scalar form's results; :class:`Mufu16DataError` naming the form and the first
    disagreeing input otherwise."""
    tables = {}
    for form in MUFU16_FORMS:
        scalar = _sweep(data, name, form)
        high = np.flatnonzero(scalar >> np.uint32(16))
        if high.size:
            x = int(high[0])
            raise Mufu16DataError(f"{name}: {form}: input 0x{x:04x} gave 0x{int(scalar[x]):08x}, not a 16-bit result")
        table = scalar.astype(np.uint16)
        bad = _x2_halves(_sweep(data, name, X2_FORMS[form]), table)
        if bad:
            half, x, got, want = bad[0]
            raise Mufu16DataError(f"{name}: {X2_FORMS[form]}: {half} half of input 0x{x:04x} gave 0x{got:04x}, "
                                  f"{form} gave 0x{want:04x} ({len(bad)} halves disagree)")
        tables[form] = table
    return tables


def check_collection(data, name="collection", tables=None) -> dict:
    """Each of the eight forms of a collection against ``tables`` (default: the shipped ones):
    ``{form: [(input bits, GPU result, table result), ...]}`` of the mismatching results (x2 forms:
    per half, the half's input bits), empty lists when the GPU agrees on every input."""
    tables = _TABLES if tables is None else tables
    out = {}
    for form in MUFU16_FORMS:
        table = tables[form]
        scalar = _sweep(data, name, form)
        bad = np.flatnonzero(scalar != table.astype(np.uint32))
        out[form] = [(int(x), int(scalar[x]), int(table[x])) for x in bad]
        out[X2_FORMS[form]] = [r[1:] for r in _x2_halves(_sweep(data, name, X2_FORMS[form]), table)]
    return out


_TABLES = load_tables()
_EX2_F16 = _TABLES["ex2.approx.f16"]        # (input bits 65536) -> result bits; frozen into the njit code
_EX2_BF16 = _TABLES["ex2.approx.ftz.bf16"]
_TANH_F16 = _TABLES["tanh.approx.f16"]
_TANH_BF16 = _TABLES["tanh.approx.bf16"]


@njit
def f16_ex2_approx(a):
    """``ex2.approx.f16 d, a``: the H200's result (table). ``f16_ex2_approx(0x0000) == 0x3C00``."""
    return np.uint32(_EX2_F16[np.int64(a) & 0xFFFF])


@njit
def f16x2_ex2_approx(a):
    """``ex2.approx.f16x2 d, a``: ``f16_ex2_approx`` on each half."""
    a = np.int64(a)
    return np.uint32((np.int64(_EX2_F16[(a >> 16) & 0xFFFF]) << 16) | _EX2_F16[a & 0xFFFF])


@njit
def bf16_ex2_approx_ftz(a):
    """``ex2.approx.ftz.bf16 d, a``: the H200's result (table). ``bf16_ex2_approx_ftz(0x0000) == 0x3F80``."""
    return np.uint32(_EX2_BF16[np.int64(a) & 0xFFFF])


@njit
def bf16x2_ex2_approx_ftz(a):
    """``ex2.approx.ftz.bf16x2 d, a``: ``bf16_ex2_approx_ftz`` on each half."""
    a = np.int64(a)
    return np.uint32((np.int64(_EX2_BF16[(a >> 16) & 0xFFFF]) << 16) | _EX2_BF16[a & 0xFFFF])


@njit
def f16_tanh_approx(a):
    """``tanh.approx.f16 d, a``: the H200's result (table). ``f16_tanh_approx(0x7C00) == 0x3C00``."""
    return np.uint32(_TANH_F16[np.int64(a) & 0xFFFF])


@njit
def f16x2_tanh_approx(a):
    """``tanh.approx.f16x2 d, a``: ``f16_tanh_approx`` on each half."""
    a = np.int64(a)
    return np.uint32((np.int64(_TANH_F16[(a >> 16) & 0xFFFF]) << 16) | _TANH_F16[a & 0xFFFF])


@njit
def bf16_tanh_approx(a):
    """``tanh.approx.bf16 d, a``: the H200's result (table). ``bf16_tanh_approx(0xFF80) == 0xBF80``."""
    return np.uint32(_TANH_BF16[np.int64(a) & 0xFFFF])


@njit
def bf16x2_tanh_approx(a):
    """``tanh.approx.bf16x2 d, a``: ``bf16_tanh_approx`` on each half."""
    a = np.int64(a)
    return np.uint32((np.int64(_TANH_BF16[(a >> 16) & 0xFFFF]) << 16) | _TANH_BF16[a & 0xFFFF])


def mufu16_table(op, type, ftz=False) -> np.ndarray:
    """The ``uint16[65536]`` table of ``{op}.approx{.ftz}.{type}`` (x2 types: the table of each half).

    PTX has ``ex2.approx.{f16,f16x2}``, ``ex2.approx.ftz.{bf16,bf16x2}`` and ``tanh.approx`` on all four
    types without ``.ftz``; any other combination raises ``ValueError`` naming the instruction.

    >>> int(mufu16_table("tanh", "bf16x2")[0x3F80]) == bf16_tanh_approx(0x3F80)
    True
    """
    base = type[:-2] if type in ("f16x2", "bf16x2") else type
    text = f"{op}.approx{'.ftz' if ftz else ''}.{base}"
    if text not in _TABLES:
        if op in ("ex2", "tanh") and base in ("f16", "bf16"):
            want = "with .ftz" if not ftz else "without .ftz"
            raise ValueError(f"{op}.approx{'.ftz' if ftz else ''}.{type}: PTX defines {op}.approx.{type} only {want}")
        raise ValueError(f"{op}.approx.{type}: not a 16-bit MUFU form (ex2 or tanh on f16, bf16, f16x2, bf16x2)")
    return _TABLES[text]


def float_mufu16(op, a, *, type, ftz=False) -> np.ndarray:
    """``{op}.approx{.ftz}.{type}`` on every element of ``a`` (uint32 register bits; 16-bit types in
    the low half): uint32 result bits, the shape of ``a``. ``op``: ``ex2`` or ``tanh``."""
    table = mufu16_table(op, type, ftz)
    a = np.asarray(a)
    if a.dtype.kind not in "ui":
        raise TypeError(f"{op}.approx.{type}: a must be an integer array of register bits, got {a.dtype}")
    a = a.astype(np.uint32)
    low = table[a & np.uint32(0xFFFF)].astype(np.uint32)
    if type in ("f16x2", "bf16x2"):
        return (table[a >> np.uint32(16)].astype(np.uint32) << np.uint32(16)) | low
    return low


def _read_collection(path) -> dict:
    data = np.load(path)                       # no pickles: an .npy or a pickle is refused below
    if not hasattr(data, "files"):
        raise Mufu16DataError(f"{path}: not an .npz file of hwcheck collect")
    with data:
        return {k: data[k] for k in data.files}


def main(argv=None) -> int:
    """``python -m warpsim.isa.mufu16 --from FILE.npz [--out PATH]``: rebuild the data file;
    ``--check FILE.npz``: compare a collection with the shipped tables (exit 1 on a mismatch).
    Bad data: one line on stderr, exit 2."""
    variants = ",".join(f"{f},{X2_FORMS[f]}" for f in MUFU16_FORMS)
    parser = argparse.ArgumentParser(prog="python -m warpsim.isa.mufu16",
                                     description="Rebuild or check the 16-bit MUFU tables from a `hwcheck collect` .npz "
                                                 f"(hwcheck collect --variants {variants} --out FILE.npz).")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--from", dest="source", metavar="FILE.npz", help="rebuild the data file from this collection")
    what.add_argument("--check", metavar="FILE.npz", help="compare this collection with the shipped tables")
    parser.add_argument("--out", default=DATA_PATH, help="the data file to write (default: the package's)")
    args = parser.parse_args(argv)
    path = args.check or args.source
    try:
        data = _read_collection(path)
        if args.check:
            result = check_collection(data, path)
        else:
            tables = tables_from_collection(data, path)
    except (OSError, ValueError, zipfile.BadZipFile) as e:   # a missing or unreadable file, a bad collection
        sys.stderr.write(f"mufu16: {e}\n")
        return 2
    if args.check:
        for form, bad in result.items():
            first = ", ".join(f"0x{x:04x}: GPU 0x{g:04x}, table 0x{w:04x}" for x, g, w in bad[:3])
            total = 65536 * (2 if form.endswith("x2") else 1)
            sys.stdout.write(f"{form}: {len(bad)} mismatches of {total}{' (' + first + ')' if bad else ''}\n")
        return 1 if any(result.values()) else 0
    try:
        write_atomic(args.out, lambda f: np.savez_compressed(f, **tables))
    except WriteError as e:
        sys.stderr.write(f"mufu16: {e}\n")
        return 2
    sys.stdout.write(f"mufu16: {len(tables)} tables of 65536 ({', '.join(tables)}) -> {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
