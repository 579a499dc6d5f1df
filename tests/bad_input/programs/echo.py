"""A one-warp program that copies its input ``x`` to its output ``y`` through registers (the bad-input suite's).

``check`` picks how its reference misbehaves: ``good`` (``y == x``), ``raises`` (a KeyError),
``transposed`` (the right bits in the wrong shape), ``floats`` (values, not bits), ``list`` (not a dict),
``wrong`` (mismatching bits). ``fail`` picks how the kernel misbehaves: ``no``, ``keyerror`` (raised
while tracing), ``exit`` (``sys.exit`` while tracing).
"""

import sys

import numpy as np

import warpsim
from warpsim.cute import Copy_Atom, UniversalCopy, make_fragment_like, make_layout, make_tiled_copy
from warpsim.program import copy

ROWS, COLS = 32, 8


def kernel(tid, *, dtype, check, fail, x, y):
    if fail == "keyerror":
        {}["the kernel's own bug"]
    if fail == "exit":
        sys.exit(3)
    tc = make_tiled_copy(Copy_Atom(UniversalCopy(16), dtype), make_layout((32, 1)), make_layout((1, COLS)))
    thr = tc.get_slice(tid)
    frag = make_fragment_like(thr.partition_S(x))
    copy(tc, thr.partition_S(x), frag)
    copy(tc, frag, thr.partition_D(y))


def reference(params, inputs, arch):
    x = inputs["x"]
    check = params["check"]
    if check == "raises":
        return {"y": x}["z"]
    if check == "transposed":
        return {"y": x.T.copy()}
    if check == "floats":
        return {"y": x.astype(np.float64) + 0.5}
    if check == "list":
        return [x]
    if check == "wrong":
        return {"y": x ^ 1}
    return {"y": x}


program = warpsim.Program(
    kernel, threads=32,
    params={"dtype": ("f16", "bf16"), "check": ("good", "raises", "transposed", "floats", "list", "wrong"),
            "fail": ("no", "keyerror", "exit")},
    inputs=lambda p: {"x": ((ROWS, COLS), p["dtype"])},
    outputs=lambda p: {"y": ((ROWS, COLS), p["dtype"])},
    reference=reference)
