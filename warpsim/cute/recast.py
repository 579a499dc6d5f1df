"""Changing the element width of a layout: ``upcast``, ``downcast``, ``recast_layout``.

Ports of the "Upcast"/"Downcast"/"Recast" sections of ``include/cute/layout.hpp`` and their
swizzle and composed-layout overloads (``include/cute/swizzle_layout.hpp``,
``include/cute/swizzle.hpp``, ``include/cute/layout_composed.hpp``). Copy atoms declare their
layouts in bits; ``recast_layout(1, 16, layout)`` views them in 16-bit elements.

Examples::

    >>> str(upcast(2, Layout((4, 8), (1, 4)))), str(downcast(2, Layout((4, 8), (1, 4))))
    ('(_2,_8):(_1,_2)', '(_8,_8):(_1,_8)')
    >>> str(recast_layout(1, 16, Layout((32, 128), (128, 1))))
    '(_32,_8):(_8,_1)'
    >>> str(upcast(2, Swizzle(3, 3, 3))), str(downcast(2, Swizzle(3, 3, 3)))
    ('Sw<3,2,3>', 'Sw<3,4,3>')
"""

from warpsim.cute.integers import (
    DInt, ceil_div_int, cute_abs, cute_gcd, cute_str, div, is_constant, is_int, is_static, is_tuple,
    mod, signum,
)
from warpsim.cute import int_tuple as it
from warpsim.cute.layout import Layout, is_composed, make_layout
from warpsim.cute.composed import compose_with_offset
from warpsim.cute.swizzle import MixedBits, Swizzle, make_mixed_bits

__all__ = ["upcast", "downcast", "recast_layout"]


def _pow2(op, n):
    if not is_int(n) or n <= 0 or n & (n - 1):
        raise ValueError(f"{op}: N must be a positive power of two, got {n!r}")
    return n.bit_length() - 1


def _safe_div(op, a, n):
    if is_static(a) and mod(a, n) != 0:
        raise ValueError(f"{op}: {cute_str(a)} is not divisible by {n}")
    return div(a, n)


def upcast(n, x):
    """CuTe ``upcast<N>``: view ``x`` in elements ``N`` times wider.

    The stride-1 mode shrinks by ``N``, other static strides are divided by ``N`` (a static
    stride must divide or be divided by ``N``); dynamic strides are divided (assumed divisible).
    """
    if not is_int(n) or n <= 0:
        raise ValueError(f"upcast: N must be a positive integer, got {n!r}")
    if isinstance(x, Swizzle):
        log2n = _pow2("upcast", n)
        new_m = x.num_base - log2n
        if new_m >= 0:
            return Swizzle(x.num_bits, new_m, x.num_shft)
        return Swizzle(max(x.num_bits + new_m, 0), 0, x.num_shft)
    if is_composed(x):
        return compose_with_offset(upcast(n, x.layout_a), upcast(n, x.offset), upcast(n, x.layout_b))
    if isinstance(x, MixedBits):
        _pow2("upcast", n)
        return make_mixed_bits(_safe_div("upcast", x.static_int, n), DInt(x.dynamic_int // n),
                               _safe_div("upcast", x.static_flags, n))
    if is_int(x):
        return _safe_div("upcast", x, n)
    if isinstance(x, Layout):
        return _upcast(n, x.shape, x.stride, x)
    raise TypeError(f"upcast: expected a layout, swizzle or offset, got {x!r}")


def _upcast(n, shape, stride, orig):
    if is_tuple(shape):
        return make_layout(*[_upcast(n, s, d, orig) for s, d in zip(shape, stride)])
    if is_constant(0, stride):
        return Layout(shape, stride)
    if is_static(stride):
        if int(stride) % n != 0 and n % int(stride) != 0:
            raise ValueError(f"upcast: divisibility condition fails for stride {cute_str(stride)} and N={n}: {orig}")
        return Layout(ceil_div_int(shape, ceil_div_int(n, cute_abs(stride))),
                      signum(stride) * ceil_div_int(cute_abs(stride), n))
    return Layout(shape, div(stride, n))


def _has_static_one(t):
    return any(is_constant(1, d) for d in it.flatten_to_tuple(t))


def downcast(n, x):
    """CuTe ``downcast<N>``: view ``x`` in elements ``N`` times narrower.

    The stride-1 (or -1) modes grow by ``N``, every other stride is multiplied by ``N``.
    Pre-condition for a Layout: a static stride ``_1`` somewhere (adjacent elements).
    """
    if not is_int(n) or n <= 0:
        raise ValueError(f"downcast: N must be a positive integer, got {n!r}")
    if isinstance(x, Swizzle):
        return Swizzle(x.num_bits, x.num_base + _pow2("downcast", n), x.num_shft)
    if is_composed(x):
        return compose_with_offset(downcast(n, x.layout_a), downcast(n, x.offset), downcast(n, x.layout_b))
    if isinstance(x, MixedBits):
        _pow2("downcast", n)
        return make_mixed_bits(x.static_int * n, DInt(x.dynamic_int * n), x.static_flags * n)
    if is_int(x):
        return x * n
    if isinstance(x, Layout):
        if not _has_static_one(x.stride):
            raise ValueError(f"downcast: requires a static stride _1 (adjacent elements): {x}")
        return _downcast(n, x.shape, x.stride)
    raise TypeError(f"downcast: expected a layout, swizzle or offset, got {x!r}")


def _downcast(n, shape, stride):
    if is_tuple(shape):
        return make_layout(*[_downcast(n, s, d) for s, d in zip(shape, stride)])
    if is_constant(1, stride) or is_constant(-1, stride):
        return Layout(shape * n, stride)
    return Layout(shape, stride * n)


def recast_layout(old_bits, new_bits, x):
    """CuTe ``recast_layout<OldType, NewType>``: from elements of ``old_bits`` to ``new_bits`` bits.

    ``new/old`` in lowest terms is ``num/den``: ``downcast<den>(upcast<num>(x))`` (either step
    skipped when it is 1).
    """
    for name, v in (("old_bits", old_bits), ("new_bits", new_bits)):
        if not is_int(v) or v <= 0:
            raise ValueError(f"recast_layout: {name} must be a positive integer, got {v!r}")
    g = int(cute_gcd(new_bits, old_bits))
    num, den = new_bits // g, old_bits // g
    if num != 1:
        x = upcast(num, x)
    if den != 1:
        x = downcast(den, x)
    return x

