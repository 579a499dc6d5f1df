"""The ``@njit`` interpreter: one CTA of a decoded kernel, with a program counter per thread.

Scheduling (independent thread scheduling, as on sm_70+, made deterministic):

- warps run one after another: warp 0 runs until every one of its threads has exited or waits at a
  barrier, then warp 1, ...; when no warp can run, barriers whose count is reached release their
  threads and the round starts again;
- a warp step executes ONE instruction for the group of the warp's running threads whose pc is
  the smallest (the minimum-pc policy); when the last step was an instruction every live lane of the warp ran
  (converged) and that only moved them to the next row (arithmetic, ``ld``/``st``, fences), the next group is known
  without scanning the lanes; a lane waiting at an ``mbarrier.try_wait`` counts as being at its pc, so
  the warp's lanes further on wait for it (the warp yields) as they would at the GPU's reconvergence point. In the code compilers emit, the not-taken side of a
  branch and the exit of a loop lie at higher addresses than the code still to run, so the
  lanes that went ahead wait there until the others arrive, and the warp reconverges: after an
  if/else at the join label, after a loop with lane-dependent trip counts at its exit.

``.aligned`` warp instructions (``mma``, ``ldmatrix``, ``stmatrix``, ``bar.sync``) need every
non-exited lane of the warp in the group, else the step faults (``FAULT_DIVERGENT``). ``shfl/vote/match.sync``
and ``bar.warp.sync`` wait for every lane of their member mask, as the GPU does: a group that reaches one before
the other members is set aside (not a step), the warp's other lanes run on by the same policy, and the
instruction runs once the members are all there (the lanes set aside at the same pc join the group). Members
that can no longer come (exited, or every other lane set aside or waiting at a barrier) are a
``FAULT_DIVERGENT``.

Faults fill ``fault`` (``int64[8]``: code, thread, value, extra, pc, space, warp, aux) and stop.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from warpsim.isa.faults import (FAULT_DEADLOCK, FAULT_DIVERGENT, FAULT_MBARRIER_DEADLOCK, FAULT_STEP_LIMIT,
                                FAULT_WGMMA_PENDING, set_fault)
from warpsim.ptx.codes import ABSENT, CTX, CTX_NRANKS, CTX_YIELD, EXITED, MAX_PENDING, PRINT_ARGS, RUNNING, WAITING
from warpsim.ptx.families.barriers import SETMAXNREG
from warpsim.ptx.families.cluster import cluster_waiters, generic_dsmem, warp_bar_cluster, warp_dsmem, warp_own_shared
from warpsim.ptx.memory import SP_DSMEM, SP_GENERIC
from warpsim.ptx.rows import GNEG, GUARD, M0, M1, OP
from warpsim.ptx.shadow import ON_SANITIZE, S_EPOCH, S_ON, S_ROWS, S_STEP, barrier_released
from warpsim.ptx.opcodes import Op
from warpsim.ptx.families import (sync_members, thread_arith, thread_ld_st, thread_op, wake_mbarrier_waiters,
                                   warp_bulk_copy, warp_collective, warp_cp_async, warp_exit, warp_ld_param,
                                   warp_mbarrier, warp_shared_global, warp_simple, warp_special, wgmma_touch)
from warpsim.ptx.families.mbarrier import MBARRIER_WAIT, mbarrier_row

__all__ = ["run_cta", "uses_hopper", "HOPPER_OPS", "CTX", "RUNNING", "EXITED", "WAITING", "ABSENT", "MAX_PENDING",
           "PRINT_ARGS"]

HOPPER_OPS = (Op.WGMMA, Op.MBARRIER, Op.CP_BULK, Op.BAR_CLUSTER)    # the rows run_cta's ``hopper`` families run


def uses_hopper(code, ranks):
    """Whether a decoded kernel (``code``, its rows) launched in clusters of ``ranks`` CTAs needs :func:`run_cta`'s
    ``hopper`` families: a row of :data:`HOPPER_OPS`, an ``ld``/``st``/``atom`` of distributed shared memory, or a
    cluster of several CTAs (whose generic addresses may be another CTA's shared memory)."""
    ops = code[:, OP]
    if ranks > 1 or np.isin(ops, np.array(HOPPER_OPS, np.int64)).any():
        return True
    memory = (ops == Op.LD) | (ops == Op.ST) | (ops == Op.ATOM)
    return bool((code[memory, M0] == SP_DSMEM).any())


@intrinsic
def host_cycles(typingctx):
    """The host's cycle counter (``llvm.readcyclecounter``: the TSC on x86-64), int64; differences only."""
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=ir.FunctionType(i64, []))
        return builder.call(fn, [])
    return types.int64(), codegen


