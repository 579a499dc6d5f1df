"""The project's flash-attention forward kernels (``examples/cute_cpp/flash_fwd.cu``,
``examples/cute_dsl/flash_fwd.py``) under ``warpsim check``: as written every kernel is silent (the
example folders' tests check that); with P packed as f16 in the bf16 kernels -- the source edited in a
temporary copy -- each bf16 kernel is flagged at its ``P V`` gemm and its f16 kernels stay silent.

The edit is a text substitution of the line that packs P; a test fails (not skips) when that line is
gone, so a rewrite of the example shows up here."""

from pathlib import Path

import pytest

from warpsim.commands.check import check_source

ROOT = Path(__file__).resolve().parents[2]
FLASH_CPP = ROOT / "examples/cute_cpp/flash_fwd.cu"
FLASH_DSL = ROOT / "examples/cute_dsl/flash_fwd.py"


def p_as_f16(source, tmp_path, old, new):
    """A copy of ``source`` in ``tmp_path`` with ``old`` (which must occur once) made ``new``."""
    if not source.exists():
        pytest.skip(f"{source.relative_to(ROOT)} is not in this tree")
    text = source.read_text()
    if text.count(old) != 1:
        pytest.fail(f"{source.relative_to(ROOT)}: the line that packs P ({old!r}) is not there once: update "
                    "this test to the example")
    wrong = tmp_path / source.name
    wrong.write_text(text.replace(old, new))
    return wrong


def assert_bf16_kernels_flagged(names, findings):
    flagged = {f.kernel for f in findings}
    assert flagged == {n for n in names if "bf16" in n} and flagged
    for f in findings:
        assert (f.finding.produced, f.finding.expected) == ("f16x2", "bf16x2")
        assert f.finding.producer.text == "cvt.rn.f16x2.f32" and f.finding.operand.startswith("A register")
        assert f.consumer_line and f.producer_line


def test_cute_cpp_flash_with_p_as_f16_is_flagged(need_nvcc, tmp_path):
    wrong = p_as_f16(FLASH_CPP, tmp_path, "pack_rn<T>(acc_s(i), acc_s(i + 1))",
                     "pack_rn<half_t>(acc_s(i), acc_s(i + 1))")
    names, findings = check_source(wrong, arch="sm_80")
    assert_bf16_kernels_flagged(names, findings)
    gemm_line = next(n for n, line in enumerate(FLASH_CPP.read_text().splitlines(), 1)
                     if "cute::gemm(tiled_mma, tOrP" in line)
    assert all(f.consumer_line.endswith(f">{gemm_line}") for f in findings)


@pytest.mark.slow       # ~14 s; test_provenance_cli's DSL attention tile flags P as f16 with both lines by default
def test_cute_dsl_flash_with_p_as_f16_is_flagged(need_dsl, tmp_path):
    wrong = p_as_f16(FLASH_DSL, tmp_path, '"bf16": "cvt.rn.bf16x2.f32"', '"bf16": "cvt.rn.f16x2.f32"')
    names, findings = check_source(wrong, arch="sm_80")
    assert_bf16_kernels_flagged(names, findings)
