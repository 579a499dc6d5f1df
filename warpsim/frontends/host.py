"""The host side of a launch from Python: the user's arrays become the core's global buffers, and the bytes the
kernel left go back into the same arrays, in place, as after a GPU launch and its copy back.

Shared by the Python front ends (:mod:`~warpsim.frontends.triton`, :mod:`~warpsim.frontends.numba_cuda`,
:mod:`~warpsim.frontends.cupy_raw`), which know nothing of one another.

What an argument may be (:func:`host_array`):

- a numpy array: its memory is what the kernel sees. A C-contiguous array is passed as its bytes; a view with
  positive strides (``x[:, ::2]``, ``x.T`` of a row-major matrix) as the bytes from its first element to its last,
  gaps included, so the strides the kernel is given address the same elements as on a GPU;
- a CPU ``torch.Tensor`` (when torch is importable): the numpy view of its memory (``bfloat16`` as its 16-bit
  words), so results land in the tensor;
- anything on a GPU (a CUDA tensor, a CuPy array, an object with ``__cuda_array_interface__``) is refused:
  the simulator has no device memory to read.

Each array gets its own buffer, so two arguments that share memory (``k(x, x)``) would not see each other's
writes: :func:`check_no_overlap` refuses a launch that wrote through one of them, before anything is written
back (one buffer for several parameters is not modelled yet); reading one array through two pointers is fine.

Examples::

    span_bytes(np.zeros((4, 4), np.float32)[:, :2]).nbytes == 56        # rows 0..3, columns 0..1: 3*16 + 8
    span_bytes(np.arange(4, dtype=np.uint8)).tolist() == [0, 1, 2, 3]
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

__all__ = ["HostArray", "host_array", "span_bytes", "check_no_overlap", "overlapping", "is_array_like", "write_back"]


class HostArray:
    """One array argument: ``array`` (numpy, the user's memory), ``data`` (the bytes handed to the core: a uint8
    view of that memory), ``name`` (how messages call it)."""

    __slots__ = ("array", "data", "name")

    def __init__(self, array, name):
        self.array = array
        self.name = name
        self.data = span_bytes(array, name)

    @property
    def address(self):
        """The address of the first element (what a GPU launch would pass as the pointer)."""
        return self.array.__array_interface__["data"][0]


def _torch():
    return sys.modules.get("torch")              # torch only where the user imported it: never imported here


def is_array_like(value):
    """Whether ``value`` is an array argument (numpy, torch, or a GPU array to refuse) rather than a scalar."""
    if isinstance(value, np.ndarray):
        return True
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        return True
    return hasattr(value, "__cuda_array_interface__") or hasattr(value, "data_ptr")


def host_array(value, name, who):
    """The numpy array whose memory ``value`` is (see the module doc); ``TypeError`` naming ``who`` (the front
    end) and the argument ``name`` for an array on a GPU or an object of another kind."""
    if isinstance(value, np.ndarray):
        return value
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise TypeError(f"{who}: argument {name} is a {value.device} tensor; warpsim simulates the GPU on the "
                            f"host: pass a CPU tensor (.cpu()) or a numpy array")
        t = value.detach()
        if t.dtype == torch.bfloat16:
            t = t.view(torch.int16)
        return t.numpy()
    if hasattr(value, "__cuda_array_interface__"):
        raise TypeError(f"{who}: argument {name} is a GPU array ({type(value).__name__}); warpsim simulates the "
                        f"GPU on the host: pass a numpy array (e.g. cupy.asnumpy)")
    raise TypeError(f"{who}: argument {name} is a {type(value).__name__}; give a numpy array or a CPU torch tensor")


def span_bytes(array, name="array"):
    """A writable-where-``array``-is uint8 view of the memory from ``array``'s first element to the end of its last
    (``ValueError`` for a negative stride: the kernel's pointer would not be the span's start)."""
    if array.flags.c_contiguous:
        return array.reshape(-1).view(np.uint8)
    if any(s < 0 for s in array.strides):
        raise ValueError(f"argument {name}: negative strides {array.strides}; pass np.ascontiguousarray of it")
    if array.size == 0:
        return np.zeros(0, np.uint8)
    nbytes = sum((n - 1) * s for n, s in zip(array.shape, array.strides)) + array.itemsize
    memory = (ctypes.c_uint8 * nbytes).from_address(array.__array_interface__["data"][0])
    span = np.frombuffer(memory, np.uint8)
    if not array.flags.writeable:
        span = span.view()
        span.flags.writeable = False
    return span


def overlapping(arrays):
    """The pairs of ``arrays`` (:class:`HostArray`) that share memory."""
    return [(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:]
            if np.shares_memory(a.data, b.data, max_work=1000)]


def check_no_overlap(pairs, buffers, keys, who):
    """``ValueError`` naming both arrays of a pair of :func:`overlapping` when the kernel wrote through either (each
    pointer had its own buffer, so the other did not see the writes); reading one array twice is fine."""
    where = {id(h): k for h, k in keys}
    for a, b in pairs:
        if any(not np.array_equal(buffers[where[id(h)]], h.data) for h in (a, b)):
            raise ValueError(f"{who}: arguments {a.name} and {b.name} share memory and the kernel wrote through one; "
                             f"warpsim gives each pointer its own buffer (aliased pointers are not modelled yet): "
                             f"pass separate arrays")


def write_back(arrays, buffers, keys, who):
    """Copy each result buffer (``buffers[key]``, uint8) into its :class:`HostArray`'s memory; a read-only array
    that the kernel changed is a ``ValueError``."""
    for host, key in zip(arrays, keys):
        after = buffers[key]
        if host.data.flags.writeable:
            host.data[...] = after
        elif not np.array_equal(host.data, after):
            raise ValueError(f"{who}: the kernel wrote into argument {host.name}, a read-only array")
