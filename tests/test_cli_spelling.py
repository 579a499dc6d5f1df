"""One spelling of the options every verb shares: ``--arch sm_80|sm_90`` (``sm80``/``sm90`` still taken) for
programs, kernels and hwcheck alike, and ``--version`` on both commands."""

import pytest

from hwcheck.arch import model_arch
from hwcheck.cli.main import build_parser as hwcheck_parser
from warpsim import __version__
from warpsim.commands import build_parser, main
from warpsim.isa.arith import arch_name, get_arch


@pytest.mark.parametrize("spelling, model", [("sm_90", "sm90"), ("sm90", "sm90"), ("SM_80", "sm80"), ("80", "sm80")])
def test_every_spelling_of_an_arch_names_one_model(spelling, model):
    assert arch_name(spelling) == model and get_arch(spelling).name == model
    assert model_arch("90", spelling) == model
    args = build_parser().parse_args(["run", "prog.py", "--arch", spelling])
    assert args.arch == model
    assert hwcheck_parser().parse_args(["run", "prog.py", "--arch", spelling]).arch == model


def test_an_unknown_arch_is_one_line_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "examples/gemm_smem.py", "--arch", "sm_81"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == "warpsim run: error: argument --arch: sm_81: choose one of sm_80, sm_90"
    with pytest.raises(ValueError, match=r"--arch sm_75: choose one of sm_80, sm_90"):
        arch_name("sm_75")


@pytest.mark.parametrize("parser, name", [(build_parser, "warpsim"), (hwcheck_parser, "hwcheck")])
def test_version(parser, name, capsys):
    with pytest.raises(SystemExit) as e:
        parser().parse_args(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(name) and __version__ in out
