"""``mbarrier`` (sm_80+, the transaction counts sm_90): asynchronous barrier objects in shared memory, decoded and
executed thread by thread in lane order.

An mbarrier is a 64-bit object in shared memory whose bits the GPU does not document; warpsim keeps its state in a
table beside shared memory (:func:`new_mbarriers`: per object its address, expected arrivals, pending arrivals,
phase, transaction bytes outstanding), and leaves the 8 bytes alone. The forms (PTX ISA, "mbarrier"):

- ``init [a], count``: expected = pending = count, phase 0, no transaction bytes; ``inval [a]``: forget it;
- ``arrive{.expect_tx} state, [a]{, count | tx}``: (with ``.expect_tx`` first add ``tx`` bytes expected) count
  arrivals (default 1); ``arrive_drop`` also lowers the expected count of later phases; ``expect_tx [a], tx`` and
  ``complete_tx [a], tx`` add and remove transaction bytes;
- a phase completes when its pending arrivals reach 0 and no transaction byte is outstanding: the phase number
  rises by one and pending arrivals start again at the expected count;
- ``state`` (a 64-bit token) is ``pending arrivals << 32 | phase`` after and before the arrival (PTX: the phase
  prior to it); ``pending_count n, state`` reads the pending count back;
- ``test_wait{.parity} p, [a], state | parity``: ``p`` = that phase has completed (for a token: the phase has moved
  on from the token's; for ``.parity``: the current phase's parity differs); ``try_wait`` is the same but a thread
  whose phase has not completed **waits** (its status ``WAITING``, ``bar_id`` :data:`MBARRIER_WAIT`): the
  interpreter wakes it when no warp can run and its phase is complete (:func:`mbarrier_ready`), then the
  ``try_wait`` runs again and gives true. The GPU's ``try_wait`` may also give false after a time limit; kernels
  loop on it, so waiting is the same result, and a wait that can never end is the deadlock it is
  (``FAULT_MBARRIER_DEADLOCK``, naming the object, its phase, arrivals and transaction bytes).

``cp.async.mbarrier.arrive{.noinc} [a]`` (sm_80's arrive-on when a thread's ``cp.async`` copies complete): the
thread's copies land, then with ``.noinc`` it counts one arrival (without, the GPU adds one pending arrival before
the arrive-on and takes it back, which changes nothing).

``.shared::cluster``: an ``arrive``, ``expect_tx`` or ``complete_tx`` on an address that names a CTA of the cluster
by rank (``mapa``, :mod:`warpsim.ptx.families.cluster`) acts on that CTA's table; a ``.shared::cta`` address is the
CTA's own. A launch without clusters is a cluster of one CTA.
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import FAULT_BAD_OPERAND, FAULT_MBARRIER, set_fault
from warpsim.ptx.codes import CTX_NRANKS, CTX_RANK, RUNNING, WAITING
from warpsim.ptx.families.async_copy import land
from warpsim.ptx.families.cluster import operand_cluster_address
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.memory import SP_GENERIC, SP_SHARED, locate
from warpsim.ptx.operands import get, lane_address, put
from warpsim.ptx.rows import M0, M1, M2, MBAR_ASYNC_ARRIVE, NOPS, O0

__all__ = ["MbarrierDecoder", "DECODER", "warp_mbarrier", "mbarrier_ready", "mbarrier_row", "wake_mbarrier_waiters",
           "complete_tx_at",
           "new_mbarriers",
           "MBARRIER_WAIT",
           "MAX_MBARRIERS", "FORMS", "ADDR", "EXPECTED", "PENDING", "PHASE", "TX", "LIVE"]

FORMS = {"init": 0, "inval": 1, "arrive": 2, "arrive_drop": 3, "expect_tx": 4, "complete_tx": 5, "test_wait": 6,
         "try_wait": 7, "pending_count": 8}
INIT, INVAL, ARRIVE, ARRIVE_DROP, EXPECT_TX, COMPLETE_TX, TEST_WAIT, TRY_WAIT, PENDING_COUNT = range(9)
ASYNC_ARRIVE = MBAR_ASYNC_ARRIVE
MBARRIER_WAIT = -2            # bar_id of a thread waiting at a try_wait
MAX_MBARRIERS = 256           # live mbarrier objects per CTA
ADDR, EXPECTED, PENDING, PHASE, TX, LIVE = range(6)   # the columns of an object's row
_MAX_COUNT = (1 << 20) - 1    # PTX: an mbarrier counts up to 2**20 - 1 arrivals


def new_mbarriers():
    """The CTA's mbarrier table: ``int64[MAX_MBARRIERS, 6]`` (columns ``ADDR .. LIVE``), all free."""
    return np.zeros((MAX_MBARRIERS, 6), np.int64)


