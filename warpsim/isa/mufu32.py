"""The f32 MUFU approximations, bit-exact on sm_90: ``ex2 rcp rsqrt sqrt lg2 .approx{.ftz}.f32``, ``tanh.approx.f32``.

PTX specifies these by error bounds only. What the H200 does (docs/numerics.md, "f32 MUFU"):

- ptxas turns each ``.ftz`` form into one SFU instruction (``MUFU.EX2``, ``MUFU.RCP``, ``MUFU.RSQ``,
  ``MUFU.SQRT``, ``MUFU.LG2``), which flushes subnormal inputs and results; each form without ``.ftz``
  into the same instruction wrapped in exact scalings (``FSETP``/``FMUL``/``FADD``, IEEE, no flush) that
  move subnormal inputs or results into its range. :func:`f32_ex2_approx` and the others compose
  :func:`mufu_ex2` ... with ``warpsim.isa.fparith`` (or ``hostfloat``, the same bits) exactly as that SASS does.
- Each MUFU result, for the inputs that are not special, depends only on a *key* of the input and is the
  table's entry at that key, placed by an exponent rule (tested on all 2**32 inputs of the H200 by
  ``python -m hwcheck.campaigns.mufu32_probe``: every input with the same key gives the same normalised result):

  ========  ==========================================  ====================================================
  MUFU      key                                         result
  ========  ==========================================  ====================================================
  EX2       sign, 23 fraction bits of ``floor(|x|*2**23)``  computed: ``warpsim.isa.sfu_exp`` (``x < 0``: the
            (``x < 0``: their one's complement)           fraction's one's complement, one function)
  RCP       the mantissa                                computed: ``warpsim.isa.mufu_recip``
  RSQ       exponent parity and mantissa                computed: ``warpsim.isa.mufu_recip``
  SQRT      exponent parity and mantissa                computed: ``warpsim.isa.mufu_recip``
  LG2       the mantissa                                computed: ``warpsim.isa.sfu_exp`` (``e + P(m)`` in
                                                        fixed point, cut toward zero)
  TANH      exponent 119..129 and the mantissa without  the table's entry, the input's sign; below: the
            its low 2..6 bits (their number by exponent)  input itself, above: +-1
  ========  ==========================================  ====================================================

Proven on: sm_90 (the H200, every one of the 2**32 inputs of each form). sm_80: ptxas emits the same SASS
(``tests/hwcheck/test_sass_sm80.py``), the A100's SFU bits are unproven; warpsim uses these tables for both.

The tables (``data/mufu32_sm90.npz``, 2.0 MB compressed) are the H200's results, written by
``python -m warpsim.isa.mufu32 --from PROBE_DIR`` from a probe run (its command, GPU and driver are stored
in the file). They load on first use (:func:`mufu_tables`). RCP, RSQ and SQRT are not lookups: their
"tables" are the coefficients of the SFU's datapath (``warpsim.isa.mufu_recip``), solved from the same
probe's key tables (``warpsim.isa.mufu_recip_derive``), which the npz file no longer needs. Nor are EX2 and
LG2 (:data:`EXP_COEFFICIENTS`): the SFU's quadratics of ``warpsim.isa.sfu_exp``, solved from the probe's
results (``warpsim.isa.sfu_exp_derive``); their tables are gone from the npz.
The scalar models take their table as the last argument; :func:`mufu_batch` runs one over an array.

>>> t = mufu_tables()
>>> hex(f32_ex2_approx_ftz(0x3F800000, t[EX2])), hex(f32_rcp_approx_ftz(0x40000000, t[RCP]))
('0x40000000', '0x3f000000')
>>> hex(f32_lg2_approx_ftz(0x41000000, t[LG2])), hex(f32_sqrt_approx(0x40800000, t[SQRT]))
('0x40400000', '0x40000000')
>>> hex(f32_ex2_approx(0xC3000000, t[EX2]))          # 2**-128: a subnormal, as the SASS's squaring gives
'0x200000'
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
from numba import njit, prange

from warpsim.isa.fparith import f32_fma, f32_mul
from warpsim.isa.hostfloat import host_f32_add, host_f32_mul
from warpsim.isa.mufu_recip import RECIP_NAMES, mufu_rcp, mufu_rsq, mufu_sqrt, recip_tables
from warpsim.isa.rounding import RN
from warpsim.isa.sfu_exp import ex2_coefficients, lg2_coefficients, mufu_ex2, mufu_lg2

__all__ = ["MUFU32_OPS", "EX2", "RCP", "RSQ", "SQRT", "LG2", "TABLE_NAMES", "mufu_tables", "mufu_batch",
           "mufu_range", "mufu_ex2", "mufu_rcp", "mufu_rsq", "mufu_sqrt", "mufu_lg2",
           "f32_ex2_approx", "f32_ex2_approx_ftz", "f32_rcp_approx", "f32_rcp_approx_ftz",
           "f32_rsqrt_approx", "f32_rsqrt_approx_ftz", "f32_sqrt_approx", "f32_sqrt_approx_ftz",
           "f32_lg2_approx", "f32_lg2_approx_ftz", "mufu_tanh", "f32_tanh_approx", "f32_div_approx", "f32_div_approx_ftz", "f32_div_full",
           "f32_div_full_ftz", "f32_div_add", "DIV32_OPS", "div_batch", "build_tables", "TANH",
           "key_tables", "table_source", "EXP_COEFFICIENTS"]

TABLE_NAMES = ("ex2", "rcp", "rsqrt", "sqrt", "lg2", "tanh")
EX2, RCP, RSQ, SQRT, LG2, TANH = range(len(TABLE_NAMES))
# ex2, lg2: the coefficients of the SFU's quadratics (``warpsim.isa.sfu_exp``), not key tables
EXP_COEFFICIENTS = {"ex2": ex2_coefficients, "lg2": lg2_coefficients}
TANH_FIRST, TANH_LAST = 119, 129     # MUFU.TANH's table exponents; below: the input itself, above: +-1
DATA = os.path.join(os.path.dirname(__file__), "data", "mufu32_sm90.npz")

_NAN = np.uint32(0x7FFFFFFF)           # the canonical NaN every MUFU returns
_INF = np.uint32(0x7F800000)
_SIGN = np.uint32(0x80000000)
_ONE = np.uint32(0x3F800000)
_SMALLEST_NORMAL = np.uint32(0x00800000)   # 2**-126


# -- the MUFU instructions (flush subnormal inputs and results) -----------------------------------------------

@njit(cache=True)
def mufu_tanh(a, t):
    """``MUFU.TANH``: ``tanh(x)``, odd in the sign bit for bit. ``t``: per exponent 119..129 the number of low
    mantissa bits the result ignores (``t[0:11]``), the entries' offsets (``t[11:22]``), then the entries."""
    a = np.uint32(a)
    s, e, m = a & _SIGN, np.int64((a >> 23) & 0xFF), np.int64(a & 0x7FFFFF)
    if e == 0xFF:
        return _NAN if m else s | _ONE
    if e < TANH_FIRST:
        return a                                   # |x| < 2**-8, subnormals and zeros too: the input itself
    if e > TANH_LAST:
        return s | _ONE
    i = e - TANH_FIRST
    return s | t[22 + np.int64(t[11 + i]) + (m >> np.int64(t[i]))]


