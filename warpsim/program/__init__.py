"""Programs: CuTe-style kernels written per thread in Python, traced to warp instruction streams, lowered to PTX
and run on the PTX core.

- :class:`Program`, :func:`load_program` (:mod:`warpsim.program.program`);
- what a program calls: :func:`copy`, :func:`copy_if`, :func:`gemm`, :func:`clear`, :func:`convert`,
  :func:`syncthreads` (:mod:`warpsim.program.ops`); element-wise arithmetic on f32 register tensors
  (``acc[i] = acc[i] * scale``, :func:`fma`, :func:`exp2`, :func:`where`, :func:`allreduce` ...:
  :mod:`warpsim.program.arith`);
- :func:`run_program` -> :class:`Result` (:mod:`warpsim.program.run`);
- the stream format :mod:`warpsim.program.instr`, tracing :mod:`~warpsim.program.trace` (with the lane
  vector :mod:`~warpsim.program.lanes`, frame capture :mod:`~warpsim.program.frames`, register
  allocation and slots :mod:`~warpsim.program.registers`, thread-mode zipping
  :mod:`~warpsim.program.zipping` and the result :mod:`~warpsim.program.trace_result`), the schedule
  :mod:`~warpsim.program.schedule`, the lowering to PTX :mod:`~warpsim.program.lower`, static checks
  :mod:`~warpsim.program.checks`, the arithmetic-model reference :mod:`~warpsim.program.reference`; the
  stream executor :mod:`~warpsim.program.execute` (with its encoding :mod:`~warpsim.program.encode`) is the
  reference the PTX core is benchmarked and tested against.

The operations and the runner import the CuTe layer and Numba; they load on first use, so
``import warpsim`` stays light.
"""

from warpsim.program.program import Buffer, Program, load_program

_ARITH = ("fma", "fmax", "exp2", "log2", "equ", "where", "shfl_xor", "allreduce", "reduce_max", "reduce_sum")

__all__ = ["Program", "Buffer", "load_program", "copy", "copy_if", "gemm", "clear", "convert", "syncthreads",
           "run_program", "Result", *_ARITH]

_LAZY = {"copy": "ops", "copy_if": "ops", "gemm": "ops", "clear": "ops", "convert": "ops", "syncthreads": "ops",
         "run_program": "run", "Result": "run", **{name: "arith" for name in _ARITH}}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'warpsim.program' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"warpsim.program.{module}"), name)
