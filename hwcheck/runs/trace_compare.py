"""Comparing a PTX kernel's results from two machines: global buffers element by element, register traces
record by record (the trace layout is :mod:`hwcheck.device.instrument`'s).

Addresses differ between the simulator and the GPU by nature (the GPU's buffers, shared and local windows
live elsewhere). A trace record whose bits differ is *relocated* (counted, not a mismatch) when both
values are the same offset into the same region on their machine: a global buffer, a module
``.global`` variable, a ``.shared`` variable (its shared-space address, or generic through the shared
window) or the local window; 32-bit registers match on the low word of such an address, or on the high
words of one offset into the region. Local memory is relocated too: where each machine puts a thread's
stack (nvcc's ``__local_depotN``) in the local window is the driver's choice (an H200 puts it near
16 MB, the simulator at 0), so a local-space address, or a generic one ``cvta.local`` made of it, is
relocated when it is the same offset from the entry's depot (its address in the trace header) on
both machines. So is a parameter's generic address (``cvta.param`` of a ``__grid_constant__`` parameter, which the
driver places per launch): the same offset from the first parameter's generic address, in the header too. In a
cluster launch a generic shared address may name another CTA's shared memory (``mapa.u64``: the rank times 2**24
above the window, :data:`CLUSTER_WINDOW`), so the whole of that span is one region on both machines (an H100 puts
the window at ``0x7fa6_0000_0000``, the simulator at ``2**40``; conformance/h100/hopper-tma-fifth-run/).

>>> want = {"y": np.array([1, 2, 3], np.uint32)}; got = {"y": np.array([1, 2, 7], np.uint32)}
>>> c = compare_buffers(want, got)
>>> c.compared, c.mismatched, c.records[0]["index"], c.records[0]["expected"], c.records[0]["actual"]
(3, 1, 2, '0x00000003', '0x00000007')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwcheck.compare import decode_register
from hwcheck.device.instrument import RECORD_BYTES
from warpsim.ptx.families.cluster import RANK_SHIFT

PARAM_SPACE = 32764        # bytes of kernel parameters at most (sm_70+ with CUDA 12.1+)

__all__ = ["BufferComparison", "compare_buffers", "Regions", "TraceComparison", "compare_traces", "SLACK"]

SLACK = 1 << 16           # an address may point this far before or past its region (loop bounds, end pointers)
_KIND = {"f32": "f32", "f16x2": "f16x2", "bf16x2": "bf16x2"}


CLUSTER_WINDOW = 16 << RANK_SHIFT   # bytes of the generic shared window a cluster's CTAs (at most 16) reach

@dataclass(frozen=True)
class BufferComparison:
    compared: int
    mismatched: int
    records: list


def _decode(value: int, dtype) -> str:
    if dtype == np.float16:
        return repr(float(np.array(value, np.uint16).view(np.float16)))
    if dtype == np.float32:
        return repr(float(np.array(value, np.uint32).view(np.float32)))
    if dtype == np.float64:
        return repr(float(np.array(value, np.uint64).view(np.float64)))
    return str(int(np.array(value, np.dtype(dtype).str.replace("f", "u")).astype(dtype)))


def compare_buffers(want: dict, got: dict, limit: int = 20) -> BufferComparison:
    """Every element of every buffer of ``want`` (simulator) against ``got`` (GPU), bit for bit."""
    compared = bad = 0
    records = []
    for name in sorted(want):
        w, g = np.ascontiguousarray(want[name]), np.ascontiguousarray(got[name])
        size = w.dtype.itemsize
        uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]
        wb, gb = w.reshape(-1).view(uint), g.reshape(-1).view(uint)
        diff = np.flatnonzero(wb != gb)
        compared += wb.size
        bad += diff.size
        for i in diff[:max(0, limit - len(records))]:
            records.append({"buffer": name, "index": int(i),
                            "element": [int(k) for k in np.unravel_index(int(i), w.shape)] if w.ndim > 1 else int(i),
                            "expected": f"{int(wb[i]):#0{2 + 2 * size}x}", "actual": f"{int(gb[i]):#0{2 + 2 * size}x}",
                            "expected_value": _decode(int(wb[i]), w.dtype),
                            "actual_value": _decode(int(gb[i]), w.dtype)})
    return BufferComparison(compared, bad, records)


@dataclass(frozen=True)
class Regions:
    """Address regions of each machine: ``sim`` and ``gpu`` map a name to ``(base, bytes)``; ``smem``
    the dynamic shared bytes of the launch."""

    sim: dict
    gpu: dict
    smem: int = 0


@dataclass(frozen=True)
class TraceComparison:
    compared: int
    mismatched: int
    relocated: int
    unchecked: int
    full_threads: int
    compared_to_step: int | None
    records: list
    first: dict | None = None     # the mismatching register record of the smallest dynamic step (ties: thread)


def _pairs(ins, regions, sim_head, gpu_head):
    """``(sim base, gpu base, bytes)`` of every region, per thread where they come from the header
    (arrays of shape (threads,)); returns a list of such triples."""
    out = []
    for name, (sb, size) in regions.sim.items():
        if name in regions.gpu:
            gb = regions.gpu[name][0]
            out.append((np.uint64(sb), np.uint64(gb), size))
    shared_total = sum(s or 0 for _, s in ins.shared) + regions.smem
    for k, (_name, size) in enumerate(ins.shared):
        ws, wg = sim_head[:, 8 + 2 * k].astype(np.uint64), gpu_head[:, 8 + 2 * k].astype(np.uint64)
        ws |= sim_head[:, 9 + 2 * k].astype(np.uint64) << np.uint64(32)
        wg |= gpu_head[:, 9 + 2 * k].astype(np.uint64) << np.uint64(32)
        nbytes = regions.smem if size is None else size
        out.append((ws, wg, nbytes))                       # shared-space address
        win_s = sim_head[:, 4].astype(np.uint64) | (sim_head[:, 5].astype(np.uint64) << np.uint64(32))
        win_g = gpu_head[:, 4].astype(np.uint64) | (gpu_head[:, 5].astype(np.uint64) << np.uint64(32))
        out.append((win_s + ws, win_g + wg, nbytes))       # generic
    win_s = sim_head[:, 4].astype(np.uint64) | (sim_head[:, 5].astype(np.uint64) << np.uint64(32))
    win_g = gpu_head[:, 4].astype(np.uint64) | (gpu_head[:, 5].astype(np.uint64) << np.uint64(32))
    out.append((win_s, win_g, CLUSTER_WINDOW))              # the window: any CTA of a cluster (mapa.u64)
    par_s = sim_head[:, 2].astype(np.uint64) | (sim_head[:, 3].astype(np.uint64) << np.uint64(32))
    par_g = gpu_head[:, 2].astype(np.uint64) | (gpu_head[:, 3].astype(np.uint64) << np.uint64(32))
    if par_s.any() and par_g.any():
        out.append((par_s, par_g, PARAM_SPACE))           # a parameter's generic address (cvta.param)
    loc_s = sim_head[:, 6].astype(np.uint64) | (sim_head[:, 7].astype(np.uint64) << np.uint64(32))
    loc_g = gpu_head[:, 6].astype(np.uint64) | (gpu_head[:, 7].astype(np.uint64) << np.uint64(32))
    out.append((loc_s, loc_g, 1 << 20))
    if ins.depot:
        at = ins.depot_offset // 4
        dep_s, dep_g = _u64(sim_head, at), _u64(gpu_head, at)
        gen_s, gen_g = _u64(sim_head, at + 2), _u64(gpu_head, at + 2)
        out.append((dep_s, dep_g, max(ins.depot[1], 1)))     # local-space address in the thread's stack
        out.append((gen_s, gen_g, max(ins.depot[1], 1)))     # the same, generic (cvta.local)
    return out


def _u64(head, word):
    """The ``u64`` at ``word`` (lo) and ``word + 1`` (hi) of each thread's header."""
    return head[:, word].astype(np.uint64) | (head[:, word + 1].astype(np.uint64) << np.uint64(32))