# -- the PTX forms, as the SASS composes them ------------------------------------------------------------------

@njit(cache=True)
def _tiny(a):
    """``!(|a| >= 2**-126)``, ``FSETP.GEU`` as the SASS tests it (false for NaN): on the bits, ``|a|`` below
    the smallest normal's pattern."""
    return (np.uint32(a) & 0x7FFFFFFF) < _SMALLEST_NORMAL


@njit(cache=True)
def f32_ex2_approx_ftz(a, t):
    """``ex2.approx.ftz.f32``: ``MUFU.EX2``."""
    return mufu_ex2(a, t)


@njit(cache=True)
def f32_ex2_approx(a, t):
    """``ex2.approx.f32``: below -126, ``MUFU.EX2(x/2)`` squared (``FMUL``), so subnormal results survive.

    Both ``FMUL`` are the host's (``hostfloat``: the same bits as IEEE ``mul.rn.f32``); ``x/2`` is exact there.
    """
    a = np.uint32(a)
    if a <= 0xC2FC0000 or a > 0xFF800000:       # not below -126 (``FSETP.GEU``: positive, >= -126, or NaN)
        return mufu_ex2(a, t)
    y = mufu_ex2(host_f32_mul(a, np.uint32(0x3F000000), False, False), t)
    return host_f32_mul(y, y, False, False)


