"""The sanitizer: race, sync, init and memory checks of one launch on the simulated CTAs, which a GPU cannot have.

:func:`sanitize_launch` runs a kernel of a :class:`~warpsim.ptx.launch.PtxModule` with the core's shadow state on
(:meth:`~warpsim.ptx.launch.PtxRun.enable_shadow`; the model: :mod:`warpsim.ptx.shadow`) and returns a
:class:`Report`: its :class:`Finding` objects, each with both source lines where there are two, the threads and the
addresses, worded like compute-sanitizer's (:meth:`Report.text`) or as JSON (:meth:`Report.as_json`).

Tools (``tools``: a set of names, :data:`TOOLS`):

- ``race``: shared and global accesses of different threads not ordered by a barrier, ``bar.warp.sync``, strong
  (atomic, volatile, relaxed/acquire/release) accesses on both sides or a release/acquire through memory: RAW, WAR,
  WAW; lanes of one instruction writing one byte with different values (a warning); a read of a ``cp.async``
  destination before its wait;
- ``sync``: a barrier that cannot complete (deadlock), threads released from different ``bar.sync`` lines, a barrier
  completing without threads that exited, divergent ``.aligned`` instructions, ``shfl/vote/match.sync`` whose member
  mask leaves out a lane that executes it or names one that cannot come;
- ``init``: reads of shared memory no thread of the CTA wrote, of global buffers named ``uninit`` before a write,
  of registers before any write (:mod:`warpsim.sanitize.registers`);
- ``mem``: out-of-range, misaligned, read-only and wrong-space accesses (the core's faults).

A fault stops the launch: the findings so far are reported with it.
"""

from __future__ import annotations

import re

import numpy as np

from warpsim.debug.source_lines import source_chains, user_line
from warpsim.errors import DeviceAssertion, SimulatorFault
from warpsim.isa.faults import (FAULT_DEADLOCK, FAULT_DIVERGENT, FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, FAULT_RACE,
                                FAULT_READ_ONLY, FAULT_SHFL_SOURCE, FAULT_SPACE)
from warpsim.ptx.codes import WAITING
from warpsim.ptx.decode import LOC
from warpsim.ptx.launch import GLOBAL_SHADOW_BYTES
from warpsim.ptx.memory import GLOBAL_BASE, SHARED_WINDOW
from warpsim.ptx.shadow import (FC_COUNT, FC_HI, FC_KIND, FC_LO, FC_PCA, FC_PCB, FC_SPACE, FC_TA, FC_TB, FC_USED,
                                K_BARDIV, K_BAREXIT, K_MASK, K_RAW, K_REG, K_UNINIT, K_WAR, K_WAW, K_WAW_SAME, S_GLOBAL,
                                S_LOST, S_SMEM, S_THREADS, W_T)
from warpsim.sanitize.registers import RegisterCheck
from warpsim.sanitize.report import TOOLS, Finding, Report

__all__ = ["warp_orders", "schedule_findings", "sanitizing_launcher", "settle", "TOOLS", "Finding", "Report", "sanitize_launch", "parse_tools"]

_TOOL_OF_KIND = {K_RAW: "race", K_WAR: "race", K_WAW: "race", K_WAW_SAME: "race", K_UNINIT: "init", K_REG: "init",
                 K_MASK: "sync", K_BARDIV: "sync", K_BAREXIT: "sync"}
_TOOL_OF_FAULT = {FAULT_RACE: "race", FAULT_DEADLOCK: "sync", FAULT_DIVERGENT: "sync", FAULT_SHFL_SOURCE: "sync",
                  FAULT_OUT_OF_RANGE: "mem", FAULT_MISALIGNED: "mem", FAULT_READ_ONLY: "mem", FAULT_SPACE: "mem"}
_ACCESS = {K_RAW: ("Write", "Read"), K_WAR: ("Read", "Write"), K_WAW: ("Write", "Write"),
           K_WAW_SAME: ("Write", "Write")}


