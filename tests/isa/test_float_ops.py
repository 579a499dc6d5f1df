"""The registry of float scalar models (warpsim.isa.fpops) covers every model and calls each one."""

from warpsim.isa import fp64, fparith, fpcompare, mufu16
from warpsim.isa.fpops import FLOAT_OPS, MODIFIER_NAMES


def test_every_typed_model_is_registered_once():
    names = [n for m in (fparith, fpcompare, mufu16, fp64) for n in m.__all__ if n.split("_")[0] in
             ("f32", "f16", "bf16", "f16x2", "bf16x2", "f64")]
    assert len(names) == len(FLOAT_OPS) >= 58 + 15
    assert {"_".join((t, op) + e.implied) for (op, t), e in FLOAT_OPS.items()} == set(names)
    assert {k for k, e in FLOAT_OPS.items() if e.implied} == {(op, t) for op in ("ex2", "tanh")
                                                              for t in ("f16", "bf16", "f16x2", "bf16x2")}
    assert FLOAT_OPS[("ex2", "bf16")].implied == ("approx", "ftz") and FLOAT_OPS[("tanh", "bf16")].implied == ("approx",)


def test_every_model_runs_with_its_parameters():
    for (op, t), entry in FLOAT_OPS.items():
        assert entry.sources in (("a",), ("a", "b"), ("a", "b", "c")), (op, t)
        assert set(entry.modifiers) <= set(MODIFIER_NAMES), (op, t, entry.modifiers)
        ones = {"f32": 0x3F800000, "f64": 0x3FF0000000000000}.get(t, 0x3C00 if t.startswith("f16") else 0x3F80)
        if t.endswith("x2"):
            ones |= ones << 16
        out = entry.function(*[ones] * len(entry.sources), *[0] * len(entry.modifiers))
        assert out is not None, (op, t)
    assert FLOAT_OPS[("fma", "f32")].function(0x3F800000, 0x3F800000, 0x3F800000, 0, False, False) == 0x40000000
