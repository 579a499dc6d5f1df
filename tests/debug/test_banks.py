"""The bank-conflict model, checked by reasoning written out in the tests (never by stored outputs).

The expected n-way degree of a phase is worked out here from first principles: bank = (address // 4) % 32,
a phase's degree is the largest number of distinct 4-byte words it asks of one bank. The seed's
addresses come from CuTe's partition of the swizzled shared layout; the unswizzled case from the
row-major formula ``address = base + 2 * (64 * row + col)``.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpsim.cute as cute
from warpsim.debug.banks import instr_bank_report, stream_bank_report
from warpsim.isa.banks import BankTotals, bank_report, phase_lanes
from warpsim.debug.copy_banks import calls_accesses, fragment_accesses
from warpsim.explain import seed_config
from warpsim.program.instr import Instr, Op


def expected_degree(lane_ranges):
    """Independent count: ``lane_ranges`` = [(start byte, nbytes)] of one phase -> max distinct words per bank."""
    words_per_bank = [set() for _ in range(32)]
    for start, nbytes in lane_ranges:
        for byte in range(start, start + nbytes):
            words_per_bank[(byte // 4) % 32].add(byte // 4)
    return max(len(s) for s in words_per_bank)


# -- the seed: swizzled sK read by ldmatrix.x4 is conflict-free; the same reads unswizzled are 8-way ----------

def seed_k():
    cfg = seed_config()
    return cfg, cfg.fragments[1]


def test_seed_swizzled_K_ldmatrix_is_conflict_free():
    cfg, k = seed_k()
    accesses = fragment_accesses(cfg.tiled_mma, "B", k.smem, k.copy)
    assert len(accesses) == 4 * 16                              # 4 warps x 16 ldmatrix.x4 (copy view (8,1),4,4)
    for a in accesses:
        rep = a.report()
        assert rep.instruction == "ldmatrix.sync.aligned.m8n8.x4.shared.b16" and len(rep.phases) == 4
        for j, phase in enumerate(rep.phases):
            rows = [(int(a.addrs[lane]), 16) for lane in range(8 * j, 8 * j + 8)]
            # Sw<3,3,3>: the 8 rows of one 8x8 matrix have 8 different XOR masks on the 16-byte chunk index,
            # so their chunks cover the 8 chunk positions of a 128-byte line: 32 distinct banks.
            assert expected_degree(rows) == 1, f"warp {a.warp} call {a.call} phase {j}: {rows}"
            assert phase.degree == 1 and phase.conflicts == ()
    totals = BankTotals.of(a.report() for a in accesses)
    assert (totals.phases, totals.wavefronts, totals.extra_wavefronts) == (256, 256, 0)


def test_seed_unswizzled_K_is_8_way_per_phase():
    cfg, k = seed_k()
    plain = cute.make_tensor(cute.make_smem_ptr(8192, "f16"), cute.make_layout((64, 64), (64, 1)))
    assert str(cute.get_nonswizzle_portion(k.smem.layout)) == "((_8,_8),(_64,_1)):((_64,_512),(_1,_0))"
    accesses = fragment_accesses(cfg.tiled_mma, "B", plain, k.copy)
    for a in accesses:
        rep = a.report()
        for j, phase in enumerate(rep.phases):
            starts = [int(a.addrs[lane]) for lane in range(8 * j, 8 * j + 8)]
            # rows 128 bytes apart (64 f16 per row): every row's 16 bytes sit in the same 4 banks
            assert len({(s - 8192) // 128 for s in starts}) == 8 and len({s % 128 for s in starts}) == 1
            assert expected_degree([(s, 16) for s in starts]) == 8
            assert phase.degree == 8 and phase.extra == 7
            assert len(phase.conflicts) == 4 and phase.colliding_lanes() == tuple(range(8 * j, 8 * j + 8))
    totals = BankTotals.of(a.report() for a in accesses)
    assert (totals.phases, totals.extra_wavefronts, totals.worst_degree) == (256, 256 * 7, 8)


def test_seed_all_fragments_with_and_without_swizzle():
    """The README's numbers: Q, K and V^T ldmatrix loads of all 4 warps."""
    cfg = seed_config()
    extra, extra_plain, phases = 0, 0, 0
    for spec in cfg.fragments:
        acc = fragment_accesses(cfg.tiled_mma, spec.operand, spec.smem, spec.copy, spec.source)
        plain_layout = cute.get_nonswizzle_portion(spec.smem.layout)
        plain = cute.make_tensor(spec.smem.engine, plain_layout)
        src = spec.source if not cute.is_composed(spec.source.layout) else plain
        acc_plain = fragment_accesses(cfg.tiled_mma, spec.operand, plain, spec.copy, src)
        t, tp = BankTotals.of(a.report() for a in acc), BankTotals.of(a.report() for a in acc_plain)
        assert t.phases == tp.phases and t.extra_wavefronts == 0 and tp.worst_degree == 8
        extra, extra_plain, phases = extra + t.extra_wavefronts, extra_plain + tp.extra_wavefronts, phases + t.phases
    assert (phases, extra, extra_plain) == ((16 + 64 + 64) * 4, 0, (16 + 64 + 64) * 4 * 7)


