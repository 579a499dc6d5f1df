"""Batched float instructions: numpy arrays of register bits in, numpy arrays out, parallel.

Each function runs one PTX float instruction over arrays of one shape (no broadcasting), element by
element, with the scalar models of ``fparith`` (IEEE-rounded arithmetic) and ``fpcompare``
(selection, sign, comparison):

- ``float_arith(op, *operands, type="f32", rnd="rn", ftz=False, sat=False, relu=False)``: ``op`` in
  ``add sub mul fma div sqrt rcp``; ``type`` in ``f32 f16 bf16 f16x2 bf16x2`` (16-bit types in the
  low half of each uint32; x2 types per half). ``fma.rn.f32``, ``add.rn.f32`` and ``mul.rn.f32`` run
  through the host's binary32 operations (``hostfloat``: the same bits, vectorised).
- ``float_minmax(op, a, b, *, type, ftz=False, nan=False, xorsign_abs=False)``: ``op`` ``min``/``max``.
- ``float_setp(cmp, a, b, *, type, ftz=False)``: bool array; x2 types give ``bool[..., 2]``:
  ``[..., 0]`` is ``setp ... p|q``'s ``p``, the lower halves' predicate, ``[..., 1]`` the upper's ``q``.
- ``float_testp(cls, a, *, type="f32")``: bool array.
- ``float_sign(op, a, b=None, *, type="f32", ftz=False)``: ``abs``, ``neg`` or ``copysign`` (f32 only).

Modifiers PTX does not define for a type (``.ftz`` or ``.sat`` on bf16, ``.relu`` outside f16/bf16
``fma``, a rounding mode other than ``.rn`` on f16/bf16, ``div``/``sqrt``/``rcp`` outside f32) raise
``ValueError`` naming the instruction. Every function takes ``parallel=False`` for one thread.

>>> import numpy as np
>>> a = np.array([0x3F800000, 0x7F800000], np.uint32); b = np.array([0x33800000, 0xFF800000], np.uint32)
>>> [hex(int(x)) for x in float_arith("add", a, b, rnd="rp")]
['0x3f800001', '0x7fffffff']
>>> [hex(int(x)) for x in float_minmax("max", a, b, type="f32")]
['0x3f800000', '0x7f800000']
>>> float_setp("gt", a, b).tolist(), float_testp("infinite", b).tolist()
([True, True], [False, True])
"""

import numpy as np
from numba import get_num_threads, njit, prange

from warpsim.isa.fparith import finish, fp_div, fp_fma, fp_sqrt
from warpsim.isa.fpcompare import CMP, TESTP, f32_copysign, fp_compare, fp_minmax, fp_sign, fp_testp
from warpsim.isa.hostfloat import host_f32_add, host_f32_fma_raw, host_f32_mul_raw, resolve_smallest_normals
from warpsim.isa.rounding import RN, ROUNDING

__all__ = ["FLOAT_TYPES", "ARITH_OPS", "float_arith", "float_minmax", "float_setp", "float_testp", "float_sign"]

# type -> (exp_bits, frac_bits, halves): halves 0 = one value (16-bit ones in the low half), 2 = x2
FLOAT_TYPES = {"f32": (8, 23, 0), "f16": (5, 10, 0), "bf16": (8, 7, 0), "f16x2": (5, 10, 2),
               "bf16x2": (8, 7, 2)}
ARITH_OPS = {"add": 0, "sub": 1, "mul": 2, "fma": 3, "div": 4, "sqrt": 5, "rcp": 6}
_ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1}
_ADD, _SUB, _MUL, _FMA, _DIV, _SQRT, _RCP = range(7)


@njit(cache=True)
def _arith_one(op, x, y, z, eb, fb, rnd, ftz, sat, relu):
    one = ((np.int64(1) << (eb - 1)) - 1) << fb
    if op == _ADD:
        r = fp_fma(x, one, y, 1, eb, fb, rnd, ftz)
    elif op == _SUB:
        r = fp_fma(x, one, y ^ (np.int64(1) << (eb + fb)), 1, eb, fb, rnd, ftz)
    elif op == _MUL:
        r = fp_fma(x, y, 0, 0, eb, fb, rnd, ftz)
    elif op == _FMA:
        r = fp_fma(x, y, z, 1, eb, fb, rnd, ftz)
    elif op == _DIV:
        r = fp_div(x, y, eb, fb, rnd, ftz)
    elif op == _SQRT:
        r = fp_sqrt(x, eb, fb, rnd, ftz)
    else:
        r = fp_div(one, x, eb, fb, rnd, ftz)
    return finish(r, eb, fb, False, sat, relu)


