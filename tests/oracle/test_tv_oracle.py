"""warpsim's tiled MMA / tiled copy partitions against real CuTe, for every thread of every configuration.

For each configuration of ``tv_cases.py`` and each thread, CuTe (compiled by nvcc) printed the
partition, fragment, copy-partition and copy-view layouts, the copy partition's shared-memory
element offsets, the copy view's register slots and every MMA-view element's (row, col). A
failure names the configuration, the thread, the quantity, and CuTe's and warpsim's values.
"""

import numpy as np
import pytest

import warpsim.cute as cute
from tv_build import (
    copy_c_setup, copy_setup, element_offsets, first_difference, fragment, mma_setup, partition,
)
from tv_cases import copy_c_configs, copy_configs, mma_configs
from warpsim.cute.calls import copy_calls, gemm_calls

pytestmark = pytest.mark.oracle

MMA_CONFIGS = mma_configs()
COPY_CONFIGS = copy_configs()
COPY_C_CONFIGS = copy_c_configs()


def _record(cute_oracle, case_id):
    record = cute_oracle.static.get(case_id)
    assert record is not None, f"{case_id}: the oracle binary did not print this case"
    return record


class Checker:
    """Collects mismatches so that one test reports every differing quantity of a configuration."""

    def __init__(self, name):
        self.name, self.errors = name, []

    def text(self, where, what, want, got):
        if want != str(got):
            self.errors.append(f"{where}: {what}: CuTe {want!r}, warpsim {str(got)!r}")

    def values(self, where, what, want, got):
        diff = first_difference(want, got)
        if diff:
            self.errors.append(f"{where}: {what}: {diff}")

    def done(self):
        if self.errors:
            shown = "\n  ".join(self.errors[:20])
            more = f"\n  ... and {len(self.errors) - 20} more" if len(self.errors) > 20 else ""
            pytest.fail(f"{self.name}: {len(self.errors)} mismatches with CuTe:\n  {shown}{more}")


def check_copy_layouts(check, st, tc):
    """A TiledCopy's tiler and TV layouts against the oracle's "static" record."""
    check.text("static", "Tiler_MN", st["tiler"], cute.cute_str(tc.Tiler_MN))
    check.text("static", "TiledLayout_TV", st["tv"], tc.TiledLayout_TV)
    check.text("static", "get_layoutS_TV", st["layoutS_TV"], tc.get_layoutS_TV())
    check.text("static", "get_layoutD_TV", st["layoutD_TV"], tc.get_layoutD_TV())


