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
    with pytest.raises(ValueError, match=r"unknown architecture 'sm_75' \(choose one of sm_80, sm_90\)"):
        arch_name("sm_75")


@pytest.mark.parametrize("parser, name", [(build_parser, "warpsim"), (hwcheck_parser, "hwcheck")])
def test_version(parser, name, capsys):
    with pytest.raises(SystemExit) as e:
        parser().parse_args(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(name) and __version__ in out


def test_random_args_are_one_spelling_and_one_draw_for_warpsim_and_hwcheck(tmp_path):
    """``--arg x=random:u32:32`` with ``--seed 3`` is the same bits in ``warpsim run`` as in ``hwcheck run``."""
    import numpy as np

    from warpsim.commands import main as warpsim_main
    from warpsim.frontends.args import arg_values, concrete_args, parse_arg

    pairs = ["x=random:u32:32", "h=random:f16:4x2:0.5", "y=zeros:u32:32", "n=7"]
    values, labels = arg_values(pairs, seed=3)
    again = concrete_args(dict(parse_arg(p) for p in pairs), 3)          # what hwcheck run draws for seed 3
    assert all(np.array_equal(values[k], again[k]) for k in ("x", "h", "y")) and values["n"] == again["n"] == 7
    assert labels["h"] == "--arg h=random:f16:4x2:0.5" and np.abs(values["h"].astype(float)).max() < 0.5
    assert not np.array_equal(arg_values(pairs, seed=4)[0]["x"], values["x"])
    assert warpsim_main(["run", "examples/ptx/warp_pairs.ptx", "--kernel", "warp_pairs", "--block", "32",
                         "--arg", "x=random:u32:32", "--arg", "y=zeros:u32:32", "--seed", "3",
                         "--dump", "x", "--out", str(tmp_path)]) == 0
    assert np.array_equal(np.load(tmp_path / "x.npy"), values["x"])


def test_numpys_dtype_names_are_taken_in_arg_specs():
    """``zeros:float32:8`` and ``random:int16:4`` are ``zeros:f32:8`` and ``random:i16:4``: the same array, the same
    draw; a name neither spells is one line listing both."""
    import numpy as np

    from warpsim.frontends.args import arg_values

    ours, _ = arg_values(["a=zeros:f32:8", "b=random:i16:4", "c=random:f16:2x2:0.5"], seed=5)
    numpys, _ = arg_values(["a=zeros:float32:8", "b=random:int16:4", "c=random:float16:2x2:0.5"], seed=5)
    for k in "abc":
        assert numpys[k].dtype == ours[k].dtype and np.array_equal(numpys[k], ours[k]), k
    with pytest.raises(ValueError, match=r"^--arg a=zeros:float128:8: expected zeros:DTYPE:SHAPE with DTYPE one of "
                                         r"f16, .* \(or numpy's names: float16, .*int64\)$"):
        arg_values(["a=zeros:float128:8"], seed=5)
