"""A stand-in for hwcheck.device.gpu.Gpu that runs each kernel's launch without a GPU.

It checks what a launch must get right on a real GPU (the module holds the kernel, the grid covers
every warp, argument types and sizes, dynamic shared memory) and then computes the kernel's outputs:
campaign kernels with warpsim's batched ISA, a program's lowered PTX (``warpsim.program.lower``, loaded with
``ptx_module``) with the PTX interpreter, its shared memory starting as 0xA5 bytes (a GPU's leftovers: the kernel
must zero it), so plumbing can be tested without a GPU. ``corrupt(name, out)`` may change the output in place,
to play a GPU that disagrees; for a lowered program ``out`` is ``{"gmem": ..., "snap": ..., "smem": ...}`` (numpy
views of the device arrays: global memory bytes, snapshots ``uint32[slots, threads]``, shared-memory words).

The pieces other stand-ins share: :class:`HostMemory` (``put``/``output``/``get`` on numpy arrays) for those
that compute their kernels another way, and :class:`FakeCupy` with :func:`sweep_module` for those that play
the CuPy calls ``hwcheck sweep`` makes (``gpu.cupy.empty``, ``module.raw.get_function(name)``, ``.get(out=)``).
"""

from types import SimpleNamespace

import numpy as np

from hwcheck.campaigns.float_cases import F64_FORMS, FLOAT_FORMS, float_kernel, parse_form, simulate_form
from hwcheck.device.gpu import GpuInfo, GpuModule
from warpsim import ptx
from warpsim.isa import cvt_pack, ldmatrix, mma_m16n8k8, mma_m16n8k16
from warpsim.program.instr import MMA_REGS
from warpsim.program.lower import KERNEL as PROGRAM_KERNEL

INFO = GpuInfo(device=0, name="Fake GPU (warpsim)", compute_capability="90", arch="sm_90",
               driver_version=None, driver_cuda_version="13.0", runtime_version="13.0", nvrtc_version="13.0",
               cupy_version="0", memory_bytes=0, cache_dir="")


class HostMemory:
    """``hwcheck.device.gpu.Gpu``'s memory calls on the host: device arrays are numpy copies; an output starts as
    0xFFFFFFFF in every word (what a kernel that never wrote it leaves)."""

    info = INFO

    def put(self, array):
        return np.array(array, copy=True)

    def output(self, shape):
        return np.full(shape, 0xFFFFFFFF, np.uint32)

    def get(self, array):
        return np.array(array, copy=True)


class _CupyArray(np.ndarray):
    """A numpy array with CuPy's ``get(out=)``."""

    def get(self, out):
        out[...] = self
        return out


class FakeCupy:
    """The part of CuPy ``hwcheck sweep`` calls through ``gpu.cupy``: ``uint32`` and ``empty``."""

    uint32 = np.uint32

    @staticmethod
    def empty(n, dtype):
        return np.empty(n, dtype).view(_CupyArray)


def sweep_module(get_function):
    """A compiled module as ``hwcheck sweep`` uses it: ``module.raw.get_function(name)(grid, block, args)``;
    ``get_function(name)`` returns the kernel's stand-in."""
    return GpuModule(SimpleNamespace(get_function=get_function), "fake", 0.0)


class FakeGpu(HostMemory):
    def __init__(self, corrupt=None, info=INFO):
        self.info = info
        self.corrupt = corrupt
        self.launches = []
        self.modules = []

    def module(self, source):
        self.modules.append(source)
        return GpuModule(source, "fake", 0.0)

    def ptx_module(self, text):
        self.modules.append(text)
        return GpuModule(ptx.load(text, filename="<fake gpu>", ptxas="none"), "fake", 0.0)

    def launch(self, module, name, grid, block, args, shared_mem=0):
        self.launches.append((name, grid, block, shared_mem))
        if name == PROGRAM_KERNEL:
            _launch_program(module.raw, grid, block, args, shared_mem)
        else:
            emulate_launch(module.raw, name, grid, block, args, shared_mem)
        if self.corrupt is None:
            return
        if name == PROGRAM_KERNEL:
            gmem, _table, snap, smem = args
            self.corrupt(name, {"gmem": gmem, "snap": snap, "smem": smem})
        else:
            self.corrupt(name, args[-3] if name.startswith("hwcheck_ldmatrix_") else args[-2])


