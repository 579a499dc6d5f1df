"""The schedule: how the warps' instruction streams interleave into the CTA's one stream.

Warps interleave only at instruction boundaries. The order (documented, deterministic): the
program is cut into phases at ``bar.sync``; within a phase the warps take turns, one instruction
each, round-robin in warp order (warp 0, 1, ..., skipping a warp that has reached the phase's end);
then every warp's ``bar.sync`` follows, in warp order, and the next phase starts. No warp passes a
barrier before every warp has reached it, so a program whose warps share data only across
barriers gets the same result under any schedule a GPU may choose.

>>> from warpsim.program.instr import Instr, Op
>>> w = [[Instr(Op.MOV, 0, dst=(0,)), Instr(Op.MOV, 0, dst=(1,)), Instr(Op.BAR, 0)],
...      [Instr(Op.MOV, 1, dst=(0,)), Instr(Op.BAR, 1)]]
>>> [(i.op.name, i.warp) for i in schedule(w)]
[('MOV', 0), ('MOV', 1), ('MOV', 0), ('BAR', 0), ('BAR', 1)]
"""

from warpsim.errors import ProgramError
from warpsim.program.instr import Op

__all__ = ["schedule"]


def _phases(stream):
    phases = [[]]
    for instr in stream:
        if instr.op == Op.BAR:
            phases[-1].append(instr)
            phases.append([])
        else:
            phases[-1].append(instr)
    return phases


def schedule(per_warp):
    """One stream from the warps' streams (``per_warp[w]``: warp ``w``'s instructions in program order).

    Raises ``ProgramError`` when warps reach ``bar.sync`` different numbers of times (a deadlock on
    a GPU), naming the warps, their counts and the barrier lines.
    """
    phased = [_phases(s) for s in per_warp]
    counts = [len(p) - 1 for p in phased]
    if len(set(counts)) > 1:
        lines = sorted({str(i.line) for s in per_warp for i in s if i.op == Op.BAR and i.line})
        raise ProgramError(f"bar.sync is reached a different number of times by the warps "
                           f"({', '.join(f'warp {w}: {n}' for w, n in enumerate(counts))}; barriers at "
                           f"{'; '.join(lines) or '?'}): every warp must reach every barrier")
    out = []
    for k in range(counts[0] + 1 if counts else 0):
        parts = [p[k] for p in phased]
        bars = [part.pop() for part in parts] if k < counts[0] else []
        longest = max((len(p) for p in parts), default=0)
        for i in range(longest):
            for part in parts:
                if i < len(part):
                    out.append(part[i])
        out.extend(bars)
    return out
