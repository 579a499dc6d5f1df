"""What a program calls: ``copy``, ``gemm``, ``clear``, ``convert``, ``syncthreads`` -> warp instructions.

Each operation, called inside a traced program function, appends the warp instructions it lowers
to (:mod:`warpsim.program.instr`) with the per-lane addresses and register slots the CuTe views
give (:mod:`warpsim.cute.calls`); each instruction records the source line that called it.

- ``copy(src, dst)``: CuTe's automatic copy (:mod:`warpsim.cute.auto_copy`): ``ld``/``st`` of the
  widest vector both tensors allow (up to 128 bits for static layouts), else element by element.
- ``copy(tiled_copy, src, dst)``: the copy atom's instruction per atom call, in CuTe's order
  (``include/cute/algorithm/copy.hpp``): ``ldmatrix`` for the ``SM75_*_LDSM_*`` atoms (lane ``l``
  gives the address of the row its source partition starts at), ``ld``/``st`` of the atom's width
  for ``UniversalCopy`` (shared or global memory to registers and back); a memory-to-memory copy
  loads into 4 scratch registers and stores from them. Checks (``ProgramError`` naming the copy,
  the tensors and the offending element): the shapes match (same rank, same number of atom calls:
  the modes after the first), each call's values fill whole registers and lie contiguously in
  memory (CuTe: "failed to vectorize"), an ldmatrix row is 16 contiguous bytes at a 16-byte
  aligned address.
- ``copy_if(tiled_copy, pred, src, dst)``: CuTe's ``copy_if`` for ``UniversalCopy`` atoms: ``pred[c]``
  (a bool, or a bool per lane, known when tracing) says whether atom call ``c`` (in the order of
  ``copy``) moves data in a lane: ``@p ld`` / ``@p st``. Memory to memory, the lanes where it is
  false store zeros (the scratch registers are cleared first): the zero fill of ``cp.async`` with
  a source size of 0, which FlashAttention uses for rows past the sequence end.
- ``gemm(tiled_mma, a, b, c)``: ``c += a * b`` as the atom's ``mma`` per call, in CuTe's order
  (``include/cute/algorithm/gemm.hpp``); the fragments' types must be the atom's.
- ``clear(t)``: ``mov.b32 r, 0`` for every register of a register tensor.
- ``convert(src, dst)``: f32 elements to f16/bf16, ``cvt.rn.{f16,bf16}x2.f32 d, a, b`` per
  destination register, ``a`` (the upper half, PTX "cvt") from the element in the odd slot.
- ``syncthreads()``: ``bar.sync 0``.

>>> from warpsim.program.program import Program
>>> from warpsim.cute import make_tensor
>>> def kernel(tid):
...     acc = make_tensor("f32", (6,))
...     clear(acc)
...     syncthreads()
>>> stream = Program(kernel, threads=32).trace().stream
>>> [(i.ptx, i.dst) for i in stream]
[('mov.b32', (0, 1, 2, 3)), ('mov.b32', (4, 5)), ('bar.sync', ())]
>>> stream[0].line.line - stream[2].line.line
-1
"""

from __future__ import annotations

import numpy as np

from warpsim.errors import ProgramError
from warpsim.program.instr import Op
from warpsim.program.registers import slot_at, slot_registers
from warpsim.program.trace import current_tracer
from warpsim.cute.atoms.copy_sm75 import LDSM
from warpsim.cute.atoms.copy_universal import UniversalCopy
from warpsim.cute.auto_copy import auto_copy
from warpsim.cute.calls import copy_calls, gemm_calls, whole_registers
from warpsim.cute.copy_atom import Copy_Atom
from warpsim.cute.integers import brief, cute_str
from warpsim.cute.layout import make_layout, rank, size
from warpsim.cute.numeric import dtype_bits
from warpsim.cute.stride import idx2crd
from warpsim.cute.tensor import Tensor
from warpsim.cute.tiled_copy import ThrCopy, TiledCopy, make_tiled_copy
from warpsim.cute.tiled_mma import ThrMMA, TiledMMA

__all__ = ["copy", "copy_if", "gemm", "clear", "convert", "syncthreads", "describe"]

_SPACE = {"smem": "shared", "gmem": "global"}
_MAX_MOV = 4            # registers per mov instruction in the stream (hwcheck snapshots up to 4)


