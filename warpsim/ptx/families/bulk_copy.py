"""Hopper's bulk asynchronous copies: ``cp.async.bulk`` (contiguous bytes) and ``cp.async.bulk.tensor`` (TMA tiles),
decoded and executed thread by thread.

Each copy happens when its thread issues it; a load then completes its transaction bytes on its mbarrier
(``mbarrier::complete_tx::bytes``, :mod:`warpsim.ptx.families.mbarrier`), so the phase a consumer waits for completes
exactly when the GPU's does (its arrivals and all its bytes), and a kernel that reads the destination only after that
wait, as it must, sees the GPU's bytes. ``cp.async.bulk.commit_group``, ``wait_group{.read} N`` and the prefetches
only advance the thread. The forms:

- ``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]`` (global ->
  shared; ``.shared::cta`` too), ``cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size`` (shared ->
  global): ``size`` a multiple of 16, both addresses 16-byte aligned;
- ``cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [map, {c0, ...}], [mbar]``
  and ``cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [map, {c0, ...}], [src]``: one box of the tensor
  map (:mod:`warpsim.isa.tma`: the map's fields, the placement, the swizzle, the zero fill), the map read from the
  parameter (or global) bytes at its generic address.

A tensor load with ``.multicast::cluster`` and a ``ctaMask`` writes the box into the shared memory of every CTA of the
mask, at the same offset, and completes its bytes on each one's mbarrier at the offset of ``[mbar]``
(:mod:`warpsim.ptx.families.cluster`); ``.shared::cluster`` addresses of the CTA's own rank are its own.
``.im2col`` and a non-tensor multicast are refused.

``cp.reduce.async.bulk`` reduces ``size`` bytes of the CTA's shared memory into global memory (``.bulk_group``) or into
a CTA of the cluster (``.mbarrier::complete_tx::bytes``) element by element when issued (:func:`_reduce`); the
operations and types are :data:`REDUCE_TYPES`, ptxas's. ``cp.reduce.async.bulk.tensor`` (CuTe's
``SM90_TMA_REDUCE_ADD``) reduces a box into the map's tensor, the element type the map's (:func:`_reduce_tensor`,
:data:`REDUCE_TENSOR_TYPES`). f16/bf16 ``.min``/``.max`` and ``.im2col`` are refused.
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import (FAULT_BAD_OPERAND, FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, FAULT_TENSOR_MAP,
                                FAULT_WGMMA_SMEM, set_fault)
from warpsim.isa.tma import (F_ADDR, F_BOX, F_BYTES, F_DTYPE, F_RANK, MAP_BYTES, NFIELDS, box_elements, decode_fields,
                             tile_copy, tile_offsets)
from warpsim.ptx.codes import CTX_NRANKS, CTX_RANK
from warpsim.ptx.alu import mask
from warpsim.ptx.families.cluster import cluster_split
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.families.mbarrier import complete_tx_at
from warpsim.ptx.families.memory import atomic_value
from warpsim.ptx.memory import (GLOBAL_BASE, SHARED_BASE, SP_CONST, SP_FPARAM, SP_GENERIC, SP_GLOBAL, SP_KPARAM,
                                SP_SHARED, locate, locate_prefix, read_bytes, write_bytes)
from warpsim.ptx.opcodes import TK_BF, TK_BF16X2, TK_F, TK_F16X2, TK_S, TK_U
from warpsim.ptx.operands import get, lane_address, wgmma_reads
from warpsim.ptx.rows import ATOM_OPS, M0, M1, M2, NOPS, O0, TB, TK

__all__ = ["BulkCopyDecoder", "DECODER", "REDUCE_TYPES", "warp_bulk_copy", "log_bulk", "BULK_FIELDS", "FORM_NAMES"]

G2S, S2G, NOTHING, TENSOR_LOAD, TENSOR_STORE, REDUCE_GLOBAL, REDUCE_CLUSTER, REDUCE_TENSOR = range(8)
FORM_NAMES = ("global -> shared", "shared -> global", "", "tensor load", "tensor store", "reduce into global",
              "reduce into a CTA", "tensor reduce")

# cp.reduce.async.bulk: the operation -> the types ptxas 13.0 takes for sm_90a, into global memory and into a CTA's
# shared memory (.shared::cluster); f16/bf16 .add needs .noftz there. Stated once, read by the decoder.
REDUCE_TYPES = {
    "global": {"and": ("b32", "b64"), "or": ("b32", "b64"), "xor": ("b32", "b64"),
               "add": ("u32", "s32", "u64", "f32", "f64", "f16", "bf16"), "inc": ("u32",), "dec": ("u32",),
               "min": ("u32", "s32", "u64", "s64", "f16", "bf16"), "max": ("u32", "s32", "u64", "s64", "f16", "bf16")},
    "shared::cluster": {"and": ("b32",), "or": ("b32",), "xor": ("b32",), "add": ("u32", "s32", "u64"),
                        "inc": ("u32",), "dec": ("u32",), "min": ("u32", "s32"), "max": ("u32", "s32")},
}


class BulkCopyDecoder(FamilyDecoder):
    """Decodes ``cp.async.bulk``, ``cp.async.bulk.tensor`` and ``cp.reduce.async.bulk`` (called by the ``cp`` decoder
    for ``.bulk`` forms)."""

    def do_cp_reduce_bulk(self, fn, ins, op, mods, types, ops):
        """``cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.OP.TYPE [dst], [src], size{, policy}``
        and ``cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.OP.TYPE [dst], [src],
        size, [mbar]``: the forms of :data:`REDUCE_TYPES`."""
        name = name_of(ins)
        if "tensor" in mods:
            return self.reduce_tensor(fn, ins, op, mods, ops)
        dst = mods[3] if len(mods) > 3 else ""
        t = types[-1] if types else None
        aop = next((m for m in mods if m in REDUCE_TYPES["global"]), None)
        if dst not in REDUCE_TYPES or mods[4:5] != ("shared::cta",) or aop is None:
            raise self.error(ins.token, f"{name}: expected cp.reduce.async.bulk.global.shared::cta.bulk_group.OP.TYPE "
                                        f"or cp.reduce.async.bulk.shared::cluster.shared::cta"
                                        f".mbarrier::complete_tx::bytes.OP.TYPE")
        if t not in REDUCE_TYPES[dst][aop]:
            raise self.error(ins.token, f"{name}: .{aop} into {dst} takes {', '.join(REDUCE_TYPES[dst][aop])} "
                                        f"(ptxas rejects .{t})")
        if t in ("f16", "bf16") and aop == "add" and "noftz" not in mods:
            raise self.error(ins.token, f"{name}: .add.{t} needs .noftz (ptxas rejects it without)")
        if t in ("f16", "bf16") and aop != "add":
            raise self.error(ins.token, f"{name}: .{aop}.{t} is not modelled yet", UnsupportedType)
        to_global = dst == "global"
        hint = "L2::cache_hint" in mods
        self.count(ins, ops, *((4, 4) if hint else (3, 3)) if to_global else (4, 4))
        rows = [self.address(fn, ops[0], SP_GLOBAL if to_global else SP_SHARED)[0],
                self.address(fn, ops[1], SP_SHARED)[0], self.operand(fn, ops[2])]
        if not to_global:
            rows.append(self.address(fn, ops[3], SP_SHARED)[0])
        self.emit(fn, ins, op, (t, None), mods=(REDUCE_GLOBAL if to_global else REDUCE_CLUSTER, ATOM_OPS[aop], 0, 0),
                  operands=rows)

    def do_cp_bulk(self, fn, ins, op, mods, types, ops):
        name = name_of(ins)
        multicast = any(m.startswith("multicast") for m in mods)
        if any(m in mods for m in ("im2col", "im2col_no_offs")):
            raise self.error(ins.token, f"{name}: .im2col is not modelled", UnsupportedType)
        if multicast and "tensor" not in mods:
            raise self.error(ins.token, f"{name}: .multicast::cluster of a non-tensor bulk copy is not modelled",
                             UnsupportedType)
        if "commit_group" in mods or "wait_group" in mods or "prefetch" in mods:
            return self.emit(fn, ins, op, mods=(NOTHING, 0, 0, 0))
        to_shared = len(mods) > 2 and mods[2 if "tensor" not in mods else 4].startswith("shared")
        if "tensor" in mods:
            dims = mods[3]
            rank = int(dims[0]) if len(dims) == 2 and dims[1] == "d" and dims[0] in "12345" else 0
            if not rank:
                raise self.error(ins.token, f"{name}: expected .1d to .5d")
            if multicast and not to_shared:
                raise self.error(ins.token, f"{name}: .multicast::cluster is a load's (global -> shared)")
            self.count(ins, ops, *((4, 5) if multicast else (3, 4) if to_shared else (2, 3)))
            tensor = ops[1] if to_shared else ops[0]
            if tensor.kind != "addr" or len(tensor.items) != rank:
                raise self.error(tensor.token or ins.token, f"{name}: expected [map, {{c0, ...}}] with {rank} "
                                                            f"coordinates")
            mapaddr, _ = self.address(fn, tensor, SP_GENERIC)
            coords = [self.operand(fn, c) for c in tensor.items]
            if to_shared:
                rows = [self.address(fn, ops[0], SP_SHARED)[0], mapaddr, self.address(fn, ops[2], SP_SHARED)[0]]
            else:
                rows = [self.address(fn, ops[1], SP_SHARED)[0], mapaddr, -1]
            mask = [self.operand(fn, ops[3])] if multicast else []      # the ctaMask, after the coordinates
            return self.emit(fn, ins, op, mods=(TENSOR_LOAD if to_shared else TENSOR_STORE, rank, int(multicast), 0),
                             operands=[r for r in rows if r != -1] + coords + mask)
        self.count(ins, ops, *((4, 5) if to_shared else (3, 4)))
        size = self.operand(fn, ops[2])
        if to_shared:
            rows = [self.address(fn, ops[0], SP_SHARED)[0], self.address(fn, ops[1], SP_GLOBAL)[0], size,
                    self.address(fn, ops[3], SP_SHARED)[0]]
            return self.emit(fn, ins, op, mods=(G2S, 0, 0, 0), operands=rows)
        rows = [self.address(fn, ops[0], SP_GLOBAL)[0], self.address(fn, ops[1], SP_SHARED)[0], size]
        self.emit(fn, ins, op, mods=(S2G, 0, 0, 0), operands=rows)


    def reduce_tensor(self, fn, ins, op, mods, ops):
        """``cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP{.tile}.bulk_group [map, {c0, ...}], [src]`` (CuTe's
        ``SM90_TMA_REDUCE_ADD``): the element type is the map's, checked when it runs (:data:`REDUCE_TENSOR_TYPES`)."""
        name = name_of(ins)
        dims = mods[4] if len(mods) > 4 else ""
        rank = int(dims[0]) if len(dims) == 2 and dims[1] == "d" and dims[0] in "12345" else 0
        aop = next((m for m in mods if m in REDUCE_TYPES["global"]), None)
        if not rank or mods[5:7] != ("global", "shared::cta") or aop is None or "bulk_group" not in mods:
            raise self.error(ins.token, f"{name}: expected cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP"
                                        f"{{.tile}}.bulk_group")
        if any(m.startswith("im2col") for m in mods):
            raise self.error(ins.token, f"{name}: .im2col is not modelled", UnsupportedType)
        self.count(ins, ops, 2, 3)
        tensor = ops[0]
        if tensor.kind != "addr" or len(tensor.items) != rank:
            raise self.error(tensor.token or ins.token, f"{name}: expected [map, {{c0, ...}}] with {rank} coordinates")
        mapaddr, _ = self.address(fn, tensor, SP_GENERIC)
        rows = [self.address(fn, ops[1], SP_SHARED)[0], mapaddr] + [self.operand(fn, c) for c in tensor.items]
        self.emit(fn, ins, op, mods=(REDUCE_TENSOR, ATOM_OPS[aop], rank, 0), operands=rows)


