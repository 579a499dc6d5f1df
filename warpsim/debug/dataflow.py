"""Where registers get their bits and where tensor elements live: the data flow of an instruction stream.

Every instruction that moves data between registers and memory states, lane by lane, which byte
address each 16-bit half of each register comes from or goes to. It is read off the stream (the
addresses are in the instructions), never guessed from layouts:

- ``ldmatrix`` (PTX ISA, "Warp-level matrix load instruction: ldmatrix", as the table
  :func:`warpsim.isa.fragments.ldmatrix_map`): lane ``l`` register ``j`` half ``h`` receives element
  ``(matrix, row, col)``; row ``row`` of matrix ``matrix`` starts at the address held by lane
  ``addr_lane[matrix, row]``, and the element is ``2 * col`` bytes into it;
- ``ld``/``st`` of 32 to 128 bits: register ``k`` of the instruction, half ``h`` <-> ``addr + 4k + 2h``;
  of 16 bits: the instruction's half <-> ``addr``.

:class:`DataFlow` keeps these as flat arrays, one row per (instruction, lane, register, half), and
answers two questions: :meth:`DataFlow.who` -- which warp, lane, register and half hold element
``coord`` of a memory tensor among a register tensor's registers (the loads that fill them or the
stores that empty them); :meth:`DataFlow.origin` -- where each half of a register came from at a
point of the stream: the instruction that last wrote it and, for a load, the address, the
memory tensors' coordinates there, and (shared memory) the store that put the bits there, back
to the global buffer they were loaded from.

>>> from warpsim.program.program import Program
>>> from warpsim.program.ops import copy
>>> from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_tensor, make_tiled_copy
>>> def kernel(tid, *, x):
...     tiled = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f16"), make_layout(32), make_layout(2))
...     thr = tiled.get_slice(tid)
...     frag = make_tensor("f16", make_layout((2, 1)))
...     copy(tiled, thr.partition_S(x), thr.retile_D(frag))
>>> flow = DataFlow(Program(kernel, threads=32, inputs={"x": ((64,), "f16")}).trace())
>>> w = flow.who("frag", (7,))
>>> [(e.warp, e.lane, e.reg, e.half, e.slot) for e in w.entries]
[(0, 3, 0, 1, 1)]
>>> o = flow.origin(0, 3, 0, before=1)
>>> [(step.instr, step.address, step.coords) for step in o.halves[1]]
[(0, 14, (('x', (7,)),))]
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from warpsim.debug.tensors import TraceTensors
from warpsim.isa.fragments import MMA_FRAGMENTS, ldmatrix_map
from warpsim.program.instr import Op

__all__ = ["DataFlow", "WhoEntry", "Who", "OriginStep", "Origin", "stream_accesses"]

_SPACES = ("shared", "global")
_TENSOR_SPACE = {"shared": "smem", "global": "gmem"}


def stream_accesses(stream):
    """``{instr, warp, lane, reg, half, addr, space, store}`` (``int64``/``bool`` arrays, one entry per
    instruction, lane, register and 16-bit half a load or store moves), in stream order; ``space`` 0 is
    shared memory, 1 global."""
    parts = []
    lanes = np.arange(32)
    for k, i in enumerate(stream):
        if i.op == Op.LDMATRIX:
            m = ldmatrix_map(i.num, i.trans)
            addr = i.addr[m.addr_lane[m.matrix, m.row]] + 2 * m.col                   # [32, num, 2]
            regs = np.broadcast_to(np.asarray(i.dst)[None, :, None], addr.shape)
            half = np.broadcast_to(np.arange(2)[None, None, :], addr.shape)
            space, store = 0, False
        elif i.op in (Op.LD, Op.ST):
            regs_list = i.dst if i.op == Op.LD else i.src
            if i.bits == 16:
                addr = i.addr[:, None, None].astype(np.int64)
                regs = np.full(addr.shape, regs_list[0])
                half = np.full(addr.shape, max(i.half, 0))
            else:
                n = len(regs_list)
                addr = i.addr[:, None, None] + 4 * np.arange(n)[None, :, None] + 2 * np.arange(2)[None, None, :]
                regs = np.broadcast_to(np.asarray(regs_list)[None, :, None], addr.shape)
                half = np.broadcast_to(np.arange(2)[None, None, :], addr.shape)
            space, store = _SPACES.index(i.space), i.op == Op.ST
        else:
            continue
        lane = np.broadcast_to(lanes[:, None, None], addr.shape)
        count = addr.size
        parts.append((np.full(count, k), np.full(count, i.warp), lane.ravel(), regs.ravel(), half.ravel(),
                      addr.ravel(), np.full(count, space), np.full(count, store)))
    names = ("instr", "warp", "lane", "reg", "half", "addr", "space", "store")
    if not parts:
        return {n: np.zeros(0, bool if n == "store" else np.int64) for n in names}
    return {n: np.concatenate([p[j] for p in parts]).astype(bool if n == "store" else np.int64)
            for j, n in enumerate(names)}


@dataclass(frozen=True)
class WhoEntry:
    """One holder of an element: ``warp``, ``lane``, register ``reg`` and ``half`` (-1: a whole 32-bit
    register), the tensor's ``slot`` there, the instruction ``instr`` that loads (``store`` False) or
    stores it, and whether that instruction has executed (``done``)."""

    warp: int
    lane: int
    reg: int
    half: int
    slot: int
    instr: int
    store: bool
    done: bool


@dataclass(frozen=True)
class Who:
    """The answer of :meth:`DataFlow.who`: element ``coord`` of memory tensor ``memory`` (byte ``address``
    in ``space``) among register tensor ``name``'s registers; ``others``: other memory tensors the
    registers' accesses touch (a coordinate may be asked in them)."""

    name: str
    memory: str
    coord: tuple
    address: int
    space: str
    entries: tuple
    others: tuple = ()


