"""The seed's program: ``gemm_smem`` of the CuTe flash-attention tutorial, on one 4-warp CTA.

Run: ``warpsim run examples/gemm_smem.py --param dtype=bf16 --param product=pv``

Configured as docs/hardware-model.md §1 and the tutorial's ``kernel_traits.h`` (BlockM = BlockN =
head_dim = 64, 4 warps): ``MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>`` (bf16:
``SM80_16x8x16_F32BF16BF16F32_TN``) tiled ``Layout<Shape<_4,_1,_1>>`` over ``Tile<_64,_16,_16>``;
shared layouts ``tile_to_shape(composition(Swizzle<3,3,3>, (8,64):(64,1)), (64,64))``; ldmatrix.x4
(``SM75_U32x4_LDSM_N``) for Q and K. Params:

- ``product=qk``: ``S[m, n] = sum_k Q[m, k] * K[n, k]``; inputs ``q``, ``k``; output ``s``;
- ``product=pv``: ``O[m, n] = sum_k Q[m, k] * V[k, n]`` (Q stands in for P); inputs ``q``, ``v``; output
  ``o``. V is written to shared memory with ``SmemLayoutKV`` and read through the transposed
  layout with ``SM75_U16x8_LDSM_T`` (ldmatrix.x4.trans); ``partition_fragment_B`` is given the
  transposed layout's un-swizzled twin.
- ``swizzle=yes`` (default) as above; ``swizzle=no``: the same program on the shared layouts without
  ``Swizzle<3,3,3>`` (row-major 128-byte rows; V^T column-major), the bank-conflict comparison of
  ``warpsim debug``'s ``banks``. The results are the same bits.

Inputs are 64x64 raw 16-bit patterns (row = token, column = head dimension); the output is the
64x64 f32 accumulator. Per-thread tensors: ``tSrQ``, ``tSrK`` (qk) or ``tOrVt`` (pv), ``acc``.
The accumulator starts at +0 and takes the mma over k-blocks [16i, 16i+16), i = 0..3, in order.
"""

from dataclasses import dataclass
from functools import lru_cache

import warpsim
from warpsim.cute import (
    Copy_Atom, SM75_U16x8_LDSM_T, SM75_U32x4_LDSM_N, SM80_16x8x16_F32BF16BF16F32_TN,
    SM80_16x8x16_F32F16F16F32_TN, Swizzle, UniversalCopy, _, composition, make_layout, make_smem_ptr,
    make_tensor, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma,
    partition_fragment_C, size, tile_to_shape,
)
from warpsim.program import clear, copy, gemm, syncthreads
from warpsim.program.reference import gemm_reference

BLOCK_M = BLOCK_N = HEAD_DIM = 64
THREADS = 128
SMEM_Q, SMEM_KV = 0x0000, 0x2000          # byte addresses of sQ and sK / sV in shared memory


@dataclass(frozen=True)
class KernelTraits:
    """The tutorial's ``kernel_traits.h``: compile-time types there, built once per dtype here."""

    tiled_mma: object
    smem_layout_q: object
    smem_layout_kv: object
    smem_layout_vt: object
    smem_layout_vt_no_swizzle: object
    gmem_tiled_copy: object
    smem_copy_atom: object
    smem_copy_atom_transposed: object
    store_tiled_copy: object


@lru_cache(maxsize=None)
def kernel_traits(dtype, swizzle="yes"):
    mma_op = SM80_16x8x16_F32F16F16F32_TN() if dtype == "f16" else SM80_16x8x16_F32BF16BF16F32_TN()
    tiled_mma = make_tiled_mma(mma_op, make_layout((4, 1, 1)), (64, 16, 16))
    # (8,64) -> smem element: 8 rows of 64 elements, XOR-swizzled in 16-byte chunks
    smem_layout_atom = composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1)))
    # (64,64) -> smem element: (d, key), the same bytes as SmemLayoutKV, column-major
    smem_layout_vt_atom = composition(Swizzle(3, 3, 3), make_layout((64, 64), (1, 64)))
    if swizzle == "no":
        smem_layout_atom = make_layout((8, 64), (64, 1))          # (8,64) -> smem element, row-major
        smem_layout_vt_atom = make_layout((64, 64), (1, 64))      # (64,64) -> smem element, column-major
    smem_layout_kv = tile_to_shape(smem_layout_atom, (BLOCK_N, HEAD_DIM))       # (key, d) -> element
    smem_layout_vt = tile_to_shape(smem_layout_vt_atom, (64, 64))               # (d, key) -> element
    gmem_copy = make_tiled_copy(Copy_Atom(UniversalCopy(128), dtype),
                                make_layout((16, 8), (8, 1)),   # (16,8) -> thread: 8 threads per 64-element row
                                make_layout((1, 8)))            # (1,8) -> value: 8 elements = 128 bits each
    return KernelTraits(
        tiled_mma=tiled_mma,
        smem_layout_q=tile_to_shape(smem_layout_atom, (BLOCK_M, HEAD_DIM)),
        smem_layout_kv=smem_layout_kv,
        smem_layout_vt=smem_layout_vt,
        smem_layout_vt_no_swizzle=make_layout((64, 64), (1, 64)),   # (d, key) -> element, no swizzle
        gmem_tiled_copy=gmem_copy,
        smem_copy_atom=Copy_Atom(SM75_U32x4_LDSM_N(), dtype),
        smem_copy_atom_transposed=Copy_Atom(SM75_U16x8_LDSM_T(), dtype),
        store_tiled_copy=make_tiled_copy_C(Copy_Atom(UniversalCopy(64), "f32"), tiled_mma),
    )


