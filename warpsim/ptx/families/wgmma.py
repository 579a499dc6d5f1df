"""``wgmma`` (sm_90a): ``mma_async`` ``m64nNk16`` with f16/bf16 inputs and f32/f16 accumulators, A from a shared-memory
descriptor or from registers, B from a descriptor; ``m64nNk8`` tf32, ``m64nNk32`` e4m3/e5m2 (f32/f16) and s8/u8 (s32,
``.satfinite``), A from registers or a descriptor; ``fence``, ``commit_group`` and ``wait_group``; decoded and executed
for one warp of the warpgroup.

The semantics are the isa's (:func:`warpsim.isa.wgmma.warp_wgmma`: the descriptor's canonical layouts, the warpgroup's
fragment tables, the tensor-core model of ``mma_arch``). Each warp computes its own 16 rows of D when it issues the
instruction: a warp's rows depend on its A rows and on B only. The asynchrony is not a state of the machine: a
kernel that waits before it reads its accumulators (as it must) sees what the GPU gives it; ``fence``,
``commit_group`` and ``wait_group`` only advance the warp. ``.aligned``: every lane of the warp takes part, else
``FAULT_DIVERGENT``.

Row: ``M0`` the form (0 ``mma_async``, 1 ``fence``, 2 ``commit_group``, 3 ``wait_group``); for ``mma_async`` ``M1`` =
``N | K << 16``, ``M2`` = ``a | b << 4 | cd << 8 | a_in_registers << 12 | satfinite << 13`` (type codes: f16 0, bf16 1,
then :data:`warpsim.isa.dot_add.DOT_TYPES`; cd f32 0, f16 1, s32 2), ``M3`` = ``neg_a | neg_b << 1 | trans_a << 2 |
trans_b << 3`` (the immediates); operands D, A, B, scale-d.
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.arith import AB_TYPES, CD_TYPES
from warpsim.isa.faults import FAULT_BAD_DESCRIPTOR, FAULT_DIVERGENT, set_fault
from warpsim.isa.scratch import stack_array
from warpsim.isa.dot_add import DOT_CD, DOT_TYPES
from warpsim.isa.wgmma import DOT_COMBOS, TYPE_COMBOS, WGMMA_K, WGMMA_N, element_address, warp_wgmma, warp_wgmma_dot
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.memory import SP_SHARED
from warpsim.ptx.operands import WGMMA_READ, get, isa_fault, vec_slots
from warpsim.ptx.rows import K_ADDR, K_REG, K_VEC, KIND, M0, M1, M2, M3, NOPS, NW, O0, SLOT

__all__ = ["WgmmaDecoder", "DECODER", "warp_wgmma_op", "wgmma_touch", "new_pending", "RECORDS"]

FORMS = {"mma_async": 0, "fence": 1, "commit_group": 2, "wait_group": 3}
_MAX_D = 128                      # registers of the largest D (m64n256, f32)
_TF32 = DOT_TYPES["tf32"]


class WgmmaDecoder(FamilyDecoder):
    """Decodes ``wgmma.{mma_async,fence,commit_group,wait_group}.sync.aligned``."""

    def do_wgmma(self, fn, ins, op, mods, types, ops):
        form = mods[0] if mods else ""
        if form not in FORMS or "sync" not in mods or "aligned" not in mods:
            raise self.error(ins.token, f"{name_of(ins)}: expected wgmma.{{mma_async,fence,commit_group,wait_group}}"
                                        f".sync.aligned")
        if not any(t.endswith("a") and t.startswith("sm_90") for t in self.m.target):
            raise self.error(ins.token, f"{name_of(ins)} needs .target sm_90a (ptxas refuses wgmma for "
                                        f"{', '.join(self.m.target) or 'no target'})")
        if form == "wait_group":
            self.count(ins, ops, 1)
            if ops[0].kind != "imm":
                raise self.error(ops[0].token or ins.token, f"{name_of(ins)}: the group count must be an integer")
            return self.emit(fn, ins, op, mods=(FORMS[form], ops[0].value, 0, 0))
        if form != "mma_async":
            self.count(ins, ops, 0)
            return self.emit(fn, ins, op, mods=(FORMS[form], 0, 0, 0))
        satfinite = "satfinite" in mods
        rest = [m for m in mods[3:] if m != "satfinite"]
        shape = rest[0] if rest else ""
        dtype, atype, btype = (list(rest[1:4]) + ["", "", ""])[:3]
        n = int(shape[4:shape.index("k")]) if shape.startswith("m64n") and "k" in shape and \
            shape[4:shape.index("k")].isdigit() else 0
        k = int(shape[shape.index("k") + 1:]) if "k" in shape and shape[shape.index("k") + 1:].isdigit() else 0
        dot = any(atype in a and btype in b and dtype in d for a, b, d in DOT_COMBOS)
        if (n not in WGMMA_N or len(rest) != 4 or k != WGMMA_K.get(atype) or k != WGMMA_K.get(btype)
                or not (dot or (atype == btype and (atype, dtype) in TYPE_COMBOS)) or (satfinite and dtype != "s32")):
            combos = ", ".join(f".{d}.{a}.{a}" for a, d in TYPE_COMBOS)
            raise self.error(ins.token, f"{name_of(ins)}: wgmma form not modelled (warpsim models m64nNk16, N = 8, "
                                        f"16, ..., 256, with {combos}; m64nNk8 .f32.tf32.tf32; m64nNk32 .f32/.f16 "
                                        f"with e4m3/e5m2 inputs; m64nNk32 .s32 with s8/u8 inputs, .satfinite)",
                             UnsupportedType)
        a_regs = ops[1].kind == "vec" if len(ops) > 1 else False
        imm_count = 0 if dtype == "s32" else (2 if dot else (3 if a_regs else 4))
        self.count(ins, ops, 4 + imm_count)
        per_reg = 2 if dtype == "f16" else 1
        if ops[0].kind != "vec" or len(ops[0].items) != n // (2 * per_reg) or any(i.kind != "reg" for i in ops[0].items):
            raise self.error(ops[0].token or ins.token, f"{name_of(ins)}: D takes {n // (2 * per_reg)} registers in "
                                                        f"braces")
        if a_regs and (len(ops[1].items) != 4 or any(i.kind != "reg" for i in ops[1].items)):
            raise self.error(ops[1].token or ins.token, f"{name_of(ins)}: A from registers takes 4 registers in braces")
        imms = []
        for o in ops[4:]:
            if o.kind != "imm":
                raise self.error(o.token or ins.token, f"{name_of(ins)}: imm-scale-a, imm-scale-b and imm-trans "
                                                       f"must be integer constants")
            imms.append(o.value - (1 << 64) if o.value >= 1 << 63 else o.value)
        imms += [1, 1, 0, 0][len(imms):] if dot else []
        scale_a, scale_b = imms[0], imms[1]
        trans_a, trans_b = (0, 0) if dot else ((0, imms[2]) if a_regs else (imms[2], imms[3]))
        if scale_a not in (1, -1) or scale_b not in (1, -1) or trans_a not in (0, 1) or trans_b not in (0, 1):
            raise self.error(ins.token, f"{name_of(ins)}: imm-scale-a/b must be 1 or -1 and imm-trans 0 or 1, got "
                                        f"{', '.join(map(str, imms))}")
        rows = [self.operand(fn, ops[0]), self.operand(fn, ops[1]), self.operand(fn, ops[2]),
                self.operand(fn, ops[3], pred=ops[3].kind == "reg")]
        flags = int(scale_a < 0) | int(scale_b < 0) << 1 | trans_a << 2 | trans_b << 3
        codes = {**AB_TYPES, **DOT_TYPES}
        types = codes[atype] | codes[btype] << 4 | DOT_CD[dtype] << 8 | int(a_regs) << 12 | int(satfinite) << 13
        self.emit(fn, ins, op, mods=(0, n | k << 16, types, flags), operands=rows)


DECODER = WgmmaDecoder


RECORDS = 64                      # shared-memory operands of mma_async in flight tracked per warp
_REC = 8                          # a record: group (0 free, -1 open, g committed), A's descriptor (-1: registers),
                                  # B's descriptor, N, K, element bytes, trans-a, trans-b


BUDGET = -1                   # the column of new_pending's table that keeps the warp's setmaxnreg


def new_pending(warps, regs_per_thread):
    """The in-flight table: ``int64[warps, R + 2 + RECORDS * 8]``; per register slot 0 (free), -1 (owned by the open
    group) or ``g`` (owned by committed group ``g``, from 1); column ``R`` the groups committed so far, ``R + 1`` the
    slots owned; then per ``mma_async`` in flight the record of the shared bytes it reads (its descriptors), which
    ``pend_map`` counts (:data:`warpsim.ptx.operands.WGMMA_READ`) until its ``wait_group``: a write to them before is
    ``FAULT_WGMMA_SMEM``. More than ``RECORDS`` in flight in one warp are not tracked (no error of warpsim's own).
    The last column (:data:`BUDGET`) is the warp's register budget as its last ``setmaxnreg`` set it: +N after
    ``.inc``, -N after ``.dec``, 0 before any (the debugger's producer and consumer roles)."""
    return np.zeros((warps, regs_per_thread + 2 + RECORDS * _REC + 1), np.int64)


@njit(cache=True)
def _operand_bytes(pend_map, rec, quarter, delta):
    """Add ``delta`` to ``pend_map`` over every shared byte the ``mma_async`` of record ``rec`` reads in this warp:
    A's 16 rows of the warp (from its descriptor) and B's N rows."""
    n, k, eb = rec[3], rec[4], rec[5]
    if rec[1] >= 0:
        for m in range(16 * quarter, 16 * quarter + 16):
            for kk in range(k):
                a = element_address(rec[1], m, kk, rec[6], eb)
                for b in range(eb):
                    pend_map[a + b] += delta
    for j in range(n):
        for kk in range(k):
            a = element_address(rec[2], j, kk, rec[7], eb)
            for b in range(eb):
                pend_map[a + b] += delta


@njit(cache=True)
def _track(pend_w, nregs, pend_map, quarter, a_desc, b_desc, n, k, eb, trans_a, trans_b):
    base = nregs + 2
    for i in range(RECORDS):
        rec = pend_w[base + i * _REC:base + (i + 1) * _REC]
        if rec[0] == 0:
            rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[6], rec[7] = -1, a_desc, b_desc, n, k, eb, trans_a, trans_b
            _operand_bytes(pend_map, rec, quarter, WGMMA_READ)
            return


@njit(cache=True)
def _retire(pend_w, nregs, pend_map, quarter, form, done):
    """``commit_group`` (form 2): the open records join the new group; ``wait_group`` (form 3): the records of groups
    ``1 .. done`` are complete, their bytes free."""
    base = nregs + 2
    for i in range(RECORDS):
        rec = pend_w[base + i * _REC:base + (i + 1) * _REC]
        if form == 2 and rec[0] == -1:
            rec[0] = pend_w[nregs]
        elif form == 3 and rec[0] > 0 and rec[0] <= done:
            _operand_bytes(pend_map, rec, quarter, -WGMMA_READ)
            rec[0] = 0


@njit(cache=True)
def _own(pend_w, slots, nregs):
    for s in slots:
        if pend_w[s] == 0:
            pend_w[nregs + 1] += 1
        pend_w[s] = -1


@njit(cache=True)
def _settle(pend_w, form, n, nregs, pend_map, quarter):
    """``commit_group`` (form 2) or ``wait_group n`` (form 3) on one warp's table."""
    if form == 2:
        pend_w[nregs] += 1
        for s in range(nregs):
            if pend_w[s] == -1:
                pend_w[s] = pend_w[nregs]
        _retire(pend_w, nregs, pend_map, quarter, 2, 0)
    elif form == 3:
        done = pend_w[nregs] - n                    # groups 1 .. done are complete
        for s in range(nregs):
            if pend_w[s] > 0 and pend_w[s] <= done:
                pend_w[s] = 0
                pend_w[nregs + 1] -= 1
        _retire(pend_w, nregs, pend_map, quarter, 3, done)


@njit(cache=True)
def wgmma_touch(p, code, opnd, pend_w, nregs):
    """The first register slot that row ``p`` reads or writes and a ``mma_async`` not yet waited for owns, or -1."""
    for j in range(code[p, NOPS]):
        r = code[p, O0 + j]
        k = opnd[r, KIND]
        if k == K_VEC:
            for i in range(opnd[r, NW]):
                q = opnd[r, SLOT] + i
                if opnd[q, KIND] == K_REG and pend_w[opnd[q, SLOT]] != 0:
                    return opnd[q, SLOT]
        elif (k == K_REG or k == K_ADDR) and opnd[r, SLOT] >= 0:
            for i in range(max(opnd[r, NW], 1)):
                if pend_w[opnd[r, SLOT] + i] != 0:
                    return opnd[r, SLOT] + i
    return -1


@njit(cache=True)
def warp_wgmma_op(p, w, gmask, code, opnd, regs, pc, smem, mma_arch, pend, fault, pend_map):
    """A ``wgmma`` row for the whole warp (``gmask``: the lanes whose guard holds, all 32 or a fault); advances the
    pcs and keeps the warp's in-flight table ``pend[w]``. False on a fault."""
    t0 = 32 * w
    nregs = regs.shape[2]
    if gmask != 0xFFFFFFFF:
        set_fault(fault, FAULT_DIVERGENT, t0, gmask, 0xFFFFFFFF)
        return False
    if code[p, M0] != 0:
        _settle(pend[w], code[p, M0], code[p, M1], nregs, pend_map, w % 4)
    else:
        regs_w = regs[w]
        o = code[p, O0:]
        types, flags = code[p, M2], code[p, M3]
        ta, tb, cd = types & 15, (types >> 4) & 15, (types >> 8) & 15
        n, k = code[p, M1] & 0xFFFF, code[p, M1] >> 16
        slots_d = stack_array(_MAX_D, np.int64)
        slots_a = stack_array(4, np.int64)
        d = vec_slots(opnd, o[0], slots_d)
        a_desc = np.int64(0)
        a = slots_a[:0]
        if (types >> 12) & 1:
            a = vec_slots(opnd, o[1], slots_a)
        else:
            a_desc = get(regs_w[0], opnd, o[1])
        b_desc = get(regs_w[0], opnd, o[2])
        scale_d = get(regs_w[0], opnd, o[3]) & 1
        for lane in range(1, 32):                        # one descriptor and scale-d per warp: what warpsim models
            lane_b = get(regs_w[lane], opnd, o[2])
            lane_a = a_desc if (types >> 12) & 1 else get(regs_w[lane], opnd, o[1])
            if lane_b != b_desc or lane_a != a_desc or (get(regs_w[lane], opnd, o[3]) & 1) != scale_d:
                set_fault(fault, FAULT_BAD_DESCRIPTOR, t0 + lane, lane_a if lane_a != a_desc else lane_b, 2)
                return False
        if ta <= 1:                                      # f16/bf16: the mma model
            ok = warp_wgmma(regs_w, w % 4, smem, a_desc, a, b_desc, d, n, ta, cd, scale_d, flags & 1,
                            (flags >> 1) & 1, (flags >> 2) & 1, (flags >> 3) & 1, mma_arch[cd, 0], mma_arch[cd, 1],
                            mma_arch[cd, 2], fault)
        else:                                            # tf32, fp8, integers: the dot-add model
            ok = warp_wgmma_dot(regs_w, w % 4, smem, a_desc, a, b_desc, d, n, k, ta, tb, cd, scale_d, flags & 1,
                                (flags >> 1) & 1, (types >> 13) & 1, fault)
        if not ok:
            isa_fault(fault, w)
            fault[5] = SP_SHARED
            return False
        _own(pend[w], d, nregs)
        _own(pend[w], a, nregs)
        eb = 2 if ta <= 1 else (4 if ta == _TF32 else 1)
        _track(pend[w], nregs, pend_map, w % 4, -1 if (types >> 12) & 1 else a_desc, b_desc, n, 32 // eb, eb,
               (flags >> 2) & 1, (flags >> 3) & 1)
    for lane in range(32):
        pc[t0 + lane] += 1
    return True