DECODER = BulkCopyDecoder

# the tensor form: the map's element type (isa.tma.DTYPES code) -> (type kind, bits), and the operations each takes
# (the PTX ISA's; a map of another type is a tensor-map fault naming it)
_MAP_TYPES = ((-1, 0), (-1, 0), (TK_U, 32), (TK_S, 32), (TK_U, 64), (TK_S, 64), (TK_F, 16), (TK_F, 32), (-1, 0),
              (TK_BF, 16), (-1, 0), (-1, 0), (-1, 0))
REDUCE_TENSOR_TYPES = {"add": ("u32", "s32", "u64", "f32", "f16", "bf16"), "min": ("u32", "s32", "u64", "s64"),
                       "max": ("u32", "s32", "u64", "s64"), "inc": ("u32",), "dec": ("u32",),
                       "and": ("u32", "s32", "u64", "s64"), "or": ("u32", "s32", "u64", "s64"),
                       "xor": ("u32", "s32", "u64", "s64")}
_CODES = ("u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f64", "bf16", "f32_ftz", "tf32", "tf32_ftz")
# [op kind, map type code] -> 1 where the pair runs
_TENSOR_OK = np.zeros((len(ATOM_OPS), len(_CODES)), np.int64)
for _op, _names in REDUCE_TENSOR_TYPES.items():
    for _n in _names:
        _TENSOR_OK[ATOM_OPS[_op], _CODES.index(_n)] = 1


