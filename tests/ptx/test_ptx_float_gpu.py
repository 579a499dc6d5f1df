"""On a real GPU (skipped without CuPy or a GPU): the float kernels of test_ptx_float, loaded by the driver,
give the bits that warpsim.isa's models give (and so the PTX interpreter, which test_ptx_float checks
against the same models).

Each test runs one case of test_ptx_float with its kernel launched by CuPy instead of the interpreter
(``test_ptx_float.run`` replaced), so a mismatch reads "got" (the GPU) against "isa". The PTX targets
sm_90 (bf16 arithmetic needs it) with the PTX ISA version the driver supports; each kernel text is loaded
from its own file (``ptx_gpu``: CuPy memoizes modules by path). ``test_ptx_gpu_harness`` runs this file's
cases offline on a fake CuPy that memoizes as CuPy does.
Run: ``python -m pytest -q -m gpu tests/ptx/test_ptx_float_gpu.py``.
"""

import numpy as np
import pytest
import test_ptx_float as cases
from ptx_gpu import for_sm90, gpu_or_skip, launch, ptx_function

pytestmark = pytest.mark.gpu


def gpu_runner(cp, version, directory):
    """A stand-in for ``test_ptx_float.run`` launching the kernel on the GPU (``cp``: CuPy or a fake of it).

    Every kernel text gets its own file (``ptx_gpu.ptx_function``): CuPy memoizes modules by path, and
    one path for all kernels of a test ran the test's first kernel for every case after it.
    """
    def gpu_run(body, a=None, b=None, c=None, a64=None):
        text = for_sm90(cases.kernel(cases.LOADS + body + cases.STORES, params=cases._PARAMS), version)
        fn = ptx_function(cp, directory, text)
        z32 = np.zeros(cases.N, np.uint32)
        host = [z32 if x is None else x.astype(np.uint32) for x in (a, b, c)]
        host += [np.zeros(cases.N, np.uint64) if a64 is None else a64.astype(np.uint64), z32,
                 np.zeros(cases.N, np.uint64)]
        out = launch(cp, fn, cases.N, host)
        return out[4], out[5]
    return gpu_run


@pytest.fixture
def on_gpu(monkeypatch, tmp_path):
    cp, version = gpu_or_skip()
    monkeypatch.setattr(cases, "run", gpu_runner(cp, version, tmp_path))


@pytest.mark.parametrize("op,rnd,extra", cases.F32_ARITH)
def test_f32_arith_on_the_gpu(on_gpu, op, rnd, extra):
    cases.test_f32_arith(op, rnd, extra)


@pytest.mark.parametrize("op,type_,extra", cases.MINMAX)
def test_min_max_on_the_gpu(on_gpu, op, type_, extra):
    cases.test_min_max(op, type_, extra)


@pytest.mark.parametrize("op,type_,extra", cases.H_ARITH)
def test_half_arith_on_the_gpu(on_gpu, op, type_, extra):
    cases.test_half_arith(op, type_, extra)


@pytest.mark.parametrize("cmp", list(cases.CMP))
@pytest.mark.parametrize("boolop,ftz", [("", False), ("", True), ("xor", False)])
def test_setp_f32_on_the_gpu(on_gpu, cmp, boolop, ftz):
    cases.test_setp_f32(cmp, boolop, ftz)


@pytest.mark.parametrize("type_", ["f16x2", "bf16x2"])
@pytest.mark.parametrize("cmp", ["eq", "ltu", "ge", "nan", "neu"])
def test_setp_x2_on_the_gpu(on_gpu, type_, cmp):
    cases.test_setp_x2_two_predicates(type_, cmp)


@pytest.mark.parametrize("src,dst,rnd,extra", cases.CVT)
def test_cvt_on_the_gpu(on_gpu, src, dst, rnd, extra):
    cases.test_cvt(src, dst, rnd, extra)


@pytest.mark.parametrize("dst", ["f16x2", "bf16x2"])
@pytest.mark.parametrize("mods", ["rn", "rz", "rn.relu", "rz.satfinite"])
def test_cvt_pack_x2_on_the_gpu(on_gpu, dst, mods):
    cases.test_cvt_pack_x2(dst, mods)


@pytest.mark.parametrize("op", ["abs", "neg"])   # FADD.FTZ |x|, -RZ on sm_90: flushes (docs/numerics.md)
def test_abs_neg_ftz_f32_on_the_gpu(on_gpu, op):
    cases.test_abs_neg(op, "f32", ".ftz")


def test_sign_compare_and_immediates_on_the_gpu(on_gpu):
    for op in ("abs", "neg"):
        for type_, extra in (("f32", ""), ("f16", ".ftz"), ("bf16", ""), ("f16x2", "")):
            cases.test_abs_neg(op, type_, extra)
    cases.test_copysign()
    for cls in cases.TESTP:
        cases.test_testp(cls)
    for dtype in ("u32", "f32"):
        cases.test_set_f32(dtype)
    cases.test_set_f16x2()
    cases.test_float_immediates()


@pytest.mark.parametrize("name,type_", cases.MUFU16)
def test_mufu16_on_the_gpu(on_gpu, name, type_):
    cases.test_mufu16(name, type_)
