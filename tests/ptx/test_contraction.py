"""FMA contraction as ptxas decides it (warpsim.ptx.contraction): the pairs it reads, what the interpreter runs.

Each test fails when the decision is wrong: the fused result is an exact residual (``a*b - round(a*b)``) that is 0
without contraction, and the other forms are checked against an exact float64 model of one rounding.
"""

import shutil
import subprocess

import numpy as np
import pytest

from warpsim import ptx, toolchain
from warpsim.ptx import contraction as fma
from warpsim.errors import ContractionError

needs_ptxas = pytest.mark.skipif(toolchain.find_tool("ptxas") is None
                                 or toolchain.find_tool("nvdisasm") is None,
                                 reason="needs ptxas (CUDA toolkit or nvidia-cuda-nvcc) and nvdisasm "
                                        "(nvidia-cuda-nvdisasm)")


def kernel(body, stored, regs=""):
    """A kernel ``k(inp, out)``: each thread loads four f32 of ``inp`` into ``%f1..%f4``, runs ``body`` (its first
    line is line 15) and stores the four registers ``stored`` (``"%f6, %f8, %f1, %f2"``) to ``out``."""
    return (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 inp, .param .u64 out)\n{\n"
            f"  .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .f32 %f<20>; {regs}\n"
            "  ld.param.u64 %rd1, [inp];\n  ld.param.u64 %rd2, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n"
            "  cvta.to.global.u64 %rd2, %rd2;\n  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 16;\n"
            "  add.s64 %rd4, %rd1, %rd3;\n  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];\n"
            f"{body.lstrip(chr(10))}  add.s64 %rd5, %rd2, %rd3;\n  st.global.v4.f32 [%rd5], {{{stored}}};\n  ret;\n}}\n")


KERNEL = kernel("""
  mul.f32 %f5, %f1, %f2;
  mul.rn.f32 %f6, %f1, %f2;
  sub.f32 %f7, %f5, %f6;
  mul.f32 %f8, %f3, %f4;
  sub.f32 %f9, %f6, %f8;
  mul.f32 %f10, %f1, %f3;
  mul.f32 %f11, %f2, %f4;
  add.f32 %f12, %f10, %f11;
  mov.b32 %h1, %f1;
  mov.b32 %h2, %f2;
  mov.b32 %h3, %f3;
  mul.f16x2 %h4, %h1, %h2;
  sub.f16x2 %h5, %h4, %h3;
  mov.b32 %f13, %h5;
""", "%f7, %f9, %f12, %f13", ".reg .b32 %h<8>;")


def _run(text, ptxas, x):
    module = ptx.load(text, ptxas=ptxas)
    res = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)})
    return module, res.buffers["out"]


def _inputs():
    return np.random.default_rng(7).uniform(-2, 2, (32, 4)).astype(np.float32)


def test_candidates_need_an_unrounded_mul_and_add():
    assert fma.candidates(KERNEL)
    assert not fma.candidates(KERNEL.replace("mul.f32", "mul.rn.f32").replace("mul.f16x2", "mul.rn.f16x2"))
    assert not fma.candidates("mul.f32 %f1, %f2, %f3;\nadd.rn.f32 %f4, %f1, %f1;")
    assert fma.candidates("@%p1 mul.ftz.f32 %f1, %f2, %f3;\nsub.ftz.f32 %f4, %f1, %f1;")


def test_no_candidates_never_start_ptxas(monkeypatch):
    monkeypatch.setattr(toolchain, "run_tool",
                        lambda *a, **k: pytest.fail("ptxas started for a text with nothing to fuse"))
    module = ptx.load(KERNEL.replace("mul.f32", "mul.rn.f32").replace("mul.f16x2", "mul.rn.f16x2"))
    assert module.contraction.pairs == ()
    assert "ptxas not run" in module.contraction.describe()


def test_none_is_the_ptx_without_contraction():
    module, out = _run(KERNEL, "none", _inputs())
    assert module.contraction.describe() == "PTX without contraction (--ptxas none)"
    assert (out[:, 0] == 0).all()                     # round(a*b) - round(a*b)


@needs_ptxas
def test_ptxas_pairs_and_their_results():
    x = _inputs()
    module, out = _run(KERNEL, "auto", x)
    pairs = {(p.add_line, p.mul_line, p.operand) for p in module.contraction.pairs}
    assert pairs == {(17, 15, 1), (19, 18, 2), (22, 20, 1), (27, 26, 1)} or \
        pairs == {(17, 15, 1), (19, 18, 2), (22, 21, 2), (27, 26, 1)}
    a, b, c, d = (x[:, i].astype(np.float64) for i in range(4))
    rounded = (x[:, 0] * x[:, 1]).astype(np.float64)
    # a*b - round(a*b) is exact in binary32: the fused sub gives it, two roundings give 0
    assert np.array_equal(out[:, 0].view(np.uint32), (a * b - rounded).astype(np.float32).view(np.uint32))
    assert (out[:, 0] != 0).sum() > 16
    # round(a*b) - c*d: fma(-c, d, p); the float64 sum is exact when no bits are lost (checked per lane)
    exact = rounded - c * d
    ok = np.abs(exact) >= 2.0 ** -20
    assert np.array_equal(out[ok, 1], exact[ok].astype(np.float32))
    _, plain = _run(KERNEL, "none", x)
    assert (out[:, 3] != plain[:, 3]).any()            # the f16x2 pair fused too (HFMA2)