class MbarrierDecoder(FamilyDecoder):
    """Decodes ``mbarrier.{init,inval,arrive,arrive_drop,expect_tx,complete_tx,test_wait,try_wait,pending_count}``."""

    def do_mbarrier(self, fn, ins, op, mods, types, ops):
        form = mods[0] if mods else ""
        if form not in FORMS or "b64" not in mods:
            raise self.error(ins.token, f"{name_of(ins)}: expected mbarrier.{{{','.join(FORMS)}}}...b64",
                             UnsupportedType)
        expect = int(form in ("arrive", "arrive_drop") and "expect_tx" in mods)
        parity = int("parity" in mods)
        space = SP_SHARED if any(m.startswith("shared") for m in mods) else SP_GENERIC
        if form == "pending_count":
            self.count(ins, ops, 2)
            return self.emit(fn, ins, op, mods=(FORMS[form], 0, 0, 0),
                             operands=[self.operand(fn, ops[0]), self.operand(fn, ops[1])])
        if form in ("init", "expect_tx", "complete_tx"):
            self.count(ins, ops, 2)
            addr, _ = self.address(fn, ops[0], space)
            rows = [addr, self.operand(fn, ops[1])]
        elif form == "inval":
            self.count(ins, ops, 1)
            rows = [self.address(fn, ops[0], space)[0]]
        elif form in ("arrive", "arrive_drop"):
            self.count(ins, ops, *((3,) if expect else (2, 3)))
            rows = [self.operand(fn, ops[0]), self.address(fn, ops[1], space)[0]]
            rows += [self.operand(fn, ops[2])] if len(ops) == 3 else []
        else:                                            # test_wait, try_wait: p, [a], state|parity{, hint}
            self.count(ins, ops, *((3, 4) if form == "try_wait" else (3,)))
            rows = [self.operand(fn, ops[0], pred=True), self.address(fn, ops[1], space)[0], self.operand(fn, ops[2])]
        self.emit(fn, ins, op, mods=(FORMS[form], expect | parity << 1, space, 0), operands=rows)


DECODER = MbarrierDecoder


@njit(cache=True)
def _find(mbar, off):
    for i in range(mbar.shape[0]):
        if mbar[i, LIVE] and mbar[i, ADDR] == off:
            return i
    return -1


@njit(cache=True)
def _complete(mbar, i):
    """The phase completes when nothing is pending: arrivals and transaction bytes."""
    if mbar[i, PENDING] <= 0 and mbar[i, TX] == 0:
        mbar[i, PHASE] += 1
        mbar[i, PENDING] = mbar[i, EXPECTED]


@njit(cache=True)
def _done(mbar, i, value, parity):
    """Whether the phase a test_wait/try_wait names has completed."""
    if parity:
        return (mbar[i, PHASE] & 1) != (value & 1)
    return mbar[i, PHASE] != (value & 0xFFFFFFFF)