@njit(cache=True)
def f32_rcp_approx_ftz(a, t):
    """``rcp.approx.ftz.f32``: ``MUFU.RCP``."""
    return mufu_rcp(a, t)


@njit(cache=True)
def f32_rcp_approx(a, t):
    """``rcp.approx.f32``: the input scaled by 2**24 below 2**-126 or by 1/4 above 2**126, the result back."""
    mag = np.uint32(a) & 0x7FFFFFFF
    if _tiny(a):
        scale = np.uint32(0x4B800000)
    elif 0x7E800000 < mag <= 0x7F800000:          # ``FSETP.GT |a|, 2**126`` (false for NaN)
        scale = np.uint32(0x3E800000)
    else:                                         # times 1.0 twice: the same bits (MUFU's NaN is canonical)
        return mufu_rcp(a, t)
    r = mufu_rcp(f32_mul(a, scale, RN, False, False), t)
    return f32_mul(scale, r, RN, False, False)


@njit(cache=True)
def f32_rsqrt_approx_ftz(a, t):
    """``rsqrt.approx.ftz.f32``: ``MUFU.RSQ``."""
    return mufu_rsq(a, t)


@njit(cache=True)
def f32_rsqrt_approx(a, t):
    """``rsqrt.approx.f32``: below 2**-126 the input times 2**24 and the result times 2**12."""
    if not _tiny(a):
        return mufu_rsq(a, t)
    return f32_mul(mufu_rsq(f32_mul(a, np.uint32(0x4B800000), RN, False, False), t), np.uint32(0x45800000),
                   RN, False, False)


@njit(cache=True)
def f32_sqrt_approx_ftz(a, t):
    """``sqrt.approx.ftz.f32``: ``MUFU.SQRT``."""
    return mufu_sqrt(a, t)


@njit(cache=True)
def f32_sqrt_approx(a, t):
    """``sqrt.approx.f32``: below 2**-126 the input times 2**24 and the result times 2**-12."""
    if not _tiny(a):
        return mufu_sqrt(a, t)
    return f32_mul(mufu_sqrt(f32_mul(a, np.uint32(0x4B800000), RN, False, False), t), np.uint32(0x39800000),
                   RN, False, False)


@njit(cache=True)
def f32_lg2_approx_ftz(a, t):
    """``lg2.approx.ftz.f32``: ``MUFU.LG2``."""
    return mufu_lg2(a, t)


@njit(cache=True)
def f32_lg2_approx(a, t):
    """``lg2.approx.f32``: below 2**-126 the input times 2**24, and 24 subtracted (``FADD``)."""
    if not _tiny(a):
        return mufu_lg2(a, t)
    y = mufu_lg2(host_f32_mul(a, np.uint32(0x4B800000), False, False), t)
    return host_f32_add(y, np.uint32(0xC1C00000), False, False)


@njit(cache=True)
def f32_tanh_approx(a, t):
    """``tanh.approx.f32``: ``MUFU.TANH`` (PTX has no ``.ftz`` form; subnormal inputs come back unchanged)."""
    return mufu_tanh(a, t)