@needs_ptxas
def test_warm_decision_does_not_start_ptxas(monkeypatch, tmp_path):
    monkeypatch.setenv("WARPSIM_CACHE", str(tmp_path))
    first = ptx.load(KERNEL).contraction
    monkeypatch.setattr(toolchain, "run_tool", lambda *a, **k: pytest.fail("ptxas started on a warm run"))
    assert ptx.load(KERNEL).contraction == first


@needs_ptxas
def test_cubin_of_other_code_is_refused(tmp_path):
    other = KERNEL.replace("sub.f32 %f7, %f5, %f6;", "add.f32 %f7, %f5, %f6;")
    cubin = toolchain.compile_cubin(other, ptx.syntax.parse_module(other), "sm_90", toolchain.find_ptxas(),
                                    tmp_path / "o.cubin")
    with pytest.raises(fma.ContractionError, match=r"--cubin .*o\.cubin: its code differs"):
        ptx.load(KERNEL, cubin=cubin)
    same = toolchain.compile_cubin(KERNEL, ptx.syntax.parse_module(KERNEL), "sm_90", toolchain.find_ptxas(),
                                   tmp_path / "k.cubin")
    assert ptx.load(KERNEL, cubin=same).contraction.cubin == str(same)


def test_unknown_ptxas_path_is_one_line(tmp_path):
    with pytest.raises(fma.ContractionError, match="--ptxas .*nope: not an executable"):
        ptx.load(KERNEL, ptxas=str(tmp_path / "nope"))


@needs_ptxas
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_default_flags_kernel_is_contracted(tmp_path):
    """A kernel as users write it (nvcc defaults): the flash-attention exponent x*scale - m*scale."""
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float* o, const float* s, float scale, int n) {\n"
                   "  int i = threadIdx.x; float m = -INFINITY;\n"
                   "  for (int j = 0; j < n; j++) m = fmaxf(m, s[j * 32 + i]);\n"
                   "  for (int j = 0; j < n; j++) o[j * 32 + i] = s[j * 32 + i] * scale - m * scale;\n}\n")
    out = tmp_path / "k.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", str(src), "-o", str(out)], check=True)
    text = out.read_text()
    module = ptx.load(text)
    assert len(module.contraction.pairs) >= 1
    s = np.random.default_rng(3).uniform(-2, 2, 4 * 32).astype(np.float32)
    scale = np.float32(0.125 * 1.4426950408889634)
    got = module.launch("_Z1kPfPKffi", block=32, args={f"_Z1kPfPKffi_param_{i}": v for i, v in enumerate((np.zeros(128, np.float32), s, scale, 4))})
    m = s.reshape(4, 32).max(0)
    fused = (s.reshape(4, 32).astype(np.float64) * np.float64(scale) - (m * scale).astype(np.float64))
    assert np.array_equal(got.buffers["_Z1kPfPKffi_param_0"].reshape(4, 32), fused.astype(np.float32))


# ---------------------------------------------------------------------------------------------- resolving
# _resolve on SASS written by hand: each rule of the module docstring's step 3, and each refusal.

BODY = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .f32 %f<9>; .reg .pred %p<2>;
  mov.f32 %f1, 0f3F800000;
  mov.f32 %f2, 0f40000000;
  mul.f32 %f3, %f1, %f2;
  mul.f32 %f4, %f2, %f2;
  add.f32 %f5, %f3, %f4;
  sub.f32 %f6, %f1, %f3;
  mul.f32 %f7, %f1, %f1;
  mov.f32 %f1, 0f40400000;
  add.f32 %f8, %f7, %f2;
  ret;
}
"""


def _resolve(sass):
    module = ptx.syntax.parse_module(BODY)
    return [(p.add_line, p.mul_line, p.operand) for p in fma._resolve(module, sass, "k.ptx")]


def test_two_products_the_fused_one_kept_no_fmul():
    assert _resolve([("FMUL R3, R1, R2", 9), ("FFMA R5, R2, R2, R3", 11)]) == [(11, 10, 2)]
    assert _resolve([("FMUL R4, R2, R2", 10), ("FFMA R5, R1, R2, R4", 11)]) == [(11, 9, 1)]


def test_two_products_and_no_way_to_tell_is_refused():
    with pytest.raises(fma.ContractionError, match=r"k\.ptx:11: .*both operands are products"):
        _resolve([("FFMA R5, R1, R2, R4", 11)])


def test_sub_of_a_product_negates_it():
    assert _resolve([("FFMA R6, -R1, R2, R1", 12)]) == [(12, 9, 2)]
    module = ptx.syntax.parse_module(BODY)
    c = fma.Contraction("ptxas", (fma.Fusion(12, 9, 2),))
    (fused,) = fma.fused_instructions(module, c).replace.values()
    assert fused.opcode == "fma" and fused.mods == ("rn", "f32") and fused.fused == (9, True, False)
    assert [o.name for o in fused.operands] == ["%f6", "%f1", "%f2", "%f1"]


def test_an_add_written_as_times_one_is_no_fusion():
    assert _resolve([("FMUL R3, R1, R2", 9), ("FFMA R5, R3, 1, R4", 11)]) == []


def test_a_fused_and_an_unfused_copy_of_one_add_is_refused():
    with pytest.raises(fma.ContractionError, match=r"k\.ptx:12: ptxas fused some copies"):
        _resolve([("FFMA R6, -R1, R2, R1", 12), ("FADD R6, R1, -R3", 12)])


def test_an_fma_on_a_mul_line_is_refused():
    with pytest.raises(fma.ContractionError, match=r"k\.ptx:9: ptxas made an FMA on the line of this mul"):
        _resolve([("FFMA R6, R1, R2, R7", 9)])


def test_a_mul_operand_changed_before_the_add_is_shadowed():
    """line 14 writes %f1, which the mul of line 13 read: the fma reads a copy made before the mul."""
    module = ptx.syntax.parse_module(BODY)
    (pair,) = fma._resolve(module, [("FFMA R8, R1, R1, R2", 15)], "k.ptx")
    assert (pair.add_line, pair.mul_line, pair.shadow) == (15, 13, True)
    assert not fma._resolve(module, [("FMUL R3, R1, R2", 9), ("FFMA R5, R2, R2, R3", 11)], "k.ptx")[0].shadow
    rewrite = fma.fused_instructions(module, fma.Contraction("ptxas", (pair,)))
    (moves,) = rewrite.before.values()
    assert [(m.opcode, m.mods, m.operands[1].name) for m in moves] == [("mov", ("b32",), "%f1")]
    (fused,) = rewrite.replace.values()
    assert [o.name for o in fused.operands] == ["%f8", moves[0].operands[0].name, moves[0].operands[0].name, "%f2"]
    assert [v.name for v in rewrite.regs["k"]] == [moves[0].operands[0].name]


SHADOW = kernel("""
  setp.lt.u32 %p1, %r1, 16;
  mul.f32 %f5, %f1, %f2;
  @%p1 mov.f32 %f1, %f4;
  sub.f32 %f6, %f5, %f3;
  mul.f32 %f7, %f2, %f2;
  mov.f32 %f2, %f3;
  add.f32 %f8, %f7, %f2;
