"""The host CPU's own IEEE 754 binary32 ``fma``, ``add`` and ``mul``, where they give PTX's bits.

``fma.rn.f32``, ``add.rn.f32`` and ``mul.rn.f32`` are single IEEE 754 operations in binary32 with
round-to-nearest-even; so are LLVM's ``llvm.fma.f32``, ``fadd float`` and ``fmul float`` (the LLVM
Language Reference: without fast-math flags they are correctly rounded in the default
environment, and Numba compiles without fast-math unless asked; the explicit ``llvm.fma`` intrinsic
is one fused operation that no pass may split or re-associate). The results agree bit for bit with
the integer model (``fparith``) on every finite and infinite result. What differs, and is handled
here in bits around the one host operation:

- NaN: the host propagates an input payload (x86: the first NaN operand, quietened) or makes its
  own default NaN ``0xFFC00000``; PTX gives the canonical ``0x7FFFFFFF``. Any NaN result is replaced.
- ``.ftz``: the host keeps subnormals (Numba leaves MXCSR's FTZ/DAZ off); subnormal inputs are
  flushed before, subnormal results after, exactly as ``fparith.finish`` does. A result of exactly
  the smallest normal may come from an exact value that ``.ftz`` flushes (tininess after rounding with
  an unbounded exponent, see ``fparith``): that rare result is taken from the integer model instead.
- ``.sat``: applied to the bits afterwards by ``fparith.finish``.

The other rounding modes are not reachable this way (Numba cannot set the host's rounding mode), so
``.rz .rm .rp`` always take the integer model. ``tests/isa/test_float_hostpath.py`` checks both paths
agree on special values, subnormals, ties and random bits.

>>> hex(host_f32_fma(0x3F800001, 0x3F800001, 0xBF800002, False, False))
'0x28800000'
>>> hex(host_f32_add(0x7F800000, 0xFF800000, False, False))   # inf - inf: the canonical NaN
'0x7fffffff'
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from warpsim.isa.fparith import finish, fp_fma
from warpsim.isa.rounding import RN

__all__ = ["host_f32_fma", "host_f32_add", "host_f32_mul", "host_f32_fma_raw", "host_f32_mul_raw",
           "resolve_smallest_normals"]


@intrinsic
def _as_f32(typingctx, bits):
    """uint32 bits reinterpreted as a float32 (an LLVM bitcast)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.uint32), codegen


@intrinsic
def _as_u32(typingctx, x):
    """float32 reinterpreted as uint32 bits."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def _fma32(typingctx, a, b, c):
    """``llvm.fma.f32``: one fused multiply-add, rounded once to nearest even."""
    def codegen(context, builder, signature, args):
        f32 = ir.FloatType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f32, [f32, f32, f32]),
                                            "llvm.fma.f32")
        return builder.call(fn, args)
    return types.float32(types.float32, types.float32, types.float32), codegen


@njit(cache=True)
def _operand(bits, ftz):
    x = np.uint32(bits)
    if ftz and (x & 0x7F800000) == 0:
        x = np.uint32(x & 0x80000000)
    return _as_f32(x)


@njit(cache=True)
def _result(r, ftz, sat):
    bits = _as_u32(r)
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        bits = np.uint32(0x7FFFFFFF)
    if ftz or sat:
        return np.uint32(finish(bits, 8, 23, ftz, sat, False))
    return bits


@njit(cache=True)
def _smallest_normal(bits, ftz):
    """Whether ``.ftz`` must ask the integer model about a result ``bits``: it is ``+-2**-126`` (after
    ``.sat`` only ``+2**-126`` is left: ``-2**-126`` and its flushed ``-0`` both saturate to ``+0``)."""
    return ftz and (np.uint32(bits) & np.uint32(0x7FFFFFFF)) == np.uint32(0x00800000)


@njit(cache=True)
def host_f32_fma_raw(a, b, c, ftz, sat):
    """``host_f32_fma`` without the look at a ``.ftz`` result of ``+-2**-126`` (a loop of it vectorises;
    ``resolve_smallest_normals`` settles those afterwards)."""
    return _result(_fma32(_operand(a, ftz), _operand(b, ftz), _operand(c, ftz)), ftz, sat)


@njit(cache=True)
def host_f32_mul_raw(a, b, ftz, sat):
    """``host_f32_mul`` without the look at a ``.ftz`` result of ``+-2**-126`` (see ``host_f32_fma_raw``)."""
    return _result(_operand(a, ftz) * _operand(b, ftz), ftz, sat)


@njit(cache=True)
def _model(a, b, c, op, sat):
    """The integer model's ``fma`` (``op == 1``) or ``mul`` (``op == 0``) ``.rn.ftz{.sat}.f32``."""
    return np.uint32(finish(fp_fma(a, b, c, op, 8, 23, RN, True), 8, 23, False, sat, False))


@njit(cache=True)
def host_f32_fma(a, b, c, ftz, sat):
    """``fma.rn{.ftz}{.sat}.f32`` through the host's binary32 fma."""
    bits = host_f32_fma_raw(a, b, c, ftz, sat)
    return _model(a, b, c, 1, sat) if _smallest_normal(bits, ftz) else bits


@njit(cache=True)
def host_f32_add(a, b, ftz, sat):
    """``add.rn{.ftz}{.sat}.f32`` through the host's binary32 add (a sum of normals below ``2**-126``
    is exact: ``.ftz`` needs no look at the exact value)."""
    return _result(_operand(a, ftz) + _operand(b, ftz), ftz, sat)


@njit(cache=True)
def host_f32_mul(a, b, ftz, sat):
    """``mul.rn{.ftz}{.sat}.f32`` through the host's binary32 multiply."""
    bits = host_f32_mul_raw(a, b, ftz, sat)
    return _model(a, b, 0, 0, sat) if _smallest_normal(bits, ftz) else bits


@njit(cache=True)
def resolve_smallest_normals(a, b, c, out, is_fma, sat):
    """Redo with the integer model each ``out[i]`` of ``+-2**-126`` that ``host_f32_fma_raw`` (``is_fma``)
    or ``host_f32_mul_raw`` wrote under ``.ftz`` from ``a[i], b[i]`` (and ``c[i]``)."""
    found = np.uint32(0)
    for i in range(out.size):   # this loop vectorises (uint32 only); results of +-2**-126 are rare
        found |= np.uint32((out[i] & np.uint32(0x7FFFFFFF)) == np.uint32(0x00800000))
    if found == 0:
        return
    for i in range(out.size):
        if _smallest_normal(out[i], True):
            out[i] = _model(a[i], b[i], c[i], 1 if is_fma else 0, sat)