def describe(t):
    """A short text for messages: ``'smem f16 tensor ((_8,_1),_4,_4):((_1,_0),_8,_32)'``."""
    if not isinstance(t, Tensor):
        return repr(t)
    try:
        layout = str(t.layout)
    except ValueError:
        layout = f"{cute_str(t.shape)} (lane-dependent layout)"
    return f"{t.space} {t.dtype} tensor {layout}"


def _where(op, line):
    return f"{op} at {line}" if line else op


def _check_lanes(tracer, t, what, line):
    """A tensor partitioned for a lane vector must have one entry per traced lane (any thread indices:
    ``get_slice(tid % 32)`` is as good as ``get_slice(tid)``)."""
    lanes = t.lanes
    if lanes is not None and lanes.shape[0] != tracer.width:
        raise ProgramError(f"{_where(what, line)}: the tensor was partitioned for {lanes.shape[0]} threads "
                           f"{lanes.tolist()[:4]}..., but {tracer.width} lanes are traced (partition with the "
                           f"program's tid)")


def _slots(tracer, slots, what, line):
    """Register slots ``[calls, V]`` (per-lane ``[calls, lanes, V]`` must agree between lanes)."""
    if slots.ndim == 3:
        differ = np.nonzero((slots != slots[:, :1, :]).any(axis=(0, 2)))[0]
        if differ.size:
            raise ProgramError(f"{_where(what, line)}: divergent lanes: lanes {brief(differ)} address other "
                               f"registers than lane 0 (a register index must be the same in every lane)")
        slots = slots[:, 0, :]
    return slots


def _rows(tracer, loc):
    """Memory locations ``[calls, V]`` or ``[calls, lanes, V]`` -> each call's per-lane address of value 0."""
    if loc.ndim == 3:
        return np.ascontiguousarray(loc[:, :, 0])
    return np.ascontiguousarray(np.broadcast_to(loc[:, None, 0], (loc.shape[0], tracer.width)))


_REGISTERS = {}


def _registers(tracer, t, slots, what, line):
    """Each call's whole 32-bit registers (a list of tuples), offset by the storage's base register.

    Slots of register tensors are thread-independent: the result is memoised per (slots, dtype, base).
    """
    base = tracer.register_base(t.engine)
    key = (slots.tobytes(), slots.shape, t.dtype, base)
    regs = _REGISTERS.get(key)
    if regs is None:
        try:
            whole = whole_registers(slots, t.dtype, what)
        except ValueError as e:
            raise ProgramError(f"{_where(what, line)}: {e} ({describe(t)})") from None
        if len(_REGISTERS) > 4096:
            _REGISTERS.clear()
        regs = _REGISTERS[key] = [tuple(r) for r in (whole + base).tolist()]
    return regs


_RANK_SIZE = {}


def _rank_rest(layout):
    """``(rank, size of the modes after the first)`` of a layout: what CuTe's ``copy`` requires src and dst
    to share (mode 0 holds the values of one atom call; ldmatrix .x1/.x2 sources hold more than their
    destinations). Memoised by identity (the entry keeps the layout alive, so its id cannot be reused
    while the entry exists); slices and partitions come from CuTe's caches."""
    entry = _RANK_SIZE.get(id(layout))
    if entry is None or entry[0] is not layout:
        if len(_RANK_SIZE) > 4096:
            _RANK_SIZE.clear()
        r = rank(layout)
        rest = int(size(layout)) // int(size(layout, 0)) if r > 1 else 1
        entry = _RANK_SIZE[id(layout)] = (layout, r, rest)
    return entry[1:]


def _tiled_copy(copy_op, line):
    if isinstance(copy_op, TiledCopy):
        return copy_op
    if isinstance(copy_op, ThrCopy):
        return copy_op.tiled_copy
    if isinstance(copy_op, Copy_Atom):
        return make_tiled_copy(copy_op)
    raise ProgramError(f"{_where('copy', line)}: expected a TiledCopy, ThrCopy or Copy_Atom, got {copy_op!r}")


def _check_operands(tracer, src, dst, what, line):
    for name, t in (("src", src), ("dst", dst)):
        if not isinstance(t, Tensor) or t.space == "coord":
            raise ProgramError(f"{_where(what, line)}: {name} must be a memory or register tensor, got {describe(t)}")
        _check_lanes(tracer, t, what, line)