@njit(cache=True, inline="always")
def _next_group(t0, status, pc, bar_id, parked):
    """The warp at thread ``t0``'s next step: ``(p, group, alive, p_mbar)``, the smallest pc of its running lanes not
    set aside (``parked``), the lanes there, its live lanes (running or waiting) and the smallest pc of a lane
    waiting at an mbarrier's try_wait (``1 << 62`` for none)."""
    big = np.int64(1) << 62
    p = big
    p_mbar = big
    alive = np.int64(0)
    group = np.int64(0)
    for lane in range(32):
        s = status[t0 + lane]
        if s == RUNNING and not (parked >> lane) & 1:
            q = pc[t0 + lane]
            if q < p:
                p = q
                group = np.int64(1) << lane
            elif q == p:
                group |= np.int64(1) << lane
        elif s == WAITING and bar_id[t0 + lane] == MBARRIER_WAIT and pc[t0 + lane] < p_mbar:
            p_mbar = pc[t0 + lane]
        if s == RUNNING or s == WAITING:
            alive |= np.int64(1) << lane
    return p, group, alive, p_mbar


@njit(cache=True)
def run_cta(code, opnd, copies, regs, pc, status, bar_id, bars, stack, depth, ccf, smem, gmem, ends, local, const,
            kparam, fparam, pend, npend, groups, pend_map, ctx, clocks, counts, mma_arch, wgpend, mbar, prbuf, prrec,
            nprint, fault, mt, cycles, shadow, sstate, finds, order, csmem, cmbar, cl, blog, hopper):
    """Run one CTA to its end (every thread exited) or to a fault; see the module docstring.

    Returns True when the CTA finished. ``ctx[13]`` counts the warp instructions executed (also
    across calls); at ``ctx[14]`` of them it stops with ``FAULT_STEP_LIMIT`` before executing the
    next one. Every bit of state is in the arguments (``bars``: ``int64[2, 16]``, threads arrived
    and expected per barrier), so a call with a larger ``ctx[14]`` resumes where it stopped.

    ``shadow, sstate, finds``: the sanitizer's state (:mod:`warpsim.ptx.shadow`); ``sstate[S_ON] == 0`` for a plain
    run. When on, ``sstate[S_STEP]`` is the step of the warp instruction executing and ``sstate[S_EPOCH]`` counts the
    barrier releases.

    ``wgpend``: the wgmma in-flight table (:func:`warpsim.ptx.families.wgmma.new_pending`): an instruction other than
    ``wgmma`` that touches a register a ``wgmma.mma_async`` not yet waited for owns is ``FAULT_WGMMA_PENDING``.

    ``mbar``: the CTA's mbarrier objects (:mod:`warpsim.ptx.families.mbarrier`); a thread at a ``try_wait`` whose
    phase has not completed waits (``WAITING``, ``bar_id`` ``MBARRIER_WAIT``) until no warp can run and the phase
    has completed; one that can never go on is ``FAULT_MBARRIER_DEADLOCK``.

    ``csmem``, ``cmbar``: every CTA's shared memory and mbarrier table in the cluster (``smem`` and ``mbar`` are row
    ``ctx[CTX_RANK]`` of them); ``cl``: per thread, 1 once it arrived at ``barrier.cluster`` and until the launch
    releases it (:mod:`warpsim.ptx.families.cluster`). When no warp can run and nothing of this CTA releases, a CTA
    of a cluster of several (``ctx[CTX_NRANKS] > 1``) or one with threads at ``barrier.cluster.wait`` returns False
    with ``ctx[CTX_YIELD]`` set and no fault: the launch runs the cluster's other CTAs, releases the cluster barrier,
    and calls again.

    ``blog``: the CTA's log of the bulk copies (TMA) its threads issued (:func:`warpsim.ptx.families.bulk_copy.log_bulk`;
    zero rows: none kept).

    ``hopper``: None for a kernel that uses none of sm_90's asynchronous and cluster instructions (:func:`uses_hopper`:
    ``wgmma``, ``mbarrier``, ``cp.async.bulk`` and TMA, ``barrier.cluster``, distributed shared memory, a cluster of
    several CTAs), else any array. Numba decides ``hopper is not None`` when it compiles (a branch on an argument's
    type is pruned before typing), so for such a kernel the interpreter is compiled without those families: a first
    run compiles less.

    ``order``: ``int64[warps]``, the order in which the warps take turns (``arange``: the simulator's own; the
    sanitizer's schedule check runs others). ``cycles``: empty, or ``int64[code rows, 2]``: for each row, the host cycles (:func:`host_cycles`) from
    each of its warp instructions' scheduling to the next one's, and how many it executed (a profile; the
    schedule and the results do not change).
    """
    warps = regs.shape[0]
    ctx[CTX_YIELD] = 0
    bar_arrived = bars[0]
    bar_expect = bars[1]
    steps = ctx[13]
    max_steps = ctx[14]
    big = np.int64(1) << 62
    profile = cycles.shape[0] > 0
    san = sstate[S_ON] == ON_SANITIZE
    last_p = np.int64(-1)
    last_t = np.int64(0)
    while True:
        for k in range(warps):
            w = order[k]
            t0 = 32 * w
            parked = np.int64(0)                    # lanes set aside at a .sync collective until its members come
            straight = False                        # the last step moved every live lane of the warp to p + 1
            p = big
            alive = np.int64(0)
            group = np.int64(0)
            while True:
                if profile:
                    now = host_cycles()
                    if last_p >= 0:
                        cycles[last_p, 0] += now - last_t
                    last_p, last_t = np.int64(-1), now
                if straight:                        # converged: the same lanes at the next row, nothing to scan
                    straight = False
                    p += 1
                    op = code[p, OP]
                else:
                    p, group, alive, p_mbar = _next_group(t0, status, pc, bar_id, parked)
                    if p_mbar < p and not parked:   # lanes behind a try_wait hold the warp's others back, as the
                        break                       # GPU's reconvergence does (the warp yields until they go on)
                    if p == big:
                        if parked:                  # set aside, and the members they wait for cannot come
                            lane0 = 0
                            while not (parked >> lane0) & 1:
                                lane0 += 1
                            set_fault(fault, FAULT_DIVERGENT, t0 + lane0, parked, alive)
                            fault[4] = pc[t0 + lane0]
                            fault[6] = w
                            ctx[13] = steps
                            return False
                        break
                    op = code[p, OP]
                    if parked:                      # the lanes set aside at this pc join the group
                        for lane in range(32):
                            if (parked >> lane) & 1 and pc[t0 + lane] == p:
                                group |= np.int64(1) << lane
                gmask = group
                g = code[p, GUARD]
                if g >= 0:
                    neg = code[p, GNEG]
                    for lane in range(32):
                        if (group >> lane) & 1 and (regs[w, lane, g] & 1) == neg:
                            gmask &= ~(np.int64(1) << lane)
                members = np.int64(-1)
                if op == Op.SHFL or op == Op.VOTE or op == Op.MATCH or op == Op.BAR:
                    members = sync_members(p, op, w, gmask, code, opnd, regs)
                if members >= 0:
                    coming = np.int64(0)            # members still running elsewhere in the warp
                    for lane in range(32):
                        if (members >> lane) & 1 and not (group >> lane) & 1 and status[t0 + lane] == RUNNING \
                                and not (parked >> lane) & 1:
                            coming |= np.int64(1) << lane
                    if coming:
                        parked |= group
                        continue
                parked &= ~group
                steps += 1
                if steps > max_steps:
                    ctx[13] = steps - 1                     # this instruction did not execute
                    set_fault(fault, FAULT_STEP_LIMIT, t0, max_steps, 0)
                    fault[4] = p
                    return False
                if hopper is not None:              # (pruned where the kernel has no wgmma: see the docstring)
                    if wgpend[w, regs.shape[2] + 1] > 0 and op != Op.WGMMA:
                        s_ = wgmma_touch(p, code, opnd, wgpend[w], regs.shape[2])
                        if s_ >= 0:
                            lane0 = 0
                            while not (group >> lane0) & 1:
                                lane0 += 1
                            set_fault(fault, FAULT_WGMMA_PENDING, t0 + lane0, s_, 0)
                            fault[4] = p
                            fault[6] = w
                            ctx[13] = steps - 1
                            return False
                counts[op] += 1
                if profile:
                    cycles[p, 1] += 1
                    last_p = p
                clocks[w] += 1
                if san:
                    sstate[S_STEP] = steps
                    sstate[sstate[S_ROWS] + p] += 1
                if op == Op.BAR or op == Op.LDMATRIX or op == Op.STMATRIX or op == Op.MMA or op == Op.SHFL \
                        or op == Op.VOTE or op == Op.MATCH or op == Op.ACTIVEMASK or op == Op.REDUX or op == Op.WGMMA:
                    for lane in range(32):
                        if (group >> lane) & 1 and not (gmask >> lane) & 1:
                            pc[t0 + lane] += 1
                    if gmask != 0 and not warp_collective(p, op, w, gmask, alive, code, opnd, regs, pc, status, smem,
                                                   pend_map, bar_arrived, bar_expect, bar_id, mma_arch, wgpend, fault,
                                                   shadow, sstate, finds, hopper):
                        fault[4] = p
                        fault[6] = w
                        ctx[13] = steps
                        return False
                    continue
                if hopper is not None:              # sm_90's asynchronous and cluster families
                    if op == Op.MBARRIER or op == Op.CP_BULK:
                        if not (warp_mbarrier(p, w, gmask, group, code, opnd, regs, pc, status, bar_id, smem, gmem,
                                              ends, local, const, kparam, fparam, mbar, pend, npend, groups, pend_map,
                                              fault, cmbar, ctx)
                                if op == Op.MBARRIER else
                                warp_bulk_copy(p, w, gmask, group, code, opnd, regs, pc, smem, gmem, ends, local,
                                               const, kparam, fparam, mbar, fault, csmem, cmbar, ctx, pend_map, blog,
                                               steps - 1)):
                            fault[4] = p
                            fault[6] = w
                            ctx[13] = steps
                            return False
                        continue
                    if op == Op.BAR_CLUSTER or ((op == Op.LD or op == Op.ST or op == Op.ATOM) and (
                            code[p, M0] == SP_DSMEM or code[p, M0] == SP_GENERIC and ctx[CTX_NRANKS] > 1
                            and generic_dsmem(p, w, gmask, code, opnd, regs, ctx))):
                        if not (warp_bar_cluster(p, w, group, gmask, alive, code, pc, status, bar_id, cl, fault)
                                if op == Op.BAR_CLUSTER else
                                warp_dsmem(p, op, w, group, gmask, code, opnd, regs, pc, csmem, ctx, fault)):
                            fault[4] = p
                            fault[6] = w
                            ctx[13] = steps
                            return False
                        continue
                if op == Op.LD and warp_ld_param(p, w, group, gmask, code, opnd, regs, pc, gmem, ends, smem, local,
                                                 const, kparam, fparam, fault):
                    straight = group == alive and not parked
                    continue
                if op == Op.LD or op == Op.ST:
                    if warp_shared_global(p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, ends, pend_map,
                                          fault, shadow, sstate, finds):
                        straight = group == alive and not parked
                        continue
                    if fault[0] != 0:
                        fault[4] = p
                        fault[6] = w
                        ctx[13] = steps
                        return False
                if op == Op.MOV and warp_special(p, w, group, gmask, code, opnd, regs, pc, ctx, clocks[w]):
                    straight = group == alive and not parked       # %tid.x, %laneid, ...
                    continue
                if op == Op.MAPA and code[p, M0] == 2 \
                        and warp_own_shared(p, w, group, gmask, code, opnd, regs, pc, ctx):
                    straight = group == alive and not parked       # a .shared variable's address
                    continue
                if op == Op.FENCE and code[p, M0] == SETMAXNREG:   # the warp's register budget, kept for its role
                    wgpend[w, wgpend.shape[1] - 1] = code[p, M1]
                if warp_simple(p, op, w, group, gmask, code, opnd, regs, pc, mt, sstate):
                    straight = op != Op.BRA and group == alive and not parked
                    continue
                if op >= Op.CP_ASYNC and op <= Op.CP_WAIT_ALL and warp_cp_async(
                        p, op, w, group, gmask, code, opnd, regs, pc, smem, gmem, ends, pend, npend, groups, pend_map,
                        shadow, sstate, finds):
                    continue
                if (op == Op.RET or op == Op.EXIT) and warp_exit(p, op, w, group, gmask, pc, status, depth, npend):
                    continue
                for lane in range(32):
                    if not (group >> lane) & 1:
                        continue
                    t = t0 + lane
                    if not (gmask >> lane) & 1:
                        pc[t] += 1
                        continue
                    if thread_arith(p, op, t, lane, w, code, opnd, regs[w, lane], pc, ccf, ctx, clocks[w], mt):
                        continue
                    if op == Op.LD or op == Op.ST:
                        if not thread_ld_st(p, op, t, code, opnd, regs[w, lane], smem, gmem, ends, local, const, kparam,
                                            fparam, pend_map, pc, fault, shadow, sstate, finds):
                            fault[4] = p
                            fault[6] = w
                            ctx[13] = steps
                            return False
                        continue
                    if not thread_op(p, op, t, lane, w, code, opnd, copies, regs[w, lane], pc, status, stack,
                                    depth, ccf, smem, gmem, ends, local, const, kparam, fparam, pend, npend, groups,
                                    pend_map, ctx, clocks[w], prbuf, prrec, nprint, fault, mt, shadow, sstate, finds):
                        fault[4] = p
                        fault[6] = w
                        ctx[13] = steps
                        return False
        # every warp waits or has exited: release the barriers whose count is reached
        alive_threads = 0
        waiting = 0
        for t in range(status.shape[0]):
            if status[t] == RUNNING or status[t] == WAITING:
                alive_threads += 1
            if status[t] == WAITING:
                waiting += 1
        if waiting == 0:
            ctx[13] = steps
            return True
        released = False
        if hopper is not None:
            released = wake_mbarrier_waiters(code, opnd, regs, pc, status, bar_id, smem, gmem, ends, local, const,
                                             kparam, fparam, mbar, fault) > 0
        for b in range(16):
            need = bar_expect[b] if bar_expect[b] > 0 else alive_threads
            if bar_arrived[b] > 0 and bar_arrived[b] >= need:
                if san:
                    barrier_released(b, pc, status == WAITING, bar_id, ctx[9], alive_threads, bar_expect[b] > 0,
                                     sstate, finds)
                for t in range(status.shape[0]):
                    if status[t] == WAITING and bar_id[t] == b:
                        status[t] = RUNNING
                bar_arrived[b] = 0
                bar_expect[b] = 0
                released = True
                if san:
                    sstate[S_EPOCH] += 1
        if hopper is not None:
            if not released and (ctx[CTX_NRANKS] > 1 or cluster_waiters(status, bar_id) > 0):
                ctx[13] = steps                     # the cluster's other CTAs (or its barrier) may free this one
                ctx[CTX_YIELD] = 1
                return False
            if not released:
                for t in range(status.shape[0]):
                    if status[t] == WAITING and bar_id[t] == MBARRIER_WAIT:
                        row = mbarrier_row(pc[t], t, code, opnd, regs[t // 32, t % 32], smem, gmem, ends, local,
                                           const, kparam, fparam, mbar)
                        set_fault(fault, FAULT_MBARRIER_DEADLOCK, t, row, 0)
                        fault[4] = pc[t]
                        fault[6] = t // 32
                        ctx[13] = steps
                        return False
        if not released:
            ctx[13] = steps
            set_fault(fault, FAULT_DEADLOCK, 0, waiting, alive_threads)
            fault[4] = -1
            return False
