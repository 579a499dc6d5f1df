"""PTX state spaces and generic addresses, and per-thread loads and stores over them (``@njit``).

Spaces and where their bytes live (all ``uint8`` arrays, little-endian):

==========  ==================================  =============================================
space       bytes                               state-space address → generic address
==========  ==================================  =============================================
global      ``gmem`` (the Machine's)            ``GLOBAL_BASE + offset`` (the same generic)
shared      ``smem`` (reserved, static, dynamic) ``offset`` → ``SHARED_WINDOW + offset``
local       ``local[thread]``                   ``offset`` → ``LOCAL_WINDOW + offset``
const       ``const``                           ``offset`` → ``CONST_WINDOW + offset``
param       ``kparam`` (kernel parameters)      ``KPARAM_BASE + offset`` → ``PARAM_WINDOW + that``
(func)      ``fparam[thread]`` (.func params)   no generic address
==========  ==================================  =============================================

Shared memory starts at ``SHARED_BASE`` (0x400): on sm_80 and later the first 1 KB of each CTA's
shared window is reserved for the system (``cudaDevAttrReservedSharedMemoryPerBlock``), so the first
static ``.shared`` variable sits at 0x400, as on the GPU. ``smem`` keeps those reserved bytes, so an
index into it is a shared-space address; an access below ``SHARED_BASE`` faults.

A generic address below ``SHARED_WINDOW`` is global; global offsets start at ``GLOBAL_BASE`` so
that a null or truncated 32-bit pointer faults instead of reading the first buffer. An access
must lie whole inside its space and be aligned to its size, else the access faults (code
``FAULT_OUT_OF_RANGE`` or ``FAULT_MISALIGNED`` of :mod:`warpsim.isa.faults`).

Objects: a global access must also lie whole inside ONE buffer (a pointer argument's array or a
``.global`` variable), a ``.const`` access inside one ``.const`` variable and a kernel ``.param``
access inside one parameter; bytes between objects (alignment padding) are outside every object.
The ``ends`` table (:func:`object_ends`, built once per launch) answers "where does the object
holding byte ``off`` end" in O(1): one entry per ``GLOBAL_ALIGN`` page of ``gmem`` (buffers start on
page boundaries, so a page holds bytes of at most one buffer), then one per byte of ``const``, then
one per byte of ``kparam``; 0 where no object is. An access of ``size`` bytes at ``off`` is inside
an object exactly when ``off + size <= end(off)``.

Global buffers and ``.const`` variables are laid out with a :func:`redzone` after each, so that
reading ``x[n]`` of an ``n``-element array faults instead of reading the next object (an address
tells which object it is in, not which one its pointer came from).

>>> hex(to_generic(SP_SHARED, 0x440)), from_generic(to_generic(SP_SHARED, 0x440))
('0x10000000440', (2, 1088))
"""

import numpy as np
from numba import njit

from warpsim.isa.faults import FAULT_MISALIGNED, FAULT_OUT_OF_RANGE, set_fault
from warpsim.isa.memory import read_bytes
from warpsim.machine import GLOBAL_ALIGN

__all__ = ["SP_GENERIC", "SP_GLOBAL", "SP_SHARED", "SP_LOCAL", "SP_CONST", "SP_KPARAM", "SP_FPARAM", "SP_DSMEM",
           "SPACE_NAMES", "GLOBAL_BASE", "SHARED_BASE", "KPARAM_BASE", "RANK_BYTE", "shared_offset", "SHARED_WINDOW", "LOCAL_WINDOW", "CONST_WINDOW",
           "PARAM_WINDOW", "to_generic", "from_generic", "round_up", "redzone", "global_layout", "object_ends",
           "locate", "locate_prefix", "load", "store", "read_bytes", "write_bytes", "misaligned", "PAGE_SHIFT",
           "REDZONE_MAX"]

SP_GENERIC, SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_CONST, SP_KPARAM, SP_FPARAM, SP_DSMEM = range(8)
SPACE_NAMES = ("generic", "global", "shared", "local", "const", "param", "param", "shared::cluster")
GLOBAL_BASE = 1 << 32
SHARED_BASE = 0x400       # the first shared-space address a program owns (sm_80+: 1 KB reserved per CTA)
RANK_BYTE = 0             # the reserved shared byte that holds the CTA's rank in its cluster (no program reaches it)
KPARAM_BASE = 0x70        # the param-space address of a kernel's first parameter byte, as an H100 gives it to
                          # ``mov.b64 %rd, param`` (conformance/h100/hopper-tma-fourth-run/)
