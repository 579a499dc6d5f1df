"""The sanitizer's shadow state (``@njit``): who last wrote and read each byte of shared and global memory, and when.

The interpreter (:mod:`warpsim.ptx.interp`) and the families that own the accesses (``memory``, ``async_copy``,
``ldmatrix``, ``collectives``, ``barriers``) call :func:`shadow_access` and friends when ``sstate[S_ON]`` is set; a
plain run passes ``sstate[S_ON] == 0`` and pays one test per memory instruction. The Python side
(:mod:`warpsim.sanitize`) allocates the arrays (:func:`new_shadow`), reads the findings back and words them.

The model (exact for the happens-before it knows, stated once here):

- **Threads** are named by their launch ordinal ``g = cta_ordinal * T + t`` (``T``: the CTA's threads rounded up to
  whole warps), so accesses of two CTAs never look ordered.
- **Barrier epochs**: ``sstate[S_EPOCH]`` counts the releases of CTA barriers (``bar.sync``/``barrier.sync``, any id
  and count); two accesses of one CTA in different epochs are ordered. A barrier of a thread count (named barriers of
  a subset) orders every thread of the CTA here: races across a partial barrier are not seen.
- **Warp epochs**: ``sstate[S_WSYNC + w]`` counts ``bar.warp.sync`` of warp ``w`` (any member mask); two accesses of
  one warp in different warp epochs are ordered.
- **One instruction**: the lanes of a warp executing one instruction together (one dynamic step) are not a race with
  each other, except a write of the same byte with different values (``K_WAW_SAME``: which lane wins is undefined).
- **Strong accesses** (atomics; ``ld``/``st`` ``.volatile .relaxed .acquire .release``): two strong accesses never
  race (the PTX memory model's morally strong operations).
- **Release/acquire through memory**: a fence (``membar``/``fence``, or the ``.release`` of a strong write) records the
  thread's release step; a strong write carries it into the byte (``F_REL``: the largest over the writes, as a release
  sequence); a strong read takes it, and the reader's next fence (or the ``.acquire`` of the read) makes every access
  made before that release step ordered before the reader's later accesses (``hb``). Which thread released is not
  kept: an acquire also orders a third thread's earlier accesses.

Per byte (``shadow``: ``int32[NFIELDS, shared bytes + global bytes]``, shared first): the last write (thread, pc,
step, epoch, warp epoch, flags, release step) and the last two reads of different threads since it. A write clears
the reads. Thread ``-2`` marks a byte never written that must not be read (all of shared memory when a CTA starts,
the global buffers named ``--uninit``); ``-1`` a byte with no writer to race with (what the host wrote).

Findings go to ``finds`` (``int64[NSLOTS, NFC]``), one row per (kind, space, pc, other pc), hashed: the first pair of
threads, the address range and a count; when it is full, ``sstate[S_LOST]`` counts what was dropped.

The same hooks serve a second, lighter mode, ``sstate[S_ON] == ON_ACCESS`` (:func:`new_access_sets`): no checks, only
which global bytes a run of CTAs read before writing them itself (its *exposed* reads, bit ``A_EXPOSED``) and which it
wrote (``A_WRITTEN``), in ``shadow[0, global byte]`` (an ``int32[1, G]``). A launch's CTAs in parallel
(:mod:`warpsim.ptx.jobs`) need exactly that to know their result is the sequential one. The sanitizer-only hooks
(fences, warp epochs, landings in shared memory, barrier epochs) test ``sstate[S_ON] == ON_SANITIZE``.
"""

import numpy as np
from numba import njit

__all__ = ["ON_SANITIZE", "ON_ACCESS", "A_EXPOSED", "A_WRITTEN", "new_access_sets", "S_ON", "S_EPOCH", "S_STEP", "S_LOST", "S_CTA", "S_THREADS", "S_SMEM", "S_GLOBAL", "S_WSYNC", "S_ROWS", "W_T",
           "NSCALARS", "FL_STRONG", "FL_RELEASE", "FL_ACQUIRE", "FL_ATOMIC", "K_RAW", "K_WAR", "K_WAW", "K_WAW_SAME",
           "K_UNINIT", "K_MASK", "K_REG", "K_BARDIV", "K_BAREXIT", "barrier_released", "KIND_NAMES", "FC_KIND", "FC_SPACE", "FC_PCA", "FC_PCB", "FC_TA", "FC_TB",
           "FC_LO", "FC_HI", "FC_COUNT", "FC_USED", "NFC", "NSLOTS", "NFIELDS", "new_shadow", "reset_shared",
           "shadow_access", "shadow_fence", "shadow_finding", "thread_slot"]

