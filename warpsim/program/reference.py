"""Expected results from the ISA's arithmetic model alone, independently of the warp machinery.

``gemm_reference(a, b_nk, ...)`` computes ``D[m, n] = sum_k A[m, k] * B[n, k]`` (accumulator starting
at +0) by applying the tensor-core model (:func:`warpsim.isa.arith.mma_tile`) element by element,
k-block after k-block in order: the accumulator after k-block ``i`` is the model's result of the
products of ``k`` in ``[kb*i, kb*i + kb)`` with the accumulator before it. No fragments, registers,
layouts or instructions are involved, so a program's result checked against it tests all of those.

>>> import numpy as np
>>> a = np.full((16, 32), 0x3C00, np.uint16)             # f16 1.0
>>> b = np.full((8, 32), 0x4000, np.uint16)              # f16 2.0
>>> d = gemm_reference(a, b, ab="f16")                   # 32 products of 2.0
>>> hex(int(d[0, 0])), d.shape, d.dtype.name
('0x42800000', (16, 8), 'uint32')
"""

from __future__ import annotations

import numpy as np

from warpsim.isa.arith import DEFAULT_ARCH, mma_tile, new_workspace
from warpsim.isa.mma import mma_params

__all__ = ["gemm_reference"]

_TILE = 16


def gemm_reference(a, b_nk, *, ab="f16", cd="f32", arch=DEFAULT_ARCH, k_block=16, c=None):
    """``D = A * B^T`` bits (``uint32[M, N]``; f16 results in the low 16 bits) per the arithmetic model.

    ``a``: ``[M, K]`` and ``b_nk``: ``[N, K]`` 16-bit patterns of type ``ab``; ``k_block``: 16
    (``mma.m16n8k16``) or 8 (``m16n8k8``); ``K`` a multiple of it. The accumulator starts at +0, or at
    ``c`` (``[M, N]`` bits of type ``cd``: ``D = A * B^T + C``). Raises ``ValueError`` for shapes that do
    not fit.
    """
    a = np.asarray(a)
    b_nk = np.asarray(b_nk)
    if a.ndim != 2 or b_nk.ndim != 2 or a.shape[1] != b_nk.shape[1]:
        raise ValueError(f"gemm_reference: a [M, K] and b_nk [N, K] must share K, got {a.shape} and {b_nk.shape}")
    if k_block not in (8, 16) or a.shape[1] % k_block:
        raise ValueError(f"gemm_reference: k_block must be 8 or 16 and divide K = {a.shape[1]}, got {k_block}")
    shape = "m16n8k16" if k_block == 16 else "m16n8k8"
    _shape, ab_code, cd_code, block, frac_bits, ez = mma_params(shape, ab, cd, arch, op="gemm_reference")
    m_total, k_total = a.shape
    n_total = b_nk.shape[0]
    a64 = a.astype(np.int64) & 0xFFFF
    b64 = b_nk.astype(np.int64) & 0xFFFF
    d = np.zeros((m_total, n_total), np.int64)
    if c is not None:
        c = np.asarray(c)
        if c.shape != d.shape:
            raise ValueError(f"gemm_reference: c must have shape {d.shape} [M, N], got {c.shape}")
        c = c.astype(np.int64) & 0xFFFFFFFF
    work = new_workspace()
    for m0 in range(0, m_total, _TILE):
        for n0 in range(0, n_total, _TILE):
            mc, nc = min(_TILE, m_total - m0), min(_TILE, n_total - n0)
            acc = np.zeros((_TILE, _TILE), np.int64)          # +0
            if c is not None:
                acc[:mc, :nc] = c[m0:m0 + mc, n0:n0 + nc]
            out = np.zeros((_TILE, _TILE), np.int64)
            for k0 in range(0, k_total, k_block):
                at = np.zeros((_TILE, _TILE), np.int64)
                bt = np.zeros((_TILE, _TILE), np.int64)
                at[:mc, :k_block] = a64[m0:m0 + mc, k0:k0 + k_block]
                bt[:nc, :k_block] = b64[n0:n0 + nc, k0:k0 + k_block]
                mma_tile(at, bt, acc, out, mc, nc, k_block, ab_code, cd_code, block, frac_bits, ez, work)
                acc[:mc, :nc] = out[:mc, :nc]
            d[m0:m0 + mc, n0:n0 + nc] = acc[:mc, :nc]
    return d.astype(np.uint32)
