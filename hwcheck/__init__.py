"""hwcheck: run what warpsim simulates on a real GPU through CuPy and compare every register bit for bit.

Modules: :mod:`hwcheck.lower` (an instruction stream to one inline-PTX CUDA kernel),
:mod:`hwcheck.nvrtc` (offline compile checks, no GPU), :mod:`hwcheck.gpu` (CuPy runtime),
:mod:`hwcheck.kernels` and :mod:`hwcheck.cases` (raw-instruction campaign kernels and cases),
:mod:`hwcheck.campaign` (chunked campaigns), :mod:`hwcheck.cluster` (campaigns on a Ray cluster; the only
module that imports Ray), :mod:`hwcheck.compare` (bit comparison, mismatch
records), :mod:`hwcheck.run` (a whole program on the GPU and on the simulator, seed by seed),
:mod:`hwcheck.compare_program` (its snapshots, shared and global memory compared and named),
:mod:`hwcheck.races` (accesses whose result depends on the warps' order), :mod:`hwcheck.report`
(atomic JSON reports), :mod:`hwcheck.acceptance` (campaigns and example programs into reports; the
acceptance set), :mod:`hwcheck.cli` (the ``hwcheck`` command).
"""

from hwcheck.errors import HwcheckError

__all__ = ["HwcheckError"]
