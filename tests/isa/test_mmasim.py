"""warpsim.isa against PyPI ``mmasim`` (Xie et al., MMA-Sim, arXiv 2511.10909), bit for bit.

mmasim is an independent model of the same tensor cores, written in PyTorch. For each architecture
(sm80 = mmasim's "Ampere", sm90 = "Hopper"), shape and type combination, ``COUNT`` instructions of
each input class (``COUNT x 128`` outputs per class, several thousand per type) must give the same
bits. Skipped cleanly without mmasim and torch: ``pip install -e ".[mmasim]"`` installs them.
"""

import numpy as np
import pytest

from warpsim.isa import MMA_FRAGMENTS, from_fragment, mma_m16n8k8, mma_m16n8k16
from warpsim.isa.inputs import EVIDENCE_CLASSES, MMA_CLASSES, mma_inputs

_MISSING = "mmasim comparison: {} is not installed (pip install -e '.[mmasim]')"
torch = pytest.importorskip("torch", exc_type=ImportError, reason=_MISSING.format("torch"))
nv_ptx = pytest.importorskip("mmasim.nv_ptx", exc_type=ImportError, reason=_MISSING.format("mmasim"))

COUNT = 8                                      # instructions per class: 1,024 outputs
MMASIM_ARCH = {"sm80": "Ampere", "sm90": "Hopper"}
RUN = {"m16n8k16": mma_m16n8k16, "m16n8k8": mma_m16n8k8}
TORCH = {"f16": (np.float16, torch.float16), "f32": (np.float32, torch.float32)}
COMBOS = [("f16", "f32"), ("bf16", "f32"), ("f16", "f16")]
CLASSES = MMA_CLASSES + tuple(EVIDENCE_CLASSES)


def _tensor(bits, fmt):
    """A torch tensor holding the bit patterns ``bits`` (uint) in format ``fmt``."""
    if fmt == "bf16":
        return torch.from_numpy(bits.astype(np.int16)).view(torch.bfloat16)
    np_type, _ = TORCH[fmt]
    width = np.uint16 if fmt == "f16" else np.uint32
    return torch.from_numpy(bits.astype(width).view(np_type).copy())


def _bits(tensor, fmt):
    width = np.uint16 if fmt == "f16" else np.uint32
    return tensor.contiguous().numpy().view(width).astype(np.int64)


@pytest.mark.parametrize("arch", sorted(MMASIM_ARCH))
@pytest.mark.parametrize("shape", sorted(RUN))
@pytest.mark.parametrize("ab, cd", COMBOS)
def test_warpsim_agrees_with_mmasim(arch, shape, ab, cd):
    torch.set_num_threads(1)
    op = nv_ptx.MMA(MMASIM_ARCH[arch], f"{shape}.{cd}.{ab}.{ab}.{cd}")
    cmap = MMA_FRAGMENTS[(shape, f"C.{cd}")]
    compared = 0
    for seed, cls in enumerate(CLASSES):
        a, b, c = mma_inputs(cls, COUNT, shape=shape, ab=ab, cd=cd, rng=np.random.default_rng([17, seed]))
        ours = from_fragment(cmap, RUN[shape](a, b, c, ab=ab, cd=cd, arch=arch)).astype(np.int64)
        A = from_fragment(MMA_FRAGMENTS[(shape, "A")], a)
        B = from_fragment(MMA_FRAGMENTS[(shape, "B")], b)
        C = from_fragment(cmap, c)
        for i in range(COUNT):
            theirs = _bits(op(_tensor(A[i], ab), _tensor(B[i], ab), _tensor(C[i], cd)), cd)
            bad = np.argwhere(theirs != ours[i])
            assert bad.size == 0, (
                f"{cls} {shape} {ab}.{cd} {arch} instruction {i}: {len(bad)} outputs differ, first (m, n) = "
                f"{tuple(bad[0])}: warpsim {ours[i][tuple(bad[0])]:#x}, mmasim {theirs[tuple(bad[0])]:#x}")
            compared += theirs.size
    assert compared == len(CLASSES) * COUNT * 128


def test_the_comparison_can_fail():
    """mmasim disagrees with warpsim's sm90 model with EZ_f16 moved by one, on the floor class."""
    from warpsim.isa import SM90
    op = nv_ptx.MMA("Hopper", "m16n8k16.f16.f16.f16.f16")
    a, b, c = mma_inputs("floor", COUNT, ab="f16", cd="f16", rng=np.random.default_rng(5))
    cmap = MMA_FRAGMENTS[("m16n8k16", "C.f16")]
    wrong = from_fragment(cmap, mma_m16n8k16(a, b, c, ab="f16", cd="f16", arch=SM90.variant(ez_f16=-20)))
    A, B, C = (from_fragment(MMA_FRAGMENTS[("m16n8k16", x)], y) for x, y in (("A", a), ("B", b), ("C.f16", c)))
    differ = sum(int((_bits(op(_tensor(A[i], "f16"), _tensor(B[i], "f16"), _tensor(C[i], "f16")), "f16")
                      != wrong[i]).sum()) for i in range(COUNT))
    assert differ > 0
