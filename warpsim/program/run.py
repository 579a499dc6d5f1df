"""``run_program``: trace a program, load its inputs, execute its stream on a simulated CTA.

Inputs are raw bits: ``uint16`` arrays for 16-bit buffers (``f16``, ``bf16``, ``u16``), ``uint32`` for
32-bit ones, of the declared shape (row-major). An input not given is random: finite values in
``[-1, 1)`` drawn from ``numpy.random.default_rng(seed)`` (one draw per input, in declaration order)
and rounded to the dtype (nearest even; a value that rounds up to 1.0 becomes the largest value
below 1); ``u16``/``u32`` inputs are uniform random bits. Outputs are read back from global memory
as raw bits of their declared shape. Per-thread tensors (``Result.tensors``) are each thread's
register storage at exit, ``(threads, slots)`` in CuTe's storage order.

>>> from warpsim.program.program import Program
>>> from warpsim.program.ops import clear
>>> from warpsim.cute import make_tensor
>>> def kernel(tid):
...     acc = make_tensor("f32", (2,))
...     clear(acc)
>>> r = run_program(Program(kernel, threads=64))
>>> r.tensors["acc"].shape, r.tensors["acc"].dtype.name, r.stats.instructions
((64, 2), 'uint32', {'mov.b32': 2})
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from warpsim.cute.numeric import DTYPES, dtype_bits, storage_dtype as _storage_dtype
from warpsim.isa.arith import DEFAULT_ARCH
from warpsim.isa.cvt import cvt_pack
from warpsim.machine import MAX_GLOBAL_BYTES, Machine, check_cta_limits
from warpsim.program.checks import check_reads
from warpsim.program.lower import KERNEL
from warpsim.program.program import Program
from warpsim.program.registers import TensorInfo

__all__ = ["Result", "Stats", "run_program", "execute_trace", "random_inputs", "tensor_values", "prepare",
           "MAX_GLOBAL_BYTES"]

_BITS = {dtype: dtype_bits(dtype) for dtype in DTYPES}     # element widths, from the one table
_ONE_BELOW = {"f16": (0x3C00, 0x3BFF), "bf16": (0x3F80, 0x3F7F), "f32": (0x3F800000, 0x3F7FFFFF)}


@dataclass(frozen=True)
class Stats:
    """``instructions``: warp instructions executed per PTX name; times in seconds (``trace_seconds``:
    the tracing of this params choice, 0 when it came from the program's cache)."""

    instructions: dict
    trace_seconds: float
    execute_seconds: float


@dataclass(frozen=True)
class Result:
    """What ``run_program`` returns: the final ``machine``; ``outputs`` and ``inputs`` (raw bits, by
    name); ``tensors`` (per-thread register tensors at exit, ``(threads, slots)`` raw bits);
    ``stats``; the ``trace``; ``params``; ``arch``."""

    machine: Machine
    outputs: dict
    inputs: dict
    tensors: dict
    stats: Stats
    trace: object
    params: dict
    arch: str


def _round(dtype, values):
    x32 = values.astype(np.float32)
    if dtype == "f16":
        bits = values.astype(np.float16).view(np.uint16).astype(np.uint32)
    elif dtype == "bf16":
        bits = cvt_pack(np.zeros(x32.shape, np.uint32), x32.view(np.uint32), to="bf16") & 0xFFFF
    else:
        bits = x32.view(np.uint32)
    one, below = _ONE_BELOW[dtype]
    return np.where(bits == one, below, bits)


def random_inputs(buffers, seed):
    """Random raw-bit inputs for the input buffers (see the module docstring)."""
    rng = np.random.default_rng(seed)
    out = {}
    for b in buffers:
        if b.role != "input":
            continue
        if b.dtype in _ONE_BELOW:
            bits = _round(b.dtype, rng.uniform(-1.0, 1.0, b.shape))
        else:
            bits = rng.integers(0, 1 << _BITS[b.dtype], b.shape, dtype=np.uint64)
        out[b.name] = bits.astype(_storage_dtype(b.dtype))
    return out


_OWN_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "u16": "uint16", "u32": "uint32"}


def _input_bits(program, b, value):
    """The raw bits of one given input: ``uint16``/``uint32`` bits, or an array of the buffer's own dtype
    (``float16`` for f16, ``float32`` for f32, ``bfloat16`` for bf16), in native byte order."""
    value = np.asarray(value)
    storage = np.dtype(_storage_dtype(b.dtype))
    native = value.dtype.newbyteorder("=")            # a big-endian file's array: same values, native order
    if native != storage and native.name != _OWN_DTYPES[b.dtype]:
        raise ValueError(f"program {program.name}: input {b.name!r} is a {b.dtype} buffer: give raw bits "
                         f"({storage.name}) or {_OWN_DTYPES[b.dtype]} values, got {value.dtype}")
    if value.shape != b.shape:
        raise ValueError(f"program {program.name}: input {b.name!r} must have shape {b.shape}, got {value.shape}")
    return np.ascontiguousarray(value.astype(native, copy=False)).view(storage)


def _check_inputs(program, buffers, given):
    if not isinstance(given, dict):
        raise TypeError(f"program {program.name}: inputs must be a dict {{name: array}}, got {type(given).__name__}")
    by_name = {b.name: b for b in buffers if b.role == "input"}
    out = {}
    for name, value in given.items():
        if name not in by_name:
            raise ValueError(f"program {program.name}: unknown input {name!r} "
                             f"(inputs: {', '.join(by_name) or 'none'})")
        out[name] = _input_bits(program, by_name[name], value)
    return out


