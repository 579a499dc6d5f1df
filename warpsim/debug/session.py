"""A debugging session: a traced program's instruction stream on a simulated CTA, one warp instruction at a time.

A :class:`Session` traces a program (``warpsim.program.run.prepare``: the stream in schedule order,
the machine with its inputs loaded) and executes the stream through the njit executor, one range
at a time. ``position`` is the number of instructions executed: ``stream[position]`` is the next
one. The model of the CTA is the executor's: every instruction runs for the 32 lanes of its warp
at once, warps interleave round-robin between barriers, so stepping the stream steps the CTA.

Motion (each returns a :class:`Stop` saying why it stopped):

- ``step(n)``: ``n`` instructions; ``next()``: up to the start of the next source line's operation
  (a ``copy``, ``gemm``, ... call: a loop that calls ``gemm`` from one line stops at each call);
  ``cont()``: to the end; ``run_to(line)``: up to the start of the next operation from ``line``;
- an operation call starts at its first instruction in the stream (the first warp's; the other
  warps' instructions of the call follow, interleaved);
- every motion executes at least one instruction, then stops *before* the start of an operation
  from a line with a breakpoint or an instruction a kind breakpoint matches, and *after* an
  instruction that changed a watched register
  ``(warp, lane, reg)`` or watched shared-memory bytes; a faulting instruction stops it with
  ``reason == "fault"`` (the instruction changed nothing, ``position`` is its index);
- ``back(n)`` / ``goto(position)``: backwards (and forwards) without breakpoints, from the nearest
  machine checkpoint and a replay. Checkpoints are taken every ``interval`` instructions (64 to
  start); when more than ``max_checkpoints`` exist the interval doubles and every other one is
  dropped, so memory stays under ``max_checkpoints + 1`` machine states and a replay under
  ``interval`` instructions.

``where()`` says where the session stands; ``last_written`` lists the ``(warp, register)`` the last
instruction wrote (the debugger highlights them).

>>> from warpsim.program.program import Program
>>> from warpsim.program.ops import clear, syncthreads
>>> from warpsim.cute import make_tensor
>>> def kernel(tid):
...     acc = make_tensor("f32", (2,))
...     clear(acc)
...     syncthreads()
>>> s = Session(Program(kernel, threads=64))
>>> [f"w{i.warp}: {i.ptx}" for i in s.stream]
['w0: mov.b32', 'w1: mov.b32', 'w0: bar.sync', 'w1: bar.sync']
>>> s.step().position, s.last_written
(1, ((0, 0), (0, 1)))
>>> s.next().position, s.cont().reason, s.back(3).position
(2, 'end', 1)
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass

import numpy as np

from warpsim.errors import SimulatorFault
from warpsim.isa.arith import DEFAULT_ARCH
from warpsim.program.execute import arch_table, execute, mufu_tables, no_snapshots, run
from warpsim.program.instr import Op
from warpsim.program.program import Program, load_program

__all__ = ["Session", "Stop", "Breakpoint", "Where", "INSTRUCTION_KINDS"]

INSTRUCTION_KINDS = ("mov", "ld", "st", "ldmatrix", "mma", "cvt", "bar")   # roots of the PTX names


@dataclass(frozen=True)
class Breakpoint:
    """A breakpoint: ``kind`` ``"line"`` (``file``, ``line``), ``"kind"`` (``op``: a PTX name or its
    prefix, e.g. ``"ldmatrix"``), ``"reg"`` (``warp``, ``lane``, ``reg``) or ``"smem"`` (``address``,
    ``nbytes``). ``number`` counts from 1 in the session."""

    number: int
    kind: str
    line: int = 0
    file: str = ""
    op: str = ""
    warp: int = 0
    lane: int = 0
    reg: int = 0
    address: int = 0
    nbytes: int = 0

    def __str__(self):
        if self.kind == "line":
            return f"line {os.path.basename(self.file) + ':' if self.file else ''}{self.line}"
        if self.kind == "kind":
            return f"instruction {self.op}"
        if self.kind == "reg":
            return f"watch w{self.warp} lane {self.lane} r{self.reg}"
        return f"watch shared [{self.address:#x}, {self.address + self.nbytes:#x})"


@dataclass(frozen=True)
class Stop:
    """Why a motion stopped: ``reason`` is ``"step"`` (it ran its count), ``"line"`` (``next`` /
    ``run_to`` reached its line), ``"break"`` (a line or kind breakpoint), ``"watch"`` (a watched
    value changed), ``"end"`` (the stream is done), ``"fault"`` or ``"back"`` (it went backwards). ``hits``: ``(Breakpoint, detail)``
    pairs; ``message``: the fault's text; ``executed``: instructions run by this motion."""

    reason: str
    position: int
    executed: int
    hits: tuple = ()
    message: str = ""


