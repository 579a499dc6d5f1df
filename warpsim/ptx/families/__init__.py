"""PTX instruction families: one home per family, where its decoding and its execution meet.

A family is the instructions that share operands, state and semantics: one module here (or one subpackage once it
outgrows ~500 lines) holding

- its **decoder mixin** (``DECODER``): the ``do_<op>`` methods that check an instruction's modifiers and operands
  and emit its row (:mod:`warpsim.ptx.decode`'s columns; the checks every family shares:
  :class:`~warpsim.ptx.families.common.FamilyDecoder`);
- its **execution**, ``@njit`` functions on the decoded rows: ``thread_<family>`` (one thread's instruction, its pc
  advanced, False on a fault) and/or ``warp_<family>`` (the lanes of a warp at once; for a per-thread family a fast
  path that returns False for the forms it leaves to the thread path);

while the bit-exact semantics stay one layer down, in :mod:`warpsim.isa` (fragment tables, ``warp_mma``,
``warp_ldmatrix``, the float and SFU models): the family module reads operands and writes results, the isa
computes. Operands are read and written through :mod:`warpsim.ptx.operands`.

=============== ==================================================== ==========================================
family          instructions                                         semantics (``warpsim.isa``)
=============== ==================================================== ==========================================
``integer``     integer/bit ALU, ``setp selp slct mov cvt cvta``      ``alu`` (``warpsim.ptx.alu``), ``cvt``
``floats``      every float-typed instruction, MUFU                  ``fparith fpcompare fp64 cvt mufu*
                                                                     sfu_* hostfloat``
``memory``      ``ld ldu st atom red``                               spaces: ``warpsim.ptx.memory``
``async_copy``  ``cp.async`` + ``commit_group``/``wait_group``/...   (queues in the interpreter's state)
``bulk_copy``   ``cp.async.bulk``, ``cp.async.bulk.tensor`` (TMA)       ``tma`` (the tensor map, the tile copy)
``mbarrier``    ``mbarrier`` (``init arrive expect_tx try_wait``...) (its table in the interpreter's state)
``collectives`` ``shfl vote match redux activemask`` (``.sync``)     -
``barriers``    ``bar barrier`` (``.sync .arrive .warp.sync``),      -
                fences, ``membar nanosleep prefetch ...``
``cluster``     ``mapa``, ``barrier.cluster``, ``ld``/``st``           (the cluster's CTAs: ``warpsim.ptx.launch``)
                ``.shared::cluster``
``ldmatrix``    ``ldmatrix stmatrix``                                ``ldmatrix``, ``fragments``
``mma``         ``mma.sync``                                         ``mma``, ``fragments``, ``arith``
``wgmma``       ``wgmma`` (sm_90a: ``mma_async``, ``fence``,           ``wgmma``, ``fragments``, ``arith``
                ``commit_group``, ``wait_group``)
``control``     ``bra call ret exit trap``, ``vprintf``,             -
                ``__assertfail``
=============== ==================================================== ==========================================

Dispatch: :data:`FAMILIES` is the one list. The decoder class is built from it
(``InstructionDecoder(*[family.DECODER for family in FAMILIES])``; ``instruction()`` finds ``do_<op>`` by the
:class:`~warpsim.ptx.opcodes.Op` name), and the interpreter's switches below it (``thread_op``,
``warp_collective``, ``warp_simple``: one branch per family, each a direct call of that family's ``@njit``
function, compiled and linked by Numba: no Python-level or first-class-function dispatch) are
what :mod:`warpsim.ptx.interp` calls.

Adding a family (``wgmma``, sm_90, as the example):

1. ``warpsim/isa/wgmma.py``: the semantics and the fragment tables (the warpgroup's lane/register <-> (row, col)
   maps as data, as :mod:`warpsim.isa.fragments` does for ``mma.sync``; the accumulation model);
2. ``warpsim/ptx/families/wgmma.py``: ``WgmmaDecoder.do_wgmma`` (shape, types, the shared-memory matrix
   descriptors) and ``warp_wgmma``, which calls the isa once the four warps of the warpgroup have arrived (a
   warpgroup collective: each warp parks at the row as at ``bar.sync``, the fourth runs it); ``wgmma.fence``,
   ``commit_group`` and ``wait_group`` beside it;
3. the registration: the ``Op`` code and name in :mod:`warpsim.ptx.opcodes` (``WGMMA = 59``,
   ``"wgmma": Op.WGMMA``; its ``NOT_YET`` entry dropped), and here the module in :data:`FAMILIES` and one branch
   in ``warp_collective``.

The arrival state of a warpgroup (like ``bar_arrived``) would be the one thing outside those files: an array of
the interpreter's state (:mod:`warpsim.ptx.interp`, allocated by :mod:`warpsim.ptx.launch`).
"""