# sstate: scalars, then per warp its bar.warp.sync count, then per thread: release step, pending acquire, hb; then per
# code row the warp instructions that executed it (from sstate[S_ROWS])
S_ON, S_EPOCH, S_STEP, S_LOST, S_CTA, S_THREADS, S_SMEM, S_GLOBAL, S_WARPS, S_ROWS = range(10)
# sstate[S_ON]: off (0), the sanitizer, or the access sets of a run in parallel; the access sets' bits per global byte
ON_SANITIZE, ON_ACCESS = 1, 2
A_EXPOSED, A_WRITTEN = 1, 2
NSCALARS = 16
S_WSYNC = NSCALARS
# flags of an access
FL_STRONG, FL_RELEASE, FL_ACQUIRE, FL_ATOMIC = 1, 2, 4, 8
# kinds of finding
K_RAW, K_WAR, K_WAW, K_WAW_SAME, K_UNINIT, K_MASK, K_REG, K_BARDIV, K_BAREXIT = range(1, 10)
KIND_NAMES = {K_RAW: "RAW", K_WAR: "WAR", K_WAW: "WAW", K_WAW_SAME: "WAW-same-instruction", K_UNINIT: "uninit",
              K_MASK: "member-mask", K_REG: "uninit-register", K_BARDIV: "divergent-barrier",
              K_BAREXIT: "barrier-after-exit"}
# finding columns
FC_KIND, FC_SPACE, FC_PCA, FC_PCB, FC_TA, FC_TB, FC_LO, FC_HI, FC_COUNT, FC_USED = range(10)
NFC = 10
NSLOTS = 4096
# shadow fields: the write, then two reads
W_T, W_PC, W_STEP, W_EP, W_WS, W_FL, W_REL = range(7)
R1 = 7
R2 = 13
RT, RPC, RSTEP, REP, RWS, RFL = range(6)
NFIELDS = 19
_SP_SHARED = 2


def new_shadow(smem_bytes, gmem_bytes, warps, rows, global_limit):
    """``(shadow, sstate, finds)`` for a launch of a kernel of ``rows`` code rows; the global part only when
    ``gmem_bytes <= global_limit``."""
    gbytes = gmem_bytes if gmem_bytes <= global_limit else 0
    shadow = np.full((NFIELDS, smem_bytes + gbytes), -1, np.int32)
    shadow[W_T, :smem_bytes] = -2
    threads = 32 * warps
    sstate = np.zeros(NSCALARS + warps + 3 * threads + rows, np.int64)
    sstate[S_ROWS] = NSCALARS + warps + 3 * threads
    sstate[S_ON] = ON_SANITIZE
    sstate[S_THREADS] = threads
    sstate[S_SMEM] = smem_bytes
    sstate[S_GLOBAL] = gbytes > 0
    sstate[S_WARPS] = warps
    finds = np.zeros((NSLOTS, NFC), np.int64)
    return shadow, sstate, finds


def new_access_sets(gmem_bytes):
    """``(shadow, sstate, finds)`` that record the access sets of a run (``ON_ACCESS``; see the module docstring): every
    global byte neither read nor written yet."""
    sstate = np.zeros(NSCALARS, np.int64)
    sstate[S_ON] = ON_ACCESS
    return np.zeros((1, gmem_bytes), np.int32), sstate, np.zeros((1, NFC), np.int64)


def reset_shared(shadow, sstate):
    """A new CTA: its shared memory never written, its warps' and threads' sync state cleared."""
    n = int(sstate[S_SMEM])
    shadow[:, :n] = -1
    shadow[W_T, :n] = -2
    sstate[NSCALARS:sstate[S_ROWS]] = 0


@njit(cache=True, inline="always")
def thread_slot(sstate, which, t):
    """The index in ``sstate`` of thread ``t``'s release step (0), pending acquire (1) or hb step (2)."""
    return NSCALARS + sstate[S_WARPS] + which * sstate[S_THREADS] + t


