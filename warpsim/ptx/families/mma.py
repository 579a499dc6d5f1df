"""``mma.sync.aligned`` (``m16n8k16``, ``m16n8k8``, ``.row.col``, the (ab, cd) types the isa models), decoded and
executed for a whole warp.

The fragments and the arithmetic are the isa's (:func:`warpsim.isa.mma.warp_mma`: the lane <-> element tables of
:mod:`warpsim.isa.fragments`, the accumulation model of :mod:`warpsim.isa.arith` for the architecture in
``mma_arch``); this module checks the form and hands over the registers of the A, B, C and D vectors.
``.aligned``: every lane of the warp takes part, else ``FAULT_DIVERGENT``.
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.arith import AB_TYPES, CD_TYPES
from warpsim.isa.faults import FAULT_DIVERGENT, set_fault
from warpsim.isa.mma import SHAPES, TYPE_COMBOS, warp_mma
from warpsim.isa.scratch import njit_borrowing, stack_array
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.memory import SP_SHARED
from warpsim.ptx.opcodes import TYPES
from warpsim.ptx.operands import MAX_VEC, isa_fault, vec_slots
from warpsim.ptx.rows import M0, M1, M2, O0

__all__ = ["MmaDecoder", "DECODER", "warp_mma_sync"]


class MmaDecoder(FamilyDecoder):
    """Decodes ``mma.sync.aligned``."""

    def do_mma(self, fn, ins, op, mods, types, ops):
        shape = next((m for m in mods if m.startswith("m") and "n" in m and "k" in m), "")
        tnames = [m for m in mods if m in TYPES]
        ok = (shape in SHAPES and "row" in mods and "col" in mods and len(tnames) == 4
              and tnames[1] == tnames[2] and tnames[0] == tnames[3]
              and (tnames[1], tnames[0]) in TYPE_COMBOS)
        if not ok:
            raise self.error(ins.token, f"{name_of(ins)}: mma shape/type not modelled (warpsim models "
                                        f"{', '.join(SHAPES)} .row.col with (ab, cd) in {TYPE_COMBOS})",
                             UnsupportedType)
        self.count(ins, ops, 4)
        ab, cd = tnames[1], tnames[0]
        want = {"m16n8k16": (4, 2), "m16n8k8": (2, 1)}[shape] + (4 if cd == "f32" else 2,)
        want = (want[2], want[0], want[1], want[2])
        for o, n in zip(ops, want):
            if o.kind != "vec" or len(o.items) != n or any(i.kind != "reg" for i in o.items):
                raise self.error(o.token or ins.token, f"{name_of(ins)}: expected {n} registers in braces")
        rows = [self.operand(fn, o) for o in ops]
        self.emit(fn, ins, op, mods=(SHAPES[shape], AB_TYPES[ab], CD_TYPES[cd], 0), operands=rows)


DECODER = MmaDecoder


@njit_borrowing
def warp_mma_sync(p, w, gmask, code, opnd, regs, pc, mma_arch, fault):
    """``mma.sync`` for the whole warp (``gmask``: the lanes whose guard holds, all 32 or a fault); advances the pcs.
    False on a fault."""
    t0 = 32 * w
    regs_w = regs[w]
    o = code[p, O0:]
    # scratch on the stack (no allocation per instruction): the vector operands' register slots
    slots_a, slots_b = stack_array(MAX_VEC, np.int64), stack_array(MAX_VEC, np.int64)
    slots_c, slots_d = stack_array(MAX_VEC, np.int64), stack_array(MAX_VEC, np.int64)
    if gmask != 0xFFFFFFFF:
        set_fault(fault, FAULT_DIVERGENT, t0, gmask, 0xFFFFFFFF)
        return False
    cd = code[p, M2]
    ok = warp_mma(regs_w, vec_slots(opnd, o[1], slots_a), vec_slots(opnd, o[2], slots_b),
                  vec_slots(opnd, o[3], slots_c), vec_slots(opnd, o[0], slots_d), code[p, M0], code[p, M1],
                  cd, mma_arch[cd, 0], mma_arch[cd, 1], mma_arch[cd, 2], fault)
    if not ok:
        isa_fault(fault, w)
        fault[5] = SP_SHARED
        return False
    for lane in range(32):
        pc[t0 + lane] += 1
    return True