_FLOAT_KERNELS = {float_kernel(parse_form(f)).name: parse_form(f) for f in FLOAT_FORMS + F64_FORMS}


def _launch_program(module, grid, block, args, shared_mem):
    """A lowered program's launch: one CTA, its four arrays written in place as the GPU writes them."""
    assert grid == 1 and block % 32 == 0 and shared_mem % 4 == 0
    gmem, table, snap, smem = args
    assert gmem.dtype == np.uint8 and table.dtype == np.int64 and snap.dtype == smem.dtype == np.uint32
    assert smem.size * 4 == shared_mem
    res = module.launch(PROGRAM_KERNEL, block=block, smem=shared_mem, quiet=True, shared_fill=0xA5,
                        args={"gmem": gmem, "table": table, "snap": snap.reshape(-1), "smem_out": smem})
    for name, out in (("gmem", gmem), ("snap", snap), ("smem_out", smem)):
        out.reshape(-1)[:] = res.buffers[name].reshape(-1)


def emulate_launch(source, name, grid, block, args, shared_mem=0):
    """Check a launch of campaign kernel ``name`` from ``source`` and compute its outputs with warpsim."""
    assert f"void {name}(" in source or f"\n{name}(" in source, f"{name} is not in the module"
    assert block % 32 == 0, "block must hold whole warps"
    if name.startswith("hwcheck_mma_"):
        shape, ab, cd = name.split("_")[2:]
        a, b, c, d, count = args
        assert isinstance(count, np.int64) and grid * block >= 32 * int(count)
        na, nb, nc = MMA_REGS[(shape, cd)]
        run = mma_m16n8k16 if shape == "m16n8k16" else mma_m16n8k8
        n = int(count)
        d.reshape(n, 32, nc)[:] = run(a.reshape(n, 32, na), b.reshape(n, 32, nb), c.reshape(n, 32, nc),
                                      ab=ab, cd=cd, arch="sm90")
    elif name.startswith("hwcheck_ldmatrix_"):
        smem, addrs, out, count, words = args
        assert isinstance(count, np.int64) and isinstance(words, np.int32)
        n = int(count)
        assert grid == n and block == 32 and shared_mem == 4 * int(words)
        assert smem.dtype == np.uint32 and addrs.dtype == np.int64
        variant = name.split("_")[2:]
        num, trans = int(variant[0][1]), variant[-1] == "trans"
        out.reshape(n, 32, num)[:] = ldmatrix(smem.reshape(n, -1).view(np.uint8), addrs.reshape(n, 32),
                                              num=num, trans=trans)
    elif name.startswith("hwcheck_float_"):
        form = _FLOAT_KERNELS[name]
        *ins, d, count = args
        n = int(count)
        assert isinstance(count, np.int64) and grid * block >= n
        out = simulate_form(form, [x[:n] for x in ins[:len(form.sources)]])
        d.view(out.dtype)[:n] = out
    elif name.startswith("hwcheck_mufu_"):   # no model: the fake returns each input's bits as its result
        src, _b, _c, d, count = args
        n = int(count)
        assert isinstance(count, np.int64) and grid * block >= n
        d.view(src.dtype)[:n] = src[:n]
    elif name.startswith("hwcheck_cvt_"):
        a, b, d, count = args
        assert isinstance(count, np.int64) and grid * block >= int(count)
        d[:] = cvt_pack(a, b, to=name.split("_")[2][:-2])
    else:
        raise AssertionError(f"unknown kernel {name}")


def flip_every_seventh(name, out):
    """A corruption that depends only on the output bits (so every process agrees): flip bit 0 of every
    register whose value is a multiple of 7."""
    view = out.reshape(-1)
    view[view % 7 == 0] ^= 1


def fake_runner(cases):
    """A cluster checker's runner (``hwcheck.campaigns.cluster``): a fake GPU that disagrees on every seventh value."""
    from hwcheck.campaigns.campaign import GpuRunner
    gpu = FakeGpu(corrupt=flip_every_seventh)
    return GpuRunner(gpu, cases), gpu.info.as_dict()


def no_gpu_runner(cases):
    """A cluster checker's runner on a node whose GPU cannot be opened."""
    from hwcheck.errors import HwcheckError
    raise HwcheckError("hwcheck: CuPy cannot open a CUDA device (fake)")