def gemm_smem(acc, tCrA, tCrB, tCsA, tCsB, tiled_mma, smem_tiled_copy_A, smem_tiled_copy_B,
              smem_thr_copy_A, smem_thr_copy_B):
    """The tutorial's ``gemm_smem``: load k-block i+1 through the copy views while computing k-block i."""
    tCrA_copy_view = smem_thr_copy_A.retile_D(tCrA)
    tCrB_copy_view = smem_thr_copy_B.retile_D(tCrB)
    copy(smem_tiled_copy_A, tCsA[_, _, 0], tCrA_copy_view[_, _, 0])
    copy(smem_tiled_copy_B, tCsB[_, _, 0], tCrB_copy_view[_, _, 0])
    k_blocks = size(tCrA, 2)                                     # CuTe: size<2>(tCrA)
    for i in range(k_blocks):
        if i < k_blocks - 1:
            copy(smem_tiled_copy_A, tCsA[_, _, i + 1], tCrA_copy_view[_, _, i + 1])
            copy(smem_tiled_copy_B, tCsB[_, _, i + 1], tCrB_copy_view[_, _, i + 1])
        gemm(tiled_mma, tCrA[_, _, i], tCrB[_, _, i], acc)


def kernel(tid, *, dtype, product, swizzle, q, k=None, v=None, s=None, o=None):
    """One thread of the CTA: global -> shared, the retile_D loop, the accumulator -> global."""
    traits = kernel_traits(dtype, swizzle)
    tiled_mma = traits.tiled_mma
    sQ = make_tensor(make_smem_ptr(SMEM_Q, dtype), traits.smem_layout_q)
    sK = make_tensor(make_smem_ptr(SMEM_KV, dtype), traits.smem_layout_kv)      # K, or V (key, d)

    # global -> shared: 128-bit loads and stores, 4 per thread per tensor
    gmem_thr_copy = traits.gmem_tiled_copy.get_slice(tid)
    copy(traits.gmem_tiled_copy, gmem_thr_copy.partition_S(q), gmem_thr_copy.partition_D(sQ))
    copy(traits.gmem_tiled_copy, gmem_thr_copy.partition_S(k if product == "qk" else v),
         gmem_thr_copy.partition_D(sK))
    syncthreads()

    thr_mma = tiled_mma.get_slice(tid)
    acc = partition_fragment_C(tiled_mma, (BLOCK_M, BLOCK_N))   # (MMA, MMA_M, MMA_N) f32
    clear(acc)
    tSrQ = thr_mma.partition_fragment_A(sQ)                      # (MMA, MMA_M, MMA_K)
    smem_tiled_copy_Q = make_tiled_copy_A(traits.smem_copy_atom, tiled_mma)
    smem_thr_copy_Q = smem_tiled_copy_Q.get_slice(tid)
    tSsQ = smem_thr_copy_Q.partition_S(sQ)
    if product == "qk":
        tSrK = thr_mma.partition_fragment_B(sK)                  # (MMA, MMA_N, MMA_K)
        smem_tiled_copy_K = make_tiled_copy_B(traits.smem_copy_atom, tiled_mma)
        smem_thr_copy_K = smem_tiled_copy_K.get_slice(tid)
        tSsK = smem_thr_copy_K.partition_S(sK)
        gemm_smem(acc, tSrQ, tSrK, tSsQ, tSsK, tiled_mma, smem_tiled_copy_Q, smem_tiled_copy_K,
                  smem_thr_copy_Q, smem_thr_copy_K)
        out = s
    else:
        sVt = make_tensor(make_smem_ptr(SMEM_KV, dtype), traits.smem_layout_vt)      # (d, key): V^T
        sVtNoSwizzle = make_tensor(make_smem_ptr(SMEM_KV, dtype), traits.smem_layout_vt_no_swizzle)
        tOrVt = thr_mma.partition_fragment_B(sVtNoSwizzle)       # (MMA, MMA_N, MMA_K)
        smem_tiled_copy_V = make_tiled_copy_B(traits.smem_copy_atom_transposed, tiled_mma)
        smem_thr_copy_V = smem_tiled_copy_V.get_slice(tid)
        tOsVt = smem_thr_copy_V.partition_S(sVt)
        gemm_smem(acc, tSrQ, tOrVt, tSsQ, tOsVt, tiled_mma, smem_tiled_copy_Q, smem_tiled_copy_V,
                  smem_thr_copy_Q, smem_thr_copy_V)
        out = o

    # the accumulator -> global memory: 64-bit stores of (row g, columns 2t, 2t+1) pairs
    store_thr_copy = traits.store_tiled_copy.get_slice(tid)
    copy(traits.store_tiled_copy, store_thr_copy.retile_S(acc), store_thr_copy.partition_D(out))


def reference(params, inputs, arch):
    """The expected output: the arithmetic model applied element by element in k-block order."""
    q = inputs["q"]
    b_nk = inputs["k"] if params["product"] == "qk" else inputs["v"].T      # B as (n, k)
    name = "s" if params["product"] == "qk" else "o"
    return {name: gemm_reference(q, b_nk, ab=params["dtype"], cd="f32", arch=arch, k_block=16)}


def _buffers(p):
    second = "k" if p["product"] == "qk" else "v"
    return {"q": ((BLOCK_M, HEAD_DIM), p["dtype"]), second: ((BLOCK_N, HEAD_DIM), p["dtype"])}


program = warpsim.Program(
    kernel,
    threads=THREADS,
    params={"dtype": ("f16", "bf16"), "product": ("qk", "pv"), "swizzle": ("yes", "no")},
    inputs=_buffers,
    outputs=lambda p: {("s" if p["product"] == "qk" else "o"): ((BLOCK_M, BLOCK_N), "f32")},
    smem_bytes=SMEM_KV + BLOCK_N * HEAD_DIM * 2,
    reference=reference,
    name="gemm_smem",
)
