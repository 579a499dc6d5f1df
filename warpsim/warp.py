"""The warp: ``WARP_SIZE`` threads that execute each instruction together.

This is the one statement of the warp size. Every layer imports it from here: CuTe's lane vectors
(:mod:`warpsim.cute.lanes`), the ISA's fragment maps and bank phases (:mod:`warpsim.isa.fragments`,
:mod:`warpsim.isa.banks`), the CTA state ``[warp, lane, reg]`` (:mod:`warpsim.machine`) and the
programs' tracer (:mod:`warpsim.program.lanes`). It sits in the bottom layer, beside
:mod:`warpsim.errors`, because ``cute`` and ``isa`` both need it and neither may import the other.

>>> WARP_SIZE
32
"""

__all__ = ["WARP_SIZE"]

WARP_SIZE = 32   # threads per warp on every NVIDIA architecture (CUTLASS: cutlass::NumThreadsPerWarp)
