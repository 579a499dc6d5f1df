"""The limits of the PTX load path (issue 30's audit): inputs that hung, ate memory or gave Python's own message now
give one line naming the input, before anything big is built. Declared registers (at most 65536 slots per thread),
integer literals beyond 64 bits, a byte that is not UTF-8, the Hopper instructions warpsim does not run yet (refused
by name, not by their operand syntax)."""

import time

import numpy as np
import pytest

import warpsim.ptx
from bad_input_helpers import assert_one_line_error, call
from warpsim.errors import PtxSyntaxError, UnsupportedType
from warpsim.ptx.syntax import MAX_REGISTER_SLOTS

HEAD = ".version 8.8\n.target sm_90\n.address_size 64\n"
KERNEL = HEAD + """.visible .entry k(.param .u64 out)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;{decl}
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  {line}
  ret;
}}
"""
GOOD = "st.global.u32 [%rd2], 7;"


@pytest.fixture
def inputs(tmp_path_factory):
    """The cases' files, outside the working directory (which must stay as it was)."""
    return tmp_path_factory.mktemp("ptx_limits")


def _ptx(directory, name, line=GOOD, decl=""):
    path = directory / name
    path.write_text(KERNEL.format(line=line, decl=decl))
    return path


def _line_of(path, text):
    return next(i for i, line in enumerate(path.read_bytes().decode("latin-1").splitlines(), 1) if text in line)


def _run(capsys, path, *more):
    return call(capsys, ["run", path, "--kernel", "k", "--arg", "out=zeros:u32:8", *more])


# ------------------------------------------------------------------------------------------------ registers

def test_a_hundred_million_registers_are_refused_at_once(workdir, inputs, capsys):
    """Issue 30: ``.reg .b32 %r<100000000>`` made one object per register (37 s and 3.8 GB at 10^7)."""
    path = _ptx(inputs, "regs.ptx", decl="\n  .reg .b32 %big<100000000>;")
    began = time.monotonic()
    status, out, err = _run(capsys, path)
    assert time.monotonic() - began < 10
    assert_one_line_error(status, err, "warpsim run", [
        f"regs.ptx:{_line_of(path, '%big')}:", ".reg .b32 %big<100000000>", "100000032 register slots",
        f"warpsim allows at most {MAX_REGISTER_SLOTS}"])
    assert out == ""


@pytest.mark.parametrize("decl,line,fragments", [
    ("\n  .reg .b64 %wide<32760>;", "%wide", [".reg .b64 %wide<32760>", "65552 register slots"]),   # 32 + 2 * 32760
    ("\n  .reg .b32 %a<65000>;\n  .reg .f32 %lone;\n  .reg .b32 %b<600>;", "%b<600>",
     [".reg .b32 %b<600>", "65633 register slots"]),                                              # the one that crosses
    ("\n  .reg .b32 %a<65504>;\n  .reg .pred %lone;", "%lone", [".reg .pred %lone takes function k to 65537"]),
], ids=["one range", "the third declaration", "one more predicate"])
def test_registers_beyond_the_bound_name_the_declaration(inputs, decl, line, fragments):
    path = _ptx(inputs, "slots.ptx", decl=decl)
    with pytest.raises(PtxSyntaxError) as e:
        warpsim.ptx.load(path, ptxas="none")
    message = str(e.value)
    assert message.startswith(f"slots.ptx:{_line_of(path, line)}:") and "\n" not in message, message
    assert all(f in message for f in fragments), message


def test_registers_at_the_bound_load_and_run(inputs):
    """65536 slots (nvcc's flash kernel declares some 2,000) load in well under a few seconds and run."""
    path = _ptx(inputs, "many.ptx", decl=f"\n  .reg .b32 %many<{MAX_REGISTER_SLOTS - 32}>;",
                line="mov.u32 %many65000, 5;\n  st.global.u32 [%rd2], %many65000;")
    began = time.monotonic()
    mod = warpsim.ptx.load(path, ptxas="none")
    assert time.monotonic() - began < 20
    assert mod.decoded("k").regs_per_thread == MAX_REGISTER_SLOTS
    assert mod.launch("k", block=32, args={"out": np.zeros(8, np.uint32)}).buffers["out"][0] == 5


def test_a_kernel_and_its_function_together_beyond_the_bound(inputs):
    half = MAX_REGISTER_SLOTS // 2 + 8
    text = (HEAD + f".func f()\n{{\n  .reg .b32 %f<{half}>;\n  ret;\n}}\n"
            f".visible .entry k()\n{{\n  .reg .b32 %k<{half}>;\n  call f, ();\n  ret;\n}}\n")
    with pytest.raises(PtxSyntaxError, match=rf"^two.ptx:9:17: kernel k and the functions it calls \(f\) declare "
                                             rf"{2 * half} register slots .* at most {MAX_REGISTER_SLOTS}"):
        warpsim.ptx.load(text, "two.ptx", ptxas="none")


