"""One 32-bit register's bits as text: ``"hex"``, ``"f16x2"``, ``"bf16x2"`` or ``"f32"``.

``"hex"`` is ``0x3c003c00``; ``"f16x2"`` / ``"bf16x2"`` are the two 16-bit halves, low half first, as
PTX packs a pair (``"1 | 2"``); ``"f32"`` the single float. Decoding is for display only: the printed
decimal is the value of the bits (shortest repr that reads back to the same half or single float),
never an input to the simulation.
"""

from functools import lru_cache

import numpy as np

__all__ = ["REGISTER_FORMATS", "format_bits"]

REGISTER_FORMATS = ("hex", "f16x2", "bf16x2", "f32")


def _float_text(x):
    """The shortest decimal of a numpy half/single float, without a trailing ``.0``."""
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    s = np.format_float_positional(x, unique=True, trim="-") if abs(x) >= 1e-4 or x == 0 else \
        np.format_float_scientific(x, unique=True, trim="-")
    return "-0" if s == "-0" or (x == 0 and np.signbit(x)) else s


@lru_cache(maxsize=1 << 17)
def _half_text(half, fmt):
    """The text of one 16-bit half (``fmt`` ``"f16x2"`` or ``"bf16x2"``); cached: a debugger redraws mostly
    unchanged registers, and there are only 65,536 halves per format."""
    if fmt == "f16x2":
        return _float_text(np.array(half, np.uint16).view(np.float16)[()])
    return _float_text(np.array(half << 16, np.uint32).view(np.float32)[()])


@lru_cache(maxsize=1 << 16)
def _f32_text(bits):
    return _float_text(np.array(bits, np.uint32).view(np.float32)[()])


def _halves(bits, fmt):
    return [_half_text(bits & 0xFFFF, fmt), _half_text(bits >> 16, fmt)]


def format_bits(bits, fmt="hex"):
    """The text of one 32-bit register ``bits`` in ``fmt`` (see the module docstring).

    >>> format_bits(0x3F80BF80, "bf16x2"), format_bits(0x7FC00000, "f32"), format_bits(0x00017C00, "f16x2")
    ('-1 | 1', 'nan', 'inf | 6e-08')
    """
    if fmt not in REGISTER_FORMATS:
        raise ValueError(f"format_bits: unknown format {fmt!r}; expected one of {', '.join(REGISTER_FORMATS)}")
    bits = int(bits)
    if fmt == "hex":
        return f"0x{bits:08x}"
    if fmt == "f32":
        return _f32_text(bits)
    lo, hi = _halves(bits, fmt)
    return f"{lo} | {hi}"
