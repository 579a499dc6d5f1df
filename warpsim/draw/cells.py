"""The items of a picture: :class:`Cell` and :class:`Label`, and where a cell's text lines and a grid's cells sit.

Geometry: ``(x, y)`` is the top-left corner in pixels, ``y`` grows downwards. Text line ``i`` of
``n`` in a cell is centred at ``y + h * (2 i + 1) / (2 n)`` (CuTe puts ``T`` at ``h/4`` and ``V``
at ``3h/4``). A :class:`~warpsim.draw.scene.Scene` holds the items; :mod:`warpsim.draw.svg` and
:mod:`warpsim.draw.png` draw them.

>>> line_centers(Cell(0, 0, 20, 20, (255, 0, 0), ("T0", "V1")))
[(10.0, 5.0), (10.0, 15.0)]
>>> grid_xy(2, 3, cell=20, x0=10, y0=30)
(70, 70)
"""

from dataclasses import dataclass

from warpsim.draw.colors import BLACK

__all__ = ["Cell", "Label", "line_centers", "grid_xy"]


@dataclass(frozen=True)
class Cell:
    """A filled ``w x h`` rectangle at ``(x, y)`` with centred text ``lines``.

    ``title`` becomes a tooltip (SVG ``<title>``); ``data`` is a tuple of ``(key, value)`` pairs
    written as SVG ``data-<key>`` attributes (the cell's coordinates, thread, value, bank, ...),
    so tools and tests can read a picture back; ``kind`` is its SVG class.
    """

    x: float
    y: float
    w: float
    h: float
    fill: tuple
    lines: tuple = ()
    stroke: tuple = BLACK
    stroke_width: float = 1.0
    font_size: float = 8.0
    bold: bool = False
    title: str = ""
    kind: str = "cell"
    data: tuple = ()


@dataclass(frozen=True)
class Label:
    """Free text centred at ``(x, y)`` (``anchor`` ``"middle"``, or ``"start"``: left-aligned at ``x``)."""

    x: float
    y: float
    text: str
    font_size: float = 12.0
    anchor: str = "middle"
    bold: bool = False
    fill: tuple = BLACK
    kind: str = "label"


def line_centers(cell):
    """Centres ``(x, y)`` of the text lines of ``cell``."""
    n = len(cell.lines)
    return [(cell.x + cell.w / 2, cell.y + cell.h * (2 * i + 1) / (2 * n)) for i in range(n)]


def grid_xy(row, col, cell, x0=0, y0=0):
    """Top-left corner of grid cell ``(row, col)`` of a grid of ``cell``-pixel squares at ``(x0, y0)``."""
    return (x0 + col * cell, y0 + row * cell)
