"""Source files to PTX, without a GPU: which front end compiles a file, by its suffix and content.

``compile_source(path, arch="sm_80")`` returns a :class:`~warpsim.frontends.compiled.Compiled`: the PTX
text (one module per text) and the file it came from. The kind of a file is told by :func:`source_kind`:

- ``.ptx``: read as is;
- ``.cu`` (``.cuh``, ``.cpp``, ... given explicitly): :mod:`warpsim.frontends.nvcc`;
- ``.py`` that assigns a module-level ``WARPSIM``: :mod:`warpsim.frontends.cute_dsl`. A ``.py`` without
  it is a warpsim Python program, which no front end here handles.

A new front end (Triton, Numba) is a sibling module that returns PTX texts, and a kind here.

Examples::

    source_kind("k.cu") == "cuda"
    source_kind("k.ptx") == "ptx"
"""

from __future__ import annotations

from pathlib import Path

from warpsim.frontends.compiled import CompileError, Compiled, normalize_arch
from warpsim.frontends.cute_dsl import compile_dsl, is_dsl_source
from warpsim.frontends.nvcc import CUDA_SUFFIXES, compile_cuda
from warpsim.ptx.syntax import read_ptx

__all__ = ["source_kind", "compile_source"]


def source_kind(path):
    """``"ptx"``, ``"cuda"``, ``"dsl"`` or ``"program"`` (a warpsim Python program) by suffix and content."""
    suffix = Path(path).suffix.lower()
    if suffix == ".ptx":
        return "ptx"
    if suffix in CUDA_SUFFIXES:
        return "cuda"
    if suffix == ".py":
        return "dsl" if is_dsl_source(path) else "program"
    raise ValueError(f"{path}: not a .cu, .ptx or CuTe DSL .py file")


def compile_source(path, arch="sm_80", nvcc_flags=(), cache=True):
    """Compile ``path`` (``.ptx``, ``.cu``, CuTe DSL ``.py``) to PTX for ``arch``; see the module doc."""
    path = Path(path)
    arch = normalize_arch(arch)
    if not path.is_file():
        raise CompileError(f"{path}: no such file")
    kind = source_kind(path)
    if kind == "ptx":
        return Compiled((read_ptx(path, path.name),), path, kind, arch)
    if kind == "cuda":
        return Compiled((compile_cuda(path, arch, nvcc_flags, cache),), path, kind, arch)
    if kind == "dsl":
        return Compiled(tuple(compile_dsl(path, arch, cache)), path, kind, arch)
    raise CompileError(f"{path}: a warpsim Python program, not a CuTe DSL file "
                       "(a DSL file assigns a module-level WARPSIM; see warpsim.frontends.cute_dsl)")
