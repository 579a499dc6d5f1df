"""Draw the checked-in sample of the H200's 16-bit MUFU results (``mufu16_sample.npz``) from a collection.

``python tests/isa/mufu16_sample.py COLLECTION.npz OUT.npz`` keeps, for each of the eight forms of
``hwcheck collect`` (``warpsim.isa.mufu16``), 2,000 (input, result) pairs: every special input (zeros,
infinities, a few NaN payloads of each sign, the subnormal and normal boundaries, 1.0) and the rest
drawn uniformly from all 65536 patterns with a fixed seed. Keys as in the collection:
``"FORM:inputs"``, ``"FORM:results"`` (uint32).
"""

import sys

import numpy as np

PER_FORM = 2000
FORMS = ("ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2",
         "tanh.approx.f16", "tanh.approx.f16x2", "tanh.approx.bf16", "tanh.approx.bf16x2")


def special_patterns(fmt):
    """The 16-bit patterns every sample holds, for ``fmt`` ``f16`` or ``bf16``."""
    fb = 10 if fmt == "f16" else 7
    inf = 0x7C00 if fmt == "f16" else 0x7F80
    one = 0x3C00 if fmt == "f16" else 0x3F80
    top_sub = (1 << fb) - 1
    magnitudes = [0, 1, 2, top_sub - 1, top_sub, top_sub + 1, 1 << (fb + 1), one - 1, one, one + 1,
                  inf - 1, inf, inf + 1, inf + 2, inf | (1 << (fb - 1)), 0x7FFF]
    return sorted({m | s for m in magnitudes for s in (0, 0x8000)})


def draw(collection, seed=14):
    rng = np.random.default_rng(seed)
    out = {}
    for form in FORMS:
        fmt = form.split(".")[-1].removesuffix("x2")
        special = np.array(special_patterns(fmt))
        rest = np.setdiff1d(np.arange(65536), special)
        rows = np.sort(np.concatenate([special, rng.choice(rest, PER_FORM - special.size, replace=False)]))
        out[f"{form}:inputs"] = np.asarray(collection[f"{form}:inputs"])[rows].astype(np.uint32)
        out[f"{form}:results"] = np.asarray(collection[f"{form}:results"])[rows].astype(np.uint32)
    return out


if __name__ == "__main__":
    with np.load(sys.argv[1]) as data:
        sample = draw(data)
    np.savez_compressed(sys.argv[2], **sample)