def _relocated(vs, vg, wide, pairs, thread):
    """Whether each (sim value, gpu value) pair is one offset into one region (see the module docstring)."""
    ok = np.zeros(vs.shape, bool)
    m32 = np.uint64(0xFFFFFFFF)
    for sb, gb, size in pairs:
        sb = sb[thread] if isinstance(sb, np.ndarray) else np.full(vs.shape, sb, np.uint64)
        gb = gb[thread] if isinstance(gb, np.ndarray) else np.full(vs.shape, gb, np.uint64)
        span = np.uint64(size + 2 * SLACK)
        off_s = vs - sb + np.uint64(SLACK)
        off_g = vg - gb + np.uint64(SLACK)
        same64 = (off_s == off_g) & (off_s < span)
        lo_s = (vs - (sb & m32) + np.uint64(SLACK)) & m32
        lo_g = (vg - (gb & m32) + np.uint64(SLACK)) & m32
        same_lo = (lo_s == lo_g) & (lo_s < span)
        same_hi = np.zeros(vs.shape, bool)                 # the high words of one offset into the region
        for delta in (-SLACK, 0, size + SLACK):
            at_s = (sb + np.uint64(delta % (1 << 64))) >> np.uint64(32)
            at_g = (gb + np.uint64(delta % (1 << 64))) >> np.uint64(32)
            same_hi |= (vs == at_s) & (vg == at_g)
        ok |= np.where(wide, same64, same_lo | same_hi)
    return ok


