"""Collecting the GPU's results of the SFU approximations (MUFU), for warpsim's tables and models.

The 16-bit forms are modelled from such a collection (``warpsim.isa.mufu16``: ``python -m
warpsim.isa.mufu16 --from FILE.npz`` builds its tables, ``--check FILE.npz`` compares a new one); the
f32 and f64 forms are not modelled yet.

``ex2.approx``, ``rcp.approx``, ``rsqrt.approx``, ``sqrt.approx``, ``lg2.approx``, ``sin.approx``,
``cos.approx``, ``tanh.approx`` (f32, and f16/bf16/x2 where PTX has them) and ``rcp.approx.ftz.f64``
are specified by error bounds only; a bit-exact model needs the hardware's results. This module runs
each form (:data:`MUFU_FORMS`, kernels from :func:`hwcheck.campaigns.float_cases.float_kernel`) over a sweep of
inputs and writes inputs and results to an ``.npz`` file, for a model to be fitted and checked later:

- 16-bit forms: every pattern, ``0 .. 65535``, whatever ``start``, ``count`` and ``stride`` say (x2 forms:
  the pattern in the upper half and the pattern with its sign flipped in the lower half, so both halves
  see all 65536);
- f32 forms: ``start + stride * k`` for ``k < count`` (mod ``2**32``); ``stride 1, count 2**32`` is the
  exhaustive sweep (16 GiB of results: collect it in ranges);
- ``rcp.approx.ftz.f64``: the sweep in the upper 32 bits, the lower 32 bits zero.

``hwcheck collect --variants ex2.approx.f32 --count 16777216 --stride 256 --out FILE.npz`` runs it.

>>> [f.text for f in mufu_forms(["ex2.approx.ftz.bf16x2", "rcp.approx.ftz.f64"])]
['ex2.approx.ftz.bf16x2', 'rcp.approx.ftz.f64']
>>> sweep_inputs(mufu_forms(["tanh.approx.f16x2"])[0], 0, 3, 1).tolist() == [0x8000, 0x18001, 0x28002]
True
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from hwcheck.errors import HwcheckError
from hwcheck.campaigns.float_cases import FloatForm, float_kernel
from hwcheck.device.kernels import CVT_THREADS, module_source

__all__ = ["MUFU_FORMS", "MUFU_PREFIX", "mufu_forms", "mufu_kernel", "sweep_inputs", "collect", "write_npz_atomic"]

MUFU_PREFIX = "hwcheck_mufu_"
_F32 = [f"{op}.approx{ftz}.f32" for op in ("ex2", "rcp", "rsqrt", "sqrt", "lg2", "sin", "cos")
        for ftz in ("", ".ftz")] + ["tanh.approx.f32"]
_HALF = ["ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2",
         "tanh.approx.f16", "tanh.approx.f16x2", "tanh.approx.bf16", "tanh.approx.bf16x2"]
MUFU_FORMS = tuple(_F32 + _HALF + ["rcp.approx.ftz.f64"])
_REG = {"f32": "f32", "f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32", "f64": "f64"}


def mufu_forms(texts=None) -> list:
    """:class:`FloatForm` of each MUFU form named (default all); ``ValueError`` naming an unknown one."""
    forms = []
    for text in MUFU_FORMS if texts is None else texts:
        if text not in MUFU_FORMS:
            raise ValueError(f"--variants: {text!r} is not one of the MUFU forms: {', '.join(MUFU_FORMS)}")
        parts = text.split(".")
        t = parts[-1]
        forms.append(FloatForm(text, parts[0], tuple(parts[1:-1]), t, t, (_REG[t],), _REG[t]))
    return forms


def mufu_kernel(form: FloatForm):
    return float_kernel(form, MUFU_PREFIX)


def sweep_inputs(form: FloatForm, start: int, count: int, stride: int) -> np.ndarray:
    """The input register bits of a sweep (see the module docstring): uint32, uint64 for f64."""
    k = np.arange(count, dtype=np.uint64)
    x = (np.uint64(start) + np.uint64(stride) * k)
    if form.type == "f64":
        return (x & np.uint64(0xFFFFFFFF)) << np.uint64(32)
    if form.type.endswith("x2"):
        x &= np.uint64(0xFFFF)
        return ((x << np.uint64(16)) | (x ^ np.uint64(0x8000))).astype(np.uint32)
    if form.type in ("f16", "bf16"):
        return (x & np.uint64(0xFFFF)).astype(np.uint32)
    return (x & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def collect(gpu, forms, *, start: int = 0, count: int | None = None, stride: int = 1, chunk: int = 1 << 24,
            progress=None) -> dict:
    """Run each form on ``gpu`` over its sweep: ``{form text: (inputs, results)}``.

    f32/f64 forms sweep ``count`` (default ``2**24``) patterns from ``start`` by ``stride``; 16-bit forms
    all 65536. All forms run from one module; results come back in chunks of ``chunk`` inputs.
    """
    module = gpu.module(module_source([mufu_kernel(f) for f in forms]))
    out = {}
    for form in forms:
        wide = form.type in ("f32", "f64")
        n = (count or 1 << 24) if wide else 65536
        x = sweep_inputs(form, start, n, stride) if wide else sweep_inputs(form, 0, n, 1)
        words = 2 if form.type == "f64" else 1
        results = np.empty(n * words, np.uint32)
        if progress is not None:
            progress.start(form.text, n)
        for first in range(0, n, chunk):
            part = x[first:first + chunk]
            d = gpu.output(part.size * words)
            src = gpu.put(part)
            blocks = (part.size + CVT_THREADS - 1) // CVT_THREADS
            gpu.launch(module, mufu_kernel(form).name, blocks, CVT_THREADS, (src, src, src, d, np.int64(part.size)))
            results[first * words:(first + part.size) * words] = gpu.get(d)
            if progress is not None:
                progress.advance(part.size)
        if progress is not None:
            progress.finish("collected")
        out[form.text] = (x, results.view(np.uint64) if words == 2 else results)
    return out


def write_npz_atomic(path, arrays: dict) -> None:
    """``numpy.savez`` to a temporary file beside ``path``, then renamed over it; one-line errors."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".npz", dir=directory)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise HwcheckError(f"hwcheck: {path} not written: {e.strerror or e}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
