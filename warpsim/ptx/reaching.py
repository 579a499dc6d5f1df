"""Reaching definitions over a PTX function's control-flow graph: which writes may reach each instruction.

:class:`ControlFlow` reads the instructions and labels of a parsed function body
(:class:`~warpsim.ptx.syntax.Function`): an instruction flows to the next one, a ``bra`` to its label
(a guarded ``bra`` to both), ``ret``/``exit``/``trap`` nowhere (a guarded one to the next). The
instructions are split into basic blocks once. :meth:`ControlFlow.reaching` then solves the classic
forward problem for any set of *definitions* the caller numbers: ``defs_at[i]`` the definitions
instruction ``i`` makes, ``kill_of(i)`` the bit mask of definitions it overwrites first. Sets are
Python integers used as bit masks (definition ``d`` is bit ``d``); the join is their union, so a
definition reaches an instruction when some path brings it there unkilled.

>>> from warpsim.ptx.syntax import parse_module
>>> f = parse_module(".version 8.0\\n.target sm_80\\n.address_size 64\\n.entry k()\\n{ .reg .b32 %r<2>;"
...                  " .reg .pred %p; mov.u32 %r1, 0;\\nL: add.u32 %r1, %r1, 1; setp.lt.u32 %p, %r1, 9;"
...                  " @%p bra L; ret; }").functions["k"]
>>> flow = ControlFlow(f)
>>> defs_at = [[0], [1], [], [], []]          # mov defines 0, add defines 1 (both %r1)
>>> reach = flow.reaching(defs_at, lambda i: 0b11 if defs_at[i] else 0)
>>> bits(reach[1]), bits(reach[2])            # add reads mov's %r1 and its own from the back edge
([0, 1], [1])
"""

from __future__ import annotations

from collections import deque

from warpsim.ptx.syntax import Instruction, Label

__all__ = ["ControlFlow", "bits"]


class ControlFlow:
    """The instructions of a function body (``.instrs``), their successors (``.succ``) and basic blocks.

    ``decided``: ``{instruction index: taken}`` for guarded branches whose outcome is known (a compiler's view: a
    ``bra`` decided taken flows to its label only, one decided not taken to the next instruction only)."""

    def __init__(self, function, decided=None):
        self.decided = dict(decided or {})
        self.instrs = [s for s in function.body if isinstance(s, Instruction)]
        labels, k = {}, 0
        for s in function.body:
            if isinstance(s, Label):
                labels[s.name] = k
            else:
                k += 1
        self.succ = [self._successors(i, ins, labels) for i, ins in enumerate(self.instrs)]
        self.blocks = self._blocks()

    def _successors(self, i, ins, labels):
        after = [i + 1] if i + 1 < len(self.instrs) else []
        if ins.opcode in ("ret", "exit", "trap"):
            return after if ins.guard else []
        if ins.opcode == "bra":
            target = ins.operands[0] if ins.operands else None
            to = labels.get(target.name) if target is not None and target.kind == "sym" else None
            if to is None:
                return after
            taken = self.decided.get(i)
            if taken is not None:
                return ([to] if to < len(self.instrs) else []) if taken else after
            return ([to] if to < len(self.instrs) else []) + (after if ins.guard else [])
        return after

    def _blocks(self):
        """Basic blocks as ``(first, end)`` instruction ranges; ``.block_succ`` their successor blocks."""
        n = len(self.instrs)
        leaders = {0} if n else set()
        for i, succ in enumerate(self.succ):
            if succ != [i + 1]:
                leaders.update(succ)
                if i + 1 < n:
                    leaders.add(i + 1)
        starts = sorted(leaders)
        block_of = {}
        blocks = []
        for b, start in enumerate(starts):
            end = starts[b + 1] if b + 1 < len(starts) else n
            blocks.append((start, end))
            for i in range(start, end):
                block_of[i] = b
        self.block_succ = [sorted({block_of[s] for s in self.succ[end - 1]}) for _start, end in blocks]
        return blocks

    def reaching(self, defs_at, kill_of):
        """``[mask, ...]``: per instruction, the definitions that reach it (before it runs)."""
        gen, kill = [], []
        for start, end in self.blocks:
            g, k = 0, 0
            for i in range(start, end):
                mask = kill_of(i)
                g &= ~mask
                k |= mask
                for d in defs_at[i]:
                    g |= 1 << d
            gen.append(g)
            kill.append(k)
        preds = [[] for _ in self.blocks]
        for b, succ in enumerate(self.block_succ):
            for s in succ:
                preds[s].append(b)
        into, out = [0] * len(self.blocks), [0] * len(self.blocks)
        work = deque(range(len(self.blocks)))
        queued = set(work)
        while work:
            b = work.popleft()
            queued.discard(b)
            inb = 0
            for p in preds[b]:
                inb |= out[p]
            into[b] = inb
            new = gen[b] | (inb & ~kill[b])
            if new != out[b]:
                out[b] = new
                for s in self.block_succ[b]:
                    if s not in queued:
                        queued.add(s)
                        work.append(s)
        at = [0] * len(self.instrs)
        for b, (start, end) in enumerate(self.blocks):
            live = into[b]
            for i in range(start, end):
                at[i] = live
                live &= ~kill_of(i)
                for d in defs_at[i]:
                    live |= 1 << d
        return at


def bits(mask):
    """The indices of the set bits of ``mask``, ascending: ``bits(0b1010) == [1, 3]``."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
