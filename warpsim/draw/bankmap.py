"""A shared tensor's bank map: every element of the tile in its logical (row, col) place, coloured by bank.

Element ``(r, c)`` of a shared-memory tensor sits at its byte address (after the swizzle, if the
layout has one) and so in bank ``(address // 4) % 32`` (:mod:`warpsim.isa.banks`). Drawing the
tile in its logical shape shows what a swizzle does: in the seed's ``Sw<3,3,3>`` K tile the 16-byte
chunks of consecutive rows land in different banks, so a column of 8 rows (one ``ldmatrix`` phase)
touches all 32 banks; without it every row starts in bank 0.

``access`` marks the lanes of one access: a :class:`~warpsim.isa.banks.BankPhase` (e.g. one
``ldmatrix`` phase) or a whole :class:`~warpsim.isa.banks.BankReport`. Each element a lane reads
or writes is outlined and labelled ``L{lane}``; elements in a bank the phase asks for several
different words are outlined in purple (a conflict).

>>> import warpsim.cute as cute
>>> from warpsim.isa.banks import bank_report
>>> t = cute.make_tensor(cute.make_smem_ptr(0, "f16"), cute.make_layout((8, 64), (64, 1)))
>>> phase = bank_report("ldmatrix", np.arange(32) * 128, num=1).phases[0]
>>> m = bank_map(t, phase)
>>> m.bank[:, 0].tolist(), m.marks[(3, 7)], len(m.conflicts)
([0, 0, 0, 0, 0, 0, 0, 0], (3,), 64)
"""

from dataclasses import dataclass

import numpy as np

from warpsim.isa.banks import BANK_BYTES, BankPhase, BankReport, bank_of
from warpsim.draw.cells import Cell, Label
from warpsim.draw.colors import BLACK, CONFLICT_STROKE, HIGHLIGHT_STROKE, bank_color
from warpsim.draw.html import TileView, tensor_grid_shape
from warpsim.draw.scene import Scene

__all__ = ["BankMap", "bank_map"]


@dataclass(frozen=True, eq=False)
class BankMap:
    """Byte ``address`` and ``bank`` of every element of a ``rows x cols`` shared tile, and the marked access.

    ``marks[(r, c)]``: the lanes whose access touches element ``(r, c)``; ``conflicts``: the marked
    elements whose bank the access asks for more than one word in one phase.
    """

    tensor: str
    address: np.ndarray
    bank: np.ndarray
    marks: dict
    conflicts: frozenset
    title: str

    @property
    def shape(self):
        return tuple(self.bank.shape)

    def tile(self):
        """A :class:`~warpsim.draw.html.TileView` of the bank numbers (marked elements highlighted)."""
        fills = [[bank_color(b) for b in row] for row in self.bank.tolist()]
        return TileView(self.bank.astype(object), self.title, fills, frozenset(self.marks))

    def text(self):
        """The bank numbers as a plain-text table; marked elements prefixed with ``*``."""
        return self.tile().text()

    def _repr_html_(self):
        return self.tile()._repr_html_()

    def scene(self, cell=22, rows=None):
        """The map as a :class:`~warpsim.draw.scene.Scene`; ``rows=(start, stop)`` draws only those rows."""
        n_rows, n_cols = self.shape
        start, stop = (0, n_rows) if rows is None else rows
        if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start < stop <= n_rows):
            raise ValueError(f"BankMap.scene: rows must be (start, stop) with 0 <= start < stop <= {n_rows}, "
                             f"got {rows!r}")
        head = cell * 1.2
        x0, y0 = cell * 1.6, head + cell
        scene = Scene(x0 + n_cols * cell + 4, y0 + (stop - start) * cell + 4, title=self.title)
        scene.comments.append(f"bank map of {self.tensor}: cell text = bank (address // 4 % 32)")
        scene.add(Label(4, head / 2, self.title, cell * 0.5, anchor="start", bold=True, kind="title"))
        for c in range(n_cols):
            scene.add(Label(x0 + c * cell + cell / 2, y0 - cell / 2, str(c), cell * 0.4, kind="label-col"))
        for i, r in enumerate(range(start, stop)):
            scene.add(Label(x0 - cell * 0.8, y0 + i * cell + cell / 2, str(r), cell * 0.45, kind="label-row"))
            for c in range(n_cols):
                b, addr = int(self.bank[r, c]), int(self.address[r, c])
                lanes = self.marks.get((r, c), ())
                conflict = (r, c) in self.conflicts
                stroke = CONFLICT_STROKE if conflict else (HIGHLIGHT_STROKE if lanes else BLACK)
                lines = (str(b),) + ((f"L{lanes[0]}" + ("+" if len(lanes) > 1 else ""),) if lanes else ())
                title = f"({r},{c}) byte {addr:#x} bank {b}" + (
                    f" lanes {','.join(map(str, lanes))}" if lanes else "") + (" CONFLICT" if conflict else "")
                scene.add(Cell(x0 + c * cell, y0 + i * cell, cell, cell, bank_color(b), lines, stroke=stroke,
                               stroke_width=2.5 if lanes else 0.5, font_size=cell * 0.36, bold=bool(lanes),
                               title=title,
                               data=(("row", r), ("col", c), ("address", addr), ("bank", b),
                                     ("lanes", ",".join(map(str, lanes))), ("conflict", int(conflict)))))
        return scene

    def svg(self, cell=22, rows=None):
        return self.scene(cell, rows).svg()

    def save(self, path, cell=22, rows=None, scale=2):
        """Write the picture to ``path`` (``.svg``, or ``.png`` with ``warpsim[draw]``)."""
        self.scene(cell, rows).save(path, scale)


def _phases(access):
    if access is None:
        return ()
    if isinstance(access, BankPhase):
        return (access,)
    if isinstance(access, BankReport):
        return access.phases
    raise TypeError(f"bank_map: access must be a BankPhase or a BankReport (warpsim.isa.banks), got {access!r}")


def bank_map(tensor, access=None, title=""):
    """The :class:`BankMap` of shared-memory ``tensor`` (drawn first mode down, the rest across).

    ``access``: a :class:`~warpsim.isa.banks.BankPhase` or :class:`~warpsim.isa.banks.BankReport` whose
    lanes to mark. Addresses of the access outside the tensor are ignored.
    """
    rows, cols = tensor_grid_shape(tensor, "bank_map")
    if tensor.space != "smem":
        raise ValueError(f"bank_map: expected a shared-memory tensor, got one in {tensor.space}")
    addrs = tensor.address_table().reshape(cols, rows).T.copy()
    banks = bank_of(addrs)
    where = {int(a): (i % rows, i // rows) for i, a in enumerate(tensor.address_table().tolist())}
    step = tensor.engine.element_bytes
    marks, conflicts = {}, set()
    for phase in _phases(access):
        bad_words = {w for c in phase.conflicts for w in c.words}
        for lane, a in zip(phase.lanes, phase.addresses):
            first = a - a % step
            for e in range(first, a + max(phase.nbytes, 1), step):
                rc = where.get(e)
                if rc is None:
                    continue
                marks.setdefault(rc, [])
                if lane not in marks[rc]:
                    marks[rc].append(lane)
                if e - e % BANK_BYTES in bad_words:
                    conflicts.add(rc)
    addrs.setflags(write=False)
    banks.setflags(write=False)
    return BankMap(str(tensor), addrs, banks, {k: tuple(v) for k, v in marks.items()}, frozenset(conflicts),
                   str(title) or str(tensor))
