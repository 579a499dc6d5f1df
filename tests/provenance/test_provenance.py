"""The type-provenance analysis (:mod:`warpsim.ptx.provenance`) on small hand-written kernels: each rule
(producer, copy, join, memory, consumer) with a case it must flag and a neighbour it must leave alone."""

import pytest

from warpsim.ptx.provenance import ElementType, check_kernel, parse_type
from warpsim.ptx.syntax import parse_module

HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<4>; .reg .b16 %h<8>; .reg .b32 %r<40>; .reg .f32 %f<40>; .reg .b64 %rd<8>;
  .local .align 8 .b8 __local_depot0[32];
"""

MMA_BF16 = ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f20, %f21, %f22, %f23}, "
            "{%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f24, %f24, %f24, %f24};")
MMA_F16 = MMA_BF16.replace(".bf16.bf16.", ".f16.f16.")


def findings(body):
    """``[(producer instruction, produced, consumer instruction, expected, operand), ...]`` of a kernel body;
    each instruction as ``(its PTX line's text, name)``."""
    text = HEAD + body + "\n  ret;\n}\n"
    lines = text.splitlines()
    out = []
    for f in check_kernel(parse_module(text, "k.ptx"), "k"):
        assert lines[f.producer.ptx_line - 1].strip().startswith(f.producer.text.split(".")[0]) or \
            f.producer.text in lines[f.producer.ptx_line - 1]
        out.append((lines[f.producer.ptx_line - 1].strip(), f.produced, lines[f.consumer.ptx_line - 1].strip(),
                    f.expected, f.operand))
    return out


def produced_types(body):
    return sorted({(f[1], f[3]) for f in findings(body)})


def test_types():
    assert parse_type("bf16x2") == ElementType("bf16", 2) and str(ElementType("bf16", 2)) == "bf16x2"
    assert parse_type("e4m3x2") == ElementType("e4m3", 2)
    assert parse_type("f32") == ElementType("f32") and str(parse_type("f32")) == "f32"
    assert parse_type("u32") is None and parse_type("b16") is None and parse_type("x2") is None


def test_f16_pair_fed_to_bf16_mma_names_both_lines():
    body = "  cvt.rn.f16x2.f32 %r1, %f1, %f2;\n  " + MMA_BF16
    [(producer, produced, consumer, expected, operand)] = findings(body)
    assert producer.startswith("cvt.rn.f16x2.f32") and produced == "f16x2"
    assert consumer.startswith("mma.sync") and expected == "bf16x2" and operand == "A register %r1"


def test_matching_types_and_unknown_sources_are_silent():
    assert findings("  cvt.rn.bf16x2.f32 %r1, %f1, %f2;\n  " + MMA_BF16) == []
    assert findings("  cvt.rn.f16x2.f32 %r1, %f1, %f2;\n  " + MMA_F16) == []
    assert findings("  ld.global.b32 %r1, [%rd1];\n  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r5, %r6}, [%r9];\n  "
                    + MMA_BF16) == []
    assert findings("  xor.b32 %r1, %r7, 5;\n  " + MMA_BF16) == []                  # bits: unknown


def test_b_and_c_operands():
    assert produced_types("  cvt.rn.bf16x2.f32 %r6, %f1, %f2;\n  " + MMA_F16) == [("bf16x2", "f16x2")]
    c_from_f16 = "  cvt.rn.f16x2.f32 %r9, %f1, %f2;\n  mov.b32 %f24, %r9;\n  " + MMA_BF16
    assert produced_types(c_from_f16) == [("f16x2", "f32")]


def test_tf32_reads_f32_bits():
    mma = ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f20, %f21, %f22, %f23}, {%r1, %r2, %r3, %r4}, "
           "{%r5, %r6}, {%f24, %f24, %f24, %f24};")
    assert findings("  add.f32 %f5, %f1, %f2;\n  mov.b32 %r1, %f5;\n  " + mma) == []
    assert produced_types("  cvt.rn.bf16x2.f32 %r1, %f1, %f2;\n  " + mma) == [("bf16x2", "tf32")]