def copy(*args):
    """CuTe ``copy(tiled_copy, src, dst)``: one instruction per atom call (see the module docstring).

    ``copy(src, dst)``: CuTe's automatic copy, which picks the widest ``UniversalCopy`` both tensors
    allow (:mod:`warpsim.cute.auto_copy`), then copies as ``copy(Copy_Atom(that, dtype), src, dst)``.
    """
    tracer = current_tracer("copy")
    line = tracer.source_line()
    if len(args) == 2:
        src, dst = args
        _check_operands(tracer, src, dst, "copy(src, dst)", line)
        try:
            op, src_v, dst_v = auto_copy(src, dst)
            per_copy = op.bits // dtype_bits(dst.dtype)        # one thread, its values in one copy
            atom = make_tiled_copy(Copy_Atom(op, dst.dtype), make_layout(1), make_layout(per_copy))
        except ValueError as e:
            raise ProgramError(f"{_where('copy(src, dst)', line)}: {e} (src: {describe(src)}; "
                               f"dst: {describe(dst)})") from None
        return _copy(tracer, line, atom, src_v, dst_v)
    if len(args) != 3:
        raise ProgramError(f"{_where('copy', line)}: copy takes (src, dst) or (copy_atom or tiled_copy, src, dst), "
                           f"got {len(args)} arguments")
    return _copy(tracer, line, *args)


def copy_if(copy_op, pred, src, dst):
    """CuTe ``copy_if(tiled_copy, pred, src, dst)``: ``copy`` where ``pred[c]`` holds for atom call ``c``
    (see the module docstring; memory-to-memory copies zero-fill the rest)."""
    tracer = current_tracer("copy_if")
    line = tracer.source_line()
    return _copy(tracer, line, copy_op, src, dst, pred=pred)


def _lane_predicates(tracer, pred, calls, what, line):
    """``int64[calls, width]``: 1 where an atom call moves data in a lane, from ``pred``."""
    try:
        values = [np.broadcast_to(np.asarray(p), (tracer.width,)) for p in pred]
    except (TypeError, ValueError) as e:
        raise ProgramError(f"{_where(what, line)}: pred must hold a bool or a bool per lane for each atom "
                           f"call ({e})") from None
    if len(values) != calls or any(v.dtype != np.bool_ for v in values):
        raise ProgramError(f"{_where(what, line)}: pred must hold {calls} entries (one per atom call), each a "
                           f"bool or a bool per lane; got {len(values)} of {sorted({str(v.dtype) for v in values})}")
    return np.array(values, dtype=np.int64).reshape(calls, tracer.width)


def _copy(tracer, line, copy_op, src, dst, pred=None):
    tiled = _tiled_copy(copy_op, line)
    op = tiled.atom.op
    what = f"copy({op.name})"
    _check_operands(tracer, src, dst, what, line)
    if src.space == "rmem" and dst.space == "rmem":
        raise ProgramError(f"{_where(what, line)}: register-to-register copies are not supported")
    if _rank_rest(src._layout) != _rank_rest(dst._layout):
        raise ProgramError(f"{_where(what, line)}: the shapes do not match: src {cute_str(src.shape)} "
                           f"({describe(src)}), dst {cute_str(dst.shape)} ({describe(dst)})")
    try:
        calls = copy_calls(tiled, src, dst)
    except ValueError as e:
        raise ProgramError(f"{_where(what, line)}: {e} (src: {describe(src)}; dst: {describe(dst)})") from None
    if pred is not None:
        if not isinstance(op, UniversalCopy):
            raise ProgramError(f"{_where(what, line)}: copy_if takes UniversalCopy atoms (ld/st), not {op.name}")
        pred = _lane_predicates(tracer, pred, calls.src.shape[0], "copy_if", line)
    if isinstance(op, LDSM):
        _copy_ldmatrix(tracer, op, calls, src, dst, what, line)
    elif isinstance(op, UniversalCopy):
        _copy_universal(tracer, op, calls, src, dst, what, line, pred)
    else:
        raise ProgramError(f"{_where(what, line)}: the copy atom {op.name} has no instruction in warpsim")


def _copy_ldmatrix(tracer, op, calls, src, dst, what, line):
    if src.space != "smem" or dst.space != "rmem":
        raise ProgramError(f"{_where(what, line)}: ldmatrix copies shared memory to registers, "
                           f"not {src.space} to {dst.space}")
    rows = _rows(tracer, calls.src)
    regs = _registers(tracer, dst, _slots(tracer, calls.dst, what, line), what, line)
    serving = tracer.serving(8 * op.num)                    # the lanes whose addresses the instruction reads
    if (rows[:, serving] & 15).any():
        _misaligned(tracer, rows, serving, calls, src, what, line)
    num, trans = op.num, op.trans
    for c, dst_regs in enumerate(regs):
        tracer.emit(Op.LDMATRIX, dst=dst_regs, addr=rows[c], num=num, trans=trans, line=line)


