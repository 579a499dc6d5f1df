"""The state of one CTA: registers, shared memory and global memory, and single-instruction steps.

Model: every instruction executes for all 32 lanes of one warp at once, as one step; warps of a CTA
interleave only at instruction boundaries; ``bar.sync`` orders them (no warp passes a barrier
before every warp has reached it). Thread id = warp * 32 + lane.

State, all plain numpy arrays that njit code can take directly:

- ``regs``: ``uint32[W, 32, R]``, each thread's 32-bit registers as bit patterns;
- ``smem``: ``uint8[S]``, the CTA's shared memory, its size fixed when the machine is made;
- ``gmem``: ``uint8[G]``, global memory: one flat byte array holding named buffers at aligned offsets
  (``alloc_global``); it grows as buffers are added.

The fast path is the ``@njit`` primitives of ``warpsim.isa`` (``warp_mma``, ``warp_ldmatrix``,
``warp_ld``, ``warp_st``, ``warp_cvt_pack``) applied to ``regs[w]``; the ``execute_*`` methods
here run one instruction each from Python and raise ``SimulatorFault`` on a fault.

>>> import numpy as np
>>> m = Machine(warps=1, regs_per_thread=8, smem_bytes=256)
>>> m.smem[:] = np.arange(256, dtype=np.uint8)
>>> m.execute_ldmatrix(0, [0], np.arange(32) * 16, num=1)
>>> hex(int(m.regs[0, 1, 0]))
'0x7060504'
>>> base = m.alloc_global("out", 32 * 4)
>>> m.execute_st(0, "global", [0], base + np.arange(32) * 4, size=4)
>>> hex(int(m.read_global("out", np.uint32)[1]))
'0x7060504'
"""

import numpy as np

from warpsim.errors import SimulatorFault
from warpsim.isa.arith import DEFAULT_ARCH, SM80, SM90
from warpsim.isa.cvt import CVT_TYPES, cvt_name, warp_cvt_pack
from warpsim.isa.faults import new_fault, raise_fault
from warpsim.isa.fragments import MMA_REGS
from warpsim.isa.ldmatrix import ldmatrix_name, ldmatrix_variant, warp_ldmatrix
from warpsim.isa.memory import memory_name, registers_for, warp_ld, warp_st
from warpsim.isa.mma import mma_name, mma_params, warp_mma
from warpsim.warp import WARP_SIZE

__all__ = ["Machine", "GLOBAL_ALIGN", "MAX_GLOBAL_BYTES", "MAX_THREADS_PER_CTA", "MAX_SMEM_BYTES", "check_cta_limits", "byte_ranges",
           "ranges_mask"]

GLOBAL_ALIGN = 256   # bytes: every global buffer starts at a multiple of this
MAX_GLOBAL_BYTES = 1 << 32     # the simulated global memory lives in host memory: 4 GiB at most
MAX_THREADS_PER_CTA = 1024          # every architecture since sm_20 (CUDA C Programming Guide, compute capabilities)
MAX_SMEM_BYTES = {SM80.name: 163 * 1024, SM90.name: 227 * 1024}   # shared memory per CTA, opted in (same table)


def check_cta_limits(op, threads, smem_bytes, arch=DEFAULT_ARCH, max_smem_bytes=None):
    """Check a CTA's size against the hardware before anything is allocated.

    ``threads`` at most :data:`MAX_THREADS_PER_CTA`; ``smem_bytes`` at most ``max_smem_bytes`` (default:
    :data:`MAX_SMEM_BYTES` of ``arch``; a caller may raise it to simulate beyond the hardware).
    Raises ``ValueError`` naming ``op`` and the limit.

    >>> check_cta_limits("run", 1024, 227 * 1024)
    >>> check_cta_limits("run", 2048, 0)
    Traceback (most recent call last):
    ...
    ValueError: run: 2048 threads per CTA; the hardware allows at most 1024
    """
    if threads > MAX_THREADS_PER_CTA:
        raise ValueError(f"{op}: {threads} threads per CTA; the hardware allows at most {MAX_THREADS_PER_CTA}")
    limit = MAX_SMEM_BYTES.get(arch, MAX_SMEM_BYTES[DEFAULT_ARCH]) if max_smem_bytes is None else max_smem_bytes
    if smem_bytes > limit:
        raised = "" if max_smem_bytes is None else " (as raised)"
        raise ValueError(f"{op}: {smem_bytes} bytes of shared memory per CTA; {arch} allows at most "
                         f"{limit}{raised} (raise it with max_smem_bytes / --max-smem-bytes)")