def test_halves_packed_by_mov():
    body = ("  cvt.rn.f16.f32 %h1, %f1;\n  cvt.rn.f16.f32 %h2, %f2;\n  mov.b32 %r1, {%h1, %h2};\n  " + MMA_BF16)
    [(producer, produced, _consumer, expected, _op)] = findings(body)
    assert producer.startswith("cvt.rn.f16.f32 %h1") and (produced, expected) == ("f16x2", "bf16x2")
    f = check_kernel(parse_module(HEAD + body + "\n ret;\n}\n", "k.ptx"), "k")[0]
    assert f.packed is not None and f.packed.text == "mov.b32" and "packed by PTX line" in str(f)
    ok = body.replace("cvt.rn.f16.f32", "cvt.rn.bf16.f32")
    assert findings(ok) == []
    mixed = body.replace("cvt.rn.f16.f32 %h2", "cvt.rn.bf16.f32 %h2")              # halves of two kinds: unknown
    assert findings(mixed) == []
    widened = ("  cvt.rn.bf16x2.f32 %r1, %f1, %f2;\n  mov.b32 {%h1, %h2}, %r1;\n  mov.b32 %f3, {0, %h2};\n"
               "  add.f32 %f4, %f3, %f3;")
    assert findings(widened) == []                  # bf16 -> f32 by placing the bits high: not a bf16 pair


def test_unpacked_halves_keep_their_kind():
    body = "  cvt.rn.bf16x2.f32 %r1, %f1, %f2;\n  mov.b32 {%h1, %h2}, %r1;\n  cvt.f32.f16 %f3, %h2;"
    assert produced_types(body) == [("bf16", "f16")]
    assert findings(body.replace("cvt.f32.f16", "cvt.f32.bf16")) == []


def test_copies_shuffles_and_selects_carry_the_type():
    for copy in ("mov.b32 %r1, %r9;", "shfl.sync.bfly.b32 %r1|%p1, %r9, 2, 31, -1;",
                 "selp.b32 %r1, %r9, %r8, %p2;"):
        body = f"  cvt.rn.f16x2.f32 %r9, %f1, %f2;\n  {copy}\n  " + MMA_BF16
        assert produced_types(body) == [("f16x2", "bf16x2")], copy


def test_accumulator_read_as_f16():
    body = "  " + MMA_BF16 + "\n  mov.b32 %r10, %f20;\n  fma.rn.f16x2 %r11, %r10, %r12, %r13;"
    [(producer, produced, consumer, expected, operand)] = findings(body)
    assert producer.startswith("mma.sync") and (produced, expected) == ("f32", "f16x2")
    assert consumer.startswith("fma.rn.f16x2") and operand == "operand register %r10"
    assert findings("  " + MMA_BF16 + "\n  ex2.approx.ftz.f32 %f5, %f20;\n  max.f32 %f6, %f5, %f21;") == []


def test_f16_accumulators_read_as_f32():
    body = "  " + MMA_F16.replace("f32.f16.f16.f32 {%f20, %f21, %f22, %f23}", "f16.f16.f16.f16 {%r20, %r21}") \
        .replace("{%f24, %f24, %f24, %f24}", "{%r22, %r22}") + "\n  mov.b32 %f5, %r20;\n  add.f32 %f6, %f5, %f1;"
    assert produced_types(body) == [("f16x2", "f32")]


def test_joins_over_the_control_flow_graph():
    loop = """  cvt.rn.bf16x2.f32 %r1, %f1, %f2;
$L_loop:
  {mma}
  cvt.rn.f16x2.f32 %r1, %f20, %f21;
  setp.lt.u32 %p1, %r30, 4;
  @%p1 bra $L_loop;"""
    found = findings(loop.replace("{mma}", MMA_BF16))
    assert [(f[0].split()[0], f[1]) for f in found] == [("cvt.rn.f16x2.f32", "f16x2")]   # the loop's back edge
    straight = loop.replace("{mma}", "").replace("@%p1 bra $L_loop;", "bra $L_end;\n$L_end:\n  " + MMA_BF16)
    assert [f[1] for f in findings(straight)] == ["f16x2"]
    killed = "  cvt.rn.f16x2.f32 %r1, %f1, %f2;\n  cvt.rn.bf16x2.f32 %r1, %f1, %f2;\n  " + MMA_BF16
    assert findings(killed) == []                                                   # the later write wins
    reloaded = ("  cvt.rn.f16x2.f32 %r1, %f1, %f2;\n"
                "  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r9];\n  " + MMA_BF16)
    assert findings(reloaded) == []                                                 # a vector destination too
    guarded = killed.replace("cvt.rn.bf16x2", "@%p1 cvt.rn.bf16x2")
    assert [f[1] for f in findings(guarded)] == ["f16x2"]                           # may not have happened


