"""Thread block clusters (sm_90): ``mapa``, ``getctarank``, ``barrier.cluster``, and distributed shared memory
(``ld``/``st``/``atom``/``red`` ``.shared::cluster`` to any CTA of the cluster), decoded and executed; the cluster's special registers are the
integer family's (:mod:`warpsim.ptx.families.integer`), its TMA multicast the bulk copies'
(:mod:`warpsim.ptx.families.bulk_copy`), its remote ``mbarrier.arrive`` the mbarrier family's.

The CTAs of one cluster run together (:mod:`warpsim.ptx.launch`): each has its own registers, shared memory and
mbarrier table, and the interpreter reaches the others' through ``csmem`` (``uint8[ranks, bytes]``) and ``cmbar``
(``int64[ranks, MAX_MBARRIERS, 6]``), its own being row ``ctx[CTX_RANK]``. A CTA that can go no further (every
thread waits or has exited, and no barrier of its own releases) yields to the next CTA of the cluster
(``ctx[CTX_YIELD]`` set, :func:`warpsim.ptx.interp.run_cta` returns); the launch releases ``barrier.cluster`` when
every non-exited thread of the cluster has arrived (:func:`cluster_release`) and reports a deadlock when no CTA can
go on.

Addresses, as an H100 gives them (``examples/hopper/cluster_probe.cu``, conformance/h100/hopper-tma-fourth-run/): a
``.shared::cluster`` address is ``rank << 24 | offset``; in a launch of clusters of several CTAs every CTA's own
shared addresses carry its rank the same way (a ``.shared`` variable at 0x400 is 0x1000400 in the CTA of rank 1:
``mov`` of its address runs :func:`thread_own_shared`), and ``mapa.shared::cluster.u32 d, a, r`` puts ``r`` there
(:func:`cluster_address`). ``mapa.u64`` does the same inside the generic shared window. A shared access of the CTA
takes addresses with its own rank or none (:func:`warpsim.ptx.memory.shared_offset`: the rank is kept in the CTA's
reserved shared bytes).

``barrier.cluster.arrive{.release,.relaxed}{.aligned}`` marks the thread arrived (``cl[t] = 1``);
``barrier.cluster.wait{.acquire}{.aligned}`` waits (``WAITING``, ``bar_id`` :data:`CLUSTER_WAIT`) while the thread's
arrival has not been released, then goes on; ``.aligned`` needs every non-exited lane of the warp.
"""

import numpy as np
from numba import njit

from warpsim.isa.faults import FAULT_BAD_OPERAND, FAULT_DIVERGENT, FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, set_fault
from warpsim.ptx.alu import mask
from warpsim.ptx.codes import CTX_NRANKS, CTX_RANK, RUNNING, WAITING
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.families.memory import ATOM_CAS, atomic_value, lane_transfer
from warpsim.ptx.memory import SHARED_BASE, SHARED_WINDOW, SP_GENERIC, SP_SHARED, misaligned, read_bytes, write_bytes
from warpsim.ptx.opcodes import Op
from warpsim.ptx.operands import advance, get, lane_address, lane_get, lane_put, operand_fields, put
from warpsim.ptx.rows import KIND, K_IMM, M0, M1, O0, OP, SLOT, TB, TK

__all__ = ["ClusterDecoder", "DECODER", "CLUSTER_WAIT", "RANK_SHIFT", "cluster_address", "cluster_split",
           "operand_cluster_address", "generic_dsmem",
           "thread_mapa", "thread_own_shared", "warp_own_shared", "warp_bar_cluster", "warp_dsmem", "cluster_release",
           "cluster_waiters"]

CLUSTER_WAIT = -3             # bar_id of a thread waiting at barrier.cluster.wait
RANK_SHIFT = 24               # a .shared::cluster address: the rank above bit 24, the offset below
_OFFSET = (1 << RANK_SHIFT) - 1
ARRIVE, WAIT = 0, 1


