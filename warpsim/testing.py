"""Test your own kernels offline, in your CI: a pytest plugin and a bit-exact assertion.

Installing warpsim registers this module as a pytest plugin (entry point ``pytest11``); without the
install, enable it with ``pytest -p warpsim.testing`` or ``pytest_plugins = ["warpsim.testing"]`` in a
``conftest.py``. It gives:

- the fixture ``warpsim_kernel``: a function ``warpsim_kernel(source, kernel, arch="sm_90",
  nvcc_flags=())`` that compiles a ``.cu`` (nvcc), ``.ptx`` or CuTe DSL ``.py`` file (a relative path is
  taken from the test file's folder), loads it and returns a :class:`warpsim.frontends.kernel.Kernel`;
  ``kernel.launch(grid, block, args, smem=0)`` runs it on the simulated CTAs and
  ``kernel.buffers(result)`` names the buffers as the source does. Compiles are cached on disk
  (see :mod:`warpsim.frontends.compiled`); the fixture reuses a loaded module within the session. A test
  skips (with the reason) when nvcc or the CuTe DSL is missing: the compile, not the kernel, failed.
- the option ``--warpsim-sanitize[=TOOLS]`` (``race,sync,init,mem`` or ``all``, the default): every
  ``kernel.launch`` of a ``warpsim_kernel`` runs under the sanitizer (:mod:`warpsim.sanitize`, docs/guides/sanitizer.md)
  and a finding fails the test with the sanitizer's report; without findings the launch returns its result as
  before. Launches of Triton and Numba kernels inside ``warpsim.triton.simulate()`` / ``warpsim.numba.simulate()``
  too (the option sets ``WARPSIM_SANITIZE`` for the session, which both read).
- :func:`assert_bits_equal` (also importable without pytest): the two arrays must hold the same bits;
  a failure names each differing element by index, with both values in hex and decoded, and, when
  ``where`` is given, the CTA / lane / register that wrote it.

Example ``test_saxpy.py``::

    import numpy as np
    from warpsim.testing import assert_bits_equal

    def test_saxpy(warpsim_kernel):
        k = warpsim_kernel("saxpy.cu", "saxpy", arch="sm_80")
        x, y = np.arange(256, dtype=np.float32), np.ones(256, np.float32)
        out = k.buffers(k.launch(grid=2, block=128, args={"x": x, "y": y, "a": 2.0, "n": 256}))
        assert_bits_equal(out["y"], 2 * x + 1)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["assert_bits_equal", "bits_differences", "warpsim_kernel", "DECODERS", "SanitizedKernel"]

# name -> (bit width, decode(uint array) -> values as text); bf16 is raw uint16 bits
DECODERS = {
    "f16": (16, lambda u: u.astype(np.uint16).view(np.float16).astype(np.float64)),
    "bf16": (16, lambda u: (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)),
    "f32": (32, lambda u: u.astype(np.uint32).view(np.float32).astype(np.float64)),
    "f64": (64, lambda u: u.astype(np.uint64).view(np.float64)),
}
_FLOAT_NAMES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _as_bits(array):
    array = np.ascontiguousarray(array)
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return array.view(np.dtype(f"u{array.dtype.itemsize}"))


def bits_differences(got, want, dtype=None, where=None, limit=16):
    """Lines describing where ``got`` and ``want`` differ bit for bit (empty when they agree).

    ``dtype``: how to decode values (``"f16" "bf16" "f32" "f64"``, default from the arrays' dtype;
    integers are shown as integers). ``where(index) -> str``: who wrote element ``index`` (e.g.
    ``"CTA 1 lane 5 reg 2"``). At most ``limit`` elements are listed, then a count.

    bits_differences(np.float32([1, 2]), np.float32([1, 2])) == []
    bits_differences(np.float32([1, 2]), np.float32([1, 3]))[1].startswith("  [1]: got 0x40000000")
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return [f"shape differs: got {got.shape}, want {want.shape}"]
    if got.dtype.itemsize != want.dtype.itemsize:
        return [f"element size differs: got {got.dtype} ({got.dtype.itemsize} B), want {want.dtype} "
                f"({want.dtype.itemsize} B)"]
    g, w = _as_bits(got), _as_bits(want)
    bad = np.argwhere(g != w)
    if len(bad) == 0:
        return []
    name = dtype or _FLOAT_NAMES.get(got.dtype) or _FLOAT_NAMES.get(want.dtype)
    decode = DECODERS[name][1] if name in DECODERS else None
    digits = 2 * got.dtype.itemsize
    lines = [f"{len(bad)} of {g.size} elements differ" + (f" (decoded as {name})" if name else "") + ":"]
    for index in map(tuple, bad[:limit]):
        gv, wv = g[index], w[index]
        shown = (f"{float(decode(np.array([gv]))[0])!r} vs {float(decode(np.array([wv]))[0])!r}" if decode
                 else f"{got[index].item()!r} vs {want[index].item()!r}")
        who = f" ({where(index)})" if where else ""
        label = ", ".join(str(int(i)) for i in index)
        lines.append(f"  [{label}]{who}: got 0x{int(gv):0{digits}x}, want 0x{int(wv):0{digits}x}: {shown}")
    if len(bad) > limit:
        lines.append(f"  ... and {len(bad) - limit} more")
    return lines


