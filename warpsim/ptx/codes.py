"""Thread states and limits shared by the PTX interpreter's modules.

Faults fill an ``int64[8]`` array: ``code, thread, value, extra, pc, space, warp, aux``; every fault
code (the core's ``FAULT_DIVERGENT``, ``FAULT_RACE``, ... as well as an instruction's
``FAULT_MISALIGNED``, ``FAULT_OUT_OF_RANGE``, ...) is :mod:`warpsim.isa.faults`'s, one number space.

>>> RUNNING, EXITED, WAITING, ABSENT
(0, 1, 2, 3)
"""

__all__ = ["RUNNING", "EXITED", "WAITING", "ABSENT", "MAX_PENDING", "PRINT_ARGS", "CTX", "CTX_SIZE", "CTX_CLUSTER",
           "CTX_EXPLICIT", "CTX_RANK", "CTX_NRANKS", "CTX_YIELD", "BULK_LOG"]

RUNNING, EXITED, WAITING, ABSENT = 0, 1, 2, 3     # thread states (ABSENT: past the block's last thread)
MAX_PENDING = 64          # cp.async copies outstanding per thread
PRINT_ARGS = 256          # bytes of a printf argument buffer copied
BULK_LOG = 256            # bulk copies (TMA) a CTA keeps for the debugger: the last ones (families.bulk_copy.log_bulk)
# ctx: ntid(3) ctaid(3) nctaid(3) threads smid dyn_smem total_smem steps max_steps nsmid, then the cluster: its
# dims (3), whether the launch named them (%is_explicit_cluster), the CTA's rank in it, its CTAs, and the flag a CTA
# sets when it yields to the others of its cluster (every thread waits, no barrier of its own releases)
CTX = {"ntid": 0, "ctaid": 3, "nctaid": 6, "threads": 9, "smid": 10, "dyn_smem": 11, "total_smem": 12,
       "steps": 13, "max_steps": 14, "nsmid": 15, "cluster": 16, "explicit": 19, "rank": 20, "nranks": 21,
       "yield": 22}
CTX_SIZE = 24
CTX_CLUSTER, CTX_EXPLICIT, CTX_RANK, CTX_NRANKS, CTX_YIELD = 16, 19, 20, 21, 22
