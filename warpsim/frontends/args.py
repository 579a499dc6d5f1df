"""A kernel launch written as text, as ``warpsim run`` / ``warpsim debug`` / ``hwcheck run`` take it alike: whether a
command line names a kernel source, ``--arg NAME=VALUE`` (one spelling for every verb: ``random:DTYPE:SHAPE[:BOUND]``
drawn from ``--seed``, ``zeros:DTYPE:SHAPE``, ``FILE.npy``, ``raw:FILE``, a number, a struct ``FIRST;TYPE:V;...``,
a TMA tensor map ``tensormap:BOX:SWIZZLE:TENSOR`` for a ``CUtensorMap`` parameter),
``--cta``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from warpsim.files import load_npy
from warpsim.frontends.cute_dsl import is_dsl_source
from warpsim.frontends.kernel import NUMERIC_KINDS
from warpsim.frontends.nvcc import CUDA_SUFFIXES
from warpsim.isa.floats import FP8, nearest_fp8
from warpsim.machine import MAX_GLOBAL_BYTES

__all__ = ["routes_here", "parse_arg_value", "parse_arg", "concrete_args", "arg_values", "parse_cta", "DTYPES",
           "NUMPY_NAMES", "dtype_key"]

DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64, "e4m3": np.uint8,
          "e5m2": np.uint8, "u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32,
          "i32": np.int32, "u64": np.uint64, "i64": np.int64}     # bf16, e4m3 and e5m2 held as their bits
# numpy's names of the same types are taken too (``zeros:float32:64``); bf16, e4m3 and e5m2 have none in numpy
NUMPY_NAMES = {np.dtype(t).name: k for k, t in DTYPES.items() if k not in ("bf16", "e4m3", "e5m2")}
_DTYPE_CHOICES = f"{', '.join(DTYPES)} (or numpy's names: {', '.join(NUMPY_NAMES)})"


def dtype_key(name):
    """The ``DTYPES`` key of a ``--arg`` spec's DTYPE: its own (``f32``) or numpy's name (``float32``); unknown
    names are returned as they are.

    >>> dtype_key("float32"), dtype_key("i8"), dtype_key("uint16")
    ('f32', 'i8', 'u16')
    """
    return NUMPY_NAMES.get(name, name)


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
    """A ``--arg`` value that is not random: an array from ``FILE.npy`` (numbers, in native byte order) or
    ``raw:FILE`` (its bytes as ``uint8``), ``zeros:DTYPE:SHAPE``, or an int / float scalar; ``ValueError``
    starting ``WHAT=TEXT``.

    parse_arg_value("12", "--arg n") == 12
    parse_arg_value("zeros:f32:2x3", "--arg c").shape == (2, 3)
    """
    if text.startswith("zeros:"):
        parts = text.split(":")
        if len(parts) == 3:
            parts[1] = dtype_key(parts[1])
        if len(parts) != 3 or parts[1] not in DTYPES:
            raise ValueError(f"{what}={text}: expected zeros:DTYPE:SHAPE with DTYPE one of {_DTYPE_CHOICES}")
        try:
            shape = tuple(int(v) for v in parts[2].split("x"))
        except ValueError:
            shape = (-1,)
        _check_size(f"{what}={text}", shape, np.dtype(DTYPES[parts[1]]).itemsize)
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


RANDOM_BYTES_PER_ELEMENT = 8          # a random array is drawn as float64 or uint64, then converted


def _check_size(what, shape, per_element):
    """``ValueError`` naming ``what`` for a negative extent, or for more than ``MAX_GLOBAL_BYTES`` of host memory at
    ``per_element`` bytes an element (checked before anything is allocated: the simulated global memory holds at
    most that, and a random array is drawn at 8 bytes an element whatever its type).

    >>> _check_size("--arg x=random:u32:65536x65536", (65536, 65536), 8)
    Traceback (most recent call last):
    ...
    ValueError: --arg x=random:u32:65536x65536: 4,294,967,296 elements need 34,359,738,368 bytes of host memory to make; the simulator's global memory holds at most 4,294,967,296
    """
    if any(v < 0 for v in shape):
        raise ValueError(f"{what}: SHAPE is non-negative integers joined by x, e.g. 64x64")
    count = 1
    for v in shape:
        count *= v
    if count * per_element > MAX_GLOBAL_BYTES:
        raise ValueError(f"{what}: {count:,} elements need {count * per_element:,} bytes of host memory to make; "
                         f"the simulator's global memory holds at most {MAX_GLOBAL_BYTES:,}")


def arg_values(pairs, seed=0):
    """``({name: value}, {name: "--arg NAME=VALUE"})`` of the ``--arg`` items (specs by :func:`parse_arg`, made
    concrete for ``seed`` by :func:`concrete_args`; the second dict names each in messages); ``ValueError`` for a
    malformed item or a name given twice."""
    specs, labels = {}, {}
    for pair in pairs:
        name, _spec = parse_arg(pair)
        if name in specs:
            raise ValueError(f"--arg {name}: given twice ({labels[name][len('--arg '):]} and {pair})")
        specs[name] = _spec
        labels[name] = f"--arg {pair}"
    return concrete_args(specs, seed), labels


_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_INTS = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32, "i32": np.int32,
         "u64": np.uint64, "i64": np.int64, "bf16": np.uint16}
_BITS_FLOATS = ("bf16", *FP8)          # float formats numpy lacks: drawn as floats, held as their bits


def parse_arg(pair: str):
    """``(name, spec)`` of one ``--arg NAME=VALUE``; a spec is ``("random", dtype, shape)``, a value, or
    ``("struct", first, [(ptx_type, value), ...])``.

    >>> parse_arg("a=random:f16:4x2")
    ('a', ('random', 'f16', (4, 2)))
    >>> parse_arg("a=random:f32:8:2")
    ('a', ('random', 'f32', (8,), 2.0))
    >>> parse_arg("n=7")
    ('n', 7)
    >>> parse_arg("a=random:f16:8;s32:8;s32:8")[1][2]
    [('s32', 8), ('s32', 8)]
    """
    name, sep, value = pair.partition("=")
    if not sep or not name:
        raise ValueError(f"--arg {pair}: expected NAME=VALUE")
    if value.startswith("tensormap:"):
        return name, _tensormap_spec(name, value)
    first, *fields = value.split(";")
    if first.startswith("random:"):
        parts = first.split(":")
        if len(parts) in (3, 4):
            parts[1] = dtype_key(parts[1])
        if len(parts) not in (3, 4) or parts[1] not in DTYPES:
            raise ValueError(f"--arg {name}={first}: expected random:DTYPE:SHAPE[:BOUND] with DTYPE one of "
                             f"{_DTYPE_CHOICES}")
        try:
            spec = ("random", parts[1], tuple(int(v) for v in parts[2].split("x")))
        except ValueError:
            raise ValueError(f"--arg {name}={first}: SHAPE is integers joined by x, e.g. 64x64") from None
        _check_size(f"--arg {name}={first}", spec[2], RANDOM_BYTES_PER_ELEMENT)
        if len(parts) == 4:
            try:
                bound = float(parts[3])
            except ValueError:
                bound = -1.0
            if not (0 < bound < float("inf")) or parts[1] not in (*_FLOATS, *_BITS_FLOATS):
                raise ValueError(f"--arg {name}={first}: BOUND is a positive number, for a float DTYPE "
                                 "(values uniform in [-BOUND, BOUND))")
            spec = (*spec, bound)
    else:
        spec = parse_arg_value(first, f"--arg {name}")
    if not fields:
        return name, spec
    extra = []
    for f in fields:
        ptype, sep, v = f.partition(":")
        if not sep:
            raise ValueError(f"--arg {name}: struct field {f!r}: expected TYPE:VALUE, e.g. s32:64")
        extra.append((ptype, parse_arg_value(v, f"--arg {name} field {ptype}")))
    return name, ("struct", spec, extra)


_SWIZZLES = ("none", "32B", "64B", "128B")


def _tensormap_spec(name, value):
    """``("tensormap", box, swizzle, tensor spec)`` of ``tensormap:BOX:SWIZZLE:TENSOR`` (TENSOR a ``random:`` or
    ``zeros:`` array; BOX in the array's axis order, e.g. 64x64)."""
    parts = value.split(":", 3)
    usage = (f"--arg {name}={value}: expected tensormap:BOX:SWIZZLE:TENSOR, e.g. tensormap:64x64:128B:random:f16:128x256 "
             f"(BOX in the tensor's axis order, SWIZZLE one of {', '.join(_SWIZZLES)}, TENSOR random:... or zeros:...)")
    if len(parts) != 4 or parts[2] not in _SWIZZLES or not parts[3].startswith(("random:", "zeros:")):
        raise ValueError(usage)
    try:
        box = tuple(int(v) for v in parts[1].split("x"))
    except ValueError:
        raise ValueError(usage) from None
    _, tensor = parse_arg(f"{name}={parts[3]}")
    shape = tensor[2] if isinstance(tensor, tuple) else tensor.shape
    if len(box) != len(shape):
        raise ValueError(f"--arg {name}={value}: BOX {parts[1]} has {len(box)} extents for a tensor of "
                         f"{len(shape)} axes")
    return ("tensormap", box, parts[2], tensor, parts[3].split(":")[1])


def _random(rng, dtype, shape, bound=1.0):
    if dtype in _FLOATS:
        return rng.uniform(-bound, bound, shape).astype(_FLOATS[dtype])
    if dtype == "bf16":
        return (rng.uniform(-bound, bound, shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dtype in FP8:                   # uniform values, each the nearest code's
        return nearest_fp8(rng.uniform(-bound, bound, shape), dtype)
    bits = np.dtype(_INTS[dtype]).itemsize * 8
    return rng.integers(0, 1 << bits, shape, dtype=np.uint64).astype(_INTS[dtype])


def concrete_args(specs: dict, seed: int) -> dict:
    """Concrete arguments for one seed: ``random`` arrays drawn in order from ``numpy.random.default_rng(seed)``
    (floats uniform in ``[-BOUND, BOUND)``, default 1, bf16 truncated and e4m3/e5m2 rounded to the nearest code;
    integers uniform over their bits), fresh copies of the others."""
    rng = np.random.default_rng(seed)

    def one(spec):
        if isinstance(spec, tuple) and spec and spec[0] == "random":
            return _random(rng, *spec[1:])
        if isinstance(spec, tuple) and spec and spec[0] == "struct":
            return [("u64", one(spec[1])), *spec[2]]
        if isinstance(spec, tuple) and spec and spec[0] == "tensormap":
            from warpsim.isa.tma import TensorMap
            return TensorMap(one(spec[3]), spec[1], spec[2], dtype="bf16" if spec[4] == "bf16" else "")
        return spec.copy() if isinstance(spec, np.ndarray) else spec
    return {name: one(spec) for name, spec in specs.items()}


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
