"""A tiny DSL that writes one oracle case in two languages: CuTe C++ and warpsim Python.

Values: a plain ``int`` is static (C++ ``Int<N>{}``), :class:`D` is dynamic (C++ ``int(N)``,
Python ``DInt(N)``), a ``tuple`` is a CuTe tuple, :data:`U` is ``_``, and :class:`X` is any
expression already rendered in both languages. ``fn("name", *args)`` calls a function of the
same name in both languages; ``tfn`` handles CuTe's template arguments.

>>> e = fn("composition", L((4, 8)), (2, L(4, 2)))
>>> e.cpp
'composition(make_layout(make_tuple(Int<4>{}, Int<8>{})), make_tuple(Int<2>{}, make_layout(Int<4>{}, Int<2>{})))'
>>> e.py
'composition(make_layout((4, 8)), (2, make_layout(4, 2)))'
"""

__all__ = ["X", "D", "U", "c", "p", "L", "fn", "tfn", "call", "sw", "BITS_TYPE"]


class X:
    """An expression rendered for C++ (``cpp``) and for Python (``py``)."""

    __slots__ = ("cpp", "py")

    def __init__(self, cpp, py):
        self.cpp, self.py = cpp, py

    def __repr__(self):
        return f"X({self.cpp!r}, {self.py!r})"


class D(int):
    """A dynamic integer literal."""


class _Underscore:
    pass


U = _Underscore()

# C++ element types for recast_layout, by bit width.
BITS_TYPE = {1: "uint1b_t", 8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}


def c(v):
    """C++ text of a value."""
    if isinstance(v, X):
        return v.cpp
    if v is U:
        return "_"
    if isinstance(v, D):
        return f"int({int(v)})"
    if isinstance(v, bool):
        raise TypeError(f"no bools in cases: {v!r}")
    if isinstance(v, int):
        return f"Int<{v}>{{}}"
    if isinstance(v, tuple):
        return "make_tuple(" + ", ".join(c(e) for e in v) + ")"
    raise TypeError(f"cannot render {v!r}")


def p(v):
    """Python text of a value."""
    if isinstance(v, X):
        return v.py
    if v is U:
        return "_"
    if isinstance(v, D):
        return f"DInt({int(v)})"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, tuple):
        inner = ", ".join(p(e) for e in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    raise TypeError(f"cannot render {v!r}")


def L(shape, stride=None):
    """``make_layout(shape[, stride])``."""
    if stride is None:
        return X(f"make_layout({c(shape)})", f"make_layout({p(shape)})")
    return X(f"make_layout({c(shape)}, {c(stride)})", f"make_layout({p(shape)}, {p(stride)})")


def fn(name, *args, py=None):
    """``name(args...)`` in both languages (``py`` renames the Python function)."""
    return X(f"{name}({', '.join(c(a) for a in args)})", f"{py or name}({', '.join(p(a) for a in args)})")


def tfn(name, targs, args, py_args):
    """``name<targs...>(args...)`` in C++ and ``name(py_args...)`` in Python (strings are kept verbatim)."""
    cpp = f"{name}<{', '.join(str(t) for t in targs)}>({', '.join(c(a) for a in args)})"
    pys = ", ".join(a if isinstance(a, str) else p(a) for a in py_args)
    return X(cpp, f"{name}({pys})")


def call(obj, *args):
    """``obj(args...)``: evaluate or slice a layout."""
    return X(f"{c(obj)}({', '.join(c(a) for a in args)})", f"{p(obj)}({', '.join(p(a) for a in args)})")


def sw(b, m, s):
    """``Swizzle<B,M,S>{}``."""
    return X(f"Swizzle<{b},{m},{s}>{{}}", f"Swizzle({b}, {m}, {s})")
