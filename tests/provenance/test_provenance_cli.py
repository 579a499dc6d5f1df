"""``warpsim check`` and ``warpsim run --strict``: the project's correct kernels are silent, the wrong attention
tile is flagged with both source lines, and bad input is one line with exit status 2."""

from pathlib import Path

import pytest

from warpsim.cli import main
from warpsim.commands.check import check_source

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ATTN = HERE / "attn_tile.cu"
FLASH = HERE / "flash_tile.cu"
ATTN_DSL = HERE / "attn_tile_dsl.py"
WRONG_PTX = HERE / "p_as_f16.ptx"



def marked_line(path, marker):
    """``name:line`` of the line of ``path`` that ends with the comment ``// marker`` (``# marker`` in Python)."""
    comment = "#" if path.suffix == ".py" else "//"
    lines = path.read_text().splitlines()
    [number] = [n for n, line in enumerate(lines, 1) if line.rstrip().endswith(f"{comment} {marker}")]
    return f"{path.name}:{number}"


def cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("path", sorted((ROOT / "examples/ptx").glob("*.ptx")), ids=lambda p: p.name)
def test_example_ptx_is_silent(path):
    names, findings = check_source(path)
    assert names and findings == []


# the plain flash build at sm_80 only with --slow: a compile of its own (30-40 s of nvcc on 2 cores with a cold cache)
# and an 8-kernel check, while tests/flash/test_flash_cpp.py checks the same source at sm_90 (the PTX it simulates)
# and tests/provenance/test_provenance_flash.py the f16 kernels of an sm_80 copy; the fast-math build stays (no other
# default test checks it)
CUTE_CPP = [pytest.param(p, id=p.name, marks=pytest.mark.slow if p.name == "flash_fwd.cu" else ())
            for p in sorted((ROOT / "examples/cute_cpp").glob("*.cu")) + [ROOT / "examples/ptx/directed.cu"]]


@pytest.mark.parametrize("path", CUTE_CPP)
def test_example_cute_cpp_is_silent(need_nvcc, path):
    names, findings = check_source(path, arch="sm_80")
    assert names and findings == [], "\n".join(map(str, findings))


@pytest.mark.parametrize("path", sorted((ROOT / "examples/cute_dsl").glob("*.py")), ids=lambda p: p.name)
def test_example_cute_dsl_is_silent(need_dsl, path):
    hopper = "# warpsim: arch sm_90a" in path.read_text(encoding="utf-8")      # wgmma: that target only
    names, findings = check_source(path, arch="sm_90" if hopper else "sm_80")
    assert names and findings == [], "\n".join(map(str, findings))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_p_packed_as_f16_is_flagged_with_both_lines(need_nvcc, arch):
    assert check_source(ATTN, arch=arch) == (["attn_tile"], [])
    _names, [finding] = check_source(ATTN, arch=arch, nvcc_flags=("-DP_AS_HALF",))
    assert finding.consumer_line == marked_line(ATTN, "CONSUMER")
    assert finding.producer_line == marked_line(ATTN, "PRODUCER")
    f = finding.finding
    assert (f.produced, f.expected) == ("f16x2", "bf16x2") and f.operand.startswith("A register")
    assert f.producer.text == "cvt.rn.f16x2.f32" and f.consumer.text.endswith(".f32.bf16.bf16.f32")
    assert finding.pairs == 4                        # the four registers of P's A fragment
    line = str(finding)
    for part in (marked_line(ATTN, "CONSUMER"), marked_line(ATTN, "PRODUCER"), f"attn_tile.{arch}.ptx:"
                 f"{f.consumer.ptx_line}", f"attn_tile.{arch}.ptx:{f.producer.ptx_line}", "cvt.rn.f16x2.f32",
                 "as bf16x2", "as f16x2"):
        assert part in line


@pytest.mark.slow       # ~28 s of nvcc cold; tests/provenance/test_provenance_flash.py flags the example's P by default
def test_flash_forward_p_in_the_other_type_is_flagged(need_nvcc):
    assert check_source(FLASH, arch="sm_80") == (["fa_fwd"], [])
    _names, [finding] = check_source(FLASH, arch="sm_80", nvcc_flags=("-DPTYPE=half_t",))
    assert (finding.consumer_line, finding.producer_line) == (marked_line(FLASH, "P V"), marked_line(FLASH, "P"))
    f = finding.finding
    assert (f.produced, f.expected, f.producer.text) == ("f16x2", "bf16x2", "cvt.rn.f16x2.f32")
    assert finding.pairs > 4                          # P's registers feed every n8 tile of P V, in a loop


