"""Float instructions in the PTX interpreter, element by element against warpsim.isa's batched models.

Each case is a small kernel: every thread loads ``a, b, c`` (uint32 register bits, also as the low
halves ``%h1 %h2 %h3``) and ``a64`` (64 bits, ``%rd5``), runs one float instruction, and stores
``%r20`` (and ``%rd20``). The same bits go through ``warpsim.isa.fpbatch`` / ``cvt_convert``; the two
must agree on every element: random bits, specials, subnormals, huge/tiny values and ties
(``warpsim.isa.fpinputs``).
"""

import zlib

import numpy as np
import pytest
from ptx_helpers import kernel, nvcc_ptx

import warpsim.ptx
from warpsim.errors import PtxSyntaxError, UnsupportedType
from warpsim.isa import sfu_sincos
from warpsim.isa.cvt import FLOAT_CODES, cvt_convert, cvt_float, cvt_pack
from warpsim.isa.fpbatch import float_arith, float_minmax, float_setp, float_sign, float_testp
from warpsim.isa.fpcompare import CMP, TESTP
from warpsim.isa.fpinputs import float_operands
from warpsim.isa.mufu16 import float_mufu16
from warpsim.isa.rounding import RN
from tests.docs.pages import section

N = 256                     # threads: one CTA of 8 warps
LOADS = """
  add.s64 %rd20, %rd10, %rd0; ld.global.u32 %r10, [%rd20];
  add.s64 %rd21, %rd11, %rd0; ld.global.u32 %r11, [%rd21];
  add.s64 %rd22, %rd12, %rd0; ld.global.u32 %r12, [%rd22];
  cvt.u16.u32 %h1, %r10; cvt.u16.u32 %h2, %r11; cvt.u16.u32 %h3, %r12;
  mul.wide.u32 %rd1, %r0, 8;
  add.s64 %rd23, %rd13, %rd1; ld.global.u64 %rd5, [%rd23];
  mov.u32 %r20, 0; mov.u64 %rd20, 0;
"""
STORES = """
  add.s64 %rd24, %rd14, %rd0; st.global.u32 [%rd24], %r20;
  add.s64 %rd25, %rd15, %rd1; st.global.u64 [%rd25], %rd20;
"""
_PARAMS = ("a", "b", "c", "a64", "out", "out64")


def run(body, a=None, b=None, c=None, a64=None):
    """``(out, out64)`` of the kernel running ``body`` between the loads and the stores."""
    z32 = np.zeros(N, np.uint32)
    args = [z32 if x is None else x.astype(np.uint32) for x in (a, b, c)]
    args += [np.zeros(N, np.uint64) if a64 is None else a64.astype(np.uint64), z32.copy(), np.zeros(N, np.uint64)]
    mod = warpsim.ptx.load(kernel(LOADS + body + STORES, params=_PARAMS))
    res = mod.launch(mod.kernels[0], grid=1, block=N, args=args, quiet=True)
    return res.buffers["out"], res.buffers["out64"]


