"""A traced program's tensors as the debugger sees them: register tensors with their views, memory tensors by address.

Register tensors (``Trace.tensors``): a per-thread fragment ``name`` of ``slots`` elements lives in
fixed registers of every thread, slot by slot as :mod:`warpsim.program.registers` says (``base`` per
warp). It has two views, as in CuTe:

- the **MMA view**: the tensor as the program bound it (``partition_fragment_A/B/C``): element
  ``i`` at coordinate ``idx2crd(i, shape)`` is slot ``tensor.address(i)``;
- the **copy view**: ``retile_D`` (or ``retile_S``) of the tensor through the ``ThrCopy`` that fills
  (or empties) it. The program binds its thread copies to local names (``Trace.tilings``); the
  view chosen is the first whose atom calls (``NumValDst`` / ``NumValSrc`` consecutive values each)
  are, value by value, the register operands of warp 0's ``ldmatrix`` instructions (for an
  ``LDSM`` atom) or ``ld``/``st`` instructions (for ``UniversalCopy``).

Memory tensors (``Trace.memory_tensors``, the whole tiles: not one thread's partition): an address
inside one maps back to its coordinate, one integer per top-level mode (``(row, col)`` of a 2-D tile).

>>> from warpsim.program.program import Program
>>> from warpsim.program.ops import copy
>>> from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_tensor, make_tiled_copy, make_smem_ptr
>>> def kernel(tid, *, x):
...     tiled = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f16"), make_layout(32), make_layout(2))
...     thr = tiled.get_slice(tid)
...     frag = make_tensor("f16", make_layout((2, 1)))
...     copy(tiled, thr.partition_S(x), thr.retile_D(frag))
>>> t = Program(kernel, threads=32, inputs={"x": ((64,), "f16")}).trace()
>>> tensors = TraceTensors(t)
>>> frag = tensors.register_tensor("frag")
>>> frag.registers(0).tolist(), frag.copy_name, frag.coord("copy", 1)
([0, 0], 'thr', '((1,0),0)')
>>> tensors.locate("gmem", 6)
[('x', (3,))]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpsim.cute import idx2crd, size
from warpsim.cute.atoms.copy_sm75 import LDSM
from warpsim.cute.tiled_copy import ThrCopy
from warpsim.cute.numeric import dtype_bits
from warpsim.program.instr import Op
from warpsim.program.registers import slot_registers

__all__ = ["TraceTensors", "RegisterTensor", "coord_text", "VIEWS"]

VIEWS = ("mma", "copy")


def coord_text(coord):
    """A coordinate as CuTe prints it for integers, without underscores: ``((0,1),3)``.

    >>> coord_text(((0, 1), 3)), coord_text(5)
    ('((0,1),3)', '5')
    """
    if isinstance(coord, tuple):
        return "(" + ",".join(coord_text(c) for c in coord) + ")"
    return str(int(coord))


def _signature(instr):
    """``(ldmatrix?, registers, halves)`` of a load or store: one entry per 16-bit half it moves."""
    regs = instr.dst if instr.op in (Op.LD, Op.LDMATRIX) else instr.src
    if instr.op in (Op.LD, Op.ST) and instr.bits == 16:
        return False, (regs[0],), (instr.half,)
    return instr.op == Op.LDMATRIX, tuple(r for r in regs for _h in (0, 1)), tuple(h for _r in regs for h in (0, 1))


@dataclass(eq=False)
class RegisterTensor:
    """One register tensor of a trace: ``info`` (:class:`~warpsim.program.registers.TensorInfo`), its MMA view
    ``tensor`` and, when found, its copy view ``copy_tensor`` through the program's ``copy_name``."""

    name: str
    info: object
    tensor: object
    copy_tensor: object = None
    copy_name: str = ""

    @property
    def bits(self):
        return self.info.bits

    @property
    def dtype(self):
        return self.info.dtype

    @property
    def register_count(self):
        """Registers per thread the tensor occupies."""
        return self.info.register_count

    def registers(self, warp):
        """``int64[slots]``: the register of each slot in ``warp``."""
        return self.info.registers(warp)

    def halves(self):
        """``int64[slots]``: the half of each slot (0: bits 0..15, 1: bits 16..31; -1 for 32-bit elements)."""
        return self.info.halves()

    def slot(self, warp, reg, half=0):
        """The slot held by ``half`` of register ``reg`` in ``warp``, or None."""
        return self.info.slot(warp, reg, half)

    def view(self, kind):
        """The CuTe register tensor of view ``kind`` (``"mma"`` or ``"copy"``)."""
        if kind not in VIEWS:
            raise ValueError(f"view: unknown view {kind!r}; expected mma or copy")
        if kind == "mma":
            return self.tensor
        if self.copy_tensor is None:
            raise ValueError(f"{self.name}: no copy view: no thread copy bound to a local of the program "
                             f"(a ThrCopy) retiles it into the registers its loads or stores use")
        return self.copy_tensor

    def slots(self, kind):
        """``int64[size]``: the slot of each element (1-D index) of view ``kind``."""
        return self.view(kind).address_table()

    def coord(self, kind, index):
        """The text of element ``index``'s coordinate in view ``kind``."""
        return coord_text(idx2crd(int(index), self.view(kind).shape))

    def index_of_slot(self, kind, slot):
        """The 1-D indices of view ``kind`` that are slot ``slot`` (one for a fragment)."""
        return np.flatnonzero(self.slots(kind) == slot).tolist()