""", "%f6, %f8, %f1, %f2", ".reg .pred %p<2>;")


@needs_ptxas
def test_shadowed_operands_are_the_ones_the_mul_read():
    x = np.random.default_rng(11).uniform(-2, 2, (32, 4)).astype(np.float32)
    module = ptx.load(SHADOW)
    assert {(p.add_line, p.mul_line, p.shadow) for p in module.contraction.pairs} == {(18, 16, True), (21, 19, True)}
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)}).buffers["out"]
    a, b, c, d = (x[:, i].astype(np.float64) for i in range(4))
    exact = a * b - c                                   # one rounding of the mul's own operands, %f1 changed after
    ok = np.abs(exact) > 2.0 ** -10
    assert np.array_equal(out[ok, 0], exact[ok].astype(np.float32))
    assert np.array_equal(out[:, 1], (b * b + c).astype(np.float32))
    assert np.array_equal(out[:16, 2], x[:16, 3]) and np.array_equal(out[:, 3], x[:, 2])


def test_annotated_copy_names_each_instruction_line():
    text = fma.annotate(BODY)
    assert f'.file 1 "{fma.FILE_NAME}"' in text
    assert "\t.loc 1 11 1\n  add.f32 %f5, %f3, %f4;" in text
    assert ptx.syntax.parse_module(text).functions["k"].body[4].opcode == "add"


DIV = kernel("""
  rcp.approx.ftz.f32 %f5, %f2;
  mul.rn.ftz.f32 %f6, %f5, %f1;
  div.full.ftz.f32 %f7, %f1, %f2;
  sub.ftz.f32 %f8, %f7, %f6;
  div.approx.f32 %f9, %f3, %f4;
  sub.f32 %f10, %f1, %f9;
""", "%f8, %f10, %f5, %f6")


@needs_ptxas
def test_a_division_fused_into_its_add():
    """ptxas fuses div.full/div.approx's last FMUL (a * MUFU.RCP(b)) into a following add (Triton's layer norm
    does it with mean + eps): a * rcp(b) - round(a * rcp(b)) is exact, 0 without contraction."""
    x = np.random.default_rng(5).uniform(0.5, 2, (32, 4)).astype(np.float32)
    module = ptx.load(DIV)
    assert {(p.add_line, p.mul_line) for p in module.contraction.pairs} == {(18, 17), (20, 19)}
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)}).buffers["out"]
    r, a = out[:, 2].astype(np.float64), x[:, 0].astype(np.float64)
    assert np.array_equal(out[:, 0], (r * a - out[:, 3].astype(np.float64)).astype(np.float32))
    assert (out[:, 0] != 0).sum() > 16
    plain = ptx.load(DIV, ptxas="none").launch("k", block=32, args={"inp": x.copy(),
                                                                    "out": np.zeros((32, 4), np.float32)})
    assert (plain.buffers["out"][:, 0] == 0).all() and (plain.buffers["out"][:, 1] != out[:, 1]).any()


NEG = kernel("""
  mul.f32 %f5, %f1, %f2;
  neg.f32 %f6, %f5;
  add.f32 %f7, %f6, %f3;
  mul.f32 %f8, %f3, %f4;
  neg.f32 %f9, %f8;
  sub.f32 %f10, %f1, %f9;
""", "%f7, %f10, %f1, %f2")


@needs_ptxas
def test_a_negated_product_is_folded_into_the_fma():
    """-(a*b) + c and c - -(a*b): ptxas folds the neg into the FMA's sign (seen in hwcheck fuzz --float)."""
    x = np.random.default_rng(13).uniform(-2, 2, (32, 4)).astype(np.float32)
    module = ptx.load(NEG)
    assert {(p.add_line, p.mul_line, p.negated) for p in module.contraction.pairs} == {(17, 15, True), (20, 18, True)}
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)}).buffers["out"]
    a, b, c, d = (x[:, i].astype(np.float64) for i in range(4))
    for got, exact in ((out[:, 0], c - a * b), (out[:, 1], a + c * d)):
        ok = np.abs(exact) > 2.0 ** -10
        assert np.array_equal(got[ok], exact[ok].astype(np.float32))


