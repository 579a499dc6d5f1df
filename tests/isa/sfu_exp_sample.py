"""Draw the checked-in sample of the H200's MUFU.EX2 and MUFU.LG2 results (``sfu_exp_sample.npz``) from a probe run.

``python tests/isa/sfu_exp_sample.py PROBE_DIR OUT.npz`` keeps, from the inputs that
``warpsim.isa.sfu_exp_derive.probe_keys`` reads (EX2: every sign-magnitude key ``+-f * 2**-23``; LG2: the mantissas of
exponents 1, 126, 127, 128, 254), every input at a segment's edge (the first three and the last three
arguments of each of the 64 segments) and 2,000 more drawn uniformly with a fixed seed, per function.
Keys: ``"ex2:inputs"``, ``"ex2:results"``, ``"lg2:inputs"``, ``"lg2:results"`` (uint32).
"""

import sys

import numpy as np

from warpsim.isa.sfu_exp import OFFSET_BITS, SEGMENT_BITS
from warpsim.isa.sfu_exp_derive import probe_keys

RANDOM_PER_FUNCTION = 2000


def segment_edges() -> np.ndarray:
    """The arguments ``f`` (23 bits) at the edges of the 64 segments: 384 values."""
    starts = np.arange(1 << SEGMENT_BITS, dtype=np.int64) << OFFSET_BITS
    steps = np.array([0, 1, 2, (1 << OFFSET_BITS) - 3, (1 << OFFSET_BITS) - 2, (1 << OFFSET_BITS) - 1])
    return (starts[:, None] + steps[None, :]).ravel()


def draw(keys: dict, seed: int = 14) -> dict:
    """The sample: per function the indices at the segment edges (of every 2**23 block) and random ones."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, (inputs, results) in keys.items():
        blocks = np.arange(inputs.size >> 23, dtype=np.int64) << 23
        edges = (blocks[:, None] + segment_edges()[None, :]).ravel()
        pick = np.unique(np.concatenate([edges, rng.integers(0, inputs.size, RANDOM_PER_FUNCTION)]))
        out[f"{name}:inputs"], out[f"{name}:results"] = inputs[pick], results[pick]
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: python tests/isa/sfu_exp_sample.py PROBE_DIR OUT.npz", file=sys.stderr)
        return 2
    np.savez_compressed(argv[1], **draw(probe_keys(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