def tensor_values(machine, info: TensorInfo):
    """``(threads, slots)`` raw bits of a per-thread tensor: ``uint16`` for 16-bit elements, ``uint32`` for 32."""
    warps = range(len(info.bases))
    regs = np.stack([info.registers(w) for w in warps])[:, None, :]        # [W, 1, slots]
    words = machine.regs[np.arange(len(warps))[:, None, None], np.arange(32)[None, :, None], regs]   # [W, 32, slots]
    if info.bits == 16:
        values = ((words >> (16 * info.halves()).astype(np.uint32)) & 0xFFFF).astype(np.uint16)
    else:
        values = words.astype(np.uint32)
    return values.reshape(-1, info.slots)


def prepare(program, params=None, inputs=None, *, seed=0, mode="vector", strict=False, arch=DEFAULT_ARCH,
            max_smem_bytes=None):
    """Trace ``program`` and build its machine with the inputs loaded (nothing executed yet).

    The CTA's size is checked against ``arch``'s limits first (``check_cta_limits``; ``max_smem_bytes``
    raises the shared-memory one). Returns ``(trace, machine, inputs, trace_seconds)``; the debugger
    starts from here.
    """
    if not isinstance(program, Program):
        raise TypeError(f"run_program: expected a warpsim Program, got {program!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"run_program: seed must be a non-negative int, got {seed!r}")
    params = program.resolve_params(params)
    check_cta_limits(f"program {program.name}", program.threads(params), program.smem_bytes(params), arch,
                     max_smem_bytes)
    buffers = program.buffers(params)
    top = max((b.base + b.nbytes for b in buffers), default=0)
    if top > MAX_GLOBAL_BYTES:
        big = max(buffers, key=lambda b: b.nbytes)
        raise ValueError(f"program {program.name}: its buffers need {top} bytes of global memory ({big.name!r}: "
                         f"{big.shape} {big.dtype}); the simulator holds at most {MAX_GLOBAL_BYTES}")
    cached = program.is_traced(params, mode)
    trace = program.trace(params, mode=mode)
    trace_seconds = 0.0 if cached else trace.seconds
    check_reads(trace.stream, warps=trace.warps, registers=trace.regs_per_thread, strict=strict,
                records=trace.unwritten_reads)
    given = _check_inputs(program, trace.buffers, inputs or {})
    loaded = random_inputs([b for b in trace.buffers if b.name not in given], seed)
    loaded.update(given)
    machine = Machine(trace.warps, trace.regs_per_thread, trace.smem_bytes)
    for b in trace.buffers:
        base = machine.alloc_global(b.name, b.nbytes)
        if base != b.base:
            raise RuntimeError(f"run_program: buffer {b.name} at {base:#x}, traced at {b.base:#x}")
        if b.role == "input":
            machine.write_global(b.name, loaded[b.name])
    return trace, machine, {b.name: loaded[b.name] for b in trace.buffers if b.role == "input"}, trace_seconds


def execute_trace(trace, machine, *, arch=DEFAULT_ARCH, max_smem_bytes=None):
    """Run ``trace`` on ``machine`` (as :func:`prepare` built it) through the PTX front end: the stream's
    addresses are checked (``SimulatorFault`` naming the first bad one, nothing run), its PTX kernel
    (:attr:`Trace.kernel`) is launched on one CTA with ``machine``'s global memory and the table of
    per-lane values, and ``machine`` takes the registers, shared and global memory the CTA left
    (``max_smem_bytes``: as :func:`prepare` was given it)."""
    trace.check_addresses(smem_bytes=machine.smem.size, gmem_bytes=machine.gmem.size)
    low = trace.lowered
    result = trace.kernel.launch(KERNEL, block=low.threads, args={"gmem": machine.gmem, "table": low.table},
                                 smem=low.smem_bytes, arch=arch, quiet=True, max_smem_bytes=max_smem_bytes)
    ptx = result.machine
    machine.gmem[...] = result.buffers["gmem"]
    machine.regs[...] = ptx.regs[:machine.regs.shape[0], :, :machine.regs.shape[2]]
    machine.smem[...] = ptx.smem[ptx.smem.size - machine.smem.size:]


def run_program(program, params=None, inputs=None, *, seed=0, arch=DEFAULT_ARCH, mode="vector", strict=False,
                max_smem_bytes=None):
    """Run ``program`` on a simulated CTA: a :class:`Result`.

    ``params``: values or strings (see ``Program.resolve_params``); ``inputs``: ``{name: raw-bit
    array}``, the rest random from ``seed``; ``arch``: ``"sm80"`` or ``"sm90"``; ``mode``: the tracing
    mode; ``strict``: a read of a never-written register is a ``ProgramError`` instead of a warning;
    ``max_smem_bytes``: raises the shared-memory limit of ``arch`` (see ``prepare``).
    Raises ``ValueError`` for bad params or inputs, ``ProgramError`` for a malformed program and
    ``SimulatorFault`` (with the source line) for a faulting instruction.
    """
    trace, machine, loaded, trace_seconds = prepare(program, params, inputs, seed=seed, mode=mode, strict=strict,
                                                    arch=arch, max_smem_bytes=max_smem_bytes)
    start = time.perf_counter()
    execute_trace(trace, machine, arch=arch, max_smem_bytes=max_smem_bytes)
    seconds = time.perf_counter() - start
    outputs = {b.name: machine.read_global(b.name, _storage_dtype(b.dtype)).reshape(b.shape)
               for b in trace.buffers if b.role == "output"}
    tensors = {name: tensor_values(machine, info) for name, info in trace.tensors.items()}
    return Result(machine, outputs, loaded, tensors, Stats(dict(trace.instruction_counts), trace_seconds, seconds),
                  trace, trace.params, arch)
