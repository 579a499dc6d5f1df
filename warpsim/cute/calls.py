"""The atom calls that CuTe's ``copy`` and ``gemm`` make, as integer tables (for lowering).

``copy_calls(tiled_copy, src, dst)`` follows ``include/cute/algorithm/copy.hpp`` (``copy`` with a
Copy_Atom: group the rest modes, drop the destination's static stride-0 modes (``nullspace``),
loop, and peel modes in ``Copy_Atom::call`` until a call moves ``NumValSrc``/``NumValDst`` values).
``gemm_calls(tiled_mma, A, B, C)`` follows ``include/cute/algorithm/gemm.hpp``: for each k, the
(V,M) x (V,N) => (V,M,N) traversal chosen by the operands' value widths (row-major serpentine
when A holds 8 bytes per call, kinked serpentine for 4 and 4, column-major serpentine
otherwise — which is the case of ``m16n8k16`` with 16-bit A).

Each call lists, in the atom's value order, where its values are: storage slots for register
tensors (thread-independent), byte addresses for shared/global tensors (per lane for lane
vectors). Element orders are computed once per shape (cached) and gathered with numpy.

>>> tiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (64, 16, 16))
>>> thr = tiled_mma.get_slice(0)
>>> a = make_fragment_like(make_tensor("f16", ((2, 2, 2), 1, 4)))
>>> b = make_tensor("f16", (4, 8, 4))
>>> c = partition_fragment_C(tiled_mma, (64, 64))
>>> calls = gemm_calls(tiled_mma, a, b, c)
>>> len(calls), calls.mnk[:3].tolist(), calls.a[0].tolist(), calls.registers("B")[1].tolist()
(32, [[0, 0, 0], [0, 1, 0], [0, 2, 0]], [0, 1, 2, 3, 4, 5, 6, 7], [2, 3])
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from warpsim.cute.integers import _, cute_str, is_constant, is_static, is_tuple
from warpsim.cute import int_tuple as it
from warpsim.cute.layout import Layout, get, group, is_composed, make_layout, rank, shape, size, slice_and_offset
from warpsim.cute.stride import compact_col_major
from warpsim.cute.table import layout_table
from warpsim.cute.tiling import zipped_divide
from warpsim.cute.numeric import dtype_bits
from warpsim.cute.tensor import element_table, is_tensor
from warpsim.cute.tiled_copy import TiledCopy
from warpsim.cute.tiled_mma import TiledMMA

__all__ = ["CopyCalls", "MmaCalls", "copy_calls", "gemm_calls", "nullspace", "whole_registers"]


def nullspace(layout):
    """CuTe ``nullspace``: the layout of the modes with a static ``_0`` stride (``_1:_0`` if none).

    >>> str(nullspace(Layout((4, 2, 3), (0, 1, 0)))), str(nullspace(Layout((4, 2), (1, 4))))
    ('(_4,_3):(_1,_8)', '_1:_0')
    """
    flat_shape = it.flatten_to_tuple(layout.shape)
    flat_stride = it.flatten_to_tuple(layout.stride)
    picks = [i for i, d in enumerate(flat_stride) if is_constant(0, d)]
    if not picks:
        return Layout(1, 0)
    rstride = compact_col_major(flat_shape)
    return Layout(it.unwrap(tuple(flat_shape[i] for i in picks)), it.unwrap(tuple(rstride[i] for i in picks)))


def whole_registers(slots, dtype, what="registers"):
    """32-bit register indices of ``slots`` (``int64[..., V]``): one per slot for 32-bit data, one per
    pair ``(2j, 2j+1)`` for 16-bit data; ``ValueError`` if a pair is not one whole register.

    >>> whole_registers(np.array([[4, 5, 0, 1]]), "f16").tolist()
    [[2, 0]]
    """
    slots = np.asarray(slots, dtype=np.int64)
    if dtype_bits(dtype) == 32:
        return slots
    lo, hi = slots[..., 0::2], slots[..., 1::2]
    if lo.shape != hi.shape or not (np.all(lo % 2 == 0) and np.all(hi == lo + 1)):
        raise ValueError(f"{what}: 16-bit slots {slots.reshape(-1, slots.shape[-1])[0].tolist()}... do not pair "
                         f"into whole 32-bit registers (values 2r, 2r+1 must be slots 2j, 2j+1)")
    return lo // 2


@dataclass(frozen=True)
class CopyCalls:
    """The atom calls of one ``copy``: ``src``/``dst`` hold each call's value locations in atom order.

    Register sides: ``int64[calls, V]`` storage slots. Memory sides: byte addresses,
    ``int64[calls, V]`` for one thread, ``int64[calls, lanes, V]`` for a lane vector.
    ``src_index``/``dst_index`` are the elements' 1-D indices in the tensors (thread-independent).
    """

    tiled_copy: TiledCopy
    src_space: str
    dst_space: str
    src_dtype: str
    dst_dtype: str
    src_index: np.ndarray
    dst_index: np.ndarray
    src: np.ndarray
    dst: np.ndarray

    def __len__(self):
        return int(self.src_index.shape[0])

    def registers(self, side):
        """Whole 32-bit register indices of the register side ``"src"`` or ``"dst"`` ([calls, regs])."""
        space, dtype = (self.src_space, self.src_dtype) if side == "src" else (self.dst_space, self.dst_dtype)
        if side not in ("src", "dst") or space != "rmem":
            raise ValueError(f"CopyCalls.registers: {side!r} is not a register side of this copy ({space})")
        return whole_registers(getattr(self, side), dtype, f"copy {self.tiled_copy.atom.op.name} {side}")


@dataclass(frozen=True)
class MmaCalls:
    """The atom calls of one ``gemm`` in CuTe's order: ``mnk[i]`` is call i's (m, n, k) fragment
    coordinate; ``a``, ``b``, ``c`` its A, B, C (= D) storage slots in atom value order."""

    tiled_mma: TiledMMA
    mnk: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    dtypes: tuple

    def __len__(self):
        return int(self.mnk.shape[0])

    def registers(self, operand):
        """Whole 32-bit registers of ``operand`` (``"A"``, ``"B"``, ``"C"``) for every call ([calls, regs])."""
        index = {"A": 0, "B": 1, "C": 2}.get(operand)
        if index is None:
            raise ValueError(f"MmaCalls.registers: operand must be 'A', 'B' or 'C', got {operand!r}")
        slots = (self.a, self.b, self.c)[index]
        return whole_registers(slots, self.dtypes[index], f"gemm {self.tiled_mma.atom.op.name} {operand}")


# -- copy ------------------------------------------------------------------------------------------

@lru_cache(maxsize=1024)
def _index_layout(shape_, zero_flags=None):
    """Column-major 1-D element indices of ``shape_``; leaves flagged zero get stride ``_0``."""
    layout = make_layout(shape_)
    if zero_flags is None or not any(zero_flags):
        return layout
    flat = it.flatten_to_tuple(layout.stride)
    strides = tuple(0 if z else d for z, d in zip(zero_flags, flat))
    return Layout(layout.shape, it.unflatten(strides, layout.shape))


def _table(view):
    layout, offset = view
    return layout_table(layout) + np.int64(int(offset))


def _slice(view, coord):
    layout, offset = view
    sliced, off = slice_and_offset(coord, layout)
    return sliced, int(offset) + int(off)


def _plan_copy(src, dst, nvs, nvd, calls):
    (sl, so), (dl, do) = src, dst
    r = rank(sl)
    if r != rank(dl):
        raise ValueError(f"copy: rank mismatch: src {cute_str(shape(sl))} vs dst {cute_str(shape(dl))}")
    if r == 1:
        _plan_call(src, dst, nvs, nvd, calls)
        return
    sv, dv = (group(sl, 1, r), so), (group(dl, 1, r), do)
    if is_static(shape(sv[0])) and is_static(shape(dv[0])):
        if size(sv[0], 1) != size(dv[0], 1):
            raise ValueError(f"copy: src {cute_str(shape(sl))} and dst {cute_str(shape(dl))} differ in their rest modes")
        null = nullspace(get(dv[0], 1))
        dn = (zipped_divide(dv[0], (shape(dv[0], 0), null)), dv[1])
        sn = (zipped_divide(sv[0], (shape(sv[0], 0), null)), sv[1])
        dv, sv = _slice(dn, ((_, 0), (0, _))), _slice(sn, ((_, 0), (0, _)))
    for i in range(int(size(dv[0], 1))):
        _plan_call(_slice(sv, (_, i)), _slice(dv, (_, i)), nvs, nvd, calls)


def _plan_call(src, dst, nvs, nvd, calls):
    if int(size(src[0])) == nvs or int(size(dst[0])) == nvd:
        calls.append((_table(src), _table(dst)))
    elif is_tuple(shape(src[0])) and is_tuple(shape(dst[0])):
        _plan_copy((get(src[0], 0), src[1]), (get(dst[0], 0), dst[1]), nvs, nvd, calls)
    else:
        raise ValueError(f"copy: the partitioning (src {cute_str(shape(src[0]))}, dst {cute_str(shape(dst[0]))}) "
                         f"does not match the instruction's {nvs}/{nvd} values per thread: mode 0 of a "
                         f"partitioned tensor is the atom's value mode (the values one instruction moves "
                         f"per thread), so it must hold {nvs} (src) / {nvd} (dst) values or be a tuple "
                         f"that starts with them")


@lru_cache(maxsize=1024)
def _copy_plan(src_shape, dst_index_layout, nvs, nvd):
    calls = []
    _plan_copy((make_layout(src_shape), 0), (dst_index_layout, 0), nvs, nvd, calls)
    if not calls:
        return np.zeros((0, nvs), np.int64), np.zeros((0, nvd), np.int64)
    widths = {(len(s), len(d)) for s, d in calls}
    if len(widths) != 1:
        raise ValueError(f"copy: atom calls of different widths {sorted(widths)}")
    return np.stack([s for s, _d in calls]), np.stack([d for _s, d in calls])


@lru_cache(maxsize=4096)
def _copy_plan_for(src_layout, src_lane_form, dst_layout, dst_lane_form, nvs, nvd):
    """Thread-independent part of a copy: each call's element indices, and their offsets inside each
    layout (before the swizzle for a lane-vector tensor on a swizzled layout)."""
    src_shape = it.check_int_tuple("copy_calls", shape(src_layout))
    dst_b = dst_layout.layout_b if is_composed(dst_layout) else dst_layout
    zero = tuple(is_constant(0, d) for d in it.flatten_to_tuple(dst_b.stride))
    src_index, dst_index = _copy_plan(src_shape, _index_layout(shape(dst_layout), zero), nvs, nvd)
    return (src_index, dst_index, element_table(src_layout, src_lane_form)[src_index],
            element_table(dst_layout, dst_lane_form)[dst_index])


def copy_calls(tiled_copy, src, dst):
    """The atom calls of ``copy(tiled_copy, src, dst)`` (CuTe's order) as a :class:`CopyCalls`.

    ``src``/``dst`` are a thread's partitions (``partition_S``/``retile_D`` ...) with the same
    rank; ``ValueError`` when their shapes cannot be split into the atom's calls or a call's values
    do not fill the instruction's registers (CuTe's "failed to vectorize into registers").
    """
    if not isinstance(tiled_copy, TiledCopy):
        raise TypeError(f"copy_calls: expected a TiledCopy, got {tiled_copy!r}")
    for name, t in (("src", src), ("dst", dst)):
        if not is_tensor(t) or t.space == "coord":
            raise TypeError(f"copy_calls: {name} must be a memory or register tensor, got {t!r}")
    atom = tiled_copy.atom
    src_index, dst_index, src_inner, dst_inner = _copy_plan_for(
        src._layout, src._inner is not None, dst._layout, dst._inner is not None, atom.NumValSrc, atom.NumValDst)
    src_loc, dst_loc = src.gather(src_index, src_inner), dst.gather(dst_index, dst_inner)
    for side, tensor, loc, regs in (("src", src, src_loc, atom.op.SRegisters), ("dst", dst, dst_loc, atom.op.DRegisters)):
        if tensor.space == "rmem":       # slots are thread-independent: check each layout once
            _check_registers_once(atom, side, tensor._layout, tensor.dtype, loc - loc.flat[0] if loc.size else loc)
        else:
            _check_vectorized(atom, side, tensor, loc, regs)
    return CopyCalls(tiled_copy, src.space, dst.space, src.dtype, dst.dtype, src_index, dst_index, src_loc, dst_loc)


_CHECKED = set()


def _check_registers_once(atom, side, layout, dtype, relative):
    key = (atom, side, layout, dtype)
    if key not in _CHECKED:
        probe = _Probe(dtype, layout)
        _check_vectorized(atom, side, probe, relative, atom.op.SRegisters if side == "src" else atom.op.DRegisters)
        _CHECKED.add(key)


class _Probe:
    """What ``_check_vectorized`` reads of a register tensor."""

    space = "rmem"

    def __init__(self, dtype, layout):
        self.dtype, self._layout = dtype, layout


def _check_vectorized(atom, side, tensor, locations, registers):
    """CuTe's ``copy_unpack`` recasts each call's values to the instruction's registers: the values
    must fill them exactly, ``bits / element bits`` consecutive elements per register."""
    bits, count = registers
    elem = dtype_bits(tensor.dtype)
    values = locations.shape[-1]
    if values * elem != bits * count:
        raise ValueError(f"copy {atom.op.name}: each call moves {values} {tensor.dtype} {side} values per thread, "
                         f"but the instruction's {side} operand is {count} x {bits} bits ({side} failed to vectorize "
                         f"into registers)")
    per = bits // elem
    if per == 1:
        return
    step = 1 if tensor.space == "rmem" else elem // 8
    groups = locations.reshape(-1, per)
    if not np.all(groups[:, 1:] - groups[:, :-1] == step):
        raise ValueError(f"copy {atom.op.name}: the {side} values of a call are not {per} consecutive {tensor.dtype} "
                         f"elements per {bits}-bit register ({side} failed to vectorize into registers; "
                         f"{tensor.space} layout {tensor._layout})")


# -- gemm ------------------------------------------------------------------------------------------

def _serpentine(m_count, n_count, a_bytes, b_bytes):
    """(m, n) order of CuTe's (V,M) x (V,N) => (V,M,N) gemm dispatch."""
    order = []
    if (a_bytes, b_bytes) in ((8, 8), (8, 4)):              # row-major serpentine
        for m in range(m_count):
            for n in range(n_count):
                order.append((m, n_count - 1 - n if m & 1 else n))
    elif (a_bytes, b_bytes) == (4, 4):                       # row-major kinked serpentine
        for m in range(0, m_count, 2):
            for n in range(n_count):
                ns = n_count - 1 - n if m & 2 else n
                order.append((m, ns))
                if m + 1 < m_count:
                    order.append((m + 1, ns))
    else:                                                    # column-major serpentine
        for n in range(n_count):
            for m in range(m_count):
                order.append((m_count - 1 - m if n & 1 else m, n))
    return order