class TraceTensors:
    """The tensors of a :class:`~warpsim.program.trace_result.Trace`, for the debugger (see the module docstring)."""

    def __init__(self, trace):
        self.trace = trace
        self._registers = {}
        self._addresses = {}
        self._loads = None
        self._whole = None

    # -- register tensors ------------------------------------------------------------------------
    @property
    def names(self):
        """Names of the register tensors."""
        return tuple(self.trace.tensors)

    def register_tensor(self, name):
        """The :class:`RegisterTensor` called ``name``; ``ValueError`` listing the names otherwise."""
        found = self._registers.get(name)
        if found is not None:
            return found
        info = self.trace.tensors.get(name)
        if info is None:
            raise ValueError(f"no register tensor {name!r} (the program's per-thread tensors: "
                             f"{', '.join(self.names) or 'none'})")
        rt = RegisterTensor(name, info, info.tensor)
        rt.copy_name, rt.copy_tensor = self._copy_view(rt)
        self._registers[name] = rt
        return rt

    def owners(self, warp, reg):
        """``[(name, slots)]``: the register tensors that hold register ``reg`` in ``warp`` and their slots there."""
        out = []
        for name in self.names:
            rt = self.register_tensor(name)
            slots = [s for h in ((0, 1) if rt.bits == 16 else (-1,)) for s in [rt.slot(warp, reg, h)] if s is not None]
            if slots:
                out.append((name, slots))
        return out

    def _operand_signatures(self):
        if self._loads is None:
            self._loads = {_signature(i) for i in self.trace.stream
                           if i.warp == 0 and i.op in (Op.LD, Op.ST, Op.LDMATRIX)}
        return self._loads

    def _copy_view(self, rt):
        if rt.tensor is None or not rt.info.bases:
            return "", None
        signatures = self._operand_signatures()
        base = rt.info.bases[0]
        for name, obj in self.trace.tilings.items():
            if not isinstance(obj, ThrCopy):
                continue
            atom = obj.tiled_copy.atom
            ldmatrix = isinstance(atom.op, LDSM)
            for retile, per_call in ((obj.retile_D, atom.NumValDst), (obj.retile_S, atom.NumValSrc)):
                try:
                    view = retile(rt.tensor)
                    slots = view.address_table()
                except (ValueError, TypeError):
                    continue
                if slots.ndim != 1 or slots.size % per_call:
                    continue
                if all(self._call_matches(signatures, ldmatrix, slots[c:c + per_call], base, rt.dtype)
                       for c in range(0, slots.size, per_call)):
                    return name, view
        return "", None

    @staticmethod
    def _call_matches(signatures, ldmatrix, slots, base, dtype):
        """Atom call values ``slots`` (CuTe's value order) are, half by half, the registers of an instruction."""
        regs, halves = slot_registers(dtype, slots)
        regs = tuple((base + regs).tolist())
        if dtype_bits(dtype) == 16:
            return (ldmatrix, regs, tuple(halves.tolist())) in signatures
        return (ldmatrix, tuple(r for r in regs for _h in (0, 1)), tuple(h for _r in regs for h in (0, 1))) in signatures

    # -- memory tensors --------------------------------------------------------------------------
    def memory_tensors(self, space=None):
        """``{name: tensor}`` of the whole memory tensors (``space``: ``"smem"``/``"gmem"``): those partitioned
        for no lane vector whose elements are not a strict subset of another's (thread-mode traces bind
        one thread's partitions, such as ``partition_S``, which are parts of a tile)."""
        if self._whole is None:
            single = {n: t for n, t in self.trace.memory_tensors.items() if t.lanes is None}
            sets = {n: (t.space, frozenset(t.address_table().tolist())) for n, t in single.items()}
            self._whole = [n for n, (sp, a) in sets.items()
                           if not any(sp == sp2 and a < b for m, (sp2, b) in sets.items() if m != n)]
        return {n: self.trace.memory_tensors[n] for n in self._whole
                if space is None or self.trace.memory_tensors[n].space == space}

    def memory_tensor(self, name):
        """The memory tensor ``name``; ``ValueError`` listing the names otherwise."""
        tensors = self.memory_tensors()
        if name not in tensors:
            raise ValueError(f"no shared or global tensor {name!r} bound to a local of the program (have: "
                             f"{', '.join(tensors) or 'none'})")
        return tensors[name]

    def _address_index(self, name):
        table = self._addresses.get(name)
        if table is None:
            t = self.trace.memory_tensors[name]
            table = {}
            for i, a in enumerate(t.address_table().tolist()):
                table.setdefault(a, i)
            self._addresses[name] = table
        return table

    def coord_of(self, name, index):
        """Element ``index`` of memory tensor ``name`` as one integer per top-level mode."""
        t = self.trace.memory_tensors[name]
        sizes = tuple(int(size(t.layout, m)) for m in range(t.rank)) if t.rank > 1 else (int(size(t.layout)),)
        c = idx2crd(int(index), sizes)
        return tuple(int(x) for x in c) if isinstance(c, tuple) else (int(c),)

    def locate(self, space, address):
        """``[(name, coord)]`` of the memory tensors in ``space`` (``"smem"``/``"gmem"``) holding byte ``address``."""
        out = []
        for name in self.memory_tensors(space):
            i = self._address_index(name).get(int(address))
            if i is not None:
                out.append((name, self.coord_of(name, i)))
        return out

    def contains(self, name, addresses):
        """How many of ``addresses`` are element addresses of memory tensor ``name``."""
        table = self._address_index(name)
        return sum(1 for a in addresses if int(a) in table)

    def address_of(self, name, coord):
        """The byte address of element ``coord`` (one integer per top-level mode) of memory tensor ``name``."""
        t = self.memory_tensor(name)
        sizes = tuple(int(size(t.layout, m)) for m in range(t.rank)) if t.rank > 1 else (int(size(t.layout)),)
        coord = tuple(coord)
        if len(coord) != len(sizes) or any(isinstance(c, bool) or not isinstance(c, (int, np.integer))
                                           for c in coord):
            raise ValueError(f"{name} has {len(sizes)} modes of sizes {sizes}: give {len(sizes)} integer "
                             f"coordinates, got {coord}")
        bad = [(c, s) for c, s in zip(coord, sizes) if not 0 <= c < s]
        if bad:
            raise ValueError(f"coordinate {coord} is outside {name}'s shape {sizes}")
        return int(t.address(*coord) if len(coord) > 1 else t.address(coord[0]))
