"""Thread states and limits shared by the PTX interpreter's modules.

Faults fill an ``int64[8]`` array: ``code, thread, value, extra, pc, space, warp, aux``; every fault
code (the core's ``FAULT_DIVERGENT``, ``FAULT_RACE``, ... as well as an instruction's
``FAULT_MISALIGNED``, ``FAULT_OUT_OF_RANGE``, ...) is :mod:`warpsim.isa.faults`'s, one number space.

>>> RUNNING, EXITED, WAITING, ABSENT
(0, 1, 2, 3)
"""

__all__ = ["RUNNING", "EXITED", "WAITING", "ABSENT", "MAX_PENDING", "PRINT_ARGS", "CTX"]

RUNNING, EXITED, WAITING, ABSENT = 0, 1, 2, 3     # thread states (ABSENT: past the block's last thread)
MAX_PENDING = 64          # cp.async copies outstanding per thread
PRINT_ARGS = 256          # bytes of a printf argument buffer copied
# ctx: ntid(3) ctaid(3) nctaid(3) threads smid dyn_smem total_smem steps max_steps nsmid
CTX = {"ntid": 0, "ctaid": 3, "nctaid": 6, "threads": 9, "smid": 10, "dyn_smem": 11, "total_smem": 12,
       "steps": 13, "max_steps": 14, "nsmid": 15}
