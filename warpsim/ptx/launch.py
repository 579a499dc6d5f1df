"""Launching a decoded kernel: arguments → parameter bytes and global buffers, CTAs one after another.

:meth:`PtxModule.launch` makes one :class:`~warpsim.machine.Machine` sized for a CTA (its ``regs``
hold the PTX registers, its ``smem`` the CTA's shared window (the 1 KB the system reserves, then the
static, then the dynamic shared memory: see :data:`~warpsim.ptx.memory.SHARED_BASE`), its ``gmem`` the
module's ``.global`` variables then one buffer per pointer argument, named after the parameter, each
followed by a :func:`~warpsim.ptx.memory.redzone` so that an access past its end faults)
and runs the grid's CTAs in order (x fastest), or only ``cta``, over that one global memory.
Registers and shared memory start at zero in every CTA.

Limits, checked before anything is allocated (:func:`check_dims`): CUDA's grid (x up to 2^31 - 1, y and z up to
65535) and block (x and y up to 1024, z up to 64, 1024 threads); the CTAs of a grid are never listed
(:class:`CtaOrder` computes the one asked for), so ``cta=`` of a grid of 2^31 CTAs starts at once. A launch runs
in slices of about :data:`SLICE_SECONDS` (:meth:`PtxRun.run`): Python delivers Ctrl-C (``KeyboardInterrupt``)
between two of them, as the compiled interpreter does not look at signals.

Arguments (``args``: a dict by parameter name, or a sequence in parameter order):

- a numpy array for a ``.u64``/``.b64`` parameter: a global buffer holding its bytes; the kernel
  gets its address; after the run ``result.buffers[name]`` is its content, same dtype and shape;
- a Python int or float for a scalar parameter, stored with the parameter's PTX type;
- for a byte-struct parameter ``.param .align 8 .b8 X[N]`` (CuTe DSL's tensors), a list of
  ``(ptx_type, value)`` fields packed with natural alignment; a numpy array value is a pointer to
  its own buffer, named ``X`` (or ``X.k`` for the ``k``-th array field when there are several).
"""

from __future__ import annotations

import struct
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from warpsim.errors import DeviceAssertion, SimulatorFault
from warpsim.isa.arith import DEFAULT_ARCH, get_arch
from warpsim.isa.faults import (FAULT_WGMMA_SMEM, FAULT_BAD_DESCRIPTOR, FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, FAULT_CALL_DEPTH, FAULT_DEADLOCK,
                                FAULT_DIVERGENT, FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, FAULT_PENDING, FAULT_RACE,
                                FAULT_READ_ONLY, FAULT_SHFL_SOURCE, FAULT_SPACE, FAULT_STEP_LIMIT, FAULT_TRAP,
                                FAULT_WGMMA_PENDING, FAULT_MBARRIER, FAULT_MBARRIER_DEADLOCK, FAULT_TENSOR_MAP,
                                descriptor_problem)
from warpsim.isa.mma import mma_params
from warpsim.isa.tma import MAP_BYTES, TensorMap
from warpsim.machine import MAX_SMEM_BYTES, Machine
from warpsim.ptx.contraction import NONE, fused_instructions
from warpsim.ptx.decode import IMM, LOC, M0, O0, decode_kernel
from warpsim.ptx.codes import BULK_LOG, CTX_CLUSTER, CTX_EXPLICIT, CTX_NRANKS, CTX_RANK, CTX_SIZE, CTX_YIELD
from warpsim.ptx.families.bulk_copy import (BULK_A, BULK_B, BULK_C, BULK_COORDS, BULK_FIELDS, BULK_FORM, BULK_ROW,
                                           BULK_STEP, BULK_THREAD, FORM_NAMES, REDUCE_TENSOR, TENSOR_LOAD, TENSOR_STORE)
from warpsim.ptx.families.cluster import CLUSTER_WAIT, cluster_release
from warpsim.ptx.interp import ABSENT, MAX_PENDING, RUNNING, WAITING, run_cta, uses_hopper
from warpsim.ptx.precompile import compile_families
from warpsim.ptx import jobs as fan
from warpsim.ptx.memory import (GLOBAL_BASE, KPARAM_BASE, RANK_BYTE, SHARED_BASE, SHARED_WINDOW, SP_CONST, SP_GLOBAL, SP_KPARAM,
                                SPACE_NAMES, from_generic, object_ends, redzone, round_up)
from warpsim.ptx.families.floats.fpu import kernel_mufu_tables
from warpsim.ptx.families.mbarrier import ADDR, EXPECTED, PENDING, PHASE, TX, new_mbarriers
from warpsim.ptx.families.wgmma import BUDGET, new_pending
from warpsim.ptx.opcodes import Op
from warpsim.ptx.printf import format_printf
from warpsim.ptx.rows import M1, TRAP_ASSERT
from warpsim.ptx.shadow import NFC, NFIELDS, NSCALARS, ON_SANITIZE, S_CTA, S_ON, new_shadow, reset_shared
from warpsim.ptx.syntax import type_bytes

__all__ = ["PtxModule", "PtxRun", "LaunchResult", "CtaOrder", "check_dims", "DEFAULT_MAX_STEPS", "MAX_GRID",
           "MAX_BLOCK", "MAX_BLOCK_THREADS", "SLICE_SECONDS"]

DEFAULT_MAX_STEPS = 20_000_000   # warp instructions per launch
# CUDA's launch limits (CUDA C++ Programming Guide, "Features and Technical Specifications", the same for
# compute capability 5.0 to 12.x): grid dimensions, block dimensions, threads per block
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
MAX_BLOCK_THREADS = 1024
_OP_CODES = max(int(o) for o in Op) + 1  # the size of a table indexed by Op code
SLICE_SECONDS = 0.1              # a launch's slice of interpretation between two looks at Ctrl-C
PROGRESS_AFTER = 2.0             # seconds: a launch running longer says how far it is (``progress``) ...
PROGRESS_EVERY = 5.0             # ... and again this often
_FIRST_SLICE = 1 << 15           # warp instructions: about 40 ms of bench/bench_ptx.py's integer loop
_CALL_DEPTH = 16
GLOBAL_SHADOW_BYTES = 1 << 22    # the sanitizer shadows global memory up to this size (76 bytes of shadow a byte)
_SM_COUNT = 132                  # %nsmid; %smid = linear CTA index mod this (an H200's SMs)
_FIRST_CALLS = set()             # the run_cta variants (hopper is None or not) this process has called
MAX_CLUSTER_CTAS = 8             # CTAs in a cluster: the portable limit (16 needs a non-portable opt-in)


@dataclass
class LaunchResult:
    """What a launch leaves: ``buffers`` (param name -> array after the run), ``printf`` (list of
    ``(cta, thread, text)`` in execution order), ``stats`` (``warp_instructions``,
    ``by_opcode``, ``ctas``), the ``machine`` (its ``regs`` and ``smem`` as the last CTA left them) and,
    where the launch was asked to keep them (``keep_shared``), ``shared``: each CTA's final shared window
    (``(cta coordinates, uint8 array)`` indexed by shared-space address, in the order the CTAs ran)."""

    buffers: dict
    printf: list
    stats: dict
    machine: Machine = field(repr=False, default=None)
    shared: list | None = field(repr=False, default=None)


def _dim3(what, value):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value) + (1,) * (3 - len(tuple(value)))
    except TypeError:
        raise TypeError(f"launch: {what} must be an int or up to 3 ints, got {value!r}") from None
    if len(dims) != 3 or any(d < 1 for d in dims):
        raise ValueError(f"launch: {what} must be 1 to 3 positive ints, got {value!r}")
    return dims


