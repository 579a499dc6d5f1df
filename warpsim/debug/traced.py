"""A traced Python program's metadata over the session of its lowered kernel.

:meth:`warpsim.debug.session.Session.program` debugs a CuTe-dialect program as the PTX kernel its trace
lowers to (:mod:`warpsim.program.lower`). The machine state is the PTX core's; what the program knows
beyond PTX is kept here, in :class:`Traced`:

- the dialect's register ``I`` is the kernel's ``%rI``: :meth:`Traced.slot` gives its slot in the core's
  register file (the decoder's), so a register tensor's registers (``trace.tensors``,
  :mod:`warpsim.debug.tensors`) are read straight from ``session.run.machine.regs``;
- the program's shared bytes are the kernel's dynamic shared window (``smem_base`` on, the last
  ``trace.smem_bytes`` bytes of the CTA's shared memory, as ``execute_trace`` reads them back);
  its global buffers sit in the ``gmem`` parameter buffer (``gmem_base`` on);
- every stream position has the pc that executes it (:attr:`Traced.pcs`: the PTX line
  ``Lowered.ptx_line`` names, the ``k``-th ``bar.sync`` for a warp's ``k``-th barrier). The lowered
  code runs each warp's instructions in stream order without loops (a branch only skips other warps'
  blocks), so a warp has executed exactly those of its positions whose pc lies below its lanes'
  smallest pc: :meth:`Traced.done` and :meth:`Traced.executed` read the stream's progress off the
  session's pcs, whatever motion got it there;
- the data flow (:class:`~warpsim.debug.dataflow.DataFlow`, made on first use) answers who holds an
  element and where a register came from, in stream positions.
"""

from __future__ import annotations

import bisect

import numpy as np

from warpsim.debug.dataflow import DataFlow
from warpsim.debug.tensors import TraceTensors
from warpsim.program.instr import Op
from warpsim.ptx.codes import RUNNING, WAITING

__all__ = ["Traced"]


class Traced:
    """The trace's metadata over ``session`` (a :class:`~warpsim.debug.session.Session` of ``trace.kernel``);
    ``inputs``: the raw bits loaded into the program's input buffers (see the module docstring)."""

    def __init__(self, trace, session, inputs):
        self.trace, self.inputs, self.session = trace, inputs, session
        self.stream = trace.stream
        self.tensors = TraceTensors(trace)
        self._dataflow = None
        machine = session.run.machine
        self.smem_base = machine.smem.size - trace.smem_bytes
        self.gmem_base = int(machine.buffers["gmem"][0])
        self._slots = np.array([session.register(f"%r{r}")[0] for r in range(trace.regs_per_thread)], np.int64)
        line_pc = {}
        for pc, line in enumerate(session.ptx_line):
            line_pc.setdefault(line, pc)
        bars = [pc for pc, text in enumerate(session.text) if text.split()[0] == "bar.sync"]
        self.pcs = np.zeros(len(self.stream), np.int64)
        barriers = [0] * trace.warps
        for k, instr in enumerate(self.stream):
            if instr.op == Op.BAR:
                self.pcs[k] = bars[barriers[instr.warp]]
                barriers[instr.warp] += 1
            else:
                self.pcs[k] = line_pc[int(trace.lowered.ptx_line[k])]
        warps = np.array([i.warp for i in self.stream], np.int64)
        self._positions = [np.flatnonzero(warps == w) for w in range(trace.warps)]
        self._warp_pcs = [self.pcs[p].tolist() for p in self._positions]
        for w, pcs in enumerate(self._warp_pcs):
            if any(b <= a for a, b in zip(pcs, pcs[1:])):
                raise RuntimeError(f"Traced: warp {w}'s stream positions do not run in code order in the lowered "
                                   f"kernel")
        self._at = {(int(warps[k]), int(self.pcs[k])): k for k in range(len(self.stream))}

    # -- registers and memory ---------------------------------------------------------------------
    def slot(self, reg):
        """The core's register slot of the dialect's register ``reg`` (the kernel's ``%r{reg}``)."""
        return int(self._slots[reg])

    def words(self, warp, regs):
        """``uint32[32, len(regs)]``: the dialect's registers ``regs`` of every lane of ``warp``."""
        return self.session.run.machine.regs[warp][:, self._slots[np.asarray(regs, np.int64)]]

    @property
    def smem(self):
        """The program's shared memory (``uint8``, a view of the CTA's dynamic shared window)."""
        return self.session.run.machine.smem[self.smem_base:self.smem_base + self.trace.smem_bytes]

    # -- progress -----------------------------------------------------------------------------------
    def done(self, warp):
        """How many of ``warp``'s stream instructions have executed."""
        pcs, status = self.session.warp_pcs(warp)
        live = (status == RUNNING) | (status == WAITING)
        if not live.any():
            return len(self._warp_pcs[warp]) if self.session.position else 0
        return bisect.bisect_left(self._warp_pcs[warp], int(pcs[live].min()))

    def next_position(self, warp):
        """The stream position ``warp`` executes next (``len(stream)`` when it has run them all)."""
        k = self.done(warp)
        positions = self._positions[warp]
        return int(positions[k]) if k < positions.size else len(self.stream)

    def executed(self):
        """``bool[len(stream)]``: which stream positions have executed."""
        out = np.zeros(len(self.stream), bool)
        for w, positions in enumerate(self._positions):
            out[positions[:self.done(w)]] = True
        return out

    def position_at(self, warp, pc):
        """The stream position that ``warp`` executes at ``pc``, or None (code of the kernel's own)."""
        return self._at.get((int(warp), int(pc)))

    @property
    def dataflow(self):
        """The stream's :class:`~warpsim.debug.dataflow.DataFlow` (made on first use)."""
        if self._dataflow is None:
            self._dataflow = DataFlow(self.trace, self.tensors)
        return self._dataflow