@njit(cache=True)
def _arith_range(op, a, b, c, out, eb, fb, halves, rnd, ftz, sat, relu, start, stop):
    a, b, c, out = a[start:stop], b[start:stop], c[start:stop], out[start:stop]
    for i in range(out.size):
        x, y, z = np.int64(a[i]), np.int64(b[i]), np.int64(c[i])
        if halves == 0:
            out[i] = np.uint32(_arith_one(op, x, y, z, eb, fb, rnd, ftz, sat, relu))
        else:
            hi = _arith_one(op, x >> 16, y >> 16, z >> 16, eb, fb, rnd, ftz, sat, relu)
            lo = _arith_one(op, x & 0xFFFF, y & 0xFFFF, z & 0xFFFF, eb, fb, rnd, ftz, sat, relu)
            out[i] = np.uint32((hi << 16) | lo)


@njit(cache=True)
def _host_range(op, a, b, c, out, ftz, sat, start, stop):
    # slices indexed from 0 (a loop from ``start`` would check every index for wrap-around), one loop
    # per op and the plain ones apart: each compiles to straight-line, unrolled code
    a, b, c, out = a[start:stop], b[start:stop], c[start:stop], out[start:stop]
    if op == _FMA and not ftz and not sat:
        for i in range(out.size):
            out[i] = host_f32_fma_raw(a[i], b[i], c[i], False, False)
    elif op == _FMA:
        for i in range(out.size):
            out[i] = host_f32_fma_raw(a[i], b[i], c[i], ftz, sat)
        if ftz:
            resolve_smallest_normals(a, b, c, out, True, sat)
    elif op == _MUL:
        for i in range(out.size):
            out[i] = host_f32_mul_raw(a[i], b[i], ftz, sat)
        if ftz:
            resolve_smallest_normals(a, b, c, out, False, sat)
    elif op == _ADD:
        for i in range(out.size):
            out[i] = host_f32_add(a[i], b[i], ftz, sat)
    else:
        for i in range(out.size):
            out[i] = host_f32_add(a[i], b[i] ^ np.uint32(0x80000000), ftz, sat)


@njit(cache=True, parallel=True)
def _arith_parallel(op, a, b, c, out, eb, fb, halves, rnd, ftz, sat, relu, host, chunks):
    n = a.shape[0]
    for ch in prange(chunks):
        start, stop = ch * n // chunks, (ch + 1) * n // chunks
        if host:
            _host_range(op, a, b, c, out, ftz, sat, start, stop)
        else:
            _arith_range(op, a, b, c, out, eb, fb, halves, rnd, ftz, sat, relu, start, stop)


