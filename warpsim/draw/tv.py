"""Thread/value pictures of a tiled MMA (A, B, C) and a tiled copy (S, D), as CuTe draws them.

CuTe's ``print_svg(tiled_mma)`` (``include/cute/util/print_svg.hpp``) and ``print_latex(tiled_mma)`` /
``print_latex(tiled_copy)`` (``include/cute/util/print_latex.hpp``) compose an identity tensor of the
tile with the TV layout (``get_layoutA_TV`` ..., ``tidfrg_S/D``), then loop over threads and, inside,
values; the first ``(thread, value)`` that reaches a cell paints it ``T{t}`` / ``V{v}`` in colour
``tid % 8``. Later threads holding the same element (the B operand is held by every warp along M)
are not drawn. warpsim draws the same first ``(thread, value)`` in each cell and lists every owner
in the cell's tooltip, so every thread of the tiled MMA is shown.

Arrangement (``print_svg``): A (M x K) at the left, B at the top drawn K x N (k down, n across), C
(M x N) at the bottom right, cells of 20 pixels; a copy shows S and D side by side
(``print_latex``). One operand alone is drawn as ``print_latex_tv`` draws a TV layout, B again K x N.
``highlight=t`` outlines every cell thread ``t`` holds and labels it with ``t``'s own value index.

>>> from warpsim.cute import SM80_16x8x16_F32F16F16F32_TN, make_tiled_mma, make_layout
>>> mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (64, 16, 16))
>>> b = mma_tv_grid(mma, "B")
>>> b.shape, b.modes, int(b.thread[0, 2]), int(b.value[0, 2]), b.owners(0, 2)[:2]
((16, 16), ('n', 'k'), 1, 0, [(1, 0), (33, 0)])
>>> c = mma_tv_grid(mma, "C")
>>> c.coord(5, 3), int(c.thread[9, 3]), int(c.value[9, 3])
((9, 3), 5, 3)
"""

from dataclasses import dataclass

import numpy as np

from warpsim import cute
from warpsim.draw.cells import Cell, Label
from warpsim.draw.colors import BLACK, HIGHLIGHT_STROKE, WHITE, tv_color
from warpsim.draw.scene import Scene

__all__ = ["TVGrid", "tv_grid", "mma_tv_grid", "copy_tv_grid", "draw_tiled_mma", "draw_tiled_copy", "CELL"]

CELL = 20     # pixels per cell, as CuTe's print_svg

# MMA operand -> (tile modes (i, j) of (M, N, K), their names)
_MMA_MODES = {"A": ((0, 2), ("m", "k")), "B": ((1, 2), ("n", "k")), "C": ((0, 1), ("m", "n"))}


