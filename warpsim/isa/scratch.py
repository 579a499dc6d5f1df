"""Memory without an owner in ``@njit`` kernels: scratch arrays on the stack (``stack_array(count, dtype)``) and
functions that borrow their arrays (``@njit_borrowing``).

A kernel's small temporary tables (decoded operands, per-column maxima and sums) cost a heap
allocation each when made with ``np.empty``, and LLVM cannot tell a heap array from the kernel's
arguments: it must assume they may overlap, so it keeps every accumulator in memory and guards
each vectorised loop with run-time overlap checks. An array on the stack (an LLVM ``alloca`` in
the function's entry block) is known to overlap nothing else; LLVM then keeps small ones in
vector registers across a loop.

Contract: ``stack_array(count, dtype)`` inside ``@njit`` code, ``count`` an integer literal
(a constant written in the source, or a module-level integer), gives a 1-d C-contiguous array of
``count`` elements of ``dtype``, uninitialised, that lives as long as the function that compiles
it (the innermost function not inlined into its caller). Pre-conditions: the array never leaves
that function (not returned, not stored in another array or object) and ``count * itemsize``
stays small (a few KB: it is stack space). The array has no owner: numba's reference counting
ignores it.

>>> import numpy as np
>>> from numba import njit
>>> @njit
... def squares():
...     x = stack_array(4, np.int32)
...     for i in range(4):
...         x[i] = i * i
...     return x.sum(), x.size
>>> squares() == (14, 4)
True

``@njit_borrowing`` compiles a function as ``@njit(cache=True)`` does, but without Numba's reference counting: its
array arguments are borrowed from the caller, never counted. Numba counts every array a compiled function receives
(an atomic increment on entry, a decrement on return, per array, a tuple of arrays counting each), about 4.5 ns an
array on this project's hosts: a call of the interpreter's family functions, a dozen arrays each, cost more than the
arithmetic of a warp instruction. Contract: the function, and everything it calls, allocates nothing (no
``np.empty``/``np.zeros``, no array returned or kept); Numba refuses to compile one that does ("Only accept
returning of array passed into the function as argument", or a missing ``NRT_*`` symbol), so a breach is a compile
error, never a leak. Scratch space comes from ``stack_array``.

>>> @njit_borrowing(cache=False)
... def total(x, y):
...     return x.sum() + y.sum()
>>> int(total(np.arange(4), np.ones(3, np.int64)))
9
"""

from numba import njit, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["stack_array", "njit_borrowing"]


def njit_borrowing(fn=None, *, cache=True):
    """``@njit(cache=True)`` without reference counting (the module docstring's contract); ``@njit_borrowing(cache=
    False)`` for a function that has no file to cache beside (a doctest's)."""
    if fn is None:
        return lambda f: njit_borrowing(f, cache=cache)
    return njit(cache=cache, _nrt=False)(fn)


@intrinsic(prefer_literal=True)
def stack_array(typingctx, count, dtype):
    """A 1-d array of ``count`` (an integer literal) uninitialised ``dtype`` values on the stack."""
    if not isinstance(count, types.IntegerLiteral) or count.literal_value <= 0:
        raise TypingError(f"stack_array: count must be a positive integer literal, got {count}")
    if isinstance(dtype, types.NumberClass):
        elt = dtype.instance_type
    elif isinstance(dtype, types.DType):
        elt = dtype.dtype
    else:
        raise TypingError(f"stack_array: dtype must be a numpy number type, got {dtype}")
    array_type = types.Array(elt, 1, "C")
    size = count.literal_value

    def codegen(context, builder, signature, args):
        data_type = context.get_data_type(elt)
        intp = lambda v: context.get_constant(types.intp, v)   # noqa: E731
        data = cgutils.alloca_once(builder, data_type, size=intp(size))   # in the entry block
        itemsize = context.get_abi_sizeof(data_type)
        array = make_array(array_type)(context, builder)
        populate_array(array, data=data, shape=[intp(size)], strides=[intp(itemsize)],
                       itemsize=intp(itemsize), meminfo=None)
        return array._getvalue()

    return array_type(count, dtype), codegen
