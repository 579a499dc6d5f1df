"""f64 instructions in the PTX interpreter, element by element against warpsim.isa's scalar models
(``fp64``, ``cvt``; tests/isa/test_float64.py checks those against exact arithmetic).

Each case is a small kernel: every thread loads three 64-bit operands ``a, b, c`` (``%rd5 %rd6 %rd7``;
their low 32 bits also in ``%r10 %r11 %r12``, low 16 in ``%h1``), runs one instruction, and stores ``%rd25``
and ``%r20``. ``test_ptx_f64_gpu.py`` runs the same cases on a GPU.
"""

import itertools
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


# ---- NaN: the H200's rules (warpsim.isa.fp64's docstring), one lane per question ------------------------

_Q, _S, _INF, _ONE = 0x7FF8000000000000, 0x7FF0000000000000, 0x7FF0000000000000, 0x3FF0000000000000
SIGN = 1 << 63
_NAN_FORMATS = {"f64": (11, 52), "f32": (8, 23), "f16": (5, 10), "bf16": (8, 7)}
_NUMBER = {"f64": _ONE, "f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}


def nan_bits(fmt, neg, quiet, payload):
    """A NaN of ``fmt``: sign, quiet bit and ``payload`` (fraction bits below the quiet bit, non-zero)."""
    eb, fb = _NAN_FORMATS[fmt]
    return (neg << (eb + fb)) | (((1 << eb) - 1) << fb) | (quiet << (fb - 1)) | payload


def _kinds(fmt, payload):
    return [(f"{'+-'[neg]}{'sq'[quiet]}NaN", nan_bits(fmt, neg, quiet, payload)) for neg in (0, 1) for quiet in (0, 1)]


def nan_lanes(arity, fmt="f64"):
    """``(what, a, b, c)`` lanes asking which NaN an operation gives. Two or three operands: at every position
    a number or a NaN of each sign and kind whose payload names the position (a: 0xA, b: 0xB, c: 0xC), every
    combination with at least one NaN, then the invalid operations; one operand: NaNs of each sign and kind
    with the payloads 1, alternating bits (some in the upper bits a narrowing cvt keeps) and all ones, then
    a few numbers."""
    if arity == 1:
        eb, fb = _NAN_FORMATS[fmt]
        payloads = (1, int("01" * fb, 2) & ((1 << (fb - 1)) - 1), (1 << (fb - 1)) - 1)
        lanes = [(f"{k} {p:#x}", x, 0, 0) for p in payloads for k, x in _kinds(fmt, p)]
        numbers = [("1", _NUMBER[fmt]), ("-0", 1 << (eb + fb)), ("+inf", ((1 << eb) - 1) << fb), ("subnormal", 1)]
        return lanes + [(w, x, 0, 0) for w, x in numbers]
    choices = [[("1", _ONE)] + [(f"{k}{'abc'[i]}", x) for k, x in _kinds("f64", 0xA + i)] for i in range(arity)]
    lanes = []
    for combo in itertools.product(*choices):
        if all(w == "1" for w, _ in combo):
            continue
        xs = [x for _, x in combo] + [0] * (3 - arity)
        lanes.append((" ".join(w for w, _ in combo), *xs))
    inf, ninf, q = _INF, SIGN | _INF, _Q | 0xC
    invalid = [("inf -inf", inf, ninf, 0), ("0 inf", 0, inf, 0), ("inf inf", inf, inf, 0), ("0 0", 0, 0, 0),
               ("-0 +0", SIGN, 0, 0)]
    if arity == 3:
        invalid = [("0 -inf +qNaNc", 0, ninf, q), ("inf 0 -sNaNc", inf, 0, SIGN | _S | 0xC),
                   ("inf 1 -inf", inf, _ONE, ninf), ("0 inf 1", 0, inf, _ONE), ("1 1 -inf", _ONE, _ONE, ninf)]
    return lanes + invalid


def _nan_line(op):
    """The kernel body of a NAN_OPS entry: the instruction on ``%rd5 %rd6 %rd7`` (or a cvt's registers)."""
    if not op.startswith("cvt"):
        regs = {"abs": 1, "neg": 1, "sqrt": 1, "rcp": 1, "fma": 3}.get(op.split(".")[0], 2)
        return f"{op} %rd25, {', '.join(('%rd5', '%rd6', '%rd7')[:regs])};"
    dst, src = op.split(".")[-2:]
    line = f"{op} {_DST[dst]}, {_SRC[src]};"
    return line + ("\n  cvt.u32.u16 %r20, %h4;" if _DST[dst] == "%h4" else "")


NAN_OPS = ["add.rn.f64", "sub.rn.f64", "mul.rn.f64", "fma.rn.f64", "div.rn.f64", "sqrt.rn.f64", "rcp.rn.f64",
           "min.f64", "max.f64", "abs.f64", "neg.f64", "cvt.rni.f64.f64",
           "cvt.f64.f32", "cvt.ftz.f64.f32", "cvt.f64.f16", "cvt.f64.bf16",
           "cvt.rn.f32.f64", "cvt.rz.f32.f64", "cvt.rn.sat.f32.f64", "cvt.rn.f16.f64", "cvt.rn.bf16.f64",
           "cvt.rzi.s32.f64", "cvt.rzi.u32.f64", "cvt.rzi.s16.f64", "cvt.rzi.u16.f64", "cvt.rzi.s64.f64",
           "cvt.rzi.u64.f64"]


def nan_table(op):
    """``[(what, a, b, c, got, isa)]``: ``op`` (a NAN_OPS entry) on every lane of ``nan_lanes``."""
    parts = op.split(".")
    src = parts[-1]
    arity = {"fma": 3, "add": 2, "sub": 2, "mul": 2, "div": 2, "min": 2, "max": 2}.get(parts[0], 1)
    lanes = nan_lanes(arity, src)
    cols = [np.array([lane[k] for lane in lanes] * (N // len(lanes) + 1), np.uint64)[:N] for k in (1, 2, 3)]
    got64, got32 = run(_nan_line(op), *cols)
    if parts[0] == "cvt":
        dst = parts[-2]
        mods = parts[1:-2]
        rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), "rn")
        x = cols[0] if src == "f64" else cols[0].astype(np.uint32)
        want = cvt_convert(x, dst=dst, src=src, rnd=rnd, ftz="ftz" in mods, sat="sat" in mods)
        got = got64 if _DST[dst] == "%rd25" else got32
    else:
        fn = getattr(fp64, f"f64_{parts[0]}")
        mods = (fp64.RN,) if len(parts) == 3 else ()
        want = isa(fn, *cols[:arity], mods=mods)
        got = got64
    return [(lane[0], *lane[1:], int(got[i]), int(want[i])) for i, lane in enumerate(lanes)]


def nan_lines(op, table, every=False):
    """Text lines of ``nan_table``'s rows: every row, or only those where the GPU (got) differs."""
    return [f"{op} {what}: a={a:#x} b={b:#x} c={c:#x}: got {got:#x}, isa {want:#x}{'' if got == want else '  DIFFERS'}"
            for what, a, b, c, got, want in table if every or got != want]


@pytest.mark.parametrize("op", NAN_OPS)
def test_f64_nan_rules(op):
    """Every NaN question of the model, lane by lane (on a GPU: test_ptx_f64_gpu, every op, every lane)."""
    bad = nan_lines(op, nan_table(op))
    assert not bad, f"{_nan_line(op)}\n  " + "\n  ".join(bad)


def test_nan_lanes_name_their_operands():
    lanes = nan_lanes(3)
    assert len(lanes) == 5 ** 3 - 1 + 5 <= N and len({lane[1:] for lane in lanes}) == len(lanes)
    what, a, b, c = lanes[0]
    assert (what, a, b, c) == ("1 1 +sNaNc", _ONE, _ONE, _S | 0xC)
    assert [x for x, _ in _kinds("f32", 5)] == ["+sNaN", "+qNaN", "-sNaN", "-qNaN"]
    assert {lane[1] for lane in nan_lanes(1, "f16")} >= {0x7C01, 0xFE00 | 0x155, 0x7DFF}


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


# ---- rcp.approx.ftz.f64: MUFU.RCP64H (proven on the H200 at every high word) ------------------------------

def test_rcp_approx_ftz_f64_is_the_rcp64h_model():
    from warpsim.isa.mufu_recip import f64_rcp_approx_ftz, recip_tables
    a = operands(1, "rcp", seed("rcp.approx.ftz.f64"))[0]
    a[:8] = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000001, 0x3FF0000000000000,
             0x0000000000000001, 0x4000000000000001]      # +-0, +-inf, NaN, 1, a subnormal, 2 with a low bit
    got, _ = run("rcp.approx.ftz.f64 %rd25, %rd5;", a=a)
    t = recip_tables()[0]
    want = np.array([int(f64_rcp_approx_ftz(np.uint64(x), t)) for x in a], np.uint64)
    check(got, want, "rcp.approx.ftz.f64")
    assert int(got[5]) == 0x3FF0000000000000 and int(got[7]) == 0x3FE0000000000000      # the low word ignored
    assert [int(x) >> 32 for x in got[:4]] == [0x7FF00000, 0xFFF00000, 0, 0x80000000]   # 1/+-0, 1/+-inf


# ---- refused at load -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,error,match", [
    ("fma.f64 %rd25, %rd5, %rd6, %rd7;", PtxSyntaxError, "needs a rounding modifier"),
    ("div.f64 %rd25, %rd5, %rd6;", PtxSyntaxError, "needs a rounding modifier"),
    ("sqrt.f64 %rd25, %rd5;", PtxSyntaxError, "needs a rounding modifier"),
    ("add.ftz.f64 %rd25, %rd5, %rd6;", UnsupportedType, r"\.ftz is not defined for add\.f64"),
    ("mul.rn.sat.f64 %rd25, %rd5, %rd6;", UnsupportedType, r"\.sat is not defined for mul\.f64"),
    ("min.NaN.f64 %rd25, %rd5, %rd6;", UnsupportedType, r"\.NaN is not defined for min\.f64"),
    ("setp.lt.ftz.f64 %p1, %rd5, %rd6;", UnsupportedType, r"\.ftz is not defined for setp\.f64"),
    ("rsqrt.approx.ftz.f64 %rd25, %rd5;", UnsupportedType, "MUFU approximation is not modelled"),
    ("rcp.approx.f64 %rd25, %rd5;", UnsupportedType, r"\.ftz is required \(the one form is rcp\.approx\.ftz\.f64\)"),
    ("rcp.approx.ftz.sat.f64 %rd25, %rd5;", UnsupportedType, r"\.sat is not a modifier of it"),
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
