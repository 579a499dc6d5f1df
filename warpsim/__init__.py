"""warpsim: a bit-accurate warp simulator for tensor-core programs written with CuTe's concepts."""

from warpsim.errors import ProgramError, ProgramWarning, SimulatorFault, WarpsimError
from warpsim.explain import explain
from warpsim.program.program import Program, load_program

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
__version__ = "0.1.0"