@njit(cache=True)
def f32_div_approx_ftz(a, b, t):
    """``div.approx.ftz.f32``: ``a * MUFU.RCP(b)`` (``FMUL.FTZ``). ``t``: the RCP table."""
    return f32_mul(a, mufu_rcp(b, t), RN, True, False)


@njit(cache=True)
def f32_div_approx(a, b, t):
    """``div.approx.f32``: for ``|b| < 2**-126`` both operands times 2**24 first; ``MUFU.RCP(b) * a``."""
    if _tiny(b):
        a = f32_mul(a, np.uint32(0x4B800000), RN, False, False)
        b = f32_mul(b, np.uint32(0x4B800000), RN, False, False)
    return f32_mul(mufu_rcp(b, t), a, RN, False, False)


@njit(cache=True)
def f32_div_full(a, b, t):
    """``div.full.f32``: for ``|b| > 2**126`` both operands times 1/4, for ``|b| < 2**-126`` times 2**24;
    ``MUFU.RCP(b) * a``."""
    mag = np.uint32(b) & 0x7FFFFFFF
    if 0x7E800000 < mag <= 0x7F800000:
        a = f32_mul(a, np.uint32(0x3E800000), RN, False, False)
        b = f32_mul(b, np.uint32(0x3E800000), RN, False, False)
    if _tiny(b):
        a = f32_mul(a, np.uint32(0x4B800000), RN, False, False)
        b = f32_mul(b, np.uint32(0x4B800000), RN, False, False)
    return f32_mul(mufu_rcp(b, t), a, RN, False, False)


@njit(cache=True)
def f32_div_full_ftz(a, b, t):
    """``div.full.ftz.f32``: for ``|b| > 2**126`` both operands times 1/4 (``FMUL.FTZ``); ``MUFU.RCP(b) * a``
    (``FMUL.FTZ``)."""
    mag = np.uint32(b) & 0x7FFFFFFF
    if 0x7E800000 < mag <= 0x7F800000:
        a = f32_mul(a, np.uint32(0x3E800000), RN, True, False)
        b = f32_mul(b, np.uint32(0x3E800000), RN, True, False)
    return f32_mul(mufu_rcp(b, t), a, RN, True, False)


@njit(cache=True)
def f32_div_add(a, b, c, t, full, ftz):
    """``div.{approx,full}{.ftz}.f32`` whose final product ptxas fused with a following unrounded ``add`` (one
    ``FFMA``, warpsim.ptx.contraction): the operands scaled as :func:`f32_div_full` / :func:`f32_div_approx` (and
    their ``.ftz`` forms) scale them -- by 1/4 for ``|b| > 2**126`` (``.full``), by 2**24 for ``|b| < 2**-126`` (not
    ``.ftz``) -- then ``MUFU.RCP(b) * a + c`` rounded once."""
    mag = np.uint32(b) & 0x7FFFFFFF
    if full and 0x7E800000 < mag <= 0x7F800000:
        a = f32_mul(a, np.uint32(0x3E800000), RN, ftz, False)
        b = f32_mul(b, np.uint32(0x3E800000), RN, ftz, False)
    if not ftz and _tiny(b):
        a = f32_mul(a, np.uint32(0x4B800000), RN, False, False)
        b = f32_mul(b, np.uint32(0x4B800000), RN, False, False)
    return f32_fma(mufu_rcp(b, t), a, c, RN, ftz, False)


# (op, ftz) -> (scalar model, table index)
MUFU32_OPS = {("ex2", True): (f32_ex2_approx_ftz, EX2), ("ex2", False): (f32_ex2_approx, EX2),
              ("rcp", True): (f32_rcp_approx_ftz, RCP), ("rcp", False): (f32_rcp_approx, RCP),
              ("rsqrt", True): (f32_rsqrt_approx_ftz, RSQ), ("rsqrt", False): (f32_rsqrt_approx, RSQ),
              ("sqrt", True): (f32_sqrt_approx_ftz, SQRT), ("sqrt", False): (f32_sqrt_approx, SQRT),
              ("lg2", True): (f32_lg2_approx_ftz, LG2), ("lg2", False): (f32_lg2_approx, LG2),
              ("tanh", False): (f32_tanh_approx, TANH)}