# ------------------------------------------------------------------------------------------------ literals and bytes

@pytest.mark.parametrize("literal,shown", [
    ("9" * 50_000_000, "'999999999999999999999999'... (50000000 characters)"),
    ("18446744073709551616", "'18446744073709551616'"),            # 2^64
    ("0x1" + "0" * 16, "'0x10000000000000000'"),
    ("0" + "7" * 23, "'0" + "7" * 23 + "'"),                      # octal, 69 bits
])
def test_an_integer_literal_beyond_64_bits(workdir, inputs, capsys, literal, shown):
    """Issue 30: a 50 MB literal printed Python's digit-limit message."""
    path = _ptx(inputs, "lit.ptx", line=f"st.global.u64 [%rd2], {literal};")
    status, out, err = _run(capsys, path)
    assert_one_line_error(status, err, "warpsim run", [
        f"lit.ptx:{_line_of(path, 'st.global.u64')}:", f"integer literal {shown} is out of range for its type",
        "PTX integer literals are 64-bit"])
    assert len(err) < 400


def test_the_largest_literal_is_taken(inputs):
    path = _ptx(inputs, "max.ptx", line="st.global.u64 [%rd2], 18446744073709551615;")
    res = warpsim.ptx.load(path, ptxas="none").launch("k", block=1, args={"out": np.zeros(2, np.uint64)})
    assert res.buffers["out"][0] == 2**64 - 1


def test_a_byte_that_is_not_utf8(workdir, inputs, capsys):
    """Issue 30: a non-UTF-8 byte gave the codec's message (a position in bytes, no file)."""
    path = inputs / "latin1.ptx"
    path.write_bytes(KERNEL.format(line="// caf\xe9 au lait", decl="").encode("latin-1"))
    lineno = _line_of(path, "// caf")
    with pytest.raises(PtxSyntaxError, match=rf"^latin1.ptx:{lineno}:9: byte 0xe9 is not UTF-8 text"):
        warpsim.ptx.load(path, ptxas="none")
    with pytest.raises(PtxSyntaxError, match=rf"^latin1.ptx:{lineno}:9: byte 0xe9"):
        warpsim.ptx.load(str(path), ptxas="none")
    status, out, err = _run(capsys, path)
    assert_one_line_error(status, err, "warpsim run", [f"latin1.ptx:{lineno}:9: byte 0xe9 is not UTF-8 text"])


# ------------------------------------------------------------------------------------------------ Hopper forms

HOPPER = [
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%rd3], [%rd1, {%r1, %r2}], "
     "[%rd4];", "cp.async.bulk.tensor", "Hopper TMA"),
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r2];", "cp.async.bulk",
     "bulk asynchronous copy"),
    ("mbarrier.init.shared::cta.b64 [%r1], 32;", "mbarrier", "asynchronous barriers"),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;", "mbarrier", "asynchronous barriers"),
    ("wgmma.fence.sync.aligned;", "wgmma", "warpgroup MMA"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1,%r2,%r3,%r4}, %rd3, %rd4, 0, 1, 1, 0, 1;", "wgmma",
     "warpgroup MMA"),
    ("fence.proxy.async.shared::cta;", "fence.proxy.async", "async proxy"),
    ("setmaxnreg.inc.sync.aligned.u32 240;", "setmaxnreg", "register reallocation"),
    ("elect.sync %r1|%p1, 0xffffffff;", "elect", "elect.sync"),
]


@pytest.mark.parametrize("line,form,what", HOPPER, ids=[h[0].split()[0][:40] for h in HOPPER])
def test_hopper_forms_are_refused_by_name(workdir, inputs, capsys, line, form, what):
    """Issue 30: ``cp.async.bulk.tensor`` gave "expected ']' at ','"; each Hopper form now says what it is."""
    path = _ptx(inputs, "h.ptx", line=line)
    lineno = _line_of(path, line.split()[0])
    status, out, err = _run(capsys, path)
    assert_one_line_error(status, err, "warpsim run", [
        f"h.ptx:{lineno}:3: `{form}` is not supported yet (", what, "see docs/ptx.md"])
    with pytest.raises(UnsupportedType, match=rf"^h.ptx:{lineno}:3: `{form}` is not supported yet"):
        warpsim.ptx.load(path, ptxas="none")


def test_cp_async_of_ampere_still_runs(inputs):
    line = "cp.async.ca.shared.global [%r1], [%rd2], 4;\n  cp.async.wait_all;"
    mod = warpsim.ptx.load(_ptx(inputs, "a.ptx", line=line, decl="\n  .shared .align 4 .b8 buf[16];"),
                           ptxas="none")
    assert mod.kernels == ["k"]
