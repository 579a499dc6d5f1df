"""Element-wise arithmetic on f32 register tensors in a traced program: ``acc[i] = acc[i] * scale``.

CuTe C++ writes a kernel's softmax element by element (``acc_s(i) = exp2f(acc_s(i) * scale - m)``);
a traced program writes the same with ``t[i]`` on f32 register tensors:

- ``t[i]`` (or ``t(i)``, a coordinate too) of an f32 register tensor is a :class:`Value`, the
  element's register; ``+ - * /``, unary ``-``, :func:`fma`, :func:`fmax`, :func:`exp2`,
  :func:`log2`, comparisons (``== != < <= > >=`` and :func:`equ`) and :func:`where` combine values
  and Python numbers (rounded to f32 once, by numpy) into an expression;
- ``t[i] = expression`` computes the expression then, one PTX instruction per operation
  (:mod:`warpsim.isa.alu32`), the last one writing the element's register; intermediate results
  use a few expression registers of the thread. An expression is computed each time it is assigned:
  keep a value needed many times in a register tensor (``neg_m[r] = -(m[r] * scale)``).

Instructions: ``+`` ``add.rn.f32``, ``-`` ``sub.rn.f32``, ``*`` ``mul.rn.f32``, ``/`` ``div.rn.f32``,
unary ``-`` ``neg.f32``, ``fma`` ``fma.rn.f32``, ``fmax`` ``max.f32``, ``exp2``
``ex2.approx.ftz.f32``, ``log2`` ``lg2.approx.ftz.f32``, a comparison ``set.{cmp}.s32.f32``
(a mask: all ones where it holds), ``where(mask, a, b)`` ``slct.b32.s32``, a number ``mov.b32``;
a condition known when tracing (``col < n`` with ``col`` from an identity tensor: a bool per lane)
becomes a mask by ``mov.b32`` of one value per lane. ``shfl_xor(v, k)`` (CUDA's ``__shfl_xor_sync``)
is ``shfl.sync.bfly.b32``.

Tensor helpers, as FlashAttention's CuTe code names them: :func:`reduce_max` / :func:`reduce_sum`
fold a mode of a rank-2 tensor into a summary tensor, element by element in the tensor's order,
starting from the summary's value; :func:`allreduce` reduces each element over the ``width`` lanes
of a group with ``shfl.sync.bfly`` (offsets ``width / 2, ..., 1``).

>>> from warpsim.program.program import Program
>>> from warpsim.cute import make_tensor
>>> def kernel(tid):
...     acc = make_tensor("f32", (2,))
...     acc[0] = fma(acc[0], 2.0, acc[1])
...     acc[1] = fmax(acc[1], acc[0] * 0.5)
>>> [(i.ptx, i.dst, i.src) for i in Program(kernel, threads=32).trace().stream]
[('mov.b32', (2,), ()), ('fma.rn.f32', (0,), (0, 2, 1)), ('mov.b32', (2,), ()), ('mul.rn.f32', (2,), (0, 2)), ('max.f32', (1,), (1, 2))]
"""

from __future__ import annotations

import operator

import numpy as np

from warpsim.cute.integers import brief
from warpsim.cute.layout import rank, size
from warpsim.cute.tensor import Tensor
from warpsim.errors import ProgramError
from warpsim.isa.alu32 import SET_COMPARISONS
from warpsim.program.instr import Op

__all__ = ["Value", "Mask", "fma", "fmax", "exp2", "log2", "equ", "where", "shfl_xor", "allreduce", "reduce_max",
           "reduce_sum", "EXPRESSION_REGISTERS", "register_element", "store_register_element"]

EXPRESSION_REGISTERS = 8        # registers of a thread for intermediate results of expressions


class Value:
    """An f32 expression, one value per lane: a register, a number, or an operation on values."""

    __slots__ = ("kind", "form", "args")

    def __init__(self, kind, form, args):
        self.kind = kind          # "reg" (args: register), "const" (bits), "lanes" (int64[width]), "alu", "shfl"
        self.form = form          # alu: the PTX form; shfl: the lane offset
        self.args = args

    def __repr__(self):
        if self.kind == "reg":
            return f"Value(r{self.args})"
        if self.kind == "const":
            return f"Value({np.uint32(self.args).view(np.float32)!r})"
        return f"Value({self.form} ...)"

    def __add__(self, other):
        return _alu("add.rn.f32", self, other)

    def __radd__(self, other):
        return _alu("add.rn.f32", other, self)

    def __sub__(self, other):
        return _alu("sub.rn.f32", self, other)

    def __rsub__(self, other):
        return _alu("sub.rn.f32", other, self)

    def __mul__(self, other):
        return _alu("mul.rn.f32", self, other)

    def __rmul__(self, other):
        return _alu("mul.rn.f32", other, self)

    def __truediv__(self, other):
        return _alu("div.rn.f32", self, other)

    def __rtruediv__(self, other):
        return _alu("div.rn.f32", other, self)

    def __neg__(self):
        return _alu("neg.f32", self)

    def __eq__(self, other):
        return _compare("eq", self, other)

    def __ne__(self, other):
        return _compare("ne", self, other)

    def __lt__(self, other):
        return _compare("lt", self, other)

    def __le__(self, other):
        return _compare("le", self, other)

    def __gt__(self, other):
        return _compare("gt", self, other)

    def __ge__(self, other):
        return _compare("ge", self, other)

    __hash__ = None

    def __bool__(self):
        raise ProgramError("a register value has no truth value while tracing (its bits exist only when the "
                           "program runs): select with where(mask, a, b)")