def check_dims(grid, block):
    """Refuse a launch shape beyond CUDA's limits (:data:`MAX_GRID`, :data:`MAX_BLOCK`, :data:`MAX_BLOCK_THREADS`),
    before anything is allocated: ``ValueError`` naming the argument (``grid=``, ``block=``) and the command line's
    option (``--grid``, ``--block``). ``grid`` and ``block``: 3-tuples of positive ints.

    >>> check_dims((1, 65536, 1), (32, 1, 1))
    Traceback (most recent call last):
    ...
    ValueError: launch: grid=(1, 65536, 1) (--grid 1,65536,1): y = 65536 exceeds CUDA's limit of 65535 (grid x, y, z \
at most 2147483647, 65535, 65535)
    """
    def refuse(what, dims, text):
        return ValueError(f"launch: {what}={tuple(dims)} (--{what} {','.join(map(str, dims))}): {text}")
    threads = block[0] * block[1] * block[2]
    if threads > MAX_BLOCK_THREADS:
        raise refuse("block", block, f"a block of {threads} threads exceeds {MAX_BLOCK_THREADS} (CUDA's limit; x and "
                                     f"y at most {MAX_BLOCK[0]}, z at most {MAX_BLOCK[2]})")
    for what, dims, limits in (("grid", grid, MAX_GRID), ("block", block, MAX_BLOCK)):
        for axis, d, limit in zip("xyz", dims, limits):
            if d > limit:
                raise refuse(what, dims, f"{axis} = {d} exceeds CUDA's limit of {limit} ({what} x, y, z at most "
                                         f"{', '.join(map(str, limits))})")


