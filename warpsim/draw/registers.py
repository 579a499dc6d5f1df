"""A warp's register file as a picture: 32 lanes x R registers, as hex or decoded, some cells highlighted.

The registers are ``uint32`` bit patterns (``regs[lane, reg]``, one warp of a machine's
``regs[warp]``). Formats: ``"hex"`` (``0x3c003c00``), ``"f16x2"`` / ``"bf16x2"`` (the two 16-bit
halves, low half first, as PTX packs a pair: ``"1 | 2"``), ``"f32"``. Decoding is for display only:
the printed decimal is the value of the bits (shortest repr that reads back to the same half or
single float), never an input to the simulation.

:func:`register_grid` returns a :class:`RegisterGrid`: ``.cells`` (the texts), ``.text()`` (a plain
table, highlighted cells marked ``*``), ``.scene()`` / ``.svg()`` / ``.save(path)`` (a picture) and
``_repr_html_`` (a table in Jupyter). The debugger passes the registers the last instruction wrote
as ``highlight``.

>>> regs = np.zeros((32, 2), np.uint32); regs[5, 1] = 0x40003C00
>>> g = register_grid(regs, "f16x2", highlight=[(5, 1)])
>>> g.cells[5, 1], g.cells[0, 0]
('1 | 2', '0 | 0')
>>> register_grid(regs).cells[5, 1], register_grid(regs, "f32").cells[5, 1]
('0x40003c00', '2.003662')
>>> lines = g.text().splitlines()
>>> lines[0], lines[6]
('lane  r0     r1', '   5  0 | 0 *1 | 2')
"""

from dataclasses import dataclass

import numpy as np

from warpsim.draw.bits import REGISTER_FORMATS, format_bits
from warpsim.draw.cells import Cell, Label
from warpsim.draw.colors import GREY, HIGHLIGHT_FILL, HIGHLIGHT_STROKE, WHITE
from warpsim.draw.html import html_table
from warpsim.draw.scene import Scene

__all__ = ["TEXT_WIDTH", "RegisterGrid", "register_grid"]

def _check_regs(op, regs):
    arr = np.asarray(regs)
    if arr.ndim != 2 or arr.shape[0] != 32:
        raise ValueError(f"{op}: expected one warp's registers as a [32, R] array, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{op}: registers must be integer bit patterns (uint32), got dtype {arr.dtype}")
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) > 0xFFFFFFFF):
        raise ValueError(f"{op}: register values must be 32-bit patterns in [0, 2**32), got "
                         f"{int(arr.min())}..{int(arr.max())}")
    return arr.astype(np.uint32)


def _check_highlight(op, highlight, n_regs):
    out = set()
    for item in highlight:
        try:
            lane, reg = (int(x) for x in item)
        except (TypeError, ValueError):
            raise ValueError(f"{op}: highlight entries must be (lane, register) pairs, got {item!r}") from None
        if not (0 <= lane < 32 and 0 <= reg < n_regs):
            raise ValueError(f"{op}: highlight ({lane}, {reg}) is outside 32 lanes x {n_regs} registers")
        out.add((lane, reg))
    return frozenset(out)


TEXT_WIDTH = 120   # characters a line of a register table's text, before its columns wrap


def _blocks(widths, width):
    """``[(start, stop), ...]``: runs of columns whose line ("lane" and a space before each column)
    fits ``width``; every run holds at least one column."""
    blocks, start = [], 0
    while start < len(widths):
        stop, used = start + 1, 4 + 1 + widths[start]
        while stop < len(widths) and (width is None or used + 1 + widths[stop] <= width):
            used += 1 + widths[stop]
            stop += 1
        blocks.append((start, stop))
        start = stop
    return blocks or [(0, 0)]


