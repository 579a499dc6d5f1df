"""HTML tables for Jupyter: register grids and tensor tiles (``_repr_html_``).

:func:`html_table` renders a 2-D array of texts with row and column headers, optional per-cell
fill colours and bold cells. :class:`TileView` is a tile of a tensor in its logical (row, col)
shape; :func:`smem_tile` fills one with the values a shared-memory tensor holds (read from the
bytes of shared memory at each element's byte address, swizzle included). A Jupyter cell that
ends with a ``TileView`` or a :class:`~warpsim.draw.registers.RegisterGrid` shows the table.

>>> t = html_table([["1", "2"]], row_labels=["0"], col_labels=["a", "b<"], fills=[[(255, 0, 0), None]])
>>> 'background:#ff0000">1</td>' in t, "b&lt;" in t
(True, True)
>>> import warpsim.cute as cute
>>> s = cute.make_tensor(cute.make_smem_ptr(4, "f16"), cute.make_layout((2, 2), (2, 1)))
>>> smem = np.zeros(16, np.uint8); smem[6:8] = [0x00, 0x3C]       # element (0, 1) at bytes 6..7: 1.0
>>> smem_tile(s, smem).values.tolist()
[['0', '1'], ['0', '0']]
"""

from dataclasses import dataclass
from html import escape

import numpy as np

from warpsim import cute
from warpsim.draw.bits import format_bits
from warpsim.draw.colors import rgb_hex

__all__ = ["html_table", "TileView", "tile_view", "smem_tile", "tensor_grid_shape"]

_TABLE_STYLE = "border-collapse:collapse;font-family:monospace;font-size:11px"
_CELL_STYLE = "border:1px solid #ccc;padding:1px 4px;text-align:right"


def html_table(cells, row_labels=None, col_labels=None, fills=None, bold=None, title="", corner=""):
    """An HTML ``<table>`` of ``cells`` (rows of texts); ``fills``/``bold``: per-cell colour or None / truthy."""
    rows = [list(r) for r in cells]
    out = [f'<table style="{_TABLE_STYLE}">']
    if title:
        out.append(f"<caption>{escape(str(title))}</caption>")
    if col_labels is not None:
        head = "".join(f"<th>{escape(str(c))}</th>" for c in col_labels)
        corner_cell = f"<th>{escape(str(corner))}</th>" if row_labels is not None else ""
        out.append(f"<tr>{corner_cell}{head}</tr>")
    for i, row in enumerate(rows):
        tds = []
        for j, text in enumerate(row):
            style = [_CELL_STYLE]
            if fills is not None and fills[i][j] is not None:
                style.append(f"background:{rgb_hex(fills[i][j])}")
            if bold is not None and bold[i][j]:
                style.append("font-weight:bold")
            tds.append(f'<td style="{";".join(style)}">{escape(str(text))}</td>')
        label = f"<th>{escape(str(row_labels[i]))}</th>" if row_labels is not None else ""
        out.append(f"<tr>{label}{''.join(tds)}</tr>")
    out.append("</table>")
    return "\n".join(out)


@dataclass(frozen=True, eq=False)
class TileView:
    """A tile of texts in a tensor's (row, col) shape, with optional fills and highlighted cells."""

    values: np.ndarray
    title: str = ""
    fills: object = None
    highlight: frozenset = frozenset()

    def text(self):
        """A plain-text table, highlighted cells prefixed with ``*``."""
        rows, cols = self.values.shape
        cells = [[("*" if (r, c) in self.highlight else "") + str(self.values[r, c]) for c in range(cols)]
                 for r in range(rows)]
        width = max([len(str(cols - 1))] + [len(x) for row in cells for x in row])
        lines = [self.title] if self.title else []
        lines.append(" " * 4 + "".join(f" {c:>{width}}" for c in range(cols)))
        lines += [f"{r:4d}" + "".join(f" {x:>{width}}" for x in row) for r, row in enumerate(cells)]
        return "\n".join(lines) + "\n"

    def _repr_html_(self):
        rows, cols = self.values.shape
        bold = [[(r, c) in self.highlight for c in range(cols)] for r in range(rows)]
        return html_table(self.values, row_labels=range(rows), col_labels=range(cols), fills=self.fills,
                          bold=bold, title=self.title)


def tile_view(values, title="", fills=None, highlight=()):
    """A :class:`TileView` of a 2-D array of texts (or numbers, shown with ``str``)."""
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"tile_view: expected a 2-D array of values, got shape {arr.shape}")
    return TileView(arr, str(title), fills, frozenset((int(r), int(c)) for r, c in highlight))


def tensor_grid_shape(tensor, op):
    """``(rows, cols)`` a tensor is drawn as: its first mode down, the product of the others across."""
    if not cute.is_tensor(tensor):
        raise TypeError(f"{op}: expected a warpsim.cute Tensor, got {tensor!r}")
    n = int(cute.size(tensor.layout))
    rows = int(cute.size(tensor.layout, 0)) if tensor.rank >= 1 else n
    return rows, n // rows


def smem_tile(tensor, smem, fmt=None, highlight=(), title=""):
    """The values shared-memory ``tensor`` holds in ``smem`` (``uint8`` bytes), as a :class:`TileView`.

    ``fmt``: ``"f16"``, ``"bf16"``, ``"f32"`` (decoded for display) or ``"hex"``; default: the
    tensor's dtype (``u16``/``u32`` as hex). ``ValueError`` when an element lies outside ``smem``.
    """
    rows, cols = tensor_grid_shape(tensor, "smem_tile")
    if tensor.space != "smem":
        raise ValueError(f"smem_tile: expected a shared-memory tensor, got one in {tensor.space}")
    smem = np.asarray(smem)
    if smem.dtype != np.uint8 or smem.ndim != 1:
        raise TypeError(f"smem_tile: shared memory must be a 1-D uint8 array, got {smem.dtype} {smem.shape}")
    nbytes = tensor.engine.element_bytes
    addrs = tensor.address_table()
    if addrs.size and (addrs.min() < 0 or int(addrs.max()) + nbytes > smem.size):
        raise ValueError(f"smem_tile: {tensor} reaches bytes {int(addrs.min()):#x}..{int(addrs.max()) + nbytes:#x}, "
                         f"outside shared memory of {smem.size:#x} bytes")
    fmt = fmt or {"f16": "f16", "bf16": "bf16", "f32": "f32"}.get(tensor.dtype, "hex")
    bits = np.zeros(addrs.shape, np.int64)
    for k in range(nbytes):
        bits |= smem[addrs + k].astype(np.int64) << (8 * k)
    texts = np.empty((rows, cols), dtype=object)
    for i, b in enumerate(bits.tolist()):
        r, c = i % rows, i // rows
        if fmt == "hex":
            texts[r, c] = f"0x{b:0{2 * nbytes}x}"
        elif fmt == "f32":
            texts[r, c] = format_bits(b, "f32")
        elif fmt in ("f16", "bf16"):
            texts[r, c] = format_bits(b, f"{fmt}x2").split(" | ")[0]
        else:
            raise ValueError(f"smem_tile: unknown format {fmt!r}; expected f16, bf16, f32 or hex")
    return tile_view(texts, title or str(tensor), highlight=highlight)
