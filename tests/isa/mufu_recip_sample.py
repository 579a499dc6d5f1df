"""Draw the checked-in sample of the H200's MUFU.RCP/RSQ/SQRT results (``mufu_recip_sample.npz``) from key tables.

``python tests/isa/mufu_recip_sample.py KEYS.npz OUT.npz`` (``KEYS.npz``: a ``warpsim.isa.mufu32`` table file
holding ``rcp``, ``rsqrt``, ``sqrt``, as the H200 probe wrote it) keeps, for each function, its results at
the first and the last two keys of every segment of the datapath (``warpsim.isa.mufu_recip``) and at 2,048
keys drawn uniformly with a fixed seed. Keys: ``"NAME:inputs"``, ``"NAME:results"`` (uint32); the inputs
are ``x`` in [1, 2) (RCP) or [1, 4) (RSQ, SQRT).
"""

import sys

import numpy as np

from warpsim.isa.mufu32 import key_tables
from warpsim.isa.mufu_recip import DATAPATHS, RECIP_NAMES
from warpsim.isa.mufu_recip_derive import key_results, reference_inputs

RANDOM_KEYS = 2048


def draw(path, seed=14):
    rng = np.random.default_rng(seed)
    out = {}
    for name, table in zip(RECIP_NAMES, key_tables(RECIP_NAMES, path)):
        dp = DATAPATHS[name]
        starts = np.arange(dp.segments) << dp.low_bits
        ends = starts + (1 << dp.low_bits)
        rows = np.unique(np.concatenate([starts, starts + 1, ends - 2, ends - 1,
                                         rng.integers(0, dp.keys, RANDOM_KEYS)]))
        out[f"{name}:inputs"] = reference_inputs(name)[rows]
        out[f"{name}:results"] = key_results(name, table)[rows]
    return out


if __name__ == "__main__":
    np.savez_compressed(sys.argv[2], **draw(sys.argv[1]))