def _misaligned(tracer, rows, serving, calls, src, what, line):
    columns = np.arange(rows.shape[1])[serving]
    c, j = (int(x) for x in np.argwhere(rows[:, columns] % 16 != 0)[0])
    element = _plain(idx2crd(int(calls.src_index[c, 0]), src.shape))
    raise ProgramError(f"{_where(what, line)}: lane {int(tracer.lanes[columns[j]])}'s row address "
                       f"{int(rows[c, columns[j]]):#x} (src element {element}) is not 16-byte aligned; "
                       f"an ldmatrix row is 16 contiguous bytes at a 16-byte aligned address (src: {describe(src)})")


def _plain(coord):
    """A coordinate as nested tuples of Python ints: ``((0, 1), 3)``."""
    if isinstance(coord, tuple):
        return tuple(_plain(c) for c in coord)
    return int(coord)


def _access(tracer, t, slots, bits, what, line):
    """Each call's registers (tuples) and halves that one ld/st of ``bits`` bits moves."""
    if bits == 16:
        if dtype_bits(t.dtype) != 16:
            raise ProgramError(f"{_where(what, line)}: a 16-bit access of {t.dtype} registers")
        base = tracer.register_base(t.engine)
        regs, halves = slot_registers(t.dtype, slots[:, 0])
        return [(base + r,) for r in regs.tolist()], halves.tolist()
    regs = _registers(tracer, t, slots, what, line)
    return regs, [-1] * len(regs)