from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.scratch import njit_borrowing
from warpsim.ptx.families import (async_copy, barriers, bulk_copy, cluster, collectives, control, floats, integer,
                                  ldmatrix, mbarrier, memory, mma, wgmma)
from warpsim.ptx.families.async_copy import thread_cp_async, warp_cp_async
from warpsim.ptx.families.barriers import warp_barrier
from warpsim.ptx.families.cluster import thread_mapa, thread_own_shared
from warpsim.ptx.families.collectives import sync_members, warp_collectives
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.families.control import thread_control, warp_branch, warp_exit
from warpsim.ptx.families.floats import thread_float, warp_float_rows
from warpsim.ptx.families.integer import thread_integer, warp_integer, warp_special
from warpsim.ptx.families.ldmatrix import warp_matrix
from warpsim.ptx.families.memory import thread_atom, thread_ld_st, warp_ld_param, warp_shared_global
from warpsim.ptx.families.bulk_copy import warp_bulk_copy
from warpsim.ptx.families.mbarrier import wake_mbarrier_waiters, warp_mbarrier
from warpsim.ptx.families.mma import warp_mma_sync
from warpsim.ptx.families.wgmma import warp_wgmma_op, wgmma_touch
from warpsim.ptx.opcodes import OPCODES, Op, not_supported_yet, supported_names, type_of
from warpsim.ptx.operands import advance
from warpsim.ptx.rows import M0
from warpsim.ptx.shadow import ON_SANITIZE, S_ON, shadow_fence

__all__ = ["FAMILIES", "InstructionDecoder", "thread_arith", "thread_ld_st", "warp_ld_param", "warp_exit", "thread_op", "warp_collective", "warp_simple", "sync_members",
           "warp_cp_async", "warp_shared_global", "wgmma_touch", "warp_mbarrier", "wake_mbarrier_waiters",
           "warp_bulk_copy", "warp_special"]

# the families, one entry each
FAMILIES = (integer, floats, memory, async_copy, bulk_copy, mbarrier, collectives, barriers, cluster, ldmatrix, mma,
            wgmma, control)


class InstructionDecoder(*(family.DECODER for family in FAMILIES), FamilyDecoder):
    """The per-instruction half of the decoder (:class:`warpsim.ptx.decode._Decoder`): ``instruction(fn, ins)``
    sends a float-typed instruction to the float family (``float_instruction``), any other to the ``do_<op>`` method
    of its :class:`~warpsim.ptx.opcodes.Op` (``do_alu`` for the arithmetic ones). Unknown instructions are a
    ``PtxSyntaxError`` listing the supported ones; types and shapes warpsim does not model are an
    ``UnsupportedType``."""

    def instruction(self, fn, ins):
        name = ins.opcode
        mods = ins.mods
        types = type_of(mods)
        ops = ins.operands
        refused = not_supported_yet(name_of(ins))
        if refused is not None:
            raise UnsupportedType(f"{self.m.filename}:{ins.token.line}:{ins.token.col}: {refused}")
        if self.float_instruction(fn, ins):
            return
        if name not in OPCODES:
            raise self.error(ins.token, f"unknown instruction {name!r} (supported: "
                                        f"{', '.join(supported_names())})")
        op = OPCODES[name]
        handler = getattr(self, f"do_{op.name.lower()}", None)
        if handler is None:
            handler = self.do_alu
        try:
            handler(fn, ins, op, mods, types, ops)
        except (IndexError, KeyError) as exc:
            raise self.error(ins.token, f"malformed operands for {name}.{'.'.join(mods)} ({exc})") from None


@njit(cache=True, inline="always")
def thread_arith(p, op, t, lane, w, code, opnd, r, pc, ccf, ctx, clock, mt):
    """:func:`thread_op` for the integer and float families, which never fault, in a call of few arrays: True when it
    ran ``op``, False when ``op`` is another family's (the interpreter then calls :func:`thread_op`, or
    ``thread_ld_st`` for ``ld``/``st``). The split is for speed: passing the 30 arrays of :func:`thread_op` costs some
    1,400 host cycles a lane (``mov.u32 %r, %tid.x`` took 43,600 cycles a warp instruction through it, 4,500 through
    this; Numba cannot inline it)."""
    if op <= Op.CVTA:
        return thread_integer(p, op, t, lane, w, code, opnd, r, pc, ccf, ctx, clock)
    if op >= Op.FARITH and op <= Op.FCVT:
        return thread_float(p, op, t, code, opnd, r, pc, mt)
    return False


