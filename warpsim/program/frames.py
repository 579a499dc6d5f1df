"""Frame capture: which line of the user's program issued an instruction, and what its locals hold.

Every instruction records the source line that issued it: the first stack frame outside the
warpsim package. When the program function returns, its local names bound to CuTe tensors and
tilings are read from its frame. The frame is caught at the function's call by a profile hook that
removes itself at once (tracing pays nothing per call); where another profiler is active, the
tracer finds it from the function's first instruction instead. CPython keeps a finished frame's
locals in the frame object.

>>> def kernel():
...     return source_line(user_frame(0))
>>> kernel().line > 0, kernel().text
(True, 'return source_line(user_frame(0))')
"""

from __future__ import annotations

import linecache
import os
import sys

from warpsim.cute.tensor import Tensor
from warpsim.cute.tiled_copy import ThrCopy, TiledCopy
from warpsim.cute.tiled_mma import ThrMMA, TiledMMA
from warpsim.program.instr import SourceLine

__all__ = ["in_warpsim", "user_frame", "source_line", "error_line", "frame_catcher", "local_tensors",
           "local_tilings"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep    # warpsim/
_LINES = {}                    # (file, line) -> SourceLine
_TILINGS = (TiledCopy, ThrCopy, TiledMMA, ThrMMA)


def in_warpsim(code):
    """True when the code object ``code`` belongs to the warpsim package (not to the user's program)."""
    return code.co_filename.startswith(_PACKAGE)


def user_frame(depth):
    """The first frame outside warpsim, starting ``depth`` frames above the caller (``None`` if none)."""
    frame = sys._getframe(depth + 1)
    while frame is not None and in_warpsim(frame.f_code):
        frame = frame.f_back
    return frame


def source_line(frame):
    """The :class:`~warpsim.program.instr.SourceLine` that ``frame`` is executing (``None`` for no frame)."""
    if frame is None:
        return None
    key = (frame.f_code.co_filename, frame.f_lineno)
    line = _LINES.get(key)
    if line is None:
        line = _LINES[key] = SourceLine(key[0], key[1], linecache.getline(key[0], key[1]).strip())
    return line


def error_line(exception):
    """The :class:`~warpsim.program.instr.SourceLine` of the deepest frame outside warpsim in
    ``exception``'s traceback, or ``None``."""
    line = None
    tb = exception.__traceback__
    while tb is not None:
        if not in_warpsim(tb.tb_frame.f_code):
            name = tb.tb_frame.f_code.co_filename
            line = SourceLine(name, tb.tb_lineno, linecache.getline(name, tb.tb_lineno).strip())
        tb = tb.tb_next
    return line


def frame_catcher(code, keep):
    """A profile hook that calls ``keep(frame)`` at the call of ``code`` and removes itself: one hook
    call per traced function call, none while the program runs."""
    def hook(frame, event, arg):
        if event == "call" and frame.f_code is code:
            keep(frame)
            sys.setprofile(None)
    return hook


def local_tensors(frame):
    """``{name: tensor}`` of every CuTe tensor bound to ``frame``'s locals (``{}`` for no frame)."""
    if frame is None:
        return {}
    return {name: value for name, value in frame.f_locals.items() if isinstance(value, Tensor)}


def local_tilings(frame):
    """``{name: object}`` of every ``TiledCopy``, ``ThrCopy``, ``TiledMMA`` and ``ThrMMA`` bound to
    ``frame``'s locals (``{}`` for no frame)."""
    if frame is None:
        return {}
    return {name: value for name, value in frame.f_locals.items() if isinstance(value, _TILINGS)}
