"""``ldmatrix`` and ``stmatrix`` (``.m8n8.x1/.x2/.x4{.trans}.shared.b16``), decoded and executed for a whole warp.

The rows' addresses and the fragment tables are the isa's (:func:`warpsim.isa.ldmatrix.warp_ldmatrix`,
:func:`~warpsim.isa.ldmatrix.warp_stmatrix`, :mod:`warpsim.isa.fragments`): this module checks the form, gathers
each lane's shared address (a generic one must lie in the shared window; the reserved bytes and a row with a
``cp.async`` copy pending fault) and hands the registers over. ``.aligned``: every lane of the warp takes part,
else ``FAULT_DIVERGENT``.
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import FAULT_DIVERGENT, FAULT_OUT_OF_RANGE, FAULT_SPACE, set_fault
from warpsim.isa.ldmatrix import ldmatrix_variant, warp_ldmatrix, warp_stmatrix
from warpsim.isa.scratch import njit_borrowing, stack_array
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.memory import SHARED_BASE, SHARED_WINDOW, SP_GENERIC, SP_SHARED, shared_offset
from warpsim.ptx.opcodes import Op
from warpsim.ptx.operands import MAX_VEC, isa_fault, lane_address, overwritten, raced, vec_slots
from warpsim.ptx.memory import read_bytes
from warpsim.ptx.rows import M0, M1, M2, O0
from warpsim.ptx.shadow import ON_SANITIZE, S_ON, shadow_access

__all__ = ["LdmatrixDecoder", "DECODER", "warp_matrix"]


class LdmatrixDecoder(FamilyDecoder):
    """Decodes ``ldmatrix`` and ``stmatrix``."""

    def matrix_variant(self, ins, mods):
        num = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), None)
        if num is None or "m8n8" not in mods or "b16" not in mods:
            raise self.error(ins.token, f"{name_of(ins)}: only .m8n8.x1/.x2/.x4[.trans].shared.b16 is "
                                        f"supported", UnsupportedType)
        return num, ldmatrix_variant(num, "trans" in mods)

    def do_ldmatrix(self, fn, ins, op, mods, types, ops):
        num, variant = self.matrix_variant(ins, mods)
        self.count(ins, ops, 2)
        vec, addr = (ops[0], ops[1]) if op == Op.LDMATRIX else (ops[1], ops[0])
        if vec.kind != "vec" or len(vec.items) != num or any(i.kind != "reg" for i in vec.items):
            raise self.error(ins.token, f"{name_of(ins)}: expected {{{num} registers}}")
        arow, space = self.address(fn, addr, self.space_of(ins, mods))
        vrow = self.operand(fn, vec)
        rows = [vrow, arow] if op == Op.LDMATRIX else [arow, vrow]
        self.emit(fn, ins, op, mods=(variant, space, num, 0), operands=rows)

    do_stmatrix = do_ldmatrix


DECODER = LdmatrixDecoder


@njit(cache=True)
def _shared_addresses(regs_w, opnd, row, space, addrs, t0, fault, smem):
    """Each lane's shared-space offset of an ldmatrix/stmatrix address operand."""
    for lane in range(32):
        a = lane_address(regs_w[lane], opnd, row)
        if space == SP_GENERIC:
            if a < SHARED_WINDOW or a >= 2 * SHARED_WINDOW:
                set_fault(fault, FAULT_SPACE, t0 + lane, a, SP_SHARED)
                return False
            a -= SHARED_WINDOW
        addrs[lane] = shared_offset(a, smem)
    return True


@njit_borrowing
def warp_matrix(p, op, w, gmask, code, opnd, regs, pc, smem, pend_map, fault, shadow, sstate, finds):
    """``ldmatrix``/``stmatrix`` for the whole warp (``gmask``: the lanes whose guard holds, all 32 or a fault);
    advances the pcs. False on a fault. For the sanitizer each row (16 bytes) is read or written by the lane that
    gives its address."""
    t0 = 32 * w
    regs_w = regs[w]
    o = code[p, O0:]
    slots_d = stack_array(MAX_VEC, np.int64)          # the vector operand's register slots, on the stack
    if gmask != 0xFFFFFFFF:
        set_fault(fault, FAULT_DIVERGENT, t0, gmask, 0xFFFFFFFF)
        return False
    vec, arow = (o[0], o[1]) if op == Op.LDMATRIX else (o[1], o[0])
    addrs = stack_array(32, np.int64)
    if not _shared_addresses(regs_w, opnd, arow, code[p, M1], addrs, t0, fault, smem):
        return False
    for lane in range(8 * code[p, M2]):
        a = addrs[lane]
        if a < SHARED_BASE:                 # the reserved bytes: no row of a program's
            set_fault(fault, FAULT_OUT_OF_RANGE, t0 + lane, a, 16)
            fault[5] = SP_SHARED
            return False
        if a + 16 <= smem.shape[0] and (raced(pend_map, a, 16, t0 + lane, a, fault) if op == Op.LDMATRIX else
                                        overwritten(pend_map, a, 16, t0 + lane, a, fault)):
            return False
    if sstate[S_ON] == ON_SANITIZE:
        for lane in range(8 * code[p, M2]):
            a = addrs[lane]
            if a + 16 <= smem.shape[0]:
                for q in range(0, 16, 4):
                    shadow_access(shadow, sstate, finds, SP_SHARED, a + q, 4, t0 + lane, p,
                                  0 if op == Op.LDMATRIX else 1, 0, read_bytes(smem, a + q, 4), smem)
    if op == Op.LDMATRIX:
        ok = warp_ldmatrix(regs_w, vec_slots(opnd, vec, slots_d), smem, addrs, code[p, M0], fault)
    else:
        ok = warp_stmatrix(regs_w, vec_slots(opnd, vec, slots_d), smem, addrs, code[p, M0], fault)
    if not ok:
        isa_fault(fault, w)
        fault[5] = SP_SHARED
        return False
    for lane in range(32):
        pc[t0 + lane] += 1
    return True
