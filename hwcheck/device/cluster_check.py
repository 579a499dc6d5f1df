"""What a cluster's special registers and ``shared::cluster`` addresses hold on the GPU: runs
``examples/hopper/cluster_probe.cu`` (clusters of two CTAs, ``__cluster_dims__``) over 4 CTAs and prints each CTA's
16 words (see the kernel's comment for their meaning), as hex, one line per CTA.

    python -m hwcheck.device.cluster_check FILE     # FILE: the probe's cubin for sm_90a (nvcc -cubin -arch=sm_90a)

The facts warpsim's cluster model takes from it (the rank's place in a ``mapa`` address, the generic window) are
in docs/hardware-model.md with the report of the run.
"""
import sys

import numpy as np

FIELDS = ("ctarank", "nctarank", "clusterid.x", "nclusterid.x", "cluster_ctaid.x", "cluster_nctaid.x",
          "is_explicit", "cvta(cell)", "mapa(cell,0)", "mapa(cell,1)", "generic.lo", "generic.hi", "mapa64.lo",
          "mapa64.hi", "dsmem-read", "ctaid.x")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.stderr.write("usage: python -m hwcheck.device.cluster_check CUBIN\n")
        return 2
    import cupy as cp
    fn = cp.RawModule(path=argv[0]).get_function("cluster_probe")
    out = cp.zeros(64, cp.uint32)
    fn((4,), (32,), (out,))
    cp.cuda.runtime.deviceSynchronize()
    words = cp.asnumpy(out).reshape(4, 16)
    print(" ".join(f"{f:>16}" for f in FIELDS))
    for row in words:
        print(" ".join(f"{int(w):#16x}" for w in row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