def compare_traces(ins, sim_trace, gpu_trace, regions: Regions, block, grid, limit: int = 20) -> TraceComparison:
    """Compare two trace buffers of ``ins`` (an :class:`~hwcheck.device.instrument.Instrumented`) record by record.

    Per thread the records both machines wrote are compared (site, step, and the register's bits); a
    thread whose record counts differ is a mismatch at the first record one of them lacks. Records of
    sites that are not deterministic are counted as unchecked. ``compared_to_step``: where a thread's
    buffer filled, the smallest last recorded step among such threads (None when none filled). ``first``: the
    mismatching record of the smallest dynamic step over all threads (where the machines first part ways).
    """
    threads = int(np.prod(grid)) * int(np.prod(block))
    words = ins.thread_bytes // 4
    hw = ins.header_bytes // 4
    s = np.ascontiguousarray(sim_trace).view(np.uint32).reshape(threads, words)
    g = np.ascontiguousarray(gpu_trace).view(np.uint32).reshape(threads, words)
    sh, gh = s[:, :hw], g[:, :hw]
    srec = s[:, hw:].reshape(threads, ins.capacity, 4)
    grec = g[:, hw:].reshape(threads, ins.capacity, 4)
    ns, ng = sh[:, 1].astype(np.int64), gh[:, 1].astype(np.int64)
    n = np.minimum(np.minimum(ns, ng), ins.capacity)
    valid = np.arange(ins.capacity)[None, :] < n[:, None]
    sites = np.array([[s_.deterministic, s_.ptx_type in ("b64", "u64", "s64", "f64")] for s_ in ins.sites] or
                     [[True, False]], bool)
    site_ids = np.clip(srec[:, :, 0], 0, len(sites) - 1)
    det = sites[site_ids, 0]
    wide = sites[site_ids, 1]
    same_site = (srec[:, :, 0] == grec[:, :, 0]) & (srec[:, :, 1] == grec[:, :, 1])
    vs = srec[:, :, 2].astype(np.uint64) | (srec[:, :, 3].astype(np.uint64) << np.uint64(32))
    vg = grec[:, :, 2].astype(np.uint64) | (grec[:, :, 3].astype(np.uint64) << np.uint64(32))
    equal = vs == vg
    differ = valid & same_site & det & ~equal
    reloc = np.zeros_like(differ)
    if differ.any():
        t_idx, r_idx = np.nonzero(differ)
        ok = _relocated(vs[t_idx, r_idx], vg[t_idx, r_idx], wide[t_idx, r_idx],
                        _pairs(ins, regions, sh, gh), t_idx)
        reloc[t_idx[ok], r_idx[ok]] = True
    bad = valid & (~same_site | (det & ~equal & ~reloc))
    count_bad = (ns != ng)                     # one more mismatch per thread whose record count differs
    records = []
    threads_per_cta = int(np.prod(block))
    for t, r in zip(*np.nonzero(bad)):
        if len(records) >= limit:
            break
        records.append(_record(ins, t, r, srec[t, r], grec[t, r], threads_per_cta, grid))
    for t in np.flatnonzero(count_bad & ~bad.any(axis=1)):
        if len(records) >= limit:
            break
        records.append({**_where(t, threads_per_cta, grid), "what": "the machines recorded different numbers of "
                        f"register writes", "expected_records": int(ns[t]), "actual_records": int(ng[t]),
                        "expected_steps": int(sh[t, 0]), "actual_steps": int(gh[t, 0])})
    first = None
    if bad.any():
        t_idx, r_idx = np.nonzero(bad)
        k = int(np.lexsort((t_idx, srec[t_idx, r_idx, 1]))[0])
        first = _record(ins, t_idx[k], r_idx[k], srec[t_idx[k], r_idx[k]], grec[t_idx[k], r_idx[k]],
                        threads_per_cta, grid)
    full = (ns >= ins.capacity) | (ng >= ins.capacity)
    to_step = None
    if full.any():
        last = srec[np.flatnonzero(full), ins.capacity - 1, 1]
        to_step = int(last.min())
    return TraceComparison(int(valid.sum()), int(bad.sum() + count_bad.sum()), int(reloc.sum()),
                           int((valid & ~det).sum()), int(full.sum()), to_step, records, first)


