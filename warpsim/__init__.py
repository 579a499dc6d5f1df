"""warpsim: a bit-accurate warp simulator for tensor-core programs written with CuTe's concepts."""

from warpsim.errors import ProgramError, SimulatorFault, WarpsimError
from warpsim.explain import explain

__all__ = ["WarpsimError", "SimulatorFault", "ProgramError", "explain"]
__version__ = "0.1.0"
