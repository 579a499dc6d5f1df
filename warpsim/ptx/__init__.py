"""PTX programs: parse a PTX module and run its kernels on the simulated CTA, bit for bit.

The pipeline (see docs/ptx.md): :mod:`~warpsim.ptx.syntax` parses text into a tree,
:mod:`~warpsim.ptx.decode` turns a kernel into integer arrays once, :mod:`~warpsim.ptx.interp`
interprets them in ``@njit`` code with a program counter per thread on the same
:class:`~warpsim.machine.Machine` and the same ISA kernels (``warp_mma``, ``warp_ldmatrix``, cvt)
as the Python-traced programs, and :mod:`~warpsim.ptx.launch` packs arguments and runs the grid.

>>> import numpy as np
>>> mod = load('''
... .version 8.0
... .target sm_80
... .address_size 64
... .visible .entry twice(.param .u64 out)
... {
...   .reg .b32 %r<3>; .reg .b64 %rd<4>;
...   ld.param.u64 %rd1, [out];
...   cvta.to.global.u64 %rd2, %rd1;
...   mov.u32 %r1, %tid.x;
...   shl.b32 %r2, %r1, 1;
...   mul.wide.u32 %rd3, %r1, 4;
...   add.s64 %rd2, %rd2, %rd3;
...   st.global.u32 [%rd2], %r2;
...   ret;
... }''')
>>> mod.kernels
['twice']
>>> res = mod.launch("twice", block=32, args={"out": np.zeros(32, np.uint32)})
>>> res.buffers["out"][:4].tolist()
[0, 2, 4, 6]
"""

import os

from warpsim.errors import PtxSyntaxError, UnsupportedType
from warpsim.ptx.contraction import Contraction, ContractionError, start
from warpsim.isa.tma import TensorMap
from warpsim.ptx.launch import DEFAULT_MAX_STEPS, LaunchResult, PtxModule, PtxRun
from warpsim.ptx.syntax import LARGE_STATEMENTS, MAX_STATEMENTS, parse_module, read_ptx, statements

__all__ = ["load", "Contraction", "ContractionError", "PtxModule", "PtxRun", "LaunchResult", "PtxSyntaxError", "UnsupportedType", "DEFAULT_MAX_STEPS",
           "TensorMap"]


def load(path_or_text, filename=None, *, arch="sm_90", ptxas="auto", cubin=None, progress=None):
    """Parse a PTX module from a file path or from PTX text; return a :class:`PtxModule`.

    FMA contraction is decided as the GPU's compiler decides it (:mod:`warpsim.ptx.contraction`): ``ptxas``
    (``"auto"``: the one nvcc uses, else the ``nvidia-cuda-nvcc`` wheel's; a path; ``"none"``: run the PTX
    without contraction) compiles the text for ``arch``, and each ``mul`` + ``add``/``sub`` pair it fused into
    an FMA runs as one ``fma.rn``; ``cubin``: the file the GPU runs, whose SASS the decision must equal.
    The module's ``.contraction`` says what decided (``.describe()`` is one line for a header).

    Text is told from a path by containing a newline, ``;``, ``{`` or a ``.version`` directive. ``filename``
    names the source in messages (default: the path, or ``<ptx>``). Every kernel is decoded here,
    so an unknown instruction (``PtxSyntaxError``, naming ``file:line:col``, the token and the
    supported instructions) or an unmodelled type or shape (``UnsupportedType``) is reported at
    load time. ``FileNotFoundError`` for a missing file; ``PtxSyntaxError`` naming the line of a byte that is not
    UTF-8, or a text of more than ``syntax.MAX_STATEMENTS`` statements (before it is parsed). ``progress``: called
    with one line (``"k.ptx: 250,000 statements of PTX: loading, about 11 s"``) before a text of more than
    ``syntax.LARGE_STATEMENTS`` is parsed, so that a long load is not silence.
    """
    text = os.fspath(path_or_text) if isinstance(path_or_text, os.PathLike) else path_or_text
    if not isinstance(text, str):
        raise TypeError(f"warpsim.ptx.load: expected a path or PTX text, got {type(path_or_text).__name__}")
    if "\n" in text or ".version" in text or ";" in text or "{" in text:
        name = filename or "<ptx>"
    else:
        name = filename or os.path.basename(text)
        text = read_ptx(text, name)
    count = statements(text)
    if progress is not None and LARGE_STATEMENTS < count <= MAX_STATEMENTS:
        progress(f"{name}: {count:,} statements of PTX: loading, about {max(1, round(count * 45e-6))} s")
    pending = start(text, arch=arch, ptxas=ptxas, cubin=cubin, filename=name)   # ptxas runs while we parse
    tree = parse_module(text, name)
    module = PtxModule(tree, text, pending.finish(tree))
    for kernel in module.kernels:
        module.decoded(kernel)
    return module
