"""Thread-mode tracing's last step: 32 one-lane instruction streams zipped into one warp's stream.

In ``"thread"`` mode the program function runs once per thread; the lanes of a warp must then
agree on every instruction (kind, registers, attributes and source line: :meth:`Instr.key
<warpsim.program.instr.Instr.key>` and ``line``), and their addresses (and predicates) become the warp
instruction's per-lane addresses (and predicates). Lanes that disagree are a ``ProgramError`` naming both source
lines and the lanes.

>>> from warpsim.program.instr import Instr, Op
>>> lanes = [[Instr(Op.LD, 0, dst=(0,), addr=np.array([4 * lane]), space="shared", bits=32)] for lane in range(32)]
>>> [i.addr[:3].tolist() for i in zip_lanes(0, lanes)]
[[0, 4, 8]]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from warpsim.errors import ProgramError
from warpsim.program.lanes import lane_ranges
from warpsim.warp import WARP_SIZE

__all__ = ["zip_lanes", "agreed_tensors"]


def zip_lanes(warp, lane_streams):
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
            parts = [f"lanes {lane_ranges(ls)} issue {lane_streams[ls[0]][k].ptx} at {lane_streams[ls[0]][k].line}"
                     for ls in groups.values()]
            if missing:
                parts.append(f"lanes {lane_ranges(missing)} have finished")
            raise ProgramError(f"divergent lanes in warp {warp} at its instruction {k}: " + "; ".join(parts))
        first = lane_streams[0][k]
        addr = None
        if first.addr is not None:
            addr = np.concatenate([s[k].addr for s in lane_streams]).astype(np.int64)
        pred = None
        if first.pred is not None:
            pred = np.concatenate([s[k].pred for s in lane_streams]).astype(np.int64)
        out.append(dataclasses.replace(first, addr=addr, pred=pred))
    return out


def agreed_tensors(warp, per_lane):
    """The register tensors every lane binds, ``{name: (storage, base, tensor)}`` (lane 0's); a name
    bound to different registers in two lanes is a ``ProgramError``."""
    names = {}
    for lane, tensors in enumerate(per_lane):
        for name, (storage, base, tensor) in tensors.items():
            if name in names and (names[name][1] != base or names[name][0].size != storage.size):
                raise ProgramError(f"divergent lanes in warp {warp}: local name {name!r} refers to different "
                                   f"registers in lane 0 and lane {lane}")
            names.setdefault(name, (storage, base, tensor))
    return {n: v for n, v in names.items() if all(n in t for t in per_lane)}