def _byte_offsets(calls, side):
    """Byte offsets of a copy side: addresses for memory, slot * element size for registers."""
    values = getattr(calls, side)
    if getattr(calls, f"{side}_space") == "rmem":
        return values * (cute.dtype_bits(getattr(calls, f"{side}_dtype")) // 8)
    return values


def recorded_copy(calls, per_call):
    """warpsim's copy calls in the oracle's recording format: per call, the byte offset of the source
    register (one per call) and of each destination register (``per_call - 1``)."""
    src, dst = _byte_offsets(calls, "src"), _byte_offsets(calls, "dst")
    n_dst = per_call - 1
    step = dst.shape[-1] // n_dst
    return np.concatenate([src[:, :1], dst[:, ::step][:, :n_dst]], axis=1)


def recorded_gemm(calls):
    """warpsim's gemm calls in the oracle's format: registers of D, A, B, C per call."""
    c = calls.registers("C")
    return np.concatenate([c, calls.registers("A"), calls.registers("B"), c], axis=1)


def test_corpus_covers_the_issue():
    """At least 20 configurations; every atom, the four thread layouts, both dtypes, copies."""
    assert len(MMA_CONFIGS) + len(COPY_CONFIGS) >= 20
    text = " ".join(c.mma.py + c.a.copy.py + c.b.copy.py + (c.c_copy.py if c.c_copy else "") for c in MMA_CONFIGS)
    text += " ".join(c.atom.py for c in COPY_CONFIGS)
    for name in list(cute.MMA_OPS) + [n for n in cute.COPY_OPS if "LDSM" in n]:
        assert name in text, f"no oracle configuration uses {name}"
    for bits in (16, 32, 64, 128):
        assert f"UniversalCopy({bits})" in text, f"no oracle configuration uses UniversalCopy<uint{bits}_t>"
    for thr in ["(1, 1, 1)", "(2, 2, 1)", "(4, 1, 1)", "(1, 4, 1)"]:
        assert thr in text, f"no configuration with thread layout {thr}"
    assert {c.ab for c in MMA_CONFIGS} >= {"f16", "bf16"}


@pytest.mark.parametrize("cfg", MMA_CONFIGS, ids=[c.name for c in MMA_CONFIGS])
def test_mma_config(cfg, cute_oracle):
    record = _record(cute_oracle, f"tv/mma/{cfg.name}")
    setup = mma_setup(cfg)
    tm = setup.tiled_mma
    check = Checker(f"tv/mma/{cfg.name}")
    st = record["static"]
    check.text("static", "get_layoutA_TV", st["layoutA_TV"], tm.get_layoutA_TV())
    check.text("static", "get_layoutB_TV", st["layoutB_TV"], tm.get_layoutB_TV())
    check.text("static", "get_layoutC_TV", st["layoutC_TV"], tm.get_layoutC_TV())
    check.text("static", "ThrLayoutVMNK", st["vmnk"], tm.get_thr_layout_vmnk())
    for name in "AB":
        tc = setup.copies[name]
        check.text("static", f"copy {name} Tiler_MN", st[f"tiler{name}"], cute.cute_str(tc.Tiler_MN))
        check.text("static", f"copy {name} TiledLayout_TV", st[f"tv{name}"], tc.TiledLayout_TV)
        check.text("static", f"shared layout {name}", st[f"sLayout{name}"], setup.tensors[name][0].layout)
    acc = cute.partition_fragment_C(tm, cfg.shape_mn)
    check.text("static", "partition_fragment_C", st["fC"], acc.layout)
    thr0 = tm.get_slice(0)
    frags = {name: fragment(thr0, name, setup.tensors[name][1]) for name in "AB"}
    check.values("static", "gemm(tiled_mma, fA, fB, acc) calls (D, A, B, C registers)", st["gemm"],
                 recorded_gemm(gemm_calls(tm, frags["A"], frags["B"], acc)))
    ident_c = cute.make_identity_tensor(cfg.shape_mn)
    for rec in record["threads"]:
        t = rec["t"]
        where = f"thread {t}"
        thr = tm.get_slice(t)
        for name in "AB":
            smem, twin = setup.tensors[name]
            frag = fragment(thr, name, twin)
            tcopy = setup.copies[name].get_slice(t)
            src = tcopy.partition_S(smem)
            view = tcopy.retile_D(frag)
            check.text(where, f"partition_{name}", rec[f"p{name}"], partition(thr, name, smem).layout)
            check.text(where, f"partition_fragment_{name}", rec[f"f{name}"], frag.layout)
            check.text(where, f"copy {name} partition_S", rec[f"s{name}"], src.layout)
            check.text(where, f"copy {name} retile_D", rec[f"v{name}"], view.layout)
            check.values(where, f"copy {name} partition_S element offsets", rec[f"a{name}"], element_offsets(src))
            check.values(where, f"copy {name} retile_D slots", rec[f"l{name}"], view.slot_table())
            ident = cute.make_identity_tensor(setup.shape_mk[name])
            check.values(where, f"partition_{name}(identity) (row, col)", rec[f"c{name}"],
                         partition(thr, name, ident).coord_table())
            check.text(where, f"partition_{name}(make_identity_tensor(shape(s{name})))", rec[f"i{name}"],
                       partition(thr, name, cute.make_identity_tensor(smem.shape)))
            kx = rec[f"k{name}"]
            check.values(where, f"copy {name} calls (src, dst register byte offsets)", kx,
                         recorded_copy(copy_calls(setup.copies[name], src, view), len(kx[0])))
        check.text(where, "partition_fragment_C(identity)", rec["pfC"], thr.partition_fragment_C(ident_c).layout)
        check.values(where, "partition_C(identity) (row, col)", rec["cC"], thr.partition_C(ident_c).coord_table())
        if setup.c_copy is not None:
            tcopy = setup.c_copy.get_slice(t)
            dst = tcopy.partition_D(setup.c_tensor)
            view = tcopy.retile_S(acc)
            check.text(where, "copy C partition_D", rec["sC"], dst.layout)
            check.text(where, "copy C retile_S", rec["vC"], view.layout)
            check.values(where, "copy C partition_D element offsets", rec["aC"], element_offsets(dst))
            check.values(where, "copy C retile_S slots", rec["lC"], view.slot_table())
            check.values(where, "copy C calls (src, dst register byte offsets)", rec["kC"],
                         recorded_copy(copy_calls(setup.c_copy, view, dst), len(rec["kC"][0])))
    check.done()


@pytest.mark.parametrize("cfg", COPY_CONFIGS, ids=[c.name for c in COPY_CONFIGS])
def test_copy_config(cfg, cute_oracle):
    record = _record(cute_oracle, f"tv/copy/{cfg.name}")
    setup = copy_setup(cfg)
    tc = setup.tiled_copy
    check = Checker(f"tv/copy/{cfg.name}")
    st = record["static"]
    check_copy_layouts(check, st, tc)
    for rec in record["threads"]:
        t = rec["t"]
        where = f"thread {t}"
        thr = tc.get_slice(t)
        src, dst = thr.partition_S(setup.src), thr.partition_D(setup.dst)
        check.text(where, "partition_S", rec["sS"], src.layout)
        check.text(where, "partition_D", rec["sD"], dst.layout)
        check.text(where, "make_fragment_like(partition_S)", rec["fS"], cute.make_fragment_like(src).layout)
        check.values(where, "partition_S element offsets", rec["aS"], element_offsets(src))
        check.values(where, "partition_D element offsets", rec["aD"], element_offsets(dst))
        check.values(where, "copy calls (src, dst byte offsets)", rec["kS"],
                     recorded_copy(copy_calls(tc, src, dst), len(rec["kS"][0])))
    check.done()


@pytest.mark.parametrize("cfg", COPY_C_CONFIGS, ids=[c.name for c in COPY_C_CONFIGS])
def test_copy_c_config(cfg, cute_oracle):
    """make_tiled_copy_C: the TiledCopy's layouts, and for a few threads its partitions of shared C
    (as source and as destination) and its views of the accumulator (slots)."""
    record = _record(cute_oracle, f"tv/copy_c/{cfg.name}")
    setup = copy_c_setup(cfg)
    tc = setup.tiled_copy
    check = Checker(f"tv/copy_c/{cfg.name}")
    st = record["static"]
    check_copy_layouts(check, st, tc)
    assert [rec["t"] for rec in record["threads"]] == list(cfg.threads)
    for rec in record["threads"]:
        t = rec["t"]
        where = f"thread {t}"
        thr = tc.get_slice(t)
        for side, part, view in (("S", thr.partition_S, thr.retile_S), ("D", thr.partition_D, thr.retile_D)):
            tensor, frag = part(setup.c_tensor), view(setup.acc)
            check.text(where, f"partition_{side}(sC)", rec[f"s{side}"], tensor.layout)
            check.values(where, f"partition_{side}(sC) element offsets", rec[f"a{side}"], element_offsets(tensor))
            check.text(where, f"retile_{side}(acc)", rec[f"v{side}"], frag.layout)
            check.values(where, f"retile_{side}(acc) slots", rec[f"l{side}"], frag.slot_table())
    check.done()
