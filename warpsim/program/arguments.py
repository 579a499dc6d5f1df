"""A program's params and inputs from command-line text: ``NAME=VALUE`` pairs and ``.npy`` files.

Shared by ``warpsim``'s verbs (:mod:`warpsim.commands.program_args`) and ``hwcheck``'s; each error is
a ``ValueError`` naming the option and the file.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["parse_pairs", "load_inputs", "load_npy"]


def parse_pairs(option, items):
    """``{key: value}`` from ``["key=value", ...]`` (``--param``, ``--input``); ``ValueError`` names a bad item.

    >>> parse_pairs("--param", ["dtype=bf16", "product=pv"])
    {'dtype': 'bf16', 'product': 'pv'}
    """
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{option} {item!r}: expected NAME=VALUE")
        if key in out:
            raise ValueError(f"{option} {key}: given twice ({key}={out[key]} and {item})")
        out[key] = value
    return out


def load_inputs(items):
    """``{name: array}`` from ``--input NAME=FILE.npy`` items; ``ValueError`` for a file that is not a .npy array."""
    inputs = {}
    for name, path in parse_pairs("--input", items).items():
        inputs[name] = load_npy(f"--input {name}={path}", path)
    return inputs


def load_npy(what, path, objects_hint="give raw bits as uint16/uint32"):
    """The array of the ``.npy`` file ``path``; ``ValueError`` starting with ``what`` for a directory, an empty
    or truncated file, a file that is no ``.npy`` (an ``.npz``, text), or one of Python objects (``objects_hint``
    ends that message)."""
    if os.path.isdir(path):
        raise ValueError(f"{what}: is a directory, not a .npy file")
    try:
        with open(path, "rb") as f:
            head = f.read(6)
            f.seek(0)
            if head != b"\x93NUMPY":
                kind = "an empty file" if not head else "not a .npy file (no NumPy header)"
                raise ValueError(f"{what}: {kind}; save arrays with numpy.save")
            array = np.load(f, allow_pickle=False)
    except OSError as e:
        raise ValueError(f"{what}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        if str(e).startswith(what):
            raise
        if "allow_pickle" in str(e):
            raise ValueError(f"{what}: holds Python objects (a pickled array), not numbers; "
                             f"{objects_hint}") from None
        raise ValueError(f"{what}: not a readable .npy array ({e})") from None
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{what}: holds {type(array).__name__}, not one array (.npz?)")
    return array