def test_through_shared_memory_at_the_same_address():
    body = """  cvt.rn.f16x2.f32 %r9, %f1, %f2;
  add.s32 %r20, %r21, 64;
  st.shared.v2.b32 [%r20+16], {%r8, %r9};
  {between}
  ld.shared.b32 %r1, [%r20+{offset}];
  """ + MMA_BF16
    assert produced_types(body.replace("{between}", "").replace("{offset}", "20")) == [("f16x2", "bf16x2")]
    assert findings(body.replace("{between}", "").replace("{offset}", "16")) == []      # the other element
    assert findings(body.replace("{between}", "bar.sync 0;").replace("{offset}", "20")) == []   # other threads
    maybe_alias = "st.shared.b32 [%r22], %r7;"
    assert findings(body.replace("{between}", maybe_alias).replace("{offset}", "20")) == []
    disjoint = "st.shared.b32 [%r20+24], %r7;"
    assert produced_types(body.replace("{between}", disjoint).replace("{offset}", "20")) == [("f16x2", "bf16x2")]


def test_through_local_memory():
    body = """  mov.u64 %rd1, __local_depot0;
  add.u64 %rd2, %rd1, 8;
  cvt.rn.f16x2.f32 %r9, %f1, %f2;
  st.local.b32 [%rd2], %r9;
  ld.local.b32 %r1, [%rd1+8];
  """ + MMA_BF16
    assert produced_types(body) == [("f16x2", "bf16x2")]
    assert findings(body.replace("[%rd1+8]", "[%rd1+12]")) == []


def test_typed_loads_and_stores():
    assert produced_types("  ld.param.f32 %f5, [out];\n  mov.b32 %r1, %f5;\n  " + MMA_BF16) == [("f32", "bf16x2")]
    assert produced_types("  cvt.rn.bf16x2.f32 %r9, %f1, %f2;\n  mov.b32 %f5, %r9;\n  st.global.f32 [%rd1], %f5;") \
        == [("bf16x2", "f32")]


def test_loads_of_variables_declared_with_a_float_type():
    text = HEAD.replace("(.param .u64 out)", "(.param .u64 out, .param .f32 scale)").replace(
        ".visible .entry", ".global .align 4 .f16 table[8];\n.visible .entry")
    def kernel(body):
        return [(f.produced, f.expected) for f in check_kernel(parse_module(text + body + "\n ret;\n}\n"), "k")]
    assert kernel("  ld.param.b32 %r1, [scale];\n  " + MMA_BF16) == [("f32", "bf16x2")]
    assert kernel("  mov.u64 %rd1, table;\n  ld.global.b32 %r1, [%rd1+4];\n  " + MMA_BF16) == [("f16x2", "bf16x2")]
    assert kernel("  mov.u64 %rd1, table;\n  ld.global.b32 %r1, [%rd1+4];\n  " + MMA_F16) == []
    assert kernel("  ld.param.b32 %r1, [out];\n  " + MMA_BF16) == []            # a .u64 param: bits


def test_one_finding_per_instruction_pair():
    body = "  cvt.rn.f16x2.f32 %r1, %f1, %f2;\n  mov.b32 %r2, %r1;\n  " + MMA_BF16.replace("%r3, %r4", "%r1, %r2")
    assert len(findings(body)) == 1


def test_unknown_kernel():
    with pytest.raises(ValueError, match="no kernel 'nope'; the module has: k"):
        check_kernel(parse_module(HEAD + "ret;\n}\n", "k.ptx"), "nope")


def test_scoped_instructions_keep_their_source_line():
    text = (HEAD.replace("{\n", "{\n.loc 1 7 0\n", 1) + "  { cvt.rn.f16x2.f32 %r1, %f1, %f2; }\n  .loc 1 9 0\n  "
            + MMA_BF16 + "\n  ret;\n}\n.file 1 \"k.cu\"\n")
    [f] = check_kernel(parse_module(text, "k.ptx"), "k")
    assert (f.producer.source, f.consumer.source) == ("k.cu:7", "k.cu:9")
    assert str(f).startswith("k.cu:9 / PTX line") and "k.cu:7 / PTX line" in str(f)
