"""A picture as data: cells and labels on a pixel grid, written out as SVG or PNG.

Every warpsim picture is a :class:`Scene`: a list of :class:`Cell` (a filled rectangle with one or
more centred lines of text, an optional tooltip and machine-readable ``data`` attributes) and
:class:`Label` (free text), plus comment lines (the layouts drawn, as CuTe's ``print_svg`` writes
them). Building a scene is pure Python; :mod:`warpsim.draw.svg` writes it as hand-written SVG and
:mod:`warpsim.draw.png` rasterises it with Pillow (the optional extra ``warpsim[draw]``).

Geometry: ``(x, y)`` is the top-left corner in pixels, ``y`` grows downwards. Text line ``i`` of
``n`` in a cell is centred at ``y + h * (2 i + 1) / (2 n)`` (CuTe puts ``T`` at ``h/4`` and ``V``
at ``3h/4``).

>>> s = Scene(100, 40)
>>> s.add(Cell(0, 0, 20, 20, (255, 0, 0), ("T0", "V1")))
>>> line_centers(s.items[0])
[(10.0, 5.0), (10.0, 15.0)]
>>> grid_xy(2, 3, cell=20, x0=10, y0=30)
(70, 70)
"""

from dataclasses import dataclass, field

from warpsim.draw.colors import BLACK
from warpsim.files import write_atomic

__all__ = ["Cell", "Label", "Scene", "line_centers", "grid_xy", "save_scene"]


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


@dataclass
class Scene:
    """A ``width x height`` picture: ``items`` in drawing order, ``comments`` written first (SVG only)."""

    width: float
    height: float
    items: list = field(default_factory=list)
    comments: list = field(default_factory=list)
    title: str = ""

    def add(self, item):
        """Append a :class:`Cell` or :class:`Label`."""
        if not isinstance(item, (Cell, Label)):
            raise TypeError(f"Scene.add: expected a Cell or a Label, got {item!r}")
        self.items.append(item)

    def cells(self, kind=None):
        """The cells of the scene (of class ``kind`` if given)."""
        return [c for c in self.items if isinstance(c, Cell) and (kind is None or c.kind == kind)]

    def svg(self):
        """The scene as an SVG document (a string)."""
        from warpsim.draw.svg import to_svg
        return to_svg(self)

    def save(self, path, scale=2):
        """Write the scene to ``path``: SVG for ``*.svg``, PNG for ``*.png`` (needs ``warpsim[draw]``)."""
        save_scene(self, path, scale)

    def _repr_svg_(self):
        return self.svg()


def line_centers(cell):
    """Centres ``(x, y)`` of the text lines of ``cell``."""
    n = len(cell.lines)
    return [(cell.x + cell.w / 2, cell.y + cell.h * (2 * i + 1) / (2 * n)) for i in range(n)]


def grid_xy(row, col, cell, x0=0, y0=0):
    """Top-left corner of grid cell ``(row, col)`` of a grid of ``cell``-pixel squares at ``(x0, y0)``."""
    return (x0 + col * cell, y0 + row * cell)


def save_scene(scene, path, scale=2):
    """Write ``scene`` to ``path`` (``.svg`` or ``.png``) whole or not at all (``write_atomic``);
    ``ValueError`` for another suffix, ``WriteError`` naming the file when it cannot be written."""
    name = str(path)
    lower = name.lower()
    if lower.endswith(".svg"):
        text = scene.svg().encode("utf-8")
        write_atomic(name, lambda f: f.write(text))
    elif lower.endswith(".png"):
        from warpsim.draw.png import to_png
        write_atomic(name, lambda f: to_png(scene, f, scale=scale))
    else:
        raise ValueError(f"save: cannot tell the picture format of {name!r}: use a .svg or .png file name")
