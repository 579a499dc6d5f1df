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

Each instruction records the source line that issued it: the first stack frame outside the warpsim
package. Per-thread tensors: when ``fn`` returns, its local names bound to register tensors are
read from its frame. The frame is caught at ``fn``'s call by a profile hook that removes itself
at once (so tracing pays nothing per call; where another profiler is active, the frame is found
from ``fn``'s first instruction instead); CPython keeps a finished frame's locals in the frame object.

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
import linecache
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from warpsim.cute.numeric import dtype_bits
from warpsim.errors import ProgramError, WarpsimError
from warpsim.cute.tensor import memory_elements
from warpsim.program.elements import MemoryElements
from warpsim.program.instr import Instr, SourceLine
from warpsim.program.registers import SCRATCH_REGISTERS, RegisterAllocator, TensorInfo

__all__ = ["LaneVector", "Tracer", "Trace", "TensorInfo", "trace_program", "current_tracer", "make_instr", "TRACE_MODES",
           "SCRATCH_REGISTERS", "WARP_SIZE"]

TRACE_MODES = ("vector", "thread")
WARP_SIZE = 32
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep    # warpsim/
_LINES = {}
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


def _user_frame(depth):
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return frame


def _source_line(frame):
    if frame is None:
        return None
    key = (frame.f_code.co_filename, frame.f_lineno)
    line = _LINES.get(key)
    if line is None:
        line = _LINES[key] = SourceLine(key[0], key[1], linecache.getline(key[0], key[1]).strip())
    return line


def _lane_groups(values, lanes):
    """``'lanes 0-15: True; lanes 16-31: False'``: lanes grouped by value (at most 4 groups shown)."""
    groups = {}
    for lane, value in zip(lanes, values):
        groups.setdefault(value.item() if hasattr(value, "item") else value, []).append(int(lane))
    parts = [f"lanes {_ranges(ls)}: {v!r}" for v, ls in list(groups.items())[:4]]
    if len(groups) > 4:
        parts.append(f"... {len(groups)} different values")
    return "; ".join(parts)


def _ranges(lanes):
    out, start = [], None
    for i, lane in enumerate(lanes):
        if start is None:
            start = lane
        if i + 1 == len(lanes) or lanes[i + 1] != lane + 1:
            out.append(f"{start}" if start == lane else f"{start}-{lane}")
            start = None
    return ",".join(out)


class LaneVector(np.ndarray):
    """A value per lane of a warp (``tid`` in vector tracing, and what is computed from it).

    It is a numpy array; converting it to one Python value (``if``, ``while``, ``and``, ``int()``,
    ``range()``) is allowed only when every lane holds the same value, as a warp-uniform branch is.
    Otherwise ``ProgramError`` names the source line and which lanes hold which value.

    >>> t = np.arange(32).view(LaneVector)
    >>> bool(t // 32 == 0), int(t // 32)
    (True, 0)
    """

    def _uniform(self, what):
        flat = np.asarray(self).ravel()
        if flat.size and bool((flat == flat[0]).all()):
            return flat[0]
        line = _source_line(_user_frame(2))
        where = f" at {line}" if line else ""
        raise ProgramError(f"divergent lanes{where}: {what} of a value that differs between lanes "
                           f"({_lane_groups(flat, np.arange(flat.size))}); a warp's lanes must agree "
                           f"on control flow")

    def __bool__(self):
        return bool(self._uniform("a Python branch (truth value)"))

    def __index__(self):
        return int(self._uniform("an integer conversion"))

    def __int__(self):
        return int(self._uniform("an integer conversion"))

    def __float__(self):
        return float(self._uniform("a float conversion"))


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
        frame = _user_frame(2)
        if self.frame is None:
            f = frame
            while f is not None and f.f_code is not self._code:
                f = f.f_back
            self.frame = f
        return _source_line(frame)

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
        if self.frame is None:
            return {}
        from warpsim.cute.tensor import Tensor     # the CuTe layer is loaded by any program already
        return {name: value for name, value in self.frame.f_locals.items() if isinstance(value, Tensor)}

    def local_tilings(self):
        """``{name: object}`` of every ``TiledCopy``, ``ThrCopy``, ``TiledMMA`` and ``ThrMMA`` bound to the
        program's locals at return (the debugger's copy views of register tensors come from them)."""
        if self.frame is None:
            return {}
        from warpsim.cute.tiled_copy import ThrCopy, TiledCopy
        from warpsim.cute.tiled_mma import ThrMMA, TiledMMA
        kinds = (TiledCopy, ThrCopy, TiledMMA, ThrMMA)
        return {name: value for name, value in self.frame.f_locals.items() if isinstance(value, kinds)}


@dataclass
class Trace:
    """A traced program for one params choice (independent of input data).

    ``stream``: every warp's instructions in the schedule's order (:mod:`warpsim.program.schedule`);
    ``regs_per_thread``; ``buffers``: the global buffers (:class:`~warpsim.program.program.Buffer`);
    ``tensors``: ``{name: TensorInfo}``; ``memory_tensors``: ``{name: tensor}`` of the shared- and
    global-memory tensors bound to the program's locals at return (warp 0's, lane-vector tensors in
    vector mode); ``tilings``: ``{name: object}`` of the tiled copies and MMAs (and their thread
    slices) bound to the program's locals at return (warp 0's); ``seconds``: the tracing time.
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
    _encoded: object = field(default=None, repr=False)
    _reads: object = field(default=None, repr=False)
    _counts: object = field(default=None, repr=False)

    @property
    def threads(self):
        return self.warps * WARP_SIZE

    @property
    def instruction_counts(self):
        """``{ptx: count}`` of the stream's warp instructions, in order of first appearance (made once)."""
        if self._counts is None:
            by_kind = {}
            for i in self.stream:
                key = i.kind()
                entry = by_kind.get(key)
                if entry is None:
                    by_kind[key] = [i, 1]
                else:
                    entry[1] += 1
            counts = {}
            for first, n in by_kind.values():
                counts[first.ptx] = counts.get(first.ptx, 0) + n
            self._counts = counts
        return self._counts

    @property
    def encoded(self):
        """The stream as the executor's integer arrays (:class:`warpsim.program.encode.Encoded`), made once."""
        if self._encoded is None:
            from warpsim.program.encode import encode
            self._encoded = encode(self.stream)
        return self._encoded


def _buffer_tensors(buffers):
    from warpsim.cute import LayoutRight, make_gmem_ptr, make_layout, make_tensor
    return {b.name: make_tensor(make_gmem_ptr(b.base, b.dtype), make_layout(b.shape, LayoutRight))
            for b in buffers}


def _call(fn, tracer, tid, kwargs):
    """``fn(tid, **kwargs)`` with ``tracer`` active. An exception other than a ``WarpsimError`` becomes a
    ``ProgramError`` naming the program's source line (the deepest frame outside warpsim)."""
    _CURRENT.append(tracer)
    memory_elements(MemoryElements(tracer))
    hooked = tracer._code is not None and sys.getprofile() is None
    if hooked:
        sys.setprofile(_frame_catcher(tracer))
    try:
        fn(tid, **kwargs)
    except WarpsimError:
        raise
    except Exception as e:
        line = None
        tb = e.__traceback__
        while tb is not None:
            if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
                name = tb.tb_frame.f_code.co_filename
                line = SourceLine(name, tb.tb_lineno, linecache.getline(name, tb.tb_lineno).strip())
            tb = tb.tb_next
        kind = "" if isinstance(e, (ValueError, TypeError)) else f"{type(e).__name__}: "
        where = f" (at {line})" if line else ""
        raise ProgramError(f"{kind}{e}{where}") from e
    finally:
        if hooked:
            sys.setprofile(None)
        memory_elements(None)
        _CURRENT.pop()


def _frame_catcher(tracer):
    """A profile hook that keeps the program function's frame at its call event and removes itself:
    one hook call per traced function call, none while the program runs."""
    code = tracer._code

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is code:
            tracer.frame = frame
            sys.setprofile(None)
    return hook


def trace_program(program, params, mode="vector"):
    """Trace ``program`` for resolved ``params``: a :class:`Trace` with the scheduled stream.

    ``mode``: ``"vector"`` or ``"thread"`` (see the module docstring). Raises ``ProgramError`` for a
    malformed program (divergent lanes, bad copies, unequal barrier counts).
    """
    import time
    from warpsim.program.schedule import schedule
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
            names = _agreed_tensors(w, [t.tensors() for t in lane_tracers])
            instrs = _zip_lanes(w, [t.instrs for t in lane_tracers])
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


def _zip_lanes(warp, lane_streams):
    """Zip 32 one-lane streams into warp instructions; lanes must agree on every instruction."""
    lengths = [len(s) for s in lane_streams]
    out = []
    for k in range(max(lengths)):
        present = [lane for lane, s in enumerate(lane_streams) if k < len(s)]
        groups = {}
        for lane in present:
            instr = lane_streams[lane][k]
            groups.setdefault((instr.key(), instr.line), []).append(lane)
        missing = [lane for lane in range(WARP_SIZE) if k >= len(lane_streams[lane])]
        if len(groups) > 1 or missing:
            parts = [f"lanes {_ranges(ls)} issue {lane_streams[ls[0]][k].ptx} at {lane_streams[ls[0]][k].line}"
                     for ls in groups.values()]
            if missing:
                parts.append(f"lanes {_ranges(missing)} have finished")
            raise ProgramError(f"divergent lanes in warp {warp} at its instruction {k}: " + "; ".join(parts))
        first = lane_streams[0][k]
        addr = None
        if first.addr is not None:
            addr = np.concatenate([s[k].addr for s in lane_streams]).astype(np.int64)
        out.append(dataclasses.replace(first, addr=addr))
    return out


def _agreed_tensors(warp, per_lane):
    names = {}
    for lane, tensors in enumerate(per_lane):
        for name, (storage, base, tensor) in tensors.items():
            if name in names and (names[name][1] != base or names[name][0].size != storage.size):
                raise ProgramError(f"divergent lanes in warp {warp}: local name {name!r} refers to different "
                                   f"registers in lane 0 and lane {lane}")
            names.setdefault(name, (storage, base, tensor))
    return {n: v for n, v in names.items() if all(n in t for t in per_lane)}