SHARED_WINDOW = 1 << 40
LOCAL_WINDOW = 2 << 40
CONST_WINDOW = 3 << 40
PARAM_WINDOW = 4 << 40
_WINDOWS = (0, GLOBAL_BASE, SHARED_WINDOW, LOCAL_WINDOW, CONST_WINDOW, PARAM_WINDOW)
PAGE_SHIFT = 8    # a page of gmem in the ends table: GLOBAL_ALIGN bytes
REDZONE_MAX = 1 << 20
assert GLOBAL_ALIGN == 1 << PAGE_SHIFT


def round_up(x, align):
    """``x`` rounded up to a multiple of ``align``: ``round_up(5, 4) == 8``."""
    return -(-x // align) * align


def redzone(nbytes):
    """Bytes left free after a global buffer or ``.const`` variable of ``nbytes``: as many as it
    holds, at least ``GLOBAL_ALIGN`` and at most ``REDZONE_MAX``, so that running past its end faults
    instead of reading the next one (``redzone(10) == 256``, ``redzone(300) == 300``)."""
    return min(max(nbytes, GLOBAL_ALIGN), REDZONE_MAX)


def global_layout(sizes):
    """Offsets in ``gmem`` of buffers of ``sizes`` bytes allocated in order by ``Machine.alloc_global``
    with a :func:`redzone` after each (as a launch allocates them).

    >>> global_layout([10, 300, 4])
    [0, 512, 1280]
    """
    offsets, top = [], 0
    for n in sizes:
        base = round_up(top, GLOBAL_ALIGN)
        offsets.append(base)
        top = base + n + redzone(n)
    return offsets


def object_ends(gmem_bytes, buffers, const_bytes, consts, param_bytes, params):
    """The ``ends`` table of a launch (see the module docstring): ``int64[pages + const_bytes + param_bytes]``.

    ``buffers``: ``(offset in gmem, bytes)`` of the global buffers (offsets multiples of
    ``GLOBAL_ALIGN``); ``consts`` and ``params``: ``(offset, bytes)`` of the ``.const`` variables and
    of the kernel parameters.

    >>> ends = object_ends(768, [(0, 10), (256, 300)], 8, [(0, 2), (4, 4)], 4, [(0, 4)])
    >>> ends[:3].tolist(), ends[3:11].tolist(), ends[11:].tolist()
    ([10, 556, 556], [2, 2, 0, 0, 8, 8, 8, 8], [4, 4, 4, 4])
    """
    pages = (gmem_bytes + GLOBAL_ALIGN - 1) >> PAGE_SHIFT
    ends = np.zeros(pages + const_bytes + param_bytes, np.int64)
    for base, nbytes in buffers:
        if base % GLOBAL_ALIGN:
            raise ValueError(f"object_ends: buffer at {base:#x} is not {GLOBAL_ALIGN}-byte aligned")
        if nbytes > 0:
            ends[base >> PAGE_SHIFT:(base + nbytes + GLOBAL_ALIGN - 1) >> PAGE_SHIFT] = base + nbytes
    for first, objects in ((pages, consts), (pages + const_bytes, params)):
        for off, nbytes in objects:
            ends[first + off:first + off + nbytes] = off + nbytes
    return ends


@njit(cache=True, inline="always")
def _object_end(sp, off, ends, gmem, const):
    """The end of the object holding byte ``off`` of space ``sp`` (0: none); spaces without objects: no limit."""
    if sp == SP_GLOBAL:
        return ends[off >> PAGE_SHIFT]
    pages = (gmem.shape[0] + GLOBAL_ALIGN - 1) >> PAGE_SHIFT
    if sp == SP_CONST:
        return ends[pages + off]
    if sp == SP_KPARAM:
        return ends[pages + const.shape[0] + off]
    return np.int64(1) << 62


def to_generic(space, addr):
    """The generic address of state-space address ``addr`` (global addresses are generic already)."""
    if space == SP_GLOBAL or space == SP_GENERIC:
        return addr
    if space == SP_FPARAM:
        raise ValueError("a .func parameter has no generic address")
    return _WINDOWS[space] + addr


def from_generic(addr):
    """``(space, state-space address)`` of a generic address."""
    if addr < SHARED_WINDOW:
        return SP_GLOBAL, addr
    window = min(addr >> 40, 4)
    return window + 1, addr - _WINDOWS[window + 1]


@njit(cache=True, inline="always")
def shared_offset(addr, smem):
    """The offset into ``smem`` of a CTA's shared address: in a cluster launch it may carry the CTA's rank above bit
    24 (``smem[RANK_BYTE]``; :mod:`warpsim.ptx.families.cluster`); an address of another rank is left as it is (out
    of range: a ``.shared::cta`` access does not reach another CTA)."""
    hi = addr >> 24
    if hi != 0 and hi == smem[RANK_BYTE]:
        return addr & 0xFFFFFF
    return addr


@njit(cache=True, inline="always")
def misaligned(off, size):
    """``off % size != 0``, without a division where ``size`` is a power of two (every PTX access size: a 64-bit
    division costs a converged warp's memory access a tenth of its time)."""
    if size & (size - 1) == 0:
        return (off & (size - 1)) != 0
    return off % size != 0


@njit(cache=True, inline="always")
def _space_bytes(sp, gmem, smem, local, const, kparam, fparam):
    if sp == SP_GLOBAL:
        return gmem.shape[0]
    if sp == SP_SHARED:
        return smem.shape[0]
    if sp == SP_LOCAL:
        return local.shape[1]
    if sp == SP_CONST:
        return const.shape[0]
    if sp == SP_KPARAM:
        return kparam.shape[0]
    return fparam.shape[1]


@njit(cache=True)
def locate(space, addr, size, t, gmem, ends, smem, local, const, kparam, fparam, fault):
    """``(space, offset)`` of an access of ``size`` bytes at ``addr`` by thread ``t``; ``(-1, 0)`` and
    ``fault`` set (thread, address, size or alignment) when it is out of range (outside its space,
    or not inside one object of it: ``ends``) or misaligned."""
    return _locate(space, addr, size, size, t, gmem, ends, smem, local, const, kparam, fparam, fault)


@njit(cache=True)
def locate_prefix(space, addr, size, nbytes, t, gmem, ends, smem, local, const, kparam, fparam, fault):
    """:func:`locate` for an access aligned to ``size`` bytes of which only the first ``nbytes``
    (1 to ``size``) are read: ``cp.async``'s ``src-size``."""
    return _locate(space, addr, nbytes, size, t, gmem, ends, smem, local, const, kparam, fparam, fault)


@njit(cache=True, inline="always")
def _locate(space, addr, size, align, t, gmem, ends, smem, local, const, kparam, fparam, fault):
    sp = space
    off = addr
    if sp == SP_GENERIC:
        if addr < 0 or addr >= (5 << 40):
            set_fault(fault, FAULT_OUT_OF_RANGE, t, addr, size)
            return -1, 0
        if addr < SHARED_WINDOW:
            sp = SP_GLOBAL
        else:
            sp = (addr >> 40) + 1
            off = addr - (addr >> 40 << 40)
    if sp == SP_GLOBAL:
        off = off - GLOBAL_BASE
    elif sp == SP_SHARED:
        off = shared_offset(off, smem)
    elif sp == SP_KPARAM:
        off = off - KPARAM_BASE
    n = _space_bytes(sp, gmem, smem, local, const, kparam, fparam)
    if (off < 0 or off > n - size or (sp == SP_SHARED and off < SHARED_BASE)
            or off + size > _object_end(sp, off, ends, gmem, const)):
        set_fault(fault, FAULT_OUT_OF_RANGE, t, addr, size)
        fault[5] = sp
        return -1, 0
    if misaligned(off, align):
        set_fault(fault, FAULT_MISALIGNED, t, addr, align)
        fault[5] = sp
        return -1, 0
    return sp, off


@njit(cache=True, inline="always")
def write_bytes(mem, off, size, value):
    for i in range(size):
        mem[off + i] = np.uint8((value >> (8 * i)) & 0xFF)


@njit(cache=True)
def load(sp, off, size, t, gmem, smem, local, const, kparam, fparam):
    """The ``size`` bytes (1, 2, 4, 8) at a located ``(sp, off)`` as an int64, little-endian."""
    if sp == SP_GLOBAL:
        return read_bytes(gmem, off, size)
    if sp == SP_SHARED:
        return read_bytes(smem, off, size)
    if sp == SP_LOCAL:
        return read_bytes(local[t], off, size)
    if sp == SP_CONST:
        return read_bytes(const, off, size)
    if sp == SP_KPARAM:
        return read_bytes(kparam, off, size)
    return read_bytes(fparam[t], off, size)


@njit(cache=True)
def store(sp, off, size, value, t, gmem, smem, local, kparam, fparam):
    """Write ``size`` bytes of ``value`` at a located ``(sp, off)``; False for a read-only space."""
    if sp == SP_GLOBAL:
        write_bytes(gmem, off, size, value)
    elif sp == SP_SHARED:
        write_bytes(smem, off, size, value)
    elif sp == SP_LOCAL:
        write_bytes(local[t], off, size, value)
    elif sp == SP_FPARAM:
        write_bytes(fparam[t], off, size, value)
    elif sp == SP_KPARAM:
        write_bytes(kparam, off, size, value)
    else:
        return False
    return True
