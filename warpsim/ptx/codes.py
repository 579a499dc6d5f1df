"""Fault codes, thread states and limits shared by the PTX interpreter's modules.

Faults fill an ``int64[8]`` array: ``code, thread, value, extra, pc, space, warp, aux``; the codes
below 20 are :mod:`warpsim.isa.faults`'s (``FAULT_MISALIGNED``, ``FAULT_OUT_OF_RANGE``, ...), and
``FAULT_RACE`` is :mod:`warpsim.ptx.memory`'s.

>>> RUNNING, EXITED, WAITING, ABSENT
(0, 1, 2, 3)
"""

__all__ = ["FAULT_DIVERGENT", "FAULT_STEP_LIMIT", "FAULT_TRAP", "FAULT_DEADLOCK", "FAULT_SHFL_SOURCE",
           "FAULT_CALL_DEPTH", "FAULT_PENDING", "FAULT_READ_ONLY", "FAULT_SPACE", "RUNNING", "EXITED", "WAITING",
           "ABSENT", "MAX_PENDING", "PRINT_ARGS", "CTX"]

FAULT_DIVERGENT = 21     # value: executing lanes, extra: lanes required
FAULT_STEP_LIMIT = 22    # value: the step limit
FAULT_TRAP = 23
FAULT_DEADLOCK = 24      # value: threads waiting at barriers, extra: threads alive
FAULT_SHFL_SOURCE = 25   # value: the source lane that does not execute
FAULT_CALL_DEPTH = 26    # value: the call stack's depth
FAULT_PENDING = 27       # value: the limit of outstanding cp.async per thread
FAULT_READ_ONLY = 28     # value: the address
FAULT_SPACE = 29         # value: the address, extra: the space required

RUNNING, EXITED, WAITING, ABSENT = 0, 1, 2, 3     # thread states (ABSENT: past the block's last thread)
MAX_PENDING = 64          # cp.async copies outstanding per thread
PRINT_ARGS = 256          # bytes of a printf argument buffer copied
# ctx: ntid(3) ctaid(3) nctaid(3) threads smid dyn_smem total_smem steps max_steps nsmid
CTX = {"ntid": 0, "ctaid": 3, "nctaid": 6, "threads": 9, "smid": 10, "dyn_smem": 11, "total_smem": 12,
       "steps": 13, "max_steps": 14, "nsmid": 15}
