"""The columns of a decoded instruction row and an operand row, and the codes stored in them.

See :mod:`warpsim.ptx.decode` for what each column holds.

>>> NCOLS, K_VEC, SREGS["%laneid"], ATOM_OPS["cas"]
(21, 5, 12, 9)
"""

from warpsim.ptx.memory import SP_CONST, SP_GLOBAL, SP_KPARAM, SP_LOCAL, SP_SHARED

__all__ = ["OP", "TK", "TB", "SK", "SB", "M0", "M1", "M2", "M3", "GUARD", "GNEG", "LOC", "NOPS", "O0", "MAX_OPS",
           "NCOLS", "KIND", "SLOT", "NW", "IMM", "NEG", "K_NONE", "K_REG", "K_IMM", "K_SREG", "K_ADDR", "K_VEC",
           "K_LABEL", "SREGS", "ATOM_OPS", "SHFL_MODES", "VOTE_MODES", "PRMT_MODES", "SPACE_CODES", "REDUX_OPS",
           "TRAP_ASSERT", "MBAR_ASYNC_ARRIVE"]

OP, TK, TB, SK, SB, M0, M1, M2, M3, GUARD, GNEG, LOC, NOPS = range(13)
O0 = 13
MAX_OPS = 8
NCOLS = O0 + MAX_OPS
KIND, SLOT, NW, IMM, NEG = range(5)
K_NONE, K_REG, K_IMM, K_SREG, K_ADDR, K_VEC, K_LABEL = range(7)

# special registers: name -> code (the interpreter's ``_special``)
SREGS = {name: code for code, name in enumerate((
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
    "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
    "%clock", "%clock64", "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt",
    "%lanemask_ge", "%gridid", "%globaltimer", "%dynamic_smem_size", "%total_smem_size",
    # sm_90 clusters: a launch without clusters makes each CTA a cluster of one
    "%clusterid.x", "%clusterid.y", "%clusterid.z", "%nclusterid.x", "%nclusterid.y", "%nclusterid.z",
    "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z", "%cluster_nctaid.x", "%cluster_nctaid.y",
    "%cluster_nctaid.z", "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster"))}
ATOM_OPS = {n: k for k, n in enumerate(("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch",
                                         "cas"))}
SHFL_MODES = {"up": 0, "down": 1, "bfly": 2, "idx": 3}
VOTE_MODES = {"all": 0, "any": 1, "uni": 2, "ballot": 3}
REDUX_OPS = {"add": 0, "min": 1, "max": 2, "and": 3, "or": 4, "xor": 5}
PRMT_MODES = {"f4e": 1, "b4e": 2, "rc8": 3, "ecl": 4, "ecr": 5, "rc16": 6}
SPACE_CODES = {"global": SP_GLOBAL, "shared": SP_SHARED, "local": SP_LOCAL, "const": SP_CONST,
               "param": SP_KPARAM}
# a trap row's M0: TRAP_ASSERT for a ``call __assertfail`` (a trap whose operands are the per-thread .param offsets of
# its message, file, line and function arguments: warpsim.ptx.launch reads them for the fault's text)
TRAP_ASSERT = 1
# the form (M0) of an mbarrier row that the cp.async decoder emits for cp.async.mbarrier.arrive (the mbarrier family
# runs it; warpsim.ptx.families.mbarrier numbers its other forms below it)
MBAR_ASYNC_ARRIVE = 9