@njit(cache=True, inline="always")
def cluster_address(rank, off):
    """The ``.shared::cluster`` address of shared offset ``off`` in the CTA of rank ``rank``: the rank above bit 24,
    as an H100 gives it (``mapa``, and every CTA's own shared addresses in a cluster launch)."""
    return (np.int64(rank) << RANK_SHIFT) | (off & _OFFSET)


@njit(cache=True, inline="always")
def cluster_split(addr):
    """``(rank, offset)`` of a ``.shared::cluster`` address."""
    return addr >> RANK_SHIFT, addr & _OFFSET


@njit(cache=True, inline="always")
def operand_cluster_address(r, opnd, row, own, window=0):
    """``(rank, offset, address)`` of a ``.shared::cluster`` address operand of one thread (registers ``r``): a
    ``.shared`` variable's address written into the instruction (no base register) is the executing CTA's,
    ``own``, as its symbol is in that CTA's window on the GPU. ``window``: a generic address, the shared window's
    base (:data:`~warpsim.ptx.memory.SHARED_WINDOW`) taken off first."""
    addr = lane_address(r, opnd, row)
    if opnd[row, SLOT] < 0:
        return own, (addr - window) & _OFFSET, addr
    return (addr - window) >> RANK_SHIFT, (addr - window) & _OFFSET, addr


@njit(cache=True)
def generic_dsmem(p, w, gmask, code, opnd, regs, ctx):
    """Whether a generic ``ld``/``st``/``atom`` of a CTA in a cluster of several reaches another CTA's shared memory
    (a ``mapa.u64`` address, as ``cluster.map_shared_rank`` gives it): every lane of ``gmask`` in the shared window,
    one at least with another rank. Then it runs as :func:`warp_dsmem`; a warp whose lanes mix such addresses with
    other spaces runs thread by thread, where another CTA's shared address is out of range."""
    own = ctx[CTX_RANK]
    arow = code[p, O0] if code[p, OP] == Op.ST else code[p, O0 + 1]
    remote = False
    for lane in range(32):
        if (gmask >> lane) & 1:
            addr = lane_address(regs[w, lane], opnd, arow)
            if addr < SHARED_WINDOW or addr >= 2 * SHARED_WINDOW:
                return False
            if (addr - SHARED_WINDOW) >> RANK_SHIFT != own:
                remote = True
    return remote


class ClusterDecoder(FamilyDecoder):
    """Decodes ``mapa`` and ``barrier.cluster`` (``do_bar`` of the barriers family sends the latter here)."""

    def do_mapa(self, fn, ins, op, mods, types, ops):
        shared = any(m.startswith("shared") for m in mods)
        t = types[-1] if types else None
        if ins.opcode == "getctarank":                   # the rank of the CTA an address is in: forms 3 and 4
            if t not in ("u32", "u64") or (shared and "shared::cluster" not in mods):
                raise self.error(ins.token, f"{name_of(ins)}: expected getctarank.shared::cluster.u32|u64 or "
                                            f"getctarank.u32|u64 (generic)")
            self.count(ins, ops, 2)
            self.emit(fn, ins, op, (t, None), (3 if shared else 4, 0, 0, 0), [self.operand(fn, o) for o in ops])
            return
        if t not in ("u32", "u64") or (not shared and t != "u64"):
            raise self.error(ins.token, f"{name_of(ins)}: expected mapa.shared::cluster.u32|u64 or mapa.u64 (generic)")
        self.count(ins, ops, 3)
        self.emit(fn, ins, op, (t, None), (int(shared), 0, 0, 0), [self.operand(fn, o) for o in ops])

    def do_bar_cluster(self, fn, ins, mods, ops):
        form = ARRIVE if "arrive" in mods else WAIT if "wait" in mods else -1
        if form < 0 or ops:
            raise self.error(ins.token, f"{name_of(ins)}: expected barrier.cluster.arrive or barrier.cluster.wait "
                                        f"(no operands)")
        self.emit(fn, ins, Op.BAR_CLUSTER, mods=(form, int("aligned" in mods), 0, 0))