def test_ptx_out_writes_the_ptx_the_findings_name(need_nvcc, capsys, tmp_path):
    status, out, _err = cli(capsys, "check", ATTN, "--arch", "sm_80", "--nvcc-flags=-DP_AS_HALF",
                            "--ptx-out", tmp_path / "ptx")
    assert status == 1
    ptx = (tmp_path / "ptx" / "attn_tile.sm_80.ptx").read_text().splitlines()
    _names, [finding] = check_source(ATTN, arch="sm_80", nvcc_flags=("-DP_AS_HALF",))
    assert f"attn_tile.sm_80.ptx:{finding.finding.producer.ptx_line} cvt.rn.f16x2.f32" in out
    assert "cvt.rn.f16x2.f32" in ptx[finding.finding.producer.ptx_line - 1]
    assert ptx[finding.finding.consumer.ptx_line - 1].strip().startswith("mma.sync.aligned.m16n8k16")
    assert sorted(p.name for p in (tmp_path / "ptx").iterdir()) == ["attn_tile.sm_80.ptx"]


def test_cute_dsl_p_as_f16_is_flagged_with_both_python_lines(need_dsl):
    names, [finding] = check_source(ATTN_DSL, arch="sm_80")
    assert len(names) == 2 and finding.kernel.endswith("_Float16_0")          # the BFloat16 kernel is silent
    assert finding.ptx_name == "attn_tile_dsl.1.sm_80.ptx"                     # the second WARPSIM entry
    assert (finding.consumer_line, finding.producer_line) == (marked_line(ATTN_DSL, "P V"),
                                                              marked_line(ATTN_DSL, "P"))
    f = finding.finding
    assert (f.produced, f.expected, f.producer.text) == ("f16x2", "bf16x2", "cvt.rn.f16x2.f32")


def test_cli_exit_status_and_one_line_per_finding(capsys):
    status, out, err = cli(capsys, "check", WRONG_PTX)
    assert status == 1 and err == ""
    lines = out.splitlines()
    assert lines[-1] == "attn_p: 1 type-provenance finding"
    assert len(lines) == 2 and "p_as_f16.ptx:" in lines[0] and "reads A register" in lines[0]
    status, out, _err = cli(capsys, "check", ROOT / "examples/ptx/add_index.ptx", "--kernel", "add_index")
    assert status == 0 and out == "add_index: no type-provenance findings\n"


@pytest.mark.parametrize("argv, message", [
    (["missing.ptx"], "missing.ptx: no such file"),
    ([ROOT / "examples/ptx/add_index.ptx", "--kernel", "nope"], "--kernel nope: no such kernel; the module has: "
                                                                "add_index"),
    ([ROOT / "examples/gemm_smem.py"], "a warpsim Python program, not a CuTe DSL file"),
    ([ROOT / "examples/ptx/add_index.ptx", "--arch", "sm_75"], "--arch sm_75: choose one of sm_80, sm_90"),
])
def test_bad_input_is_one_line(capsys, argv, message):
    status, out, err = cli(capsys, "check", *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("warpsim check: error: ") and message in err


def test_bad_ptx_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.entry k() { mov.u32 %r1 }\n")
    status, _out, err = cli(capsys, "check", bad)
    assert status == 2 and err.count("\n") == 1 and "bad.ptx:4:" in err
    bad.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.func f() { ret; }\n")
    status, _out, err = cli(capsys, "check", bad)
    assert status == 2 and err == "warpsim check: error: bad.ptx: no kernel (.entry) to check\n"


def test_run_strict_refuses_a_kernel_with_findings(capsys):
    status, out, err = cli(capsys, "run", WRONG_PTX, "--kernel", "attn_p", "--strict", "--block", "32")
    assert status == 1 and "attn_p" not in out
    assert "reads A register" in err and err.splitlines()[-1] == ("warpsim run: --strict: 1 type-provenance "
                                                                  "finding; the kernel was not run")


def test_run_strict_runs_a_clean_kernel(capsys, tmp_path):
    add_index = ROOT / "examples/ptx/add_index.ptx"
    argv = ["run", add_index, "--kernel", "add_index", "--block", "32", "--arg", "x=zeros:u32:32",
            "--arg", "y=zeros:u32:32", "--arg", "n=32"]
    plain = cli(capsys, *argv)
    strict = cli(capsys, *argv, "--strict")
    assert plain[0] == strict[0] == 0 and strict[1] == plain[1] and "add_index" in strict[1]
