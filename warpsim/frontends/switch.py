"""The switch of a Python front end: while on, some methods of the user's library run on warpsim instead.

A :class:`Switch` holds a stack of settings (``simulate()`` blocks nest, the innermost decides; ``install()``
pushes one until ``uninstall()``), replaces the methods ``patches()`` names when the first is pushed, and puts the
originals back when the last is popped. The replacement methods read :meth:`Switch.active` for the settings.

Examples::

    s = Switch(lambda: [])
    s.active() is None
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

__all__ = ["Switch"]


class Switch:
    """``patches``: a function returning ``[(class, method name, new function)]`` (it imports the library, so it
    runs only when the switch is first turned on); ``check``: called before each push (e.g. the library's version
    check, raising a one-line error)."""

    def __init__(self, patches, check=None):
        self._patches = patches
        self._check = check
        self._lock = threading.Lock()
        self._stack = []
        self._saved = []

    def active(self):
        """The settings in force (a dict), or None when the switch is off."""
        return self._stack[-1] if self._stack else None

    def push(self, settings):
        if self._check is not None:
            self._check()
        with self._lock:
            if not self._stack:
                for cls, name, new in self._patches():
                    self._saved.append((cls, name, cls.__dict__[name]))
                    setattr(cls, name, new)
            self._stack.append(settings)
        return settings

    def pop(self, settings=None):
        """Pop ``settings`` (identity), or everything when None."""
        with self._lock:
            if settings is None:
                self._stack.clear()
            else:
                self._stack.remove(settings)
            if not self._stack:
                for cls, name, old in reversed(self._saved):
                    setattr(cls, name, old)
                self._saved.clear()

    @contextmanager
    def on(self, settings):
        """The switch on with ``settings`` inside the block."""
        self.push(settings)
        try:
            yield settings
        finally:
            self.pop(settings)