DECODER = ClusterDecoder


@njit(cache=True)
def thread_mapa(p, t, code, opnd, r, pc, ctx, fault):
    """``mapa``: the address of ``a``'s shared offset in the CTA of rank ``b`` (a ``.shared::cluster`` address, or
    for the generic form a generic one). A rank outside the cluster is ``FAULT_BAD_OPERAND``. ``getctarank`` (forms 3
    and 4): the rank of the CTA whose shared memory ``a`` is in, as :func:`cluster_split` reads it."""
    o = code[p, O0:]
    a = get(r, opnd, o[1])
    if code[p, M0] >= 3:                             # getctarank: a .shared::cluster (3) or generic (4) address
        if opnd[o[1], KIND] == K_IMM:                # a .shared variable: the executing CTA's
            put(r, opnd, o[0], ctx[CTX_RANK])
        else:
            put(r, opnd, o[0], cluster_split(a - (SHARED_WINDOW if code[p, M0] == 4 else 0))[0] & 0xFFFFFFFF)
        pc[t] += 1
        return True
    rank = get(r, opnd, o[2]) & 0xFFFFFFFF
    if rank >= ctx[CTX_NRANKS]:
        set_fault(fault, FAULT_BAD_OPERAND, t, rank, ctx[CTX_NRANKS])
        return False
    if code[p, M0] == 1:
        put(r, opnd, o[0], cluster_address(rank, cluster_split(a)[1]))
    else:
        put(r, opnd, o[0], SHARED_WINDOW + cluster_address(rank, cluster_split(a - SHARED_WINDOW)[1]))
    pc[t] += 1
    return True


@njit(cache=True)
def thread_own_shared(p, t, code, opnd, r, pc, ctx):
    """``mov`` of a ``.shared`` variable's address (a ``MAPA`` row of form 2): the address in the executing CTA's
    shared window, which in a launch of clusters of several CTAs carries the CTA's rank above bit 24 (as the H100's
    ``cvta.to.shared`` of it does); the variable's plain offset otherwise."""
    o = code[p, O0:]
    put(r, opnd, o[0], own_shared_address(get(r, opnd, o[1]), ctx))
    pc[t] += 1
    return True


@njit(cache=True, inline="always")
def own_shared_address(a, ctx):
    """A ``.shared`` variable's offset ``a`` as the executing CTA's address (see :func:`thread_own_shared`)."""
    return cluster_address(ctx[CTX_RANK], a) if ctx[CTX_NRANKS] > 1 else a


@njit(cache=True)
def warp_own_shared(p, w, group, gmask, code, opnd, regs, pc, ctx):
    """:func:`thread_own_shared` for the lanes of ``gmask`` of warp ``w`` at once (every kernel with a ``.shared``
    variable starts so); advances the group's pcs."""
    k0, s0, n0, _, _ = operand_fields(code, opnd, p, 0)
    k1, s1, n1, i1, g1 = operand_fields(code, opnd, p, 1)
    for lane in range(32):
        if (gmask >> lane) & 1:
            lane_put(regs, w, lane, k0, s0, n0, own_shared_address(lane_get(regs, w, lane, k1, s1, n1, i1, g1), ctx))
    advance(pc, 32 * w, group)
    return True


@njit(cache=True)
def warp_bar_cluster(p, w, group, gmask, alive, code, pc, status, bar_id, cl, fault):
    """``barrier.cluster.arrive``/``wait`` for the lanes of ``gmask``; False on a fault (``.aligned`` with lanes
    missing)."""
    t0 = 32 * w
    if code[p, M1] and gmask != alive:
        set_fault(fault, FAULT_DIVERGENT, t0, gmask, alive)
        return False
    for lane in range(32):
        if not (group >> lane) & 1:
            continue
        t = t0 + lane
        if not (gmask >> lane) & 1:
            pc[t] += 1
        elif code[p, M0] == ARRIVE:
            cl[t] = 1
            pc[t] += 1
        elif cl[t]:                                  # arrived, not yet released: wait (the pc stays)
            status[t] = WAITING
            bar_id[t] = CLUSTER_WAIT
        else:
            pc[t] += 1
    return True


