"""The float instructions' scalar functions, found by walking their modules: one entry per (opcode, type).

Every scalar model in ``fparith``, ``fpcompare`` and ``fp64`` is an ``@njit`` function named ``{type}_{op}``
(``f32_fma``, ``f16x2_min``, ``bf16_setp``, ``f64_fma`` ...) taking register bits first, then its modifiers as
ints/bools in a fixed order. ``FLOAT_OPS`` maps ``(op, type)`` to a :class:`FloatOp` that records the
function and its parameter names, so that a dispatcher (the PTX interpreter) can check a decoded
instruction's modifiers against what the model takes, and call it as
``op.function(*sources, *modifiers)``. Modifier names: ``rnd`` (a ``rounding`` code), ``ftz``, ``sat``,
``relu``, ``nan_mode`` (``.NaN``), ``xorsign_abs``, ``cmp`` (an ``fpcompare.CMP`` code), ``cls`` (a
``fpcompare.TESTP`` code), ``as_float`` (``set``'s destination: 1.0/0.0 rather than all ones/zero).
The conversions are in ``cvt`` (``cvt_float``, ``cvt_float_to_int``, ``cvt_int_to_float``,
``cvt_round_int``, ``cvt_pack_x2``), whose parameters name source and destination formats.
The 16-bit MUFU approximations of ``mufu16`` (``f16_ex2_approx``, ``bf16x2_ex2_approx_ftz``,
``f16x2_tanh_approx`` ...) take no modifier parameters: the modifiers their PTX form must carry are
in ``FloatOp.implied`` (``("approx",)`` or ``("approx", "ftz")``), part of the function's name.

>>> op = FLOAT_OPS[("fma", "f16x2")]
>>> op.sources, op.modifiers
(('a', 'b', 'c'), ('rnd', 'ftz', 'sat', 'relu'))
>>> FLOAT_OPS[("min", "f32")].modifiers
('ftz', 'nan_mode', 'xorsign_abs')
>>> hex(FLOAT_OPS[("add", "f32")].function(0x3F800000, 0x3F800000, 0, False, False))
'0x40000000'
>>> FLOAT_OPS[("fma", "f64")].modifiers, FLOAT_OPS[("abs", "f64")].modifiers
(('rnd',), ())
>>> op = FLOAT_OPS[("ex2", "bf16x2")]
>>> op.sources, op.modifiers, op.implied
(('a',), (), ('approx', 'ftz'))
"""

import inspect
import re
from dataclasses import dataclass

from warpsim.isa import fp64, fparith, fpcompare, mufu16

__all__ = ["FloatOp", "FLOAT_OPS", "SOURCE_NAMES", "MODIFIER_NAMES"]

SOURCE_NAMES = ("a", "b", "c")   # parameters holding register bits; the rest are modifiers
MODIFIER_NAMES = ("rnd", "ftz", "sat", "relu", "nan_mode", "xorsign_abs", "cmp", "cls", "as_float")
_NAME = re.compile(r"^(f64|f32|f16|bf16|f16x2|bf16x2)_([a-z0-9]+?)((?:_approx)?(?:_ftz)?)$")


@dataclass(frozen=True)
class FloatOp:
    """One scalar model: PTX opcode, type, the ``@njit`` function, its source and modifier parameters."""

    op: str
    type: str
    function: object
    sources: tuple
    modifiers: tuple
    implied: tuple = ()   # modifiers the PTX form must carry, fixed by the function (``approx``, ``ftz``)


def _walk():
    ops = {}
    for module in (fparith, fpcompare, mufu16, fp64):
        for name in module.__all__:
            match = _NAME.match(name)
            if match is None:
                continue
            fn = getattr(module, name)
            params = tuple(inspect.signature(fn.py_func).parameters)
            sources = tuple(p for p in params if p in SOURCE_NAMES)
            implied = tuple(match.group(3).split("_")[1:])
            ops[(match.group(2), match.group(1))] = FloatOp(match.group(2), match.group(1), fn, sources,
                                                            params[len(sources):], implied)
    return ops


FLOAT_OPS = _walk()