@dataclass(frozen=True, eq=False)
class RegisterGrid:
    """One warp's registers ready to show; build it with :func:`register_grid`."""

    regs: np.ndarray
    fmt: str
    highlight: frozenset
    names: tuple
    title: str
    cells: np.ndarray

    def text(self, lanes=None, width=TEXT_WIDTH):
        """A plain-text table: one row per lane (``lanes``: those shown, default all), highlighted cells
        prefixed with ``*``. Columns wrap into blocks whose lines are at most ``width`` characters (at
        least one column a block; ``None``: one block), each block with its own header."""
        lanes = range(32) if lanes is None else lanes
        cols = [[("*" if (lane, r) in self.highlight else " ") + str(self.cells[lane, r]) for lane in range(32)]
                for r in range(len(self.names))]
        widths = [max([len(n) + 1] + [len(x) for x in col]) for n, col in zip(self.names, cols)]
        lines = [self.title] if self.title else []
        for start, stop in _blocks(widths, width):
            if start:
                lines.append("")
            block = range(start, stop)
            lines.append("lane" + "".join(f" {' ' + self.names[r]:<{widths[r]}}" for r in block).rstrip())
            for lane in lanes:
                lines.append(f"{lane:4d}" + "".join(f" {cols[r][lane]:<{widths[r]}}" for r in block).rstrip())
        return "\n".join(lines) + "\n"

    def scene(self, font_size=10):
        """The grid as a :class:`~warpsim.draw.scene.Scene`: lanes down, registers across."""
        char = font_size * 0.62
        width = max(4, max((len(str(x)) for x in self.cells.reshape(-1)), default=4)) * char + 10
        height = font_size * 1.8
        x0, y0 = 5 * char + 8, height * (2 if self.title else 1)
        scene = Scene(x0 + width * len(self.names) + 4, y0 + height * 32 + 4, title=self.title)
        if self.title:
            scene.add(Label(4, height / 2, self.title, font_size, anchor="start", bold=True, kind="title"))
        for r, name in enumerate(self.names):
            scene.add(Label(x0 + r * width + width / 2, y0 - height / 2, name, font_size, bold=True, kind="label-reg"))
        for lane in range(32):
            scene.add(Label(x0 - char * 2.5 - 4, y0 + lane * height + height / 2, str(lane), font_size,
                            kind="label-lane"))
            for r in range(len(self.names)):
                hot = (lane, r) in self.highlight
                scene.add(Cell(x0 + r * width, y0 + lane * height, width, height,
                               HIGHLIGHT_FILL if hot else (WHITE if (lane // 4) % 2 == 0 else (244, 244, 244)),
                               (str(self.cells[lane, r]),), stroke=HIGHLIGHT_STROKE if hot else GREY,
                               stroke_width=2 if hot else 1, font_size=font_size, bold=hot,
                               title=f"lane {lane} {self.names[r]} = 0x{int(self.regs[lane, r]):08x}",
                               data=(("lane", lane), ("reg", r), ("bits", f"0x{int(self.regs[lane, r]):08x}"),
                                     ("highlight", int(hot)))))
        return scene

    def svg(self):
        return self.scene().svg()

    def save(self, path, scale=2):
        """Write the picture to ``path`` (``.svg``, or ``.png`` with ``warpsim[draw]``)."""
        self.scene().save(path, scale)

    def _repr_html_(self):
        fills = [[HIGHLIGHT_FILL if (lane, r) in self.highlight else None for r in range(len(self.names))]
                 for lane in range(32)]
        return html_table(self.cells, row_labels=[str(i) for i in range(32)], col_labels=list(self.names),
                          fills=fills, bold=fills, title=self.title, corner="lane")


def register_grid(regs, fmt="hex", highlight=(), names=None, title=""):
    """A :class:`RegisterGrid` of ``regs`` (``uint32[32, R]``: one warp) in format ``fmt``.

    ``highlight``: ``(lane, register)`` pairs to mark; ``names``: column headers (default ``r0``..).
    ``ValueError``/``TypeError`` for a wrong shape, non-integer data, an unknown format or a
    highlight outside the grid.
    """
    arr = _check_regs("register_grid", regs)
    if fmt not in REGISTER_FORMATS:
        raise ValueError(f"register_grid: unknown format {fmt!r}; expected one of {', '.join(REGISTER_FORMATS)}")
    n = arr.shape[1]
    names = tuple(f"r{i}" for i in range(n)) if names is None else tuple(str(x) for x in names)
    if len(names) != n:
        raise ValueError(f"register_grid: {len(names)} names for {n} registers")
    cells = np.empty(arr.shape, dtype=object)
    cache = {}
    for lane in range(32):
        for r in range(n):
            b = int(arr[lane, r])
            if b not in cache:
                cache[b] = format_bits(b, fmt)
            cells[lane, r] = cache[b]
    cells.setflags(write=False)
    arr.setflags(write=False)
    return RegisterGrid(arr, fmt, _check_highlight("register_grid", highlight, n), names, str(title), cells)