@njit(cache=True)
def warp_dsmem(p, op, w, group, gmask, code, opnd, regs, pc, csmem, ctx, fault):
    """``ld``/``st``/``atom``/``red`` ``.shared::cluster``: each lane's address names a CTA of the cluster and an
    offset in its shared memory (:func:`cluster_split`); the bytes are that CTA's. Every lane is checked before any
    access (a fault changes nothing). The atomics run lane after lane, each on what the one before left (as
    :func:`~warpsim.ptx.families.memory.thread_atom` does on the CTA's own memory; a ``.f32`` add keeps subnormals,
    as on shared memory)."""
    tk, tb = code[p, TK], code[p, TB]
    n = 1 if op == Op.ATOM else code[p, M1]
    esize = max(tb // 8, 1)
    size = esize * n
    o = code[p, O0:O0 + 4]
    arow, drow = (o[0], o[1]) if op == Op.ST else (o[1], o[0])
    own, ranks, nbytes = ctx[CTX_RANK], ctx[CTX_NRANKS], csmem.shape[1]
    window = SHARED_WINDOW if code[p, M0] == SP_GENERIC else np.int64(0)
    t0 = 32 * w
    for lane in range(32):
        if not (gmask >> lane) & 1:
            continue
        rank, off, addr = operand_cluster_address(regs[w, lane], opnd, arow, own, window)
        if rank >= ranks or off < SHARED_BASE or off > nbytes - size:
            set_fault(fault, FAULT_OUT_OF_RANGE, t0 + lane, addr, size)
            fault[5] = SP_SHARED
            return False
        if misaligned(off, size):
            set_fault(fault, FAULT_MISALIGNED, t0 + lane, addr, size)
            fault[5] = SP_SHARED
            return False
    for lane in range(32):
        if not (gmask >> lane) & 1:
            continue
        rank, off, _ = operand_cluster_address(regs[w, lane], opnd, arow, own, window)
        mem = csmem[rank]
        if op == Op.ATOM:
            r = regs[w, lane]
            old = read_bytes(mem, off, esize)
            c = get(r, opnd, o[3]) & mask(tb) if code[p, M1] == ATOM_CAS else np.int64(0)
            write_bytes(mem, off, esize, atomic_value(code[p, M1], tk, tb, old, get(r, opnd, o[2]) & mask(tb), c,
                                                      False))
            put(r, opnd, o[0], old)
        else:
            lane_transfer(op, regs, w, lane, opnd, drow, n, esize, tk, tb, mem, off)
    advance(pc, t0, group)
    return True


@njit(cache=True)
def cluster_waiters(status, bar_id):
    """How many threads wait at ``barrier.cluster.wait``."""
    n = 0
    for t in range(status.shape[0]):
        if status[t] == WAITING and bar_id[t] == CLUSTER_WAIT:
            n += 1
    return n


def cluster_release(states):
    """Release ``barrier.cluster`` when every non-exited thread of the cluster (``states``: each CTA's
    ``(status, bar_id, cl)``) has arrived: arrivals cleared, waiters running. ``(released, arrived, alive)``."""
    alive = sum(int(((s == RUNNING) | (s == WAITING)).sum()) for s, _, _ in states)
    arrived = sum(int((cl[(s == RUNNING) | (s == WAITING)] != 0).sum()) for s, _, cl in states)
    if alive == 0 or arrived < alive:
        return False, arrived, alive
    for s, b, cl in states:
        woken = (s == WAITING) & (b == CLUSTER_WAIT)
        s[woken] = RUNNING
        b[woken] = 0
        cl[:] = 0
    return True, arrived, alive

