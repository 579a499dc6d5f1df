"""A picture as data: cells and labels on a pixel grid, written out as SVG or PNG.

Every warpsim picture is a :class:`Scene`: a list of :class:`~warpsim.draw.cells.Cell` (a filled
rectangle with one or more centred lines of text, an optional tooltip and machine-readable ``data``
attributes) and :class:`~warpsim.draw.cells.Label` (free text), plus comment lines (the layouts
drawn, as CuTe's ``print_svg`` writes them). Building a scene is pure Python; :mod:`warpsim.draw.svg`
writes it as hand-written SVG and :mod:`warpsim.draw.png` rasterises it with Pillow (the optional
extra ``warpsim[draw]``, imported when a PNG is written).

>>> s = Scene(100, 40)
>>> s.add(Cell(0, 0, 20, 20, (255, 0, 0), ("T0", "V1")))
>>> len(s.cells()), s.svg().count('<g class="cell"')
(1, 1)
"""

from dataclasses import dataclass, field

from warpsim.draw.cells import Cell, Label
from warpsim.draw.png import to_png
from warpsim.draw.svg import to_svg
from warpsim.files import write_atomic

__all__ = ["Scene", "save_scene"]


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
        return to_svg(self)

    def save(self, path, scale=2):
        """Write the scene to ``path``: SVG for ``*.svg``, PNG for ``*.png`` (needs ``warpsim[draw]``)."""
        save_scene(self, path, scale)

    def _repr_svg_(self):
        return self.svg()


def save_scene(scene, path, scale=2):
    """Write ``scene`` to ``path`` (``.svg`` or ``.png``) whole or not at all (``write_atomic``);
    ``ValueError`` for another suffix, ``WriteError`` naming the file when it cannot be written."""
    name = str(path)
    lower = name.lower()
    if lower.endswith(".svg"):
        text = scene.svg().encode("utf-8")
        write_atomic(name, lambda f: f.write(text))
    elif lower.endswith(".png"):
        write_atomic(name, lambda f: to_png(scene, f, scale=scale))
    else:
        raise ValueError(f"save: cannot tell the picture format of {name!r}: use a .svg or .png file name")
