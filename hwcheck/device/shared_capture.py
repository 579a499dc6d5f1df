"""The final shared memory of each CTA: captured on the GPU by the instrumented kernel, compared with the simulator's.

The instrumented kernel (:mod:`hwcheck.device.instrument`) gains a parameter ``.param .u64 __warpsim_shared`` (a global
buffer, zeroed by the host), a module variable ``.global .u64 __warpsim_shared_ptr`` that its prologue sets to
that buffer, and a function ``__warpsim_exit`` that every thread calls where it leaves the kernel (each ``ret``
or ``exit`` of the entry, each ``exit`` of a called ``.func``):

1. ``membar.cta`` (``fence.sc.cta``), then ``atom.global.add.u32`` on its CTA's counter (the first word of the
   CTA's slab);
2. the thread that sees ``threads - 1`` (the last of its CTA to leave) does ``membar.cta`` and copies
   each captured region from shared memory into the slab, from the shared address the prologue of the
   function that declares it wrote into the slab's header (nvcc declares a kernel's ``__shared__`` arrays in
   the body of the function that uses them, entry or ``.func``, where ``__warpsim_exit`` cannot name them);
   a region whose address is still 0 (its ``.func`` never ran in that CTA) is left out.

The fences make every shared store of the CTA's threads visible to that last thread (each thread's fence and
atomic are a release pattern, the last one's atomic and fence an acquire pattern, on one location). The
shared layout of the kernel is unchanged (the counter is in global memory), so the instrumented kernel
computes what the original does.

Layout of the buffer: one slab per CTA in linear CTA order (x fastest), each :meth:`SharedCapture.cta_bytes`: a
header (``u32``: the threads that left, then the shared address of each region; padded to 16 bytes), then each
static ``.shared`` variable the kernel (or a function it calls) names and each one declared in the body of the
kernel or of a function it calls, at 16-byte aligned offsets, then the dynamic shared memory (the module's first
``.extern .shared`` variable, ``%dynamic_smem_size`` bytes). Regions are copied by variable, not as one window,
so the machines may place the variables at different shared addresses (the header says where each put them). Not
captured: ``.shared`` variables declared in a nested block, and shared memory written by asynchronous copies
still in flight when the last thread leaves.

A GPU does not clear shared memory when a CTA starts, so bytes a kernel never writes hold whatever was there:
only the bytes the kernel wrote are compared. The simulator tells which those are: it runs the kernel a
second time with every CTA's shared memory starting as ``0xFF`` instead of 0 (``launch(shared_fill=...)``);
a byte whose final value is the same in both runs was written (:func:`written_mask`).

The simulator's side is its own final shared memory (``launch(..., keep_shared=True)``) laid out the same way
(:func:`expected_capture`); :func:`compare_captures` compares two such buffers word by word.

>>> text = '''.version 8.0
... .target sm_80
... .address_size 64
... .shared .align 4 .b8 tile[40];
... .extern .shared .align 16 .b8 dyn[];
... .visible .entry k()
... {
...   .reg .b32 %r<2>;
...   mov.u32 %r1, tile;
...   st.shared.u32 [dyn], %r1;
...   ret;
... }'''
>>> from warpsim.ptx.syntax import parse_module
>>> cap = plan_capture(parse_module(text), "k")
>>> [(r.name, r.offset, r.nbytes) for r in cap.regions], cap.cta_bytes(smem=20)
([('tile', 16, 40), ('dyn', 64, None)], 96)
>>> cap.header_bytes, cap.address_offset(1)
(16, 8)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpsim.ptx.syntax import Instruction, type_bytes

__all__ = ["SHARED_PARAM", "SHARED_POINTER", "EXIT_FUNCTION", "Region", "SharedCapture", "plan_capture",
           "exit_function", "prologue", "expected_capture", "written_mask", "SharedComparison", "compare_captures"]

SHARED_PARAM = "__warpsim_shared"
SHARED_POINTER = "__warpsim_shared_ptr"
EXIT_FUNCTION = "__warpsim_exit"


def _round16(n: int) -> int:
    return -(-n // 16) * 16


def _header(regions: int) -> int:
    return _round16(4 + 4 * regions)


@dataclass(frozen=True)
class Region:
    """One captured ``.shared`` variable: ``name``, ``offset`` in the CTA's slab, ``nbytes`` (None: the dynamic
    shared memory, as many bytes as the launch gives), ``words`` (whether it may be copied 4 bytes at a time:
    aligned to 4) and ``function`` (the function whose body declares it; "" at module scope)."""

    name: str
    offset: int
    nbytes: int | None
    words: bool
    function: str = ""


@dataclass(frozen=True)
class SharedCapture:
    """The captured regions of one kernel; the static ones first, the dynamic one (if any) last."""

    regions: tuple

    @property
    def header_bytes(self) -> int:
        """Bytes of a slab's header: the counter and one shared address per region, padded to 16."""
        return _header(len(self.regions))

    def address_offset(self, k: int) -> int:
        """Byte offset in a slab of the shared address of region ``k``."""
        return 4 + 4 * k

    @property
    def static_bytes(self) -> int:
        """Bytes of a slab before the dynamic region: the header and the static variables."""
        return self.header_bytes + sum(_round16(r.nbytes) for r in self.regions if r.nbytes is not None)

    def cta_bytes(self, smem: int) -> int:
        """Bytes of one CTA's slab for a launch with ``smem`` bytes of dynamic shared memory."""
        dynamic = any(r.nbytes is None for r in self.regions)
        return self.static_bytes + (_round16(smem) if dynamic else 0)

    def buffer_bytes(self, ctas: int, smem: int) -> int:
        """Bytes of the ``__warpsim_shared`` buffer for ``ctas`` CTAs (a multiple of 16)."""
        return ctas * self.cta_bytes(smem)