class Mask(Value):
    """A comparison's result per lane: all ones where it holds, else 0 (``set.{cmp}.s32.f32``); only
    :func:`where` takes it."""

    __slots__ = ()


def _value(x, what="an operand"):
    if isinstance(x, Value):
        if isinstance(x, Mask):
            raise ProgramError(f"{what}: a comparison's mask is not a number; use it in where(mask, a, b)")
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.floating, np.integer)):
        raise ProgramError(f"{what}: expected a register value or a number, got {type(x).__name__} {brief(x)}")
    return Value("const", None, int(np.float32(x).view(np.uint32)))


def _alu(form, *operands):
    return Value("alu", form, tuple(_value(x, form) for x in operands))


def _compare(cmp, a, b):
    return Mask("alu", f"set.{cmp}.s32.f32", (_value(a, cmp), _value(b, cmp)))


def fma(a, b, c):
    """``a * b + c`` rounded once: ``fma.rn.f32``."""
    return _alu("fma.rn.f32", a, b, c)


def fmax(a, b):
    """The larger of ``a`` and ``b`` (a NaN operand gives the other one): ``max.f32``."""
    return _alu("max.f32", a, b)


def exp2(a):
    """``2 ** a``, approximated by the MUFU: ``ex2.approx.ftz.f32``."""
    return _alu("ex2.approx.ftz.f32", a)


def log2(a):
    """``log2(a)``, approximated by the MUFU: ``lg2.approx.ftz.f32``."""
    return _alu("lg2.approx.ftz.f32", a)


def equ(a, b):
    """The mask of ``a == b`` or either operand NaN (PTX ``.equ``): ``set.equ.s32.f32``."""
    return _compare("equ", a, b)


def where(mask, a, b):
    """``a`` in the lanes where ``mask`` holds, else ``b``: ``slct.b32.s32 d, b, a, mask``.

    ``mask``: a comparison's :class:`Mask`, or a condition known when tracing (a bool, or a bool per
    lane such as ``col < n``), which becomes a mask register by one ``mov.b32`` per lane (the same
    instructions whatever its values, so that every lane traces the same stream).
    """
    if not isinstance(mask, Mask):
        if isinstance(mask, Value):
            raise ProgramError("where: the mask must be a comparison (a < b, equ(a, b)) or a condition known "
                               "when tracing, not a number")
        values = np.asarray(mask)
        if values.dtype != np.bool_:
            raise ProgramError(f"where: the condition must be a bool per lane, got {values.dtype} {brief(mask)}")
        mask = Mask("lanes", None, np.where(values, -1, 0).astype(np.int64).reshape(-1))
    return Value("alu", "slct.b32.s32", (_value(b, "where"), _value(a, "where"), mask))


def shfl_xor(v, offset):
    """Lane ``l`` gets ``v`` of lane ``l ^ offset`` (CUDA ``__shfl_xor_sync``): ``shfl.sync.bfly.b32``."""
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or not 0 < offset < 32:
        raise ProgramError(f"shfl_xor: the lane offset must be an int in 1..31, got {offset!r}")
    return Value("shfl", int(offset), (_value(v, "shfl_xor"),))


# -- computing an expression into a register ------------------------------------------------------
class _Registers:
    """The tracer's expression registers, handed out and back in stack order."""

    def __init__(self, tracer):
        base = tracer.expression_registers(EXPRESSION_REGISTERS)
        self.free = list(range(base + EXPRESSION_REGISTERS - 1, base - 1, -1))

    def take(self, line):
        if not self.free:
            raise ProgramError(f"an expression at {line} needs more than {EXPRESSION_REGISTERS} registers for "
                               f"intermediate results: assign parts of it to register tensor elements first")
        return self.free.pop()

    def give(self, reg):
        self.free.append(reg)


