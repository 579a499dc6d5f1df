"""The PTX GPU tests' harness, offline: their cases run on a fake CuPy (``fake_cupy``) that executes each
kernel on warpsim's interpreter and memoizes modules by path as CuPy does.

The fault of 2026-12-01: ``pytest -m gpu tests/ptx/test_ptx_float_gpu.py`` on the H200 failed
``abs.ftz.f16`` with results equal to the inputs on 174 of 256 lanes, which no ``abs`` gives. Every kernel of
a test was written to one file, ``tmp_path / "k.ptx"``, and CuPy's ``RawModule(path=...)`` is memoized by
the path: each case after a test's first ran the first case's kernel (``abs.f32``, which leaves the low 16
bits, the f16 input, unchanged). ``test_one_path_for_two_kernels_reproduces_the_fault`` shows that on the
fake; the harness now names each file by its text's hash (``ptx_gpu.ptx_function``).
"""

import numpy as np
import pytest
import test_ptx_float as cases
import test_ptx_float_gpu as gpu_cases
from fake_cupy import FakeCupy
from ptx_gpu import for_sm90, gpu_or_skip, launch, ptx_function


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    cp, version = gpu_or_skip(FakeCupy())
    monkeypatch.setattr(cases, "run", gpu_cases.gpu_runner(cp, version, tmp_path))
    return cp


def test_the_gpu_file_s_multi_case_test_passes_on_the_fake(fake_gpu):
    """The test that failed on the H200 (abs.ftz.f16 after abs.f32 in one test) runs each of its kernels."""
    gpu_cases.test_sign_compare_and_immediates_on_the_gpu(None)
    assert len(fake_gpu.loaded) == 2 * 4 + 1 + len(cases.TESTP) + 2 + 1 + 1    # one module per kernel text


def test_one_path_for_two_kernels_reproduces_the_fault(tmp_path):
    """The old harness: two kernels written one after the other to one path; the second launch runs the
    first kernel, and ``abs.ftz.f16`` reads back its inputs on the lanes ``abs.f32`` leaves alone."""
    cp, version = gpu_or_skip(FakeCupy())
    (a,) = cases.operands(("f16",), "abs", 7)
    outs = []
    for line in ("abs.f32 %r20, %r10;", "abs.ftz.f16 %h4, %h1;\n  cvt.u32.u16 %r20, %h4;"):
        text = for_sm90(cases.kernel(cases.LOADS + line + cases.STORES, params=cases._PARAMS), version)
        path = tmp_path / "k.ptx"
        path.write_text(text)
        fn = cp.RawModule(path=str(path)).get_function("k")
        z32 = np.zeros(cases.N, np.uint32)
        outs.append(launch(cp, fn, cases.N, [a, z32, z32, np.zeros(cases.N, np.uint64), z32,
                                            np.zeros(cases.N, np.uint64)])[4])
    assert np.array_equal(outs[0], outs[1])                        # the first kernel, run twice
    assert np.array_equal(outs[1] & 0xFFFF, a & 0xFFFF)            # "results equal to the inputs"
    negative = (a & 0x8000) != 0
    assert negative.sum() > 50                                     # lanes the real abs.ftz.f16 changes


def test_ptx_function_gives_each_text_its_module(tmp_path):
    cp, version = gpu_or_skip(FakeCupy())
    texts = [for_sm90(cases.kernel(cases.LOADS + f"mov.u32 %r20, {k};" + cases.STORES, params=cases._PARAMS),
                      version) for k in (1, 2, 1)]
    fns = [ptx_function(cp, tmp_path, t) for t in texts]
    assert len(cp.loaded) == 2
    z32, z64 = np.zeros(cases.N, np.uint32), np.zeros(cases.N, np.uint64)
    got = [launch(cp, fn, cases.N, [z32, z32, z32, z64, z32, z64])[4][0] for fn in fns]
    assert got == [1, 2, 1]


def test_the_f64_gpu_file_runs_on_the_fake(monkeypatch, tmp_path):
    """test_ptx_f64_gpu's plumbing (parameters, 64-bit buffers, the multi-case test) on the fake GPU."""
    import test_ptx_f64 as f64_cases
    import test_ptx_f64_gpu as f64_gpu
    cp, version = gpu_or_skip(FakeCupy())
    monkeypatch.setattr(f64_cases, "run", f64_gpu.gpu_runner(cp, version, tmp_path))
    f64_gpu.test_f64_setp_with_a_predicate_set_testp_and_immediates_on_the_gpu(None)
    f64_gpu.test_f64_nan_rules_on_the_gpu(None, ["fma.rn.f64"])
    f64_gpu.test_f64_cvt_on_the_gpu(None, "f64", "f32", "rm", "")
    assert len(cp.loaded) == 1 + len(f64_cases.TESTP) + 1 + 1 + 1


class _Collected(Exception):
    """Raised by the collecting stand-in for ``run`` once it has the kernel's body."""


def test_every_f64_gpu_kernel_assembles_for_sm90(monkeypatch, tmp_path):
    """Each kernel test_ptx_f64_gpu.py will load assembles with ``ptxas -arch=sm_90`` (no INVALID_PTX on the
    GPU); skipped without ptxas."""
    import shutil
    import subprocess

    import test_ptx_f64 as f64_cases
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not on PATH")
    bodies = []

    def collect(body, *args, **kw):
        bodies.append(body)
        raise _Collected
    monkeypatch.setattr(f64_cases, "run", collect)
    calls = ([(f64_cases.test_f64_arith, a) for a in f64_cases.ARITH] +
             [(f64_cases.test_f64_without_rounding_is_rn, (op,)) for op in ("add", "sub", "mul")] +
             [(f64_cases.test_f64_select_and_sign, (op,)) for op in ("min", "max", "abs", "neg", "copysign")] +
             [(f64_cases.test_f64_setp, (c,)) for c in f64_cases.CMP] +
             [(f64_cases.test_f64_testp, (c,)) for c in f64_cases.TESTP] +
             [(f64_cases.test_f64_setp_with_a_predicate_and_set, ()), (f64_cases.test_f64_immediates, ())] +
             [(f64_cases.test_f64_nan_rules, (op,)) for op in f64_cases.NAN_OPS] +
             [(f64_cases.test_f64_cvt, a) for a in f64_cases.CVT])
    for fn, args in calls:
        with pytest.raises(_Collected):
            fn(*args)
    refused = []
    for i, body in enumerate(bodies):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(for_sm90(f64_cases.text(body), "9.0"))
        r = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        if r.returncode:
            refused.append(f"{body.strip().splitlines()[0]}: {r.stderr.strip()[:200]}")
    assert len(bodies) == len(calls) and not refused, refused