@njit(cache=True)
def _span(r, opnd, o, t, fault):
    """``(size, dst, src)`` of a non-tensor bulk copy or reduction (operands 0, 1, 2): ``size`` a positive multiple of
    16 and both addresses 16-byte aligned, else size -1 and ``FAULT_MISALIGNED``."""
    size = get(r, opnd, o[2])
    dst = lane_address(r, opnd, o[0])
    src = lane_address(r, opnd, o[1])
    if size % 16 or size <= 0 or dst % 16 or src % 16:
        set_fault(fault, FAULT_MISALIGNED, t, dst if dst % 16 else src if src % 16 else size, 16)
        return np.int64(-1), dst, src
    return size, dst, src


@njit(cache=True)
def _bulk(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar, fault, csmem, cmbar, ctx,
          pend_map):
    form = code[p, M0]
    o = code[p, O0:]
    if form == NOTHING:
        return True
    if form == REDUCE_TENSOR:
        return _reduce_tensor(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, fault)
    if form == REDUCE_GLOBAL or form == REDUCE_CLUSTER:
        return _reduce(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, fault, csmem, cmbar, ctx,
                       pend_map)
    if form == G2S or form == S2G:
        size, dst, src = _span(r, opnd, o, t, fault)
        if size < 0:
            return False
        dsp, doff = locate_prefix(SP_SHARED if form == G2S else SP_GLOBAL, dst, 16, size, t, gmem, ends, smem, local,
                                  const, kparam, fparam, fault)
        if dsp < 0:
            return False
        ssp, soff = locate_prefix(SP_GLOBAL if form == G2S else SP_SHARED, src, 16, size, t, gmem, ends, smem, local,
                                  const, kparam, fparam, fault)
        if ssp < 0:
            return False
        if form == G2S:
            if wgmma_reads(pend_map, doff, size):         # a stage the tensor cores still read
                set_fault(fault, FAULT_WGMMA_SMEM, t, dst, size)
                return False
            smem[doff:doff + size] = gmem[soff:soff + size]
            return complete_tx_at(lane_address(r, opnd, o[3]), size, t, smem, gmem, ends, local, const, kparam,
                                  fparam, mbar, fault)
        gmem[doff:doff + size] = smem[soff:soff + size]
        return True
    # a tensor tile: read the map, its coordinates, copy the box
    rank = code[p, M1]
    load = form == TENSOR_LOAD
    f = np.zeros(NFIELDS, np.int64)
    if not _map_fields(lane_address(r, opnd, o[1]), rank, t, smem, gmem, ends, local, const, kparam, fparam, fault, f):
        return False
    coords = _coords(r, opnd, o, 3 if load else 2, rank)
    own = ctx[CTX_RANK]
    sh, soff = _box_shared(r, opnd, o[0], t, smem, gmem, ends, local, const, kparam, fparam, fault)
    if soff < 0:
        return False
    if not load:
        if tile_copy(f, coords, smem, soff, gmem, f[3] - GLOBAL_BASE, load) < 0:
            set_fault(fault, FAULT_OUT_OF_RANGE, t, sh, 0)
            return False
        return True
    # a load: into this CTA, or with .multicast::cluster into every CTA of the ctaMask at the same offsets, each
    # completing its bytes on its own mbarrier at the offset of [mbar]
    targets = np.int64(1) << own
    if code[p, M2]:
        targets = get(r, opnd, o[3 + rank]) & 0xFFFF
        if targets >> ctx[CTX_NRANKS]:
            set_fault(fault, FAULT_BAD_OPERAND, t, targets, ctx[CTX_NRANKS])
            return False
    bar = cluster_split(lane_address(r, opnd, o[2]))[1]
    box = f[F_BYTES]
    for d in range(rank):
        box *= f[F_BOX + d]
    if (targets >> own) & 1 and soff + box <= smem.shape[0] and wgmma_reads(pend_map, soff, box):
        set_fault(fault, FAULT_WGMMA_SMEM, t, sh, box)                  # the CTA's own stage, still read by wgmma
        return False
    for k in range(ctx[CTX_NRANKS]):
        if not (targets >> k) & 1:
            continue
        moved = tile_copy(f, coords, csmem[k], soff, gmem, f[3] - GLOBAL_BASE, load)
        if moved < 0:
            set_fault(fault, FAULT_OUT_OF_RANGE, t, sh, 0)
            return False
        if not complete_tx_at(bar, moved, t, csmem[k], gmem, ends, local, const, kparam, fparam, cmbar[k], fault):
            return False
    return True


