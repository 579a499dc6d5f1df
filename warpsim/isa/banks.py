"""The shared-memory bank-conflict model: pure functions of one warp's per-lane byte addresses.

This is hardware semantics, like the rest of :mod:`warpsim.isa`: it knows nothing of programs or
instruction streams (their bank reports are :mod:`warpsim.debug.banks`).

The model
---------
* Shared memory has 32 banks, each 4 bytes wide: byte address ``a`` lies in the 4-byte word
  ``a // 4``, which lies in bank ``(a // 4) % 32`` (NVIDIA CUDA C++ Programming Guide, "Shared
  Memory" under "Compute Capability 5.x", which later capabilities refer back to).
* A warp's access is served in *phases*: groups of lanes whose requests go to the banks together.

  =============================  ====================================================
  access                         phases
  =============================  ====================================================
  ``ld/st.shared`` 16 or 32 bits 1 phase of 32 lanes
  ``ld/st.shared`` 64 bits       2 phases of 16 lanes (0-15, 16-31)
  ``ld/st.shared`` 128 bits      4 phases of 8 lanes (0-7, 8-15, 16-23, 24-31)
  ``ldmatrix .x1/.x2/.x4``       1 phase per matrix: matrix ``j``'s 8 rows, from lanes
                                 ``8j .. 8j+7``, 16 bytes (4 banks) each
  =============================  ====================================================

  Each phase moves at most 128 bytes, one word per bank. Sources: the Programming Guide (32-bit
  accesses); NVIDIA developer forum, "Unexpected shared memory bank conflict" (an ``LDS.128``
  takes 4 requests, one per quarter warp); NVIDIA developer forum, "Understanding the behavior of
  ldmatrix in terms of shared memory access" (``ldmatrix.x4``: each group of 8 threads is one
  128-byte transaction); NVIDIA/cutlass issue 3172, "Swizzle could not eliminate bank conflicts
  of ldmatrix" (conflicts counted per 8-row matrix).
* In one phase, requests for the *same* 4-byte word are served once (a broadcast for loads; for
  stores one lane's write lands, Programming Guide). Requests for *different* words of one bank
  are serialised: the phase takes as many wavefronts as the largest number of distinct words it
  asks of one bank — its n-way *degree* (1 = conflict-free). Extra wavefronts = degree - 1.

What the model leaves out: timing (it counts wavefronts, not cycles), the Volta/Turing rule by
which an ``LDS.128`` whose lane pairs share addresses needs only 2 requests (same forum thread),
and anything an architecture does beyond these published descriptions. hwcheck compares register
and memory bits with a GPU; it does **not** verify bank timing or these counts.

Example: 8 lanes reading one 16-byte row each, rows 128 bytes apart (a row-major 64-column f16
tile read down a column): every row starts in bank 0, so the phase is 8-way.

>>> rep = bank_report("ldmatrix", np.arange(32) * 128, num=1)
>>> rep.phases[0].degree, rep.extra_wavefronts, rep.phases[0].conflicts[0].lanes[:3]
(8, 7, ((0,), (1,), (2,)))
>>> bank_report("ld", np.arange(32) * 4, bits=32).conflict_free      # 32 consecutive words
True
>>> bank_report("st", np.zeros(32, np.int64), bits=32).degree        # one word for everyone: broadcast
1
>>> bank_report("ld", np.arange(32) * 8, bits=64).degree             # 16 lanes x 2 words per phase
1
"""

from dataclasses import dataclass

import numpy as np

from warpsim.isa.ldmatrix import ldmatrix_name
from warpsim.isa.memory import memory_name
from warpsim.warp import WARP_SIZE

__all__ = [
    "NUM_BANKS", "BANK_BYTES", "bank_of", "phase_lanes",
    "BankConflict", "BankPhase", "BankReport", "BankTotals", "bank_report",
]

NUM_BANKS = 32
BANK_BYTES = 4
_LANES_PER_PHASE = {16: 32, 32: 32, 64: 16, 128: 8}     # ld/st.shared width in bits -> lanes per phase


