"""The shared-memory accesses a CuTe tiled copy makes, warp by warp, as inputs of the bank model.

CuTe's ``copy(tiled_copy, src, dst)`` makes the same sequence of atom calls in every thread; call
``c`` of the 32 lanes of a warp is one warp-wide instruction (``ldmatrix`` for the SM75 atoms, a
plain ``ld/st.shared`` for ``UniversalCopy``). :func:`calls_accesses` turns the calls
:func:`warpsim.cute.calls.copy_calls` lists for a warp's lane vector into :class:`CopyAccess`
records (each lane's start address per call); :func:`fragment_accesses` does it for the copy
that fills an MMA operand fragment from shared memory, as ``warpsim explain`` and the seed's
``gemm_smem`` do (``partition_S`` of the shared tensor, ``retile_D`` of
``partition_fragment_A/B``).

>>> from warpsim.explain import seed_config
>>> cfg = seed_config()
>>> q = cfg.fragments[0]
>>> acc = fragment_accesses(cfg.tiled_mma, "A", q.smem, q.copy, warps=[0])
>>> len(acc), acc[0].kind, acc[0].num, acc[0].addrs[:3].tolist()
(4, 'ldmatrix', 4, [0, 144, 288])
>>> str(BankTotals.of(a.report() for a in acc))
'4 accesses, 16 phases, 16 wavefronts, 0 extra (worst 1-way)'
"""

from dataclasses import dataclass

import numpy as np

from warpsim import cute
from warpsim.cute.atoms.copy_sm75 import LDSM
from warpsim.cute.atoms.copy_universal import UniversalCopy
from warpsim.cute.calls import CopyCalls, copy_calls
from warpsim.isa.banks import BankTotals, bank_report
from warpsim.warp import WARP_SIZE

__all__ = ["CopyAccess", "calls_accesses", "fragment_accesses", "BankTotals"]


@dataclass(frozen=True, eq=False)
class CopyAccess:
    """Call ``call`` of a tiled copy in warp ``warp``: one warp-wide shared access.

    ``kind`` is ``"ldmatrix"`` (``num`` matrices, ``trans``), ``"ld"`` or ``"st"`` (``bits`` per lane);
    ``addrs[l]`` is lane ``l``'s start byte address (its row address for ``ldmatrix``).
    """

    warp: int
    call: int
    kind: str
    addrs: np.ndarray
    num: int = 0
    bits: int = 0
    trans: bool = False

    def report(self):
        """The :class:`~warpsim.isa.banks.BankReport` of this access."""
        if self.kind == "ldmatrix":
            return bank_report("ldmatrix", self.addrs, num=self.num, trans=self.trans)
        return bank_report(self.kind, self.addrs, bits=self.bits)


def calls_accesses(calls, warp=0):
    """The shared accesses of ``calls`` (a :class:`~warpsim.cute.calls.CopyCalls` made for the 32 lanes of
    ``warp``), one per call; ``[]`` when neither side is in shared memory.

    ``ValueError`` if the shared side was not partitioned for a 32-lane vector, or for a copy atom the
    bank model does not know.
    """
    if not isinstance(calls, CopyCalls):
        raise TypeError(f"calls_accesses: expected CopyCalls (warpsim.cute.calls.copy_calls), got {calls!r}")
    if calls.src_space == "smem":
        table, verb = calls.src, "ld"
    elif calls.dst_space == "smem":
        table, verb = calls.dst, "st"
    else:
        return []
    if table.ndim != 3 or table.shape[1] != WARP_SIZE:
        raise ValueError(f"calls_accesses: the shared side must be partitioned for a warp's 32 lanes "
                         f"(copy.get_slice(warp_lanes(w))), got address table of shape {table.shape}")
    op = calls.tiled_copy.atom.op
    out = []
    for c in range(table.shape[0]):
        addrs = table[c, :, 0].astype(np.int64)
        if isinstance(op, LDSM):
            if verb != "ld":
                raise ValueError(f"calls_accesses: {op.name} reads shared memory; this copy writes it")
            out.append(CopyAccess(int(warp), c, "ldmatrix", addrs, num=op.num, trans=op.trans))
        elif isinstance(op, UniversalCopy):
            out.append(CopyAccess(int(warp), c, verb, addrs, bits=op.bits))
        else:
            raise ValueError(f"calls_accesses: no bank model for copy atom {op.name}")
    return out


def fragment_accesses(tiled_mma, operand, smem, tiled_copy, source=None, warps=None):
    """Shared accesses of the copy that fills operand ``operand`` (``"A"``/``"B"``) of ``tiled_mma``.

    ``smem``: the shared tensor the copy reads (``partition_S``); ``source``: the tensor the fragment is
    made from (``partition_fragment_A/B``, default ``smem``); ``warps``: warp indices (default all).
    Returns :class:`CopyAccess` records, warp by warp, in CuTe's call order.
    """
    if operand not in ("A", "B"):
        raise ValueError(f"fragment_accesses: operand must be 'A' or 'B', got {operand!r}")
    if not cute.is_tensor(smem) or smem.space != "smem":
        raise ValueError(f"fragment_accesses: expected a shared-memory tensor, got {smem!r}")
    source = smem if source is None else source
    n_warps = max(1, tiled_mma.size() // WARP_SIZE)
    warps = range(n_warps) if warps is None else warps
    out = []
    for w in warps:
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 0 <= w < n_warps:
            raise ValueError(f"fragment_accesses: warp {w!r} is outside the tiled MMA's {n_warps} warps")
        lanes = cute.warp_lanes(int(w))
        thr = tiled_mma.get_slice(lanes)
        frag = thr.partition_fragment_A(source) if operand == "A" else thr.partition_fragment_B(source)
        tcopy = tiled_copy.get_slice(lanes)
        calls = copy_calls(tiled_copy, tcopy.partition_S(smem), tcopy.retile_D(frag))
        out.extend(calls_accesses(calls, int(w)))
    return out