class CtaOrder:
    """The CTAs a launch runs, in order: item ``i`` is ``(linear index, (x, y, z))``, x fastest, computed when asked
    for (a grid may hold 2^31 x 65535 x 65535 CTAs, never listed). ``only``: one CTA's linear index.

    >>> order = CtaOrder((4, 3, 2))
    >>> len(order), order[5], CtaOrder((4, 3, 2), only=23)[0]
    (24, (5, (1, 1, 0)), (23, (3, 2, 1)))
    """

    def __init__(self, grid, only=None):
        self.grid = tuple(grid)
        self.only = only
        self._count = self.grid[0] * self.grid[1] * self.grid[2]

    def __len__(self):
        return 1 if self.only is not None else self._count

    def __getitem__(self, k):
        if not 0 <= k < len(self):
            raise IndexError(f"CTA {k} of {len(self)}")
        i = self.only if self.only is not None else int(k)
        gx, gy, _ = self.grid
        return i, (i % gx, (i // gx) % gy, i // (gx * gy))

    def __repr__(self):
        return f"CtaOrder({self.grid}{'' if self.only is None else f', only={self.only}'})"


def _pack_scalar(kernel, pname, ptype, value):
    """The little-endian bytes of ``value`` as PTX type ``ptype``."""
    size = type_bytes(ptype)
    if ptype.startswith("f"):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
            raise TypeError(f"{kernel}: parameter {pname} (.{ptype}) takes a number, got {type(value).__name__}")
        return struct.pack({2: "<e", 4: "<f", 8: "<d"}[size], float(value))
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{kernel}: parameter {pname} (.{ptype}) takes an int, got {type(value).__name__}")
    value = int(value)
    lo = -(1 << (8 * size - 1)) if ptype.startswith("s") or ptype.startswith("b") else 0
    if not lo <= value < (1 << (8 * size)):
        raise ValueError(f"{kernel}: parameter {pname} (.{ptype}) = {value} does not fit {8 * size} bits")
    return (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


class PtxModule:
    """A parsed PTX module; see :func:`warpsim.ptx.load`."""

    def __init__(self, module, text, contraction=None):
        self.module = module
        self.text = text
        self.filename = module.filename
        self.contraction = contraction if contraction is not None else NONE   # warpsim.ptx.contraction
        self._fused = None
        self._decoded = {}

    @property
    def kernels(self):
        """The names of the module's ``.entry`` functions, in order."""
        return [n for n, f in self.module.functions.items() if f.entry and not f.declared_only]

    def __repr__(self):
        return f"PtxModule({self.filename!r}, kernels={self.kernels})"

    def decoded(self, kernel):
        """The decoded arrays of ``kernel`` (decoded once, then cached)."""
        if kernel not in self.kernels:
            raise ValueError(f"{self.filename}: no kernel {kernel!r} (kernels: {', '.join(self.kernels) or 'none'})")
        if kernel not in self._decoded:
            if self._fused is None:
                self._fused = fused_instructions(self.module, self.contraction)
            self._decoded[kernel] = decode_kernel(self.module, kernel, self.text, self._fused)
        return self._decoded[kernel]

    def params(self, kernel):
        """``[(name, ptx_type or 'b8[N]')]`` of ``kernel``'s parameters."""
        return [(n, f"{t}[{size}]" if struct_ else t) for n, t, _, size, struct_ in self.decoded(kernel).params]

    # arguments ------------------------------------------------------------------------------------
    def _signature(self, kernel):
        return ", ".join(f"{n}: .{t}" for n, t in self.params(kernel)) or "no parameters"

    def _arguments(self, kernel, d, args):
        params = d.params
        if args is None:
            args = {}
        if isinstance(args, (list, tuple)):
            if len(args) != len(params):
                raise ValueError(f"{kernel}: {len(args)} arguments for {len(params)} parameters "
                                 f"({self._signature(kernel)})")
            args = {p[0]: a for p, a in zip(params, args)}
        if not isinstance(args, dict):
            raise TypeError(f"{kernel}: args must be a dict or a list, got {type(args).__name__}")
        names = [p[0] for p in params]
        unknown = [a for a in args if a not in names]
        missing = [n for n in names if n not in args]
        if unknown or missing:
            parts = ([f"unknown {', '.join(map(str, unknown))}"] if unknown else []) + \
                    ([f"missing {', '.join(missing)}"] if missing else [])
            raise ValueError(f"{kernel}: wrong arguments ({'; '.join(parts)}); parameters: "
                             f"{self._signature(kernel)}")
        return args

    def _param_bytes(self, kernel, d, args, machine, buffers):
        data = bytearray(max(d.param_bytes, 1))
        placed = {}                       # id(array) -> its global address: a TensorMap over a pointer argument's array
        # pointers first, so that a tensor map finds the buffer of an array passed for a pointer parameter too
        for name, ptype, offset, size, is_struct in sorted(d.params, key=lambda p: isinstance(args[p[0]], TensorMap)):
            value = args[name]
            if isinstance(value, TensorMap):
                if not is_struct or size < MAP_BYTES:
                    raise TypeError(f"{kernel}: parameter {name} takes a TensorMap only as a .b8[{MAP_BYTES}] "
                                    f"(CUtensorMap) parameter")
                address = placed.get(id(value.array))
                if address is None:
                    value.check(f"{kernel}: parameter {name}")
                    address = self._buffer(name, value.array, machine, buffers)
                raw = value.encode(address)
            elif is_struct:
                raw = self._struct(kernel, name, size, value, machine, buffers)
            elif isinstance(value, np.ndarray):
                if ptype not in ("u64", "b64", "s64"):
                    raise TypeError(f"{kernel}: parameter {name} is .{ptype}, not a pointer: it takes a "
                                    f"scalar, got an array")
                address = self._buffer(name, value, machine, buffers)
                placed[id(value)] = address
                raw = address.to_bytes(8, "little")
            else:
                raw = _pack_scalar(kernel, name, ptype, value)
            data[offset:offset + len(raw)] = raw
        return np.frombuffer(bytes(data), np.uint8).copy()

    def _buffer(self, name, array, machine, buffers):
        array = np.ascontiguousarray(array)
        base = machine.alloc_global(name, array.nbytes, redzone(array.nbytes))
        machine.write_global(name, array)
        buffers[name] = array
        return GLOBAL_BASE + base

    def _struct(self, kernel, name, size, fields, machine, buffers):
        if not isinstance(fields, (list, tuple)) or not all(isinstance(f, tuple) and len(f) == 2 for f in fields):
            raise TypeError(f"{kernel}: parameter {name} (.b8[{size}]) takes a list of (ptx_type, value) "
                            f"fields, got {type(fields).__name__}")
        arrays = sum(isinstance(v, np.ndarray) for _, v in fields)
        raw, k = bytearray(), 0
        for ptype, value in fields:
            if ptype not in ("u64", "b64", "s64", "u32", "s32", "b32", "u16", "s16", "b16", "u8", "s8", "b8",
                             "f32", "f64", "f16"):
                raise ValueError(f"{kernel}: parameter {name}: unknown field type {ptype!r}")
            fsize = type_bytes(ptype)
            raw.extend(bytes(round_up(len(raw), fsize) - len(raw)))
            if isinstance(value, np.ndarray):
                if fsize != 8:
                    raise TypeError(f"{kernel}: parameter {name}: an array field must be .u64, got .{ptype}")
                bname = name if arrays == 1 else f"{name}.{k}"
                k += 1
                raw.extend(self._buffer(bname, value, machine, buffers).to_bytes(8, "little"))
            else:
                raw.extend(_pack_scalar(kernel, name, ptype, value))
        if len(raw) > size:
            raise ValueError(f"{kernel}: parameter {name}: {len(raw)} bytes of fields exceed .b8[{size}]")
        return bytes(raw)

    # launch ---------------------------------------------------------------------------------------
    def launch(self, kernel, grid=(1, 1, 1), block=(128, 1, 1), args=None, smem=0, arch=DEFAULT_ARCH, cta=None,
               max_steps=DEFAULT_MAX_STEPS, quiet=False, keep_shared=False, shared_fill=0, profile=False,
               max_smem_bytes=None, warp_order=None, cluster=None, progress=None, jobs=1):
        """Run ``kernel`` over ``grid`` CTAs of ``block`` threads; return a :class:`LaunchResult`.

        ``smem``: bytes of dynamic shared memory; ``arch``: the mma arithmetic model ("sm80",
        "sm90"); ``cta``: run only this CTA (an int, linear x-fastest, or an (x, y, z) tuple);
        ``max_steps``: warp instructions allowed for the whole launch; ``quiet``: printf text is
        not echoed to stdout; ``keep_shared``: the result keeps each CTA's final shared memory
        (``LaunchResult.shared``); ``shared_fill``: the byte every CTA's shared memory holds when it
        starts (default 0; a GPU leaves what was there, so a second run with another fill tells
        which bytes a kernel wrote); ``profile``: the result's ``stats["host_cycles"]`` gives the host
        cycles spent per PTX instruction form (:meth:`PtxRun.host_cycles`); ``max_smem_bytes``: raises the
        shared memory a CTA may have above ``arch``'s (see :meth:`check_shared`); ``warp_order``: the order in
        which each CTA's warps take turns (:meth:`PtxRun.set_warp_order`; default ``0, 1, ...``); ``cluster``: the
        cluster dims (an int or a 3-tuple; default the kernel's ``.reqnctapercluster``, else clusters of one CTA),
        whose CTAs run together (:mod:`warpsim.ptx.families.cluster`; with ``cta``, that CTA's whole cluster runs);
        ``progress``: a callable given a line on how far a long launch is (:meth:`PtxRun.run`); ``jobs``: processes
        for a long launch's CTAs (:mod:`warpsim.ptx.jobs`; the result is the same whatever ``jobs``).
        Raises ``SimulatorFault`` for a fault of the kernel.
        """
        if (isinstance(shared_fill, bool) or not isinstance(shared_fill, (int, np.integer))
                or not 0 <= shared_fill < 256):
            raise ValueError(f"launch: shared_fill must be a byte value 0..255, got {shared_fill!r}")
        run = self.start(kernel, grid, block, args, smem, arch, cta, max_steps, quiet, profile, max_smem_bytes, cluster)
        if warp_order is not None:
            run.set_warp_order(warp_order)
        run.shared = [] if keep_shared else None
        run.shared_fill = int(shared_fill)
        run.csmem[...] = run.shared_fill                 # the first cluster began before the fill was known
        run.csmem[:, RANK_BYTE] = np.arange(run.csmem.shape[0])
        return run.run(progress, jobs)

    def start(self, kernel, grid=(1, 1, 1), block=(128, 1, 1), args=None, smem=0, arch=DEFAULT_ARCH, cta=None,
              max_steps=DEFAULT_MAX_STEPS, quiet=False, profile=False, max_smem_bytes=None, cluster=None):
        """A :class:`PtxRun` of ``kernel`` stopped before its first instruction (arguments as :meth:`launch`)."""
        d = self.decoded(kernel)
        grid, block = _dim3("grid", grid), _dim3("block", block)
        check_dims(grid, block)
        cluster, explicit = self.cluster_dims(kernel, grid, cluster)
        threads = block[0] * block[1] * block[2]
        if d.reqntid and tuple(d.reqntid) + (1,) * (3 - len(d.reqntid)) != block:
            raise ValueError(f"{kernel}: .reqntid {d.reqntid} requires block {d.reqntid}, got {block}")
        if d.maxntid and threads > int(np.prod(d.maxntid)):
            raise ValueError(f"{kernel}: .maxntid {d.maxntid} allows at most {int(np.prod(d.maxntid))} threads, "
                             f"got block {block}")
        if isinstance(smem, bool) or not isinstance(smem, (int, np.integer)) or smem < 0:
            raise ValueError(f"launch: smem must be a non-negative int (bytes of dynamic shared memory), got {smem!r}")
        self.check_shared(kernel, int(smem), arch, max_smem_bytes)
        if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
            raise ValueError(f"launch: max_steps must be a positive int, got {max_steps!r}")
        ctas = self._ctas(grid, cta)
        args = self._arguments(kernel, d, args)
        return PtxRun(self, kernel, d, grid, block, ctas, args, int(smem), arch, int(max_steps), quiet, profile,
                      cluster, explicit)

    def cluster_dims(self, kernel, grid, cluster=None):
        """``(dims, explicit)``: the launch's cluster dims (``cluster``: an int or up to three; default the kernel's
        ``.reqnctapercluster``, else ``(1, 1, 1)``) and whether the launch has clusters (``%is_explicit_cluster``).
        ``ValueError`` naming ``--cluster`` for dims that do not divide ``grid``, more than
        :data:`MAX_CLUSTER_CTAS` CTAs, or dims other than the kernel requires."""
        d = self.decoded(kernel)
        required = tuple(d.reqnctapercluster) + (1,) * (3 - len(d.reqnctapercluster)) if d.reqnctapercluster else None
        if cluster is None:
            dims = required or (1, 1, 1)
        else:
            dims = _dim3("--cluster", cluster)
            if required and dims != required:
                raise ValueError(f"{kernel}: .reqnctapercluster {required} requires --cluster "
                                 f"{','.join(map(str, required))}, got {','.join(map(str, dims))}")
        n = dims[0] * dims[1] * dims[2]
        if n > MAX_CLUSTER_CTAS:
            raise ValueError(f"{kernel}: --cluster {','.join(map(str, dims))} has {n} CTAs; at most "
                             f"{MAX_CLUSTER_CTAS} (the portable cluster size)")
        if any(g % c for g, c in zip(grid, dims)):
            raise ValueError(f"{kernel}: --cluster {','.join(map(str, dims))} does not divide the grid "
                             f"{','.join(map(str, grid))}")
        return dims, cluster is not None or bool(required) or d.explicitcluster

    def check_shared(self, kernel, smem, arch=DEFAULT_ARCH, max_smem_bytes=None):
        """Refuse, before anything is allocated, a launch whose shared memory per CTA (the kernel's static
        ``.shared`` and ``smem`` bytes of dynamic shared memory: ``--smem``) exceeds what ``arch`` lets a CTA opt
        in to (:data:`warpsim.machine.MAX_SMEM_BYTES`: 232448 bytes on sm90, 166912 on sm80; the 1 KB the system
        reserves is not counted), or ``max_smem_bytes`` where given. ``ValueError`` naming ``--smem``, the static
        bytes and the limit."""
        name = get_arch(arch).name
        static = self.decoded(kernel).shared_static - SHARED_BASE
        limit = MAX_SMEM_BYTES[name] if max_smem_bytes is None else int(max_smem_bytes)
        if static + smem > limit:
            raise ValueError(f"{kernel}: --smem {smem} bytes of dynamic shared memory + {static} of static .shared = "
                             f"{static + smem} bytes per CTA; {name} allows at most {limit} (--smem at most "
                             f"{max(limit - static, 0)})")

    def _ctas(self, grid, cta):
        """The :class:`CtaOrder` of the launch: every CTA of ``grid``, or only ``cta``."""
        every = CtaOrder(grid)
        if cta is None:
            return every
        if isinstance(cta, (int, np.integer)) and not isinstance(cta, bool):
            if not 0 <= cta < len(every):
                raise ValueError(f"launch: cta {cta} is outside the grid {grid} ({len(every)} CTAs)")
            return CtaOrder(grid, only=int(cta))
        coords = _dim3("cta", tuple(c + 1 for c in cta)) if isinstance(cta, (tuple, list)) else None
        if coords is None or any(c > g for c, g in zip(coords, grid)):
            raise ValueError(f"launch: cta {cta!r} is outside the grid {grid}")
        x, y, z = (c - 1 for c in coords)
        return CtaOrder(grid, only=x + grid[0] * (y + grid[1] * z))

    def _printed(self, coords, block, state, m, const, quiet):
        lines = []
        for k in range(int(state.nprint[0])):
            t, start, n, nargs = (int(v) for v in state.prrec[k])
            fmt = bytes(state.prbuf[start:start + n]).decode("utf-8", "replace")
            args = bytes(state.prbuf[start + n:start + n + nargs])
            text = format_printf(fmt, args, lambda addr: _c_string(addr, m, const))
            tid = (t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1]))
            lines.append((tuple(coords), tid, text))
            if not quiet:
                sys.stdout.write(text)
        state.nprint[:] = 0
        return lines

    def _fault_message(self, kernel, d, fault, coords, block, m, state):
        code, t, value, extra, pc, space, warp = (int(x) for x in fault[:7])
        where = ""
        op_name = "kernel"
        if 0 <= pc < d.code.shape[0]:
            w = d.where[int(d.code[pc, LOC])]
            op_name = w.text.rstrip(";")
            where = f" ({w.source + ', ' if w.source else ''}{self.filename}:{w.ptx_line})"
        tid = (t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1]))
        who = f"CTA {tuple(coords)} thread {tid} (warp {t // 32} lane {t % 32})"
        cta = f"CTA {tuple(coords)}"
        if code == FAULT_STEP_LIMIT:
            return (f"{kernel}: stopped after {value} warp instructions (the step limit, max_steps) in {cta}, "
                    f"warp {t // 32} at {op_name}{where}; raise max_steps if the kernel is meant to run longer")
        if code == FAULT_MBARRIER_DEADLOCK:
            b = state.mbar[value] if value >= 0 else None
            what = ("an mbarrier" if b is None else
                    f"the mbarrier at shared {int(b[ADDR]):#x}, whose phase {int(b[PHASE])} waits for "
                    f"{int(b[PENDING])} of {int(b[EXPECTED])} arrivals and {int(b[TX])} transaction bytes")
            return (f"{kernel}: deadlock in {cta}: warp {t // 32} lane {t % 32} waits at {op_name}{where} for {what}, "
                    f"and no thread that could arrive can run")
        if code == FAULT_DEADLOCK:
            return (f"{kernel}: deadlock in {cta}: {value} of {extra} threads wait at barriers that can never "
                    f"complete (a bar.sync not reached by every thread, or a wrong thread count)")
        head = f"{op_name}{where}: {who}"
        sname = SPACE_NAMES[space] if 0 < space < len(SPACE_NAMES) else "generic"
        if code == FAULT_OUT_OF_RANGE:
            objects = _objects(space, d, m)
            if objects is not None:
                return f"{head}: {_outside_objects(space, value, extra, objects)}"
            return f"{head}: address {value:#x} + {extra} bytes is outside {sname} memory{_regions(space, m, state)}"
        if code == FAULT_MISALIGNED:
            return f"{head}: address {value:#x} is not {extra}-byte aligned"
        if code == FAULT_RACE:
            return (f"{head}: address {value:#x} ({extra} bytes) is the destination of a cp.async not yet "
                    f"waited for (cp.async.wait_group/wait_all): a race")
        if code == FAULT_DIVERGENT:
            return (f"{op_name}{where}: {cta} warp {warp}: lanes {_lanes(value)} execute it but lanes "
                    f"{_lanes(extra)} must arrive together (the instruction needs a converged warp)")
        if code == FAULT_SHFL_SOURCE:
            return f"{head}: reads lane {value}, which does not execute this shfl.sync"
        if code == FAULT_TRAP:
            return f"{head}: trap"
        if code == FAULT_CALL_DEPTH:
            return f"{head}: calls nested deeper than {value}"
        if code == FAULT_PENDING:
            return f"{head}: more than {MAX_PENDING} cp.async outstanding in one thread"
        if code == FAULT_READ_ONLY:
            return f"{head}: store to read-only memory at {value:#x}"
        if code == FAULT_SPACE:
            return f"{head}: address {value:#x} is not in {SPACE_NAMES[extra]} memory"
        if code == FAULT_BAD_REGISTER or code == FAULT_BAD_OPERAND:
            return f"{head}: bad operand {value} (limit {extra})"
        if code == FAULT_BAD_DESCRIPTOR:
            return f"{head}: {descriptor_problem(value, extra)}"
        if code == FAULT_TENSOR_MAP:
            return (f"{head}: the tensor map at {value:#x} is not one warpsim encoded (pass a warpsim.TensorMap for "
                    f"the CUtensorMap parameter)" + (f", or not of rank {extra}" if extra else ""))
        if code == FAULT_MBARRIER:
            why = {1: "is not in shared memory", 2: "holds no mbarrier (mbarrier.init it first)",
                   3: "cannot hold one more mbarrier: too many in one CTA"}.get(extra, "is not an mbarrier")
            return f"{head}: address {value:#x} {why}"
        if code == FAULT_WGMMA_SMEM:
            return (f"{head}: writes shared {value:#x} ({extra} bytes), which a wgmma.mma_async not yet waited for "
                    f"reads (the tensor cores may read it after the write: wgmma.wait_group first)")
        if code == FAULT_WGMMA_PENDING:
            names = [n for n, (slot, words, _) in d.reg_names.items() if slot <= value < slot + words]
            return (f"{head}: touches {names[0] if names else f'register slot {value}'}, which a wgmma.mma_async owns "
                    f"until a wgmma.wait_group covers it (the GPU leaves it undefined until then)")
        return f"{head}: fault code {code} (value {value}, extra {extra})"