def test_no_ptxas_at_all_is_refused_not_guessed(monkeypatch, tmp_path):
    """A PTX with pairs to decide and no ptxas anywhere: one line naming the fix, never a run without contraction."""
    monkeypatch.setenv("WARPSIM_CACHE", str(tmp_path))
    monkeypatch.setattr(toolchain, "ptxas_candidates", lambda: [])
    with pytest.raises(fma.ContractionError, match=r"no ptxas found .*found: none.*warpsim\[ptxas\].*--ptxas none"):
        ptx.load(KERNEL, filename="k.ptx")
    assert ptx.load(KERNEL, ptxas="none").contraction.compiler == "none"


@needs_ptxas
def test_a_fused_add_says_so_where_its_line_is_shown():
    """The debugger and fault messages show an instruction by its Where row: a fused add names its mul's line."""
    decoded = ptx.load(KERNEL).decoded("k")
    texts = {w.ptx_line: w.text for w in decoded.where}
    assert texts[17] == "sub.f32 %f7, %f5, %f6;  // ptxas: one FMA with line 15"
    assert texts[15] == "mul.f32 %f5, %f1, %f2;"
    plain = {w.ptx_line: w.text for w in ptx.load(KERNEL, ptxas="none").decoded("k").where}
    assert plain[17] == "sub.f32 %f7, %f5, %f6;"


def test_annotation_skips_the_lines_inside_a_statement():
    """nvcc -G writes a call over several lines: only its first line gets a .loc (ptxas refuses one inside it)."""
    text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tcall.uni (retval0), \n" \
           "\tfmaxf, \n\t(\n\tparam0, \n\tparam1\n\t);\n\tret;\n}\n"
    lines = fma.annotate(text).split("\n")
    locs = [lines[k + 1].strip().split()[0] for k, line in enumerate(lines) if line.startswith("\t.loc")]
    assert locs == ["call.uni", "ret;"]


SIGN_BODY = """
  mul.f32 %f5, %f1, %f2;
  add.f32 %f6, %f5, %f3;
  setp.gt.f32 %p1, %f3, 0f00000000;
  mov.f32 %f7, %f2;
  @%p1 neg.f32 %f7, %f1;
  neg.f32 %f8, %f1;
  mov.f32 %f9, %f2;
  @%p1 abs.f32 %f9, %f1;
"""


def test_a_guarded_neg_or_abs_made_an_fsel_keeps_the_nan_payload():
    """The rule: a ``neg``/``abs.f32`` whose SASS is ``FSEL`` runs as the sign-bit operation (``xor``/``and``), every
    other one (no SASS, ``FADD R, -R, -RZ``) gives the canonical NaN."""
    module = ptx.syntax.parse_module(kernel(SIGN_BODY, "%f6, %f7, %f8, %f9", ".reg .pred %p1;"))
    sass = [("FFMA R5, R1, R2, R3", 16), ("FSEL R7, -R0, R5, P0", 19), ("FADD R8, -R0, -RZ", 20),
            ("FSEL R9, |R0|, R5, P0", 22)]
    assert fma.sign_selects(module, sass) == (19, 22)
    assert fma.sign_selects(module, sass[:1] + [("FSEL R7, -R0, R5, P0", 19), ("FADD R7, -R0, -RZ", 19)]) == ()
    c = fma.Contraction("ptxas", sign_selects=(19, 22))
    assert fma.Contraction.from_dict(c.as_dict()) == c
    ops = sorted((i.token.line, i.opcode, i.mods, i.operands[2].value, i.guard)
                 for i in fma.fused_instructions(module, c).replace.values())
    assert ops == [(19, "xor", ("b32",), 0x80000000, "%p1"), (22, "and", ("b32",), 0x7FFFFFFF, "%p1")]


@needs_ptxas
def test_ptxas_decides_which_neg_keeps_the_nan_payload():
    """sm_90, ptxas 13.0: the guarded ``neg``/``abs`` become ``FSEL`` with the modifier, the unguarded ``neg`` an
    ``FADD``; so a NaN ``0x7FC00000`` gives ``0xFFC00000``/``0x7FC00000`` where guarded and ``0x7FFFFFFF`` where not
    (the H100's bits, conformance/h100/h100-80gb-hbm3-fuzz-float-200000.json seed 200944)."""
    text = kernel(SIGN_BODY, "%f6, %f7, %f8, %f9", ".reg .pred %p1;").replace(".target sm_80", ".target sm_90")
    x = _inputs()
    x[:, 0] = np.array([0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFFFFFFFF] * 8, np.uint32).view(np.float32)
    x[:, 2] = 1.0
    module = ptx.load(text, ptxas="auto", arch="sm_90")
    assert module.contraction.sign_selects == (19, 22)
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)},
                        arch="sm_90").buffers["out"].view(np.uint32)
    bits = x[:, 0].view(np.uint32)
    assert np.array_equal(out[:, 1], bits ^ 0x80000000)
    assert np.array_equal(out[:, 2], np.full(32, 0x7FFFFFFF, np.uint32))
    assert np.array_equal(out[:, 3], bits & 0x7FFFFFFF)


