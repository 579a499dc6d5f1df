"""warpsim: a bit-accurate warp simulator for tensor-core programs written with CuTe's concepts."""

__version__ = "0.1.0"

from warpsim.numba_cache import use_user_cache  # noqa: E402

use_user_cache(__version__)  # before any @njit of warpsim is defined: compiled code in a user cache, keyed by the sources

from warpsim.errors import ProgramError, ProgramWarning, SimulatorFault, WarpsimError  # noqa: E402
from warpsim.explain import explain  # noqa: E402
from warpsim.program.program import Program, load_program  # noqa: E402

__all__ = ["WarpsimError", "SimulatorFault", "ProgramError", "ProgramWarning", "explain", "Program",
           "load_program", "run_program", "TensorMap"]


def __getattr__(name):
    if name == "run_program":            # loads Numba and the CuTe layer: on first use only
        from warpsim.program.run import run_program
        return run_program
    if name == "TensorMap":              # a TMA tensor map argument for a kernel's CUtensorMap parameter
        from warpsim.isa.tma import TensorMap
        return TensorMap
    raise AttributeError(f"module 'warpsim' has no attribute {name!r}")
