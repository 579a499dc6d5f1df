"""The error hwcheck raises on purpose: one line that says what went wrong and what to do.

The command line prints ``str(error)`` and exits non-zero; it never shows a traceback for these.

>>> str(HwcheckError("hwcheck: no CUDA GPU visible (cupy: not installed)"))
'hwcheck: no CUDA GPU visible (cupy: not installed)'
"""

from warpsim.errors import WarpsimError

__all__ = ["HwcheckError"]


class HwcheckError(WarpsimError):
    """An expected failure of hwcheck: no CuPy, no GPU, a compile error, a bad argument, a failed write."""
