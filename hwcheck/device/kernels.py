"""CUDA kernels of the raw-instruction campaigns, generated per shape, type and variant.

Each kernel executes one PTX instruction, written as inline PTX, over a batch of input sets held in
global memory, and writes the destination registers back to global memory. Operands are laid out
as warpsim's batched ISA API has them, so the same numpy arrays feed both sides:

- ``mma``: warp ``w`` executes the instruction on input set ``w``: lane ``l`` reads its A registers
  at ``a[(w * 32 + l) * NA + i]`` (``uint32[count, 32, NA]``), likewise B and C, and writes D;
  launched with :data:`MMA_THREADS` threads per block.
- ``ldmatrix``: block ``e`` (one warp) copies the ``smem_bytes`` bytes of input set ``e`` into its
  shared memory, then each lane gives its row address ``addrs[e * 32 + l]`` (a byte offset) and
  writes ``num`` registers to ``out[(e * 32 + l) * num + i]``.
- ``cvt``: thread ``i`` converts ``a[i]`` and ``b[i]`` (f32 bits) into ``d[i]``.

The kernels need no headers and compile with NVRTC as CuPy calls it (see :mod:`hwcheck.device.nvrtc`).

>>> k = mma_kernel("m16n8k8", "bf16", "f32")
>>> k.name, k.ptx
('hwcheck_mma_m16n8k8_bf16_f32', 'mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32')
>>> ldmatrix_kernel(2, True).name, cvt_kernel("bf16").ptx
('hwcheck_ldmatrix_x2_trans', 'cvt.rn.bf16x2.f32')
"""

from __future__ import annotations

from dataclasses import dataclass

from warpsim.isa.cvt import cvt_name
from warpsim.isa.ldmatrix import ldmatrix_name
from warpsim.isa.mma import TYPE_COMBOS, mma_name
from warpsim.program.instr import MMA_REGS

__all__ = ["MMA_THREADS", "CVT_THREADS", "Kernel", "mma_kernel", "ldmatrix_kernel", "cvt_kernel",
           "all_kernels", "module_source"]

MMA_THREADS = 128   # 4 warps per block, one instruction each
CVT_THREADS = 256


@dataclass(frozen=True)
class Kernel:
    """One generated kernel: its entry name, the PTX instruction it checks, and its CUDA source."""

    name: str
    ptx: str
    source: str


def _group(first: int, count: int) -> str:
    """The PTX vector operand ``{%first, ..., %first+count-1}``."""
    return "{" + ", ".join(f"%{first + i}" for i in range(count)) + "}"


def mma_kernel(shape: str, ab: str, cd: str) -> Kernel:
    """The kernel running ``mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd}``, one per warp."""
    if (ab, cd) not in TYPE_COMBOS or (shape, cd) not in MMA_REGS:
        raise ValueError(f"mma_kernel: no PTX mma {shape} with ab={ab!r}, cd={cd!r}")
    na, nb, nc = MMA_REGS[(shape, cd)]
    ptx = mma_name(shape, ab, cd)
    name = f"hwcheck_mma_{shape}_{ab}_{cd}"
    operands = ", ".join([_group(0, nc), _group(nc, na), _group(nc + na, nb), _group(nc + na + nb, nc)])
    ins = [f'"r"(a[t * {na} + {i}])' for i in range(na)] + [f'"r"(b[t * {nb} + {i}])' for i in range(nb)]
    if cd == "f32":   # f32 accumulators travel in .f32 registers, bit patterns unchanged
        ins += [f'"f"(__uint_as_float(c[t * {nc} + {i}]))' for i in range(nc)]
        outs = ", ".join(f'"=f"(d{i})' for i in range(nc))
        decl = "float " + ", ".join(f"d{i}" for i in range(nc)) + ";"
        stores = [f"d[t * {nc} + {i}] = __float_as_uint(d{i});" for i in range(nc)]
    else:
        ins += [f'"r"(c[t * {nc} + {i}])' for i in range(nc)]
        outs = ", ".join(f'"=r"(d{i})' for i in range(nc))
        decl = "unsigned " + ", ".join(f"d{i}" for i in range(nc)) + ";"
        stores = [f"d[t * {nc} + {i}] = d{i};" for i in range(nc)]
    body = "\n  ".join([decl, f'asm volatile("{ptx} {operands};"', f"    : {outs}",
                        f"    : {', '.join(ins)});", *stores])
    source = f"""
// {ptx}: warp w executes it on input set w (t = w * 32 + lane).
extern "C" __global__ void {name}(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
    const unsigned* __restrict__ c, unsigned* __restrict__ d, long long count)
{{
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t / 32 >= count) return;   // whole warps leave together: blockDim is a multiple of 32
  {body}
}}
"""
    return Kernel(name, ptx, source)