@dataclass(frozen=True, eq=False)
class TVGrid:
    """A TV layout evaluated on its tile: which ``(thread, value)`` sits in each cell.

    ``table[t, v]`` is the column-major tile index ``row + rows * col`` of thread ``t``'s value ``v``;
    ``thread[row, col]`` / ``value[row, col]`` the first pair in CuTe's drawing order (threads outer,
    values inner) that lands in the cell, ``-1`` where none does.
    """

    name: str
    layout: str
    shape: tuple
    modes: tuple
    table: np.ndarray
    thread: np.ndarray
    value: np.ndarray

    @property
    def threads(self):
        return int(self.table.shape[0])

    @property
    def values(self):
        return int(self.table.shape[1])

    def coord(self, t, v):
        """The ``(row, col)`` of thread ``t``'s value ``v``."""
        idx = int(self.table[t, v])
        return (idx % self.shape[0], idx // self.shape[0])

    def owners(self, row, col):
        """Every ``(thread, value)`` that maps to cell ``(row, col)``, in drawing order."""
        t, v = np.nonzero(self.table == row + self.shape[0] * col)
        return [(int(a), int(b)) for a, b in zip(t, v)]

    def cells_of(self, t):
        """``[(row, col, value)]`` of thread ``t``'s values."""
        return [(*self.coord(t, v), v) for v in range(self.values)]


def tv_grid(layout_tv, shape, name="", modes=("m", "n")):
    """The :class:`TVGrid` of ``layout_tv`` ((thread, value) -> column-major index of the ``shape`` tile).

    ``ValueError`` if the layout is not rank 2 or maps outside the tile.

    >>> g = tv_grid(cute.make_layout((2, 3), (3, 1)), (3, 2))
    >>> g.thread.tolist(), g.value.tolist()
    ([[0, 1], [0, 1], [0, 1]], [[0, 0], [1, 1], [2, 2]])
    """
    if not cute.is_layout(layout_tv) or cute.rank(layout_tv) != 2:
        raise ValueError(f"tv_grid: expected a rank-2 (thread, value) layout, got {layout_tv}")
    rows, cols = (int(x) for x in shape)
    n_thr, n_val = int(cute.size(layout_tv, 0)), int(cute.size(layout_tv, 1))
    table = cute.layout_table(layout_tv).reshape(n_val, n_thr).T.copy()
    if table.size and (table.min() < 0 or table.max() >= rows * cols):
        raise ValueError(f"tv_grid: {layout_tv} maps to indices {int(table.min())}..{int(table.max())}, "
                         f"outside the {rows}x{cols} tile")
    flat = table.reshape(-1)                         # threads outer, values inner: CuTe's loop order
    first_idx, first_pos = np.unique(flat, return_index=True)
    thread = np.full((rows, cols), -1, np.int64)
    value = np.full((rows, cols), -1, np.int64)
    thread[first_idx % rows, first_idx // rows] = first_pos // n_val
    value[first_idx % rows, first_idx // rows] = first_pos % n_val
    table.setflags(write=False)
    return TVGrid(name, str(layout_tv), (rows, cols), tuple(modes), table, thread, value)


def mma_tv_grid(tiled_mma, operand):
    """The TV grid of operand ``"A"`` (M x K), ``"B"`` (N x K) or ``"C"`` (M x N) of ``tiled_mma``."""
    if not isinstance(tiled_mma, cute.TiledMMA):
        raise TypeError(f"mma_tv_grid: expected a TiledMMA, got {tiled_mma!r}")
    if operand not in _MMA_MODES:
        raise ValueError(f"mma_tv_grid: operand must be 'A', 'B' or 'C', got {operand!r}")
    (i, j), modes = _MMA_MODES[operand]
    shape = (int(tiled_mma.tile_size_mnk(i)), int(tiled_mma.tile_size_mnk(j)))
    return tv_grid(tiled_mma.get_layout_TV(operand), shape, operand, modes)


def copy_tv_grid(tiled_copy, side):
    """The TV grid of side ``"S"`` (source) or ``"D"`` (destination) of ``tiled_copy`` on its ``Tiler_MN`` tile."""
    if not isinstance(tiled_copy, cute.TiledCopy):
        raise TypeError(f"copy_tv_grid: expected a TiledCopy, got {tiled_copy!r}")
    if side not in ("S", "D"):
        raise ValueError(f"copy_tv_grid: side must be 'S' or 'D', got {side!r}")
    tile = cute.product_each(tiled_copy.Tiler_MN)
    if len(tile) != 2:
        raise ValueError(f"copy_tv_grid: only 2-D tilers can be drawn, got {cute.cute_str(tiled_copy.Tiler_MN)}")
    layout = tiled_copy.get_layoutS_TV() if side == "S" else tiled_copy.get_layoutD_TV()
    return tv_grid(layout, (int(tile[0]), int(tile[1])), side, ("m", "n"))


def _owner_lists(grid):
    """``{tile index: [(t, v), ...]}`` for every covered cell, in drawing order."""
    flat = grid.table.reshape(-1)
    order = np.argsort(flat, kind="stable")
    keys = flat[order]
    cuts = np.flatnonzero(np.diff(keys)) + 1
    out = {}
    for chunk in np.split(order, cuts):
        if chunk.size:
            out[int(flat[chunk[0]])] = [(int(p) // grid.values, int(p) % grid.values) for p in chunk]
    return out


def _panel(scene, grid, x0, y0, cell, transpose, highlight):
    """Draw ``grid`` with its top-left cell at ``(x0, y0)``, index labels one cell to the left and above."""
    rows, cols = grid.shape
    owners = _owner_lists(grid)
    font = cell * 0.4
    for r in range(rows):
        for c in range(cols):
            t, v = int(grid.thread[r, c]), int(grid.value[r, c])
            here = owners.get(r + rows * c, [])
            mine = [vv for tt, vv in here if tt == highlight] if highlight is not None else []
            if mine:
                t, v = highlight, mine[0]
            dr, dc = (c, r) if transpose else (r, c)
            name = f"{grid.name}({grid.modes[0]}={r},{grid.modes[1]}={c})"
            title = f"{name}: " + (" ".join(f"T{a}V{b}" for a, b in here) if here else "no thread")
            scene.add(Cell(x0 + dc * cell, y0 + dr * cell, cell, cell,
                           tv_color(t) if t >= 0 else WHITE,
                           (f"T{t}", f"V{v}") if t >= 0 else (),
                           stroke=HIGHLIGHT_STROKE if mine else BLACK, stroke_width=2.5 if mine else 1.0,
                           font_size=font, bold=bool(mine), title=title,
                           data=(("panel", grid.name), (grid.modes[0], r), (grid.modes[1], c),
                                 ("thread", t), ("value", v))))
    down, across = (grid.modes[1], grid.modes[0]) if transpose else grid.modes
    n_down, n_across = (cols, rows) if transpose else (rows, cols)
    for i in range(n_down):
        scene.add(Label(x0 - cell / 2, y0 + i * cell + cell / 2, str(i), cell * 0.6, kind=f"label-{down}"))
    for j in range(n_across):
        scene.add(Label(x0 + j * cell + cell / 2, y0 - cell / 2, str(j), cell * 0.6, kind=f"label-{across}"))
    scene.add(Label(x0 - cell / 2, y0 - cell / 2, grid.name, cell * 0.6, bold=True, kind="label-panel"))
    scene.comments.append(f"{grid.name}: {grid.layout}  ({grid.modes[0]},{grid.modes[1]}) tile "
                          f"{grid.shape[0]}x{grid.shape[1]}" + (", drawn transposed" if transpose else ""))


def _check_highlight(op, highlight, threads):
    if highlight is None:
        return None
    if isinstance(highlight, bool) or not isinstance(highlight, (int, np.integer)) or not 0 <= highlight < threads:
        raise ValueError(f"{op}: highlight must be a thread id 0-{threads - 1}, got {highlight!r}")
    return int(highlight)


def draw_tiled_mma(tiled_mma, operand=None, highlight=None, cell=CELL):
    """A :class:`~warpsim.draw.scene.Scene` of ``tiled_mma``'s A, B and C TV layouts (or of one ``operand``).

    >>> from warpsim.cute import SM80_16x8x8_F16F16F16F16_TN, make_tiled_mma
    >>> s = draw_tiled_mma(make_tiled_mma(SM80_16x8x8_F16F16F16F16_TN()))
    >>> len(s.cells()), (s.width, s.height) == ((8 + 8 + 2) * 20, (8 + 16 + 2) * 20)
    (320, True)
    """
    if not isinstance(tiled_mma, cute.TiledMMA):
        raise TypeError(f"draw_tiled_mma: expected a TiledMMA, got {tiled_mma!r}")
    highlight = _check_highlight("draw_tiled_mma", highlight, tiled_mma.size())
    grids = {op: mma_tv_grid(tiled_mma, op) for op in ("ABC" if operand is None else [operand])}
    if operand is None:
        (m, k), (n, _k) = grids["A"].shape, grids["B"].shape
        scene = Scene((k + n + 2) * cell, (k + m + 2) * cell)
        _panel(scene, grids["C"], (k + 2) * cell, (k + 2) * cell, cell, False, highlight)
        _panel(scene, grids["A"], cell, (k + 2) * cell, cell, False, highlight)
        _panel(scene, grids["B"], (k + 2) * cell, cell, cell, True, highlight)
    else:
        g = grids[operand]
        transpose = operand == "B"
        down, across = (g.shape[1], g.shape[0]) if transpose else g.shape
        scene = Scene((across + 1) * cell, (down + 1) * cell)
        _panel(scene, g, cell, cell, cell, transpose, highlight)
    scene.comments.insert(0, f"Tile: {cute.cute_str(cute.tile_shape(tiled_mma))}  threads: {tiled_mma.size()}")
    scene.title = f"{tiled_mma.atom.op.name} x {tiled_mma.thr_layout_mnk}" + (
        f" (highlight thread {highlight})" if highlight is not None else "")
    return scene


def draw_tiled_copy(tiled_copy, side=None, highlight=None, cell=CELL):
    """A :class:`~warpsim.draw.scene.Scene` of ``tiled_copy``'s source and destination TV layouts (or one ``side``)."""
    if not isinstance(tiled_copy, cute.TiledCopy):
        raise TypeError(f"draw_tiled_copy: expected a TiledCopy, got {tiled_copy!r}")
    highlight = _check_highlight("draw_tiled_copy", highlight, tiled_copy.size())
    sides = ("S", "D") if side is None else (side,)
    grids = [copy_tv_grid(tiled_copy, s) for s in sides]
    m, n = grids[0].shape
    width = len(grids) * (n + 1) * cell + (len(grids) - 1) * 2 * cell
    scene = Scene(width, (m + 1) * cell)
    for i, g in enumerate(grids):
        _panel(scene, g, cell + i * (n + 3) * cell, cell, cell, False, highlight)
    scene.comments.insert(0, f"Tiler_MN: {cute.cute_str(tiled_copy.Tiler_MN)}  TiledLayout_TV: "
                             f"{tiled_copy.TiledLayout_TV}  threads: {tiled_copy.size()}")
    scene.title = f"{tiled_copy.atom.op.name} ({tiled_copy.atom.dtype})" + (
        f" (highlight thread {highlight})" if highlight is not None else "")
    return scene
