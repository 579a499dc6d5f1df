"""Tracing: a per-thread program function becomes each warp's stream of warp-level instructions.

Two modes, giving the same stream (a test checks it for every example):

- ``"vector"`` (default): ``fn`` runs ONCE PER WARP with ``tid`` a :class:`LaneVector` of the warp's
  32 thread ids; the CuTe layer computes every lane's addresses at once. A Python branch on a
  lane-varying value (``if tid < 16:``) is a ``ProgramError`` naming the source line and the lanes;
  a branch all lanes of the warp agree on (``if tid // 32 == 0:``) is taken by the whole warp.
- ``"thread"``: ``fn`` runs once per thread with ``tid`` an ``int``; the 32 lane streams of a warp
  are zipped into warp instructions, and lanes that disagree on an instruction (kind, registers,
  attributes or source line) are a ``ProgramError`` naming both source lines and the lanes.

Registers are allocated as :mod:`warpsim.program.registers` describes: a fixed block per register
fragment, on first use, the same in every warp.

Each instruction records the source line that issued it, and per-thread tensors are the local
names bound to register tensors when ``fn`` returns (:mod:`warpsim.program.frames`). The pieces
live apart: the lane vector (:mod:`~warpsim.program.lanes`), register allocation
(:mod:`~warpsim.program.registers`), thread-mode zipping (:mod:`~warpsim.program.zipping`) and the
result (:mod:`~warpsim.program.trace_result`); this module drives them.

>>> from warpsim.program.program import Program
>>> from warpsim.program.ops import clear
>>> from warpsim.cute import make_tensor
>>> def kernel(tid):
...     acc = make_tensor("f32", (2,))
...     if tid // 32 == 1:          # warp-uniform: warp 1 only
...         clear(acc)
>>> t = trace_program(Program(kernel, threads=64), {})
>>> [(i.warp, i.ptx, i.dst) for i in t.stream], t.tensors["acc"].bases
([(1, 'mov.b32', (0, 1))], (0, 0))
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from warpsim.cute import LayoutRight, make_gmem_ptr, make_layout, make_tensor
from warpsim.cute.tensor import memory_elements
from warpsim.errors import ProgramError, WarpsimError
from warpsim.program.elements import MemoryElements
from warpsim.program.frames import (error_line, frame_catcher, local_tensors, local_tilings, source_line,
                                    user_frame)
from warpsim.program.instr import Instr
from warpsim.program.lanes import LaneVector
from warpsim.program.registers import SCRATCH_REGISTERS, RegisterAllocator, TensorInfo
from warpsim.program.schedule import schedule
from warpsim.program.trace_result import Trace
from warpsim.program.zipping import agreed_tensors, zip_lanes
from warpsim.warp import WARP_SIZE

# LaneVector, Trace, TensorInfo and SCRATCH_REGISTERS are re-exported from their modules.
__all__ = ["LaneVector", "Tracer", "Trace", "TensorInfo", "trace_program", "current_tracer", "make_instr", "TRACE_MODES",
           "SCRATCH_REGISTERS"]

TRACE_MODES = ("vector", "thread")
_CURRENT = []                  # the Tracer of the warp (or thread) being traced, innermost last


_INSTR_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Instr) if f.default is not dataclasses.MISSING}
_FAST_INSTR = not hasattr(Instr, "__slots__") and not hasattr(Instr, "__post_init__")


def make_instr(op, warp, fields):
    """``Instr(op, warp, **fields)``, built without the frozen dataclass's per-field ``__setattr__``
    (the same object; about 2.5x faster, which matters at hundreds of instructions per CTA)."""
    if not _FAST_INSTR:
        return Instr(op, warp, **fields)
    instr = object.__new__(Instr)
    values = _INSTR_DEFAULTS.copy()
    values.update(fields)
    values["op"] = op
    values["warp"] = warp
    instr.__dict__.update(values)
    return instr


def current_tracer(op):
    """The active :class:`Tracer`; ``ProgramError`` when ``op`` is called outside a traced program."""
    if not _CURRENT:
        raise ProgramError(f"{op}: called outside a traced program (run the program with "
                           f"warpsim.program.run_program or `warpsim run`)")
    return _CURRENT[-1]


class Tracer:
    """Collects the instructions of one warp (vector mode) or one thread (thread mode)."""

    def __init__(self, warp, lanes, code):
        self.warp = warp
        self.lanes = lanes                # lane indices (0..31) this trace covers: all 32, or one
        self.instrs = []
        self.allocator = RegisterAllocator()
        self._code = code
        self.frame = None                 # the program function's frame, found at its first instruction
        self.calls = -1                   # operation calls so far, minus one: the current call's number
        self._expression_base = None
        self._expression_pool = None

    @property
    def registers(self):
        """Registers allocated so far."""
        return self.allocator.count

    @property
    def width(self):
        """Lanes per traced address vector: 32 (vector mode) or 1 (thread mode)."""
        return len(self.lanes)

    def serving(self, lanes):
        """The columns of this trace's address vectors that belong to lanes ``0 .. lanes-1`` (a slice)."""
        if self.width == WARP_SIZE:
            return slice(0, lanes)
        return slice(0, 1) if self.lanes[0] < lanes else slice(0, 0)

    def source_line(self):
        """The program's source line that issued the current operation (first frame outside warpsim).

        Each operation calls it once, at its start: it also opens the operation's call number."""
        self.calls += 1
        frame = user_frame(2)
        if self.frame is None:
            f = frame
            while f is not None and f.f_code is not self._code:
                f = f.f_back
            self.frame = f
        return source_line(frame)

    def emit(self, op, **fields):
        """Append the instruction ``op`` of this trace's warp with ``fields`` (see :class:`Instr`), in the
        current operation call."""
        fields["call"] = self.calls
        self.instrs.append(make_instr(op, self.warp, fields))

    def register_base(self, storage):
        """The first register of a fragment's storage (allocated on first use)."""
        return self.allocator.base(storage)

    def scratch(self):
        """The first of the scratch registers of memory-to-memory copies (allocated on first use)."""
        return self.allocator.scratch()

    def expression_registers(self, count):
        """The first of ``count`` registers for intermediate results of expressions (allocated once)."""
        if self._expression_base is None:
            self._expression_base = self.allocator.block(count)
        return self._expression_base

    def expression_register_pool(self, factory):
        """This trace's pool of expression registers: ``factory(self)``, built once."""
        if self._expression_pool is None:
            self._expression_pool = factory(self)
        return self._expression_pool

    def tensors(self):
        """``{name: (storage, base, tensor)}`` of the register tensors bound to the program's locals at return."""
        out = {}
        for name, value in self.local_tensors().items():
            if value.space == "rmem":
                storage = value.engine
                out[name] = (storage, self.register_base(storage), value)
        return out

    def local_tensors(self):
        """``{name: tensor}`` of every CuTe tensor bound to the program's locals at return."""
        return local_tensors(self.frame)

    def local_tilings(self):
        """``{name: object}`` of the tiled copies and MMAs (and thread slices) bound to the program's
        locals at return (the debugger's copy views of register tensors come from them)."""
        return local_tilings(self.frame)

    def keep_frame(self, frame):
        """Keep ``frame``, the program function's (a profile hook finds it at the call)."""
        self.frame = frame