def _compute(tracer, regs, node, dst, line):
    """Emit ``node``'s instructions; returns ``(register holding it, whether it is an expression register)``.

    ``dst``: the register the result must land in, or None (a leaf register is then used in place).
    """
    kind = node.kind
    if kind == "reg":
        if dst is None or dst == node.args:
            return node.args, False
        tracer.emit(Op.ALU, dst=(dst,), src=(node.args,), form="mov.b32", line=line)
        return dst, False
    if kind in ("const", "lanes"):
        d = regs.take(line) if dst is None else dst
        if kind == "const":
            tracer.emit(Op.MOV, dst=(d,), imm=node.args, line=line)
        else:
            values = node.args
            if values.shape != (tracer.width,):
                raise ProgramError(f"where at {line}: the condition holds {values.size} values, but "
                                   f"{tracer.width} lanes are traced")
            tracer.emit(Op.MOVL, dst=(d,), addr=values, line=line)
        return d, dst is None
    sources = []
    for child in node.args:
        sources.append(_compute(tracer, regs, child, None, line))
    for reg, temporary in reversed(sources):
        if temporary:
            regs.give(reg)
    d = regs.take(line) if dst is None else dst
    if kind == "shfl":
        tracer.emit(Op.SHFL, dst=(d,), src=(sources[0][0],), imm=node.form, line=line)
    else:
        tracer.emit(Op.ALU, dst=(d,), src=tuple(r for r, _ in sources), form=node.form, line=line)
    return d, dst is None


def _element_register(tracer, t, key, what):
    if t.dtype != "f32":
        raise ProgramError(f"{what}: element-wise arithmetic works on f32 register tensors, this one holds "
                           f"{t.dtype} (convert f32 results with convert(src, dst))")
    try:
        slot = t.address(key)
    except (TypeError, ValueError, IndexError) as e:
        raise ProgramError(f"{what}: {e}") from None
    slots = np.unique(np.asarray(slot, np.int64))
    if slots.size != 1:
        raise ProgramError(f"{what}: lanes address different registers {brief(slots)} (a register index must be "
                           f"the same in every lane)")
    return tracer.register_base(t.engine) + int(slots[0])


def register_element(tracer, t, key):
    """``t[key]`` of a register tensor while tracing: the element's register as a :class:`Value`."""
    return Value("reg", None, _element_register(tracer, t, key, f"register element {brief(key, 4)}"))


def store_register_element(tracer, t, key, value):
    """``t[key] = value`` of a register tensor while tracing: compute ``value`` into the element's register."""
    line = tracer.source_line()
    what = f"register element {brief(key, 4)} = ..." + (f" at {line}" if line else "")
    dst = _element_register(tracer, t, key, what)
    _compute(tracer, tracer.expression_register_pool(_Registers), _value(value, what), dst, line)


# -- tensor helpers --------------------------------------------------------------------------------
def _rank2(t, what):
    if not isinstance(t, Tensor) or t.space != "rmem" or rank(t.layout) != 2:
        raise ProgramError(f"{what}: expected a rank-2 f32 register tensor (rows, columns), got {t!r}")


def _reduce(t, summary, op, what, mode, init):
    _rank2(t, what)
    if mode not in (0, 1):
        raise ProgramError(f"{what}: mode must be 0 or 1, got {mode!r}")
    keep = 1 - mode
    n_keep, n_fold = int(size(t, keep)), int(size(t, mode))
    if int(size(summary)) != n_keep:
        raise ProgramError(f"{what}: the summary holds {int(size(summary))} elements, the tensor has {n_keep} "
                           f"along mode {keep}")
    if init is not None and int(size(init)) != n_keep:
        raise ProgramError(f"{what}: init holds {int(size(init))} elements, the tensor has {n_keep} along mode {keep}")
    for r in range(n_keep):
        acc = summary[r] if init is None else init[r]
        for c in range(n_fold):
            acc = op(acc, t[(r, c) if mode == 1 else (c, r)])
        summary[r] = acc


def reduce_max(t, summary, mode=1, init=None):
    """``summary[r] = max(summary[r], t[r, 0], t[r, 1], ...)`` (``max.f32`` in that order; ``mode=0``:
    over ``t[0, r], t[1, r], ...``; ``init``: a tensor to start from instead of ``summary``).
    Thread-local: combine lanes with :func:`allreduce`."""
    _reduce(t, summary, fmax, "reduce_max", mode, init)


def reduce_sum(t, summary, mode=1, init=None):
    """``summary[r] = summary[r] + t[r, 0] + t[r, 1] + ...`` (``add.rn.f32`` in that order; ``mode`` and
    ``init`` as :func:`reduce_max`). Thread-local."""
    _reduce(t, summary, operator.add, "reduce_sum", mode, init)


def allreduce(t, op, width=4):
    """Each element of ``t`` combined over each group of ``width`` lanes (a power of two, 2..32):
    ``t[i] = op(t[i], shfl_xor(t[i], k))`` for ``k = width / 2, ..., 1``, element by element (``op``: :func:`fmax` or
    ``operator.add``). With ``width=4`` the lanes of a quad, which hold one row of an mma fragment."""
    if width not in (2, 4, 8, 16, 32):
        raise ProgramError(f"allreduce: width must be a power of two in 2..32, got {width!r}")
    for i in range(int(size(t))):
        k = width // 2
        while k >= 1:
            t[i] = op(t[i], shfl_xor(t[i], k))
            k //= 2