@njit(cache=True)
def _map_fields(maddr, rank, t, smem, gmem, ends, local, const, kparam, fparam, fault, f):
    """Read the tensor map at generic ``maddr`` (a parameter, global or constant bytes) into ``f``
    (:func:`~warpsim.isa.tma.decode_fields`); False and a fault when it is elsewhere, not a map, or of another rank."""
    msp, moff = locate(SP_GENERIC, maddr, MAP_BYTES, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if msp < 0:
        return False
    if msp != SP_KPARAM and msp != SP_GLOBAL and msp != SP_CONST and msp != SP_FPARAM:
        set_fault(fault, FAULT_TENSOR_MAP, t, maddr, 0)
        return False
    raw = np.empty(MAP_BYTES, np.uint8)
    for b in range(MAP_BYTES):
        if msp == SP_KPARAM:
            raw[b] = kparam[moff + b]
        elif msp == SP_GLOBAL:
            raw[b] = gmem[moff + b]
        elif msp == SP_CONST:
            raw[b] = const[moff + b]
        else:
            raw[b] = fparam[t, moff + b]
    if not decode_fields(raw, f) or f[F_RANK] != rank:
        set_fault(fault, FAULT_TENSOR_MAP, t, maddr, rank)
        return False
    return True


@njit(cache=True)
def _box_shared(r, opnd, row, t, smem, gmem, ends, local, const, kparam, fparam, fault):
    """``(address, offset)`` of a TMA box's shared memory (operand ``row``; a ``.shared::cluster`` address of the
    CTA's own rank is its own): the offset -1 and a fault when it lies outside or is not 128-byte aligned."""
    sh = lane_address(r, opnd, row)
    ssp, soff = locate(SP_SHARED, cluster_split(sh)[1], 16, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if ssp < 0:
        return sh, np.int64(-1)
    if soff % 128:
        set_fault(fault, FAULT_MISALIGNED, t, sh, 128)
        return sh, np.int64(-1)
    return sh, soff


@njit(cache=True)
def _coords(r, opnd, o, first, rank):
    """The box coordinates of a tensor copy (signed 32-bit), from operand ``first`` on: int64[5]."""
    coords = np.zeros(5, np.int64)
    for d in range(rank):
        c = get(r, opnd, o[first + d])
        coords[d] = c - (1 << 32) if c >= 1 << 31 else c
    return coords


@njit(cache=True)
def _reduce_tensor(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, fault):
    """``cp.reduce.async.bulk.tensor``: every element of the box inside the tensor becomes ``OP(global, shared)``,
    the element type the map's (as :func:`_reduce` computes each); the box's shared bytes lie as a TMA store reads
    them (:func:`~warpsim.isa.tma.tile_offsets`)."""
    o = code[p, O0:]
    kind, rank = code[p, M1], code[p, M2]
    maddr = lane_address(r, opnd, o[1])
    f = np.zeros(NFIELDS, np.int64)
    if not _map_fields(maddr, rank, t, smem, gmem, ends, local, const, kparam, fparam, fault, f):
        return False
    dtype = f[F_DTYPE]
    if dtype < 0 or dtype >= _TENSOR_OK.shape[1] or not _TENSOR_OK[kind, dtype]:
        set_fault(fault, FAULT_TENSOR_MAP, t, maddr, dtype)
        return False
    sh, soff = _box_shared(r, opnd, o[0], t, smem, gmem, ends, local, const, kparam, fparam, fault)
    if soff < 0:
        return False
    at = np.empty((box_elements(f), 2), np.int64)
    size = f[F_BYTES]
    if not tile_offsets(f, _coords(r, opnd, o, 2, rank), soff, f[F_ADDR] - GLOBAL_BASE, at):
        set_fault(fault, FAULT_OUT_OF_RANGE, t, sh, 0)
        return False
    for e in range(at.shape[0]):
        s_, g = at[e, 0], at[e, 1]
        if s_ + size > smem.shape[0] or g + size > gmem.shape[0]:
            set_fault(fault, FAULT_OUT_OF_RANGE, t, sh, 0)
            return False
    tk, tb = _MAP_TYPES[dtype]
    for e in range(at.shape[0]):
        s_, g = at[e, 0], at[e, 1]
        if g >= 0:
            new = _reduced(kind, tk, tb, read_bytes(gmem, g, size), read_bytes(smem, s_, size))
            write_bytes(gmem, g, size, new)
    return True


@njit(cache=True)
def _reduced(kind, tk, tb, old, v):
    """One element of a bulk reduction: the ``red`` of operation ``kind`` and type ``(tk, tb)`` on ``old`` and ``v``
    (:func:`~warpsim.ptx.families.memory.atomic_value`), masked to ``tb`` bits, as an H100 computes it
    (conformance/h100/hopper-tma-fifth-run/: every bit pattern of both operands):

    - an ``.f32`` add keeps subnormal operands and results (``red.global.add.f32`` flushes them; the bulk unit does
      not), and gives the canonical NaN as ``add.f32`` does;
    - an ``.f64`` add passes a NaN operand through as it is, a signalling one too (``add.f64`` quiets it), ``v``'s
      before ``old``'s, as ``add.f64`` orders two NaNs;
    - an f16/bf16 element is the low half of the packed add (``.noftz``)."""
    if tb == 16 and (tk == TK_F or tk == TK_BF):
        return atomic_value(kind, TK_F16X2 if tk == TK_F else TK_BF16X2, 32, old, v, np.int64(0), False) & 0xFFFF
    if kind == 0 and tk == TK_F and tb == 64 and (_nan64(v) or _nan64(old)):
        return v if _nan64(v) else old
    return atomic_value(kind, tk, tb, old, v, np.int64(0), False) & mask(tb)


@njit(cache=True, inline="always")
def _nan64(x):
    return (x >> 52) & 0x7FF == 0x7FF and x & ((np.int64(1) << 52) - 1) != 0


@njit(cache=True)
def _reduce(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, fault, csmem, cmbar, ctx, pend_map):
    """``cp.reduce.async.bulk``: ``dst[i] = OP(dst[i], src[i])`` for every element of ``size`` bytes, in order, each as
    :func:`_reduced` computes it; into a CTA's shared memory it then completes ``size`` bytes on that CTA's mbarrier
    at ``[mbar]``. ``size`` a multiple of 16, both addresses
    16-byte aligned."""
    form = code[p, M0]
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    esize = tb // 8
    size, dst, src = _span(r, opnd, o, t, fault)
    if size < 0:
        return False
    ssp, soff = locate_prefix(SP_SHARED, src, 16, size, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if ssp < 0:
        return False
    if form == REDUCE_GLOBAL:
        dsp, doff = locate_prefix(SP_GLOBAL, dst, 16, size, t, gmem, ends, smem, local, const, kparam, fparam, fault)
        if dsp < 0:
            return False
        mem = gmem
    else:
        rank, doff = cluster_split(dst)
        if rank >= ctx[CTX_NRANKS] or doff < SHARED_BASE or doff + size > csmem.shape[1]:
            set_fault(fault, FAULT_OUT_OF_RANGE, t, dst, size)
            return False
        mem = csmem[rank]
        if rank == ctx[CTX_RANK] and wgmma_reads(pend_map, doff, size):
            set_fault(fault, FAULT_WGMMA_SMEM, t, dst, size)
            return False
    for i in range(0, size, esize):
        new = _reduced(code[p, M1], tk, tb, read_bytes(mem, doff + i, esize), read_bytes(smem, soff + i, esize))
        write_bytes(mem, doff + i, esize, new)
    if form == REDUCE_CLUSTER:
        return complete_tx_at(cluster_split(lane_address(r, opnd, o[3]))[1], size, t, mem, gmem, ends, local, const,
                              kparam, fparam, cmbar[rank], fault)
    return True


@njit(cache=True)
def warp_bulk_copy(p, w, gmask, group, code, opnd, regs, pc, smem, gmem, ends, local, const, kparam, fparam, mbar,
                   fault, csmem, cmbar, ctx, pend_map, blog, step):
    """A bulk copy row for the lanes of ``group`` (those of ``gmask`` copy, in lane order, each logged in ``blog`` as
    warp instruction ``step``: :func:`log_bulk`); advances their pcs. False on a fault."""
    t0 = 32 * w
    for lane in range(32):
        if not (group >> lane) & 1:
            continue
        if (gmask >> lane) & 1:
            if not _bulk(p, t0 + lane, code, opnd, regs[w, lane], smem, gmem, ends, local, const, kparam, fparam, mbar,
                         fault, csmem, cmbar, ctx, pend_map):
                return False
            log_bulk(blog, step, p, t0 + lane, code, opnd, regs[w, lane])
        pc[t0 + lane] += 1
    return True


# a bulk log row (BULK_LOG of them after a header row whose first word counts every copy): the step, the row, the
# thread, the form, then A B C and up to three coordinates: for G2S/S2G/REDUCE_GLOBAL/REDUCE_CLUSTER the size, the
# destination and the source addresses; for a tensor load the shared destination, the map, the mbarrier; for a tensor
# store or reduction the shared source, the map, -1
BULK_STEP, BULK_ROW, BULK_THREAD, BULK_FORM, BULK_A, BULK_B, BULK_C, BULK_COORDS = 0, 1, 2, 3, 4, 5, 6, 7
BULK_FIELDS = 10


@njit(cache=True)
def log_bulk(blog, step, p, t, code, opnd, r):
    """Note in ``blog`` (``int64[BULK_LOG + 1, BULK_FIELDS]``, a ring after its header row) the bulk copy row ``p``
    that thread ``t`` just issued at warp instruction ``step``, its operands as the thread's registers give them."""
    n = blog.shape[0] - 1
    if n <= 0:
        return
    k = 1 + blog[0, 0] % n
    blog[0, 0] += 1
    form = code[p, M0]
    o = code[p, O0:]
    row = blog[k]
    row[:] = -1
    row[BULK_STEP], row[BULK_ROW], row[BULK_THREAD], row[BULK_FORM] = step, p, t, form
    if form == TENSOR_LOAD or form == TENSOR_STORE or form == REDUCE_TENSOR:
        row[BULK_A] = lane_address(r, opnd, o[0])
        row[BULK_B] = lane_address(r, opnd, o[1])
        first = 3 if form == TENSOR_LOAD else 2
        if form == TENSOR_LOAD:
            row[BULK_C] = lane_address(r, opnd, o[2])
        for d in range(min(code[p, M1], BULK_FIELDS - BULK_COORDS)):
            row[BULK_COORDS + d] = get(r, opnd, o[first + d])
    elif form != NOTHING:
        row[BULK_A] = get(r, opnd, o[2])
        row[BULK_B] = lane_address(r, opnd, o[0])
        row[BULK_C] = lane_address(r, opnd, o[1])