def ldmatrix_kernel(num: int, trans: bool) -> Kernel:
    """The kernel running ``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``, one warp per block.

    Launch with 32 threads and ``smem_bytes`` of dynamic shared memory; arguments
    ``(smem: uint32[count * smem_bytes / 4], addrs: int64[count * 32], out, count, smem_words)``.
    """
    ptx = ldmatrix_name(num, trans)
    name = f"hwcheck_ldmatrix_x{num}{'_trans' if trans else ''}"
    regs = ", ".join(f"r{i}" for i in range(num))
    outs = ", ".join(f'"=r"(r{i})' for i in range(num))
    stores = "\n  ".join(f"out[t * {num} + {i}] = r{i};" for i in range(num))
    source = f"""
// {ptx}: block e (one warp) loads input set e into shared memory and executes it.
extern "C" __global__ void {name}(const unsigned* __restrict__ smem_in, const long long* __restrict__ addrs,
    unsigned* __restrict__ out, long long count, int smem_words)
{{
  extern __shared__ __align__(128) unsigned sm[];
  const long long e = blockIdx.x;
  const long long t = e * 32 + threadIdx.x;
  if (e >= count) return;
  for (int i = threadIdx.x; i < smem_words; i += 32) sm[i] = smem_in[e * smem_words + i];
  __syncwarp();
  const unsigned addr = (unsigned)__cvta_generic_to_shared(sm) + (unsigned)addrs[t];
  unsigned {regs};
  asm volatile("{ptx} {_group(0, num)}, [%{num}];" : {outs} : "r"(addr) : "memory");
  {stores}
}}
"""
    return Kernel(name, ptx, source)


def cvt_kernel(to: str) -> Kernel:
    """The kernel running ``cvt.rn.{to}x2.f32 d, a, b``, one element per thread."""
    ptx = cvt_name(to)
    name = f"hwcheck_cvt_{to}x2"
    source = f"""
// {ptx}: thread i packs a[i] (upper half) and b[i] (lower half).
extern "C" __global__ void {name}(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
    unsigned* __restrict__ d, long long count)
{{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= count) return;
  unsigned r;
  asm volatile("{ptx} %0, %1, %2;" : "=r"(r) : "f"(__uint_as_float(a[i])), "f"(__uint_as_float(b[i])));
  d[i] = r;
}}
"""
    return Kernel(name, ptx, source)


def all_kernels() -> list[Kernel]:
    """Every campaign kernel: 6 mma (2 shapes x 3 types), 6 ldmatrix variants, 2 cvt."""
    kernels = [mma_kernel(shape, ab, cd) for shape in ("m16n8k16", "m16n8k8") for ab, cd in TYPE_COMBOS]
    kernels += [ldmatrix_kernel(num, trans) for num in (1, 2, 4) for trans in (False, True)]
    return kernels + [cvt_kernel(to) for to in ("f16", "bf16")]


def module_source(kernels) -> str:
    """One translation unit holding each distinct kernel once.

    >>> src = module_source([cvt_kernel("f16"), cvt_kernel("f16")])
    >>> src.count("__global__")
    1
    """
    seen: dict[str, Kernel] = {}
    for kernel in kernels:
        seen.setdefault(kernel.name, kernel)
    return "// Generated by hwcheck.kernels: raw-instruction campaign kernels.\n" + "".join(
        k.source for k in seen.values())
