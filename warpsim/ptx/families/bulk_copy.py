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
"""

import numpy as np
from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import (FAULT_BAD_OPERAND, FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, FAULT_TENSOR_MAP,
                                FAULT_WGMMA_SMEM, set_fault)
from warpsim.isa.tma import F_BOX, F_BYTES, MAP_BYTES, NFIELDS, decode_fields, tile_copy
from warpsim.ptx.codes import CTX_NRANKS, CTX_RANK
from warpsim.ptx.families.cluster import cluster_split
from warpsim.ptx.families.common import FamilyDecoder, name_of
from warpsim.ptx.families.mbarrier import complete_tx_at
from warpsim.ptx.memory import (GLOBAL_BASE, SP_CONST, SP_FPARAM, SP_GENERIC, SP_GLOBAL, SP_KPARAM, SP_SHARED, locate,
                                locate_prefix)
from warpsim.ptx.operands import get, lane_address, wgmma_reads
from warpsim.ptx.rows import M0, M1, M2, NOPS, O0

__all__ = ["BulkCopyDecoder", "DECODER", "warp_bulk_copy"]

G2S, S2G, NOTHING, TENSOR_LOAD, TENSOR_STORE = range(5)


class BulkCopyDecoder(FamilyDecoder):
    """Decodes ``cp.async.bulk`` and ``cp.async.bulk.tensor`` (called by the ``cp`` decoder for ``.bulk`` forms)."""

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


DECODER = BulkCopyDecoder


@njit(cache=True)
def _bulk(p, t, code, opnd, r, smem, gmem, ends, local, const, kparam, fparam, mbar, fault, csmem, cmbar, ctx,
          pend_map):
    form = code[p, M0]
    o = code[p, O0:]
    if form == NOTHING:
        return True
    if form == G2S or form == S2G:
        size = get(r, opnd, o[2])
        dst = lane_address(r, opnd, o[0])
        src = lane_address(r, opnd, o[1])
        if size % 16 or size <= 0 or dst % 16 or src % 16:
            set_fault(fault, FAULT_MISALIGNED, t, dst if dst % 16 else src if src % 16 else size, 16)
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
    maddr = lane_address(r, opnd, o[1])
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
    f = np.zeros(NFIELDS, np.int64)
    if not decode_fields(raw, f) or f[1] != rank:
        set_fault(fault, FAULT_TENSOR_MAP, t, maddr, rank)
        return False
    coords = np.zeros(5, np.int64)
    first = 3 if load else 2
    for d in range(rank):
        c = get(r, opnd, o[first + d])
        coords[d] = c - (1 << 32) if c >= 1 << 31 else c          # signed 32-bit coordinates
    own = ctx[CTX_RANK]
    sh = lane_address(r, opnd, o[0])
    ssp, soff = locate(SP_SHARED, cluster_split(sh)[1], 16, t, gmem, ends, smem, local, const, kparam, fparam, fault)
    if ssp < 0:
        return False
    if soff % 128:
        set_fault(fault, FAULT_MISALIGNED, t, sh, 128)
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
def warp_bulk_copy(p, w, gmask, group, code, opnd, regs, pc, smem, gmem, ends, local, const, kparam, fparam, mbar,
                   fault, csmem, cmbar, ctx, pend_map):
    """A bulk copy row for the lanes of ``group`` (those of ``gmask`` copy, in lane order); advances their pcs.
    False on a fault."""
    t0 = 32 * w
    for lane in range(32):
        if not (group >> lane) & 1:
            continue
        if (gmask >> lane) & 1 and not _bulk(p, t0 + lane, code, opnd, regs[w, lane], smem, gmem, ends, local, const,
                                             kparam, fparam, mbar, fault, csmem, cmbar, ctx, pend_map):
            return False
        pc[t0 + lane] += 1
    return True
