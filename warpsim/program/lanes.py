"""The lane vector: one value per lane of a warp, as vector tracing computes it.

In vector tracing the program function runs once per warp with ``tid`` a :class:`LaneVector` of the
warp's 32 thread ids, and everything computed from it is one too. The warp is always in step: a
Python branch is allowed only where every lane agrees.

>>> lane_ranges([0, 1, 2, 5, 7, 8])
'0-2,5,7-8'
>>> lane_groups(np.array([1, 1, 2, 2]), range(4))
'lanes 0-1: 1; lanes 2-3: 2'
"""

from __future__ import annotations

import numpy as np

from warpsim.errors import ProgramError
from warpsim.program.frames import source_line, user_frame

__all__ = ["LaneVector", "lane_ranges", "lane_groups"]


def lane_ranges(lanes):
    """Sorted lane numbers as ranges: ``'0-2,5'``."""
    lanes = list(lanes)
    out, start = [], None
    for i, lane in enumerate(lanes):
        if start is None:
            start = lane
        if i + 1 == len(lanes) or lanes[i + 1] != lane + 1:
            out.append(f"{start}" if start == lane else f"{start}-{lane}")
            start = None
    return ",".join(out)


def lane_groups(values, lanes):
    """``'lanes 0-15: True; lanes 16-31: False'``: lanes grouped by value (at most 4 groups shown)."""
    groups = {}
    for lane, value in zip(lanes, values):
        groups.setdefault(value.item() if hasattr(value, "item") else value, []).append(int(lane))
    parts = [f"lanes {lane_ranges(ls)}: {v!r}" for v, ls in list(groups.items())[:4]]
    if len(groups) > 4:
        parts.append(f"... {len(groups)} different values")
    return "; ".join(parts)


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
        line = source_line(user_frame(2))
        where = f" at {line}" if line else ""
        raise ProgramError(f"divergent lanes{where}: {what} of a value that differs between lanes "
                           f"({lane_groups(flat, np.arange(flat.size))}); a warp's lanes must agree "
                           f"on control flow")

    def __bool__(self):
        return bool(self._uniform("a Python branch (truth value)"))

    def __index__(self):
        return int(self._uniform("an integer conversion"))

    def __int__(self):
        return int(self._uniform("an integer conversion"))

    def __float__(self):
        return float(self._uniform("a float conversion"))