def operands(kinds, op, seed, classes=("random-bits", "specials", "subnormal", "huge-tiny")):
    """``len(kinds)`` arrays of ``N`` register bits, a quarter (or so) from each input class."""
    rng = np.random.default_rng(seed)
    parts = [float_operands(cls, N // len(classes), kinds, op=op, rng=rng) for cls in classes]
    return [np.concatenate([p[i] for p in parts]) for i in range(len(kinds))]


def seed(*parts):
    """A fixed seed per case (``hash`` of a str changes from run to run)."""
    return zlib.crc32(repr(parts).encode())


def check(got, want, what):
    got, want = np.asarray(got, np.uint64), np.asarray(want, np.uint64)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, (f"{what}: {bad.size} of {got.size} differ; first at {bad[0]}: "
                           f"got {int(got[bad[0]]):#x}, isa {int(want[bad[0]]):#x}")


def _mods(text):
    return {m: f".{m}" in text for m in ("ftz", "sat", "relu")}


# ---- f32 arithmetic -------------------------------------------------------------------------------

F32_ARITH = [(op, rnd, extra) for op in ("add", "sub", "mul", "fma", "mad")
             for rnd, extra in (("rn", ""), ("rz", ""), ("rm", ""), ("rp", ""), ("rn", ".ftz"), ("rz", ".ftz.sat"),
                                ("rm", ".sat"))]
F32_ARITH += [(op, rnd, extra) for op in ("div", "sqrt", "rcp") for rnd, extra in
              (("rn", ""), ("rz", ""), ("rm", ""), ("rp", ""), ("rn", ".ftz"))]
_ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "mad": 3, "div": 2, "sqrt": 1, "rcp": 1}
_REGS = ("%r10", "%r11", "%r12")


@pytest.mark.parametrize("op,rnd,extra", F32_ARITH)
def test_f32_arith(op, rnd, extra):
    n = _ARITY[op]
    classes = ("random-bits", "specials", "subnormal", "ties") if op in ("add", "sub", "mul", "fma") else \
        ("random-bits", "specials", "subnormal", "huge-tiny")
    srcs = operands(("f32",) * n, "fma" if op == "mad" else op, seed(op, rnd, extra), classes)
    line = f"{op}.{rnd}{extra}.f32 %r20, {', '.join(_REGS[:n])};"
    got, _ = run(line, *srcs)
    want = float_arith("fma" if op == "mad" else op, *srcs, type="f32", rnd=rnd, **_mods(extra))
    check(got, want, line)


def test_f32_add_mul_without_rounding_are_the_rn_ops():
    a, b = operands(("f32", "f32"), "add", 1)
    got, _ = run("add.f32 %r20, %r10, %r11;", a, b)
    check(got, float_arith("add", a, b, rnd="rn"), "add.f32")
    got, _ = run("mul.ftz.f32 %r20, %r10, %r11;", a, b)
    check(got, float_arith("mul", a, b, rnd="rn", ftz=True), "mul.ftz.f32")


MINMAX = [(op, t, extra) for op in ("min", "max") for t in ("f32", "f16", "bf16", "f16x2", "bf16x2")
          for extra in ("", ".NaN", ".xorsign.abs", ".ftz", ".ftz.NaN") if not (t.startswith("bf16") and "ftz" in extra)]


@pytest.mark.parametrize("op,type_,extra", MINMAX)
def test_min_max(op, type_, extra):
    a, b = operands((type_, type_), op, seed(op, type_, extra))
    if type_ in ("f16", "bf16"):
        line = f"{op}{extra}.{type_} %h4, %h1, %h2;\n  cvt.u32.u16 %r20, %h4;"
    else:
        line = f"{op}{extra}.{type_} %r20, %r10, %r11;"
    got, _ = run(line, a, b)
    want = float_minmax(op, a, b, type=type_, ftz=".ftz" in extra, nan=".NaN" in extra,
                        xorsign_abs=".xorsign.abs" in extra)
    check(got, want, line)


@pytest.mark.parametrize("op", ["abs", "neg"])
@pytest.mark.parametrize("type_,extra", [("f32", ""), ("f32", ".ftz"), ("f16", ".ftz"), ("bf16", ""),
                                         ("f16x2", ""), ("bf16x2", "")])
def test_abs_neg(op, type_, extra):
    (a,) = operands((type_,), op, 7)
    if type_ in ("f16", "bf16"):
        line = f"{op}{extra}.{type_} %h4, %h1;\n  cvt.u32.u16 %r20, %h4;"
    else:
        line = f"{op}{extra}.{type_} %r20, %r10;"
    got, _ = run(line, a)
    check(got, float_sign(op, a, type=type_, ftz=extra == ".ftz"), line)


def test_copysign():
    a, b = operands(("f32", "f32"), "copysign", 3)
    got, _ = run("copysign.f32 %r20, %r10, %r11;", a, b)
    check(got, float_sign("copysign", a, b), "copysign.f32")


@pytest.mark.parametrize("cls", list(TESTP))
def test_testp(cls):
    (a,) = operands(("f32",), "testp", 4)
    got, _ = run(f"testp.{cls}.f32 %p1, %r10;\n  selp.u32 %r20, 1, 0, %p1;", a)
    check(got, float_testp(cls, a), f"testp.{cls}.f32")


# ---- comparisons -----------------------------------------------------------------------------------

def _bool(op, t, c):
    return {"": t, "and": t & c, "or": t | c, "xor": t ^ c}[op]


@pytest.mark.parametrize("cmp", list(CMP))
@pytest.mark.parametrize("boolop,ftz", [("", False), ("", True), ("and", False), ("or", True), ("xor", False)])
def test_setp_f32(cmp, boolop, ftz):
    a, b = operands(("f32", "f32"), "setp", seed(cmp, boolop))
    a[::7] = b[::7]                                     # equal pairs
    c = np.random.default_rng(5).integers(0, 2, N).astype(np.uint32)
    mods = f"{cmp}{'.' + boolop if boolop else ''}{'.ftz' if ftz else ''}"
    line = (f"setp.ne.u32 %p3, %r12, 0;\n  setp.{mods}.f32 %p1|%p2, %r10, %r11{', %p3' if boolop else ''};\n"
            f"  selp.u32 %r21, 1, 0, %p1; selp.u32 %r22, 2, 0, %p2; or.b32 %r20, %r21, %r22;")
    got, _ = run(line, a, b, c)
    t = float_setp(cmp, a, b, ftz=ftz).astype(np.uint32)
    want = _bool(boolop, t, c) | (_bool(boolop, 1 - t, c) << 1)
    check(got, want, f"setp.{mods}.f32")


@pytest.mark.parametrize("type_", ["f16x2", "bf16x2"])
@pytest.mark.parametrize("cmp", ["eq", "ltu", "ge", "nan", "neu"])
def test_setp_x2_two_predicates(type_, cmp):
    a, b = operands((type_, type_), "setp", 8)
    a[::5] = b[::5]
    line = (f"setp.{cmp}.{type_} %p1|%p2, %r10, %r11;\n"
            f"  selp.u32 %r21, 1, 0, %p1; selp.u32 %r22, 2, 0, %p2; or.b32 %r20, %r21, %r22;")
    got, _ = run(line, a, b)
    pq = float_setp(cmp, a, b, type=type_).astype(np.uint32)
    check(got, pq[:, 0] | (pq[:, 1] << 1), line)


@pytest.mark.parametrize("dtype", ["u32", "s32", "f32"])
def test_set_f32(dtype):
    a, b = operands(("f32", "f32"), "set", 9)
    got, _ = run(f"set.gtu.{dtype}.f32 %r20, %r10, %r11;", a, b)
    t = float_setp("gtu", a, b)
    check(got, np.where(t, 0x3F800000 if dtype == "f32" else 0xFFFFFFFF, 0), f"set.gtu.{dtype}.f32")


def test_set_f16x2():
    a, b = operands(("f16x2", "f16x2"), "set", 10)
    got, _ = run("set.le.f16x2.f16x2 %r20, %r10, %r11;", a, b)
    hi = float_setp("le", a >> 16, b >> 16, type="f16")
    lo = float_setp("le", a & 0xFFFF, b & 0xFFFF, type="f16")
    check(got, np.where(hi, 0x3C00, 0) << 16 | np.where(lo, 0x3C00, 0), "set.le.f16x2.f16x2")


# ---- f16 / bf16 arithmetic ---------------------------------------------------------------------------

H_ARITH = [(op, t, extra) for t in ("f16", "f16x2") for op in ("add", "sub", "mul", "fma")
           for extra in ("", ".ftz", ".sat")] + \
          [(op, t, "") for t in ("bf16", "bf16x2") for op in ("add", "sub", "mul", "fma")] + \
          [("fma", t, ".relu") for t in ("f16", "f16x2", "bf16", "bf16x2")]


@pytest.mark.parametrize("op,type_,extra", H_ARITH)
def test_half_arith(op, type_, extra):
    n = 3 if op == "fma" else 2
    srcs = operands((type_,) * n, op, seed(op, type_, extra),
                    ("random-bits", "specials", "subnormal", "ties"))
    if type_ in ("f16", "bf16"):
        line = f"{op}.rn{extra}.{type_} %h4, {', '.join(('%h1', '%h2', '%h3')[:n])};\n  cvt.u32.u16 %r20, %h4;"
    else:
        line = f"{op}.rn{extra}.{type_} %r20, {', '.join(_REGS[:n])};"
    got, _ = run(line, *srcs)
    check(got, float_arith(op, *srcs, type=type_, rnd="rn", **_mods(extra)), line)


# ---- the 16-bit MUFU forms (the H200's tables, warpsim.isa.mufu16) -----------------------------------

MUFU16 = [("ex2.approx", "f16"), ("ex2.approx", "f16x2"), ("ex2.approx.ftz", "bf16"), ("ex2.approx.ftz", "bf16x2"),
          ("tanh.approx", "f16"), ("tanh.approx", "f16x2"), ("tanh.approx", "bf16"), ("tanh.approx", "bf16x2")]


@pytest.mark.parametrize("name,type_", MUFU16)
def test_mufu16(name, type_):
    a, = operands((type_,), "ex2", seed(name, type_), ("random-bits", "specials", "subnormal", "huge-tiny"))
    if type_ in ("f16", "bf16"):
        line = f"{name}.{type_} %h4, %h1;\n  cvt.u32.u16 %r20, %h4;"
    else:
        line = f"{name}.{type_} %r20, %r10;"
    got, _ = run(line, a)
    op = name.split(".")[0]
    check(got, float_mufu16(op, a, type=type_, ftz="ftz" in name), line)


@pytest.mark.parametrize("line,match", [
    ("ex2.approx.bf16 %h4, %h1;", r"ex2\.approx\.bf16: PTX's form on \.bf16 is ex2\.approx\.ftz\.bf16"),
    ("tanh.approx.ftz.f16x2 %r20, %r10;", r"tanh\.approx\.ftz\.f16x2: PTX's form on \.f16x2 is tanh\.approx\.f16x2"),
    ("ex2.f16 %h4, %h1;", r"ex2\.f16: PTX's form on \.f16 is ex2\.approx\.f16")])
def test_mufu16_forms_ptx_lacks_are_refused(line, match):
    with pytest.raises(UnsupportedType, match=match):
        warpsim.ptx.load(kernel(LOADS + line + STORES, params=_PARAMS))


# ---- cvt ------------------------------------------------------------------------------------------------

_DST = {"f32": "%r20", "tf32": "%r20", "s32": "%r20", "u32": "%r20", "f16": "%h4", "bf16": "%h4", "s16": "%h4",
        "u16": "%h4", "s64": "%rd20", "u64": "%rd20"}
_SRC = {"f32": "%r10", "s32": "%r10", "u32": "%r10", "f16": "%h1", "bf16": "%h1", "s16": "%h1", "u16": "%h1",
        "s64": "%rd5", "u64": "%rd5"}
# PTX ISA, "cvt": cvt.frnd2{.relu}{.satfinite}.{f16,bf16}.f32 with .frnd2 = {.rn, .rz}; cvt to bf16 has no
# .sat. The forms outside that are refused (test_cvt_forms_ptx_lacks_are_refused), as the H200's driver JIT
# refuses them (CUDA_ERROR_INVALID_PTX, tests/ptx/test_ptx_float_gpu.py, 2026-12-01).
CVT_REFUSED = [("f32", d, r, x) for d in ("f16", "bf16") for r in ("rm", "rp") for x in (".relu", ".satfinite")] + \
              [("f32", "bf16", r, ".sat") for r in ("rn", "rz", "rm", "rp")]
CVT = ([("f32", d, r, x) for d in ("f16", "bf16") for r in ("rn", "rz", "rm", "rp")
        for x in ("", ".ftz", ".sat", ".relu", ".satfinite") if ("f32", d, r, x) not in CVT_REFUSED] +
       [("f32", "tf32", r, x) for r, x in (("rna", ""), ("rna", ".satfinite"), ("rn", ""), ("rz", ".relu"))] +
       [(s, "f32", "", "") for s in ("f16", "bf16")] + [("f16", "bf16", "rn", ""), ("bf16", "f16", "rz", "")] +
       [("f32", d, r, x) for d in ("s32", "u32", "s16", "u16", "s64", "u64") for r in ("rni", "rzi", "rmi", "rpi")
        for x in ("", ".ftz")] +
       [("f16", d, "rni", "") for d in ("s32", "u16")] + [("bf16", "s32", "rzi", "")] +
       [(s, d, r, "") for s in ("s32", "u32", "s16", "s64", "u64") for d in ("f32", "f16", "bf16")
        for r in ("rn", "rz", "rm", "rp")] +
       [("f32", "f32", r, x) for r in ("rni", "rzi", "rmi", "rpi") for x in ("", ".ftz")] +
       [("f16", "f16", "rni", ""), ("f32", "f32", "", ".ftz.sat")])


@pytest.mark.parametrize("src,dst,rnd,extra", CVT)
def test_cvt(src, dst, rnd, extra):
    rng = np.random.default_rng(seed(src, dst, rnd, extra))
    kind = {"s16": "s32", "u16": "u32"}.get(src, src)
    classes = ("random-bits", "specials", "subnormal", "ties") if kind not in ("s32", "u32", "s64", "u64") else \
        ("random-bits", "specials", "ties", "huge-tiny")
    x = np.concatenate([float_operands(c, N // 4, (kind,), op="cvt", dst=dst, rng=rng)[0] for c in classes])
    if src in ("s16", "u16"):
        x &= 0xFFFF
    mods = ".".join(m for m in (rnd, extra.strip(".")) if m)
    line = f"cvt{'.' + mods if mods else ''}.{dst}.{src} {_DST[dst]}, {_SRC[src]};"
    if _DST[dst] == "%h4":
        line += "\n  cvt.u32.u16 %r20, %h4;"
    a64 = x if src in ("s64", "u64") else None
    got32, got64 = run(line, None if a64 is not None else x, a64=a64)
    got = got64 if dst in ("s64", "u64") else got32
    if src == "s16":                                      # the register's 16 bits, sign-extended
        x = (x.astype(np.int64) - ((x & 0x8000) << 1)).astype(np.int32).view(np.uint32)
        src_isa = "s32"
    else:
        src_isa = {"u16": "u32"}.get(src, src)
    flags = {m: m in extra.split(".") for m in ("ftz", "sat", "relu", "satfinite")}
    if src == dst and not rnd:                            # cvt.ftz.sat.f32.f32: the scalar model, no batch form
        want = [cvt_float(v, *FLOAT_CODES[src], *FLOAT_CODES[dst], RN, *flags.values()) for v in x]
    else:
        want = cvt_convert(x.astype(np.uint64 if src in ("s64", "u64") else np.uint32), dst=dst, src=src_isa,
                           rnd=rnd or "rn", **flags)
    if dst in ("s16", "u16"):
        want = want & 0xFFFF
    check(got, want, line)


@pytest.mark.parametrize("src,dst,rnd,extra", CVT_REFUSED)
def test_cvt_forms_ptx_lacks_are_refused(src, dst, rnd, extra):
    line = f"cvt.{rnd}{extra}.{dst}.{src} %h4, %r10;"
    match = r"\.sat is not a modifier of cvt to \.bf16" if extra == ".sat" else \
        r"\.relu and \.satfinite take \.rn or \.rz only"
    with pytest.raises(UnsupportedType, match=match) as exc:
        warpsim.ptx.load(kernel(LOADS + line + STORES, params=_PARAMS))
    assert line.split()[0] in str(exc.value)


@pytest.mark.parametrize("dst", ["f16x2", "bf16x2"])
@pytest.mark.parametrize("mods", ["rn", "rz", "rn.relu", "rz.satfinite", "rn.relu.satfinite"])
def test_cvt_pack_x2(dst, mods):
    a, b = operands(("f32", "f32"), "cvt", 11)
    line = f"cvt.{mods}.{dst}.f32 %r20, %r10, %r11;"
    got, _ = run(line, a, b)
    kw = {m: m in mods.split(".") for m in ("relu", "satfinite")}
    rnd = mods.split(".")[0]
    half = dst[:-2]
    want = (cvt_convert(a, dst=half, src="f32", rnd=rnd, **kw) << 16) | cvt_convert(b, dst=half, src="f32", rnd=rnd, **kw)
    check(got, want, line)
    if mods == "rn":
        check(got, cvt_pack(a, b, to=half), f"{line} (cvt_pack)")


# ---- immediates and moves ---------------------------------------------------------------------------

def test_float_immediates():
    body = """
  mov.f32 %r21, 0f3FC00000;
  mov.f32 %r22, 0d3FF8000000000000;
  mov.f32 %r23, -2.5e-1;
  add.rn.f32 %r24, %r21, 0.1;
  mov.f64 %rd20, 1.5;
  setp.gt.f32 %p1, %r10, 0f00000000;
  selp.f32 %r25, 1.0, 0fBF800000, %p1;
  xor.b32 %r20, %r21, %r22; xor.b32 %r20, %r20, %r23; xor.b32 %r20, %r20, %r24; xor.b32 %r20, %r20, %r25;
"""
    a = np.array([0x3F800000, 0xBF800000] * (N // 2), np.uint32)
    got, got64 = run(body, a)
    one_tenth = np.float32(0.1).view(np.uint32)          # 0.1 as a double, rounded to f32
    added = float_arith("add", np.array([0x3FC00000], np.uint32), np.array([one_tenth], np.uint32))[0]
    sel = np.where(a == 0x3F800000, 0x3F800000, 0xBF800000).astype(np.uint32)
    want = np.uint32(0x3FC00000) ^ np.uint32(0x3FC00000) ^ np.float32(-0.25).view(np.uint32) ^ added ^ sel
    check(got, want, "float immediates")
    check(got64, np.full(N, np.float64(1.5).view(np.uint64)), "mov.f64 %rd20, 1.5")


# ---- refused at load ---------------------------------------------------------------------------------

@pytest.mark.parametrize("line", ["rsqrt.approx.ftz.f64 %rd20, %rd5;", "div.approx.f16 %h4, %h1, %h2;"])
def test_mufu_refused_at_load(line):
    with pytest.raises(UnsupportedType, match="this MUFU approximation is not modelled bit-exactly yet; "
                                              "see docs/numerics.md"):
        warpsim.ptx.load(kernel(LOADS + line + STORES, params=_PARAMS))


@pytest.mark.parametrize("line", ["sin.approx.f32 %r20, %r10;", "sin.approx.ftz.f32 %r20, %r10;",
                                  "cos.approx.f32 %r20, %r10;", "cos.approx.ftz.f32 %r20, %r10;"])
def test_sin_cos_refused_without_their_h200_proof(monkeypatch, line):
    monkeypatch.setattr(sfu_sincos, "HARDWARE_PROOF", None)
    with pytest.raises(UnsupportedType, match=r"\.approx(\.ftz)?\.f32: modelled \(warpsim\.isa\.sfu_sincos\) but "
                                              r"not yet proven on the H200 .*python -m hwcheck\.campaigns\.sincos_probe --out DIR"):
        warpsim.ptx.load(kernel(LOADS + line + STORES, params=_PARAMS))


@pytest.mark.parametrize("line,error,match", [
    ("add.ftz.bf16 %h4, %h1, %h2;", UnsupportedType, r"\.ftz is not defined for add\.bf16"),
    ("add.rz.f16 %h4, %h1, %h2;", UnsupportedType, r"\.rz is not a rounding of \.f16"),
    ("fma.f32 %r20, %r10, %r11, %r12;", PtxSyntaxError, "needs a rounding modifier"),
    ("div.f32 %r20, %r10, %r11;", PtxSyntaxError, "needs a rounding modifier"),
    ("cvt.f16.f32 %h4, %r10;", PtxSyntaxError, "narrowing cvt needs a rounding modifier"),
    ("cvt.s32.f32 %r20, %r10;", PtxSyntaxError, "needs .rni, .rzi, .rmi or .rpi"),
    ("testp.normal.f16 %p1, %h1;", UnsupportedType, "no model of testp on .f16"),
    ("add.rn.fast.f32 %r20, %r10, %r11;", PtxSyntaxError, r"unknown modifier \.fast"),
])
def test_bad_forms_refused_with_the_instruction(line, error, match):
    with pytest.raises(error, match=match) as exc:
        warpsim.ptx.load(kernel(LOADS + line + STORES, params=_PARAMS))
    assert line.split()[0] in str(exc.value)


# ---- nvcc ---------------------------------------------------------------------------------------------

SOURCE = r"""
#include <cuda_fp16.h>
__global__ void fl(const float* a, const float* b, const float* c, float* out, int* iout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i], y = b[i], z = c[i];
    float* o = out + 8 * i;
    o[0] = fmaf(x, y, z);
    o[1] = __fadd_rz(x, y);
    o[2] = __fmul_rn(x, y);
    o[3] = fminf(x, y);
    o[4] = x / y;
    o[5] = sqrtf(fabsf(x));
    o[6] = __half2float(__float2half_rn(x));
    __half2 h = __hadd2(__floats2half2_rn(x, y), __floats2half2_rn(z, x));
    o[7] = __half2float(__high2half(h));
    iout[2 * i] = __float2int_rn(x);
    iout[2 * i + 1] = (int)__float2uint_rz(y);
}
"""


def _f(bits):
    return np.asarray(bits, np.uint32)


def test_nvcc_float_kernel(tmp_path):
    path = nvcc_ptx(tmp_path, SOURCE)
    mod = warpsim.ptx.load(path)
    a, b, c = operands(("f32", "f32", "f32"), "fma", 12)
    out, iout = np.zeros(8 * N, np.float32), np.zeros(2 * N, np.int32)
    res = mod.launch(mod.kernels[0], grid=2, block=N // 2, quiet=True,
                     args=[a.view(np.float32), b.view(np.float32), c.view(np.float32), out, iout])
    o = res.buffers[mod.params(mod.kernels[0])[3][0]].view(np.uint32).reshape(N, 8)
    io = res.buffers[mod.params(mod.kernels[0])[4][0]].view(np.uint32).reshape(N, 2)
    check(o[:, 0], float_arith("fma", a, b, c), "fmaf")
    check(o[:, 1], float_arith("add", a, b, rnd="rz"), "__fadd_rz")
    check(o[:, 2], float_arith("mul", a, b), "__fmul_rn")
    check(o[:, 3], float_minmax("min", a, b), "fminf")
    check(o[:, 4], float_arith("div", a, b), "x / y (div.rn.f32)")
    check(o[:, 5], float_arith("sqrt", float_sign("abs", a)), "sqrtf(fabsf(x))")
    to_h = lambda v: cvt_convert(v, dst="f16", src="f32", rnd="rn").astype(np.uint32)
    to_f = lambda h: cvt_convert(h.astype(np.uint32), dst="f32", src="f16", rnd="rn").astype(np.uint32)
    check(o[:, 6], to_f(to_h(a)), "__half2float(__float2half_rn(x))")
    check(o[:, 7], to_f(float_arith("add", to_h(b), to_h(a), type="f16")), "__hadd2, high half (y + x)")
    check(io[:, 0], cvt_convert(a, dst="s32", src="f32", rnd="rni"), "__float2int_rn")
    check(io[:, 1], cvt_convert(b, dst="u32", src="f32", rnd="rzi"), "__float2uint_rz")


def test_readme_float_example(capsys):
    block = section("guides/ptx.md", "Float instructions in PTX kernels").split("```python")[1].split("```")[0]
    exec(block, {})
    assert capsys.readouterr().out.strip() == "[1. 3. 5. 7.]"