@dataclass(frozen=True)
class Where:
    """``position`` of ``total``; ``instr`` the next instruction (None at the end); ``last`` the one
    executed before it (None at the start)."""

    position: int
    total: int
    instr: object
    last: object

    @property
    def warp(self):
        return self.instr.warp if self.instr is not None else None

    @property
    def line(self):
        return self.instr.line if self.instr is not None else None


def _call_starts(stream, lines):
    """``bool[n]``: instruction ``k`` is the first of an operation call in the stream (the first warp's), or,
    where the stream records no calls, the first of a run of instructions from one source line."""
    seen = set()
    out = np.zeros(len(stream), bool)
    for k, instr in enumerate(stream):
        if instr.call < 0:
            out[k] = k == 0 or lines[k] != lines[k - 1]
        elif instr.call not in seen:
            seen.add(instr.call)
            out[k] = True
    return out


def _ptx_matches(ptx, kind):
    return ptx == kind or ptx.startswith(kind + ".")


class Session:
    """A program stepped on a simulated CTA (see the module docstring).

    ``program``: a :class:`~warpsim.program.program.Program` or the path of a program file;
    ``params``, ``inputs``, ``seed``, ``mode``, ``strict``: as for ``run_program``; ``arch``:
    ``"sm80"`` or ``"sm90"``. ``interval`` / ``max_checkpoints``: the checkpoint policy.
    Raises what ``run_program`` raises for a bad program, params or inputs.
    """

    def __init__(self, program, params=None, inputs=None, *, seed=0, arch=DEFAULT_ARCH, mode="vector",
                 strict=False, interval=64, max_checkpoints=32, max_smem_bytes=None):
        from warpsim.program.run import prepare     # the tracing machinery loads on first use
        if not isinstance(program, Program):
            program = load_program(program)
        for name, value in (("interval", interval), ("max_checkpoints", max_checkpoints)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Session: {name} must be a positive int, got {value!r}")
        self.program = program
        self.arch = arch
        self._arch = arch_table(arch)
        self.trace, self.machine, self.inputs, self.trace_seconds = prepare(program, params, inputs, seed=seed,
                                                                            mode=mode, strict=strict, arch=arch,
                                                                            max_smem_bytes=max_smem_bytes)
        self.stream = self.trace.stream
        self.encoded = self.trace.encoded
        self.position = 0
        self._snap_slots, self._snap = no_snapshots()
        self._fault = np.zeros(4, np.int64)
        self._lines = [(i.line.file, i.line.line) if i.line is not None else ("", 0) for i in self.stream]
        self._entry = _call_starts(self.stream, self._lines)
        self._breakpoints = {}
        self._masks = {}
        self._numbers = 0
        self.hit_counts = {}
        self.interval = interval
        self.max_checkpoints = max_checkpoints
        self._checkpoints = {0: self._state()}
        self._dataflow = None
        self._tensors = None

    # -- state ----------------------------------------------------------------------------------
    def __len__(self):
        return len(self.stream)

    @property
    def finished(self):
        return self.position >= len(self.stream)

    @property
    def params(self):
        return self.trace.params

    @property
    def last(self):
        """The last executed instruction, or None at the start."""
        return self.stream[self.position - 1] if self.position else None

    @property
    def current(self):
        """The next instruction to execute, or None at the end."""
        return None if self.finished else self.stream[self.position]

    @property
    def last_written(self):
        """``((warp, register), ...)`` the last executed instruction wrote (empty at the start)."""
        last = self.last
        return tuple((last.warp, r) for r in last.dst) if last is not None else ()

    def written_registers(self, warp):
        """The registers of ``warp`` that the instructions executed so far have written, sorted."""
        return sorted({r for i in self.stream[:self.position] if i.warp == warp for r in i.dst})

    @property
    def focus_warp(self):
        """The warp views show by default: the last executed instruction's, else the next one's, else 0."""
        instr = self.last or self.current
        return instr.warp if instr is not None else 0

    def where(self):
        """A :class:`Where`."""
        return Where(self.position, len(self.stream), self.current, self.last)

    @property
    def tensors(self):
        """The trace's :class:`~warpsim.debug.tensors.TraceTensors` (made on first use)."""
        if self._tensors is None:
            from warpsim.debug.tensors import TraceTensors
            self._tensors = TraceTensors(self.trace)
        return self._tensors

    @property
    def dataflow(self):
        """The stream's :class:`~warpsim.debug.dataflow.DataFlow` (made on first use)."""
        if self._dataflow is None:
            from warpsim.debug.dataflow import DataFlow
            self._dataflow = DataFlow(self.trace, self.tensors)
        return self._dataflow

    def _state(self):
        m = self.machine
        return m.regs.copy(), m.smem.copy(), m.gmem.copy()

    def _restore(self, state):
        regs, smem, gmem = state
        self.machine.regs[...] = regs
        self.machine.smem[...] = smem
        self.machine.gmem[...] = gmem

    @property
    def checkpoints(self):
        """Positions of the machine checkpoints held now (sorted)."""
        return tuple(sorted(self._checkpoints))

    def _checkpoint(self):
        p = self.position
        if p % self.interval or p in self._checkpoints:
            return
        self._checkpoints[p] = self._state()
        if len(self._checkpoints) > self.max_checkpoints:
            self.interval *= 2
            self._checkpoints = {k: v for k, v in self._checkpoints.items() if k % self.interval == 0}

    # -- breakpoints ----------------------------------------------------------------------------
    def _add(self, bp, before, after):
        self._breakpoints[bp.number] = bp
        self._masks[bp.number] = (np.flatnonzero(before), np.flatnonzero(after))
        self.hit_counts[bp.number] = 0
        return bp

    def _number(self):
        self._numbers += 1
        return self._numbers

    def _line_mask(self, op, line, file=None):
        if isinstance(line, bool) or not isinstance(line, (int, np.integer)) or line < 1:
            raise ValueError(f"{op}: a source line must be a positive int, got {line!r}")
        match = np.array([ln == line and (not file or f == file or os.path.basename(f) == os.path.basename(file))
                          for f, ln in self._lines], dtype=bool)
        if not match.any():
            lines = sorted({ln for f, ln in self._lines if ln and (not file or os.path.basename(f) ==
                                                                  os.path.basename(file))})
            shown = ", ".join(map(str, lines[:16])) + (", ..." if len(lines) > 16 else "")
            where = f" of {os.path.basename(file)}" if file else ""
            raise ValueError(f"{op}: no instruction comes from line {line}{where} (lines with instructions: "
                             f"{shown or 'none'})")
        return match & self._entry

    def break_line(self, line, file=None):
        """Stop before each operation call from source ``line`` (of ``file``, by path or base name; default
        any file)."""
        mask = self._line_mask("break", line, file)
        return self._add(Breakpoint(self._number(), "line", line=int(line), file=file or ""), mask,
                         np.zeros(len(self.stream), bool))

    def break_kind(self, kind):
        """Stop before every instruction whose PTX name is ``kind`` or starts with ``kind + "."``
        (``"ldmatrix"``, ``"mma"``, ``"st.shared"``, ``"ldmatrix.sync.aligned.m8n8.x4.trans"``, ...)."""
        if not isinstance(kind, str) or kind.split(".")[0] not in INSTRUCTION_KINDS:
            raise ValueError(f"break: unknown instruction kind {kind!r}; expected one of "
                             f"{', '.join(INSTRUCTION_KINDS)} or a PTX name (prefix), e.g. ldmatrix.sync.aligned.m8n8.x4")
        mask = np.array([_ptx_matches(i.ptx, kind) for i in self.stream], dtype=bool)
        return self._add(Breakpoint(self._number(), "kind", op=kind), mask, np.zeros(len(self.stream), bool))

    def watch_register(self, warp, lane, reg):
        """Stop after an instruction changes register ``reg`` of ``lane`` in ``warp``."""
        self._check_register("watch", warp, lane, reg)
        mask = np.array([i.warp == warp and reg in i.dst for i in self.stream], dtype=bool)
        return self._add(Breakpoint(self._number(), "reg", warp=int(warp), lane=int(lane), reg=int(reg)),
                         np.zeros(len(self.stream), bool), mask)

    def watch_smem(self, address, nbytes=4):
        """Stop after an instruction changes a byte of shared memory in ``[address, address + nbytes)``."""
        size = self.machine.smem.size
        for name, v in (("address", address), ("nbytes", nbytes)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"watch: shared-memory {name} must be an int, got {v!r}")
        address, nbytes = int(address), int(nbytes)      # Python ints: no overflow in the check
        if nbytes < 1 or address < 0 or address + nbytes > size:
            raise ValueError(f"watch: shared bytes [{address:#x}, {address + nbytes:#x}) are outside shared "
                             f"memory [0, {size:#x})")
        mask = np.zeros(len(self.stream), bool)
        for k, i in enumerate(self.stream):
            if i.op == Op.ST and i.space == "shared":
                width = max(i.bits // 8, 1)
                mask[k] = bool(((i.addr < address + nbytes) & (i.addr + width > address)).any())
        return self._add(Breakpoint(self._number(), "smem", address=int(address), nbytes=int(nbytes)),
                         np.zeros(len(self.stream), bool), mask)

    def _check_register(self, op, warp, lane, reg):
        m = self.machine
        for name, v, top in (("warp", warp, m.warps), ("lane", lane, 32), ("register", reg, m.regs_per_thread)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{op}: {name} must be an int, got {v!r}")
            if not 0 <= v < top:
                raise ValueError(f"{op}: {name} {v} is outside [0, {top})")

    @property
    def breakpoints(self):
        """The breakpoints, by number."""
        return tuple(self._breakpoints[k] for k in sorted(self._breakpoints))

    def delete(self, number=None):
        """Delete breakpoint ``number`` (all when None); ``ValueError`` for an unknown number."""
        if number is None:
            self._breakpoints.clear()
            self._masks.clear()
            return
        if number not in self._breakpoints:
            raise ValueError(f"delete: no breakpoint {number} (have: "
                             f"{', '.join(map(str, sorted(self._breakpoints))) or 'none'})")
        del self._breakpoints[number]
        del self._masks[number]

    def _watched(self, bp):
        m = self.machine
        if bp.kind == "reg":
            return int(m.regs[bp.warp, bp.lane, bp.reg])
        return int.from_bytes(m.smem[bp.address:bp.address + bp.nbytes].tobytes(), "little")

    # -- motion ---------------------------------------------------------------------------------
    def _execute(self, start, stop):
        """Run ``[start, stop)``; returns the fault message or "" (``position`` is where it got to)."""
        m = self.machine
        self._fault[:] = 0
        reached = run(self.encoded.code, self.encoded.addrs, m.regs, m.smem, m.gmem, start, stop, self._arch,
                      self._snap_slots, self._snap, mufu_tables(self.encoded), self._fault)
        self.position = reached
        if reached == stop:
            return ""
        try:                                  # the faulting instruction changes nothing: rerun it for the message
            execute(self.stream, self.encoded, m, arch=self.arch, start=reached, stop=reached + 1)
        except SimulatorFault as e:
            return str(e)
        return f"instruction {reached} faulted"

    def _run(self, limit, before=None):
        """Execute up to ``limit`` instructions (at least one), stopping at breakpoints and where ``before``
        (sorted stream positions) says; see the module docstring."""
        n = len(self.stream)
        start = self.position
        if start >= n:
            return Stop("end", start, 0)
        end = min(n, start + limit)
        stops = [(idx, None) for idx in [before] if idx is not None]
        stops += [(b, self._breakpoints[k]) for k, (b, _a) in self._masks.items() if b.size]
        watches = [(a, self._breakpoints[k]) for k, (_b, a) in self._masks.items() if a.size]
        values = {bp.number: self._watched(bp) for _a, bp in watches}
        while self.position < end:
            pos = self.position
            target = min(end, (pos // self.interval + 1) * self.interval)
            for idx, _bp in stops:
                k = bisect.bisect_right(idx, pos)
                if k < idx.size:
                    target = min(target, int(idx[k]))
            for idx, _bp in watches:
                k = bisect.bisect_left(idx, pos)
                if k < idx.size:
                    target = min(target, int(idx[k]) + 1)
            fault = self._execute(pos, target)
            if fault:
                return Stop("fault", self.position, self.position - start, message=fault)
            self._checkpoint()
            hits = []
            for _idx, bp in watches:
                new = self._watched(bp)
                if new != values[bp.number]:
                    by = self.stream[target - 1]
                    width = 8 if bp.kind == "reg" else 2 * bp.nbytes
                    hits.append((bp, f"{values[bp.number]:#0{width + 2}x} -> {new:#0{width + 2}x} (by #{target - 1} "
                                     f"w{by.warp} {by.ptx})"))
                    values[bp.number] = new
            if target < n:
                for idx, bp in stops:
                    k = bisect.bisect_left(idx, target)
                    if k < idx.size and idx[k] == target:
                        hits.append((bp, ""))
            if hits:
                for bp, _detail in hits:
                    if bp is not None:
                        self.hit_counts[bp.number] += 1
                if any(bp is not None for bp, _d in hits):
                    reason = "watch" if any(bp is not None and bp.kind in ("reg", "smem") for bp, _d in hits) \
                        else "break"
                    return Stop(reason, self.position, self.position - start,
                                tuple((bp, d) for bp, d in hits if bp is not None))
                return Stop("line", self.position, self.position - start)
        reason = "end" if self.position >= n else "step"
        return Stop(reason, self.position, self.position - start)

    def step(self, n=1):
        """Execute ``n`` instructions (fewer at a breakpoint, a fault or the end)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"step: the count must be a positive int, got {n!r}")
        return self._run(int(n))

    def next(self, n=1):
        """Execute up to the start of the next operation call (``n`` times)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"next: the count must be a positive int, got {n!r}")
        stop = Stop("end", self.position, 0)
        executed = 0
        starts = np.flatnonzero(self._entry)
        for _ in range(n):
            if self.finished:
                break
            stop = self._run(len(self.stream), starts)
            executed += stop.executed
            if stop.reason != "line":
                break
        return Stop(stop.reason, stop.position, executed, stop.hits, stop.message)

    def cont(self):
        """Execute to the end, a breakpoint or a fault."""
        return self._run(len(self.stream))

    def run_to(self, line, file=None):
        """Execute up to the start of the next operation from source ``line`` (a breakpoint or fault may
        stop it first)."""
        return self._run(len(self.stream), np.flatnonzero(self._line_mask("run_to", line, file)))

    def goto(self, position):
        """Put the machine in its state after ``position`` instructions (ignores breakpoints)."""
        n = len(self.stream)
        if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position <= n:
            raise ValueError(f"goto: position must be an int in [0, {n}], got {position!r}")
        start = self.position
        if position < start:
            base = max(k for k in self._checkpoints if k <= position)
            self._restore(self._checkpoints[base])
            self.position = base
        while self.position < position:
            target = min(position, (self.position // self.interval + 1) * self.interval)
            fault = self._execute(self.position, target)
            if fault:
                return Stop("fault", self.position, max(0, self.position - start), message=fault)
            self._checkpoint()
        if position < start:
            return Stop("back", self.position, 0)
        return Stop("step", self.position, self.position - start)

    def back(self, n=1):
        """Go back ``n`` instructions (to the start at most)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"back: the count must be a positive int, got {n!r}")
        return self.goto(max(0, self.position - int(n)))
