"""Barriers and fences: ``bar``/``barrier`` (``.sync``, ``.arrive``, ``.aligned``, a thread count), ``bar.warp.sync``,
and the fences and hints the simulator orders by construction (``membar``, ``fence``, ``nanosleep``, ``prefetch``,
``griddepcontrol``, ``pmevent``, ``setmaxnreg``: a register budget, which changes no value), decoded and executed.

A CTA barrier (:func:`warp_barrier`) counts the arriving threads of its id (``bar_arrived``; ``bar_expect``: the
thread count, 0 for every thread) and sets the ``.sync`` ones ``WAITING``; :mod:`warpsim.ptx.interp` releases them
when the count is reached. ``.aligned`` needs every non-exited lane of the warp (else ``FAULT_DIVERGENT``).
``bar.warp.sync`` waits for its member mask as the ``.sync`` collectives do (:mod:`warpsim.ptx.families.collectives`
runs it). Fences are no-ops: warps run one at a time and every access lands in order.
"""

from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import FAULT_DIVERGENT, set_fault
from warpsim.isa.scratch import njit_borrowing
from warpsim.ptx.codes import WAITING
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.opcodes import Op
from warpsim.ptx.operands import get
from warpsim.ptx.rows import M0, M1, NOPS, O0

SETMAXNREG = 2                # a FENCE row's M0 for setmaxnreg (0: a fence that orders nothing, 1: one that does)

__all__ = ["BarriersDecoder", "DECODER", "SETMAXNREG", "warp_barrier"]


class BarriersDecoder(FamilyDecoder):
    """Decodes ``bar``/``barrier`` (``.sync .arrive``, ``.warp.sync``; ``.red`` refused, ``.cluster`` the cluster
    family's) and the fences."""

    def do_fence(self, fn, ins, op, mods, types, ops):
        if ins.opcode == "setmaxnreg":               # a register budget: no effect on values; the row keeps it for the
                                                     # debugger's roles (M0 SETMAXNREG, M1 +N .inc / -N .dec)
            self.count(ins, ops, 1)
            n = ops[0].value if ops[0].kind == "imm" else -1
            if not ({"inc", "dec"} & set(mods) and "sync" in mods and "aligned" in mods) or not (
                    24 <= n <= 256 and n % 8 == 0):
                raise self.error(ins.token, f"{name_of(ins)}: expected setmaxnreg.{{inc,dec}}.sync.aligned.u32 N with "
                                            f"N a multiple of 8 from 24 to 256")
            return self.emit(fn, ins, Op.FENCE, mods=(SETMAXNREG, n if "inc" in mods else -n, 0, 0))
        # M0: 1 for a memory fence (membar, fence other than .proxy), which the sanitizer counts as release + acquire
        ordering = ins.opcode in ("membar", "fence") and "proxy" not in mods
        return self.emit(fn, ins, Op.FENCE, mods=(int(ordering), 0, 0, 0))

    def do_bar(self, fn, ins, op, mods, types, ops):
        if "warp" in mods:
            self.count(ins, ops, 1)
            return self.emit(fn, ins, op, mods=(2, 1, 0, 0), operands=[self.operand(fn, ops[0])])
        if "cluster" in mods:
            return self.do_bar_cluster(fn, ins, mods, ops)          # the cluster family's
        if "red" in mods:
            raise self.error(ins.token, f"{name_of(ins)} is not supported", UnsupportedType)
        kind = 1 if "arrive" in mods else 0
        aligned = ins.opcode == "bar" or "aligned" in mods
        self.count(ins, ops, 1, 2)
        rows = [self.operand(fn, o) for o in ops]
        self.emit(fn, ins, op, mods=(kind, aligned, 0, 0), operands=rows)


DECODER = BarriersDecoder


@njit_borrowing
def warp_barrier(p, w, gmask, alive, code, opnd, regs, pc, status, bar_arrived, bar_expect, bar_id, fault):
    """``bar.sync``/``bar.arrive`` for the lanes of ``gmask`` (``alive``: the warp's non-exited lanes); advances their
    pcs. False on a fault."""
    t0 = 32 * w
    regs_w = regs[w]
    o = code[p, O0:]
    if code[p, M1] and gmask != alive:
        set_fault(fault, FAULT_DIVERGENT, t0, gmask, alive)
        return False
    lane0 = 0
    while not (gmask >> lane0) & 1:
        lane0 += 1
    b = get(regs_w[lane0], opnd, o[0]) & 15
    if code[p, NOPS] > 1:                                # NOPS: a thread count
        bar_expect[b] = get(regs_w[lane0], opnd, o[1])
    n = 0
    for lane in range(32):
        if (gmask >> lane) & 1:
            n += 1
            pc[t0 + lane] += 1
            if code[p, M0] == 0:
                status[t0 + lane] = WAITING
                bar_id[t0 + lane] = b
    bar_arrived[b] += 32 if code[p, M1] else n
    return True
