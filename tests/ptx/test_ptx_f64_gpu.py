"""On a real GPU (skipped without CuPy or an sm_90 GPU): the f64 kernels of test_ptx_f64, loaded by the driver,
give the bits warpsim.isa's f64 models give.

Each test runs one case of test_ptx_f64 with its kernel launched by CuPy instead of the interpreter
(``test_ptx_f64.run`` replaced; each kernel text from its own file, ``ptx_gpu``), so a mismatch reads "got"
(the GPU) against "isa". ``test_f64_nan_rules_on_the_gpu`` asks every NaN question (which NaN an operation on NaNs
gives, of each sign and kind at each operand position; the NaN of an invalid operation; what cvt makes of a NaN)
lane by lane and prints every lane's answer.
Run: ``python -m pytest -q -s -m gpu tests/ptx/test_ptx_f64_gpu.py``.
"""

import numpy as np
import pytest
import test_ptx_f64 as cases
from ptx_gpu import for_sm90, gpu_or_skip, launch, ptx_function

pytestmark = pytest.mark.gpu


def gpu_runner(cp, version, directory):
    """A stand-in for ``test_ptx_f64.run`` launching the kernel on the GPU (``cp``: CuPy or a fake of it)."""
    def gpu_run(body, a=None, b=None, c=None):
        fn = ptx_function(cp, directory, for_sm90(cases.text(body), version))
        z = np.zeros(cases.N, np.uint64)
        host = [z if x is None else np.asarray(x).astype(np.uint64) for x in (a, b, c)]
        out = launch(cp, fn, cases.N, host + [z, np.zeros(cases.N, np.uint32)])
        return out[3], out[4]
    return gpu_run


@pytest.fixture
def on_gpu(monkeypatch, tmp_path):
    cp, version = gpu_or_skip()
    monkeypatch.setattr(cases, "run", gpu_runner(cp, version, tmp_path))


def test_f64_nan_rules_on_the_gpu(on_gpu, ops=None):
    """Every op of ``NAN_OPS`` on every NaN lane, all in one test (``-x`` stops nothing): prints each lane's
    operands, the GPU's result and the model's (run with ``-s`` to keep the table), then fails listing every
    lane that differs."""
    bad = []
    for op in ops or cases.NAN_OPS:
        table = cases.nan_table(op)
        print("\n".join(cases.nan_lines(op, table, every=True)))
        bad += cases.nan_lines(op, table)
    assert not bad, f"{len(bad)} NaN lanes differ:\n  " + "\n  ".join(bad)


@pytest.mark.parametrize("op,rnd", cases.ARITH)
def test_f64_arith_on_the_gpu(on_gpu, op, rnd):
    cases.test_f64_arith(op, rnd)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_f64_without_rounding_on_the_gpu(on_gpu, op):
    cases.test_f64_without_rounding_is_rn(op)


@pytest.mark.parametrize("op", ["min", "max", "abs", "neg", "copysign"])
def test_f64_select_and_sign_on_the_gpu(on_gpu, op):
    cases.test_f64_select_and_sign(op)


@pytest.mark.parametrize("cmp", list(cases.CMP))
def test_f64_setp_on_the_gpu(on_gpu, cmp):
    cases.test_f64_setp(cmp)


def test_f64_setp_with_a_predicate_set_testp_and_immediates_on_the_gpu(on_gpu):
    cases.test_f64_setp_with_a_predicate_and_set()
    for cls in cases.TESTP:
        cases.test_f64_testp(cls)
    cases.test_f64_immediates()


@pytest.mark.parametrize("src,dst,rnd,extra", cases.CVT)
def test_f64_cvt_on_the_gpu(on_gpu, src, dst, rnd, extra):
    cases.test_f64_cvt(src, dst, rnd, extra)
