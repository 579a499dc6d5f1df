"""The limits of the PTX load and launch path (issue 30's audit): inputs that hung, ate memory or gave Python's own
message now give one line naming the input, before anything big is built. Declared registers (at most 65536 slots
per thread), CUDA's grid and block limits (and ``cta=`` of a huge grid, which starts at once), integer literals
beyond 64 bits, a module of more statements than warpsim loads (and a notice before a long load), a byte that is not
UTF-8, the Hopper instructions warpsim does not run yet (refused by name, not by
their operand syntax), and Ctrl-C within a second of a long launch (which runs in slices)."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import warpsim.ptx
from bad_input_helpers import ROOT, assert_one_line_error, call, needs_sigint
from warpsim.errors import PtxSyntaxError, SimulatorFault, UnsupportedType
from warpsim.ptx.syntax import MAX_REGISTER_SLOTS, MAX_STATEMENTS

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
CTAID = """mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ctaid.y;
  mov.u32 %r3, %ctaid.z;
  st.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r3};"""
SPIN = HEAD + """.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 $str[9] = {115, 116, 97, 114, 116, 101, 100, 10};

.visible .entry spin(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<7>;
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra $L__BB0_2;
  mov.u64 %rd3, $str;
  cvta.global.u64 %rd4, %rd3;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd4;
  .param .b64 param1;
  st.param.b64 [param1+0], 0;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r2, [retval0+0];
  }
$L__BB0_2:
  cvta.to.global.u64 %rd5, %rd2;
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd1, %rd5, %rd6;
$L__BB0_3:
  ld.volatile.global.u32 %r3, [%rd1];
  add.s32 %r4, %r3, 1;
  st.volatile.global.u32 [%rd1], %r4;
  bra.uni $L__BB0_3;
}
"""


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


# ------------------------------------------------------------------------------------------------ grid and block

@pytest.mark.parametrize("option,value,fragments", [
    ("--grid", "2147483648", ["--grid 2147483648,1,1", "x = 2147483648 exceeds CUDA's limit of 2147483647"]),
    ("--grid", "65536,65536,65536", ["--grid 65536,65536,65536", "y = 65536 exceeds CUDA's limit of 65535"]),
    ("--grid", "1,1,65536", ["--grid 1,1,65536", "z = 65536 exceeds CUDA's limit of 65535"]),
    ("--block", "1,1,65", ["--block 1,1,65", "z = 65 exceeds CUDA's limit of 64"]),
    ("--block", "64,32", ["--block 64,32,1", "a block of 2048 threads exceeds 1024"]),
])
def test_grid_and_block_beyond_cuda(workdir, inputs, capsys, option, value, fragments):
    """Issue 30: ``--grid 2147483648`` and ``--grid 65536,65536,65536`` listed every CTA first (even with --cta 0)."""
    path = _ptx(inputs, "g.ptx")
    began = time.monotonic()
    status, out, err = _run(capsys, path, option, value, "--cta", "0")
    assert time.monotonic() - began < 10
    assert_one_line_error(status, err, "warpsim run", fragments)
    assert out == ""


def test_the_api_names_its_arguments(inputs):
    mod = warpsim.ptx.load(_ptx(inputs, "g.ptx"), ptxas="none")
    args = {"out": np.zeros(8, np.uint32)}
    with pytest.raises(ValueError, match=r"^launch: grid=\(1, 65536, 1\) .*y = 65536 exceeds CUDA's limit of 65535"):
        mod.launch("k", grid=(1, 65536), args=args, cta=0)
    with pytest.raises(ValueError, match=r"^launch: block=\(2, 2, 65\) .*z = 65 exceeds CUDA's limit of 64"):
        mod.launch("k", block=(2, 2, 65), args=args)


def test_one_cta_of_the_largest_grid_starts_at_once(workdir, inputs, capsys):
    """The CTAs are never listed: the last CTA of a 2^31 x 65535 x 65535 grid runs as fast as a grid of one."""
    path = _ptx(inputs, "c.ptx", line=CTAID)
    mod = warpsim.ptx.load(path, ptxas="none")
    began = time.monotonic()
    res = mod.launch("k", grid=(2**31 - 1, 65535, 65535), block=32, args={"out": np.zeros(4, np.uint32)},
                     cta=(2**31 - 2, 65534, 65533))
    assert res.buffers["out"][:3].tolist() == [2**31 - 2, 65534, 65533] and res.stats["ctas"] == 1
    res = mod.launch("k", grid=(2**31 - 1, 3, 1), block=32, args={"out": np.zeros(4, np.uint32)}, cta=2**31 + 5)
    assert res.buffers["out"][:3].tolist() == [6, 1, 0]
    status, out, err = _run(capsys, path, "--grid", "2147483647", "--cta", "2147483646")
    assert status == 0 and err == "" and "CTA 2147483646 only" in out, err
    assert time.monotonic() - began < 10


def test_max_steps_reached_where_a_cta_ends_is_the_step_limit(inputs):
    """A launch whose ``max_steps`` ran out exactly as a CTA finished looped for ever; now the next CTA's first
    instruction is the step limit's fault."""
    mod = warpsim.ptx.load(_ptx(inputs, "s.ptx"), ptxas="none")
    args = {"out": np.zeros(8, np.uint32)}
    per_cta = mod.launch("k", block=32, args=args).stats["warp_instructions"]
    with pytest.raises(SimulatorFault, match=rf"k: stopped after {per_cta} warp instructions .* in CTA \(1, 0, 0\)"):
        mod.launch("k", grid=2, block=32, args=args, max_steps=per_cta)


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