@lru_cache(maxsize=256)
def _gemm_plan(va, vb, vc, m_count, n_count, k_count, a_bytes, b_bytes):
    mnk, a, b, c = [], [], [], []
    for k in range(k_count):
        for m, n in _serpentine(m_count, n_count, a_bytes, b_bytes):
            mnk.append((m, n, k))
            a.append(np.arange(va) + va * (m + m_count * k))
            b.append(np.arange(vb) + vb * (n + n_count * k))
            c.append(np.arange(vc) + vc * (m + m_count * n))
    return np.array(mnk, np.int64).reshape(-1, 3), np.array(a), np.array(b), np.array(c)


def gemm_calls(tiled_mma, a, b, c):
    """The MMA atom calls of ``gemm(tiled_mma, A, B, C)`` (D = C) in CuTe's order, as :class:`MmaCalls`.

    ``A`` is (V,M,K) or (V,M) or (V); ``B`` (V,N,K)/(V,N)/(V); ``C`` (V,M,N)/(V,M,N)/(V): register
    tensors. ``ValueError`` names the shapes when they do not fit each other or the atom.
    """
    if not isinstance(tiled_mma, TiledMMA):
        raise TypeError(f"gemm_calls: expected a TiledMMA, got {tiled_mma!r}")
    for name, t in (("A", a), ("B", b), ("C", c)):
        if not is_tensor(t) or t.space != "rmem":
            raise TypeError(f"gemm_calls: {name} must be a register tensor, got {t!r}")
    mnk, ia, ib, ic, pa, pb, pc = _gemm_plan_for(tiled_mma, a._layout, b._layout, c._layout, a.dtype, b.dtype)
    return MmaCalls(tiled_mma, mnk, a.gather(ia, pa), b.gather(ib, pb), c.gather(ic, pc), (a.dtype, b.dtype, c.dtype))


