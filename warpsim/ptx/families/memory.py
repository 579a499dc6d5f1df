"""The memory family: ``ld`` (``ldu``), ``st``, ``atom`` and ``red``, decoded and executed.

State spaces, generic addresses and the bytes behind them are :mod:`warpsim.ptx.memory`'s; this module checks the
instructions' forms (widths ptxas accepts per ``.target``, atomic operations and spaces) and moves the bytes:
:func:`thread_ld_st` and :func:`thread_atom` for one thread in any space, :func:`warp_shared_global` for the lanes
of a warp at once when every address is ``.shared`` or ``.global`` (returns False otherwise: thread by thread, the
same semantics).
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, FAULT_READ_ONLY, FAULT_SPACE, set_fault
from warpsim.isa.scratch import njit_borrowing
from warpsim.ptx.alu import mask, sext, ult
from warpsim.ptx.families.common import FamilyDecoder, name_of, scalar_operand, target_sm
from warpsim.ptx.memory import (GLOBAL_BASE, PAGE_SHIFT, SHARED_BASE, SHARED_WINDOW, SP_DSMEM, SP_GENERIC, SP_GLOBAL,
                                SP_KPARAM, SP_SHARED, load, shared_offset, locate, misaligned, read_bytes, store,
                                write_bytes)
from warpsim.isa.fp64 import f64_add
from warpsim.isa.fparith import bf16x2_add, f16x2_add, f32_add
from warpsim.isa.rounding import RN
from warpsim.ptx.opcodes import TK_BF, TK_BF16X2, TK_F, TK_F16X2, TK_S, TYPES, Op
from warpsim.ptx.operands import advance, get, lane_address, lane_get, lane_put, overwritten, put, raced
from warpsim.ptx.rows import ATOM_OPS, IMM, K_IMM, K_NONE, K_REG, KIND, M0, M1, M2, NW, O0, SLOT, TB, TK
from warpsim.ptx.shadow import FL_ACQUIRE, FL_ATOMIC, FL_RELEASE, FL_STRONG, ON_SANITIZE, S_ON, shadow_access

ATOM_CAS = ATOM_OPS["cas"]

__all__ = ["MemoryDecoder", "DECODER", "thread_ld_st", "thread_atom", "atomic_value", "warp_shared_global",
           "warp_ld_param", "lane_transfer"]


class MemoryDecoder(FamilyDecoder):
    """Decodes ``ld``/``ldu``/``st`` (``.v2 .v4 .v8``) and ``atom``/``red``."""

    def do_ld(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types, allow_float=True)
        vec = next((int(m[1:]) for m in mods if m in ("v2", "v4", "v8")), 1)
        self.count(ins, ops, 2)
        data, addr = (ops[0], ops[1]) if op == Op.LD else (ops[1], ops[0])
        if vec == 1:
            data = scalar_operand(data)
        self.check_width(fn, ins, t, vec, data)
        if (data.kind == "vec") != (vec > 1) or (vec > 1 and len(data.items) != vec):
            raise self.error(ins.token, f"{name_of(ins)}: the register operand does not match .v{vec}")
        arow, space = self.address(fn, addr, self.space_of(ins, mods))
        if "shared::cluster" in mods:                    # any CTA of the cluster (warpsim.ptx.families.cluster)
            space = SP_DSMEM
        drow = self.operand(fn, data)
        rows = [drow, arow] if op == Op.LD else [arow, drow]
        self.emit(fn, ins, op, (t, None), (space, vec, memory_order(mods), 0), rows)

    do_st = do_ld

    def check_width(self, fn, ins, t, vec, data):
        """Refuse the ``ld``/``st`` widths ptxas refuses (ptxas 13.0): a ``.b128`` access needs a ``.b128`` register
        (not a 64-bit one, nor a vector: "Arguments mismatch"), and so takes no ``.v2``/``.v4``; one wider than 128
        bits (``.v8.b32``, ``.v4.b64``: 256) needs ``.target sm_100`` or later and a ``.global`` or generic address
        (sm_80 and sm_90 move at most 128 bits: ``.v4.b32``, ``.v2.b64``); none is wider than 256 bits."""
        bits = TYPES[t][1] * vec
        if TYPES[t][1] == 128:
            rtype = fn.regs[data.name][2] if data.kind in ("reg", "sym") and data.name in fn.regs else None
            if vec > 1 or rtype != "b128":
                got = f".{rtype} register {data.name}" if rtype else {"vec": "a vector"}.get(data.kind, data.kind)
                raise self.error(ins.token, f"{name_of(ins)}: a .b128 access takes one .b128 register, got {got} "
                                            f"(ptxas refuses it)")
        sm = target_sm(self.m)
        if bits > 256:
            raise self.error(ins.token, f"{name_of(ins)}: a {bits}-bit load/store (ptxas allows at most 256 bits)")
        if bits > 128 and (sm < 100 or self.space_of(ins, ins.mods) not in (SP_GLOBAL, SP_GENERIC)):
            raise self.error(ins.token, f"{name_of(ins)}: a {bits}-bit load/store needs .target sm_100 or later and a "
                                        f".global or generic address (this module's .target: "
                                        f"{f'sm_{sm}' if sm else 'none'}; below sm_100 ptxas allows at most 128 bits: "
                                        f".v4.b32, .v2.b64)")

    def do_atom(self, fn, ins, op, mods, types, ops):
        t = self.one_type(ins, types, allow_float=True)
        aop = next((m for m in mods if m in ATOM_OPS), None)
        if aop is None:
            raise self.error(ins.token, f"{name_of(ins)}: unknown atomic operation (known: {', '.join(ATOM_OPS)})")
        tk = TYPES[t][0]
        if tk in (TK_F, TK_BF, TK_F16X2, TK_BF16X2) and aop != "add":
            raise self.error(ins.token, f"{name_of(ins)}: the only floating-point atomic operation of a scalar "
                                        f"{op.name.lower()} is .add (ptxas rejects .{aop}.{t})")
        if tk in (TK_F16X2, TK_BF16X2, TK_BF) or tk == TK_F and TYPES[t][1] == 16:
            if "noftz" not in mods:
                raise self.error(ins.token, f"{name_of(ins)}: .add.{t} needs .noftz (ptxas rejects it without)")
        if TYPES[t][1] not in (32, 64):
            raise self.error(ins.token, f"{name_of(ins)}: only 32- and 64-bit atomics are supported",
                             UnsupportedType)
        space = self.space_of(ins, mods)
        if op == Op.RED:
            self.count(ins, ops, 2)
            arow, space = self.address(fn, ops[0], space)
            rows = [self.add_opnd(K_NONE), arow, self.operand(fn, ops[1])]
        else:
            self.count(ins, ops, 4 if aop == "cas" else 3)
            arow, space = self.address(fn, ops[1], space)
            rows = [self.operand(fn, ops[0]), arow] + [self.operand(fn, o) for o in ops[2:]]
        if "shared::cluster" in mods:                    # any CTA of the cluster (warpsim.ptx.families.cluster)
            space = SP_DSMEM
        elif space not in (SP_GLOBAL, SP_SHARED, SP_GENERIC):
            raise self.error(ins.token, f"{name_of(ins)}: atomics work on .global and .shared")
        self.emit(fn, ins, Op.ATOM, (t, None), (space, ATOM_OPS[aop], memory_order(mods) | FL_STRONG | FL_ATOMIC, 0),
                  rows)

    do_red = do_atom


DECODER = MemoryDecoder


def memory_order(mods):
    """The sanitizer's flags (:mod:`warpsim.ptx.shadow`) of an access's memory-order qualifiers, kept in its row's
    ``M2``: ``.volatile .relaxed .acquire .release .acq_rel`` are strong; ``.release``/``.acq_rel`` release,
    ``.acquire``/``.acq_rel`` acquire."""
    flags = 0
    if any(m in ("volatile", "relaxed", "acquire", "release", "acq_rel", "sc") for m in mods):
        flags |= FL_STRONG
    if any(m in ("release", "acq_rel", "sc") for m in mods):
        flags |= FL_RELEASE
    if any(m in ("acquire", "acq_rel", "sc") for m in mods):
        flags |= FL_ACQUIRE
    return flags


@njit_borrowing
def thread_ld_st(p, op, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, pend_map, pc, fault, shadow,
                 sstate, finds):
    """One thread's ``ld``/``st`` (scalar or ``.v2/.v4``) in any state space; advances its pc. False on a fault.
    With ``sstate[S_ON]``, a shared or global access is checked and recorded (:func:`~warpsim.ptx.shadow.shadow_access`)."""
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    esize = max(tb // 8, 1)
    n = code[p, M1]
    arow, drow = (o[1], o[0]) if op == Op.LD else (o[0], o[1])
    addr = lane_address(r, opnd, arow)
    sp, off = locate(code[p, M0], addr, esize * n, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if sp < 0:
        return False
    if sp == SP_SHARED and (overwritten(pend_map, off, esize * n, t, addr, fault) if op == Op.ST else
                            raced(pend_map, off, esize * n, t, addr, fault)):
        return False
    san = sstate[S_ON] != 0 and (sp == SP_SHARED or sp == SP_GLOBAL)
    if san and op == Op.LD:
        shadow_access(shadow, sstate, finds, sp, off, esize * n, t, p, 0, code[p, M2], 0, smem if sp == SP_SHARED
                      else gmem)
    for j in range(n):
        row = opnd[drow, SLOT] + j if n > 1 else drow
        if op == Op.LD:
            v = load(sp, off + j * esize, esize, t, gmem, smem, local, const, kparam, fparam)
            if tk == TK_S:
                v = sext(v, tb)
            words = opnd[row, NW]
            put(r, opnd, row, v & mask(32 * words) if words == 1 else v)
        else:
            if opnd[row, KIND] != K_REG and opnd[row, KIND] != K_IMM:
                continue
            if san:
                shadow_access(shadow, sstate, finds, sp, off + j * esize, esize, t, p, 1, code[p, M2], get(r, opnd, row),
                              smem if sp == SP_SHARED else gmem)
            if not store(sp, off + j * esize, esize, get(r, opnd, row), t, gmem, smem, local, kparam, fparam):
                set_fault(fault, FAULT_READ_ONLY, t, addr, 0)
                return False
    pc[t] += 1
    return True


@njit_borrowing
def warp_ld_param(p, w, group, gmask, code, opnd, regs, pc, gmem, ends, smem, local, const, kparam, fparam, fault):
    """``ld.param`` of the kernel's parameters for a whole group, as :func:`thread_ld_st` loads them lane by lane (one
    call, not 32: a kernel's prologue loads every parameter in every thread), an address located once for the lanes
    that share it. False for any other ``ld``, and, with nothing left changed but registers the thread path writes
    alike, when a lane's access would fault (the thread path then faults as it does)."""
    if code[p, M0] != SP_KPARAM:
        return False
    o = code[p, O0:O0 + 2]
    drow, arow = o[0], o[1]
    tk, tb, n = code[p, TK], code[p, TB], code[p, M1]
    esize = max(tb // 8, 1)
    t0 = 32 * w
    last = np.int64(-1)
    off = np.int64(0)
    for lane in range(32):
        if not (gmask >> lane) & 1:
            continue
        r = regs[w, lane]
        addr = lane_address(r, opnd, arow)
        if addr != last:
            sp, off = locate(SP_KPARAM, addr, esize * n, t0 + lane, gmem, ends, smem, local, const, kparam, fparam,
                             fault)
            if sp < 0:
                fault[:] = 0
                return False
            last = addr
        for j in range(n):
            row = opnd[drow, SLOT] + j if n > 1 else drow
            v = read_bytes(kparam, off + j * esize, esize)
            if tk == TK_S:
                v = sext(v, tb)
            words = opnd[row, NW]
            put(r, opnd, row, v & mask(32 * words) if words == 1 else v)
    advance(pc, t0, group)
    return True


@njit_borrowing
def thread_atom(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, pend_map, pc, fault, shadow, sstate,
                finds):
    """One thread's ``atom``/``red`` on ``.global`` or ``.shared`` (``M1``: the ``ATOM_OPS`` code); the old value to
    ``d``; advances its pc. False on a fault.

    The float ``.add`` rounds to nearest even (PTX ISA, ``atom``): ``.f32`` on global memory flushes subnormal inputs
    and results to sign-preserving zero, on shared memory it does not; ``.f64`` and the packed ``.noftz.f16x2`` /
    ``.bf16x2`` never flush. Each is the register instruction's model (``add.rn{.ftz}.f32``, ``add.rn.f64``,
    ``add.rn.f16x2``, ``add.rn.bf16x2``)."""
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    size = tb // 8
    addr = lane_address(r, opnd, o[1])
    sp, off = locate(code[p, M0], addr, size, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if sp < 0:
        return False
    if sp != SP_GLOBAL and sp != SP_SHARED:
        set_fault(fault, FAULT_SPACE, t, addr, SP_GLOBAL)
        return False
    if sp == SP_SHARED and overwritten(pend_map, off, size, t, addr, fault):
        return False
    if sstate[S_ON]:
        shadow_access(shadow, sstate, finds, sp, off, size, t, p, 2, code[p, M2], 0, smem if sp == SP_SHARED else gmem)
    m = mask(tb)
    old = load(sp, off, size, t, gmem, smem, local, const, kparam, fparam)
    b = get(r, opnd, o[2]) & m
    c = get(r, opnd, o[3]) & m if code[p, M1] == ATOM_CAS else np.int64(0)
    store(sp, off, size, atomic_value(code[p, M1], code[p, TK], tb, old, b, c, sp == SP_GLOBAL), t, gmem, smem, local,
          kparam, fparam)
    put(r, opnd, o[0], old)
    pc[t] += 1
    return True


@njit(cache=True)
def atomic_value(kind, tk, tb, old, b, c, ftz):
    """The value an ``atom``/``red`` of operation ``kind`` (the ``ATOM_OPS`` code) leaves in memory holding ``old``,
    with operands ``b`` (and ``c`` for ``.cas``), all masked to ``tb`` bits; ``ftz``: the ``.f32`` add flushes
    subnormals (global memory). See :func:`thread_atom`."""
    signed = tk == TK_S
    if kind == 0 and tk == TK_F:
        new = np.int64(f32_add(old, b, RN, ftz, False)) if tb == 32 else np.int64(f64_add(old, b, RN))
    elif kind == 0 and tk == TK_F16X2:
        new = np.int64(f16x2_add(old, b, RN, False, False))
    elif kind == 0 and tk == TK_BF16X2:
        new = np.int64(bf16x2_add(old, b, RN))
    elif kind == 0:
        new = old + b
    elif kind == 1 or kind == 2:
        if signed:
            lt = sext(old, tb) < sext(b, tb)
        else:
            lt = ult(old, b)
        new = (old if lt else b) if kind == 1 else (b if lt else old)
    elif kind == 3:
        new = np.int64(0) if not ult(old, b) else old + 1
    elif kind == 4:
        new = b if (old == 0 or ult(b, old)) else old - 1
    elif kind == 5:
        new = old & b
    elif kind == 6:
        new = old | b
    elif kind == 7:
        new = old ^ b
    elif kind == 8:
        new = b
    else:
        new = c if old == b else old
    return new & mask(tb)


@njit(cache=True)
def _generic_window(regs, w, gmask, opnd, arow):
    """``SP_GLOBAL`` when every lane of ``gmask`` has a global generic address, ``SP_SHARED`` when every
    one is in the shared window, else -1 (mixed, another window, or invalid: thread by thread)."""
    space = np.int64(-1)
    for lane in range(32):
        if (gmask >> lane) & 1:
            a = lane_address(regs[w, lane], opnd, arow)
            lsp = SP_GLOBAL if 0 <= a < SHARED_WINDOW else (SP_SHARED if SHARED_WINDOW <= a < 2 * SHARED_WINDOW else -1)
            if lsp < 0 or (space >= 0 and lsp != space):
                return np.int64(-1)
            space = lsp
    return space


@njit_borrowing
def warp_shared_global(p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, ends, pend_map, fault, shadow, sstate,
                       finds):
    """``ld``/``st`` of ``.shared`` or ``.global``, or generic when every lane's address is global or
    every one is in the shared window, for a whole group, bytes accessed in place; a global access
    must lie inside one buffer (``ends``: :func:`warpsim.ptx.memory.object_ends`). Returns False
    when it does not apply (another space) or on a fault (``fault`` set)."""
    space = code[p, M0]
    generic = space == SP_GENERIC
    if space != SP_SHARED and space != SP_GLOBAL and not generic:
        return False
    tk, tb, n = code[p, TK], code[p, TB], code[p, M1]
    esize = max(tb // 8, 1)
    size = esize * n
    o = code[p, O0:O0 + 2]
    arow, drow = (o[1], o[0]) if op == Op.LD else (o[0], o[1])
    if generic:
        space = _generic_window(regs, w, gmask, opnd, arow)
        if space < 0:
            return False
    mem = smem if space == SP_SHARED else gmem
    bias = (SHARED_WINDOW if generic else 0) if space == SP_SHARED else GLOBAL_BASE
    lowest = SHARED_BASE if space == SP_SHARED else 0     # shared: the reserved bytes fault
    t0 = 32 * w
    for lane in range(32):                      # check every lane first: a fault changes nothing
        if not (gmask >> lane) & 1:
            continue
        addr = lane_address(regs[w, lane], opnd, arow)
        off = addr - bias
        if space == SP_SHARED:
            off = shared_offset(off, smem)
        if (off < lowest or off > mem.shape[0] - size
                or (space == SP_GLOBAL and off + size > ends[off >> PAGE_SHIFT])):
            set_fault(fault, FAULT_OUT_OF_RANGE, t0 + lane, addr, size)
            fault[5] = space
            return False
        if misaligned(off, size):
            set_fault(fault, FAULT_MISALIGNED, t0 + lane, addr, size)
            fault[5] = space
            return False
        if space == SP_SHARED and (overwritten(pend_map, off, size, t0 + lane, addr, fault) if op == Op.ST else
                                   raced(pend_map, off, size, t0 + lane, addr, fault)):
            return False
    san = sstate[S_ON] == ON_SANITIZE or sstate[S_ON] != 0 and space != SP_SHARED   # access sets: global only
    flags = code[p, M2]
    for lane in range(32):
        if not (gmask >> lane) & 1:
            continue
        addr = lane_address(regs[w, lane], opnd, arow)
        off = addr - bias
        if space == SP_SHARED:
            off = shared_offset(off, smem)
        if san and op == Op.LD:
            shadow_access(shadow, sstate, finds, space, off, size, t0 + lane, p, 0, flags, 0, mem)
        elif san:                               # each element's write, recorded before the bytes change
            for j in range(n):
                row = opnd[drow, SLOT] + j if n > 1 else drow
                if opnd[row, KIND] == K_REG or opnd[row, KIND] == K_IMM:
                    shadow_access(shadow, sstate, finds, space, off + j * esize, esize, t0 + lane, p, 1, flags,
                                  lane_get(regs, w, lane, opnd[row, KIND], opnd[row, SLOT], opnd[row, NW],
                                           opnd[row, IMM], 0), mem)
        lane_transfer(op, regs, w, lane, opnd, drow, n, esize, tk, tb, mem, off)
    advance(pc, t0, group)
    return True


@njit(cache=True, inline="always")
def lane_transfer(op, regs, w, lane, opnd, drow, n, esize, tk, tb, mem, off):
    """One lane's ``ld``/``st`` of ``n`` elements of ``esize`` bytes between its registers (operand row ``drow``, a
    vector's rows after it) and ``mem`` from byte ``off``, checked already; a load sign-extends ``.s`` types, a store
    skips ``_`` elements. Shared by the CTA's own spaces (:func:`warp_shared_global`) and distributed shared memory
    (:func:`warpsim.ptx.families.cluster.warp_dsmem`)."""
    for j in range(n):
        row = opnd[drow, SLOT] + j if n > 1 else drow
        k, sl, nw = opnd[row, KIND], opnd[row, SLOT], opnd[row, NW]
        if op == Op.LD:
            v = read_bytes(mem, off + j * esize, esize)
            if tk == TK_S:
                v = sext(v, tb)
            lane_put(regs, w, lane, k, sl, nw, v)
        elif k == K_REG or k == K_IMM:
            write_bytes(mem, off + j * esize, esize, lane_get(regs, w, lane, k, sl, nw, opnd[row, IMM], 0))
