"""Progress of a long campaign, on stderr: one updating line on a terminal, periodic lines otherwise.

>>> import io
>>> out = io.StringIO()
>>> p = Progress(out, tty=False, every_seconds=0)       # not a terminal: a line per update
>>> p.start("mma m16n8k16 f16.f32 ordinary", 200)
>>> p.advance(100); p.advance(100); p.finish("0 mismatches")
>>> print(out.getvalue().strip())
mma m16n8k16 f16.f32 ordinary: 100/200
mma m16n8k16 f16.f32 ordinary: 200/200
mma m16n8k16 f16.f32 ordinary: 200/200 done, 0 mismatches
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Counts instructions of the current case and shows them on ``stream`` (default stderr).

    On a terminal the line is rewritten in place; elsewhere (logs, CI) a line is printed at most
    every ``every_seconds`` and when a case finishes.
    """

    def __init__(self, stream=None, *, tty: bool | None = None, every_seconds: float = 10.0):
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.every_seconds = every_seconds
        self.label = ""
        self.total = 0
        self.done = 0
        self._last = 0.0

    def _write(self, text: str, final: bool) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self._last = time.monotonic()
        if self.tty:
            self._write(f"{label}: 0/{total}", final=False)

    def advance(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if self.tty or now - self._last >= self.every_seconds:
            self._last = now
            self._write(f"{self.label}: {self.done}/{self.total}", final=False)

    def finish(self, outcome: str) -> None:
        self._write(f"{self.label}: {self.done}/{self.total} done, {outcome}", final=True)
