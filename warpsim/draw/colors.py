"""Colours of warpsim's pictures: small pure functions from an index to an ``(r, g, b)`` triple.

The thread/value palette is CuTe's own (``SVGColor_TV`` in ``include/cute/util/print_svg.hpp``,
``TikzColor_TV`` in ``include/cute/util/print_latex.hpp``): eight pastel colours chosen by the thread
id modulo 8, whatever the value index. Banks get 32 pastel hues around the colour wheel, one per
bank, in bank order, so that a conflict-free row of 32 banks reads as a rainbow and a bank
conflict as a column of one colour.

>>> tv_color(0), tv_color(9, 3)
((175, 175, 255), (175, 255, 175))
>>> bank_color(0), bank_color(32) == bank_color(0)
((255, 140, 140), True)
>>> rgb_hex((255, 8, 0)), text_color((20, 20, 20)), text_color(tv_color(3))
('#ff0800', (255, 255, 255), (0, 0, 0))
"""

import colorsys

__all__ = [
    "TV_PALETTE", "WHITE", "BLACK", "GREY", "HIGHLIGHT_FILL", "HIGHLIGHT_STROKE", "CONFLICT_STROKE",
    "tv_color", "bank_color", "rgb_hex", "text_color", "lighten",
]

# CuTe's SVGColor_TV / TikzColor_TV, indexed by thread id % 8.
TV_PALETTE = (
    (175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
    (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210),
)
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GREY = (200, 200, 200)
HIGHLIGHT_FILL = (255, 230, 120)     # a highlighted register or cell
HIGHLIGHT_STROKE = (215, 40, 40)     # the outline of a highlighted thread's cells or a marked lane
CONFLICT_STROKE = (160, 0, 160)      # the outline of an element whose bank serves several words


def tv_color(tid, vid=0):
    """CuTe's colour of thread ``tid``'s value ``vid``: the palette entry ``tid % 8`` (``vid`` unused)."""
    return TV_PALETTE[int(tid) % len(TV_PALETTE)]


def bank_color(bank, banks=32):
    """A pastel colour of ``bank`` (``0 <= bank < banks``; taken modulo ``banks``): hue ``bank / banks``."""
    r, g, b = colorsys.hsv_to_rgb((int(bank) % banks) / banks, 0.45, 1.0)
    return (round(r * 255), round(g * 255), round(b * 255))


def rgb_hex(rgb):
    """``(r, g, b)`` as ``#rrggbb``."""
    r, g, b = rgb
    return f"#{int(r):02x}{int(g):02x}{int(b):02x}"


def text_color(fill):
    """Black text on a light ``fill``, white on a dark one (ITU-R BT.601 luma below 128)."""
    r, g, b = fill
    return WHITE if 0.299 * r + 0.587 * g + 0.114 * b < 128 else BLACK


def lighten(rgb, amount=0.6):
    """``rgb`` mixed with white: ``amount`` 0 keeps it, 1 gives white.

    >>> lighten((0, 100, 255), 0.5)
    (128, 178, 255)
    """
    return tuple(round(c + (255 - c) * amount) for c in rgb)
