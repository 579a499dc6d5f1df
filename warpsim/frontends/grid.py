"""A PTX launch's CTAs in parallel: each CTA one ``launch(..., cta=i)``, as Ray tasks (:mod:`warpsim.parallel`).

:func:`launch_grid` packs the launch's buffers (the pointer arguments) into one global memory, runs the
grid with :func:`warpsim.parallel.run_grid` and unpacks the buffers again: with ``ray=False`` the CTAs
run in order, as ``PtxModule.launch`` runs them; with ``ray=True`` they run as Ray tasks and the result
is checked with ``check="rerun"`` (the interpreter does not report which global bytes a CTA read), so
CTAs that read what earlier CTAs wrote are refused with
:class:`~warpsim.parallel.GridDependenceError`, and what is accepted equals the sequential launch.

The PTX text travels to the workers, not the parsed module: each process parses it once.
"""

from __future__ import annotations

import numpy as np

from warpsim.parallel import GlobalMemory, run_grid
from warpsim.ptx import load
from warpsim.ptx.launch import check_dims

__all__ = ["PtxCta", "launch_grid"]

_ALIGN = 256   # bytes: each buffer of a grid starts at a multiple of this in the grid's memory
_MODULES: dict = {}   # PTX text -> parsed module, per process


class PtxCta:
    """A CTA function for :func:`warpsim.parallel.run_grid`: CTA ``cta`` of ``kernel`` in ``ptx``.

    ``layout``: ``name -> (offset, dtype, shape)`` of each pointer argument's buffer in the grid's
    memory; ``scalars``: the other arguments; ``launch``: more keywords of ``PtxModule.launch``.
    """

    def __init__(self, ptx: str, kernel: str, grid, block, scalars: dict, layout: dict, launch: dict):
        self.ptx, self.kernel, self.grid, self.block = ptx, kernel, grid, block
        self.scalars, self.layout, self.launch = scalars, layout, launch

    def _module(self):
        if self.ptx not in _MODULES:
            _MODULES[self.ptx] = load(self.ptx)
        return _MODULES[self.ptx]

    def __call__(self, cta: int, mem: GlobalMemory) -> None:
        args = dict(self.scalars)
        for name, (offset, dtype, shape) in self.layout.items():
            nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
            args[name] = mem.data[offset:offset + nbytes].view(dtype).reshape(shape).copy()
        result = self._module().launch(self.kernel, grid=self.grid, block=self.block, args=args, cta=cta,
                                       quiet=True, **self.launch)
        for name, (offset, _dtype, _shape) in self.layout.items():
            raw = np.ascontiguousarray(result.buffers[name]).view(np.uint8).reshape(-1)
            mem.data[offset:offset + raw.size] = raw


def launch_grid(ptx: str, kernel: str, grid, block, args: dict, *, ray: bool = False, ctas_per_task=None,
                progress=None, **launch) -> tuple:
    """Launch ``kernel`` of the PTX text ``ptx`` CTA by CTA; returns ``(GridRun, buffers)``, the buffers
    by parameter name as ``PtxModule.launch`` returns them.

    ``grid``, ``block``: an int or up to three ints; ``args``: by PTX parameter name, numpy arrays for
    pointers, numbers for scalars (byte-struct parameters holding arrays are refused: run them with
    ``launch``); ``launch``: ``smem``, ``arch``, ``max_steps``. Raises ``GridDependenceError`` (with
    ``ray=True``) when the CTAs are not independent.
    """
    dims = (int(grid),) if isinstance(grid, (int, np.integer)) else tuple(int(g) for g in grid)
    three = (int(block),) if isinstance(block, (int, np.integer)) else tuple(int(b) for b in block)
    check_dims(dims + (1,) * (3 - len(dims)), three + (1,) * (3 - len(three)))     # CUDA's limits, before any task
    for name, value in args.items():
        if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for _t, v in value):
            raise ValueError(f"{kernel}: parameter {name} is a struct holding a buffer: a grid in parallel takes "
                             f"plain pointer parameters only; run it in sequence (--no-ray)")
    layout, top = {}, 0
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            layout[name] = (top, value.dtype.str, value.shape)
            top += -(-max(value.nbytes, 1) // _ALIGN) * _ALIGN
    gmem = np.zeros(max(top, 1), np.uint8)
    for name, (offset, _dtype, _shape) in layout.items():
        raw = np.ascontiguousarray(args[name]).view(np.uint8).reshape(-1)
        gmem[offset:offset + raw.size] = raw
    scalars = {k: v for k, v in args.items() if k not in layout}
    cta_fn = PtxCta(ptx, kernel, dims, block, scalars, layout, launch)
    run = run_grid(cta_fn, gmem, int(np.prod(dims)), ray=ray, ctas_per_task=ctas_per_task, check="rerun",
                   progress=progress)
    buffers = {name: run.gmem[offset:offset + args[name].nbytes].view(dtype).reshape(shape).copy()
               for name, (offset, dtype, shape) in layout.items()}
    return run, buffers