# div (kind, ftz) -> scalar model of (a, b, the RCP table)
DIV32_OPS = {("approx", True): f32_div_approx_ftz, ("approx", False): f32_div_approx,
             ("full", True): f32_div_full_ftz, ("full", False): f32_div_full}


# -- tables -----------------------------------------------------------------------------------------------------

_LOADED: dict = {}
_EMPTY = np.zeros(0, np.uint32)


def _undiff(d: np.ndarray) -> np.ndarray:
    return np.cumsum(d.view(np.uint32), dtype=np.uint32)


def mufu_tables(names=TABLE_NAMES, path: str = DATA) -> tuple:
    """The tables as a tuple indexed by ``EX2 .. TANH`` (uint32 arrays; those not in ``names`` are empty), loaded
    once per process; ``FileNotFoundError`` naming the file and the command that writes it. ``rcp``, ``rsqrt``,
    ``sqrt``: their datapath's coefficients (``warpsim.isa.mufu_recip``), not key tables; ``ex2``, ``lg2``: the
    coefficients of :data:`EXP_COEFFICIENTS`."""
    recip = recip_tables() if set(names) & set(RECIP_NAMES) else ()
    lookups = [name for name in TABLE_NAMES
               if name in names and name not in RECIP_NAMES and name not in EXP_COEFFICIENTS]
    found = dict(zip(lookups, key_tables(lookups, path))) if lookups else {}
    found.update((name, load()) for name, load in EXP_COEFFICIENTS.items() if name in names)
    return tuple(recip[RECIP_NAMES.index(name)] if name in RECIP_NAMES and name in names else found.get(name, _EMPTY)
                 for name in TABLE_NAMES)