FOLDS_BODY = """
  mov.f32 %f5, 0f7FC00001;
  neg.f32 %f6, %f5;
  mov.f32 %f7, 0f7FFFFFFF;
  abs.ftz.f32 %f8, %f7;
  setp.gt.f32 %p1, %f3, 0f00000000;
  abs.f32 %f9, %f1;
  add.f32 %f1, %f1, %f4;
  selp.f32 %f10, %f2, %f9, %p1;
"""


@needs_ptxas
def test_ptxas_folds_a_constants_sign_and_an_abs_into_its_selp():
    """sm_90, ptxas 13.0 (the H100's seeds 201589/201566 and 200517): ``neg`` of the constant ``0x7FC00001`` is the
    constant ``0xFFC00001`` (``MOV R12, 0xffc00001``), ``abs.ftz`` of ``0x7FFFFFFF`` stays it (both read from the
    moves of the stores: ``folded_constants``); the ``abs`` read by a
    ``selp`` is folded into its ``FSEL`` (``FSEL R15, R9, |R8|, P0``: payload kept, from the source as the abs read
    it although ``%f1`` is written in between) while the abs's own register is ``FADD R14, |R8|, -RZ`` (canonical).
    No mul+add in the kernel: ptxas is asked for these alone."""
    text = kernel(FOLDS_BODY, "%f6, %f8, %f9, %f10", ".reg .pred %p1;").replace(".target sm_80", ".target sm_90")
    module = ptx.load(text, ptxas="auto", arch="sm_90")
    c = module.contraction
    assert (c.pairs, c.sign_selects, c.sign_operands, c.saturated_ones) == ((), (), ((22, 2),), ())
    assert c.folded_constants == ((16, 0xFFC00001), (18, 0x7FFFFFFF))      # read from the stores' moves
    assert fma.Contraction.from_dict(c.as_dict()) == c
    x = np.zeros((32, 4), np.float32)
    x.view(np.uint32)[:, 0] = [0x7FC00001, 0xFFA00000, 0x3F800000, 0xBF800000] * 8
    x[:, 1], x[:, 2], x[:, 3] = 2.0, np.arange(32) - 16, 1.0
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)},
                        arch="sm_90").buffers["out"].view(np.uint32)
    src = x[:, 0].view(np.uint32)
    nan = (src & 0x7FFFFFFF) > 0x7F800000
    assert np.all(out[:, 0] == 0xFFC00001) and np.all(out[:, 1] == 0x7FFFFFFF)
    assert np.array_equal(out[:, 2], np.where(nan, 0x7FFFFFFF, src & 0x7FFFFFFF))
    assert np.array_equal(out[:, 3], np.where(x[:, 2] > 0, 0x40000000, src & 0x7FFFFFFF))


@needs_ptxas
def test_a_product_merged_with_a_halving_is_refused_in_one_line():
    """``mul.f32 %f5, %f1, %f2; mul.f32 %f6, %f5, 0.5`` is one ``FMUL.D2`` (one rounding of ``a * b / 2``: finite
    where the PTX's first product overflows; the H100's seed 214336): refused, naming the line, never run otherwise
    than the GPU; with a rounding modifier the same kernel runs."""
    body = "  mul.f32 %f5, %f1, %f2;\n  mul.f32 %f6, %f5, 0f3F000000;\n"
    assert fma.candidates(kernel(body, "%f6, %f6, %f1, %f2"))
    with pytest.raises(ContractionError, match=r"^<ptx>:15: ptxas merged a multiplication by a power of two into "
                                               r"this product \(FMUL\.D2: one rounding"):
        ptx.load(kernel(body, "%f6, %f6, %f1, %f2"), ptxas="auto")
    module = ptx.load(kernel(body.replace("mul.f32 %f6", "mul.rn.f32 %f6"), "%f6, %f6, %f1, %f2"), ptxas="auto")
    assert module.contraction.compiler == "ptxas"


TWINS = {   # name: (body from line 15, the pairs ptxas fuses, the one FMA both registers hold)
    # ``add %f6, %f5, %f3; add %f7, %f3, %f5`` of one product: one FFMA (the H100's seeds 200066 and 201246, in f16x2)
    "same addend": ("  mul.f32 %f5, %f1, %f2;\n  add.f32 %f6, %f5, %f3;\n  add.f32 %f7, %f3, %f5;\n",
                    [(16, 15), (17, 15)], "  fma.rn.f32 %f6, %f1, %f2, %f3;\n"),
    # ``p - c`` and ``p + (-c)``: one FMA (the H100's seed 215317, in f16x2: ``neg.f16x2 %h0, %h1; mul.f16x2 %h2,
    # %h0, %h1; sub.f16x2 %h3, %h2, %h1; add.f16x2 %h2, %h2, %h0`` is one ``HFMA2``)
    "add of a neg": ("  mul.f32 %f5, %f1, %f2;\n  neg.f32 %f8, %f3;\n  sub.f32 %f6, %f5, %f3;\n  add.f32 %f7, %f5, %f8;\n",
                     [(17, 15), (18, 15)], "  neg.f32 %f8, %f3;\n  fma.rn.f32 %f6, %f1, %f2, %f8;\n"),
}


@needs_ptxas
@pytest.mark.parametrize("name", sorted(TWINS))
def test_an_add_that_ptxas_computes_once_with_a_fused_twin_is_fused_too(name):
    """Two adds of one product and one addend that ptxas computes once: both registers hold the one FMA's bits,
    where two roundings differ in some lane."""
    body, pairs, fused_body = TWINS[name]
    text = kernel(body, "%f6, %f7, %f1, %f2")
    module = ptx.load(text, ptxas="auto")
    assert [(p.add_line, p.mul_line) for p in module.contraction.pairs] == pairs
    x = _inputs()
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)}).buffers["out"]
    _, fused = _run(kernel(fused_body, "%f6, %f6, %f1, %f2"), "none", x)
    assert np.array_equal(out.view(np.uint32)[:, :2], fused.view(np.uint32)[:, :2])
    _, unfused = _run(text, "none", x)
    assert not np.array_equal(out.view(np.uint32)[:, 1], unfused.view(np.uint32)[:, 1])