class PtxRun:
    """A launch that advances on request, for stepping tools (:meth:`PtxModule.start`).

    ``step(n)`` executes up to ``n`` more warp instructions (one CTA after another, as
    :meth:`PtxModule.launch` does; the same schedule, so any split into steps gives the same
    result), ``run()`` goes to the end and returns the :class:`LaunchResult`. Between steps,
    ``machine`` holds the registers and memories, ``pc`` and ``status`` each thread's program
    counter and state (``codes.RUNNING``, ``EXITED``, ``WAITING``, ``ABSENT``) in the CTA ``cta``,
    and ``where(thread)`` the instruction a thread executes next.
    """

    def __init__(self, module, kernel, d, grid, block, ctas, args, smem, arch, max_steps, quiet, profile=False,
                 cluster=(1, 1, 1), explicit=False):
        self.module, self.kernel, self.decoded = module, kernel, d
        self.block, self._ctas, self._max_steps, self._quiet = block, ctas, max_steps, quiet
        threads = block[0] * block[1] * block[2]
        self._threads = threads
        warps = -(-threads // 32)
        self.warp_order = np.arange(warps, dtype=np.int64)     # the warps' turns in each CTA (set_warp_order)
        self.cluster = tuple(cluster)
        ranks = cluster[0] * cluster[1] * cluster[2]
        self._clusters = _ClusterOrder(grid, self.cluster, ctas)
        m = Machine(warps=warps, regs_per_thread=d.regs_per_thread, smem_bytes=d.shared_static + smem)
        for name, off, nbytes, init in d.globals_:
            base = m.alloc_global(f".global {name}", nbytes, redzone(nbytes))
            if base != off:
                raise RuntimeError(f"launch: .global {name} at {base:#x}, decoded at {off:#x}")
            if init:
                m.gmem[base:base + len(init)] = np.frombuffer(init, np.uint8)
        self.machine = m
        self._buffers = {}
        self._kparam = module._param_bytes(kernel, d, args, m, self._buffers)
        self._ends = object_ends(m.gmem.size, list(m.buffers.values()), d.const.size,
                                 [(off, n) for _, off, n in d.consts], self._kparam.size,
                                 [(off, n) for _, _, off, n, _ in d.params])
        self._arch = np.array([mma_params("m16n8k16", "f16", cd, arch, op=kernel)[3:] for cd in ("f32", "f16")],
                              np.int64)
        self._mufu = d.derived("mufu tables", kernel_mufu_tables)
        # the cluster's CTAs: each its registers, state and context; shared memories and mbarrier tables side by side
        self.csmem = np.zeros((ranks, m.smem.size), np.uint8)
        self._cmbar = np.zeros((ranks,) + new_mbarriers().shape, np.int64)
        self._rank_regs = [m.regs] + [np.zeros_like(m.regs) for _ in range(ranks - 1)]
        self._states = [_State(warps * 32, d, m, self._cmbar[r]) for r in range(ranks)]
        ctx = np.zeros(CTX_SIZE, np.int64)
        ctx[0:3], ctx[6:9], ctx[9], ctx[11] = block, grid, threads, smem
        ctx[12], ctx[14], ctx[15] = m.smem.size - SHARED_BASE, max_steps, _SM_COUNT    # static + dynamic
        ctx[CTX_CLUSTER:CTX_CLUSTER + 3], ctx[CTX_EXPLICIT], ctx[CTX_NRANKS] = cluster, explicit, ranks
        # None: the interpreter compiled without sm_90's asynchronous and cluster families (run_cta's ``hopper``)
        self._hopper = np.zeros(0, np.int64) if ranks > 1 or d.derived("hopper", lambda code: uses_hopper(code, 1)) \
            else None
        self._ctxs = [ctx.copy() for _ in range(ranks)]
        self._rank = 0
        self._done = [False] * ranks
        self._stalled = 0
        self._select(0)
        self._counts = np.zeros(_OP_CODES, np.int64)                        # warp instructions per Op code
        self._cycles = np.zeros((d.code.shape[0] if profile else 0, 2), np.int64)  # per row: cycles, executions
        self.shadow, self.sstate, self.finds = _no_shadow()
        self.last_fault = None      # the core's fault array (int64[8]) of the fault raised, if any
        self.printf = []
        self.shared_fill = 0        # the byte each CTA's shared memory starts with
        self.shared = None          # a list: each finished CTA's final shared window is appended to it
        self.finished = False
        self._next = 0
        self._stop_at = None        # a CTA group index where step() stops (the fan-out's boundaries)
        self._fan = None
        self._begin()

    def _select(self, rank):
        """Make the cluster's CTA of rank ``rank`` the current one (``machine.regs``/``smem``, ``pc``, ``status``,
        ...); the step count carries over."""
        steps = self._ctx[13] if hasattr(self, "_ctx") else 0
        self._rank = rank
        self.machine.regs = self._rank_regs[rank]
        self.machine.smem = self.csmem[rank]
        self._state = self._states[rank]
        self._ctx = self._ctxs[rank]
        self._ctx[13] = steps
        self.cta = self._cta_of[rank] if hasattr(self, "_cta_of") else None

    def _begin(self):
        group = self._clusters[self._next]
        self._cta_of = [tuple(coords) for _, coords in group]
        for rank, (index, coords) in enumerate(group):
            self._select(rank)
            self._state.reset(self._threads, self.machine)
            self.machine.smem[...] = self.shared_fill
            self.machine.smem[RANK_BYTE] = rank              # the CTA's rank, in its reserved bytes (shared_offset)
            self._ctx[3:6] = coords
            self._ctx[10] = index % _SM_COUNT
            self._ctx[CTX_RANK] = rank
        self._done = [False] * len(group)
        self._stalled = 0
        self._select(0)
        if self.sstate[S_ON] == ON_SANITIZE:
            reset_shared(self.shadow, self.sstate)
            self.sstate[S_CTA] = self._next

    def enable_shadow(self, global_limit=GLOBAL_SHADOW_BYTES):
        """Run with the sanitizer's shadow state (:mod:`warpsim.ptx.shadow`; :mod:`warpsim.sanitize` reads it): every
        shared access is checked, and global ones while global memory holds at most ``global_limit`` bytes. Only
        before the first step."""
        if self.steps or self._next:
            raise ValueError("enable_shadow: the launch has started")
        if len(self._states) > 1:
            raise ValueError("enable_shadow: the sanitizer does not model clusters of several CTAs yet")
        m = self.machine
        self.shadow, self.sstate, self.finds = new_shadow(m.smem.size, m.gmem.size, m.regs.shape[0], self.decoded.code.shape[0],
                                                            global_limit)
        self._begin()

    @property
    def steps(self):
        """Warp instructions executed so far."""
        return int(self._ctx[13])

    @property
    def pc(self):
        """Each thread's program counter (a row of ``decoded.code``) in the current CTA."""
        return self._state.pc

    @property
    def mbarriers(self):
        """The current CTA's mbarrier objects: ``int64[MAX_MBARRIERS, 6]`` (:mod:`warpsim.ptx.families.mbarrier`)."""
        return self._state.mbar

    def mbarrier_waiters(self):
        """``{mbarrier row: [threads]}``: the current CTA's threads waiting at a ``try_wait``, by the row of
        :attr:`mbarriers` they wait on."""
        from warpsim.ptx.families.mbarrier import MBARRIER_WAIT, mbarrier_row
        st, m, d = self._state, self.machine, self.decoded
        out = {}
        for t in np.flatnonzero((st.status == WAITING) & (st.bar_id == MBARRIER_WAIT)):
            row = mbarrier_row(st.pc[t], t, d.code, d.opnd, m.regs[t // 32, t % 32], m.smem, m.gmem, self._ends,
                               st.local, d.const, self._kparam, st.fparam, st.mbar)
            out.setdefault(int(row), []).append(int(t))
        return out

    @property
    def wgmma_in_flight(self):
        """Per warp, the register slots a ``wgmma.mma_async`` not yet waited for owns (:mod:`warpsim.ptx.families.wgmma`)."""
        return self._state.wgpend[:, :self.machine.regs.shape[2] + 2]

    def bulk_transfers(self):
        """The current CTA's bulk copies (TMA) in the order issued, at most the last ``BULK_LOG``: dicts of ``step``
        (the warp instruction, counted from the launch's start), ``row`` (of ``decoded.code``), ``thread``, ``form``
        (:data:`~warpsim.ptx.families.bulk_copy.FORM_NAMES`), and the operands: ``size``, ``dst``, ``src`` (generic or
        window addresses as the thread gave them), or for a tensor box ``shared``, ``map``, ``mbarrier`` (loads) and
        ``coords``."""
        log = self._state.blog
        n, total = log.shape[0] - 1, int(log[0, 0])
        out = []
        for i in range(max(0, total - n), total):
            row = log[1 + i % n]
            form = int(row[BULK_FORM])
            entry = {"step": int(row[BULK_STEP]), "row": int(row[BULK_ROW]), "thread": int(row[BULK_THREAD]),
                     "form": FORM_NAMES[form]}
            if form in (TENSOR_LOAD, TENSOR_STORE, REDUCE_TENSOR):
                rank = min(int(self.decoded.code[entry["row"], M1]), len(row) - BULK_COORDS)
                entry.update(shared=int(row[BULK_A]), map=int(row[BULK_B]),
                             coords=tuple(int(c) for c in row[BULK_COORDS:BULK_COORDS + rank]))
                if form == TENSOR_LOAD:
                    entry["mbarrier"] = int(row[BULK_C])
            else:
                entry.update(size=int(row[BULK_A]), dst=int(row[BULK_B]), src=int(row[BULK_C]))
            out.append(entry)
        return out

    @property
    def register_budgets(self):
        """Per warp of the current CTA, its register budget as its last ``setmaxnreg`` set it: +N after ``.inc``, -N
        after ``.dec``, 0 before any (:func:`warpsim.ptx.families.wgmma.new_pending`, column ``BUDGET``)."""
        return self._state.wgpend[:, BUDGET].copy()

    @property
    def status(self):
        return self._state.status

    def where(self, thread):
        """The :class:`~warpsim.ptx.decode.Where` of thread ``thread``'s next instruction, or of the barrier
        it waits at; None once it exited."""
        status = self._state.status[thread]
        if self.finished or (status != RUNNING and status != WAITING):
            return None
        pc = self._state.pc[thread] - (status == WAITING)
        return self.decoded.where[int(self.decoded.code[pc, LOC])]

    def set_warp_order(self, order):
        """Let the warps of every CTA take turns in ``order`` (a permutation of ``0 .. warps-1``) instead of ``0, 1,
        ...``: another legal schedule (a warp runs until it waits at a barrier or exits, then the next in order
        takes its turn). Before the first step; ``ValueError`` for anything but a permutation."""
        order = np.asarray(order, dtype=np.int64).reshape(-1)
        warps = self.warp_order.size
        if self.steps or sorted(order.tolist()) != list(range(warps)):
            raise ValueError(f"set_warp_order: {order.tolist()} is not a permutation of the {warps} warps, or the "
                             f"run has begun")
        self.warp_order = order

    def step(self, n=1):
        """Execute up to ``n`` more warp instructions; True while the launch has more to run.

        Raises ``SimulatorFault`` for a fault of the kernel (and at ``max_steps``).
        """
        if self.finished:
            return False
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"step: n must be a positive int, got {n!r}")
        d, m = self.decoded, self.machine
        target = min(self.steps + int(n), self._max_steps)
        while not self.finished and (self.steps < target or target == self._max_steps):   # at the limit: its fault
            state, ctx = self._state, self._ctx
            ctx[14] = target
            before = int(ctx[13])
            fault = np.zeros(8, np.int64)
            args = (d.code, d.opnd, d.copies, m.regs, state.pc, state.status, state.bar_id, state.bars, state.stack,
                    state.depth, state.ccf, m.smem, m.gmem, self._ends, state.local, d.const, self._kparam, state.fparam,
                    state.pend, state.npend, state.groups, state.pend_map, ctx, state.clocks, self._counts, self._arch,
                    state.wgpend, state.mbar, state.prbuf, state.prrec, state.nprint, fault, self._mufu, self._cycles,
                    self.shadow, self.sstate, self.finds, self.warp_order, self.csmem, self._cmbar, state.cl,
                    state.blog, self._hopper)
            if (self._hopper is None) not in _FIRST_CALLS:      # a first call of this variant in this process: on
                _FIRST_CALLS.add(self._hopper is None)          # a cold cache, its families compile on every core
                compile_families(run_cta, args)
            done = run_cta(*args)
            self.printf.extend(self.module._printed(self.cta, self.block, state, m, d.const, self._quiet))
            if done:
                if self.shared is not None:
                    self.shared.append((self.cta, m.smem.copy()))
                self._done[self._rank] = True
                if not all(self._done):
                    self._next_rank(released=False, ran=True)
                    continue
                self._next += 1
                self.finished = self._next == len(self._clusters)
                if not self.finished:
                    self._begin()
                if self._next == self._stop_at:                # a boundary run() asked for (warpsim.ptx.jobs)
                    break
            elif int(fault[0]) == 0 and ctx[CTX_YIELD]:           # blocked: the cluster's other CTAs, its barrier
                released, arrived, alive = cluster_release([(s.status, s.bar_id, s.cl) for s in self._states])
                self._next_rank(released, int(ctx[13]) > before, arrived, alive)
            elif int(fault[0]) == FAULT_STEP_LIMIT and target < self._max_steps:
                break                                          # paused: the step budget is spent
            elif int(fault[0]) == FAULT_TRAP and d.code[int(fault[4]), M0] == TRAP_ASSERT:
                self.last_fault = fault.copy()
                raise DeviceAssertion(self._assertion(fault))
            else:
                self.last_fault = fault.copy()
                raise SimulatorFault(self.module._fault_message(self.kernel, d, fault, self.cta, self.block, m, state))
        return not self.finished

    def checkpoint(self):
        """Everything a later :meth:`restore` needs to put the launch back here: every CTA of the current cluster
        (state, registers, shared memory, context), global memory, counts, printf lines, the schedule's place."""
        states = [{k: v.copy() for k, v in vars(st).items() if k not in ("prbuf", "prrec")} for st in self._states]
        return (states, [r.copy() for r in self._rank_regs], self.csmem.copy(), self.machine.gmem.copy(),
                [c.copy() for c in self._ctxs], self._counts.copy(), len(self.printf), self._next, self._rank,
                list(self._done), self._stalled, getattr(self, "_cta_of", None), self.finished)

    def restore(self, saved):
        """Put the launch back where :meth:`checkpoint` was taken (its arrays written in place)."""
        (states, regs, csmem, gmem, ctxs, counts, nprinted, nxt, rank, done, stalled, cta_of, finished) = saved
        for st, arrays in zip(self._states, states):
            for k, v in arrays.items():
                getattr(st, k)[...] = v
        for mine, r in zip(self._rank_regs, regs):
            mine[...] = r
        self.csmem[...], self.machine.gmem[...], self._counts[...] = csmem, gmem, counts
        for mine, c in zip(self._ctxs, ctxs):
            mine[...] = c
        del self.printf[nprinted:]
        self._next, self._done, self._stalled, self._cta_of, self.finished = nxt, list(done), stalled, cta_of, finished
        self._select(rank)
        self._ctx[...] = ctxs[rank]

    def _next_rank(self, released, ran, arrived=0, alive=0):
        """After the current CTA finished or yielded: the next unfinished CTA of the cluster takes its turn. When every
        one has yielded without a step or a release since (no CTA of the cluster can go on), a deadlock:
        ``SimulatorFault`` naming the cluster barrier, or the first blocked CTA's own barrier."""
        self._stalled = 0 if released or ran else self._stalled + 1
        live = [r for r, done in enumerate(self._done) if not done]
        if self._stalled >= len(live) + 1:
            self._deadlock(live, arrived, alive)
        after = [r for r in live if r > self._rank] + [r for r in live if r <= self._rank]
        self._select(after[0])

    def _deadlock(self, live, arrived, alive):
        d = self.decoded
        for r in live:
            st = self._states[r]
            waiting = np.flatnonzero((st.status == WAITING) & (st.bar_id == CLUSTER_WAIT))
            if waiting.size:
                self._select(r)
                t = int(waiting[0])
                where = d.where[int(d.code[int(st.pc[t]), LOC])]
                raise SimulatorFault(
                    f"{self.kernel}: deadlock in cluster {tuple(c // k for c, k in zip(self.cta, self.cluster))} "
                    f"(CTAs {', '.join(map(str, self._cta_of))}): CTA {self.cta} warp {t // 32} lane {t % 32} waits "
                    f"at barrier.cluster.wait ({where.source + ', ' if where.source else ''}{self.module.filename}:"
                    f"{where.ptx_line}) and {arrived} of the cluster's {alive} "
                    f"threads have arrived; the others wait elsewhere or can never arrive")
        # an mbarrier or a CTA barrier: the first blocked CTA reports its own, as a CTA alone would
        self._select(live[0])
        self._ctx[CTX_NRANKS] = 1
        self.step(1)

    def _assertion(self, fault):
        """The line CUDA's device ``assert`` prints for the thread of ``fault`` that called ``__assertfail``
        (``FILE:LINE: FUNCTION: block: [x,y,z], thread: [x,y,z] Assertion `EXPR` failed.``), its strings read from
        the call's arguments (generic addresses of C strings)."""
        d, t, pc = self.decoded, int(fault[1]), int(fault[4])
        message, file, line, function = (int(d.opnd[d.code[pc, O0 + k], IMM]) for k in range(4))
        param = self._state.fparam[t]
        text = [_c_string(int.from_bytes(param[off:off + 8].tobytes(), "little"), self.machine, d.const)
                for off in (message, file, function)]
        line = int.from_bytes(param[line:line + 4].tobytes(), "little", signed=True)
        b = self.block
        tid = (t % b[0], (t // b[0]) % b[1], t // (b[0] * b[1]))
        return (f"{text[1]}:{line}: {text[2]}: block: [{','.join(map(str, self.cta))}], thread: "
                f"[{','.join(map(str, tid))}] Assertion `{text[0]}` failed.")

    def run(self, progress=None, jobs=1):
        """Run to the end; the :class:`LaunchResult`.

        The compiled interpreter does not look at signals, so it runs in slices of about :data:`SLICE_SECONDS`
        (the same schedule as one call: see :meth:`step`), and Ctrl-C's ``KeyboardInterrupt`` comes between two.
        ``progress``: called with one line (:meth:`progress_line`) once the launch has run :data:`PROGRESS_AFTER`
        seconds, then every :data:`PROGRESS_EVERY`. ``jobs``: processes for the CTAs left once the launch has run
        :data:`warpsim.ptx.jobs.FAN_OUT_AFTER` seconds (:mod:`warpsim.ptx.jobs`: the same result, bit for bit)."""
        n = _FIRST_SLICE
        start = time.perf_counter()
        due = start + PROGRESS_AFTER
        spread = fan.check_jobs(jobs, "jobs") > 1 and not self.steps and fan.why_sequential(self) is None

        def tell():
            nonlocal due
            now = time.perf_counter()
            if progress is not None and now >= due:
                progress(self.progress_line(now - start))
                due = now + PROGRESS_EVERY

        try:
            while True:
                began = time.perf_counter()
                if not self.step(n):
                    break
                if self._next == self._stop_at:    # the boundary the fan-out waits for
                    if self._fan.at_boundary(tell):
                        break
                now = time.perf_counter()
                took = max(now - began, 1e-6)
                n = max(1024, min(4 * n, int(n * SLICE_SECONDS / took)))
                if spread and now - start >= fan.FAN_OUT_AFTER:
                    spread = False
                    self._fan = fan.Fan(self, jobs)
                tell()
        finally:
            if self._fan is not None:
                self._fan.close()
        return self.result()

    def progress_line(self, elapsed):
        """How far the launch is: CTAs finished of the launch's, warp instructions so far and per second.

        ``"12 of 128 CTAs done, 3,400,120 warp instructions, 0.91 M/s, 3.7 s"``"""
        per = int(np.prod(self.cluster))
        spans = self._fan if self._fan is not None and self._fan.done is not None else None
        groups, steps = spans.so_far() if spans else (self._next, self.steps)
        jobs = f" ({spans.jobs} processes)" if spans else ""
        rate = steps / max(elapsed, 1e-9) / 1e6
        return (f"{groups * per} of {len(self._clusters) * per} CTAs done{jobs}, {steps:,} warp instructions, "
                f"{rate:.2f} M/s, {elapsed:.1f} s")

    def result(self):
        """The :class:`LaunchResult` as things stand (buffers, printf lines and statistics so far)."""
        m = self.machine
        out = {name: m.read_global(name, np.uint8).view(a.dtype).reshape(a.shape) for name, a in self._buffers.items()}
        by_op = {Op(k).name.lower(): int(self._counts[k]) for k in np.flatnonzero(self._counts).tolist()
                 if k in Op._value2member_map_}
        stats = {"warp_instructions": self.steps, "by_opcode": by_op, "ctas": len(self._ctas)}
        if self._cycles.shape[0]:
            stats["host_cycles"] = self.host_cycles()
        return LaunchResult(out, list(self.printf), stats, m, None if self.shared is None else list(self.shared))


    def host_cycles(self):
        """``{form: (warp instructions, host cycles)}`` so far per PTX instruction form (its opcode with
        modifiers and types, e.g. ``"fma.rn.f32"``, a guard left out), most cycles first, for a run started
        with ``profile=True`` (else empty): each warp instruction's cycles run from its scheduling to the
        next one's (:func:`warpsim.ptx.interp.run_cta`). Cycles are the host's counter (x86-64: the TSC),
        so their ratios matter, not their unit."""
        by_form = {}
        for row in np.flatnonzero(self._cycles[:, 1]):
            text = self.decoded.where[int(self.decoded.code[row, LOC])].text.split()
            form = (text[1] if text[0].startswith("@") and len(text) > 1 else text[0]).rstrip(";")
            n, c = by_form.get(form, (0, 0))
            by_form[form] = (n + int(self._cycles[row, 1]), c + int(self._cycles[row, 0]))
        return dict(sorted(by_form.items(), key=lambda kv: -kv[1][1]))


def _no_shadow():
    """The sanitizer's arrays of a plain run: off, empty (the same types as :func:`~warpsim.ptx.shadow.new_shadow`'s,
    so one compiled interpreter serves both)."""
    return np.zeros((NFIELDS, 0), np.int32), np.zeros(NSCALARS, np.int64), np.zeros((1, NFC), np.int64)


def _lanes(bits):
    lanes = [i for i in range(32) if (bits >> i) & 1]
    return ",".join(map(str, lanes)) if len(lanes) < 32 else "0-31"


def _objects(space, d, m):
    """``(what, [(name, start, end)])`` of the objects an access of ``space`` must lie inside, by start
    (global buffers at their generic addresses, ``.const`` variables and parameters at their offsets)."""
    if space == SP_GLOBAL:
        found = [(n, GLOBAL_BASE + b, GLOBAL_BASE + b + s) for n, (b, s) in m.buffers.items()]
        return "global buffer", sorted(found, key=lambda o: o[1])
    if space == SP_CONST:
        return ".const variable", [(n, off, off + s) for n, off, s in d.consts]
    if space == SP_KPARAM:
        return "kernel parameter", [(n, KPARAM_BASE + off, KPARAM_BASE + off + s) for n, _, off, s, _ in d.params]
    return None


def _outside_objects(space, addr, size, objects):
    """The fault text of an access of ``size`` bytes at ``addr`` that is not inside one object, naming
    the nearest object and where the access lies from it:

    >>> _outside_objects(1, 0x100000200, 4, ("global buffer", [("x", 0x100000000, 0x100000200)]))
    'global address 0x100000200 + 4 bytes is not inside one global buffer: 0x100000200 is 0 bytes past \
the end of buffer x [0x100000000, 0x100000200)'
    """
    what, found = objects
    kind = what.split()[-1]
    sname = SPACE_NAMES[space]
    off = addr - (addr >> 40 << 40) if space != SP_GLOBAL and addr >= SHARED_WINDOW else addr
    text = f"{sname} address {addr:#x} + {size} bytes is not inside one {what}"
    best = None
    for name, start, end in found:
        if off >= end:
            gap, where = off - end, f"{off:#x} is {off - end} bytes past the end of"
        elif off + size <= start:
            gap, where = start - off - size, f"{off:#x} is {start - off} bytes before the start of"
        elif off < start:
            gap, where = 0, f"{off:#x} + {size} bytes starts {start - off} bytes before the start of"
        else:
            gap, where = 0, f"{off:#x} + {size} bytes runs {off + size - end} bytes past the end of"
        if best is None or gap < best[0]:
            best = (gap, f"{where} {kind} {name} [{start:#x}, {end:#x})")
    return f"{text}: {best[1]}" if best else f"{text}: the kernel has no {what}s"


def _regions(space, m, state):
    if space == 2:
        return f" [{SHARED_BASE:#x}, {m.smem.size:#x})"
    if space == 3:
        return f" [0, {state.local.shape[1]:#x}) per thread"
    return ""


def _c_string(addr, m, const, limit=4096):
    """The NUL-terminated string (at most ``limit`` bytes) at generic ``addr`` in global memory or in the ``.const``
    bytes ``const``, where compilers put string literals (printf's %s, __assertfail's message, file and function)."""
    space, off = from_generic(addr)
    mem = m.gmem if space == SP_GLOBAL else const if space == SP_CONST else None
    off = off - GLOBAL_BASE if space == SP_GLOBAL else off
    if mem is None or not 0 <= off < mem.size:
        return f"<bad string address {addr:#x}>"
    nul = np.flatnonzero(mem[off:off + limit] == 0)
    end = off + (int(nul[0]) if nul.size else min(limit, mem.size - off))
    return bytes(mem[off:end]).decode("utf-8", "replace")


class _ClusterOrder:
    """The launch's clusters in order (x fastest), each the list of its CTAs' ``(index, (x, y, z))`` by rank (x
    fastest within the cluster); a cluster of one CTA per CTA of ``ctas`` (a :class:`CtaOrder`) when ``dims`` is
    ``(1, 1, 1)``, and with ``ctas.only`` the one cluster holding that CTA."""

    def __init__(self, grid, dims, ctas):
        self.grid, self.dims, self.ctas = tuple(grid), tuple(dims), ctas
        self.per = [g // c for g, c in zip(self.grid, self.dims)]

    def __len__(self):
        n = self.dims[0] * self.dims[1] * self.dims[2]
        return len(self.ctas) if n == 1 else (1 if self.ctas.only is not None else len(self.ctas) // n)

    def __getitem__(self, k):
        if self.dims == (1, 1, 1):
            return [self.ctas[k]]
        (cx, cy, cz), (gx, gy, _) = self.dims, self.grid
        if self.ctas.only is not None:
            _, (x, y, z) = self.ctas[0]
            base = (x // cx, y // cy, z // cz)
        else:
            base = (k % self.per[0], (k // self.per[0]) % self.per[1], k // (self.per[0] * self.per[1]))
        out = []
        for r in range(cx * cy * cz):
            x, y, z = base[0] * cx + r % cx, base[1] * cy + (r // cx) % cy, base[2] * cz + r // (cx * cy)
            out.append((x + gx * (y + gy * z), (x, y, z)))
        return out


class _State:
    """Per-thread interpreter state of one CTA (program counters, call stacks, cp.async queues); ``mbar``: the CTA's
    row of the cluster's mbarrier tables."""

    def __init__(self, T, d, m, mbar):
        self.pc = np.zeros(T, np.int64)
        self.status = np.zeros(T, np.int64)
        self.bar_id = np.zeros(T, np.int64)
        self.stack = np.zeros((T, _CALL_DEPTH), np.int64)
        self.depth = np.zeros(T, np.int64)
        self.ccf = np.zeros(T, np.int64)
        self.local = np.zeros((T, d.local_bytes), np.uint8)
        self.fparam = np.zeros((T, max(d.fparam_bytes, 8)), np.uint8)
        self.pend = np.zeros((T, MAX_PENDING, 6), np.int64)     # per copy: see families.async_copy
        self.npend = np.zeros(T, np.int64)
        self.groups = np.zeros(T, np.int64)
        self.pend_map = np.zeros(m.smem.size, np.int32)
        self.bars = np.zeros((2, 16), np.int64)     # per barrier: threads arrived, threads expected (0: all)
        self.wgpend = new_pending(T // 32, m.regs.shape[2])    # the registers of wgmma.mma_async in flight
        self.mbar = mbar                                       # the CTA's mbarrier objects
        self.cl = np.zeros(T, np.int64)                        # arrived at barrier.cluster, not yet released
        self.blog = np.zeros((BULK_LOG + 1, BULK_FIELDS), np.int64)   # the last bulk copies (TMA) issued
        self.clocks = np.zeros(T // 32, np.int64)
        self.prbuf = np.zeros(1 << 20, np.uint8)
        self.prrec = np.zeros((1 << 14, 4), np.int64)
        self.nprint = np.zeros(2, np.int64)

    def reset(self, threads, m):
        for a in (self.pc, self.bar_id, self.bars, self.depth, self.ccf, self.local, self.fparam, self.npend,
                  self.groups, self.pend_map, self.clocks, self.wgpend, self.mbar, self.cl, self.blog):
            a[...] = 0
        self.status[:] = RUNNING
        self.status[threads:] = ABSENT
        m.regs[...] = 0
        m.smem[...] = 0