@lru_cache(maxsize=1024)
def _gemm_plan_for(tiled_mma, la, lb, lc, dtype_a, dtype_b):
    atom = tiled_mma.atom
    shapes = f"A {cute_str(shape(la))}, B {cute_str(shape(lb))}, C {cute_str(shape(lc))}"
    ranks = (rank(la), rank(lb), rank(lc))
    if ranks == (1, 1, 1):
        m_count = n_count = k_count = 1
    elif ranks == (2, 2, 3):
        m_count, n_count, k_count = int(size(la, 1)), int(size(lb, 1)), 1
    elif ranks == (3, 3, 3):
        m_count, n_count, k_count = int(size(la, 1)), int(size(lb, 1)), int(size(la, 2))
        if int(size(lb, 2)) != k_count:
            raise ValueError(f"gemm {atom.op.name}: A and B differ in K: {shapes}")
    else:
        raise ValueError(f"gemm {atom.op.name}: expected (V,M,K)x(V,N,K)=>(V,M,N), (V,M)x(V,N)=>(V,M,N) or "
                         f"(V)x(V)=>(V) register tensors, got {shapes}")
    if ranks != (1, 1, 1) and (int(size(lc, 1)) != m_count or int(size(lc, 2)) != n_count):
        raise ValueError(f"gemm {atom.op.name}: C does not match A's M and B's N: {shapes}")
    va, vb, vc = (int(size(lay, 0)) if rank(lay) > 1 else int(size(lay)) for lay in (la, lb, lc))
    for name, v in (("A", va), ("B", vb), ("C", vc)):
        if v != atom.values_per_thread(name):
            raise ValueError(f"gemm {atom.op.name}: each call takes {atom.values_per_thread(name)} {name} values per "
                             f"thread, but mode 0 of {name} holds {v}: {shapes}")
    a_bytes, b_bytes = va * dtype_bits(dtype_a) // 8, vb * dtype_bits(dtype_b) // 8
    mnk, ia, ib, ic = _gemm_plan(va, vb, vc, m_count, n_count, k_count, a_bytes, b_bytes)
    return mnk, ia, ib, ic, element_table(la)[ia], element_table(lb)[ib], element_table(lc)[ic]
