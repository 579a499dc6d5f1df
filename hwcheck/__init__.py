"""hwcheck: run what warpsim simulates on a real GPU through CuPy and compare every register bit for bit.

Subpackages, bottom to top; a module imports only its own level and the levels below it:

1. :mod:`hwcheck.errors`, :mod:`hwcheck.arch` (the compute capability -> arithmetic model mapping, stated
   once), :mod:`hwcheck.report` (atomic JSON reports), :mod:`hwcheck.progress`, :mod:`hwcheck.compare`
   (bit comparison, mismatch records);
2. :mod:`hwcheck.device`: the GPU through CuPy and NVRTC, and the code it runs (generated campaign kernels,
   instrumented PTX, SASS; a program runs as its PTX lowering, :mod:`warpsim.program.lower`);
3. :mod:`hwcheck.runs`: one program on the GPU and on the simulator, seed by seed, compared;
4. :mod:`hwcheck.campaigns`: many inputs or programs at once (instruction campaigns, MUFU probes and sweeps,
   PTX fuzzing, the acceptance set, a Ray cluster: the only module that imports Ray);
5. :mod:`hwcheck.cli`: the ``hwcheck`` command (``python -m hwcheck``).
"""

from hwcheck.errors import HwcheckError

__all__ = ["HwcheckError"]
