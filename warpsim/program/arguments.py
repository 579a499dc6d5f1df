"""A program's params and inputs from command-line text: ``NAME=VALUE`` pairs and ``.npy`` files.

Shared by ``warpsim``'s verbs (:mod:`warpsim.commands.program_args`) and ``hwcheck``'s; each error is
a ``ValueError`` naming the option and the file.
"""

from __future__ import annotations

from warpsim.files import load_npy

__all__ = ["parse_pairs", "load_inputs", "load_npy"]       # load_npy lives in warpsim.files


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