def _named(ins: Instruction):
    for o in ins.operands:
        for x in (o, o.base, *o.items):
            if x is not None and x.kind == "sym":
                yield x.name


def plan_capture(module, kernel, callees=()) -> SharedCapture:
    """The regions to capture for ``kernel`` whose callees are ``callees`` (names in ``module``): every
    module-scope ``.shared`` variable one of them names, in declaration order, then the ``.shared`` variables
    declared in the kernel's body (outside nested blocks), then the dynamic shared memory when one of them
    names an ``.extern .shared`` variable (under the first such variable's name)."""
    names = {n for f in (kernel, *callees) for i in module.functions[f].body if isinstance(i, Instruction)
             for n in _named(i)}
    shared = [v for v in module.variables if v.space == "shared"]
    static = [(v, "") for v in shared if not v.extern and v.name in names]
    static += [(v, f) for f in (kernel, *callees) for v in module.functions[f].locals
               if v.space == "shared" and "#" not in v.name]
    externs = [v for v in shared if v.extern]
    dynamic = any(v.name in names for v in externs)
    regions, offset = [], _header(len(static) + dynamic)
    for v, owner in static:
        nbytes = type_bytes(v.type) * v.vector * max(v.count, 0)
        words = max(v.align, type_bytes(v.type)) % 4 == 0
        regions.append(Region(v.name, offset, nbytes, words, owner))
        offset += _round16(nbytes)
    if dynamic:
        regions.append(Region(externs[0].name, offset, None, True))
    return SharedCapture(tuple(regions))


def _copy_loop(k: int, src: str, count: str, words_count: str | None) -> list:
    """PTX that copies ``count`` bytes (an immediate or a register) from shared address ``src`` to global
    ``%__ex2``: 4 bytes at a time up to ``words_count`` (None: none), then byte by byte."""
    out = ["mov.u32 %__e4, 0;"]
    for unit, limit, ld, st in ((4, words_count, "ld.shared.u32", "st.global.u32"),
                                (1, count, "ld.shared.u8", "st.global.u8")):
        if limit is None:
            continue
        top, end = f"$__wcopy{k}_{unit}", f"$__wcopy{k}_{unit}_end"
        out += [f"{top}:", f"setp.ge.u32 %__ep, %__e4, {limit};", f"@%__ep bra {end};",
                f"add.u32 %__e5, {src}, %__e4;", f"{ld} %__e6, [%__e5];",
                "cvt.u64.u32 %__ex3, %__e4;", "add.s64 %__ex3, %__ex2, %__ex3;", f"{st} [%__ex3], %__e6;",
                f"add.u32 %__e4, %__e4, {unit};", f"bra.uni {top};", f"{end}:"]
    return out


def _slab(capture: SharedCapture, r32, r64, base: str) -> list:
    """PTX that adds this CTA's slab offset to ``base`` (a ``u64`` register holding the buffer's global
    address); ``r32``: three ``b32`` temporaries, ``r64``: one ``b64`` temporary."""
    a, b, c = r32
    dynamic = any(r.nbytes is None for r in capture.regions)
    return [
        f"mov.u32 {a}, %ctaid.z;", f"mov.u32 {b}, %nctaid.y;", f"mov.u32 {c}, %ctaid.y;",
        f"mad.lo.u32 {a}, {a}, {b}, {c};", f"mov.u32 {b}, %nctaid.x;", f"mov.u32 {c}, %ctaid.x;",
        f"mad.lo.u32 {a}, {a}, {b}, {c};",                                     # linear CTA index
        *([f"mov.u32 {b}, %dynamic_smem_size;", f"add.u32 {b}, {b}, 15;", f"and.b32 {b}, {b}, -16;",
           f"add.u32 {b}, {b}, {capture.static_bytes};"] if dynamic
          else [f"mov.u32 {b}, {capture.static_bytes};"]),                    # bytes of a slab
        f"mul.wide.u32 {r64}, {a}, {b};", f"add.s64 {base}, {base}, {r64};",
    ]


