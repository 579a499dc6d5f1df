"""Numba compiles each of warpsim's ``@njit`` functions once per argument *type*, not once per constant value.

Called from other jitted code with a constant argument (``set_fault(fault, 21, ...)``,
``fp_fma(a, b, c, 1, 8, 23, 0, True)``), Numba types that argument as ``Literal[int](21)`` and compiles
a separate specialisation of the callee for every distinct constant it is ever called with. warpsim's
kernels call their helpers with many constants (fault codes, exponent and fraction widths, flags), so a
first launch compiled 509 specialisations of 265 functions where 289 serve: on a cold cache, 125 s of
a two-core machine where 95 s do. Nothing is lost by typing the constants plainly: LLVM still folds
them once it has inlined the callee (``bench/bench_ptx.py`` and ``bench/bench_float.py`` give the same
figures either way), and no warpsim function needs a literal argument to type.

Contract: after :func:`install`, a call from jitted code to a dispatcher whose Python function lives in
a ``warpsim.`` module is typed with :func:`numba.core.types.unliteral` argument types; every other
dispatcher (the user's own ``@njit`` code, numba's) is typed exactly as before. Installing twice is
harmless. On a Numba whose dispatcher type lacks the hook, nothing is changed (only compile time is
at stake, never a result). ``WARPSIM_NUMBA_LITERALS=1`` in the environment leaves Numba's own typing
in place: the baseline of ``bench/bench_compile.py``.
"""

import os

from numba.core import types
from numba.core.types import functions

_HOOK = "_warpsim_unliteral"


def _is_ours(dispatcher_type):
    py_func = getattr(dispatcher_type.dispatcher, "py_func", None)
    return getattr(py_func, "__module__", "").startswith("warpsim.")


def install():
    """Type warpsim's own jitted callees with plain (non-literal) argument types; see the module's contract."""
    if os.environ.get("WARPSIM_NUMBA_LITERALS") == "1":
        return
    cls = getattr(functions, "Dispatcher", None)
    original = getattr(cls, "get_call_type", None)
    if original is None or getattr(original, _HOOK, False):
        return

    def get_call_type(self, context, args, kws):
        if _is_ours(self):
            args = tuple(types.unliteral(a) for a in args)
            kws = {k: types.unliteral(v) for k, v in kws.items()}
        return original(self, context, args, kws)

    setattr(get_call_type, _HOOK, True)
    get_call_type.__doc__ = original.__doc__
    cls.get_call_type = get_call_type
