"""``Program``: a per-thread kernel function and what it needs (threads, params, buffers, shared memory).

A program is written per thread, as a CuTe kernel is. ``fn(tid, **params, **buffers)`` receives
its thread id, the chosen params (keyword arguments) and one global-memory tensor per declared
input and output buffer (keyword arguments: row-major ``(shape, dtype)`` tensors on
``make_gmem_ptr``). Inside it, ``warpsim.program.copy``, ``gemm``, ``clear``, ``convert`` and
``syncthreads`` issue instructions. A program file is a ``.py`` path that defines
``program = warpsim.Program(...)``; ``load_program(path)`` loads it.

``threads``, ``inputs``, ``outputs`` and ``smem_bytes`` are values or functions of the params dict
(``lambda p: ...``), so one program can declare different buffers per param choice.

>>> def kernel(tid, *, n, x):
...     pass
>>> p = Program(kernel, threads=32, params={"n": (4, 8)}, inputs={"x": ((4, 8), "f16")})
>>> p.resolve_params({"n": "8"})
{'n': 8}
>>> [(b.name, b.shape, b.dtype, b.base, b.nbytes) for b in p.buffers({"n": 4})]
[('x', (4, 8), 'f16', 0, 64)]
>>> p.resolve_params({"m": 1})
Traceback (most recent call last):
...
ValueError: program kernel: unknown param 'm' (params: n)
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass

from warpsim.cute.numeric import DTYPES, dtype_bits
from warpsim.errors import ProgramError, WarpsimError

__all__ = ["Program", "Buffer", "load_program", "BUFFER_ALIGN"]

BUFFER_ALIGN = 256      # bytes: every global buffer starts at a multiple of this (as Machine.alloc_global)


@dataclass(frozen=True)
class Buffer:
    """One global-memory buffer of a program: ``role`` is ``"input"`` or ``"output"``; ``base`` its byte address."""

    name: str
    shape: tuple
    dtype: str
    role: str
    base: int
    nbytes: int


class Program:
    """A per-thread kernel ``fn`` for a CTA of ``threads`` threads (see the module docstring).

    ``params``: ``{name: choices}`` (a tuple or list of allowed values; the first is the default) or
    ``{name: type}`` (``int``, ``float`` or ``str``; then the param is required). ``inputs`` /
    ``outputs``: ``{name: (shape, dtype)}`` with dtype ``f16``, ``bf16``, ``u16``, ``f32`` or ``u32``.
    ``smem_bytes``: the CTA's shared memory. ``reference``: optional ``reference(params, inputs, arch)
    -> {output: expected raw bits}``, used by ``warpsim run`` to check the result. ``name``: for
    messages (default: ``fn.__name__``).
    """

    def __init__(self, fn, *, threads, params=None, inputs=None, outputs=None, smem_bytes=0,
                 reference=None, name=None):
        if not callable(fn):
            raise TypeError(f"Program: fn must be a function, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "program")
        self._threads = threads
        self.params = dict(params or {})
        for key, spec in self.params.items():
            if not (spec in (int, float, str) or (isinstance(spec, (tuple, list)) and len(spec) > 0)):
                raise TypeError(f"Program {self.name}: param {key!r} must be a non-empty tuple of choices or "
                                f"one of int, float, str, got {spec!r}")
        self._inputs = inputs or {}
        self._outputs = outputs or {}
        self._smem_bytes = smem_bytes
        self.reference = reference
        self._traces = {}

    def __repr__(self):
        return f"Program({self.name})"

    # -- params -----------------------------------------------------------------------------
    def resolve_params(self, given=None):
        """The full params dict: ``given`` (values or command-line strings) checked, defaults added.

        Raises ``ValueError`` naming the param and listing the choices.
        """
        given = dict(given or {})
        out = {}
        for key in given:
            if key not in self.params:
                valid = ", ".join(self.params) or "none"
                raise ValueError(f"program {self.name}: unknown param {key!r} (params: {valid})")
        for key, spec in self.params.items():
            if isinstance(spec, (tuple, list)):
                if key not in given:
                    out[key] = spec[0]
                    continue
                out[key] = _choose(self.name, key, given[key], spec)
            else:
                if key not in given:
                    raise ValueError(f"program {self.name}: param {key!r} ({spec.__name__}) is required")
                try:
                    out[key] = spec(given[key])
                except (TypeError, ValueError):
                    raise ValueError(f"program {self.name}: param {key}={given[key]!r} is not "
                                     f"a valid {spec.__name__}") from None
        return out

    # -- derived quantities ------------------------------------------------------------------
    def _value(self, what, value, params):
        return value(params) if callable(value) else value

    def threads(self, params):
        """Threads in the CTA for ``params``: a positive multiple of 32."""
        n = self._value("threads", self._threads, params)
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or n % 32:
            raise ValueError(f"program {self.name}: threads must be a positive multiple of 32, got {n!r}")
        from warpsim.machine import MAX_THREADS_PER_CTA   # imported when used: keeps `import warpsim` light
        if n > MAX_THREADS_PER_CTA:
            raise ValueError(f"program {self.name}: threads={n}: a CTA has at most {MAX_THREADS_PER_CTA} threads")
        return n

    def smem_bytes(self, params):
        """Bytes of shared memory of the CTA for ``params``."""
        n = self._value("smem_bytes", self._smem_bytes, params)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"program {self.name}: smem_bytes must be a non-negative int, got {n!r}")
        return n

    def buffers(self, params):
        """The global buffers for ``params``: inputs, then outputs, in declaration order, at 256-byte
        aligned bases (the order and alignment ``Machine.alloc_global`` uses)."""
        out, top = [], 0
        for role, decl in (("input", self._inputs), ("output", self._outputs)):
            decl = self._value(role, decl, params)
            if not isinstance(decl, dict):
                raise TypeError(f"program {self.name}: {role}s must be a dict {{name: (shape, dtype)}}, got {decl!r}")
            for name, spec in decl.items():
                shape, dtype = _buffer_spec(self.name, role, name, spec)
                if any(b.name == name for b in out):
                    raise ValueError(f"program {self.name}: buffer {name!r} is declared twice")
                nbytes = dtype_bits(dtype) // 8
                for extent in shape:
                    nbytes *= extent
                base = -(-top // BUFFER_ALIGN) * BUFFER_ALIGN
                out.append(Buffer(name, shape, dtype, role, base, nbytes))
                top = base + nbytes
        return out

    def trace(self, params=None, mode="vector"):
        """The traced program for ``params`` (a :class:`warpsim.program.trace_result.Trace`), cached per params and mode.

        The trace depends only on the params, never on input data.
        """
        from warpsim.program.trace import trace_program   # imported when used: keeps loading light
        params = self.resolve_params(params)
        key = self._trace_key(params, mode)
        trace = self._traces.get(key)
        if trace is None:
            trace = self._traces[key] = trace_program(self, params, mode=mode)
        return trace

    def is_traced(self, params=None, mode="vector"):
        """True when :meth:`trace` for ``params`` and ``mode`` would return a cached trace."""
        return self._trace_key(self.resolve_params(params), mode) in self._traces

    @staticmethod
    def _trace_key(params, mode):
        return tuple(sorted((k, repr(v)) for k, v in params.items())), mode


def _choose(program, key, value, choices):
    for choice in choices:
        if value == choice or (isinstance(value, str) and value == str(choice)):
            return choice
    listed = ", ".join(str(c) for c in choices)
    raise ValueError(f"program {program}: param {key}={value!r} is not one of the choices: {listed}")


def _buffer_spec(program, role, name, spec):
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"program {program}: {role} name {name!r} must be a Python identifier")
    try:
        shape, dtype = spec
    except (TypeError, ValueError):
        raise ValueError(f"program {program}: {role} {name!r} must be (shape, dtype), got {spec!r}") from None
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape or any(isinstance(e, bool) or not isinstance(e, int) or e <= 0 for e in shape):
        raise ValueError(f"program {program}: {role} {name!r} needs a shape of positive ints, got {shape!r}")
    if dtype not in DTYPES:
        raise ValueError(f"program {program}: {role} {name!r} has dtype {dtype!r}; expected one of "
                         f"{', '.join(DTYPES)}")
    return shape, dtype


def load_program(path):
    """The ``program`` a ``.py`` file defines (a :class:`Program`).

    Raises ``ProgramError`` when the file is missing or defines no ``program``.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ProgramError(f"load_program: {path} is a directory, not a program file (.py)")
    if not os.path.isfile(path):
        raise ProgramError(f"load_program: no such program file: {path}")
    name = "warpsim_program_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ProgramError(f"load_program: {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except WarpsimError:
        sys.modules.pop(name, None)
        raise
    except (Exception, SystemExit) as e:           # a broken program file: one line naming where
        sys.modules.pop(name, None)
        line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) else None
        tb = e.__traceback__
        while tb is not None:
            if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(path):
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f"{path}:{line}" if line else path
        if isinstance(e, SystemExit):
            raise ProgramError(f"load_program: {where}: the program file exited while loading "
                               f"(sys.exit({e.code!r}))") from e
        raise ProgramError(f"load_program: {where}: {type(e).__name__}: {e}") from e
    program = getattr(module, "program", None)
    if not isinstance(program, Program):
        raise ProgramError(f"load_program: {path} must define `program = warpsim.Program(...)`, "
                           f"found {type(program).__name__ if program is not None else 'nothing'}")
    return program