@njit(cache=True)
def shadow_finding(finds, sstate, kind, space, pca, pcb, ta, tb, lo, hi):
    """Count one finding in its row of ``finds`` (found or made by hashing ``(kind, space, pca, pcb)``)."""
    n = finds.shape[0]
    h = ((kind * 1000003 + space * 101 + pca * 7919 + pcb * 31) & 0x7FFFFFFF) % n
    for _ in range(n):
        row = finds[h]
        if row[FC_USED] == 0:
            row[FC_USED] = 1
            row[FC_KIND], row[FC_SPACE], row[FC_PCA], row[FC_PCB] = kind, space, pca, pcb
            row[FC_TA], row[FC_TB], row[FC_LO], row[FC_HI], row[FC_COUNT] = ta, tb, lo, hi, 1
            return
        if row[FC_KIND] == kind and row[FC_SPACE] == space and row[FC_PCA] == pca and row[FC_PCB] == pcb:
            row[FC_COUNT] += 1
            row[FC_LO] = min(row[FC_LO], lo)
            row[FC_HI] = max(row[FC_HI], hi)
            return
        h = (h + 1) % n
    sstate[S_LOST] += 1


@njit(cache=True)
def shadow_fence(sstate, t):
    """Thread ``t`` executes a fence: its release step is now, and what it acquired since its last fence becomes
    ordered before its later accesses."""
    sstate[thread_slot(sstate, 0, t)] = sstate[S_STEP]
    acq = sstate[thread_slot(sstate, 1, t)]
    hb = thread_slot(sstate, 2, t)
    if acq > sstate[hb]:
        sstate[hb] = acq


@njit(cache=True, inline="always")
def _ordered(shadow, b, f, g, t, sstate, epoch, ws, hb):
    """Whether the access of fields ``f`` (its thread, step, epoch, warp epoch) at byte ``b`` happens before the
    current one of thread ordinal ``g``."""
    pg = np.int64(shadow[f, b])
    T = sstate[S_THREADS]
    if pg // T == g // T:
        if shadow[f + 3, b] < epoch:
            return True
        if pg // 32 == g // 32 and shadow[f + 4, b] < ws:
            return True
    return np.int64(shadow[f + 2, b]) < hb