def parse_tools(text):
    """``"race,sync"`` / ``"all"`` -> a frozenset of :data:`TOOLS`; ``ValueError`` naming the unknown ones."""
    names = [t.strip() for t in str(text).split(",") if t.strip()]
    if not names or "all" in names:
        return frozenset(TOOLS)
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise ValueError(f"--tool {text}: unknown tool {', '.join(unknown)} (tools: {', '.join(TOOLS)}, all)")
    return frozenset(names)


class _Context:
    """How a finding names rows, threads and addresses of one launch."""

    def __init__(self, run, name_params):
        self.run, self.d, self.m = run, run.decoded, run.machine
        self.ptx_file = run.module.filename
        self.name_params = name_params or (lambda text: text)
        self._chains = None
        self.T = int(run.sstate[S_THREADS]) if run.sstate.shape[0] > S_THREADS and run.sstate[S_THREADS] else 32

    def site(self, row, access=None):
        """``{"access", "source", "inlined", "ptx_file", "ptx_line", "text"}`` of code row ``row``: ``source`` is
        the user's own line (:func:`warpsim.debug.source_lines.user_line`), ``inlined`` the frames inside it."""
        w = self.d.where[int(self.d.code[row, LOC])]
        chain = self._chain(w.ptx_line)
        user = user_line(chain)
        inner = chain[chain.index(user) + 1:] if user else ()
        return {"access": access, "source": f"{user[0]}:{user[1]}" if user else w.source,
                "inlined": " -> ".join(f"{f}:{n}" for f, n in inner), "ptx_file": self.ptx_file,
                "ptx_line": w.ptx_line, "text": w.text.rstrip(";")}

    def _chain(self, ptx_line):
        if self._chains is None:
            lines = {w.ptx_line for w in self.d.where}
            self._chains = source_chains(self.run.module.text, self.run.module.module.files, lines)
        return self._chains.get(ptx_line, ())

    def cta_thread(self, g, t=None):
        """``"CTA (x,y,z) thread (x,y,z) (warp w lane l)"`` of launch ordinal ``g`` (or of thread ``t`` of the CTA
        running now)."""
        if t is None:
            ordinal, t = divmod(int(g), self.T)
            coords = self.run._ctas[ordinal][1]
        else:
            coords = self.run.cta
        b = self.run.block
        tid = (t % b[0], (t // b[0]) % b[1], t // (b[0] * b[1]))
        return f"CTA ({','.join(map(str, coords))}) thread ({','.join(map(str, tid))}) (warp {t // 32} lane {t % 32})"

    def where_bytes(self, space, lo, hi):
        if space == 2:
            names = [(_variable(n), a, a + s) for n, a, s in self.d.shared if s is not None]
            inside = next((f" ({n}[{lo - a}:{hi - a}] bytes)" for n, a, e in names if a <= lo < e), "")
            return f"shared [{lo:#x}, {hi:#x}){inside}"
        for name, (base, size) in self.m.buffers.items():
            if base <= lo < base + max(size, 1):
                return self.name_params(f"global [{GLOBAL_BASE + lo:#x}, {GLOBAL_BASE + hi:#x}) = buffer {name} bytes "
                                        f"[{lo - base}, {hi - base})")
        return f"global [{GLOBAL_BASE + lo:#x}, {GLOBAL_BASE + hi:#x})"


def _variable(name):
    """A C++ static's name from its mangled one (``_ZZ14transpose_racePKfPfE4tile`` -> ``tile``), else ``name``."""
    m = re.search(r"E(\d+)(\w+)$", name) if name.startswith("_ZZ") else None
    return m.group(2)[:int(m.group(1))] if m and len(m.group(2)) >= int(m.group(1)) else name


def _shadow_findings(ctx, finds):
    out = []
    rows = finds[finds[:, FC_USED] == 1]
    rows = rows[np.lexsort((rows[:, FC_PCB], rows[:, FC_PCA], rows[:, FC_KIND]))]
    for r in rows:
        kind, space, pca, pcb = (int(x) for x in r[[FC_KIND, FC_SPACE, FC_PCA, FC_PCB]])
        ta, tb, lo, hi, count = (int(x) for x in r[[FC_TA, FC_TB, FC_LO, FC_HI, FC_COUNT]])
        times = f"{count} time{'s' if count != 1 else ''}"
        if kind in _ACCESS:
            first, second = _ACCESS[kind]
            sname = "shared" if space == 2 else "global"
            if kind == K_WAW_SAME:
                title = (f"Race reported between Write access and Write access of one instruction: lanes of a warp "
                         f"store different values to one {sname} address (which lane's value stays is undefined)")
                severity = "warning"
            else:
                title = f"Race reported between {first} access and {second} access ({kind_name(kind)} hazard, {sname} memory)"
                severity = "error"
            sites = [ctx.site(pca, first), ctx.site(pcb, second)]
            detail = [f"by {ctx.cta_thread(ta)} and then {ctx.cta_thread(tb)}",
                      f"{ctx.where_bytes(space, lo, hi)}; {times}"]
            out.append(Finding("race", kind_name(kind), severity, title, sites, detail))
        elif kind == K_UNINIT:
            what = "shared memory that no thread of the CTA wrote" if space == 2 else \
                "a global buffer marked uninitialized before any write to it"
            out.append(Finding("init", "uninit-memory", "error", f"Uninitialized {('shared' if space == 2 else 'global')}"
                               f" memory read: {what}", [ctx.site(pca, "Read")],
                               [f"first by {ctx.cta_thread(ta)}", f"{ctx.where_bytes(space, lo, hi)}; {times}"]))
        elif kind == K_MASK:
            out.append(Finding("sync", "member-mask", "error", "Warp-synchronous instruction executed by a lane that "
                               "is not in its member mask (PTX: undefined behaviour)", [ctx.site(pca)],
                               [f"first by {ctx.cta_thread(ta)}: member mask {lo:#010x}, lanes executing "
                                f"{hi:#010x}; {times}"]))
        elif kind == K_BARDIV:
            out.append(Finding("sync", "divergent-barrier", "error", "Barrier error: threads of the CTA were released "
                               "from different bar.sync instructions (a __syncthreads() in divergent code)",
                               [ctx.site(pca, "Barrier"), ctx.site(pcb, "Barrier")],
                               [f"e.g. {ctx.cta_thread(ta)} at the first, {ctx.cta_thread(tb)} at the second; {times}"]))
        elif kind == K_BAREXIT:
            out.append(Finding("sync", "barrier-after-exit", "error", "Barrier error: a barrier of every thread "
                               "completed after some threads of the CTA had exited (not every thread reaches it)",
                               [ctx.site(pca, "Barrier")],
                               [f"{lo} of {hi} threads were still running; first waiting {ctx.cta_thread(ta)}; "
                                f"{times}"]))
        elif kind == K_REG:
            out.append(Finding("init", "uninit-register", "error", f"Uninitialized register read: {_slot_name(ctx, lo)}"
                               f" is read before any write to it", [ctx.site(pca, "Read")],
                               [f"first by {ctx.cta_thread(ta)}; {times}"]))
    return out


def _slot_name(ctx, slot):
    names = [n for n, (s, words, _t) in ctx.d.reg_names.items() if s <= slot < s + words]
    return names[0] if names else f"register slot {slot}"


def kind_name(kind):
    return {K_RAW: "RAW", K_WAR: "WAR", K_WAW: "WAW", K_WAW_SAME: "WAW"}.get(kind, str(kind))


def _fault_finding(ctx, fault, message):
    """The finding of the fault that stopped the launch (``fault``: the core's ``int64[8]``)."""
    code, t, value, extra, pc, space, warp = (int(x) for x in fault[:7])
    tool = _TOOL_OF_FAULT.get(code, "mem")
    run = ctx.run
    if code == FAULT_DEADLOCK:
        state = run._state
        by_row = {}
        for th in np.flatnonzero(state.status == WAITING):
            by_row.setdefault(int(state.pc[th]) - 1, []).append(int(th))
        sites = [ctx.site(row, "Barrier") for row in sorted(by_row)]
        detail = []
        for row in sorted(by_row):
            ths = by_row[row]
            warps = sorted({th // 32 for th in ths})
            b = int(state.bar_id[ths[0]])
            expect = int(state.bars[1, b])
            detail.append(f"PTX line {sites[sorted(by_row).index(row)]['ptx_line']}: barrier {b}: {len(ths)} thread(s)"
                          f" of warps {_ranges(warps)} arrived; it waits for "
                          f"{expect if expect else 'every running thread of the CTA'}")
        detail.append(f"in CTA ({','.join(map(str, run.cta))}): {value} of {extra} running threads wait at barriers "
                      f"that can never complete")
        return Finding("sync", "deadlock", "error", "Barrier error: a bar.sync that the threads it waits for never "
                       "reach (deadlock)", sites, detail)
    sites = [ctx.site(pc)] if 0 <= pc < ctx.d.code.shape[0] else []
    kind = {FAULT_RACE: "cp.async", FAULT_DIVERGENT: "divergent", FAULT_SHFL_SOURCE: "shfl-source",
            FAULT_OUT_OF_RANGE: "out-of-range", FAULT_MISALIGNED: "misaligned", FAULT_READ_ONLY: "read-only",
            FAULT_SPACE: "space"}.get(code, "fault")
    if code == FAULT_RACE:
        issued = _cp_async_issuer(run, value)
        title = ("Race reported between Write access and Read access: the destination of a cp.async read before "
                 "its cp.async.wait_group/wait_all")
        if issued is not None:
            row, th = issued
            sites = [ctx.site(row, "Write (cp.async)")] + [dict(s, access="Read") for s in sites]
            detail = [f"cp.async by {ctx.cta_thread(None, th)}, then read by {ctx.cta_thread(None, t)}",
                      f"shared address {value - (SHARED_WINDOW if value >= SHARED_WINDOW else 0):#x} ({extra} bytes)"]
        else:
            detail = [message]
        return Finding("race", kind, "error", title, sites, detail)
    titles = {FAULT_DIVERGENT: "Divergent warp at a warp-synchronous instruction",
              FAULT_SHFL_SOURCE: "shfl.sync reads a lane that does not execute it",
              FAULT_OUT_OF_RANGE: "Invalid memory access (out of bounds)",
              FAULT_MISALIGNED: "Misaligned memory access", FAULT_READ_ONLY: "Write to read-only memory",
              FAULT_SPACE: "Access to the wrong state space"}
    return Finding(tool, kind, "error", titles.get(code, "The launch stopped"), sites, [message])


def _without_echoes(findings):
    """Leave out the uninitialized shared reads at an instruction that reads in a race too: in the order the
    simulator ran the threads, a read that came before the racing write found the byte unwritten; the race is the
    finding."""
    racing = {(s["ptx_line"], s["ptx_file"]) for f in findings if f.tool == "race" for s in f.sites
              if s.get("access") == "Read"}
    return [f for f in findings if not (f.kind == "uninit-memory" and f.title.startswith("Uninitialized shared")
                                        and (f.sites[0]["ptx_line"], f.sites[0]["ptx_file"]) in racing)]


def _cp_async_issuer(run, addr):
    """``(row, thread)`` of a pending cp.async whose destination holds shared ``addr``, else None."""
    off = addr - SHARED_WINDOW if addr >= SHARED_WINDOW else addr
    state = run._state
    for th in range(state.npend.shape[0]):
        for k in range(int(state.npend[th])):
            dst, _src, size = (int(x) for x in state.pend[th, k, :3])
            if dst <= off < dst + size:
                return int(state.pend[th, k, 5]), th
    return None


def _ranges(xs):
    out, start = [], None
    for i, x in enumerate(xs):
        if start is None:
            start = x
        if i + 1 == len(xs) or xs[i + 1] != x + 1:
            out.append(str(start) if start == x else f"{start}-{x}")
            start = None
    return ",".join(out)


def sanitize_launch(module, kernel, grid=(1, 1, 1), block=(128, 1, 1), args=None, smem=0, arch="sm90", cta=None,
                    max_steps=None, tools=frozenset(TOOLS), uninit=(), name_params=None,
                    global_limit=GLOBAL_SHADOW_BYTES, quiet=True, display=None, schedules=0, seed=0, regions=None):
    """Run ``kernel`` of ``module`` (a :class:`~warpsim.ptx.launch.PtxModule`; arguments as its ``launch``) with the
    sanitizer; a :class:`Report` (titled ``display``, default the entry's name). ``uninit``: PTX names of the buffers
    the kernel must write before it reads them; ``name_params``: a function naming PTX params as the source does in
    messages (``Kernel.name_params``); ``schedules``: also run the launch with the warps taking turns in that many
    other orders (the reverse, then random permutations from ``seed``) and report each buffer whose bytes differ
    from the simulator's own order (:func:`schedule_findings`; ``regions``: as there)."""
    kw = {} if max_steps is None else {"max_steps": max_steps}
    run = module.start(kernel, grid, block, args, smem, arch, cta, quiet=quiet, **kw)
    run.enable_shadow(global_limit)
    notes = []
    sstate = run.sstate
    smem_bytes = int(sstate[S_SMEM])
    for name in uninit:
        if name not in run.machine.buffers:
            raise ValueError(f"--uninit {name}: not a buffer of {kernel} (buffers: {', '.join(run.machine.buffers)})")
        base, size = run.machine.buffers[name]
        if sstate[S_GLOBAL]:
            run.shadow[W_T, smem_bytes + base:smem_bytes + base + size] = -2
    if not sstate[S_GLOBAL]:
        notes.append(f"global memory ({run.machine.gmem.size} bytes) is larger than the shadow limit ({global_limit}"
                     f" bytes): global accesses were not checked")
    registers = RegisterCheck(run) if "init" in tools else None
    fault_finding = None
    ctx = _Context(run, name_params)
    result = None
    try:
        result = registers.run() if registers is not None else run.run()
    except (SimulatorFault, DeviceAssertion) as e:
        fault = getattr(run, "last_fault", None)
        message = name_params(str(e)) if name_params else str(e)
        if fault is not None:
            fault_finding = _fault_finding(ctx, fault, message)
        else:
            fault_finding = Finding("mem", "fault", "error", "The launch stopped", [], [message])
    findings = _without_echoes([f for f in _shadow_findings(ctx, run.finds) if f.tool in tools])
    if registers is not None:
        findings += registers.findings(ctx)
    if fault_finding is not None:
        findings.append(fault_finding)
        if fault_finding.tool not in tools:
            notes.append(f"the launch stopped at a {fault_finding.tool} finding (reported although --tool does not "
                         f"name {fault_finding.tool})")
    if sstate[S_LOST]:
        notes.append(f"too many findings: {int(sstate[S_LOST])} hazards of further instruction pairs were not kept")
    stats = {"warp_instructions": run.steps, "ctas": run._next + (0 if run.finished else 1)}
    if schedules and result is not None:
        orders = warp_orders(run.warp_order.size, schedules, seed)
        findings += schedule_findings(module, kernel, dict(grid=grid, block=block, args=args, smem=smem, arch=arch,
                                                           cta=cta, **kw), result, orders, name_params,
                                     regions)
        stats["schedules"] = len(orders)
    return Report(display or kernel, frozenset(tools), findings, notes, stats, result)


def sanitizing_launcher(tools, display):
    """A Python front end's launcher (``launch(module, entry, launch keywords, names)`` of ``warpsim.frontends``):
    the launch under the sanitizer (``tools``: text or a set), its report titled ``display``, buffers and parameters
    named in messages as the source names them (``names``: ``{PTX name: name}``, given with each launch:
    :func:`warpsim.frontends.kernel.naming_params`); returns
    ``(the launch's result, the report)``."""
    chosen = parse_tools(tools) if isinstance(tools, str) else frozenset(tools)

    def launch(module, entry, kw, names):
        from warpsim.frontends.kernel import naming_params
        report = sanitize_launch(module, entry, kw["grid"], kw["block"], kw["args"], kw["smem"], kw["arch"],
                                 tools=chosen, quiet=kw["quiet"], name_params=naming_params(names), display=display)
        return report.result, report
    return launch


def settle(report, settings, name):
    """What a switch does with a sanitized launch's ``report``: keep it where ``settings`` collects them
    (``settings["reports"]``, the ``sanitize()`` APIs), else raise ``AssertionError`` with it when it found
    anything (``simulate(sanitize=...)``, ``WARPSIM_SANITIZE``); the launch's result (None for an empty grid)."""
    if report is None:
        return None
    if settings.get("reports") is not None:
        settings["reports"].append(report)
    elif report.findings:
        raise AssertionError(f"warpsim sanitizer: {name}:\n{report.text()}")
    return report.result


def warp_orders(warps, count, seed=0):
    """``count`` orders of ``warps`` warps other than ``0, 1, ...``: the reverse first, then random permutations
    from ``seed`` (each new). Fewer where the warps have fewer orders.

    >>> [o.tolist() for o in warp_orders(3, 3, seed=1)]
    [[2, 1, 0], [2, 0, 1], [1, 0, 2]]
    """
    seen = {tuple(range(warps))}
    out = []
    rng = np.random.default_rng(seed)
    candidates = [np.arange(warps)[::-1]] + [rng.permutation(warps) for _ in range(8 * count)]
    for order in candidates:
        if len(out) == count:
            break
        if tuple(order) not in seen:
            seen.add(tuple(order))
            out.append(np.asarray(order, np.int64))
    return out


def schedule_findings(module, kernel, launch, result, orders, name_params=None, regions=None):
    """One finding per buffer whose final bytes differ when the warps take turns in another of ``orders`` than in
    the simulator's (``result``: that launch's :class:`~warpsim.ptx.launch.LaunchResult`): a legal schedule of the
    GPU gives other results, so something is unordered (a race the shadow did not see, such as one behind a named
    barrier, or a value that depends on who came first). ``regions``: ``{buffer: [(name, start, stop), ...]}``, the
    named parts of a buffer (a dialect program's buffers in its one global memory), each reported on its own."""
    found = {}
    for order in orders:
        try:
            other = module.launch(kernel, quiet=True, warp_order=order, **launch)
        except (SimulatorFault, DeviceAssertion) as e:        # this order deadlocks or faults where ours did not
            message = name_params(str(e)) if name_params else str(e)
            found.setdefault("(launch)", Finding(
                "race", "schedule", "error", "Results depend on the warp schedule", [],
                [f"the launch stops when the warps take turns as {order.tolist()}: {message}"]))
            continue
        for name, want in result.buffers.items():
            got = other.buffers.get(name)
            if got is None:
                continue
            a, b = np.ascontiguousarray(want).view(np.uint8).reshape(-1), np.ascontiguousarray(got).view(np.uint8).reshape(-1)
            bad = np.flatnonzero(a != b)
            parts = (regions or {}).get(name) or [(name_params(name) if name_params else name, 0, a.size)]
            for label, start, stop in parts:
                inside = bad[(bad >= start) & (bad < stop)] - start
                if inside.size and label not in found:
                    found[label] = Finding(
                        "race", "schedule", "error", "Results depend on the warp schedule", [],
                        [f"buffer {label}: {inside.size} bytes differ (the first at byte {int(inside[0])}) when the "
                         f"warps take turns as {order.tolist()} instead of {list(range(order.size))}"])
    return list(found.values())