def bank_of(address):
    """The bank of byte ``address`` (an int or an integer array).

    >>> bank_of(0), bank_of(132), bank_of(np.array([4, 128 + 8])).tolist()
    (0, 1, [1, 2])
    """
    if isinstance(address, np.ndarray):
        return (address // BANK_BYTES) % NUM_BANKS
    return (int(address) // BANK_BYTES) % NUM_BANKS


def phase_lanes(kind, num=None, bits=None):
    """The lanes of each phase of an access, and the bytes each lane reads or writes.

    >>> phase_lanes("ld", bits=64)[0][1], phase_lanes("ldmatrix", num=2)
    ((16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31), (((0, 1, 2, 3, 4, 5, 6, 7), (8, 9, 10, 11, 12, 13, 14, 15)), 16))
    """
    if kind == "ldmatrix":
        if num not in (1, 2, 4):
            raise ValueError(f"bank_report: ldmatrix needs num 1, 2 or 4 (.x1/.x2/.x4), got {num!r}")
        return tuple(tuple(range(8 * j, 8 * j + 8)) for j in range(num)), 16
    if kind in ("ld", "st"):
        if bits not in _LANES_PER_PHASE:
            raise ValueError(f"bank_report: {kind}.shared needs bits 16, 32, 64 or 128, got {bits!r}")
        step = _LANES_PER_PHASE[bits]
        return tuple(tuple(range(p, p + step)) for p in range(0, WARP_SIZE, step)), bits // 8
    raise ValueError(f"bank_report: unknown access kind {kind!r}; expected 'ldmatrix', 'ld' or 'st'")


@dataclass(frozen=True)
class BankConflict:
    """One bank asked for several words in one phase: ``words[i]`` (byte address of the word) by ``lanes[i]``."""

    bank: int
    words: tuple
    lanes: tuple

    def __str__(self):
        parts = " ".join(f"{w:#x}(L{','.join(map(str, ls))})" for w, ls in zip(self.words, self.lanes))
        return f"bank {self.bank:2d}: {len(self.words)} words {parts}"


@dataclass(frozen=True)
class BankPhase:
    """One phase: its ``lanes``, each lane's start ``addresses`` and access size ``nbytes``, the
    banks asked for more than one word (``conflicts``) and the n-way ``degree``."""

    index: int
    lanes: tuple
    addresses: tuple
    nbytes: int
    conflicts: tuple
    degree: int

    @property
    def wavefronts(self):
        return self.degree

    @property
    def extra(self):
        """Extra wavefronts the conflicts cost: ``degree - 1``."""
        return self.degree - 1

    def banks(self, lane):
        """The banks ``lane`` touches in this phase."""
        a = self.addresses[self.lanes.index(lane)]
        return tuple(sorted({bank_of(a + k) for k in range(0, max(self.nbytes, 1), BANK_BYTES)}))

    def colliding_lanes(self):
        """The lanes involved in a conflict, sorted."""
        return tuple(sorted({lane for c in self.conflicts for ls in c.lanes for lane in ls}))

    def __str__(self):
        span = f"lanes {self.lanes[0]}-{self.lanes[-1]}"
        if not self.conflicts:
            return f"phase {self.index} ({span}): conflict-free"
        return (f"phase {self.index} ({span}): {self.degree}-way, {self.extra} extra wavefront"
                f"{'s' if self.extra != 1 else ''}; colliding lanes {list(self.colliding_lanes())}")


@dataclass(frozen=True)
class BankTotals:
    """Sums over several accesses: how many, their phases, wavefronts, extra wavefronts, worst degree."""

    accesses: int = 0
    phases: int = 0
    wavefronts: int = 0
    extra_wavefronts: int = 0
    worst_degree: int = 0

    @classmethod
    def of(cls, reports):
        """The totals of an iterable of :class:`BankReport`."""
        reports = list(reports)
        return cls(len(reports), sum(len(r.phases) for r in reports), sum(r.wavefronts for r in reports),
                   sum(r.extra_wavefronts for r in reports), max((r.degree for r in reports), default=0))

    def __str__(self):
        return (f"{self.accesses} accesses, {self.phases} phases, {self.wavefronts} wavefronts, "
                f"{self.extra_wavefronts} extra (worst {self.worst_degree}-way)")


@dataclass(frozen=True)
class BankReport:
    """The bank model's verdict on one warp-wide shared-memory access."""

    instruction: str
    phases: tuple

    @property
    def wavefronts(self):
        return sum(p.wavefronts for p in self.phases)

    @property
    def extra_wavefronts(self):
        return sum(p.extra for p in self.phases)

    @property
    def degree(self):
        """The worst phase's n-way degree."""
        return max(p.degree for p in self.phases)

    @property
    def conflict_free(self):
        return self.extra_wavefronts == 0

    def text(self, detail=True):
        """A readable report: one line, then a line per phase and per conflicting bank."""
        head = (f"{self.instruction}: {len(self.phases)} phase{'s' if len(self.phases) != 1 else ''}, "
                f"{self.wavefronts} wavefronts, "
                + ("conflict-free" if self.conflict_free else
                   f"{self.extra_wavefronts} extra (worst {self.degree}-way)"))
        lines = [head]
        if detail:
            for p in self.phases:
                lines.append(f"  {p}")
                lines += [f"    {c}" for c in p.conflicts]
        return "\n".join(lines) + "\n"


def _lane_addresses(op, addrs, lanes, nbytes):
    """``addrs`` as ``int64[32]``; ``ValueError`` for a wrong shape, a negative or misaligned address."""
    try:
        arr = np.asarray(addrs)
    except Exception as e:
        raise TypeError(f"{op}: addresses must be an array of 32 integers: {e}") from None
    if arr.shape != (WARP_SIZE,):
        raise ValueError(f"{op}: expected one byte address per lane (32), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{op}: addresses must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    for lane in lanes:
        a = int(arr[lane])
        if a < 0:
            raise ValueError(f"{op}: lane {lane}: negative shared-memory address {a}")
        if a % nbytes:
            raise ValueError(f"{op}: lane {lane}: address {a:#x} is not {nbytes}-byte aligned")
    return arr


def _phase(index, lanes, addrs, nbytes):
    banks = {}                                     # bank -> {word byte address: [lanes]}
    for lane in lanes:
        a = int(addrs[lane])
        first = a - a % BANK_BYTES
        for w in range(first, a + nbytes, BANK_BYTES):
            banks.setdefault(bank_of(w), {}).setdefault(w, []).append(lane)
    conflicts = tuple(BankConflict(b, tuple(sorted(words)), tuple(tuple(words[w]) for w in sorted(words)))
                      for b, words in sorted(banks.items()) if len(words) > 1)
    degree = max((len(words) for words in banks.values()), default=1)
    return BankPhase(index, tuple(lanes), tuple(int(addrs[lane]) for lane in lanes), nbytes, conflicts, degree)


def bank_report(kind, addrs, *, num=None, bits=None, trans=False):
    """The :class:`BankReport` of one warp's shared access.

    ``kind``: ``"ldmatrix"`` (with ``num`` 1, 2 or 4; ``addrs[l]`` is lane ``l``'s row address, used
    for lanes ``< 8 num``; ``trans`` changes only which lane receives what, not the banks), or
    ``"ld"`` / ``"st"`` (with ``bits`` 16, 32, 64 or 128; ``addrs[l]`` is lane ``l``'s address).
    ``ValueError`` for a wrong shape, an unknown kind or width, a negative or misaligned address.
    """
    groups, nbytes = phase_lanes(kind, num=num, bits=bits)
    used = [lane for g in groups for lane in g]
    name = ldmatrix_name(num, trans) if kind == "ldmatrix" else memory_name(kind, "shared", bits // 8)
    arr = _lane_addresses(f"bank_report: {name}", addrs, used, nbytes)
    return BankReport(name, tuple(_phase(i, g, arr, nbytes) for i, g in enumerate(groups)))
