"""The trace result: a program traced for one params choice, ready to run, debug or lower.

A :class:`Trace` is independent of input data. What is derived from its stream (the executor's
encoding, the instruction counts, the reads of never-written registers, the stream lowered to PTX and
that PTX loaded as a kernel) is computed once, on first use, and kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from warpsim.program.checks import check_addresses, unwritten_reads
from warpsim.program.encode import encode
from warpsim.program.instr import Op
from warpsim.program.lower import lower
from warpsim.warp import WARP_SIZE

__all__ = ["Trace"]


@dataclass
class Trace:
    """A traced program for one params choice (independent of input data).

    ``stream``: every warp's instructions in the schedule's order (:mod:`warpsim.program.schedule`);
    ``regs_per_thread``; ``buffers``: the global buffers (:class:`~warpsim.program.program.Buffer`);
    ``tensors``: ``{name: TensorInfo}`` (:mod:`warpsim.program.registers`); ``memory_tensors``:
    ``{name: tensor}`` of the shared- and global-memory tensors bound to the program's locals at
    return (warp 0's, lane-vector tensors in vector mode); ``tilings``: ``{name: object}`` of the
    tiled copies and MMAs (and their thread slices) bound to the program's locals at return (warp
    0's); ``seconds``: the tracing time.
    """

    program: object
    params: dict
    mode: str
    warps: int
    stream: list
    regs_per_thread: int
    smem_bytes: int
    buffers: list
    tensors: dict
    memory_tensors: dict = field(default_factory=dict)
    seconds: float = 0.0
    tilings: dict = field(default_factory=dict)

    @property
    def threads(self):
        return self.warps * WARP_SIZE

    @cached_property
    def instruction_counts(self):
        """``{ptx: count}`` of the stream's warp instructions, in order of first appearance."""
        by_kind = {}
        for i in self.stream:
            entry = by_kind.get(i.kind())
            if entry is None:
                by_kind[i.kind()] = [i, 1]
            else:
                entry[1] += 1
        counts = {}
        for first, n in by_kind.values():
            counts[first.ptx] = counts.get(first.ptx, 0) + n
        return counts

    @cached_property
    def encoded(self):
        """The stream as the executor's integer arrays (:class:`warpsim.program.encode.Encoded`)."""
        return encode(self.stream)

    @cached_property
    def unwritten_reads(self):
        """Reads of registers no earlier instruction wrote (:func:`warpsim.program.checks.unwritten_reads`)."""
        return unwritten_reads(self.stream, warps=self.warps, registers=self.regs_per_thread, encoded=self.encoded)

    @cached_property
    def lowered(self):
        """The stream as one PTX kernel and its table of per-lane values (:class:`warpsim.program.lower.Lowered`)."""
        zero = {r for _p, r, _w in self.unwritten_reads}       # read before written: the stream's 0
        zero |= {r for i in self.stream if i.op == Op.LD and i.bits == 16 for r in i.dst}   # the other half's 0
        return lower(self.stream, warps=self.warps, regs=self.regs_per_thread, smem_bytes=self.smem_bytes,
                     zero=zero)

    def check_addresses(self, *, smem_bytes, gmem_bytes):
        """:func:`warpsim.program.checks.check_addresses` of the stream, proven once per pair of sizes."""
        done = self.__dict__.setdefault("_addresses_proven", set())
        if (smem_bytes, gmem_bytes) not in done:
            check_addresses(self.stream, smem_bytes=smem_bytes, gmem_bytes=gmem_bytes)
            done.add((smem_bytes, gmem_bytes))

    @cached_property
    def kernel(self):
        """:attr:`lowered` loaded by the PTX front end (a :class:`warpsim.ptx.PtxModule`; every instruction of
        the stream names its rounding, so there is nothing for ptxas to contract: ``ptxas="none"``)."""
        from warpsim.ptx import load
        return load(self.lowered.text, f"{getattr(self.program, 'name', 'program')}.ptx", ptxas="none")
