"""Loading and launching the float tests' PTX kernels on a real GPU through CuPy.

The harness fault of 2026-12-01 (docs/numerics.md, "The float GPU tests' harness fault"): CuPy memoizes
``RawModule(path=...)`` by its arguments -- the path, not the file's contents (``_get_raw_module`` in
cupy/_core/raw.pyx is ``@cupy._util.memoize(for_each_device=True)``). The tests wrote every kernel of
one test to the same ``tmp_path / "k.ptx"``, so every launch after a test's first ran the first kernel
again. ``ptx_function`` names each file by the hash of its text: one text, one path, one module.
"""

import hashlib

import pytest

# CUDA driver version (major * 1000 + minor * 10) -> the newest PTX ISA version it reads
PTX_ISA = ((13000, "9.0"), (12090, "8.8"), (12080, "8.7"), (12050, "8.5"), (12040, "8.4"), (12030, "8.3"),
           (12020, "8.2"), (12010, "8.1"), (12000, "8.0"))


def gpu_or_skip(cupy=None):
    """``(cp, ptx_version)`` of an sm_90 GPU, or skip the test saying why there is none."""
    cp = cupy if cupy is not None else pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        cc = cp.cuda.Device(0).compute_capability
        driver = cp.cuda.runtime.driverGetVersion()
    except Exception as e:                       # noqa: BLE001 -- no driver / no device: skip with its words
        pytest.skip(f"no CUDA GPU: {e}")
    if int(cc) < 90:
        pytest.skip(f"the float kernels target sm_90 (bf16 arithmetic); this GPU is sm_{cc}")
    version = next((v for d, v in PTX_ISA if driver >= d), None)
    if version is None:
        pytest.skip(f"CUDA driver {driver} is older than 12.0")
    return cp, version


def for_sm90(text, version):
    """The tests' PTX text (``.version 8.0``, ``.target sm_80``) retargeted to sm_90 and ``version``."""
    return text.replace(".version 8.0", f".version {version}").replace(".target sm_80", ".target sm_90")


def ptx_function(cp, directory, text, name="k"):
    """Kernel ``name`` of the PTX ``text``, loaded by the driver from a file named by the text's hash.

    >>> import hashlib; hashlib.sha256(b"x").hexdigest()[:16]
    '2d711642b726b044'
    """
    path = directory / f"k-{hashlib.sha256(text.encode()).hexdigest()[:16]}.ptx"
    if not path.exists():
        path.write_text(text)
    return cp.RawModule(path=str(path)).get_function(name)


def launch(cp, fn, threads, host):
    """Run ``fn`` on one CTA of ``threads`` threads with copies of the numpy arrays ``host`` (in parameter
    order); the arrays after the run."""
    dev = [cp.asarray(x) for x in host]
    fn((1,), (threads,), tuple(dev))
    cp.cuda.Device().synchronize()
    return [cp.asnumpy(x) for x in dev]