def assert_bits_equal(got, want, dtype=None, where=None, limit=16, name="value"):
    """``AssertionError`` unless ``got`` and ``want`` hold the same bits (NaN payloads and the sign of
    zero count); the message lists the differing elements (see :func:`bits_differences`)."""
    lines = bits_differences(got, want, dtype=dtype, where=where, limit=limit)
    if lines:
        raise AssertionError(f"{name}: " + "\n".join(lines))


try:
    import pytest
except ImportError:                  # assert_bits_equal works without pytest
    pytest = None

class SanitizedKernel:
    """A :class:`~warpsim.frontends.kernel.Kernel` whose :meth:`launch` runs under the sanitizer (``tools``) and
    raises ``AssertionError`` with the report when it finds anything; everything else is the kernel's."""

    def __init__(self, kernel, tools):
        self._kernel, self._tools = kernel, tools

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def launch(self, grid=1, block=128, args=None, smem=0, cta=None, max_steps=None, uninit=()):
        from warpsim.frontends.kernel import parse_dim3
        from warpsim.sanitize import sanitize_launch
        k = self._kernel
        core = k.core_args(args or {})
        with k.naming_params():
            report = sanitize_launch(k.module, k.name, parse_dim3(grid, "--grid"), parse_dim3(block, "--block"), core,
                                     smem, k.arch.replace("_", ""), cta, max_steps, self._tools,
                                     [k.param_name(n) for n in uninit], name_params=k.name_params)
        if report.findings:
            raise AssertionError(f"warpsim sanitizer: {k.name}:\n{report.text()}")
        return report.result


if pytest is not None:
    def pytest_addoption(parser):
        parser.getgroup("warpsim").addoption(
            "--warpsim-sanitize", nargs="?", const="all", default=None, metavar="TOOLS",
            help="run every warpsim_kernel launch under the sanitizer (race,sync,init,mem or all): a finding fails "
                 "the test")

    def pytest_configure(config):
        tools = config.getoption("--warpsim-sanitize", default=None)
        if tools is not None:
            import os
            from warpsim.sanitize import parse_tools
            parse_tools(tools)                                   # a bad tool name fails the session at once
            os.environ["WARPSIM_SANITIZE"] = tools               # warpsim.triton's launches read it

    @pytest.fixture
    def warpsim_kernel(request):
        """``open(source, kernel, arch="sm_90", nvcc_flags=())`` -> a loaded kernel (see the module doc)."""
        from warpsim.frontends.compiled import CompileError
        from warpsim.frontends.kernel import open_kernel
        cache = request.config.__dict__.setdefault("_warpsim_kernels", {})
        folder = Path(str(request.fspath)).parent

        def open_(source, kernel, arch="sm_90", nvcc_flags=()):
            path = Path(source)
            path = path if path.is_absolute() else folder / path
            key = (str(path), kernel, arch, tuple(nvcc_flags), path.stat().st_mtime_ns if path.exists() else 0)
            if key not in cache:
                try:
                    cache[key] = open_kernel(path, kernel, arch=arch, nvcc_flags=tuple(nvcc_flags))
                except CompileError as e:
                    if "not found" in str(e) or "not installed" in str(e):
                        pytest.skip(str(e))
                    raise
            tools = request.config.getoption("--warpsim-sanitize", default=None)
            if tools is not None:
                from warpsim.sanitize import parse_tools
                return SanitizedKernel(cache[key], parse_tools(tools))
            return cache[key]

        return open_
