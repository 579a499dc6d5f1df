"""Registers read before any write: the sanitizer's ``init`` check of registers.

The simulator starts every register at 0, the GPU with whatever the register file held, so a read of a register that
nothing wrote gives a value a GPU does not. The check is static, then dynamic:

1. **Static** (:func:`unwritten_reads`): reaching definitions over the kernel body's control flow
   (:class:`warpsim.ptx.reaching.ControlFlow`): a register operand that no write of that register reaches on any
   path from the entry (read before written, whichever way the threads go). A read that only some paths leave
   unwritten is not reported (the paths may be exclusive at run time: ``if (c) x = ..; ...; if (c) use(x)``).
   ``.func`` bodies are not analysed.
2. **Dynamic**: such a read is reported only when its row executed in the launch (the interpreter counts rows when
   the sanitizer is on: :data:`warpsim.ptx.shadow.S_ROWS`).
"""

from __future__ import annotations

from warpsim.ptx.decode import LOC
from warpsim.ptx.reaching import ControlFlow
from warpsim.ptx.shadow import S_ROWS
from warpsim.sanitize.report import Finding

__all__ = ["RegisterCheck", "unwritten_reads"]

_NO_DESTINATION = {"st", "red", "bar", "barrier", "bra", "ret", "exit", "trap", "cp", "membar", "fence", "prefetch",
                   "prefetchu", "nanosleep", "call", "stmatrix", "pmevent", "griddepcontrol", "brkpt"}


def _regs(operand):
    """The register names an operand holds (a vector's elements, an address's base)."""
    if operand is None:
        return []
    if operand.kind == "reg":
        return [operand.name]
    if operand.kind in ("vec", "list"):
        return [n for item in operand.items for n in _regs(item)]
    if operand.kind == "addr":
        return _regs(operand.base)
    return []


def _writes_reads(ins):
    """``(written, read)`` register names of one instruction."""
    ops = ins.operands
    reads = [ins.guard] if ins.guard else []
    if ins.opcode in _NO_DESTINATION or not ops:
        return [], reads + [n for o in ops for n in _regs(o)]
    dst = ops[0]
    writes = [] if dst.kind == "addr" else _regs(dst)
    if dst.pair is not None:
        writes += _regs(dst.pair)
    reads += _regs(dst) if dst.kind == "addr" else []
    return writes, reads + [n for o in ops[1:] for n in _regs(o)]


def unwritten_reads(function):
    """``[(instruction, register)]`` of the reads that no write of the register reaches (see the module doc)."""
    flow = ControlFlow(function)
    defs, defs_at, names = [], [], {}
    rw = [_writes_reads(ins) for ins in flow.instrs]
    for i, (writes, _reads) in enumerate(rw):
        here = []
        for name in writes:
            names.setdefault(name, 0)
            names[name] |= 1 << len(defs)
            here.append(len(defs))
            defs.append(name)
        defs_at.append(here)

    def kill_of(i):
        if flow.instrs[i].guard is not None:
            return 0
        mask = 0
        for d in defs_at[i]:
            mask |= names[defs[d]]
        return mask

    reach = flow.reaching(defs_at, kill_of)
    out = []
    for i, (_writes, reads) in enumerate(rw):
        for name in dict.fromkeys(reads):
            if not reach[i] & names.get(name, 0):
                out.append((flow.instrs[i], name))
    return out


class RegisterCheck:
    """The register check of one :class:`~warpsim.ptx.launch.PtxRun` with its shadow on: :meth:`run` runs it
    (counting rows), :meth:`findings` words the reads that executed."""

    def __init__(self, run):
        self.run_ = run
        d = run.decoded
        function = run.module.module.functions[d.name]
        lines = {}
        for row in range(d.code.shape[0]):
            lines.setdefault(d.where[int(d.code[row, LOC])].ptx_line, []).append(row)
        self.candidates = [(row, name) for ins, name in unwritten_reads(function)
                           for row in lines.get(ins.token.line, [])]
        self.rows = None

    def run(self):
        run = self.run_
        base = int(run.sstate[S_ROWS])
        try:
            return run.run()
        finally:
            self.rows = run.sstate[base:base + run.decoded.code.shape[0]].copy()

    def findings(self, ctx):
        out = []
        if self.rows is None:
            return out
        for row, name in self.candidates:
            n = int(self.rows[row])
            if n:
                out.append(Finding("init", "uninit-register", "error", f"Uninitialized register read: {name} is read "
                                   "before any write to it (no write reaches it on any path)",
                                   [ctx.site(row, "Read")], [f"executed {n} time{'s' if n != 1 else ''} (warp "
                                                              "instructions)"]))
        return out