@needs_ptxas
def test_a_saturated_square_plus_at_least_one_is_folded_to_one():
    """``mul %f5, %f1, %f1; add.sat %f6, 0f3F800800, %f5``: ptxas folds the add to 1.0 (no SASS on its line; the
    H100's seeds 200527 and 201039), so a NaN ``%f1`` gives 1.0 where the PTX's ``.sat`` gives +0."""
    text = kernel("""
  mul.f32 %f5, %f1, %f1;
  add.sat.f32 %f6, 0f3F800800, %f5;
""", "%f5, %f6, %f1, %f2").replace(".target sm_80", ".target sm_90")
    module = ptx.load(text, ptxas="auto", arch="sm_90")
    assert module.contraction.saturated_ones == (16,)
    x = _inputs()
    x.view(np.uint32)[::2, 0] = 0x7FC00000
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)},
                        arch="sm_90").buffers["out"]
    assert np.all(out[:, 1] == 1.0) and np.isnan(out[::2, 0]).all()
    _, plain = _run(text, "none", x)
    assert np.all(plain[::2, 1] == 0.0)


@needs_ptxas
def test_more_folds_ptxas_makes_with_nans_infinities_and_saturation():
    """sm_90, ptxas 13.0 (the H200's seeds): ``mul.ftz`` of a constant subnormal by infinity compiled without
    ``.FTZ`` (203522: ``MOV R8, 0x7f800000; FMUL R8, R8, 1.4e-45``, infinity where ``.ftz`` gives 0 * inf, a NaN); ``-(-x)`` folded to ``x`` bit for bit (204946); a ``neg`` kept by
    a guarded write's ``FSEL`` (202902); ``sub.sat`` of a square and ``-3`` folded to 1.0 (207312)."""
    text = kernel("""
  mov.f32 %f12, 0f00000001;
  mul.ftz.f32 %f5, %f12, 0f7F800000;
  neg.f32 %f6, %f2;
  neg.f32 %f7, %f6;
  setp.gt.f32 %p1, %f3, 0f00000000;
  neg.f32 %f8, %f2;
  @%p1 fma.rn.f32 %f8, %f3, %f4, %f1;
  mul.f32 %f9, %f4, %f4;
  mov.f32 %f10, 0fC0400000;
  sub.sat.f32 %f11, %f9, %f10;
""", "%f5, %f7, %f8, %f11", ".reg .pred %p1;").replace(".target sm_80", ".target sm_90")
    module = ptx.load(text, ptxas="auto", arch="sm_90")
    c = module.contraction
    assert (c.ftz_dropped, c.double_negations, c.sign_selects, c.saturated_ones) == ((16,), (18,), (20,), (24,))
    assert fma.Contraction.from_dict(c.as_dict()) == c
    x = np.zeros((32, 4), np.float32)
    u = x.view(np.uint32)
    u[:, 1] = [0x7FC00001, 0xFFA00000, 0x7F800001, 0x40000000] * 8           # NaN payloads
    x[:, 2], x[:, 3] = np.arange(32) - 16, 1.0
    u[::4, 3] = 0x7FC00000                                                    # NaN squares
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)},
                        arch="sm_90").buffers["out"].view(np.uint32)
    assert np.all(out[:, 0] == 0x7F800000)
    assert np.array_equal(out[:, 1], u[:, 1])
    kept = x[:, 2] <= 0
    assert np.array_equal(out[kept, 2], u[kept, 1] ^ 0x80000000)
    assert np.all(out[:, 3] == 0x3F800000)
    _, plain = _run(text, "none", x)
    assert np.isnan(plain[:, 0]).all() and np.all(plain.view(np.uint32)[::4, 3] == 0)


@needs_ptxas
def test_an_abs_of_a_value_ptxas_knows_is_never_negative_keeps_a_negative_zero():
    """ptxas drops the ``abs`` of ``-0`` merged with a ``.sat`` result (it counts ``-0`` as not negative): with
    ``.ftz`` the line is ``FADD.FTZ R8, R9, -RZ`` (H100 seed 267191), without it nothing at all; both store ``-0``
    where the PTX's ``abs`` gives ``+0``; the ``abs`` of the constant ``-0`` alone is ``+0``. With ``--ptxas none``
    the PTX's ``+0``."""
    text = kernel("""
  mov.f32 %f5, 0f80000000;
  setp.gt.f32 %p1, %f3, 0f00000000;
  @%p1 mul.sat.f32 %f5, %f1, %f2;
  abs.ftz.f32 %f6, %f5;
  abs.f32 %f7, %f5;
  abs.f32 %f8, %f1;
  mov.f32 %f9, 0f80000000;
  abs.f32 %f10, %f9;
""", "%f6, %f7, %f8, %f10", ".reg .pred %p1;").replace(".target sm_80", ".target sm_90")
    module = ptx.load(text, ptxas="auto", arch="sm_90")
    assert module.contraction.dropped_abs == ((18, 1), (19, 0))
    assert fma.Contraction.from_dict(module.contraction.as_dict()) == module.contraction
    x = _inputs()
    out = module.launch("k", block=32, args={"inp": x.copy(), "out": np.zeros((32, 4), np.float32)},
                        arch="sm_90").buffers["out"].view(np.uint32)
    off = x[:, 2] <= 0
    assert off.any() and np.all(out[off, 0] == 0x80000000) and np.all(out[off, 1] == 0x80000000)
    assert np.array_equal(out[~off, 0], out[~off, 1]) and np.array_equal(out[:, 2], x.view(np.uint32)[:, 0] & 0x7FFFFFFF)
    assert np.all(out[:, 3] == 0)               # the abs of a known -0 ptxas folds as IEEE says (H100 seed 273222)
    _, plain = _run(text, "none", x)
    assert np.all(plain.view(np.uint32)[off, :2] == 0)


