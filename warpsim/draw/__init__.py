"""``warpsim.draw``: pictures of thread/value layouts, register files and shared-memory bank maps.

Every picture is a :class:`Scene` (cells and labels) built by pure functions; ``scene.svg()`` is
hand-written SVG, ``scene.save("x.svg" | "x.png")`` writes a file (PNG through Pillow, the optional
extra ``warpsim[draw]``). Register grids, bank maps and tensor tiles also render as HTML tables in
Jupyter (``_repr_html_``).

>>> from warpsim.cute import SM80_16x8x16_F32F16F16F32_TN, make_tiled_mma
>>> scene = draw_tiled_mma(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN()), operand="C")
>>> len(scene.cells()), scene.svg().count("<g class=\\"cell\\"")
(128, 128)
"""

from warpsim.draw.bankmap import BankMap, bank_map
from warpsim.draw.bits import REGISTER_FORMATS, format_bits
from warpsim.draw.cells import Cell, Label
from warpsim.draw.colors import bank_color, tv_color
from warpsim.draw.html import TileView, html_table, smem_tile, tile_view
from warpsim.draw.registers import RegisterGrid, register_grid
from warpsim.draw.scene import Scene, save_scene
from warpsim.draw.tv import (CELL, TVGrid, copy_tv_grid, draw_tiled_copy, draw_tiled_mma, mma_tv_grid,
                             tv_grid)

__all__ = [
    "Scene", "Cell", "Label", "save_scene", "tv_color", "bank_color",
    "TVGrid", "tv_grid", "mma_tv_grid", "copy_tv_grid", "draw_tiled_mma", "draw_tiled_copy", "CELL",
    "RegisterGrid", "register_grid", "format_bits", "REGISTER_FORMATS",
    "BankMap", "bank_map", "TileView", "tile_view", "smem_tile", "html_table",
]
