"""Build the warpsim side of an oracle configuration (``tv_cases``): the objects CuTe's reporter makes.

Shared by the oracle test (compare with CuTe) and the lane-vector test (compare the lane-vector
path with the one-thread path): both need the same tensors per thread.
"""

from dataclasses import dataclass

import numpy as np

import warpsim.cute as cute
from tv_cases import CopyCConfig, CopyConfig, MmaConfig

NAMESPACE = {name: getattr(cute, name) for name in cute.__all__}
NAMESPACE["None"] = None


def ev(x):
    """Evaluate a case_dsl expression's Python side (expressions come from tv_cases.py, not users)."""
    return None if x is None else eval(x.py, dict(NAMESPACE))


@dataclass
class MmaSetup:
    cfg: MmaConfig
    tiled_mma: object
    tensors: dict        # operand -> (smem tensor, tensor the fragment is made from)
    copies: dict         # operand -> TiledCopy
    shape_mk: dict       # operand -> (rows, cols) of its identity tensor
    c_tensor: object = None
    c_copy: object = None


def mma_setup(cfg):
    tiled_mma = ev(cfg.mma)
    out = MmaSetup(cfg, tiled_mma, {}, {}, {})
    make_copy = {"A": cute.make_tiled_copy_A, "B": cute.make_tiled_copy_B}
    for name, op in (("A", cfg.a), ("B", cfg.b)):
        layout = ev(op.layout)
        frag_layout = ev(op.frag_layout) if op.frag_layout is not None else layout
        smem = cute.make_tensor(cute.make_smem_ptr(0, cfg.ab), layout)
        twin = cute.make_tensor(cute.make_smem_ptr(0, cfg.ab), frag_layout)
        out.tensors[name] = (smem, twin)
        out.copies[name] = make_copy[name](ev(op.copy), tiled_mma)
        out.shape_mk[name] = (int(cute.size(layout, 0)), int(cute.size(layout, 1)))
    if cfg.c_copy is not None:
        out.c_tensor = cute.make_tensor(cute.make_smem_ptr(0, cfg.cd), ev(cfg.c_layout))
        out.c_copy = cute.make_tiled_copy_C(ev(cfg.c_copy), tiled_mma)
    return out


@dataclass
class CopyCSetup:
    cfg: CopyCConfig
    tiled_mma: object
    tiled_copy: object   # make_tiled_copy_C(c_copy, tiled_mma)
    c_tensor: object     # shared C
    acc: object          # partition_fragment_C(tiled_mma, shape_mn)


def copy_c_setup(cfg):
    tiled_mma = ev(cfg.mma)
    return CopyCSetup(cfg, tiled_mma, cute.make_tiled_copy_C(ev(cfg.c_copy), tiled_mma),
                      cute.make_tensor(cute.make_smem_ptr(0, cfg.cd), ev(cfg.c_layout)),
                      cute.partition_fragment_C(tiled_mma, cfg.shape_mn))


def partition(thr_mma, name, tensor):
    return thr_mma.partition_A(tensor) if name == "A" else thr_mma.partition_B(tensor)


def fragment(thr_mma, name, tensor):
    return thr_mma.partition_fragment_A(tensor) if name == "A" else thr_mma.partition_fragment_B(tensor)


def element_offsets(tensor):
    """Element offsets of a memory tensor (byte addresses / element size), in its 1-D order."""
    return tensor.address_table() // tensor.engine.element_bytes


@dataclass
class CopySetup:
    cfg: CopyConfig
    tiled_copy: object
    src: object
    dst: object


def copy_setup(cfg):
    tiled_copy = cute.make_tiled_copy(ev(cfg.atom), ev(cfg.thr), ev(cfg.val))
    src = cute.make_tensor(cute.make_gmem_ptr(0, cfg.dtype), ev(cfg.src))
    dst = cute.make_tensor(cute.make_smem_ptr(0, cfg.dtype), ev(cfg.dst))
    return CopySetup(cfg, tiled_copy, src, dst)


def first_difference(want, got):
    """A short description of where two integer arrays differ (None if equal)."""
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape:
        return f"shapes differ: CuTe {want.shape}, warpsim {got.shape}"
    bad = np.argwhere(want != got)
    if not len(bad):
        return None
    i = tuple(int(x) for x in bad[0])
    return f"{len(bad)} entries differ; first at {i}: CuTe {want[i].tolist()}, warpsim {got[i].tolist()}"