def _positive_int(op, name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{op}: {name} must be >= {minimum}, got {value}")
    return int(value)


def _index(op, name, value, top):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < top:
        raise ValueError(f"{op}: {name} must be an int in [0, {top}), got {value!r}")
    return int(value)


def _reg_indices(op, name, regs, count):
    idx = np.asarray(regs)
    if not np.issubdtype(idx.dtype, np.integer) or idx.shape != (count,):
        raise ValueError(f"{op}: {name} must be {count} register indices, got {regs!r}")
    return np.ascontiguousarray(idx, dtype=np.int64)


def _lane_addresses(op, addrs):
    a = np.asarray(addrs)
    if not np.issubdtype(a.dtype, np.integer) or a.shape != (WARP_SIZE,):
        raise ValueError(f"{op}: addrs must be {WARP_SIZE} integer byte addresses (one per lane), got shape {a.shape} "
                         f"of {a.dtype}")
    if a.dtype == np.uint64 and int(a.max()) >= 2**63:
        lane = int(np.argmax(a >= 2**63))
        raise SimulatorFault(f"{op}: lane {lane}: address {int(a[lane]):#x} is outside every memory")
    return np.ascontiguousarray(a, dtype=np.int64)


class Machine:
    """A CTA of ``warps`` warps with ``regs_per_thread`` registers each, ``smem_bytes`` of shared
    memory and an initial ``gmem_bytes`` of global memory.

    >>> m = Machine(warps=4, regs_per_thread=16, smem_bytes=1024)
    >>> m.regs.shape, m.smem.shape, m.threads
    ((4, 32, 16), (1024,), 128)
    """

    def __init__(self, warps, regs_per_thread, smem_bytes, gmem_bytes=0):
        op = "Machine"
        self.warps = _positive_int(op, "warps", warps)
        self.regs_per_thread = _positive_int(op, "regs_per_thread", regs_per_thread)
        self.regs = np.zeros((self.warps, WARP_SIZE, self.regs_per_thread), np.uint32)
        self.smem = np.zeros(_positive_int(op, "smem_bytes", smem_bytes, 0), np.uint8)
        self.gmem = np.zeros(_positive_int(op, "gmem_bytes", gmem_bytes, 0), np.uint8)
        self.buffers = {}          # name -> (base, nbytes)
        self._gmem_top = 0
        self.barriers = 0          # bar.sync instructions executed

    @property
    def threads(self):
        """Threads in the CTA: ``warps * WARP_SIZE``."""
        return self.warps * WARP_SIZE

    def __repr__(self):
        return (f"Machine(warps={self.warps}, regs_per_thread={self.regs_per_thread}, "
                f"smem_bytes={self.smem.size}, gmem_bytes={self.gmem.size})")

    # global buffers -------------------------------------------------------------------------
    def alloc_global(self, name, nbytes, redzone=0):
        """Reserve ``nbytes`` of global memory for ``name``; return its base byte address.

        Bases are multiples of ``GLOBAL_ALIGN``; ``gmem`` grows when needed (its contents stay), up to
        ``MAX_GLOBAL_BYTES`` (``ValueError`` naming the buffer beyond, nothing allocated).
        ``redzone``: bytes after the buffer that no later buffer takes (the PTX interpreter leaves
        them so that an access past a buffer's end faults instead of reading the next buffer).
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"alloc_global: name must be a non-empty str, got {name!r}")
        if name in self.buffers:
            raise ValueError(f"alloc_global: buffer {name!r} already exists")
        nbytes = _positive_int("alloc_global", "nbytes", nbytes, 0)
        base = -(-self._gmem_top // GLOBAL_ALIGN) * GLOBAL_ALIGN
        end = base + nbytes
        if end > MAX_GLOBAL_BYTES:
            raise ValueError(f"alloc_global: buffer {name!r} of {nbytes:,} bytes would end at byte {end:,} of global "
                             f"memory; the simulator holds at most {MAX_GLOBAL_BYTES:,} (4 GiB)")
        if end > self.gmem.size:
            grown = np.zeros(end, np.uint8)
            grown[:self.gmem.size] = self.gmem
            self.gmem = grown
        self.buffers[name] = (base, nbytes)
        self._gmem_top = end + _positive_int("alloc_global", "redzone", redzone, 0)
        return base

    def global_view(self, name):
        """The bytes of buffer ``name`` (a view into ``gmem``)."""
        if name not in self.buffers:
            raise KeyError(f"global_view: no buffer {name!r} (have: {', '.join(self.buffers) or 'none'})")
        base, nbytes = self.buffers[name]
        return self.gmem[base:base + nbytes]

    def write_global(self, name, values):
        """Copy the bytes of ``values`` (any numpy array) to the start of buffer ``name``."""
        raw = np.ascontiguousarray(values).view(np.uint8).ravel()
        view = self.global_view(name)
        if raw.size > view.size:
            raise ValueError(f"write_global: {raw.size} bytes do not fit buffer {name!r} of {view.size}")
        view[:raw.size] = raw

    def read_global(self, name, dtype=np.uint8):
        """A copy of buffer ``name`` viewed as ``dtype``."""
        return self.global_view(name).copy().view(dtype)

    # single instructions ---------------------------------------------------------------------
    def _warp(self, op, warp):
        if isinstance(warp, bool) or not isinstance(warp, (int, np.integer)) or not 0 <= warp < self.warps:
            raise ValueError(f"{op}: warp must be an int in [0, {self.warps}), got {warp!r}")
        return self.regs[int(warp)]

    def execute_mma(self, warp, d_regs, a_regs, b_regs, c_regs, *, shape="m16n8k16", ab="f16",
                    cd="f32", arch=DEFAULT_ARCH):
        """``mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd} d, a, b, c`` for one warp."""
        name = mma_name(shape, ab, cd)
        params = mma_params(shape, ab, cd, arch, op=name)
        regs_w = self._warp(name, warp)
        na, nb, nc = MMA_REGS[(shape, cd)]
        fault = new_fault()
        warp_mma(regs_w, _reg_indices(name, "a_regs", a_regs, na), _reg_indices(name, "b_regs", b_regs, nb),
                 _reg_indices(name, "c_regs", c_regs, nc), _reg_indices(name, "d_regs", d_regs, nc),
                 *params, fault)
        raise_fault(fault, name, warp)

    def execute_ldmatrix(self, warp, dst_regs, addrs, *, num, trans=False):
        """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` for one warp."""
        variant = ldmatrix_variant(num, trans)
        name = ldmatrix_name(num, trans)
        regs_w = self._warp(name, warp)
        fault = new_fault()
        warp_ldmatrix(regs_w, _reg_indices(name, "dst_regs", dst_regs, num), self.smem,
                      _lane_addresses(name, addrs), variant, fault)
        raise_fault(fault, name, warp, nbytes=self.smem.size)

    def _memory(self, op, space):
        if space == "shared":
            return self.smem
        if space == "global":
            return self.gmem
        raise ValueError(f"{op}: space must be 'shared' or 'global', got {space!r}")

    def execute_ld(self, warp, space, dst_regs, addrs, *, size, half=0):
        """``ld.{space}`` of ``size`` bytes (2, 4, 8, 16) per lane into ``dst_regs``.

        For ``size == 2`` the value goes to ``half`` (0: bits 0..15, 1: bits 16..31) of ``dst_regs[0]``.
        """
        name = memory_name("ld", space, size)
        mem = self._memory(name, space)
        regs_w = self._warp(name, warp)
        fault = new_fault()
        warp_ld(regs_w, _reg_indices(name, "dst_regs", dst_regs, registers_for(size)), mem,
                _lane_addresses(name, addrs), size, _index(name, "half", half, 2), fault)
        raise_fault(fault, name, warp, nbytes=mem.size, space=space)

    def execute_st(self, warp, space, src_regs, addrs, *, size, half=0):
        """``st.{space}`` of ``size`` bytes per lane from ``src_regs`` (``half`` for 16 bits)."""
        name = memory_name("st", space, size)
        mem = self._memory(name, space)
        regs_w = self._warp(name, warp)
        fault = new_fault()
        warp_st(regs_w, _reg_indices(name, "src_regs", src_regs, registers_for(size)), mem,
                _lane_addresses(name, addrs), size, _index(name, "half", half, 2), fault)
        raise_fault(fault, name, warp, nbytes=mem.size, space=space)

    def execute_cvt_pack(self, warp, d_reg, a_reg, b_reg, *, to="f16"):
        """``cvt.rn.{to}x2.f32 d, a, b``: ``d = cvt(a) << 16 | cvt(b)`` in every lane of one warp."""
        name = cvt_name(to)
        regs_w = self._warp(name, warp)
        fault = new_fault()
        top = self.regs_per_thread
        warp_cvt_pack(regs_w, _index(name, "d_reg", d_reg, top), _index(name, "a_reg", a_reg, top),
                      _index(name, "b_reg", b_reg, top), CVT_TYPES[to], fault)
        raise_fault(fault, name, warp)

    def bar_sync(self):
        """``bar.sync 0`` for the CTA. Warps here step one instruction at a time under a caller's
        schedule, so the barrier changes no state; it is counted in ``barriers`` for that schedule.
        """
        self.barriers += 1


def byte_ranges(mask: np.ndarray) -> np.ndarray:
    """The runs of True in ``mask`` as ``int64[n, 2]`` half-open ``[start, stop)`` byte ranges.

    >>> byte_ranges(np.array([0, 1, 1, 0, 1], bool)).tolist()
    [[1, 3], [4, 5]]
    """
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
    return edges.reshape(-1, 2).astype(np.int64)


def ranges_mask(ranges: np.ndarray, size: int) -> np.ndarray:
    """The inverse of :func:`byte_ranges`: ``bool[size]``, True inside each ``[start, stop)`` of ``ranges``.

    >>> ranges_mask(np.array([[1, 3], [4, 5]]), 6).astype(int).tolist()
    [0, 1, 1, 0, 1, 0]
    """
    edges = np.zeros(size + 1, np.int64)
    np.add.at(edges, ranges[:, 0], 1)
    np.add.at(edges, ranges[:, 1], -1)
    return np.cumsum(edges[:-1]) > 0