@njit_borrowing
def thread_op(p, op, t, lane, w, code, opnd, copies, r, pc, status, stack, depth, ccf, smem, gmem, ends, local,
              const, kparam, fparam, pend, npend, groups, pend_map, ctx, clock, prbuf, prrec, nprint, fault, mt,
              shadow, sstate, finds):
    """One thread's instruction (not warp-collective), by its family; advances its pc. False on a fault."""
    if thread_arith(p, op, t, lane, w, code, opnd, r, pc, ccf, ctx, clock, mt):
        return True
    if op == Op.MAPA:
        if code[p, M0] == 2:
            return thread_own_shared(p, t, code, opnd, r, pc, ctx)
        return thread_mapa(p, t, code, opnd, r, pc, ctx, fault)
    if op == Op.LD or op == Op.ST:
        return thread_ld_st(p, op, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, pend_map, pc, fault,
                            shadow, sstate, finds)
    if op == Op.ATOM:
        return thread_atom(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, pend_map, pc, fault,
                           shadow, sstate, finds)
    if op >= Op.CP_ASYNC and op <= Op.CP_WAIT_ALL:
        return thread_cp_async(p, op, t, code, opnd, r, pc, smem, gmem, ends, local, const, kparam, fparam, pend, npend,
                               groups, pend_map, fault, shadow, sstate, finds)
    if op >= Op.BRA and op <= Op.PRINTF:
        return thread_control(p, op, t, code, opnd, copies, pc, status, stack, depth, smem, gmem, ends, local, const,
                              kparam, fparam, pend, npend, groups, pend_map, prbuf, prrec, nprint, fault)
    pc[t] += 1                                                  # fences
    return True


@njit(cache=True, inline="always")       # inlined: its callees borrow their arrays, it would count them
def warp_collective(p, op, w, gmask, alive, code, opnd, regs, pc, status, smem, pend_map, bar_arrived, bar_expect,
                    bar_id, mma_arch, wgpend, fault, shadow, sstate, finds, hopper):
    """A warp-collective instruction for the lanes of ``gmask`` (guard true), by its family; False on a fault.
    ``hopper``: :func:`warpsim.ptx.interp.run_cta`'s (None: no ``wgmma`` in the kernel, its family not compiled)."""
    if op == Op.BAR and code[p, M0] != 2:
        return warp_barrier(p, w, gmask, alive, code, opnd, regs, pc, status, bar_arrived, bar_expect, bar_id, fault)
    if op == Op.MMA:
        return warp_mma_sync(p, w, gmask, code, opnd, regs, pc, mma_arch, fault)
    if op == Op.WGMMA and hopper is not None:
        return warp_wgmma_op(p, w, gmask, code, opnd, regs, pc, smem, mma_arch, wgpend, fault, pend_map)
    if op == Op.LDMATRIX or op == Op.STMATRIX:
        return warp_matrix(p, op, w, gmask, code, opnd, regs, pc, smem, pend_map, fault, shadow, sstate, finds)
    return warp_collectives(p, op, w, gmask, code, opnd, regs, pc, fault, sstate, finds)


@njit_borrowing
def warp_simple(p, op, w, group, gmask, code, opnd, regs, pc, mt, sstate):
    """The per-thread instructions with a warp-wide path, for a whole group at once (``bra``, fences, the float
    family, the common integer forms); False for any other, which then runs thread by thread (:func:`thread_op`)."""
    if op == Op.BRA:
        return warp_branch(p, w, group, gmask, code, opnd, pc)
    if op >= Op.FARITH and op <= Op.FCVT:
        return warp_float_rows(p, op, w, group, gmask, code, opnd, regs, pc, mt)
    if op == Op.FENCE or op == Op.NOP:
        if sstate[S_ON] == ON_SANITIZE and op == Op.FENCE and code[p, M0] == 1:         # a fence that orders memory
            for lane in range(32):
                if (gmask >> lane) & 1:
                    shadow_fence(sstate, 32 * w + lane)
        advance(pc, 32 * w, group)
        return True
    return warp_integer(p, op, w, group, gmask, code, opnd, regs, pc)