def _copy_universal(tracer, op, calls, src, dst, what, line, pred=None):
    bits = op.bits
    if pred is not None and bits == 16:
        raise ProgramError(f"{_where(what, line)}: copy_if moves 32 bits or more per atom call, not 16")
    when = (lambda c: None) if pred is None else (lambda c: pred[c])
    if dst.space == "rmem":
        rows = _rows(tracer, calls.src)
        regs, half = _access(tracer, dst, _slots(tracer, calls.dst, what, line), bits, what, line)
        space = _SPACE[src.space]
        for c, dst_regs in enumerate(regs):
            tracer.emit(Op.LD, dst=dst_regs, addr=rows[c], space=space, bits=bits, half=half[c], pred=when(c),
                        line=line)
    elif src.space == "rmem":
        rows = _rows(tracer, calls.dst)
        regs, half = _access(tracer, src, _slots(tracer, calls.src, what, line), bits, what, line)
        space = _SPACE[dst.space]
        for c, src_regs in enumerate(regs):
            tracer.emit(Op.ST, src=src_regs, addr=rows[c], space=space, bits=bits, half=half[c], pred=when(c),
                        line=line)
    else:
        src_rows, dst_rows = _rows(tracer, calls.src), _rows(tracer, calls.dst)
        base = tracer.scratch()
        regs = tuple(range(base, base + max(1, bits // 32)))
        half = 0 if bits == 16 else -1
        ld_space, st_space = _SPACE[src.space], _SPACE[dst.space]
        for c in range(src_rows.shape[0]):
            if pred is not None:
                tracer.emit(Op.MOV, dst=regs, imm=0, line=line)
            tracer.emit(Op.LD, dst=regs, addr=src_rows[c], space=ld_space, bits=bits, half=half, pred=when(c),
                        line=line)
            tracer.emit(Op.ST, src=regs, addr=dst_rows[c], space=st_space, bits=bits, half=half, line=line)


def gemm(tiled_mma, a, b, c):
    """CuTe ``gemm(tiled_mma, A, B, C)``: ``C += A * B`` as one ``mma`` per atom call, in CuTe's order."""
    tracer = current_tracer("gemm")
    line = tracer.source_line()
    if isinstance(tiled_mma, ThrMMA):
        tiled_mma = tiled_mma.tiled_mma
    if not isinstance(tiled_mma, TiledMMA):
        raise ProgramError(f"{_where('gemm', line)}: expected a TiledMMA, got {tiled_mma!r}")
    atom = tiled_mma.atom
    what = f"gemm({atom.op.name})"
    for name, t, want in (("A", a, atom.ValTypeA), ("B", b, atom.ValTypeB), ("C", c, atom.ValTypeC)):
        if not isinstance(t, Tensor) or t.space != "rmem":
            raise ProgramError(f"{_where(what, line)}: {name} must be a register tensor, got {describe(t)}")
        if t.dtype != want:
            raise ProgramError(f"{_where(what, line)}: {name} holds {t.dtype}, but the atom takes {want} "
                               f"({describe(t)})")
        _check_lanes(tracer, t, what, line)
    try:
        calls = gemm_calls(tiled_mma, a, b, c)
    except ValueError as e:
        raise ProgramError(f"{_where(what, line)}: {e}") from None
    ra = _registers(tracer, a, _slots(tracer, calls.a, what, line), f"{what} A", line)
    rb = _registers(tracer, b, _slots(tracer, calls.b, what, line), f"{what} B", line)
    rc = _registers(tracer, c, _slots(tracer, calls.c, what, line), f"{what} C", line)
    m, n, k = atom.Shape_MNK
    shape, ab, cd = f"m{m}n{n}k{k}", atom.ValTypeA, atom.ValTypeC
    for i, d in enumerate(rc):
        tracer.emit(Op.MMA, dst=d, src=ra[i] + rb[i] + d, shape=shape, ab=ab, cd=cd, line=line)


def _register_tensor(op, tracer, t, line):
    if not isinstance(t, Tensor) or t.space != "rmem":
        raise ProgramError(f"{_where(op, line)}: expected a register tensor, got {describe(t)}")
    _check_lanes(tracer, t, op, line)
    return _slots(tracer, t.address_table()[None], op, line)[0]


def clear(t):
    """CuTe ``clear(t)``: every register of the register tensor ``t`` set to 0 (``mov.b32``)."""
    tracer = current_tracer("clear")
    line = tracer.source_line()
    slots = _register_tensor("clear", tracer, t, line)
    regs = sorted(set(slot_registers(t.dtype, slots)[0].tolist()))
    if dtype_bits(t.dtype) == 16:
        present = set(slots.tolist())
        half = [r for r in regs if slot_at(t.dtype, r, 0) not in present or slot_at(t.dtype, r, 1) not in present]
        if half:
            raise ProgramError(f"{_where('clear', line)}: the tensor holds only one half of register slot pair "
                               f"({2 * half[0]}, {2 * half[0] + 1}); clear a tensor of whole registers "
                               f"({describe(t)})")
    base = tracer.register_base(t.engine)
    regs = [base + r for r in regs]
    for i in range(0, len(regs), _MAX_MOV):
        tracer.emit(Op.MOV, dst=tuple(regs[i:i + _MAX_MOV]), imm=0, line=line)


def convert(src, dst):
    """``dst[i] = src[i]`` rounded to nearest even: f32 register tensor -> f16/bf16 register tensor.

    One ``cvt.rn.{f16,bf16}x2.f32 d, a, b`` per destination register ``d``: ``b`` is the element in
    its even slot (low half), ``a`` the element in its odd slot (high half).
    """
    tracer = current_tracer("convert")
    line = tracer.source_line()
    src_slots = _register_tensor("convert", tracer, src, line)
    dst_slots = _register_tensor("convert", tracer, dst, line)
    if src.dtype != "f32" or dst.dtype not in ("f16", "bf16"):
        raise ProgramError(f"{_where('convert', line)}: converts f32 to f16 or bf16, not {src.dtype} to "
                           f"{dst.dtype}")
    if src_slots.shape != dst_slots.shape:
        raise ProgramError(f"{_where('convert', line)}: the shapes do not match: src {cute_str(src.shape)}, "
                           f"dst {cute_str(dst.shape)}")
    element_of = {int(s): i for i, s in enumerate(dst_slots.tolist())}
    src_base, dst_base = tracer.register_base(src.engine), tracer.register_base(dst.engine)
    for reg in sorted(set(slot_registers(dst.dtype, dst_slots)[0].tolist())):
        lo, hi = element_of.get(slot_at(dst.dtype, reg, 0)), element_of.get(slot_at(dst.dtype, reg, 1))
        if lo is None or hi is None:
            raise ProgramError(f"{_where('convert', line)}: dst holds only one half of register slot pair "
                               f"({2 * reg}, {2 * reg + 1}); cvt writes whole registers ({describe(dst)})")
        tracer.emit(Op.CVT, dst=(dst_base + reg,), src=(src_base + int(src_slots[hi]), src_base + int(src_slots[lo])),
                    ab=dst.dtype, line=line)


def syncthreads():
    """CUDA ``__syncthreads()``: ``bar.sync 0`` (every warp must reach it the same number of times)."""
    tracer = current_tracer("syncthreads")
    tracer.emit(Op.BAR, line=tracer.source_line())
