"""The debugging session: one kernel on the PTX core, one warp instruction at a time, whatever the front end.

A :class:`Session` holds a :class:`~warpsim.ptx.launch.PtxRun` (the interpreter stopped between warp
instructions) and the source map of the kernel (:mod:`warpsim.debug.source_lines`). Every front end comes
here as PTX: a ``.cu`` (nvcc), a ``.ptx`` or a CuTe DSL file (:meth:`Session.open`), and a traced Python
CuTe-dialect program as its lowered kernel (:meth:`Session.program`, launched as
:func:`warpsim.program.run.execute_trace` launches it), with the trace's metadata layered on top in
``session.traced`` (:class:`~warpsim.debug.traced.Traced`: tensors, data flow, bank reports; None for
a kernel). ``position`` counts the warp instructions executed in the launch (all CTAs). The
interpreter's schedule is deterministic: the lowest-numbered warp with a running thread executes next,
one instruction for the lanes at its smallest pc (see :mod:`warpsim.ptx.interp`), so the next
instruction is known before it runs.

Motion (each returns a :class:`Stop`; every motion executes at least one instruction, then stops
before an instruction a breakpoint names, after an instruction that changed a watched value, or at
a fault, where ``reason == "fault"`` and the message names the instruction and the lanes):

- ``stepi(n)``: ``n`` warp instructions of the schedule, whichever warp runs them;
- ``step(n)`` (``next(n)`` is the same: nothing is called): until the focus warp is about to run an
  instruction of another source line, ``n`` times;
- ``cont()``, ``run_to(line, file)``: to the end, or to the next entry into a source line;
- ``back(n)`` / ``goto(position)``: a replay from the nearest checkpoint (taken every ``interval``
  instructions; the interval doubles when more than ``max_checkpoints`` are held), no breakpoints;
- ``go_cta(i)``: until CTA ``i`` of the grid is the one running (a replay if it ran already).

Breakpoints: ``break_line(line, file)`` (a ``.loc`` source line of any frame of the inline chain, so a
CuTe header line works too) and ``break_ptx(line)`` stop before a warp enters the line (its previous
instruction was of another line); ``break_kind(opcode)`` before every instruction whose PTX opcode is or
starts with it (``ldmatrix``, ``mma``, ``st.shared``); ``watch_register(name, lane)`` (of the focus warp
at the time) and ``watch_smem(address, nbytes)`` stop after the value changes.

>>> from warpsim.ptx import load
>>> mod = load(".version 8.0\\n.target sm_80\\n.address_size 64\\n.visible .entry k()\\n"
...            "{ .reg .b32 %r<3>; mov.u32 %r1, %tid.x; add.u32 %r2, %r1, 1; ret; }", filename="k.ptx")
>>> s = Session(mod, "k", block=64)
>>> s.next_instruction()[:2], s.stepi().position, s.stepi(2).position, s.warp
((0, 0), 1, 3, 1)
>>> s.cont().reason, s.position, s.back(2).position
('end', 6, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpsim.debug.source_lines import source_chains, user_line
from warpsim.debug.traced import Traced
from warpsim.errors import SimulatorFault
from warpsim.isa.arith import DEFAULT_ARCH
from warpsim.ptx.codes import RUNNING, WAITING
from warpsim.ptx.decode import IMM, K_ADDR, KIND, LOC, M0, NOPS, NW, O0, OP, SLOT
from warpsim.ptx.families.barriers import SETMAXNREG
from warpsim.ptx.opcodes import Op
from warpsim.ptx.launch import DEFAULT_MAX_STEPS
from warpsim.ptx.memory import SHARED_BASE, SHARED_WINDOW
from warpsim.program.lower import KERNEL
from warpsim.program.program import Program, load_program
from warpsim.program.run import prepare

__all__ = ["Session", "Stop", "Breakpoint", "Executed"]

_NO_DESTINATION = ("st", "bar", "bra", "ret", "exit", "cp", "red", "membar", "fence", "call", "trap", "prefetch",
                   "stmatrix", "barrier", "nanosleep", "pmevent")


@dataclass(frozen=True)
class Breakpoint:
    """``kind`` ``"line"`` (``file``, ``line``), ``"ptx"`` (``line``), ``"op"`` (``op``: a PTX opcode or its
    prefix), ``"reg"`` (``warp``, ``lane``, ``reg``) or ``"smem"`` (``address``, ``nbytes``); ``pcs``: the
    instructions a line, PTX line or opcode breakpoint names."""

    number: int
    kind: str
    line: int = 0
    file: str = ""
    warp: int = 0
    lane: int = -1
    reg: str = ""
    op: str = ""
    address: int = 0
    nbytes: int = 0
    pcs: frozenset = frozenset()

    def __str__(self):
        if self.kind == "line":
            return f"line {self.file + ':' if self.file else ''}{self.line}"
        if self.kind == "ptx":
            return f"PTX line {self.line}"
        if self.kind == "op":
            return f"instruction {self.op}"
        if self.kind == "reg":
            return f"watch w{self.warp} {'lane ' + str(self.lane) + ' ' if self.lane >= 0 else ''}{self.reg}"
        return f"watch shared [{self.address:#x}, {self.address + self.nbytes:#x})"


@dataclass(frozen=True)
class Stop:
    """Why a motion stopped: ``reason`` ``"step"``, ``"line"`` (``next``/``run_to``), ``"break"``,
    ``"watch"``, ``"cta"``, ``"end"``, ``"fault"`` or ``"back"``; ``hits``: ``(breakpoint, detail)``;
    ``executed``: instructions this motion ran; ``message``: a fault's text; ``printed``: printf lines."""

    reason: str
    position: int
    executed: int
    hits: tuple = ()
    message: str = ""
    printed: tuple = ()