def _where(t, threads_per_cta, grid):
    cta, tid = divmod(int(t), threads_per_cta)
    gx, gy, _ = grid
    return {"cta": [cta % gx, cta // gx % gy, cta // (gx * gy)], "thread": tid, "warp": tid // 32, "lane": tid % 32}


def _record(ins, t, r, want, got, threads_per_cta, grid):
    site = ins.sites[int(want[0])] if int(want[0]) < len(ins.sites) else None
    rec = {**_where(t, threads_per_cta, grid), "record": int(r), "step": int(want[1])}
    if site is not None:
        rec.update(register=site.register, type=site.ptx_type, instruction=site.opcode, ptx_line=site.ptx_line,
                   source=site.source(ins.files), function=site.function)
    if int(want[0]) != int(got[0]) or int(want[1]) != int(got[1]):
        other = ins.sites[int(got[0])] if int(got[0]) < len(ins.sites) else None
        rec.update(what="the machines took different paths", actual_step=int(got[1]),
                   actual_register=other.register if other else None,
                   actual_ptx_line=other.ptx_line if other else None,
                   actual_function=other.function if other else None)
        return rec
    wide = site is not None and site.ptx_type in ("b64", "u64", "s64", "f64")
    vs = int(want[2]) | (int(want[3]) << 32)
    vg = int(got[2]) | (int(got[3]) << 32)
    digits = 18 if wide else 10
    kind = _KIND.get(site.ptx_type if site else "", "b32")
    rec.update(expected=f"{vs:#0{digits}x}", actual=f"{vg:#0{digits}x}",
               expected_value=decode_register(vs, kind) if not wide else str(vs),
               actual_value=decode_register(vg, kind) if not wide else str(vg))
    return rec
