"""Campaign cases: one instruction variant with one input class, on both sides.

A case knows, for its instruction, how to make inputs (``warpsim.isa.inputs``), how the simulator
executes them (the batched ISA API, parallel over all cores), how the GPU executes them (its
kernel from :mod:`hwcheck.device.kernels`) and how to show one warp's inputs in a report. Both sides
return registers as ``uint32[warps, 32, regs]`` for :func:`hwcheck.compare.compare_registers`:

- ``MmaCase``: one instruction per warp; ``count`` instructions give ``count`` warps;
- ``LdmatrixCase``: one instruction per warp, on its own random shared memory and row addresses;
- ``CvtCase``: one conversion per thread; ``count`` conversions are ``count / 32`` warps (count is
  a multiple of 32), as the GPU runs them.

>>> c = MmaCase("m16n8k8", "bf16", "f32", "ties")
>>> c.ptx, c.label, c.kind, c.regs
('mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32', 'm16n8k8 bf16.f32', 'f32', 4)
>>> LdmatrixCase(4, True).label, CvtCase("bf16", "special").kind
('x4.trans', 'bf16x2')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwcheck.device.kernels import CVT_THREADS, MMA_THREADS, Kernel, cvt_kernel, ldmatrix_kernel, mma_kernel
from warpsim.isa import cvt_pack, ldmatrix, mma_m16n8k8, mma_m16n8k16
from warpsim.isa.inputs import cvt_inputs, ldmatrix_inputs, mma_inputs
from warpsim.program.instr import MMA_REGS

__all__ = ["LDMATRIX_SMEM_BYTES", "LDMATRIX_CLASS", "MmaCase", "LdmatrixCase", "CvtCase"]

LDMATRIX_SMEM_BYTES = 1024   # 64 rows of 16 bytes per input set
LDMATRIX_CLASS = "random-rows"
_MMA = {"m16n8k16": mma_m16n8k16, "m16n8k8": mma_m16n8k8}


def _hex_rows(x: np.ndarray) -> list:
    """``uint32[32, regs]`` as lists of 8-digit hex strings (one list per lane)."""
    return [[f"{int(v):08x}" for v in row] for row in x.reshape(32, -1)]


@dataclass(frozen=True)
class MmaCase:
    """``mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd}`` on inputs of class ``cls``."""

    shape: str
    ab: str
    cd: str
    cls: str
    instr = "mma"

    @property
    def kernel(self) -> Kernel:
        return mma_kernel(self.shape, self.ab, self.cd)

    @property
    def ptx(self) -> str:
        return self.kernel.ptx

    @property
    def label(self) -> str:
        return f"{self.shape} {self.ab}.{self.cd}"

    @property
    def kind(self) -> str:
        return "f32" if self.cd == "f32" else "f16x2"

    @property
    def regs(self) -> int:
        return MMA_REGS[(self.shape, self.cd)][2]

    def warps(self, count: int) -> int:
        return count

    def inputs(self, count: int, rng):
        return mma_inputs(self.cls, count, shape=self.shape, ab=self.ab, cd=self.cd, rng=rng)

    def simulate(self, inputs, arch: str) -> np.ndarray:
        a, b, c = inputs
        return _MMA[self.shape](a, b, c, ab=self.ab, cd=self.cd, arch=arch)

    def run(self, gpu, module, inputs) -> np.ndarray:
        a, b, c = inputs
        count = a.shape[0]
        d = gpu.output((count, 32, self.regs))
        blocks = (count * 32 + MMA_THREADS - 1) // MMA_THREADS
        gpu.launch(module, self.kernel.name, blocks, MMA_THREADS,
                   (gpu.put(a), gpu.put(b), gpu.put(c), d, np.int64(count)))
        return gpu.get(d)

    def warp_inputs(self, inputs, warp: int) -> dict:
        a, b, c = inputs
        return {"a": _hex_rows(a[warp]), "b": _hex_rows(b[warp]), "c": _hex_rows(c[warp])}


@dataclass(frozen=True)
class LdmatrixCase:
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` on random memory and row addresses."""

    num: int
    trans: bool
    cls: str = LDMATRIX_CLASS
    instr = "ldmatrix"
    kind = "b16x2"

    @property
    def kernel(self) -> Kernel:
        return ldmatrix_kernel(self.num, self.trans)

    @property
    def ptx(self) -> str:
        return self.kernel.ptx

    @property
    def label(self) -> str:
        return f"x{self.num}{'.trans' if self.trans else ''}"

    @property
    def regs(self) -> int:
        return self.num

    def warps(self, count: int) -> int:
        return count

    def inputs(self, count: int, rng):
        return ldmatrix_inputs(count, num=self.num, trans=self.trans, smem_bytes=LDMATRIX_SMEM_BYTES, rng=rng)

    def simulate(self, inputs, arch: str) -> np.ndarray:
        smem, addrs = inputs
        return ldmatrix(smem, addrs, num=self.num, trans=self.trans)

    def run(self, gpu, module, inputs) -> np.ndarray:
        smem, addrs = inputs
        count = addrs.shape[0]
        out = gpu.output((count, 32, self.num))
        words = LDMATRIX_SMEM_BYTES // 4
        gpu.launch(module, self.kernel.name, count, 32,
                   (gpu.put(smem.view(np.uint32)), gpu.put(addrs.astype(np.int64)), out, np.int64(count),
                    np.int32(words)), shared_mem=LDMATRIX_SMEM_BYTES)
        return gpu.get(out)

    def warp_inputs(self, inputs, warp: int) -> dict:
        smem, addrs = inputs
        return {"smem": smem[warp].tobytes().hex(), "addrs": [int(x) for x in addrs[warp]]}


@dataclass(frozen=True)
class CvtCase:
    """``cvt.rn.{to}x2.f32 d, a, b`` on f32 inputs of class ``cls``; thread ``i`` converts pair ``i``."""

    to: str
    cls: str
    instr = "cvt"

    @property
    def kernel(self) -> Kernel:
        return cvt_kernel(self.to)

    @property
    def ptx(self) -> str:
        return self.kernel.ptx

    @property
    def label(self) -> str:
        return self.to

    @property
    def kind(self) -> str:
        return f"{self.to}x2"

    regs = 1

    def warps(self, count: int) -> int:
        if count % 32:
            raise ValueError(f"cvt campaign: count must be a multiple of 32, got {count}")
        return count // 32

    def inputs(self, count: int, rng):
        return cvt_inputs(self.cls, count, to=self.to, rng=rng)

    def simulate(self, inputs, arch: str) -> np.ndarray:
        a, b = inputs
        return cvt_pack(a, b, to=self.to).reshape(-1, 32, 1)

    def run(self, gpu, module, inputs) -> np.ndarray:
        a, b = inputs
        count = a.shape[0]
        d = gpu.output(count)
        blocks = (count + CVT_THREADS - 1) // CVT_THREADS
        gpu.launch(module, self.kernel.name, blocks, CVT_THREADS, (gpu.put(a), gpu.put(b), d, np.int64(count)))
        return gpu.get(d).reshape(-1, 32, 1)

    def warp_inputs(self, inputs, warp: int) -> dict:
        a, b = inputs
        lanes = slice(32 * warp, 32 * warp + 32)
        return {"a": [f"{int(v):08x}" for v in a[lanes]], "b": [f"{int(v):08x}" for v in b[lanes]]}
