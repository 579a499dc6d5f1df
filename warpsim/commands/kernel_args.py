"""The options that name a kernel and its launch, shared by ``warpsim run K.cu`` (:mod:`warpsim.commands.run_kernel`)
and ``warpsim sanitize`` (:mod:`warpsim.commands.sanitize`)."""

from __future__ import annotations

import argparse

from warpsim.frontends.compiled import ARCHS
from warpsim.ptx.launch import DEFAULT_MAX_STEPS

__all__ = ["add_kernel_arguments"]


def add_kernel_arguments(parser):
    """The options that say which kernel to launch and how (shared with ``warpsim sanitize``)."""
    parser.add_argument("source", help="a .cu file (compiled by nvcc), a .ptx file, or a CuTe DSL .py file "
                                       "that assigns WARPSIM")
    parser.add_argument("--kernel", required=True, help="the kernel: its name in the source, or its PTX entry name")
    parser.add_argument("--grid", default="1", help="grid dimensions X[,Y[,Z]] (default 1)")
    parser.add_argument("--block", default="128", help="block dimensions X[,Y[,Z]] (default 128)")
    parser.add_argument("--cluster", default=None, metavar="X[,Y[,Z]]",
                        help="cluster dimensions (sm_90; default the kernel's __cluster_dims__, else clusters of one "
                             "CTA): the CTAs of a cluster run together")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a kernel parameter, once each (NAME as in the source, or the position): NAME=FILE.npy "
                             "(its values: numbers, a big-endian file converted; for a scalar parameter one element "
                             "of its PTX type), NAME=raw:FILE (the file's bytes as they are, as uint8), NAME=1024, "
                             "NAME=0.5, NAME=zeros:f32:64x64, NAME=random:f16:64x64[:BOUND] (from --seed; as hwcheck "
                             "run takes them)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random:... --arg values (default 0)")
    parser.add_argument("--smem", type=int, default=0, help="dynamic shared memory in bytes (default 0)")
    parser.add_argument("--arch", default="sm_90", help=f"compile target and tensor-core model: {', '.join(ARCHS)} "
                                                        "(default sm_90)")
    parser.add_argument("--nvcc-flags", default="", metavar="FLAGS", help="more nvcc flags, written with = as they start with a dash: --nvcc-flags=\"-DTILE=64 -O2\"")
    parser.add_argument("--ptxas", default="auto", metavar="PATH|auto|none",
                        help="who decides which mul+add pairs become one FMA, as on the GPU: a ptxas path; auto (the "
                             "one beside nvcc, else the nvidia-cuda-nvcc wheel's; default); none (PTX without contraction)")
    parser.add_argument("--cubin", default=None, metavar="FILE",
                        help="the cubin the GPU runs: the contraction is checked against its SASS")
    parser.add_argument("--cta", default=None, metavar="I|X,Y,Z", help="run only this CTA: an index, or X,Y,Z (from 0)")
    parser.add_argument("--max-steps", type=_positive, default=DEFAULT_MAX_STEPS, metavar="N",
                        help=f"warp instructions allowed for the launch (default {DEFAULT_MAX_STEPS})")


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