# ------------------------------------------------------------------------------------------------ size

def test_a_module_of_too_many_statements_is_refused_before_parsing(workdir, inputs, capsys):
    """Issue 30: a 50 MB kernel of 2.2 M ``add.s32`` lines did not load in 60 s (some 6 GB while parsing). Beyond
    MAX_STATEMENTS it is one line naming the file and the count, before a token is made."""
    path = _ptx(inputs, "huge.ptx", line="add.s32 %r1, %r1, 1;\n  " * MAX_STATEMENTS)
    status, out, err = _run(capsys, path)
    count = path.read_text().count(";")           # the adds and the kernel's other statements
    assert_one_line_error(status, err, "warpsim run", [f"huge.ptx: {count:,} statements of PTX",
                                                       f"warpsim loads at most {MAX_STATEMENTS:,}"])


def test_a_long_load_is_announced_first(workdir, inputs, capsys, monkeypatch):
    """From LARGE_STATEMENTS on, ``warpsim run`` says on stderr how long the load will take before it starts."""
    monkeypatch.setattr(warpsim.ptx, "LARGE_STATEMENTS", 10)
    path = _ptx(inputs, "long.ptx", line="add.s32 %r1, %r1, 1;\n  " * 20 + GOOD)
    status, out, err = _run(capsys, path, "--ptxas", "none")
    count = path.read_text().count(";")
    assert status == 0 and err.splitlines()[0] == f"warpsim run: long.ptx: {count} statements of PTX: loading, about 1 s"


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

HOPPER = [                          # the Hopper forms still refused (wgmma, mbarrier, TMA and elect run since issue 28)
    ("tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;", "tensormap", "TMA descriptors"),
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


@pytest.mark.parametrize("line,named", [
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.s32 [%rd1], [%r1], 16;",
     ".inc into global takes u32 (ptxas rejects .s32)"),
    ("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.min.u64 [%r1], [%r1], 16, [%r1];",
     ".min into shared::cluster takes u32, s32 (ptxas rejects .u64)"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [%rd1], [%r1], 16;",
     ".add.f16 needs .noftz (ptxas rejects it without)"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.max.bf16 [%rd1], [%r1], 16;", ".max.bf16 is not modelled yet"),
])
def test_bulk_reductions_ptxas_rejects_are_refused_in_one_line(workdir, inputs, capsys, line, named):
    path = _ptx(inputs, "r.ptx", line=line)
    lineno = _line_of(path, line.split()[0])
    status, out, err = _run(capsys, path)
    assert_one_line_error(status, err, "warpsim run", [f"r.ptx:{lineno}:3: cp.reduce.async.bulk.", named])


def test_cp_async_of_ampere_still_runs(inputs):
    line = "cp.async.ca.shared.global [%r1], [%rd2], 4;\n  cp.async.wait_all;"
    mod = warpsim.ptx.load(_ptx(inputs, "a.ptx", line=line, decl="\n  .shared .align 4 .b8 buf[16];"),
                           ptxas="none")
    assert mod.kernels == ["k"]


# ------------------------------------------------------------------------------------------------ Ctrl-C

@needs_sigint
def test_ctrl_c_stops_a_long_launch_within_a_second(inputs):
    """Issue 30: Ctrl-C took 12 s, the compiled interpreter not looking at signals; the launch now runs in slices
    and Python raises KeyboardInterrupt between two. (Before, it came when the whole launch ended: here a step-limit
    fault after 6 M warp instructions, some 13 s.) A real SIGINT, sent by another process."""
    mod = warpsim.ptx.load(SPIN, "spin.ptx", ptxas="none")
    killer = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -INT {os.getpid()}"])
    sent = time.monotonic() + 0.5
    try:
        with pytest.raises(KeyboardInterrupt):
            mod.launch("spin", block=128, args={"out": np.zeros(128, np.uint32)}, max_steps=6_000_000, quiet=True)
        latency = time.monotonic() - sent
    finally:
        killer.wait()
    assert latency < 1.0, f"KeyboardInterrupt {latency:.2f} s after Ctrl-C"


@needs_sigint
def test_ctrl_c_of_warpsim_run_is_interrupted_130(tmp_path):
    """The process: once the kernel has printed (its first slice ran) and is still running a second later (20 M warp
    instructions take some 45 s), SIGINT ends it within a second or two. (Before, the printf came only when the
    launch ended, at its step limit.)"""
    (tmp_path / "spin.ptx").write_text(SPIN)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "warpsim", "run", "spin.ptx", "--kernel", "spin", "--arg",
                             "out=zeros:u32:128", "--ptxas", "none"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        first = proc.stdout.readline()          # the kernel's printf, written after the first slice
        time.sleep(1.0)
        running = proc.poll() is None
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert first == "started\n", (first, err)
    assert running, f"the launch had ended a second after its first printf: {err}"
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "warpsim run: interrupted" and "Traceback" not in err, err
    assert took < 2.0, f"exited {took:.2f} s after SIGINT"