def _buffer_tensors(buffers):
    return {b.name: make_tensor(make_gmem_ptr(b.base, b.dtype), make_layout(b.shape, LayoutRight))
            for b in buffers}


def _call(fn, tracer, tid, kwargs):
    """``fn(tid, **kwargs)`` with ``tracer`` active. An exception other than a ``WarpsimError`` becomes a
    ``ProgramError`` naming the program's source line (the deepest frame outside warpsim)."""
    _CURRENT.append(tracer)
    memory_elements(MemoryElements(tracer))
    hooked = tracer._code is not None and sys.getprofile() is None
    if hooked:
        sys.setprofile(frame_catcher(tracer._code, tracer.keep_frame))
    try:
        fn(tid, **kwargs)
    except WarpsimError:
        raise
    except Exception as e:
        line = error_line(e)
        kind = "" if isinstance(e, (ValueError, TypeError)) else f"{type(e).__name__}: "
        where = f" (at {line})" if line else ""
        raise ProgramError(f"{kind}{e}{where}") from e
    finally:
        if hooked:
            sys.setprofile(None)
        memory_elements(None)
        _CURRENT.pop()


def trace_program(program, params, mode="vector"):
    """Trace ``program`` for resolved ``params``: a :class:`Trace` with the scheduled stream.

    ``mode``: ``"vector"`` or ``"thread"`` (see the module docstring). Raises ``ProgramError`` for a
    malformed program (divergent lanes, bad copies, unequal barrier counts).
    """
    if mode not in TRACE_MODES:
        raise ValueError(f"trace_program: mode must be one of {TRACE_MODES}, got {mode!r}")
    start = time.perf_counter()
    threads = program.threads(params)
    warps = threads // WARP_SIZE
    buffers = program.buffers(params)
    kwargs = dict(params)
    kwargs.update(_buffer_tensors(buffers))
    code = getattr(program.fn, "__code__", None)
    per_warp, registers, tensors = [], 0, {}
    for w in range(warps):
        if mode == "vector":
            tracer = Tracer(w, np.arange(WARP_SIZE), code)
            tid = (np.arange(WARP_SIZE, dtype=np.int64) + w * WARP_SIZE).view(LaneVector)
            _call(program.fn, tracer, tid, kwargs)
            names = tracer.tensors()          # allocates registers for fragments no instruction used
            instrs, regs = tracer.instrs, tracer.registers
        else:
            lane_tracers = []
            for lane in range(WARP_SIZE):
                tracer = Tracer(w, np.array([lane]), code)
                _call(program.fn, tracer, w * WARP_SIZE + lane, kwargs)
                lane_tracers.append(tracer)
            names = agreed_tensors(w, [t.tensors() for t in lane_tracers])
            instrs = zip_lanes(w, [t.instrs for t in lane_tracers])
            regs = max(t.registers for t in lane_tracers)
        per_warp.append(instrs)
        registers = max(registers, regs)
        for name, entry in names.items():
            tensors.setdefault(name, {})[w] = entry
        if w == 0:
            first = tracer if mode == "vector" else lane_tracers[0]
            memory = {n: t for n, t in first.local_tensors().items() if t.space in ("smem", "gmem")}
            tilings = first.local_tilings()
    stream = schedule(per_warp)
    infos = {}
    for name, by_warp in tensors.items():
        if len(by_warp) != warps:
            continue                      # bound in some warps only: not a per-thread tensor of the CTA
        storage, _base, tensor = by_warp[0]
        infos[name] = TensorInfo(name, storage.dtype, storage.size, tuple(by_warp[w][1] for w in range(warps)),
                                 tensor)
    trace = Trace(program, dict(params), mode, warps, stream, max(registers, 1), program.smem_bytes(params),
                  buffers, infos, memory, tilings=tilings)
    trace.seconds = time.perf_counter() - start
    return trace