# -- ld/st.shared phases --------------------------------------------------------------------------

@pytest.mark.parametrize("bits,stride,degree", [
    (32, 4, 1),       # 32 consecutive words: 32 banks
    (32, 8, 2),       # every other word: 16 banks, 2 words each
    (32, 128, 32),    # one bank, 32 words
    (32, 0, 1),       # one word: broadcast
    (16, 2, 1),       # two lanes per word: 16 words in 16 banks
    (16, 64, 16),     # 32 lanes over words 0,16,32,...: 2 banks, 16 words each
    (64, 8, 1),       # 16 lanes x 2 words = 32 banks per phase
    (64, 16, 2),      # lane l: words 4l, 4l+1; lanes l and l+8 of a phase share those banks
    (64, 256, 16),    # all rows start in bank 0: 16 words in banks 0 and 1
    (128, 16, 1),     # 8 lanes x 4 words per phase
    (128, 128, 8),    # 8 lanes in the same 4 banks
    (128, 0, 1),      # broadcast
])
def test_ld_st_phases(bits, stride, degree):
    addrs = np.arange(32, dtype=np.int64) * stride
    rep = bank_report("ld", addrs, bits=bits)
    groups, nbytes = phase_lanes("ld", bits=bits)
    assert len(rep.phases) == {16: 1, 32: 1, 64: 2, 128: 4}[bits] and nbytes == bits // 8
    for phase, lanes in zip(rep.phases, groups):
        assert phase.lanes == lanes
        assert phase.degree == expected_degree([(int(addrs[lane]), nbytes) for lane in lanes]) == degree
    assert rep.extra_wavefronts == len(rep.phases) * (degree - 1)
    assert bank_report("st", addrs, bits=bits).degree == degree       # stores: one writer per word, same model


def test_ldmatrix_ignores_lanes_that_supply_no_row():
    addrs = np.arange(32, dtype=np.int64) * 16
    addrs[8:] = 3                                            # misaligned garbage on lanes .x1 does not read
    rep = bank_report("ldmatrix", addrs, num=1)
    assert len(rep.phases) == 1 and rep.phases[0].lanes == tuple(range(8)) and rep.conflict_free
    with pytest.raises(ValueError, match="lane 8: address 0x3 is not 16-byte aligned"):
        bank_report("ldmatrix", addrs, num=2)


def test_conflict_records_name_banks_words_and_lanes():
    addrs = np.zeros(32, np.int64)
    addrs[:8] = [0, 128, 256, 0, 16, 144, 32, 48]            # lanes 0,1,2,3 rows in banks 0-3; 3 repeats lane 0
    phase = bank_report("ldmatrix", addrs, num=1).phases[0]
    assert phase.degree == expected_degree([(int(a), 16) for a in addrs[:8]]) == 3
    c0 = phase.conflicts[0]
    assert c0.bank == 0 and c0.words == (0, 128, 256) and c0.lanes == ((0, 3), (1,), (2,))
    assert phase.banks(4) == (4, 5, 6, 7) and phase.colliding_lanes() == (0, 1, 2, 3, 4, 5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=32, max_size=32), st.sampled_from([32, 64, 128]),
       st.integers(0, 31), st.permutations(list(range(8))))
