"""Bad input: malformed PTX, unknown instructions, unsupported types, wrong kernels and arguments."""

import numpy as np
import pytest

import warpsim.ptx
from warpsim.errors import PtxSyntaxError, UnsupportedType
from warpsim.isa import sfu_sincos
from tests.ptx.ptx_helpers import HEADER, kernel, load


@pytest.mark.parametrize("text,message", [
    (HEADER + ".visible .entry k()\n{\n  .reg .b32 %r<2>;\n  add.u32 %r1, %r1 %r1;\n  ret;\n}",
     r"^k\.ptx:7:20: expected ',' at '%r1'$"),
    (HEADER + ".visible .entry k()\n{\n  .reg .b32 %r<2>;\n  ret;\n", r"^k\.ptx:4:\d+: missing '\}'"),
    (HEADER + ".visible .entry k()\n{\n  .reg .b32 %r<2>;\n  mov.u32 %r1, #;\n}", r"^k\.ptx:7:16: unexpected character '#'"),
    (HEADER + ".visible .entry k(.param .q32 x)\n{\n ret;\n}", r"^k\.ptx:4:26: unknown variable attribute '\.q32'"),
    (HEADER + ".visible .bogus k()\n{\n}", r"^k\.ptx:4:10: expected \.entry, \.func or a variable declaration"),
])
def test_malformed_ptx_names_file_line_column_and_token(text, message):
    with pytest.raises(PtxSyntaxError, match=message):
        warpsim.ptx.load(text, filename="k.ptx")


def _launch(body, **kw):
    return load(body).launch("k", block=32, args={"out": np.zeros(32, np.uint32)}, **kw)


def test_unknown_instruction_lists_the_supported_ones():
    with pytest.raises(PtxSyntaxError, match=r"<ptx>:\d+:3: unknown instruction 'frobnicate' \(supported: .*add.*bra.*xor"):
        _launch("  frobnicate.u32 %r1, %r2;\n")


def test_float_instructions_not_modelled_bit_exactly_are_refused_at_load(monkeypatch):
    with pytest.raises(UnsupportedType, match=r"<ptx>:\d+:3: rsqrt\.approx\.ftz\.f64: this MUFU approximation is "
                                              r"not modelled bit-exactly yet"):
        load("  rsqrt.approx.ftz.f64 %rd1, %rd2;\n")
    monkeypatch.setattr(sfu_sincos, "HARDWARE_PROOF", None)      # a model without its H200 proof
    with pytest.raises(UnsupportedType, match=r"<ptx>:\d+:3: sin\.approx\.f32: modelled \(warpsim\.isa\.sfu_sincos\) "
                                              r"but not yet proven on the H200 at every input; pending "):
        load("  sin.approx.f32 %r1, %r2;\n")


def test_undeclared_register_and_unknown_label():
    with pytest.raises(PtxSyntaxError, match=r"undeclared register %x9 at '%x9'"):
        _launch("  mov.u32 %x9, 1;\n")
    with pytest.raises(PtxSyntaxError, match=r"unknown branch target at 'NOWHERE'"):
        _launch("  bra NOWHERE;\n")


def test_kernel_not_found_lists_the_kernels():
    mod = warpsim.ptx.load(kernel("", name="alpha") + kernel("", name="beta").replace(HEADER, ""))
    assert mod.kernels == ["alpha", "beta"]
    with pytest.raises(ValueError, match=r"no kernel 'gamma' \(kernels: alpha, beta\)"):
        mod.launch("gamma", args={})


def test_wrong_arguments_name_the_parameters_and_types():
    text = HEADER + ".visible .entry k(.param .u64 A, .param .s32 n)\n{\n  ret;\n}"
    mod = warpsim.ptx.load(text)
    with pytest.raises(ValueError, match=r"k: wrong arguments \(missing n\); parameters: A: \.u64, n: \.s32"):
        mod.launch("k", args={"A": np.zeros(4)})
    with pytest.raises(ValueError, match=r"k: wrong arguments \(unknown m\); parameters"):
        mod.launch("k", args={"A": np.zeros(4), "n": 1, "m": 2})
    with pytest.raises(ValueError, match=r"k: 1 arguments for 2 parameters \(A: \.u64, n: \.s32\)"):
        mod.launch("k", args=[np.zeros(4)])
    with pytest.raises(TypeError, match=r"k: parameter n is \.s32, not a pointer"):
        mod.launch("k", args={"A": np.zeros(4), "n": np.zeros(4)})
    with pytest.raises(TypeError, match=r"k: parameter n \(\.s32\) takes an int, got str"):
        mod.launch("k", args={"A": np.zeros(4), "n": "3"})
    with pytest.raises(ValueError, match=r"k: parameter n \(\.s32\) = 4294967296 does not fit 32 bits"):
        mod.launch("k", args={"A": np.zeros(4), "n": 1 << 32})


def test_bad_launch_shapes():
    mod = load("")
    with pytest.raises(ValueError, match=r"launch: block must be 1 to 3 positive ints, got \(0, 1\)"):
        mod.launch("k", block=(0, 1), args={"out": np.zeros(1)})
    with pytest.raises(ValueError, match=r"launch: block=\(2048, 1, 1\) \(--block 2048,1,1\): a block of 2048 threads exceeds 1024"):
        mod.launch("k", block=2048, args={"out": np.zeros(1)})
    with pytest.raises(ValueError, match=r"launch: cta 5 is outside the grid \(2, 1, 1\)"):
        mod.launch("k", grid=2, cta=5, args={"out": np.zeros(1)})


def test_load_reads_files_and_reports_missing_ones(tmp_path):
    path = tmp_path / "one.ptx"
    path.write_text(kernel(""))
    assert warpsim.ptx.load(str(path)).kernels == ["k"]
    assert warpsim.ptx.load(path).filename == "one.ptx"
    with pytest.raises(FileNotFoundError):
        warpsim.ptx.load(str(tmp_path / "missing.ptx"))


def test_reqntid_and_maxntid_are_enforced():
    text = HEADER + ".visible .entry k()\n.reqntid 64, 1, 1\n{\n  ret;\n}\n.visible .entry m()\n.maxntid 32, 1, 1\n{\n  ret;\n}"
    mod = warpsim.ptx.load(text)
    mod.launch("k", block=64, args={})
    with pytest.raises(ValueError, match=r"k: \.reqntid \(64, 1, 1\) requires block \(64, 1, 1\), got \(32, 1, 1\)"):
        mod.launch("k", block=32, args={})
    with pytest.raises(ValueError, match=r"m: \.maxntid \(32, 1, 1\) allows at most 32 threads"):
        mod.launch("m", block=64, args={})


def test_the_ptx_package_imports_only_lower_layers():
    import ast
    import pathlib
    root = pathlib.Path(warpsim.ptx.__file__).parent
    allowed = ("warpsim.ptx", "warpsim.isa", "warpsim.machine", "warpsim.errors", "warpsim.files",
               "warpsim.toolchain")   # the CUDA tools on the host (tests/test_layers.py), for ptx.contraction
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "warpsim":
                names = [f"warpsim.{a.name}" for a in node.names]       # from warpsim import ptx
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name.startswith("warpsim"):
                    assert name.startswith(allowed), f"{path.name} imports {name} (a layer above or beside ptx)"