@dataclass(frozen=True)
class OriginStep:
    """One step back in a register half's history: instruction ``instr`` (``warp``, ``lane``, ``reg``,
    ``half`` of its operand) and, for a memory access, the byte ``address`` in ``space`` with the memory
    tensors' ``coords`` there (``[(name, coord)]``)."""

    instr: int
    warp: int
    lane: int
    reg: int
    half: int
    address: int = -1
    space: str = ""
    coords: tuple = ()


@dataclass(frozen=True)
class Origin:
    """Where register ``reg`` of ``lane`` in ``warp`` got its bits, before stream position ``before``:
    ``halves[h]`` (``h`` 0, 1; or only ``halves[-1]`` for a 32-bit register) is a tuple of
    :class:`OriginStep`, newest first (empty: never written)."""

    warp: int
    lane: int
    reg: int
    before: int
    halves: dict


class DataFlow:
    """The data flow of a :class:`~warpsim.program.trace_result.Trace` (see the module docstring)."""

    def __init__(self, trace, tensors=None):
        self.trace = trace
        self.stream = trace.stream
        self.tensors = tensors if tensors is not None else TraceTensors(trace)
        self.acc = stream_accesses(self.stream)
        self._writers = {}
        for k, i in enumerate(self.stream):
            half = i.half if i.op == Op.LD and i.bits == 16 else -1
            for r in i.dst:
                self._writers.setdefault((i.warp, r), []).append((k, half))
        self._rows = {}                                   # instr -> (first row, end row)
        instrs = self.acc["instr"]
        if instrs.size:
            change = np.flatnonzero(np.diff(instrs)) + 1
            starts = np.concatenate([[0], change])
            ends = np.concatenate([change, [instrs.size]])
            for a, b in zip(starts.tolist(), ends.tolist()):
                self._rows[int(instrs[a])] = (a, b)
        self._stores = None

    # -- writers and accesses --------------------------------------------------------------------
    def last_writer(self, warp, reg, half, before):
        """The last instruction before position ``before`` that wrote ``half`` of register ``reg`` in
        ``warp`` (``half`` -1: either half), or None."""
        entries = self._writers.get((warp, reg), [])
        k = bisect.bisect_left(entries, (before, -2))
        while k > 0:
            k -= 1
            instr, h = entries[k]
            if h < 0 or half < 0 or h == half:
                return instr
        return None

    def access(self, instr, lane, reg, half):
        """The byte address instruction ``instr`` moves to or from ``half`` of ``reg`` in ``lane``, or None."""
        a, b = self._rows.get(instr, (0, 0))
        acc = self.acc
        hit = np.flatnonzero((acc["lane"][a:b] == lane) & (acc["reg"][a:b] == reg) &
                             (acc["half"][a:b] == max(half, 0)))
        return int(acc["addr"][a + hit[0]]) if hit.size else None

    def last_store(self, space, address, before):
        """``(instr, warp, lane, reg, half)`` of the last store before ``before`` that wrote the 2 bytes at
        ``address`` of ``space`` (``"shared"``/``"global"``), or None."""
        if self._stores is None:
            self._stores = {}
            acc = self.acc
            for row in np.flatnonzero(acc["store"]).tolist():
                key = (int(acc["space"][row]), int(acc["addr"][row]))
                self._stores.setdefault(key, []).append(row)
        rows = self._stores.get((_SPACES.index(space), int(address)), [])
        instrs = [int(self.acc["instr"][r]) for r in rows]
        k = bisect.bisect_left(instrs, before)
        if k == 0:
            return None
        r = rows[k - 1]
        return tuple(int(self.acc[n][r]) for n in ("instr", "warp", "lane", "reg", "half"))

    # -- who ---------------------------------------------------------------------------------------
    def who(self, name, coord, memory=None, executed=None):
        """Who holds element ``coord`` of a memory tensor among register tensor ``name``'s registers.

        ``memory``: the memory tensor whose coordinates ``coord`` are (default: the one that holds most
        of the addresses the tensor's registers are loaded from or stored to; :attr:`Who.others` lists
        the rest); ``executed``: ``bool[len(stream)]``, the positions executed, for ``done`` (default: all). ``ValueError``
        for an unknown tensor, a coordinate outside the memory tensor, or a tensor no load or store uses.
        """
        rt = self.tensors.register_tensor(name)
        acc = self.acc
        mask = np.zeros(acc["instr"].size, bool)
        for w, base in enumerate(rt.info.bases):
            mask |= (acc["warp"] == w) & (acc["reg"] >= base) & (acc["reg"] < base + rt.register_count)
        if rt.bits == 32:
            mask &= acc["half"] == 0
        if not mask.any():
            raise ValueError(f"who: no load or store moves {name}'s registers between registers and memory")
        candidates = self._memory_candidates(mask)
        if not candidates:
            raise ValueError(f"who: {name}'s loads and stores touch no shared or global tensor bound to a local "
                             f"of the program")
        if memory is None:
            memory = candidates[0]
        else:
            self.tensors.memory_tensor(memory)
        address = self.tensors.address_of(memory, coord)
        tensor = self.tensors.memory_tensors()[memory]
        space = {"smem": "shared", "gmem": "global"}[tensor.space]
        hit = mask & (acc["addr"] == address) & (acc["space"] == _SPACES.index(space))
        entries = []
        for row in np.flatnonzero(hit).tolist():
            w, reg, half = int(acc["warp"][row]), int(acc["reg"][row]), int(acc["half"][row])
            h = half if rt.bits == 16 else -1
            instr = int(acc["instr"][row])
            entries.append(WhoEntry(w, int(acc["lane"][row]), reg, h, rt.slot(w, reg, h), instr,
                                    bool(acc["store"][row]), executed is None or bool(executed[instr])))
        entries.sort(key=lambda e: (e.warp, e.instr, e.lane))
        return Who(name, memory, tuple(int(c) for c in coord), address, space, tuple(entries),
                   tuple(c for c in candidates if c != memory))

    def _memory_candidates(self, mask):
        """Memory tensors touched by the accesses ``mask`` selects, most-touched first."""
        acc = self.acc
        scores = []
        for space in _SPACES:
            sel = mask & (acc["space"] == _SPACES.index(space))
            if not sel.any():
                continue
            addresses = set(acc["addr"][sel].tolist())
            for n in self.tensors.memory_tensors(_TENSOR_SPACE[space]):
                count = self.tensors.contains(n, addresses)
                if count:
                    scores.append((-count, len(scores), n))
        return [n for _c, _k, n in sorted(scores)]

    # -- origin --------------------------------------------------------------------------------------
    def origin(self, warp, lane, reg, before, depth=4):
        """The :class:`Origin` of register ``reg`` of ``lane`` in ``warp`` at stream position ``before``.

        Each half is followed back through up to ``depth`` instructions: a load from shared memory to
        the store that wrote those bytes, that store's register to the instruction that wrote it, and
        so on (a ``mma``, ``mov`` or ``cvt`` ends the chain).
        """
        owners = self.tensors.owners(warp, reg)
        whole = bool(owners) and all(self.tensors.register_tensor(n).bits == 32 for n, _s in owners)
        halves = (-1,) if whole else (0, 1)
        return Origin(warp, lane, reg, before, {h: self._chain(warp, lane, reg, h, before, depth) for h in halves})

    def _chain(self, warp, lane, reg, half, before, depth):
        steps = []
        while depth > 0:
            depth -= 1
            k = self.last_writer(warp, reg, half, before)
            if k is None:
                break
            instr = self.stream[k]
            if instr.op not in (Op.LD, Op.LDMATRIX):
                steps.append(OriginStep(k, warp, lane, reg, half))
                break
            address = self.access(k, lane, reg, half)
            space = "shared" if instr.op == Op.LDMATRIX else instr.space
            steps.append(OriginStep(k, warp, lane, reg, half, address, space,
                                    tuple(self.tensors.locate(_TENSOR_SPACE[space], address))))
            if space != "shared":
                break
            stored = self.last_store(space, address, k)
            if stored is None:
                break
            s_instr, warp, lane, reg, s_half = stored
            h = s_half if half >= 0 else -1
            steps.append(OriginStep(s_instr, warp, lane, reg, h, address, space,
                                    tuple(self.tensors.locate(_TENSOR_SPACE[space], address))))
            before, half = s_instr, h
        return tuple(steps)

    @staticmethod
    def mma_position(instr, lane, reg):
        """``(row, col)`` in the mma's ``16 x 8`` D tile of D register ``reg`` (an index into ``instr.dst``)
        of ``lane`` (PTX's fragment map), or None when ``reg`` is not a D register."""
        if instr.op != Op.MMA or reg not in instr.dst:
            return None
        fmap = MMA_FRAGMENTS[(instr.shape, f"C.{instr.cd}")]
        j = instr.dst.index(reg)
        return fmap.at(lane, j, 0)
