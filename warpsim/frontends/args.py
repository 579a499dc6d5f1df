"""A kernel launch written as text, as ``warpsim run`` / ``warpsim debug`` / ``hwcheck run`` take it: whether a
command line names a kernel source, ``--arg NAME=VALUE`` values, ``--cta``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from warpsim.files import load_npy
from warpsim.frontends.cute_dsl import is_dsl_source
from warpsim.frontends.kernel import NUMERIC_KINDS
from warpsim.frontends.nvcc import CUDA_SUFFIXES

__all__ = ["routes_here", "parse_arg_value", "arg_values", "parse_cta", "DTYPES"]

DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64, "u8": np.uint8,
          "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32, "i32": np.int32,
          "u64": np.uint64, "i64": np.int64}


def routes_here(argv):
    """Whether ``warpsim run ARGV`` is for a kernel (:mod:`warpsim.commands.run_kernel`): its first positional
    argument is a ``.cu``, a ``.ptx`` or a CuTe DSL ``.py`` file."""
    for arg in argv:
        if arg.startswith("-"):
            return False             # options before the file: the program command's usage
        suffix = Path(arg).suffix.lower()
        return suffix == ".ptx" or suffix in CUDA_SUFFIXES or (suffix == ".py" and is_dsl_source(arg))
    return False


def parse_arg_value(text, what):
    """A ``--arg`` value: an array from ``FILE.npy`` (numbers, in native byte order) or ``raw:FILE`` (its bytes
    as ``uint8``), ``zeros:DTYPE:SHAPE``, or an int / float scalar; ``ValueError`` starting ``WHAT=TEXT``.

    parse_arg_value("12", "--arg n") == 12
    parse_arg_value("zeros:f32:2x3", "--arg c").shape == (2, 3)
    """
    if text.startswith("zeros:"):
        parts = text.split(":")
        if len(parts) != 3 or parts[1] not in DTYPES:
            raise ValueError(f"{what}={text}: expected zeros:DTYPE:SHAPE with DTYPE one of {', '.join(DTYPES)}")
        try:
            shape = tuple(int(v) for v in parts[2].split("x"))
        except ValueError:
            shape = (-1,)
        if any(v < 0 for v in shape):
            raise ValueError(f"{what}={text}: SHAPE is non-negative integers joined by x, e.g. 64x64")
        return np.zeros(shape, DTYPES[parts[1]])
    if text.startswith("raw:"):
        return _raw_bytes(text[len("raw:"):], f"{what}={text}")
    if text.endswith(".npy"):
        array = load_npy(f"{what}={text}", text,
                         objects_hint=f"give numbers, or the bytes as they are: {what}=raw:FILE")
        if array.dtype.kind not in NUMERIC_KINDS:
            raise ValueError(f"{what}={text}: holds {array.dtype.str}, not numbers; save a numeric array, or pass "
                             f"the file's bytes as they are: {what}=raw:{text}")
        return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))
    for convert in (lambda t: int(t, 0), float):
        try:
            return convert(text)
        except ValueError:
            pass
    raise ValueError(f"{what}={text}: expected FILE.npy, raw:FILE, an integer, a float or zeros:DTYPE:SHAPE")


def _raw_bytes(path, what):
    """The bytes of ``raw:FILE`` as a ``uint8`` array: a ``.npy`` file's data in the file's order and byte order
    (its header dropped), any other file whole."""
    try:
        with open(path, "rb") as f:
            is_npy = f.read(6) == b"\x93NUMPY"
    except OSError as e:
        raise ValueError(f"{what}: cannot read: {e.strerror or e}") from None
    if not is_npy:
        return np.fromfile(path, np.uint8)
    array = load_npy(what, path, objects_hint="its bytes are a pickle, not data")
    return np.frombuffer(array.tobytes(order="A"), np.uint8).copy()


def arg_values(pairs):
    """``({name: value}, {name: "--arg NAME=VALUE"})`` of the ``--arg`` items (values by
    :func:`parse_arg_value`; the second dict names each in messages); ``ValueError`` for a malformed item or a
    name given twice."""
    values, labels = {}, {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--arg {pair}: expected NAME=VALUE")
        if name in values:
            raise ValueError(f"--arg {name}: given twice ({labels[name][len('--arg '):]} and {pair})")
        values[name] = parse_arg_value(value, f"--arg {name}")
        labels[name] = f"--arg {pair}"
    return values, labels


def parse_cta(text, grid):
    """``--cta``: a CTA index (``int``, x fastest) or its ``(x, y, z)`` coordinates, from 0, inside ``grid``;
    ``ValueError`` naming ``--cta``.

    parse_cta("3", (4, 1, 1)) == 3
    parse_cta("1,0", (2, 2, 1)) == (1, 0, 0)
    """
    try:
        parts = [int(v) for v in text.split(",")]
    except ValueError:
        parts = []
    if not 1 <= len(parts) <= 3 or any(v < 0 for v in parts):
        raise ValueError(f"--cta {text}: expected a CTA index or X,Y,Z coordinates (integers from 0), e.g. 3 or 1,0,0")
    count = int(np.prod(grid))
    if len(parts) == 1 and "," not in text:
        if parts[0] >= count:
            raise ValueError(f"--cta {text}: outside the grid {grid} (CTAs 0 to {count - 1})")
        return parts[0]
    coords = tuple(parts) + (0,) * (3 - len(parts))
    if any(c >= g for c, g in zip(coords, grid)):
        raise ValueError(f"--cta {text}: outside the grid {grid}")
    return coords
