"""Errors that warpsim raises.

Every error names what it was given: the operation, the operands, and for a simulated
instruction the warp, the lane and the offending value, e.g.::

    SimulatorFault: ldmatrix.sync.aligned.m8n8.x4.shared.b16: warp 0 lane 5: address 0x1003 is not 16-byte aligned
"""

__all__ = ["WarpsimError", "SimulatorFault", "DeviceAssertion", "ProgramError", "ProgramWarning", "PtxSyntaxError",
           "UnsupportedType", "ContractionError"]


class WarpsimError(Exception):
    """Base class of every error warpsim raises on purpose."""


class SimulatorFault(WarpsimError):
    """A simulated instruction faulted as the hardware would (bad address, bad type, divergence)."""


class DeviceAssertion(SimulatorFault):
    """A thread's device ``assert`` failed (PTX ``call __assertfail``); the message is the line CUDA prints:
    ``k.cu:5: void k(const int *, int, int *): block: [0,0,0], thread: [3,0,0] Assertion `x[i] < n` failed.``"""


class ProgramError(WarpsimError):
    """A simulated program is malformed (shape mismatch, divergent lanes, unknown tensor)."""


class ProgramWarning(UserWarning):
    """A simulated program does something suspicious but defined (it reads a register never written)."""


class PtxSyntaxError(WarpsimError, ValueError):
    """PTX text that warpsim cannot parse or does not support; names ``file:line:col`` and the token."""


class UnsupportedType(WarpsimError, ValueError):
    """An instruction with a type or shape that warpsim does not model (e.g. an mma shape)."""


class ContractionError(WarpsimError):
    """ptxas's contraction could not be resolved exactly (or ptxas/nvdisasm failed); the message is one line."""
