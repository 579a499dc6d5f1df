"""f64 instructions in the PTX interpreter, element by element against warpsim.isa's scalar models
(``fp64``, ``cvt``; tests/isa/test_float64.py checks those against exact arithmetic).

Each case is a small kernel: every thread loads three 64-bit operands ``a, b, c`` (``%rd5 %rd6 %rd7``;
their low 32 bits also in ``%r10 %r11 %r12``, low 16 in ``%h1``), runs one instruction, and stores ``%rd25``
and ``%r20``. ``test_ptx_f64_gpu.py`` runs the same cases on a GPU.
"""

import zlib

import numpy as np
import pytest
from ptx_helpers import kernel, nvcc_ptx

import warpsim.ptx
from warpsim.errors import PtxSyntaxError, UnsupportedType
from warpsim.isa import fp64
from warpsim.isa.cvt import cvt_convert
from warpsim.isa.fpcompare import CMP, TESTP
from warpsim.isa.fpinputs import float_operands

N = 256
LOADS = """
  mul.wide.u32 %rd1, %r0, 8;
  add.s64 %rd20, %rd10, %rd1; ld.global.u64 %rd5, [%rd20];
  add.s64 %rd21, %rd11, %rd1; ld.global.u64 %rd6, [%rd21];
  add.s64 %rd22, %rd12, %rd1; ld.global.u64 %rd7, [%rd22];
  cvt.u32.u64 %r10, %rd5; cvt.u32.u64 %r11, %rd6; cvt.u32.u64 %r12, %rd7; cvt.u16.u64 %h1, %rd5;
  mov.u64 %rd25, 0; mov.u32 %r20, 0;
"""
STORES = """
  add.s64 %rd23, %rd13, %rd1; st.global.u64 [%rd23], %rd25;
  add.s64 %rd24, %rd14, %rd0; st.global.u32 [%rd24], %r20;
"""
PARAMS = ("a", "b", "c", "out", "out32")
MASK64 = (1 << 64) - 1


def text(body):
    return kernel(LOADS + body + STORES, params=PARAMS)


def run(body, a=None, b=None, c=None):
    """``(out, out32)`` of the kernel running ``body`` between the loads and the stores."""
    z = np.zeros(N, np.uint64)
    args = [z.copy() if x is None else np.asarray(x).astype(np.uint64) for x in (a, b, c)]
    args += [z.copy(), np.zeros(N, np.uint32)]
    mod = warpsim.ptx.load(text(body))
    res = mod.launch(mod.kernels[0], grid=1, block=N, args=args, quiet=True)
    return res.buffers["out"], res.buffers["out32"]