def test_a_saturated_sum_of_a_nan_is_the_constant_zero():
    """``.sat`` flushes a NaN result to +0, so what ptxas may take for a constant after ``add.sat`` of a NaN is 0, not
    the canonical NaN (H100 seed 255743: a later ``mul.ftz`` of it, computed once with a twin, ran as a fold to NaN)."""
    from warpsim.ptx import contraction as C
    from warpsim.ptx.syntax import parse_module
    m = parse_module(".entry k()\n{\n.reg .f32 %f<6>;\nmul.ftz.f32 %f1, %f0, 0f7FFFFFFF;\nadd.sat.f32 %f2, %f1, %f3;\n"
                     "add.f32 %f4, %f1, %f3;\nmul.ftz.f32 %f5, %f2, 0f41C9539D;\n}")
    (f, body), = C._bodies(m)
    fn = C._Function(f)
    assert [C._constant(fn, 3, r) for r in ("%f1", "%f2", "%f4")] == [0x7FFFFFFF, 0, 0x7FFFFFFF]
    assert C.ftz_folds(m, []) == ((7, 0),)


def test_a_folded_nan_reaches_its_store_past_a_guarded_write():
    """H100 seed 259716: ``neg.f32`` of a NaN constant folded to ``IMAD.MOV.U32 R17, RZ, RZ, -0x1`` (on the line of
    its block's branch), the store of the register reached by it and by a guarded ``fma`` of the same register in a
    later block (``@P0 FFMA R17, ...``): where the guard is false the store writes the folded bits."""
    from warpsim.ptx.syntax import parse_module

    def module(guard):
        return parse_module(".entry k(.param .u64 p)\n{\n.reg .f32 %f<4>;\n.reg .b64 %a;\n.reg .pred %p<2>;\n"
                            "ld.param.u64 %a, [p];\nmov.f32 %f1, 0f7FFFFFFF;\nneg.f32 %f2, %f1;\n"
                            "setp.ne.f32 %p1, %f3, 0f00000000;\n@%p1 bra L1;\nL1:\n"
                            f"{guard}fma.rn.f32 %f2, %f3, %f3, %f3;\nst.global.f32 [%a], %f2;\n}}")

    sass = [("FSETP.NEU.AND P0, PT, R3, RZ, PT", 9), ("IMAD.MOV.U32 R17, RZ, RZ, -0x1", 10),
            ("@P0 FFMA R17, R3, R3, R3", 12), ("STG.E desc[UR4][R2.64], R17", 13)]
    assert fma.folded_constants(module("@%p1 "), sass) == ((8, 0xFFFFFFFF),)
    # unguarded, the fma's write hides the neg's value: no store shows it, nothing is recorded
    assert fma.folded_constants(module(""), [(t.replace("@P0 ", ""), n) for t, n in sass]) == ()


_ABS = """.version 8.0
.target sm_90
.address_size 64
.entry k(.param .u64 out)
{
.reg .f32 %f<8>;
mul.f32 %f1, %f0, 0f00000001;
abs.f32 %f1, %f1;
add.f32 %f2, %f1, %f3;
sub.f32 %f4, %f5, %f1;
mul.f32 %f6, %f1, %f1;
}
"""


@pytest.mark.parametrize("sass, dropped, refused", [
    # the product in R6, no SASS for the abs: every reader reads R6 -> dropped (the line a copy)
    ([("FMUL R6, R15, 1.4e-45", 7), ("FADD R8, R21, R6", 9), ("FADD R5, -R6, R19", 10)], ((8, 0),), False),
    # the add reads R6, the sub -|R6|: some readers with, some without (H100 seed 275052) -> refused
    ([("FMUL R6, R15, 1.4e-45", 7), ("FADD R8, R21, R6", 9), ("FADD R5, -|R6|, R19", 10)], (), True),
    # a square reads R6 raw whichever it is; the sub's |R6| is the abs kept (H100 seed 274073)
    ([("FMUL R6, R15, 1.4e-45", 7), ("FADD R8, R21, |R6|", 9), ("FADD R5, -|R6|, R19", 10),
      ("FMUL R7, R6, R6", 11)], (), False),
    # a raw R6 beside |R6| in one instruction is another operand's (H100 seed 275161)
    ([("FMUL R6, R15, 1.4e-45", 7), ("FFMA R8, R19, R6, |R6|", 9)], (), False),
    # R6 written again before the reader: its R6 is not the product's
    ([("FMUL R6, R15, 1.4e-45", 7), ("MOV R6, R2", 8), ("FADD R9, R3, R4", 8), ("FADD R8, R21, R6", 9)], (), False),
])
def test_an_abs_with_no_sass_is_dropped_where_its_readers_read_the_operand(sass, dropped, refused):
    """``abs.f32`` with no SASS of its own: what its readers' SASS read of its operand's register decides it."""
    from warpsim.ptx.syntax import parse_module
    module = parse_module(_ABS, "k.ptx")
    if refused:
        with pytest.raises(ContractionError, match=r"k.ptx:8: ptxas dropped this abs for some readers"):
            fma.dropped_abs(module, sass, "k.ptx")
    else:
        assert fma.dropped_abs(module, sass, "k.ptx") == dropped