def key_tables(names, path: str = DATA) -> tuple:
    """The key tables ``names`` in the npz file at ``path`` (uint32 arrays, in the order of ``names``), loaded once
    per process; ``FileNotFoundError`` naming the file and the command that writes it, ``KeyError`` naming a
    table the file lacks."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: the f32 MUFU tables are missing; "
                                f"`python -m warpsim.isa.mufu32 --from PROBE_DIR` writes them")
    out = []
    for name in names:
        key = (path, name)
        if key not in _LOADED:
            with np.load(path) as data:
                if name not in data.files:
                    raise KeyError(f"{path} has no {name!r} table")
                _LOADED[key] = _undiff(data[name])
        out.append(_LOADED[key])
    return tuple(out)


def table_source(path: str = DATA) -> dict:
    """How the tables at ``path`` were obtained (the probe run's command, GPU, driver, date), as stored in it."""
    with np.load(path) as data:
        return json.loads(str(data["source"])) if "source" in data.files else {}


# The batched kernels take a form's index, never the model function itself: a cached kernel whose signature
# holds a function (a Numba Dispatcher type) is rebuilt from its cache index in the next process with a
# function nothing keeps alive, and saving the index then fails ("underlying object has vanished").
@njit(cache=True, inline="always")       # inlined: the loop over lanes is unswitched on code
def _form(code, a, t):
    """The model of form ``code``, the index of its key in ``MUFU32_OPS`` (the order below; tested)."""
    if code == 0:
        return f32_ex2_approx_ftz(a, t)
    if code == 1:
        return f32_ex2_approx(a, t)
    if code == 2:
        return f32_rcp_approx_ftz(a, t)
    if code == 3:
        return f32_rcp_approx(a, t)
    if code == 4:
        return f32_rsqrt_approx_ftz(a, t)
    if code == 5:
        return f32_rsqrt_approx(a, t)
    if code == 6:
        return f32_sqrt_approx_ftz(a, t)
    if code == 7:
        return f32_sqrt_approx(a, t)
    if code == 8:
        return f32_lg2_approx_ftz(a, t)
    if code == 9:
        return f32_lg2_approx(a, t)
    return f32_tanh_approx(a, t)


@njit(cache=True, parallel=True)
def _batch(code, a, t, out):
    for i in prange(a.size):
        out[i] = _form(code, a[i], t)


@njit(cache=True, parallel=True)
def _range(code, start, t, out):
    for i in prange(out.size):
        out[i] = _form(code, np.uint32((start + i) & 0xFFFFFFFF), t)


def _model(op, ftz):
    if (op, bool(ftz)) not in MUFU32_OPS:
        raise ValueError(f"{op}.approx{'.ftz' if ftz else ''}.f32: not an f32 MUFU form warpsim models "
                         f"(ops: {', '.join(sorted({k[0] for k in MUFU32_OPS}))})")
    _fn, index = MUFU32_OPS[(op, bool(ftz))]
    return list(MUFU32_OPS).index((op, bool(ftz))), mufu_tables((TABLE_NAMES[index],))[index]


def mufu_range(op: str, start: int, out: np.ndarray, *, ftz: bool = False) -> np.ndarray:
    """``out[i]`` = the model's result for input bits ``start + i`` (mod 2**32); the exhaustive sweep's half.

    >>> hex(int(mufu_range("ex2", 0x3F800000, np.empty(1, np.uint32), ftz=True)[0]))
    '0x40000000'
    """
    code, table = _model(op, ftz)
    _range(code, np.int64(start), table, out)
    return out


@njit(cache=True)
def _div_form(code, a, b, t):
    """The div model of form ``code``, the index of its key in ``DIV32_OPS`` (the order below; tested)."""
    if code == 0:
        return f32_div_approx_ftz(a, b, t)
    if code == 1:
        return f32_div_approx(a, b, t)
    if code == 2:
        return f32_div_full_ftz(a, b, t)
    return f32_div_full(a, b, t)


@njit(cache=True, parallel=True)
def _batch2(code, a, b, t, out):
    for i in prange(a.size):
        out[i] = _div_form(code, a[i], b[i], t)


def div_batch(kind: str, a: np.ndarray, b: np.ndarray, *, ftz: bool = False) -> np.ndarray:
    """``div.{kind}{.ftz}.f32 d, a, b`` (``kind`` ``approx`` or ``full``) over arrays of bits, in parallel.

    >>> [hex(int(v)) for v in div_batch("full", np.array([0x40400000], np.uint32), np.array([0x40000000], np.uint32))]
    ['0x3fc00000']
    """
    if (kind, bool(ftz)) not in DIV32_OPS:
        raise ValueError(f"div.{kind}: not a div form warpsim models (approx, full)")
    a = np.ascontiguousarray(a, dtype=np.uint32)
    b = np.ascontiguousarray(b, dtype=np.uint32)
    if a.shape != b.shape:
        raise ValueError(f"div.{kind}: operand shapes differ: {a.shape} and {b.shape}")
    out = np.empty(a.size, np.uint32)
    _batch2(list(DIV32_OPS).index((kind, bool(ftz))), a.ravel(), b.ravel(), mufu_tables(("rcp",))[RCP], out)
    return out.reshape(a.shape)


def mufu_batch(op: str, a: np.ndarray, *, ftz: bool = False) -> np.ndarray:
    """``{op}.approx{.ftz}.f32`` over an array of register bits (uint32, any shape), in parallel.

    >>> [hex(int(v)) for v in mufu_batch("rcp", np.array([0x40800000, 0x80000000], np.uint32), ftz=True)]
    ['0x3e800000', '0xff800000']
    """
    code, table = _model(op, ftz)
    a = np.ascontiguousarray(a, dtype=np.uint32)
    out = np.empty(a.size, np.uint32)
    _batch(code, a.ravel(), table, out)
    return out.reshape(a.shape)


def build_tables(probe_dir: str) -> dict:
    """The key tables (uint32: rcp, rsqrt, sqrt, tanh) from a ``hwcheck.campaigns.mufu32_probe`` output folder; ``ValueError`` where its data
    breaks the structure the models rely on (a hypothesis that did not hold, an exponent rule violated)."""
    def load(name, key):
        with np.load(os.path.join(probe_dir, f"{name}.npz")) as d:
            if key not in d.files:
                raise ValueError(f"{probe_dir}/{name}.npz has no {key!r}: the probe's hypothesis failed there")
            arr = d[key]
        return np.cumsum(arr.view(np.uint64 if arr.dtype == np.int64 else np.uint32),
                         dtype=np.uint64 if arr.dtype == np.int64 else np.uint32)

    def check(ok, what):
        if not np.all(ok):
            raise ValueError(f"{probe_dir}: {what}")

    tables = {}                                 # ex2, lg2: warpsim.isa.sfu_exp_derive reads the probe folder itself
    rcp = load("rcp", "rcp_F0")
    check((rcp[1 << 23:] & np.uint64((1 << 40) - 1)) == rcp[:1 << 23], "rcp: not odd in the sign")
    esum = (rcp[:1 << 23] >> np.uint64(23)) & np.uint64(0x3FF)
    check((esum >= 253) & (esum <= 254), "rcp: exponent sum outside 253..254")
    tables["rcp"] = (((esum - np.uint64(253)) << np.uint64(23)) | (rcp[:1 << 23] & np.uint64(0x7FFFFF))).astype(
        np.uint32)
    for name, base in (("rsqrt", 379), ("sqrt", 638)):
        t = load(name, f"{name}_F0")
        v = (t >> np.uint64(23)) & np.uint64(0xFFFF)
        check((v >= base) & (v <= base + 3), f"{name}: exponent rule")
        tables[name] = (((v - np.uint64(base)) << np.uint64(23)) | (t & np.uint64(0x7FFFFF))).astype(np.uint32)
    with np.load(os.path.join(probe_dir, "tanh.npz")) as d:
        ident, names = d["tanh_identity"], set(d.files)
        check(ident[:TANH_FIRST] == 1 << 23, f"tanh: not the identity below exponent {TANH_FIRST}")
        check(np.array([int(d[f"tanh_const_e{e}"][0]) for e in range(TANH_LAST + 1, 255)]) == 0x3F800000,
              f"tanh: not 1.0 above exponent {TANH_LAST}")
        shifts, parts = [], []
        for e in range(TANH_FIRST, TANH_LAST + 1):
            key = next((k for k in names if k.startswith(f"tanh_e{e}_s")), None)
            if key is None:
                raise ValueError(f"{probe_dir}/tanh.npz: no table for exponent {e}")
            shifts.append(int(key.rsplit("_s", 1)[1]))
            parts.append(np.cumsum(d[key].view(np.uint32), dtype=np.uint32))
    offsets = np.cumsum([0] + [p.size for p in parts[:-1]])
    tables["tanh"] = np.concatenate([np.array(shifts, np.uint32), offsets.astype(np.uint32)] + parts)
    return tables


def _write(tables: dict, source: dict, path: str = DATA):
    from warpsim.files import write_atomic
    arrays = {name: np.diff(tables[name], prepend=np.uint32(0)).view(np.int32) for name in TABLE_NAMES
              if name in tables and name not in RECIP_NAMES}   # mufu_recip_derive solves their coefficients
    write_atomic(path, lambda f: np.savez_compressed(f, source=np.array(json.dumps(source)), **arrays))


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m warpsim.isa.mufu32", description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="probe", required=True,
                    help="a `python -m hwcheck.campaigns.mufu32_probe` output folder")
    ap.add_argument("--source", default="", help="JSON: how the probe was run (command, GPU, driver, date)")
    args = ap.parse_args(argv)
    try:
        tables = build_tables(args.probe)
    except (OSError, ValueError) as e:
        print(f"python -m warpsim.isa.mufu32: {e}", file=sys.stderr)
        return 2
    _write(tables, json.loads(args.source) if args.source else {})
    print(f"wrote {DATA} ({os.path.getsize(DATA) / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
