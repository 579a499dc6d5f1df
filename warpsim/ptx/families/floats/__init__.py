"""The float family: every float-typed instruction (arithmetic, min/max, sign, ``setp``/``set``/``testp``, ``cvt`` with
a float type, the MUFU approximations), decoded against :mod:`warpsim.isa`'s models and executed through them.

Three modules, one family: :mod:`~warpsim.ptx.families.floats.decode` (the modifiers each isa model takes),
:mod:`~warpsim.ptx.families.floats.fpu` (one thread: ``float_result``, ``thread_float``),
:mod:`~warpsim.ptx.families.floats.warp` (a warp at once: ``warp_float``, ``warp_float_rows``, the hoisted f32 forms).
"""

from warpsim.ptx.families.floats.decode import FloatDecoder
from warpsim.ptx.families.floats.fpu import thread_float
from warpsim.ptx.families.floats.warp import warp_float_rows

__all__ = ["FloatDecoder", "DECODER", "thread_float", "warp_float_rows"]

DECODER = FloatDecoder