LOOP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .f32 %f<9>; .reg .pred %p<2>; .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  cvt.rn.f32.u32 %f7, %r1;
$L0:
  mul.f32 %f3, %f7, 0f3F800800;
  mov.f32 %f7, 0fBF1C6B10;
  sub.f32 %f3, %f7, %f3;
  add.f32 %f4, %f3, %f7;
  mul.f32 %f5, %f4, %f4;
  add.f32 %f6, %f5, %f4;
  sub.u32 %r1, %r1, 1;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L0;
  ret;
}
"""


def test_a_fused_pair_whose_operands_a_loop_makes_constants_is_refused():
    """``mul.f32 %f3, %f7, c; mov.f32 %f7, k; sub.f32 %f3, %f7, %f3`` in a loop: after the first pass every operand
    is a constant, and ptxas folds an unrolled loop's later copies with two roundings (``MOV R17, 0x391c7000``)
    while the first is an FFMA (H100 seed 234680): refused where the FMA's bits are not the two roundings'. A fused pair
    of values the loop computes is kept, and so is one whose constants give the same bits either way."""
    module = ptx.syntax.parse_module(LOOP)
    with pytest.raises(fma.ContractionError, match=r"k\.ptx:12: ptxas fused this sub into an FMA, but after a loop's "
                                                   r"first pass its operands are constants"):
        fma._resolve(module, [("FFMA R17, R5, -1.000244140625, -R14", 12)], "k.ptx")
    assert [(p.add_line, p.mul_line) for p in fma._resolve(module, [("FFMA R9, R4, R4, R4", 15)], "k.ptx")] == \
        [(15, 14)]
    exact = ptx.syntax.parse_module(LOOP.replace("0f3F800800", "0f40000000"))    # k - 2k: -k both ways
    assert [p.add_line for p in fma._resolve(exact, [("FFMA R17, R5, -2, -R14", 12)], "k.ptx")] == [12]


F16_TWINS = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .f32 %f<4>; .reg .b32 %h<4>;
  abs.f32 %f1, %f2;
  mul.f16x2 %h2, %h2, %h0;
  sub.f16x2 %h1, %h3, %h2;
  sub.f16x2 %h2, %h3, %h2;
  ret;
}
"""


def test_a_twin_whose_line_holds_another_types_instruction_is_the_fmas():
    """``sub.f16x2 %h1, %h3, %h2; sub.f16x2 %h2, %h3, %h2`` of one product: one HFMA2 on the first line, and on the
    second the f32 ``FADD R15, |R15|, -RZ`` of an ``abs`` ptxas moved there and a copy of the FMA's register: the twin
    holds the FMA's bits (H100 seed 280321: one f16 ulp off when it ran unfused). An HADD2 there computes it."""
    module = ptx.syntax.parse_module(F16_TWINS)
    sass = [("HFMA2.MMA R21, -R14, R23, R10", 9), ("FADD R15, |R15|, -RZ", 10), ("MOV R16, R21", 10)]
    assert [p.add_line for p in fma._resolve(module, sass, "k.ptx")] == [9, 10]
    sass[1] = ("HADD2 R15, R10, -R3", 10)
    assert [p.add_line for p in fma._resolve(module, sass, "k.ptx")] == [9]


ABS_ON_STORE = kernel("""
  setp.lo.u32 %p1, %r1, 7;
  mov.f32 %f1, 0f3F000000;
  @%p1 bra $L1;
  sub.sat.f32 %f1, %f2, %f3;
$L1:
  abs.f32 %f4, %f1;
""", "%f4, %f1, %f2, %f3", ".reg .pred %p<2>;")


def test_an_abs_computed_on_its_readers_line_is_not_dropped():
    """``abs.f32`` of a value ptxas knows is never negative (a ``.sat`` result, a positive constant) with no SASS of its
    own is dropped -- unless its reader's line computes it: ``FADD R29, |R13|, -RZ`` before the store, ``R13`` the
    ``sub.sat``'s register (H100 seed 277517: ``+0`` stored where the dropped ``abs`` kept ``-0``)."""
    module = ptx.syntax.parse_module(ABS_ON_STORE)
    line = {ins.opcode: ins.token.line for ins in module.functions["k"].body if hasattr(ins, "opcode")}
    sat = [("FADD.SAT R13, R2, -R3", line["sub"])]
    assert fma.dropped_abs(module, [*sat, ("STG.E desc[UR4][R8.64], R13", line["st"])]) == ((line["abs"], 0),)
    computed = [*sat, ("FADD R29, |R13|, -RZ", line["st"]), ("STG.E desc[UR4][R8.64], R29", line["st"])]
    assert fma.dropped_abs(module, computed) == ()


def test_a_guarded_merged_product_names_its_opcode_not_its_guard():
    """The refusal names the SASS opcode (the H100's campaign of 2026-12-08 printed ``(@!P0: one rounding ...``)."""
    with pytest.raises(fma.ContractionError, match=r"k\.ptx:9: .* \(FMUL\.FTZ\.D2: one rounding"):
        _resolve([("@!P0 FMUL.FTZ.D2 R3, R1, R2", 9)])