@njit(cache=True)
def _object(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar, fault):
    """The table row of the mbarrier a row's address operand names, or -1 with a fault."""
    form = code[p, M0]
    second = form == ARRIVE or form == ARRIVE_DROP or form == TEST_WAIT or form == TRY_WAIT   # after a destination
    addr = lane_address(r, opnd, code[p, O0 + (1 if second else 0)])
    sp, off = locate(code[p, M2], addr, 8, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if sp < 0:
        return -1, addr
    if sp != SP_SHARED:
        set_fault(fault, FAULT_MBARRIER, t, addr, 1)
        return -1, addr
    i = _find(mbar, off)
    if i < 0 and code[p, M0] != INIT:
        set_fault(fault, FAULT_MBARRIER, t, addr, 2)
    return i, off


@njit(cache=True)
def mbarrier_ready(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar, fault):
    """Whether thread ``t``, waiting at the ``try_wait`` of row ``p``, may go on (its phase has completed)."""
    i, _ = _object(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar, fault)
    return i >= 0 and _done(mbar, i, get(r, opnd, code[p, O0 + 2]), code[p, M1] >> 1)


@njit(cache=True)
def complete_tx_at(addr, nbytes, t, smem, gmem, ends, local, const, kparam, fparam, mbar, fault):
    """``complete_tx`` of ``nbytes`` on the mbarrier at shared ``addr`` (a bulk copy's ``[mbar]``); False on a
    fault (not an initialised mbarrier)."""
    sp, off = locate(SP_SHARED, addr, 8, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if sp < 0:
        return False
    i = _find(mbar, off)
    if i < 0:
        set_fault(fault, FAULT_MBARRIER, t, addr, 2)
        return False
    mbar[i, TX] -= nbytes
    _complete(mbar, i)
    return True


@njit(cache=True)
def mbarrier_row(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar):
    """The table row of the mbarrier that row ``p`` names for thread ``t`` (registers ``r``), or -1."""
    scratch = np.zeros(8, np.int64)
    return _object(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar, scratch)[0]


@njit(cache=True)
def _arrive(p, form, code, opnd, r, mbar, i):
    """``arrive``/``arrive_drop`` (``.expect_tx``: the operand is transaction bytes and one arrival) on row ``i``."""
    o = code[p, O0:]
    count = np.int64(1)
    if code[p, NOPS] > 2:
        count = get(r, opnd, o[2])
    if code[p, M1] & 1:
        mbar[i, TX] += count
        count = 1
    before = mbar[i, PHASE]
    if form == ARRIVE_DROP:
        mbar[i, EXPECTED] -= count
    mbar[i, PENDING] -= count
    put(r, opnd, o[0], (max(mbar[i, PENDING], 0) << 32) | (before & 0xFFFFFFFF))
    _complete(mbar, i)


@njit(cache=True)
def _cluster_object(p, t, code, opnd, r, pc, cmbar, ctx, fault):
    """An ``arrive``, ``expect_tx`` or ``complete_tx`` on a ``.shared::cluster`` address that names a CTA by rank (a
    remote arrive: :mod:`warpsim.ptx.families.cluster`): on that CTA's table. None of this applies to other rows
    (-1); True/False: done, or a fault."""
    form = code[p, M0]
    if code[p, M2] != SP_SHARED or not (form == ARRIVE or form == ARRIVE_DROP or form == EXPECT_TX
                                       or form == COMPLETE_TX):
        return -1
    o = code[p, O0:]
    rank, off, addr = operand_cluster_address(r, opnd, o[1] if form == ARRIVE or form == ARRIVE_DROP else o[0],
                                              ctx[CTX_RANK])
    if rank == ctx[CTX_RANK]:
        return -1                                        # the CTA's own (shared_offset takes its rank bits)
    if rank >= ctx[CTX_NRANKS]:
        set_fault(fault, FAULT_MBARRIER, t, addr, 1)
        return 0
    mbar = cmbar[rank]
    i = _find(mbar, off)
    if i < 0:
        set_fault(fault, FAULT_MBARRIER, t, addr, 2)
        return 0
    if form == ARRIVE or form == ARRIVE_DROP:
        _arrive(p, form, code, opnd, r, mbar, i)
    elif form == EXPECT_TX:
        mbar[i, TX] += get(r, opnd, o[1])
    else:
        mbar[i, TX] -= get(r, opnd, o[1])
        _complete(mbar, i)
    pc[t] += 1
    return 1


@njit(cache=True)
def _thread(p, t, code, opnd, r, pc, status, bar_id, smem, gmem, ends, local, const, kparam, fparam, mbar, pend, npend,
            groups, pend_map, fault, cmbar, ctx):
    form = code[p, M0]
    o = code[p, O0:]
    if form == PENDING_COUNT:
        put(r, opnd, o[0], get(r, opnd, o[1]) >> 32)
        pc[t] += 1
        return True
    remote = _cluster_object(p, t, code, opnd, r, pc, cmbar, ctx, fault)
    if remote >= 0:
        return remote == 1
    i, off = _object(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar, fault)
    if fault[0] != 0:
        return False
    if form == INIT:
        count = get(r, opnd, o[1])
        if count < 1 or count > _MAX_COUNT:
            set_fault(fault, FAULT_BAD_OPERAND, t, count, _MAX_COUNT)
            return False
        if i < 0:
            for j in range(mbar.shape[0]):
                if not mbar[j, LIVE]:
                    i = j
                    break
            if i < 0:
                set_fault(fault, FAULT_MBARRIER, t, off, 3)
                return False
        mbar[i, ADDR], mbar[i, EXPECTED], mbar[i, PENDING] = off, count, count
        mbar[i, PHASE], mbar[i, TX], mbar[i, LIVE] = 0, 0, 1
    elif form == INVAL:
        mbar[i, LIVE] = 0
    elif form == ARRIVE or form == ARRIVE_DROP:
        _arrive(p, form, code, opnd, r, mbar, i)
    elif form == ASYNC_ARRIVE:                       # cp.async.mbarrier.arrive: once the thread's cp.async land
        land(t, -1, pend, npend, groups, pend_map, smem, gmem)
        if code[p, M1] & 4:                              # .noinc: the arrival counts; else the count it added
            mbar[i, PENDING] -= 1                        # back is all it does
            _complete(mbar, i)
    elif form == EXPECT_TX:
        mbar[i, TX] += get(r, opnd, o[1])
    elif form == COMPLETE_TX:
        mbar[i, TX] -= get(r, opnd, o[1])
        _complete(mbar, i)
    else:                                                # test_wait, try_wait
        done = _done(mbar, i, get(r, opnd, o[2]), code[p, M1] >> 1)
        if not done and form == TRY_WAIT:
            status[t] = WAITING
            bar_id[t] = MBARRIER_WAIT
            return True                                  # the pc stays: the try_wait runs again when woken
        put(r, opnd, o[0], np.int64(done))
    pc[t] += 1
    return True


@njit(cache=True)
def warp_mbarrier(p, w, gmask, group, code, opnd, regs, pc, status, bar_id, smem, gmem, ends, local, const, kparam,
                  fparam, mbar, pend, npend, groups, pend_map, fault, cmbar, ctx):
    """An ``mbarrier`` row for the lanes of ``group`` (those of ``gmask`` execute it, in lane order); False on a
    fault."""
    t0 = 32 * w
    for lane in range(32):
        if not (group >> lane) & 1:
            continue
        if not (gmask >> lane) & 1:
            pc[t0 + lane] += 1
            continue
        if not _thread(p, t0 + lane, code, opnd, regs[w, lane], pc, status, bar_id, smem, gmem, ends, local, const,
                       kparam, fparam, mbar, pend, npend, groups, pend_map, fault, cmbar, ctx):
            return False
    return True


@njit(cache=True)
def wake_mbarrier_waiters(code, opnd, regs, pc, status, bar_id, smem, gmem, ends, local, const, kparam, fparam, mbar,
                          fault):
    """Set ``RUNNING`` every thread waiting at a ``try_wait`` whose phase has completed; how many."""
    woken = 0
    for t in range(status.shape[0]):
        if status[t] == WAITING and bar_id[t] == MBARRIER_WAIT and mbarrier_ready(
                pc[t], t, code, opnd, regs[t // 32, t % 32], smem, gmem, ends, local, const, kparam, fparam, mbar,
                fault):
            status[t] = RUNNING
            bar_id[t] = 0
            woken += 1
    return woken