def test_model_is_invariant_under_shifts_and_lane_order(chunks, bits, shift_lines, perm):
    """Moving every address by whole 128-byte lines keeps each bank; permuting lanes inside a phase
    keeps its set of words: neither may change any degree."""
    nbytes = bits // 8
    addrs = np.array(chunks, np.int64) * nbytes
    base = bank_report("ld", addrs, bits=bits)
    shifted = bank_report("ld", addrs + 128 * shift_lines, bits=bits)
    assert [p.degree for p in base.phases] == [p.degree for p in shifted.phases]
    permuted = addrs.copy()
    for start in range(0, 32, 8):                            # 8-lane blocks stay inside every phase size
        permuted[start:start + 8] = addrs[start:start + 8][perm]
    assert [p.degree for p in bank_report("ld", permuted, bits=bits).phases] == [p.degree for p in base.phases]
    for p in base.phases:
        words = {a // 4 + i for a in (int(addrs[lane]) for lane in p.lanes) for i in range(nbytes // 4)}
        assert -(-len(words) // 32) <= p.degree <= len(words)      # at least ceil(words/32), at most all


@pytest.mark.parametrize("call,message", [
    (lambda: bank_report("ld", np.zeros(31, np.int64), bits=32), "shape"),
    (lambda: bank_report("ld", np.full(32, -4), bits=32), "negative"),
    (lambda: bank_report("ld", np.arange(32) * 4 + 2, bits=32), "lane 0: address 0x2 is not 4-byte aligned"),
    (lambda: bank_report("ld", np.arange(32) * 8, bits=48), "bits 16, 32, 64 or 128"),
    (lambda: bank_report("ldmatrix", np.arange(32) * 16, num=3), "num 1, 2 or 4"),
    (lambda: bank_report("cp.async", np.arange(32) * 16), "unknown access kind"),
])
def test_bad_input_raises_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
    with pytest.raises(TypeError, match="integers"):
        bank_report("ld", np.arange(32) * 4.0, bits=32)


def test_instruction_stream_totals():
    row = np.arange(32, dtype=np.int64) * 128                # 8-way for ldmatrix, 32-way for ld.b32
    stream = [
        Instr(Op.LDMATRIX, 0, dst=(0, 1, 2, 3), addr=row, num=4),
        Instr(Op.LD, 0, dst=(4,), addr=np.arange(32, dtype=np.int64) * 4, space="shared", bits=32),
        Instr(Op.ST, 1, src=(4,), addr=row, space="shared", bits=32),
        Instr(Op.LD, 0, dst=(5,), addr=row, space="global", bits=32),   # not shared: no bank model
        Instr(Op.MMA, 0, dst=(0, 1, 2, 3), src=tuple(range(4, 14)), shape="m16n8k16", ab="f16", cd="f32"),
        Instr(Op.BAR, 0),
    ]
    rep = stream_bank_report(stream)
    assert [i for i, _instr, _r in rep.entries] == [0, 1, 2]
    t = rep.totals
    assert (t.accesses, t.phases, t.extra_wavefronts, t.worst_degree) == (3, 4 + 1 + 1, 4 * 7 + 0 + 31, 32)
    assert set(rep.by_instruction()) == {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ld.shared.b32", "st.shared.b32"}
    assert "#2 w1" in rep.text(detail=True) and "#1 " not in rep.text(detail=True)
    assert instr_bank_report(stream[3]) is None
    with pytest.raises(TypeError, match="Instr"):
        instr_bank_report("ldmatrix")


def test_copy_accesses_need_a_warp_lane_vector():
    cfg, k = seed_k()
    thr = cfg.tiled_mma.get_slice(0)
    frag = thr.partition_fragment_B(k.smem)
    one = k.copy.get_slice(0)
    from warpsim.cute.calls import copy_calls
    calls = copy_calls(k.copy, one.partition_S(k.smem), one.retile_D(frag))
    with pytest.raises(ValueError, match="32 lanes"):
        calls_accesses(calls)
    with pytest.raises(ValueError, match="warp 4"):
        fragment_accesses(cfg.tiled_mma, "B", k.smem, k.copy, warps=[4])
    with pytest.raises(ValueError, match="operand"):
        fragment_accesses(cfg.tiled_mma, "C", k.smem, k.copy)
