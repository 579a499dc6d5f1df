"""The instruction set: PTX fragment maps, the tensor-core arithmetic, and bit-exact instructions.

This layer knows nothing of CuTe. Batched raw-instruction API (numpy in, numpy out, parallel):

- ``mma_m16n8k16(a, b, c, *, ab="f16", cd="f32", arch="sm90") -> d`` and ``mma_m16n8k8``;
- ``ldmatrix(smem, addrs, *, num, trans=False) -> uint32[..., 32, num]``;
- ``cvt_pack(a, b, *, to="f16")``: ``cvt.rn.{f16,bf16}x2.f32``;
- ``mma_dot(a, b, c, ...)``: dot products as single mma output elements (vectors in, bits out).

Warp-level ``@njit`` primitives for other njit code (one warp's ``regs_w: uint32[32, R]``, register
indices as int64 arrays, per-lane ``int64[32]`` addresses, faults in an ``int64[4]`` array):
``warp_mma``, ``warp_ldmatrix``, ``warp_ld``, ``warp_st``, ``warp_cvt_pack``; ``raise_fault`` turns a
fault into ``SimulatorFault``.
"""

from warpsim.isa import specialize

specialize.install()     # before any of the modules below is compiled: one specialisation per argument type

from warpsim.isa.arith import ARCHS, DEFAULT_ARCH, SM80, SM90, ArchModel, get_arch, mma_tile
from warpsim.isa.cvt import BF16_CODE, F16_CODE, cvt_f32_to_16, cvt_name, cvt_pack, warp_cvt_pack
from warpsim.isa.faults import fault_message, new_fault, raise_fault
from warpsim.isa.fragments import (LDMATRIX_MAPS, MMA_FRAGMENTS, FragmentMap, LdmatrixMap,
                                   from_fragment, ldmatrix_map, to_fragment)
from warpsim.isa.ldmatrix import ldmatrix, ldmatrix_name, ldmatrix_variant, warp_ldmatrix
from warpsim.isa.memory import memory_name, warp_ld, warp_st
from warpsim.isa.mma import mma_dot, mma_m16n8k8, mma_m16n8k16, mma_name, mma_params, warp_mma

__all__ = [
    "ArchModel", "SM80", "SM90", "ARCHS", "DEFAULT_ARCH", "get_arch", "mma_tile",
    "FragmentMap", "LdmatrixMap", "MMA_FRAGMENTS", "LDMATRIX_MAPS", "ldmatrix_map",
    "to_fragment", "from_fragment",
    "mma_m16n8k16", "mma_m16n8k8", "mma_dot", "mma_name", "mma_params", "warp_mma",
    "ldmatrix", "ldmatrix_name", "ldmatrix_variant", "warp_ldmatrix",
    "memory_name", "warp_ld", "warp_st",
    "cvt_pack", "cvt_name", "cvt_f32_to_16", "warp_cvt_pack", "F16_CODE", "BF16_CODE",
    "new_fault", "fault_message", "raise_fault",
]