def _arrays(name, arrays):
    """Flat contiguous uint32 copies of ``arrays`` (checked: numpy uint32, one shape)."""
    shape = None
    flat = []
    for label, x in arrays:
        if not isinstance(x, np.ndarray) or x.dtype != np.uint32:
            raise TypeError(f"{name}: {label} must be a numpy array of uint32 (register bits), got "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
        if shape is not None and x.shape != shape:
            raise ValueError(f"{name}: operands must have one shape, got {shape} and {x.shape} ({label})")
        shape = x.shape
        flat.append(np.ascontiguousarray(x).ravel())
    return shape, flat


def _check_type(name, type):
    if type not in FLOAT_TYPES:
        raise ValueError(f"{name}: type must be one of {', '.join(FLOAT_TYPES)}, got {type!r}")
    return FLOAT_TYPES[type]


def _chunks(n, parallel):
    return min(n, 4 * get_num_threads()) if parallel else 1


def float_arith(op, *operands, type="f32", rnd="rn", ftz=False, sat=False, relu=False, parallel=True):
    """Batched ``{op}.{rnd}{.ftz}{.sat}{.relu}.{type}``: uint32 bits, the operands' shape.

    >>> import numpy as np
    >>> x = np.array([0x3C003C00], np.uint32)
    >>> hex(int(float_arith("fma", x, x, x, type="f16x2")[0]))   # 1*1+1 per half
    '0x40004000'
    >>> float_arith("div", x, x, type="f16")
    Traceback (most recent call last):
    ValueError: div.rn.f16: div is defined here for f32 only
    """
    name = f"{op}.{rnd}{'.ftz' if ftz else ''}{'.sat' if sat else ''}{'.relu' if relu else ''}.{type}"
    if op not in ARITH_OPS:
        raise ValueError(f"{name}: op must be one of {', '.join(ARITH_OPS)}, got {op!r}")
    eb, fb, halves = _check_type(name, type)
    if rnd not in ROUNDING or rnd == "rna":
        raise ValueError(f"{name}: rounding must be one of rn, rz, rm, rp, got {rnd!r}")
    if type != "f32" and op in ("div", "sqrt", "rcp"):
        raise ValueError(f"{name}: {op} is defined here for f32 only")
    if type != "f32" and rnd != "rn":
        raise ValueError(f"{name}: PTX defines only .rn for {type}")
    if type.startswith("bf16") and (ftz or sat):
        raise ValueError(f"{name}: PTX defines no .ftz or .sat for {type}")
    if relu and (op != "fma" or type == "f32"):
        raise ValueError(f"{name}: .relu is defined for fma on f16/bf16 types only")
    if sat and relu:
        raise ValueError(f"{name}: .sat and .relu exclude each other")
    if sat and op in ("div", "sqrt", "rcp"):
        raise ValueError(f"{name}: PTX defines no .sat for {op}")
    if len(operands) != _ARITY[op]:
        raise ValueError(f"{name}: takes {_ARITY[op]} operands, got {len(operands)}")
    shape, flat = _arrays(name, list(zip("abc", operands)))
    while len(flat) < 3:
        flat.append(flat[0])
    out = np.empty(flat[0].size, np.uint32)
    code, r = ARITH_OPS[op], ROUNDING[rnd]
    host = type == "f32" and r == RN and op in ("add", "sub", "mul", "fma")
    if out.size:
        if parallel:
            _arith_parallel(code, *flat, out, eb, fb, halves, r, ftz, sat, relu, host, _chunks(out.size, True))
        elif host:
            _host_range(code, *flat, out, ftz, sat, 0, out.size)
        else:
            _arith_range(code, *flat, out, eb, fb, halves, r, ftz, sat, relu, 0, out.size)
    return out.reshape(shape)


@njit(cache=True, parallel=True)
def _minmax_kernel(a, b, out, eb, fb, halves, is_max, ftz, nan, xorsign_abs):
    for i in prange(a.shape[0]):
        x, y = np.int64(a[i]), np.int64(b[i])
        if halves == 0:
            out[i] = np.uint32(fp_minmax(x, y, eb, fb, is_max, ftz, nan, xorsign_abs))
        else:
            hi = fp_minmax(x >> 16, y >> 16, eb, fb, is_max, ftz, nan, xorsign_abs)
            lo = fp_minmax(x & 0xFFFF, y & 0xFFFF, eb, fb, is_max, ftz, nan, xorsign_abs)
            out[i] = np.uint32((hi << 16) | lo)


def float_minmax(op, a, b, *, type="f32", ftz=False, nan=False, xorsign_abs=False):
    """Batched ``{min,max}{.ftz}{.NaN}{.xorsign.abs}.{type}``."""
    name = f"{op}{'.ftz' if ftz else ''}{'.NaN' if nan else ''}{'.xorsign.abs' if xorsign_abs else ''}.{type}"
    if op not in ("min", "max"):
        raise ValueError(f"{name}: op must be 'min' or 'max', got {op!r}")
    eb, fb, halves = _check_type(name, type)
    if type.startswith("bf16") and ftz:
        raise ValueError(f"{name}: PTX defines no .ftz for {type}")
    shape, (fa, fb_) = _arrays(name, [("a", a), ("b", b)])
    out = np.empty(fa.size, np.uint32)
    _minmax_kernel(fa, fb_, out, eb, fb, halves, op == "max", ftz, nan, xorsign_abs)
    return out.reshape(shape)


@njit(cache=True, parallel=True)
def _setp_kernel(a, b, out, eb, fb, halves, cmp, ftz):
    for i in prange(a.shape[0]):
        x, y = np.int64(a[i]), np.int64(b[i])
        if halves == 0:
            out[i, 0] = fp_compare(x, y, eb, fb, cmp, ftz)
        else:
            out[i, 0] = fp_compare(x & 0xFFFF, y & 0xFFFF, eb, fb, cmp, ftz)   # p: lower halves
            out[i, 1] = fp_compare(x >> 16, y >> 16, eb, fb, cmp, ftz)         # q: upper halves


def float_setp(cmp, a, b, *, type="f32", ftz=False):
    """Batched ``setp.{cmp}{.ftz}.{type}``: bool of the operands' shape (x2: an extra axis of 2)."""
    name = f"setp.{cmp}{'.ftz' if ftz else ''}.{type}"
    if cmp not in CMP:
        raise ValueError(f"{name}: comparison must be one of {', '.join(CMP)}, got {cmp!r}")
    eb, fb, halves = _check_type(name, type)
    if type.startswith("bf16") and ftz:
        raise ValueError(f"{name}: PTX defines no .ftz for {type}")
    shape, (fa, fb_) = _arrays(name, [("a", a), ("b", b)])
    out = np.zeros((fa.size, 2 if halves else 1), np.bool_)
    _setp_kernel(fa, fb_, out, eb, fb, halves, CMP[cmp], ftz)
    return out.reshape(shape + (2,)) if halves else out.reshape(shape)


@njit(cache=True, parallel=True)
def _testp_kernel(a, out, eb, fb, cls):
    for i in prange(a.shape[0]):
        out[i] = fp_testp(a[i], eb, fb, cls)


def float_testp(cls, a, *, type="f32"):
    """Batched ``testp.{cls}.{type}`` (``f32``, ``f16`` or ``bf16``)."""
    name = f"testp.{cls}.{type}"
    if cls not in TESTP:
        raise ValueError(f"{name}: class must be one of {', '.join(TESTP)}, got {cls!r}")
    eb, fb, halves = _check_type(name, type)
    if halves:
        raise ValueError(f"{name}: testp takes a scalar type")
    shape, (fa,) = _arrays(name, [("a", a)])
    out = np.empty(fa.size, np.bool_)
    _testp_kernel(fa, out, eb, fb, TESTP[cls])
    return out.reshape(shape)


@njit(cache=True)
def _sign_one(op, x, y, eb, fb, ftz):
    if op == 2:
        return np.int64(f32_copysign(x, y))
    return fp_sign(x, eb, fb, ftz, op == 1)


@njit(cache=True, parallel=True)
def _sign_kernel(op, a, b, out, eb, fb, halves, ftz):
    for i in prange(a.shape[0]):
        x, y = np.int64(a[i]), np.int64(b[i])
        if halves == 0:
            out[i] = np.uint32(_sign_one(op, x, y, eb, fb, ftz))
        else:
            hi = _sign_one(op, x >> 16, y >> 16, eb, fb, ftz)
            lo = _sign_one(op, x & 0xFFFF, y & 0xFFFF, eb, fb, ftz)
            out[i] = np.uint32((hi << 16) | lo)


def float_sign(op, a, b=None, *, type="f32", ftz=False):
    """Batched ``abs{.ftz}.{type}``, ``neg{.ftz}.{type}`` or ``copysign.f32 d, a, b`` (``b``'s value, ``a``'s sign).

    >>> import numpy as np
    >>> hex(int(float_sign("neg", np.array([0x3C008001], np.uint32), type="f16x2", ftz=True)[0]))
    '0xbc000000'
    """
    name = f"{op}{'.ftz' if ftz else ''}.{type}"
    ops = {"abs": 0, "neg": 1, "copysign": 2}
    if op not in ops:
        raise ValueError(f"{name}: op must be one of abs, neg, copysign, got {op!r}")
    eb, fb, halves = _check_type(name, type)
    if op == "copysign" and (type != "f32" or b is None or ftz):
        raise ValueError(f"{name}: copysign takes two f32 operands and no .ftz")
    if type.startswith("bf16") and ftz:
        raise ValueError(f"{name}: PTX defines no .ftz for {type}")
    shape, flat = _arrays(name, [("a", a)] + ([("b", b)] if op == "copysign" else []))
    fa = flat[0]
    out = np.empty(fa.size, np.uint32)
    _sign_kernel(ops[op], fa, flat[-1], out, eb, fb, halves, ftz)
    return out.reshape(shape)
