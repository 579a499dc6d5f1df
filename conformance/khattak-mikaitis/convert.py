"""Pack the Khattak & Mikaitis hardware vectors into vectors.npz (run once; the tests read the .npz).

Usage: python conformance/khattak-mikaitis/convert.py [SOURCE_DIR]
SOURCE_DIR defaults to ../shared/conformance/khattak-mikaitis beside the repository. Each set
GPU x input type becomes arrays in vectors.npz:

- ``{gpu}_{in}_a``, ``{gpu}_{in}_b``: uint16 [5000, K], the fp16/bf16 bit patterns of the hex words
  (each word is a float32 exactly representable in the input type; this script checks that);
- ``{gpu}_{in}_c``: uint32 [5000], the float32 accumulator bits;
- ``{gpu}_{in}_{out}_d``: uint32 [5000], the result as float32 bits (fp16 results widened).
"""

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GPUS = ("A100", "L40S", "H100", "H200")
SETS = {"fp16": ("fp32", "fp16"), "bf16": ("fp32",)}


def read_hex(path):
    rows = [[int(w, 16) for w in line.split()] for line in path.read_text().splitlines() if line.strip()]
    return np.array(rows, dtype=np.uint32)


def read_bin(path):
    return np.array([int(line, 2) for line in path.read_text().split()], dtype=np.uint32)


def to_16(words, kind):
    """fp16/bf16 bits of float32 words that must be exactly representable."""
    x = words.view(np.float32)
    if kind == "fp16":
        bits = x.astype(np.float16).view(np.uint16)
        back = bits.view(np.float16).astype(np.float32).view(np.uint32)
    else:
        bits = (words >> 16).astype(np.uint16)
        back = bits.astype(np.uint32) << 16
    if not np.array_equal(back, words):
        raise ValueError(f"convert: a {kind} word is not exactly representable")
    return bits


def main(source):
    out = {}
    for gpu in GPUS:
        for kind, outs in SETS.items():
            key = f"{gpu}_{kind}"
            out[f"{key}_a"] = to_16(read_hex(source / f"a_{gpu}_{kind}.txt"), kind)
            out[f"{key}_b"] = to_16(read_hex(source / f"b_{gpu}_{kind}.txt"), kind)
            out[f"{key}_c"] = read_bin(source / f"c_{gpu}_{kind}.txt")
            for o in outs:
                out[f"{key}_{o}_d"] = read_bin(source / f"d_{gpu}_{kind}_{o}.txt")
            n = out[f"{key}_c"].shape[0]
            if any(v.shape[0] != n for k, v in out.items() if k.startswith(key)):
                raise ValueError(f"convert: {key}: files disagree on the number of lines")
    np.savez_compressed(HERE / "vectors.npz", **out)
    return out


if __name__ == "__main__":
    default = HERE.parents[2] / "shared" / "conformance" / "khattak-mikaitis"
    arrays = main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
    sys.stdout.write(f"wrote {len(arrays)} arrays to {HERE / 'vectors.npz'}\n")