@njit(cache=True)
def shadow_access(shadow, sstate, finds, space, off, size, t, p, write, flags, value, mem):
    """Check and record an access of thread ``t`` (in the CTA) at row ``p``: ``size`` bytes at ``off`` of shared
    (``space`` 2) or global memory (``mem``: its bytes before a write, to tell a same-instruction WAW of equal
    values); ``write``: 0 read, 1 write, 2 both (an atomic); ``flags``: ``FL_*``; ``value``: what a write stores.
    With ``ON_ACCESS``, a global access only sets its bytes' bits (a read counts where the run has not written the byte)."""
    if sstate[S_ON] == ON_ACCESS:
        if space != _SP_SHARED:
            for i in range(size):
                b = off + i
                if write != 1 and not shadow[0, b] & A_WRITTEN:
                    shadow[0, b] |= A_EXPOSED
                if write != 0:
                    shadow[0, b] |= A_WRITTEN
        return
    if space == _SP_SHARED:
        base = off
    else:
        if sstate[S_GLOBAL] == 0:
            return
        base = sstate[S_SMEM] + off
    g = sstate[S_CTA] * sstate[S_THREADS] + t
    step = sstate[S_STEP]
    epoch = sstate[S_EPOCH]
    w = t // 32
    ws = sstate[S_WSYNC + w]
    if flags & FL_RELEASE:
        shadow_fence(sstate, t)
    hb = sstate[thread_slot(sstate, 2, t)]
    strong = (flags & FL_STRONG) != 0
    found_raw = False
    found_uninit = False
    found_war = False
    found_waw = False
    if write != 1:                                     # a read
        acq = thread_slot(sstate, 1, t)
        for i in range(size):
            b = base + i
            wt = shadow[W_T, b]
            if wt == -2 and not found_uninit:
                shadow_finding(finds, sstate, K_UNINIT, space, p, -1, g, -1, off, off + size)
                found_uninit = True
            elif wt >= 0 and wt != g and not found_raw and not (strong and (shadow[W_FL, b] & FL_STRONG)) \
                    and not _ordered(shadow, b, W_T, g, t, sstate, epoch, ws, hb):
                shadow_finding(finds, sstate, K_RAW, space, shadow[W_PC, b], p, wt, g, off, off + size)
                found_raw = True
            if strong and wt >= 0 and shadow[W_REL, b] > sstate[acq]:
                sstate[acq] = shadow[W_REL, b]
            if write == 0:
                r = R1 if shadow[R1 + RT, b] == g or shadow[R1 + RT, b] < 0 else R2
                if r == R2:                            # a new thread: the last read moves to the second place
                    for k in range(6):
                        shadow[R2 + k, b] = shadow[R1 + k, b]
                    r = R1
                shadow[r + RT, b] = g
                shadow[r + RPC, b] = p
                shadow[r + RSTEP, b] = step
                shadow[r + REP, b] = epoch
                shadow[r + RWS, b] = ws
                shadow[r + RFL, b] = flags
        if flags & FL_ACQUIRE:                         # .acquire: what the read took is ordered from now on
            hbs = thread_slot(sstate, 2, t)
            sstate[hbs] = max(sstate[hbs], sstate[acq])
    if write != 0:                                     # a write
        rel = sstate[thread_slot(sstate, 0, t)]
        for i in range(size):
            b = base + i
            wt = shadow[W_T, b]
            if wt >= 0 and wt != g and not found_waw and not (strong and (shadow[W_FL, b] & FL_STRONG)):
                if shadow[W_STEP, b] == step and wt // 32 == g // 32:     # lanes of one instruction
                    if np.int64(mem[off + i]) != (value >> (8 * i)) & 0xFF:
                        shadow_finding(finds, sstate, K_WAW_SAME, space, shadow[W_PC, b], p, wt, g, off, off + size)
                        found_waw = True
                elif not _ordered(shadow, b, W_T, g, t, sstate, epoch, ws, hb):
                    shadow_finding(finds, sstate, K_WAW, space, shadow[W_PC, b], p, wt, g, off, off + size)
                    found_waw = True
            if not found_war:
                for r in (R1, R2):
                    rt = shadow[r + RT, b]
                    if rt >= 0 and rt != g and not (strong and (shadow[r + RFL, b] & FL_STRONG)) \
                            and not _ordered(shadow, b, r + RT, g, t, sstate, epoch, ws, hb):
                        shadow_finding(finds, sstate, K_WAR, space, shadow[r + RPC, b], p, rt, g, off, off + size)
                        found_war = True
                        break
            shadow[W_T, b] = g
            shadow[W_PC, b] = p
            shadow[W_STEP, b] = step
            shadow[W_EP, b] = epoch
            shadow[W_WS, b] = ws
            shadow[W_FL, b] = flags
            if strong:
                shadow[W_REL, b] = max(shadow[W_REL, b], rel) if shadow[W_REL, b] >= 0 else rel
            else:
                shadow[W_REL, b] = -1
            shadow[R1 + RT, b] = -1
            shadow[R2 + RT, b] = -1


@njit(cache=True)
def barrier_released(b, pc, status_before, bar_id, threads, alive, counted, sstate, finds):
    """Barrier ``b`` releases: the threads it releases (``status_before`` WAITING at ``b``) must all wait at one
    ``bar.sync`` row (else ``K_BARDIV``: threads of the CTA met at different barriers), and a barrier counting every
    thread (``counted`` False) must not complete without threads that exited (``K_BAREXIT``: ``__syncthreads()`` in
    code that not every thread reaches)."""
    first = np.int64(-1)
    for t in range(threads):
        if status_before[t] and bar_id[t] == b:
            row = pc[t] - 1
            if first < 0:
                first = t
            elif row != pc[first] - 1:
                g0 = sstate[S_CTA] * sstate[S_THREADS]
                shadow_finding(finds, sstate, K_BARDIV, 0, pc[first] - 1, row, g0 + first, g0 + t, 0, 0)
                break
    if first >= 0 and not counted and alive < threads:
        g0 = sstate[S_CTA] * sstate[S_THREADS]
        shadow_finding(finds, sstate, K_BAREXIT, 0, pc[first] - 1, -1, g0 + first, -1, alive, threads)
