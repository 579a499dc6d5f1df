"""Faults of njit instruction primitives, reported through a small int64 array, and their messages.

An ``@njit`` primitive cannot raise a rich Python exception, so it fills ``fault`` (``int64[4]``):
``[code, lane, value, extra]``; code 0 means no fault. ``raise_fault`` turns a filled array into a
``warpsim.errors.SimulatorFault`` naming the PTX instruction, the warp, the lane and the value.

The fault codes are one number space, stated here whole so that no two faults share a code (reports
and tests rely on the numbers): 1-6 are an instruction primitive's (its operands and addresses), 20-33
are the PTX core's (:mod:`warpsim.ptx`: cp.async races, divergence, barriers, traps, limits), which
fills the same first four fields of its ``int64[8]`` fault array (``code, thread, value, extra, pc,
space, warp, aux``, :mod:`warpsim.ptx.codes`) and words the messages in :mod:`warpsim.ptx.launch`.

>>> import numpy as np
>>> f = new_fault()
>>> set_fault(f, FAULT_MISALIGNED, 5, 0x1003, 16)
>>> fault_message(f, "ldmatrix.sync.aligned.m8n8.x4.shared.b16", warp=0)
'ldmatrix.sync.aligned.m8n8.x4.shared.b16: warp 0 lane 5: address 0x1003 is not 16-byte aligned'
"""

import numpy as np
from numba import njit

from warpsim.errors import SimulatorFault

__all__ = [
    "FAULT_NONE", "FAULT_MISALIGNED", "FAULT_OUT_OF_RANGE", "FAULT_BAD_REGISTER", "FAULT_BAD_TYPES",
    "FAULT_BAD_OPERAND", "FAULT_BAD_DESCRIPTOR", "FAULT_RACE", "FAULT_DIVERGENT", "FAULT_STEP_LIMIT", "FAULT_TRAP", "FAULT_DEADLOCK",
    "FAULT_SHFL_SOURCE", "FAULT_CALL_DEPTH", "FAULT_PENDING", "FAULT_READ_ONLY", "FAULT_SPACE", "FAULT_WGMMA_PENDING",
    "FAULT_MBARRIER", "FAULT_MBARRIER_DEADLOCK", "FAULT_TENSOR_MAP", "FAULT_WGMMA_SMEM",
    "new_fault", "set_fault", "clear_fault", "fault_message", "descriptor_problem", "raise_fault",
]

FAULT_NONE = 0
FAULT_MISALIGNED = 1     # lane, address, alignment in bytes
FAULT_OUT_OF_RANGE = 2   # lane, address, access size; the memory size is given to fault_message
FAULT_BAD_REGISTER = 3   # -, register index, registers per thread
FAULT_BAD_TYPES = 4      # -, ab code, cd code
FAULT_BAD_OPERAND = 5    # -, operand value, its limit (e.g. a half index, an access size)
FAULT_BAD_DESCRIPTOR = 6  # -, the wgmma matrix descriptor's bits, why (1: a base offset with a swizzled layout,
                          # 2: lanes of a warp giving different descriptors)
# the PTX core's: thread (or lane 0's thread), value, extra
FAULT_RACE = 20          # a cp.async destination read or written before its wait: address, bytes
FAULT_DIVERGENT = 21     # value: executing lanes, extra: lanes required
FAULT_STEP_LIMIT = 22    # value: the step limit
FAULT_TRAP = 23
FAULT_DEADLOCK = 24      # value: threads waiting at barriers, extra: threads alive
FAULT_SHFL_SOURCE = 25   # value: the source lane that does not execute
FAULT_CALL_DEPTH = 26    # value: the call stack's depth
FAULT_PENDING = 27       # value: the limit of outstanding cp.async per thread
FAULT_READ_ONLY = 28     # value: the address
FAULT_SPACE = 29         # value: the address, extra: the space required
FAULT_WGMMA_PENDING = 30  # value: a register slot a wgmma.mma_async not yet waited for owns
FAULT_MBARRIER = 31      # value: the address; extra: 1 not shared memory, 2 no mbarrier there, 3 too many mbarriers
FAULT_MBARRIER_DEADLOCK = 32  # value: the mbarrier's row in the CTA's table a thread waits at for ever
FAULT_TENSOR_MAP = 33    # value: the address of a TMA tensor map warpsim did not build, or of another rank (extra)
FAULT_WGMMA_SMEM = 34    # a write to shared bytes a wgmma.mma_async not yet waited for reads: address, bytes