def operands(n, op, seed, classes=("random-bits", "specials", "subnormal", "ties")):
    rng = np.random.default_rng(seed)
    parts = [float_operands(cls, N // len(classes), ("f64",) * n, op=op, rng=rng) for cls in classes]
    return [np.concatenate([p[i] for p in parts]) for i in range(n)]


def seed(*parts):
    """A fixed seed per case (``hash`` of a str changes from run to run)."""
    return zlib.crc32(repr(parts).encode())


def s64(x):
    x = int(x)
    return x - (1 << 64) if x >> 63 else x


def isa(fn, *arrays, mods=()):
    """``fn`` (an isa scalar model) element by element: uint64 bits (``uint32`` for 32-bit results)."""
    return np.array([int(fn(*[s64(v[i]) for v in arrays], *mods)) & MASK64 for i in range(arrays[0].size)],
                    np.uint64)


def check(got, want, what):
    got, want = np.asarray(got, np.uint64), np.asarray(want, np.uint64)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, (f"{what}: {bad.size} of {got.size} differ; first at {bad[0]}: "
                           f"got {int(got[bad[0]]):#x}, isa {int(want[bad[0]]):#x}")


# ---- arithmetic ---------------------------------------------------------------------------------------

RND = {"rn": fp64.RN, "rz": fp64.RZ, "rm": fp64.RM, "rp": fp64.RP}
ARITH = [(op, r) for op in ("add", "sub", "mul", "fma", "mad", "div", "sqrt", "rcp") for r in RND]
_ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "mad": 3, "div": 2, "sqrt": 1, "rcp": 1}
_REGS = ("%rd5", "%rd6", "%rd7")


@pytest.mark.parametrize("op,rnd", ARITH)
def test_f64_arith(op, rnd):
    n = _ARITY[op]
    isa_op = "fma" if op == "mad" else op
    classes = ("random-bits", "specials", "subnormal", "ties") if isa_op in ("add", "sub", "mul", "fma") else \
        ("random-bits", "specials", "subnormal", "huge-tiny")
    srcs = operands(n, isa_op, seed(op, rnd), classes)
    if isa_op == "fma":                                  # a quarter cancelling: c within ulps of -a*b
        with np.errstate(all="ignore"):
            p = srcs[0].view(np.float64) * srcs[1].view(np.float64)
        near = (-p).view(np.uint64) + np.uint64(3)
        pick = (np.arange(N) % 4 == 0) & np.isfinite(p)
        srcs[2] = np.where(pick, near, srcs[2])
    line = f"{op}.{rnd}.f64 %rd25, {', '.join(_REGS[:n])};"
    got, _ = run(line, *srcs)
    check(got, isa(getattr(fp64, f"f64_{isa_op}"), *srcs, mods=(RND[rnd],)), line)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_f64_without_rounding_is_rn(op):
    a, b = operands(2, op, 3)
    got, _ = run(f"{op}.f64 %rd25, %rd5, %rd6;", a, b)
    check(got, isa(getattr(fp64, f"f64_{op}"), a, b, mods=(fp64.RN,)), f"{op}.f64")


@pytest.mark.parametrize("op", ["min", "max", "abs", "neg", "copysign"])
def test_f64_select_and_sign(op):
    n = 1 if op in ("abs", "neg") else 2
    srcs = operands(n, op, 5, ("random-bits", "specials", "subnormal", "huge-tiny"))
    srcs[0][::9] = srcs[-1][::9] ^ np.uint64(1 << 63)                  # +-0 and x, -x pairs
    line = f"{op}.f64 %rd25, {', '.join(_REGS[:n])};"
    got, _ = run(line, *srcs)
    check(got, isa(getattr(fp64, f"f64_{op}"), *srcs), line)


@pytest.mark.parametrize("cmp", list(CMP))
def test_f64_setp(cmp):
    a, b = operands(2, "setp", 6, ("random-bits", "specials", "subnormal", "huge-tiny"))
    a[::5] = b[::5]
    a[1::7] = b[1::7] ^ np.uint64(1 << 63)
    line = (f"setp.{cmp}.f64 %p1|%p2, %rd5, %rd6;\n"
            f"  selp.u32 %r21, 1, 0, %p1; selp.u32 %r22, 2, 0, %p2; or.b32 %r20, %r21, %r22;")
    _, got = run(line, a, b)
    t = isa(fp64.f64_setp, a, b, mods=(CMP[cmp],))
    check(got, t | ((1 - t) << np.uint64(1)), line)


def test_f64_setp_with_a_predicate_and_set():
    a, b = operands(2, "setp", 8, ("random-bits", "specials", "subnormal", "huge-tiny"))
    c = np.random.default_rng(5).integers(0, 2, N).astype(np.uint64)
    line = ("setp.ne.u64 %p3, %rd7, 0;\n  setp.ltu.and.f64 %p1, %rd5, %rd6, %p3;\n  selp.u32 %r21, 1, 0, %p1;\n"
            "  set.ge.f32.f64 %r22, %rd5, %rd6; set.ge.u32.f64 %r23, %rd5, %rd6;\n"
            "  xor.b32 %r20, %r21, %r22; xor.b32 %r20, %r20, %r23;")
    _, got = run(line, a, b, c)
    lt = isa(fp64.f64_setp, a, b, mods=(CMP["ltu"],)) & c
    want = lt ^ isa(fp64.f64_set, a, b, mods=(CMP["ge"], True)) ^ isa(fp64.f64_set, a, b, mods=(CMP["ge"], False))
    check(got, want, "setp.ltu.and.f64, set.ge.{f32,u32}.f64")


@pytest.mark.parametrize("cls", list(TESTP))
def test_f64_testp(cls):
    (a,) = operands(1, "testp", 4, ("random-bits", "specials", "subnormal", "huge-tiny"))
    _, got = run(f"testp.{cls}.f64 %p1, %rd5;\n  selp.u32 %r20, 1, 0, %p1;", a)
    check(got, isa(fp64.f64_testp, a, mods=(TESTP[cls],)), f"testp.{cls}.f64")


def test_f64_immediates():
    got, _ = run("add.rn.f64 %rd25, %rd5, 0d3FF0000000000000;\n  fma.rn.f64 %rd25, %rd25, 2.5, -1.0;",
                 np.full(N, 0x4000000000000000, np.uint64))
    check(got, np.full(N, np.float64(6.5).view(np.uint64)), "(2 + 1) * 2.5 - 1")


# ---- NaN: the assumed rules (warpsim.isa.fp64's docstring), one lane per question ---------------------------

_Q, _S, _INF, _ONE = 0x7FF8000000000000, 0x7FF0000000000000, 0x7FF0000000000000, 0x3FF0000000000000
SIGN = 1 << 63
NAN_CASES = [   # (what, a, b, c): the lanes of test_f64_nan_rules
    ("sNaN + 1", _S | 5, _ONE, 0), ("1 + -qNaN payload", _ONE, SIGN | _Q | 7, 0),
    ("qNaN + sNaN", _Q | 9, _S | 3, 0), ("sNaN + qNaN", _S | 3, _Q | 9, 0), ("-sNaN + +sNaN", SIGN | _S | 1, _S | 2, 0),
    ("inf + -inf", _INF, SIGN | _INF, 0), ("0 * inf", 0, _INF, 0), ("0 * -inf + NaN", 0, SIGN | _INF, _Q | 4),
    ("1 * 1 + sNaN", _ONE, _ONE, _S | 6), ("NaN * NaN + NaN", _Q | 1, _Q | 2, _Q | 3),
    ("1 * NaN + NaN", _ONE, _Q | 2, _Q | 3),
    ("all-ones NaN", (1 << 64) - 1, _ONE, _ONE), ("inf * 1 + -inf", _INF, _ONE, SIGN | _INF),
]
NAN_OPS = [("add.rn.f64 %rd25, %rd5, %rd6;", "add"), ("sub.rn.f64 %rd25, %rd5, %rd6;", "sub"),
           ("mul.rn.f64 %rd25, %rd5, %rd6;", "mul"), ("fma.rn.f64 %rd25, %rd5, %rd6, %rd7;", "fma"),
           ("div.rn.f64 %rd25, %rd5, %rd6;", "div"), ("sqrt.rn.f64 %rd25, %rd5;", "sqrt"),
           ("rcp.rn.f64 %rd25, %rd5;", "rcp"), ("min.f64 %rd25, %rd5, %rd6;", "min"),
           ("max.f64 %rd25, %rd5, %rd6;", "max"),
           ("abs.f64 %rd25, %rd5;", "abs"), ("neg.f64 %rd25, %rd5;", "neg"),
           ("cvt.rni.f64.f64 %rd25, %rd5;", "cvt.rni.f64.f64"), ("cvt.f64.f32 %rd25, %r10;", "cvt.f64.f32")]


@pytest.mark.parametrize("line,op", NAN_OPS)
def test_f64_nan_rules(line, op):
    """Every NaN question of the model, lane by lane; on a GPU (test_ptx_f64_gpu) a failure lists them all."""
    cols = [np.array([case[k] for case in NAN_CASES] * (N // len(NAN_CASES) + 1), np.uint64)[:N] for k in (1, 2, 3)]
    if op == "cvt.f64.f32":                                     # f32 NaNs: quiet, signalling, signs, payloads
        cols[0][:6] = [0x7FC00000, 0x7F800001, 0xFFC00005, 0xFFBFFFFF, 0x7FFFFFFF, 0xFF800000]
    got, _ = run(line, *cols)
    if op.startswith("cvt"):
        src = "f32" if op.endswith("f32") else "f64"
        x = cols[0].astype(np.uint32) if src == "f32" else cols[0]
        want = cvt_convert(x, dst="f64", src=src, rnd="rni" if src == "f64" else "rn")
    else:
        fn = getattr(fp64, f"f64_{op}")
        n = fn.py_func.__code__.co_argcount - (1 if op in ("add", "sub", "mul", "fma", "div", "sqrt", "rcp") else 0)
        want = isa(fn, *cols[:n], mods=(fp64.RN,) if n < fn.py_func.__code__.co_argcount else ())
    bad = [f"{NAN_CASES[i][0]}: got {int(got[i]):#x}, isa {int(want[i]):#x}" for i in range(len(NAN_CASES))
           if got[i] != want[i]]
    assert not bad, f"{line}\n  " + "\n  ".join(bad)
    check(got, want, line)


# ---- cvt ------------------------------------------------------------------------------------------------

_DST = {"f64": "%rd25", "s64": "%rd25", "u64": "%rd25", "f32": "%r20", "s32": "%r20", "u32": "%r20",
        "f16": "%h4", "bf16": "%h4", "s16": "%h4", "u16": "%h4"}
_SRC = {"f64": "%rd5", "s64": "%rd5", "u64": "%rd5", "f32": "%r10", "s32": "%r10", "u32": "%r10",
        "f16": "%h1", "bf16": "%h1"}
CVT = ([("f64", "f32", r, x) for r in RND for x in ("", ".ftz")] + [("f64", "f32", "rn", ".sat")] +
       [("f32", "f64", "", x) for x in ("", ".ftz")] + [("f16", "f64", "", ""), ("bf16", "f64", "", "")] +
       [("f64", "f16", r, "") for r in RND] + [("f64", "bf16", "rn", ""), ("f64", "bf16", "rz", "")] +
       [("f64", d, r, "") for d in ("s32", "u32", "s64", "u64", "s16") for r in ("rni", "rzi", "rmi", "rpi")] +
       [(s, "f64", r, "") for s in ("s32", "u32", "s64", "u64") for r in RND] +
       [("f64", "f64", r, "") for r in ("rni", "rzi", "rmi", "rpi")])


@pytest.mark.parametrize("src,dst,rnd,extra", CVT)
def test_f64_cvt(src, dst, rnd, extra):
    rng = np.random.default_rng(seed(src, dst, rnd, extra))
    if src in ("s32", "u32", "s64", "u64"):
        classes = ("random-bits", "specials", "ties", "huge-tiny")
    else:
        classes = ("random-bits", "specials", "subnormal", "ties")
    kind = {"f16": "f16", "bf16": "bf16"}.get(src, src)
    parts = [float_operands(c, N // 4, (kind,), op="cvt", dst=dst, rng=rng)[0] for c in classes]
    x = np.concatenate(parts).astype(np.uint64)
    mods = ".".join(m for m in (rnd, extra.strip(".")) if m)
    line = f"cvt{'.' + mods if mods else ''}.{dst}.{src} {_DST[dst]}, {_SRC[src]};"
    if _DST[dst] == "%h4":
        line += "\n  cvt.u32.u16 %r20, %h4;"
    got64, got32 = run(line, x)
    got = got64 if _DST[dst] == "%rd25" else got32
    flags = {m: m in extra.split(".") for m in ("ftz", "sat")}
    xin = x if src in ("f64", "s64", "u64") else (x & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    if src in ("f16", "bf16"):
        xin = (x & np.uint64(0xFFFF)).astype(np.uint32)
    want = cvt_convert(xin, dst=dst, src=src, rnd=rnd or "rn", **flags)
    if dst == "s16":
        want = want & np.uint64(0xFFFF)
    check(got, want, line)


# ---- refused at load -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,error,match", [
    ("fma.f64 %rd25, %rd5, %rd6, %rd7;", PtxSyntaxError, "needs a rounding modifier"),
    ("div.f64 %rd25, %rd5, %rd6;", PtxSyntaxError, "needs a rounding modifier"),
    ("sqrt.f64 %rd25, %rd5;", PtxSyntaxError, "needs a rounding modifier"),
    ("add.ftz.f64 %rd25, %rd5, %rd6;", UnsupportedType, r"\.ftz is not defined for add\.f64"),
    ("mul.rn.sat.f64 %rd25, %rd5, %rd6;", UnsupportedType, r"\.sat is not defined for mul\.f64"),
    ("min.NaN.f64 %rd25, %rd5, %rd6;", UnsupportedType, r"\.NaN is not defined for min\.f64"),
    ("setp.lt.ftz.f64 %p1, %rd5, %rd6;", UnsupportedType, r"\.ftz is not defined for setp\.f64"),
    ("rcp.approx.ftz.f64 %rd25, %rd5;", UnsupportedType, "MUFU approximation is not modelled"),
    ("cvt.rna.tf32.f64 %r20, %rd5;", UnsupportedType, r"cvt to \.tf32 takes an \.f32 source"),
    ("cvt.rn.ftz.f16.f64 %h4, %rd5;", UnsupportedType, r"\.ftz needs an \.f32 source or destination"),
    ("cvt.f32.f64 %r20, %rd5;", PtxSyntaxError, "a narrowing cvt needs a rounding modifier"),
])
def test_f64_bad_forms_refused_with_the_instruction(line, error, match):
    with pytest.raises(error, match=match) as exc:
        warpsim.ptx.load(text(line))
    assert line.split()[0] in str(exc.value)


# ---- nvcc ------------------------------------------------------------------------------------------------

SOURCE = r"""
__global__ void dk(const double* a, const double* b, const double* c, double* out, long long* iout, float* fout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double x = a[i], y = b[i], z = c[i];
    double* o = out + 6 * i;
    o[0] = fma(x, y, z);
    o[1] = __dadd_rz(x, y);
    o[2] = __dmul_ru(x, y);
    o[3] = x / y;
    o[4] = sqrt(fabs(x));
    o[5] = fmin(x, y) + (double)(float)z;
    iout[2 * i] = __double2ll_rn(x);
    iout[2 * i + 1] = (long long)__double2uint_rz(y);
    fout[i] = __double2float_rd(x);
}
"""


def test_nvcc_double_kernel(tmp_path):
    """What nvcc emits for double arithmetic runs, and agrees with the isa's models."""
    path = nvcc_ptx(tmp_path, SOURCE)
    ptx = path.read_text()
    for form in ("fma.rn.f64", "add.rz.f64", "mul.rp.f64", "div.rn.f64", "sqrt.rn.f64", "cvt.rn.f32.f64",
                 "cvt.f64.f32", "cvt.rni.s64.f64", "cvt.rzi.u32.f64", "cvt.rm.f32.f64"):
        assert form in ptx, form
    mod = warpsim.ptx.load(path)
    a, b, c = operands(3, "fma", 12, ("random-bits", "specials", "ties", "huge-tiny"))
    out, iout, fout = np.zeros(6 * N), np.zeros(2 * N, np.int64), np.zeros(N, np.float32)
    res = mod.launch(mod.kernels[0], grid=2, block=N // 2, quiet=True,
                     args=[a.view(np.float64), b.view(np.float64), c.view(np.float64), out, iout, fout])
    buf = {k: res.buffers[n] for k, (n, _) in zip(("a", "b", "c", "out", "iout", "fout"), mod.params(mod.kernels[0]))}
    o = buf["out"].view(np.uint64).reshape(N, 6)
    rn = (fp64.RN,)
    check(o[:, 0], isa(fp64.f64_fma, a, b, c, mods=rn), "fma")
    check(o[:, 1], isa(fp64.f64_add, a, b, mods=(fp64.RZ,)), "__dadd_rz")
    check(o[:, 2], isa(fp64.f64_mul, a, b, mods=(fp64.RP,)), "__dmul_ru")
    check(o[:, 3], isa(fp64.f64_div, a, b, mods=rn), "x / y")
    check(o[:, 4], isa(fp64.f64_sqrt, isa(fp64.f64_abs, a), mods=rn), "sqrt(fabs(x))")
    zf = cvt_convert(cvt_convert(c, dst="f32", src="f64", rnd="rn").astype(np.uint32), dst="f64", src="f32", rnd="rn")
    check(o[:, 5], isa(fp64.f64_add, isa(fp64.f64_min, a, b), zf, mods=rn), "fmin(x, y) + (double)(float)z")
    i64 = buf["iout"].view(np.uint64).reshape(N, 2)
    check(i64[:, 0], cvt_convert(a, dst="s64", src="f64", rnd="rni"), "__double2ll_rn")
    check(i64[:, 1] & np.uint64(0xFFFFFFFF), cvt_convert(b, dst="u32", src="f64", rnd="rzi"), "__double2uint_rz")
    check(buf["fout"].view(np.uint32), cvt_convert(a, dst="f32", src="f64", rnd="rm"), "__double2float_rd")