def prologue(capture: SharedCapture, function: str, entry: bool, r32, r64, base: str) -> list:
    """The first instructions of ``function``'s body: the entry stores the buffer's address into
    ``__warpsim_shared_ptr``; each function stores the shared address of each region it can name (the entry:
    its own and the module's; a ``.func``: its own) into its CTA's slab header (every thread the same values).
    ``r32``: three ``b32`` temporaries, ``r64``: one ``b64`` temporary, ``base``: a ``b64`` temporary."""
    mine = [(k, r) for k, r in enumerate(capture.regions)
            if r.function == function or (entry and not r.function)]
    if not entry and not mine:
        return []
    out = ([f"ld.param.u64 {base}, [{SHARED_PARAM}];", f"cvta.to.global.u64 {base}, {base};",
            f"st.global.u64 [{SHARED_POINTER}], {base};"] if entry
           else [f"ld.global.u64 {base}, [{SHARED_POINTER}];"])
    out += _slab(capture, r32, r64, base)
    for k, r in mine:
        out += [f"mov.u32 {r32[0]}, {r.name};", f"st.global.u32 [{base}+{capture.address_offset(k)}], {r32[0]};"]
    return out


def exit_function(capture: SharedCapture) -> tuple:
    """``(declaration, definition)``: the PTX of ``__warpsim_exit`` (see the module docstring)."""
    body = [
        f"ld.global.u64 %__ex0, [{SHARED_POINTER}];", *_slab(capture, ("%__e0", "%__e1", "%__e2"), "%__ex1", "%__ex0"),
        "mov.u32 %__e1, %ntid.x;", "mov.u32 %__e2, %ntid.y;", "mul.lo.u32 %__e1, %__e1, %__e2;",
        "mov.u32 %__e2, %ntid.z;", "mul.lo.u32 %__e1, %__e1, %__e2;", "sub.u32 %__e1, %__e1, 1;",
        "membar.cta;", "atom.global.add.u32 %__e2, [%__ex0], 1;",
        "setp.ne.u32 %__ep, %__e2, %__e1;", "@%__ep bra $__wexit_done;", "membar.cta;",
    ]
    for k, r in enumerate(capture.regions):
        body += [f"ld.global.u32 %__e3, [%__ex0+{capture.address_offset(k)}];", "setp.eq.u32 %__ep, %__e3, 0;",
                 f"@%__ep bra $__wskip{k};", f"add.s64 %__ex2, %__ex0, {r.offset};"]
        if r.nbytes is None:
            body += ["mov.u32 %__e7, %dynamic_smem_size;", "and.b32 %__e8, %__e7, -4;"]
            body += _copy_loop(k, "%__e3", "%__e7", "%__e8")
        else:
            body += _copy_loop(k, "%__e3", str(r.nbytes), str(r.nbytes // 4 * 4) if r.words else None)
        body.append(f"$__wskip{k}:")
    body += ["$__wexit_done:", "ret;"]
    decls = "\t.reg .b32 %__e<9>;\n\t.reg .b64 %__ex<4>;\n\t.reg .pred %__ep;\n"
    definition = (f".func {EXIT_FUNCTION}()\n{{\n{decls}"
                  + "".join(f"{line}\n" if line.endswith(":") else f"\t{line}\n" for line in body) + "}\n")
    return f".func {EXIT_FUNCTION}()\n;\n", definition


def expected_capture(capture: SharedCapture, shared_vars, finals, smem: int, threads: int) -> np.ndarray:
    """The ``__warpsim_shared`` buffer a kernel should leave, from the simulator's final shared memory.

    ``shared_vars``: ``(name, shared address, bytes)`` of the kernel's variables (``Decoded.shared``);
    ``finals``: each CTA's final shared window in linear CTA order (``LaunchResult.shared``'s arrays);
    ``threads``: threads per CTA (every header counts them all). Returns ``uint8[ctas * cta_bytes]``.
    """
    where = {name: address for name, address, _ in shared_vars}
    size = capture.cta_bytes(smem)
    out = np.zeros((len(finals), size), np.uint8)
    head = [threads] + [where[r.name] for r in capture.regions]
    out[:, :4 * len(head)] = np.frombuffer(np.array(head, np.uint32).tobytes(), np.uint8)
    for c, window in enumerate(finals):
        for r in capture.regions:
            n = smem if r.nbytes is None else r.nbytes
            out[c, r.offset:r.offset + n] = window[where[r.name]:where[r.name] + n]
    return out.reshape(-1)


def written_mask(capture: SharedCapture, shared_vars, finals, other_finals, smem: int) -> np.ndarray:
    """``uint8`` in the layout of the buffer: 0xFF for each byte to compare (the counters, and each region byte
    whose final value is the same in ``finals`` and ``other_finals``: two simulator runs whose shared memory
    started as different bytes), 0 elsewhere (the shared addresses, bytes the kernel never wrote)."""
    a = expected_capture(capture, shared_vars, finals, smem, 0).reshape(len(finals), -1)
    b = expected_capture(capture, shared_vars, other_finals, smem, 0).reshape(len(finals), -1)
    mask = np.where(a == b, np.uint8(0xFF), np.uint8(0))
    mask[:, :capture.header_bytes] = 0
    mask[:, :4] = 0xFF
    return mask.reshape(-1)


@dataclass(frozen=True)
class SharedComparison:
    """Words of shared memory compared (those the kernel wrote at least a byte of) and how many differ (a CTA
    whose threads did not all arrive counts once), with the first mismatch records."""

    compared: int
    mismatched: int
    records: list


def _cta(c: int, grid) -> list:
    gx, gy, _ = grid
    return [c % gx, c // gx % gy, c // (gx * gy)]


def compare_captures(capture: SharedCapture, want, got, smem: int, grid, mask=None, limit: int = 20,
                     what: str = "final shared memory differs") -> SharedComparison:
    """Compare two ``__warpsim_shared`` buffers (``want``: the simulator's, ``got``: the GPU's) word by word
    (the counters and the regions; not the shared addresses, which are each machine's own), only the bytes
    ``mask`` (:func:`written_mask`) selects when it is given.

    A record names the CTA, the variable (and the function declaring it), the byte offset into it, the word's
    shared address on each machine (``shared_address``, ``actual_shared_address``), expected/actual in hex and,
    where the kernel wrote only some of the word's bytes, ``written`` (the mask of those bytes).
    """
    size = capture.cta_bytes(smem)
    w = np.ascontiguousarray(want).view(np.uint8).reshape(-1, size)
    g = np.ascontiguousarray(got).view(np.uint8).reshape(-1, size)
    m = np.full_like(w, 0xFF) if mask is None else np.ascontiguousarray(mask).view(np.uint8).reshape(-1, size)
    hw, hg = w[:, :capture.header_bytes].copy().view(np.uint32), g[:, :capture.header_bytes].copy().view(np.uint32)
    compared = bad = 0
    records = []
    arrived_w, arrived_g = hw[:, 0], hg[:, 0]
    for c in np.flatnonzero(arrived_w != arrived_g):
        bad += 1
        if len(records) < limit:
            records.append({"what": "not every thread of the CTA reached an exit of the kernel",
                            "cta": _cta(int(c), grid), "expected_threads": int(arrived_w[c]),
                            "actual_threads": int(arrived_g[c])})
    for k, r in enumerate(capture.regions):
        n = smem if r.nbytes is None else r.nbytes
        padded = -(-n // 4) * 4
        ws, gs, ms = (np.zeros((w.shape[0], padded), np.uint8) for _ in range(3))
        ws[:, :n], gs[:, :n] = w[:, r.offset:r.offset + n], g[:, r.offset:r.offset + n]
        ms[:, :n] = m[:, r.offset:r.offset + n]
        ww, gw, mw = ws.view(np.uint32), gs.view(np.uint32), ms.view(np.uint32)
        compared += int(np.count_nonzero(mw))
        diff = np.argwhere((ww & mw) != (gw & mw))
        bad += len(diff)
        for c, i in diff[:max(0, limit - len(records))]:
            rec = {"what": what, "cta": _cta(int(c), grid), "variable": r.name, "offset": 4 * int(i),
                   "shared_address": f"{int(hw[c, 1 + k]) + 4 * int(i):#x}",
                   "actual_shared_address": f"{int(hg[c, 1 + k]) + 4 * int(i):#x}",
                   "expected": f"{int(ww[c, i]):#010x}", "actual": f"{int(gw[c, i]):#010x}"}
            if r.function:
                rec["function"] = r.function
            if int(mw[c, i]) != 0xFFFFFFFF:
                rec["written"] = f"{int(mw[c, i]):#010x}"
            records.append(rec)
    return SharedComparison(compared, bad, records)