@dataclass(frozen=True)
class Executed:
    """One executed warp instruction: ``position`` (its index in the launch), ``cta``, ``warp``, ``pc``,
    ``lanes`` (bit mask of the lanes at that pc), ``written`` (PTX register names it writes),
    ``shared`` (``(kind, addresses int64[32], num, bits, trans)`` of a shared access, else None)."""

    position: int
    cta: tuple
    warp: int
    pc: int
    lanes: int
    written: tuple = ()
    shared: tuple | None = None


def _opcode(text):
    """The opcode of a PTX instruction's text, its guard dropped: ``"ldmatrix.sync.aligned.m8n8.x4.shared.b16"``."""
    parts = text.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0].rstrip(";") if parts else ""


class Session:
    """A kernel stepped on the simulated grid (see the module docstring).

    ``module``: a loaded :class:`~warpsim.ptx.launch.PtxModule`; ``kernel``, ``grid``, ``block``, ``args``
    (keyed by PTX param name), ``smem``, ``arch``, ``max_steps``: as for ``PtxModule.start``;
    ``source``: the path of the file the PTX came from (for ``list``). Raises what ``start`` raises.
    """

    def __init__(self, module, kernel, grid=(1, 1, 1), block=(128, 1, 1), args=None, smem=0, arch="sm80",
                 max_steps=DEFAULT_MAX_STEPS, source=None, interval=256, max_checkpoints=32):
        self.module, self.kernel, self.source = module, kernel, source
        self.front = self.traced = None         # the kernel front door (open), the trace's metadata (program)
        self._launch = dict(grid=grid, block=block, args=args, smem=smem, arch=arch, max_steps=max_steps, quiet=True)
        self.run = module.start(kernel, **self._launch)
        d = self.decoded = self.run.decoded
        self.warps = self.run.machine.regs.shape[0]
        self.regs_by_name = dict(d.reg_names)
        self._name_of_slot = {slot: name for name, (slot, _w, _t) in d.reg_names.items()}
        lines = sorted({w.ptx_line for w in d.where})
        chains = source_chains(module.text, module.module.files, lines)
        self.chain = [chains.get(d.where[int(d.code[pc, LOC])].ptx_line, ()) for pc in range(d.code.shape[0])]
        self.user = [user_line(c) for c in self.chain]
        self.ptx_line = [d.where[int(d.code[pc, LOC])].ptx_line for pc in range(d.code.shape[0])]
        self.text = [" ".join(d.where[int(d.code[pc, LOC])].text.split()) for pc in range(d.code.shape[0])]
        self.roles = bool(np.any((d.code[:, OP] == Op.FENCE) & (d.code[:, M0] == SETMAXNREG)))   # warp-specialised
        self.pinned_warp = None
        self.last = None                 # the last Executed
        self.last_of_warp = {}           # warp -> its last Executed
        self.fault = ""
        self.fault_at = None             # the Executed (not executed: it faulted) of the faulting instruction
        self._breakpoints, self._numbers, self.hit_counts = {}, 0, {}
        self.interval, self.max_checkpoints = interval, max_checkpoints
        self._checkpoints = {0: self._snapshot()}

    @property
    def grid(self):
        """The launch's grid ``(x, y, z)``."""
        return tuple(self._launch["grid"])

    @property
    def block(self):
        """The launch's block ``(x, y, z)``."""
        return tuple(self._launch["block"])

    @classmethod
    def open(cls, source, kernel, grid=1, block=128, args=None, smem=0, arch="sm_90", nvcc_flags=(), **options):
        """A session over ``kernel`` of a ``.cu``, ``.ptx`` or CuTe DSL file, compiled for ``arch`` and its
        arguments named as in the source (:func:`warpsim.frontends.kernel.open_kernel`); ``options`` as the
        constructor's. ``session.front`` is the :class:`~warpsim.frontends.kernel.Kernel` (``buffers(result)``)."""
        from warpsim.frontends.kernel import open_kernel, parse_dim3
        front = open_kernel(source, kernel, arch=arch, nvcc_flags=tuple(nvcc_flags))
        session = cls(front.module, front.name, parse_dim3(grid, "grid"), parse_dim3(block, "block"),
                      front.core_args(args or {}), smem=smem, arch=front.arch.replace("_", ""), source=front.source,
                      **options)
        session.front = front
        return session

    @classmethod
    def program(cls, program, params=None, inputs=None, *, seed=0, arch=DEFAULT_ARCH, mode="vector", strict=False,
                max_smem_bytes=None, **options):
        """A session over a Python CuTe-dialect ``program`` (a :class:`~warpsim.program.program.Program` or the
        path of a program file): its trace lowered to PTX (:attr:`Trace.kernel`) and launched on one CTA as
        :func:`~warpsim.program.run.execute_trace` launches it, ``session.traced`` the trace's metadata
        (:class:`~warpsim.debug.traced.Traced`). ``params``, ``inputs``, ``seed``, ``mode``, ``strict``,
        ``max_smem_bytes``: as for ``run_program``; ``options`` as the constructor's. Raises what
        ``run_program`` raises for a bad program, params or inputs (an address a lane would fault on
        included)."""
        if not isinstance(program, Program):
            program = load_program(program)
        trace, machine, loaded, _seconds = prepare(program, params, inputs, seed=seed, mode=mode, strict=strict,
                                                   arch=arch, max_smem_bytes=max_smem_bytes)
        trace.check_addresses(smem_bytes=machine.smem.size, gmem_bytes=machine.gmem.size)
        low = trace.lowered
        files = trace.kernel.module.files
        session = cls(trace.kernel, KERNEL, block=(low.threads, 1, 1), args={"gmem": machine.gmem, "table": low.table},
                      smem=low.smem_bytes, arch=arch, source=next(iter(files.values()), None), **options)
        session.traced = Traced(trace, session, loaded)
        return session

    # -- state ------------------------------------------------------------------------------------
    @property
    def position(self):
        return self.run.steps

    @property
    def finished(self):
        return self.run.finished

    @property
    def cta(self):
        return self.run.cta

    @property
    def warp(self):
        """The focus warp: the pinned one (``warp w``), else the warp that runs next, else the last one's."""
        if self.pinned_warp is not None:
            return self.pinned_warp
        nxt = self.next_instruction()
        if nxt is not None:
            return nxt[0]
        return self.last.warp if self.last is not None else 0

    @property
    def breakpoints(self):
        return [self._breakpoints[k] for k in sorted(self._breakpoints)]

    def warp_pcs(self, warp):
        """``(pc int64[32], status int64[32])`` of ``warp``'s lanes in the current CTA."""
        self._check_warp(warp)
        t0 = 32 * warp
        return self.run.pc[t0:t0 + 32], self.run.status[t0:t0 + 32]

    def next_instruction(self):
        """``(warp, pc, lanes mask)`` of the instruction the schedule runs next, or None when no thread
        runs (finished, faulted, or every live thread waits at a barrier)."""
        if self.finished or self.fault:
            return None
        pc, status = self.run.pc, self.run.status
        for w in range(self.warps):
            running = status[32 * w:32 * w + 32] == RUNNING
            if running.any():
                pcs = pc[32 * w:32 * w + 32]
                p = int(pcs[running].min())
                lanes = np.flatnonzero(running & (pcs == p))
                return w, p, int(sum(1 << int(i) for i in lanes))
        return None

    def warp_next_pc(self, warp):
        """The pc the lanes of ``warp`` run next (the smallest of its running lanes), or None."""
        pcs, status = self.warp_pcs(warp)
        running = status == RUNNING
        if running.any():
            return int(pcs[running].min())
        waiting = status == WAITING
        return int(pcs[waiting].min()) - 1 if waiting.any() else None

    def role_of(self, warp):
        """``"producer"``, ``"consumer"`` or None: the role of ``warp`` in a warp-specialised kernel, by the
        ``setmaxnreg`` it ran last (CUTLASS's and FlashAttention-3's producers give registers back with ``.dec``, their
        consumers take them with ``.inc``); None before it ran one, or in a kernel without any."""
        budget = int(self.run.register_budgets[warp]) if self.roles else 0
        return "consumer" if budget > 0 else "producer" if budget < 0 else None

    def line_of(self, pc):
        """``(file, line)`` of the user's source line of instruction ``pc``, or None."""
        return self.user[pc] if pc is not None and 0 <= pc < len(self.user) else None

    def _check_warp(self, warp):
        if isinstance(warp, bool) or not isinstance(warp, (int, np.integer)) or not 0 <= warp < self.warps:
            raise ValueError(f"warp must be an int in [0, {self.warps}), got {warp!r}")

    def register(self, name):
        """``(slot, words, type)`` of PTX register ``name`` (``%r12``); ValueError naming the kernel's."""
        if name not in self.regs_by_name:
            if self.traced is not None:          # a program: its own registers, not the lowering's scratch
                raise ValueError(f"no register {name!r} in the program (its registers: "
                                 f"%r0..%r{self.traced.trace.regs_per_thread - 1})")
            prefixes = sorted({n.rstrip("0123456789") for n in self.regs_by_name})
            raise ValueError(f"no register {name!r} in {self.kernel} (its registers: "
                             f"{', '.join(p + 'N' for p in prefixes) or 'none'})")
        return self.regs_by_name[name]

    def register_value(self, name, warp, lane):
        """The bits of register ``name`` of ``lane`` in ``warp`` (an int; 64-bit registers both words)."""
        slot, words, _t = self.register(name)
        r = self.run.machine.regs[warp, lane]
        return int(r[slot]) | (int(r[slot + 1]) << 32 if words == 2 else 0)

    # -- checkpoints --------------------------------------------------------------------------------
    def _snapshot(self):
        return self.run.checkpoint(), self.last, dict(self.last_of_warp)

    def _restore(self, snap):
        saved, last, last_of_warp = snap
        self.run.restore(saved)
        self.last, self.last_of_warp, self.fault, self.fault_at = last, dict(last_of_warp), "", None

    def _checkpoint(self):
        p = self.position
        if p % self.interval or p in self._checkpoints:
            return
        self._checkpoints[p] = self._snapshot()
        if len(self._checkpoints) > self.max_checkpoints:
            self.interval *= 2
            self._checkpoints = {k: v for k, v in self._checkpoints.items() if k % self.interval == 0}

    @property
    def checkpoints(self):
        return tuple(sorted(self._checkpoints))

    # -- one instruction ----------------------------------------------------------------------------
    def _written(self, pc):
        text = self.text[pc]
        body = text.split(None, 1)
        if text.startswith("@"):
            body = body[1].split(None, 1) if len(body) > 1 else []
        if len(body) < 2 or body[0].split(".")[0] in _NO_DESTINATION:
            return ()
        first = body[1].split("}", 1)[0] if body[1].lstrip().startswith("{") else body[1].split(",", 1)[0]
        names = [t.strip(" {};|") for t in first.replace("|", ",").split(",")]
        if "|" in body[1].split(",", 1)[0]:
            names = [t.strip(" {};") for t in body[1].split(",", 1)[0].split("|")]
        return tuple(n for n in names if n in self.regs_by_name)

    def _shared_access(self, warp, pc, lanes):
        """The addresses of the shared access instruction ``pc`` is about to make, else None."""
        text = self.text[pc].split(None, 1)[1] if self.text[pc].startswith("@") else self.text[pc]
        opcode = text.split(None, 1)[0]
        parts = opcode.split(".")
        if parts[0] == "ldmatrix":
            kind, num = "ldmatrix", int(next((p[1:] for p in parts if p in ("x1", "x2", "x4")), "1"))
            bits = None
        elif parts[0] in ("ld", "st") and "shared" in parts:
            kind, num = parts[0], None
            vec = next((int(p[1:]) for p in parts if p in ("v2", "v4")), 1)
            bits = vec * int("".join(ch for ch in parts[-1] if ch.isdigit()) or 32)
        else:
            return None
        code, opnd = self.decoded.code, self.decoded.opnd
        rows = [int(code[pc, O0 + k]) for k in range(int(code[pc, NOPS]))]
        addr_rows = [r for r in rows if opnd[r, KIND] == K_ADDR]
        if not addr_rows:
            return None
        slot, nw, imm = (int(opnd[addr_rows[0], c]) for c in (SLOT, NW, IMM))
        regs = self.run.machine.regs[warp]
        addrs = np.zeros(32, np.int64)
        for lane in range(32):
            if not (lanes >> lane) & 1:
                continue
            base = 0
            if slot >= 0:
                base = int(regs[lane, slot]) | (int(regs[lane, slot + 1]) << 32 if nw == 2 else 0)
            a = base + imm
            addrs[lane] = a - SHARED_WINDOW if a >= SHARED_WINDOW else a
        return kind, addrs, num, bits, ".trans" in opcode

    def _step1(self):
        """Execute one warp instruction; the :class:`Executed`, or None at a fault (``self.fault`` says)."""
        nxt = self.next_instruction()
        before = None
        if nxt is None:
            before = self.run.pc.copy()
        shared = self._shared_access(*nxt) if nxt is not None else None
        cta, position = self.run.cta, self.position
        try:
            self.run.step(1)
        except SimulatorFault as e:
            self.fault = str(e)
            if nxt is not None:
                w, p, lanes = nxt
                self.fault_at = Executed(position, cta, w, p, lanes)
            return None
        if nxt is None:              # barriers were released first: the lowest warp whose pcs moved ran
            changed = np.flatnonzero(before != self.run.pc) if self.run.cta == cta else np.arange(0)
            if changed.size == 0:
                self._checkpoint()
                return None
            w = int(changed[0]) // 32
            moved = changed[changed // 32 == w]
            p = int(before[moved].min())
            nxt = (w, p, int(sum(1 << (int(t) % 32) for t in moved if before[t] == p)))
        w, p, lanes = nxt
        done = Executed(position, cta, w, p, lanes, self._written(p), shared)
        self.last = self.last_of_warp[w] = done
        self._checkpoint()
        return done

    # -- motion -----------------------------------------------------------------------------------
    def _watch_values(self):
        out = {}
        m = self.run.machine
        for bp in self._breakpoints.values():
            if bp.kind == "reg":
                slot, words, _t = self.regs_by_name[bp.reg]
                lanes = slice(None) if bp.lane < 0 else slice(bp.lane, bp.lane + 1)
                out[bp.number] = m.regs[bp.warp, lanes, slot:slot + words].copy()
            elif bp.kind == "smem":
                out[bp.number] = m.smem[bp.address:bp.address + bp.nbytes].copy()
        return out

    def _entry_hits(self):
        """Line / PTX breakpoints the next instruction enters."""
        nxt = self.next_instruction()
        if nxt is None:
            return ()
        w, p, _lanes = nxt
        prev = self.last_of_warp.get(w)
        hits = []
        for bp in self._breakpoints.values():
            if p in bp.pcs and (bp.kind == "op" or prev is None or prev.pc not in bp.pcs or prev.cta != self.cta):
                hits.append((bp, f"w{w} {self.where_text(p)}"))
        return tuple(hits)

    def where_text(self, pc):
        line = self.line_of(pc)
        src = f"{line[0]}:{line[1]}, " if line else ""
        return f"{src}PTX line {self.ptx_line[pc]}"

    def _motion(self, done, n=None):
        """Run until ``done(executed)`` says stop (or a breakpoint, watch, fault, the end)."""
        if self.fault:
            return Stop("fault", self.position, 0, message=self.fault)
        if self.finished:
            return Stop("end", self.position, 0)
        start, printed = self.position, len(self.run.printf)
        executed = 0
        while True:
            watched = self._watch_values() if any(b.kind in ("reg", "smem") for b in self._breakpoints.values()) \
                else {}
            ex = self._step1()
            executed += 1
            new = tuple(self.run.printf[printed:])
            if self.fault:
                return Stop("fault", self.position, executed, message=self.fault, printed=new)
            if watched:
                after = self._watch_values()
                hits = tuple((self._breakpoints[k], "changed") for k, v in watched.items()
                             if not np.array_equal(v, after[k]))
                if hits:
                    return self._hit("watch", hits, start, new)
            if self.finished:
                return Stop("end", self.position, self.position - start, printed=new)
            reason = done(ex) if ex is not None else None
            if reason:
                return Stop(reason, self.position, self.position - start, printed=new)
            hits = self._entry_hits()
            if hits:
                return self._hit("break", hits, start, new)

    def _hit(self, reason, hits, start, printed):
        for bp, _detail in hits:
            self.hit_counts[bp.number] += 1
        return Stop(reason, self.position, self.position - start, hits, printed=printed)

    @staticmethod
    def _count(n, what):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{what}: the count must be a positive int, got {n!r}")
        return int(n)

    def stepi(self, n=1):
        left = [self._count(n, "stepi")]

        def done(_ex):
            left[0] -= 1
            return "step" if left[0] == 0 else None
        return self._motion(done)

    def step(self, n=1, what="step"):
        """Until the focus warp is about to run an instruction of another source line (``n`` times)."""
        warp, left = self.warp, [self._count(n, what)]
        line = [self.line_of(self.warp_next_pc(warp))]

        def done(ex):
            if ex.warp != warp:
                return None
            p = self.warp_next_pc(warp)
            if p is None:
                return "line"
            here = self.line_of(p)
            if here is not None and here != line[0]:
                left[0] -= 1
                line[0] = here
                return "line" if left[0] == 0 else None
            return None
        return self._motion(done)

    def next(self, n=1):
        """:meth:`step`: a kernel on the simulator calls nothing a line could step over."""
        return self.step(n, "next")

    def cont(self):
        if self._breakpoints or self.fault or self.finished:
            return self._motion(lambda ex: None)
        start, printed = self.position, len(self.run.printf)      # nothing to check: in checkpoint-sized runs
        self._step1()
        while not self.finished and not self.fault:
            try:
                self.run.step(self.interval - self.position % self.interval)
            except SimulatorFault:          # again one at a time from the checkpoint: the faulting warp and lanes
                self._restore(self._checkpoints[max(k for k in self._checkpoints if k <= self.position)])
                while not self.fault and not self.finished:
                    self._step1()
                break
            self.last, self.last_of_warp = None, {}
            self._checkpoint()
        new = tuple(self.run.printf[printed:])
        if self.fault:
            return Stop("fault", self.position, self.position - start, message=self.fault, printed=new)
        return Stop("end", self.position, self.position - start, printed=new)

    def run_to(self, line, file=None):
        pcs = self._line_pcs("until", line, file)

        def done(ex):
            nxt = self.next_instruction()
            if nxt is None or nxt[1] not in pcs:
                return None
            prev = self.last_of_warp.get(nxt[0])
            return "line" if prev is None or prev.pc not in pcs else None
        return self._motion(done)

    def go_cta(self, index):
        """Run (or replay) until CTA ``index`` (linear, x fastest, among the launched CTAs) runs."""
        ctas = self.run._ctas
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < len(ctas):
            raise ValueError(f"cta: expected a CTA index in [0, {len(ctas)}) of the grid, got {index!r}")
        target = tuple(ctas[index][1])
        if self.run._next > index:
            self.goto(0)
        if self.cta == target:
            return Stop("cta", self.position, 0)
        start = self.position
        while self.run._next < index and not self.finished and not self.fault:    # whole chunks, then exactly
            snap = self._snapshot()
            try:
                self.run.step(self.interval)
                crossed = self.run._next >= index
            except SimulatorFault:
                crossed = True               # found again below, one instruction at a time
            if crossed:
                self._restore(snap)
                break
            self.last, self.last_of_warp = None, {}
        while not self.finished and self.cta != target and not self.fault:
            self._step1()
        if self.fault:
            return Stop("fault", self.position, self.position - start, message=self.fault)
        return Stop("cta", self.position, self.position - start)

    def back(self, n=1):
        n = self._count(n, "back")
        return self.goto(max(self.position - n, 0))

    def goto(self, position):
        """Replay to ``position`` from the nearest checkpoint (no breakpoints)."""
        if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or position < 0:
            raise ValueError(f"goto: expected a position >= 0, got {position!r}")
        start = self.position
        if position < self.position or self.fault:
            self._restore(self._checkpoints[max(k for k in self._checkpoints if k <= position)])
        bulk = position - self.position - 1              # the last instruction stepped alone: `last` is known
        if bulk > 0:
            self.run.step(bulk)
            self.last, self.last_of_warp = None, {}
        while self.position < position and not self.finished and not self.fault:
            self._step1()
        return Stop("back" if position < start else "step", self.position, abs(self.position - start))

    # -- breakpoints --------------------------------------------------------------------------------
    def _line_pcs(self, what, line, file=None):
        if isinstance(line, bool) or not isinstance(line, (int, np.integer)) or line < 1:
            raise ValueError(f"{what}: a source line must be a positive int, got {line!r}")
        base = file.replace("\\", "/").rsplit("/", 1)[-1] if file else None
        if base is None:              # the kernel's own file: the user line
            pcs = frozenset(pc for pc, u in enumerate(self.user) if u is not None and u[1] == line)
        else:                         # any frame of the inline chain
            pcs = frozenset(pc for pc, chain in enumerate(self.chain) if (base, line) in chain)
        if not pcs:
            files = sorted({f for chain in self.chain for f, _ in chain})
            users = sorted({ln for u in self.user if u and (base is None or u[0] == base) for ln in [u[1]]})
            shown = ", ".join(map(str, users[:20])) + (", ..." if len(users) > 20 else "")
            raise ValueError(f"{what}: no instruction of {self.kernel} comes from line {line}"
                             f"{' of ' + base if base else ''} (source files: {', '.join(files) or 'none: no .loc'}; "
                             f"lines of the kernel's file: {shown or 'none'})")
        return pcs

    def _add(self, bp):
        self._breakpoints[bp.number] = bp
        self.hit_counts[bp.number] = 0
        return bp

    def _number(self):
        self._numbers += 1
        return self._numbers

    def break_line(self, line, file=None):
        """Break where a warp enters source ``line`` (of ``file``, a base name or path; default: the
        kernel's own file, i.e. the user line)."""
        pcs = self._line_pcs("break", line, file)
        name = file.replace("\\", "/").rsplit("/", 1)[-1] if file else ""
        return self._add(Breakpoint(self._number(), "line", line=int(line), file=name, pcs=pcs))

    def break_ptx(self, line):
        """Break where a warp enters PTX line ``line``."""
        if isinstance(line, bool) or not isinstance(line, (int, np.integer)) or line < 1:
            raise ValueError(f"break: a PTX line must be a positive int, got {line!r}")
        pcs = frozenset(pc for pc, ln in enumerate(self.ptx_line) if ln == line)
        if not pcs:
            near = sorted(set(self.ptx_line), key=lambda ln: abs(ln - line))[:3]
            raise ValueError(f"break: PTX line {line} holds no instruction of {self.kernel} "
                             f"(nearest: {', '.join(map(str, sorted(near)))})")
        return self._add(Breakpoint(self._number(), "ptx", line=int(line), pcs=pcs))

    def break_kind(self, op):
        """Break before every instruction whose PTX opcode is ``op`` or starts with ``op + "."`` (``ldmatrix``,
        ``mma``, ``st.shared``, ``bar.sync``)."""
        if not isinstance(op, str) or not op or not op[0].isalpha():
            raise ValueError(f"break: expected a source line or a PTX opcode (ldmatrix, mma, st.shared), got {op!r}")
        pcs = frozenset(pc for pc, text in enumerate(self.text) if _opcode(text) == op or
                        _opcode(text).startswith(op + "."))
        if not pcs:
            ops = sorted({_opcode(t).split(".")[0] for t in self.text})
            raise ValueError(f"break: no instruction of {self.kernel} is {op!r} or {op}.* (its opcodes: "
                             f"{', '.join(ops)})")
        return self._add(Breakpoint(self._number(), "op", op=op, pcs=pcs))

    def watch_register(self, name, lane=-1, warp=None):
        """Stop after register ``name`` of ``lane`` (default: any lane) of ``warp`` (default: the focus
        warp) changes."""
        self.register(name)
        warp = self.warp if warp is None else warp
        self._check_warp(warp)
        if not -1 <= lane < 32:
            raise ValueError(f"watch: lane must be in [0, 32), got {lane}")
        return self._add(Breakpoint(self._number(), "reg", warp=int(warp), lane=int(lane), reg=name))

    def watch_smem(self, address, nbytes=4):
        size = self.run.machine.smem.size
        if nbytes < 1 or address < SHARED_BASE or address + nbytes > size:
            raise ValueError(f"watch: shared bytes [{address:#x}, {address + nbytes:#x}) are outside shared "
                             f"memory [{SHARED_BASE:#x}, {size:#x})")
        return self._add(Breakpoint(self._number(), "smem", address=int(address), nbytes=int(nbytes)))

    def delete(self, number=None):
        if number is None:
            self._breakpoints.clear()
            return
        if number not in self._breakpoints:
            raise ValueError(f"delete: no breakpoint {number}")
        del self._breakpoints[number]