def new_fault():
    """A cleared fault array, ``int64[4]`` of zeros."""
    return np.zeros(4, np.int64)


@njit(cache=True)
def set_fault(fault, code, lane, value, extra):
    """Record the first fault only: later ones leave ``fault`` as it is."""
    if fault[0] == FAULT_NONE:
        fault[0] = code
        fault[1] = lane
        fault[2] = value
        fault[3] = extra


@njit(cache=True)
def clear_fault(fault):
    """Reset ``fault`` to no fault."""
    fault[:] = 0


def fault_message(fault, instruction, warp=None, nbytes=None, space="shared", entry=None):
    """The message of a filled ``fault``: ``"<instruction>: warp W lane L: <what>"``.

    ``warp``: the warp (left out when None); ``entry``: a label for a batch entry (e.g.
    ``"entry 3"``) used instead of the warp; ``nbytes``: the size of the memory accessed (for
    out-of-range faults); ``space``: its name.

    >>> f = new_fault(); set_fault(f, FAULT_OUT_OF_RANGE, 3, 0x400, 16)
    >>> fault_message(f, "ld.shared.v4.b32", warp=1, nbytes=1024)
    'ld.shared.v4.b32: warp 1 lane 3: address 0x400 + 16 bytes is outside shared memory [0, 0x400)'
    >>> fault_message(f, "ld.shared.v4.b32", entry="entry 7", nbytes=1024)[:32]
    'ld.shared.v4.b32: entry 7 lane 3'
    """
    code, lane, value, extra = (int(x) for x in fault)
    if entry is not None:
        head = f"{instruction}: {entry}"
    elif warp is not None:
        head = f"{instruction}: warp {warp}"
    else:
        head = instruction
    where = f"{head} lane {lane}" if head != instruction else f"{instruction}: lane {lane}"
    if code == FAULT_MISALIGNED:
        return f"{where}: address {value:#x} is not {extra}-byte aligned"
    if code == FAULT_OUT_OF_RANGE:
        size = f"{nbytes:#x}" if nbytes is not None else "?"
        return f"{where}: address {value:#x} + {extra} bytes is outside {space} memory [0, {size})"
    if code == FAULT_BAD_REGISTER:
        return f"{head}: register index {value} is outside [0, {extra})"
    if code == FAULT_BAD_TYPES:
        return f"{head}: unsupported type combination (ab code {value}, cd code {extra})"
    if code == FAULT_BAD_OPERAND:
        return f"{head}: operand value {value} is not allowed (limit {extra})"
    if code == FAULT_BAD_DESCRIPTOR:
        return f"{head}: {descriptor_problem(value, extra)}"
    return f"{head}: fault code {code} (lane {lane}, value {value}, extra {extra})"


def descriptor_problem(bits, why):
    """What is wrong with a wgmma matrix descriptor (``FAULT_BAD_DESCRIPTOR``'s value and extra), in words."""
    bits &= (1 << 64) - 1
    if why == 2:
        return (f"gives matrix descriptor {bits:#018x} (or scale-d) other than lane 0's (not modelled: warpsim "
                f"models one descriptor and scale-d per warp, as CuTe and Triton give them)")
    return (f"matrix descriptor {bits:#018x} has base offset {(bits >> 49) & 7} with a swizzled layout (not "
            f"modelled: warpsim models base offset 0, as CuTe and Triton write it)")


def raise_fault(fault, instruction, warp=None, nbytes=None, space="shared", entry=None):
    """Raise ``SimulatorFault`` for a filled ``fault``; do nothing when ``fault[0] == 0``."""
    if int(fault[0]) != FAULT_NONE:
        raise SimulatorFault(fault_message(fault, instruction, warp, nbytes, space, entry))
