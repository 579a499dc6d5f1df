"""``f32_in_place`` and ``warp_float`` (a warp's float instruction at once) against ``float_result`` (lane by
lane): the same bits.

The forms ``f32_in_place`` runs (``add sub mul fma .rn`` with and without ``.ftz``/``.sat``, ``max min`` with their
modifiers, ``neg abs``, ``ex2.approx`` with and without ``.ftz``, a contracted sub's negated operand), the forms
``warp_float`` hoists (``cvt`` between float formats, each rounding mode and modifier; ``add sub mul fma`` ``.rz .rm
.rp .f32`` and every f16x2 rounding; ``setp.f32`` of each comparison and boolean operation; ``cvt`` from f32 to each
integer type), and forms left to ``plain_result`` (f16, bf16x2, ``setp.f16x2``, ``setp.f64``, ``cvt.rzi.f32.f32``) or to the
MUFU tables (``rcp.approx``, ``rcp.approx.ftz.f64``), on special values, subnormals, values near the smallest normal
and random bits; lanes outside the guard mask keep what they held."""

import numpy as np
import pytest

from warpsim.isa import mufu32 as m32
from warpsim.isa.rounding import RM, RN, RP, RZ
from warpsim.ptx.families.floats.fpu import CVT_KINDS, FLAGS, FOPS, FORMATS, float_result, mufu_operands
from warpsim.ptx.families.floats.warp import f32_in_place, hoisted_in_place, warp_float
from warpsim.isa.fpcompare import CMP
from warpsim.ptx.opcodes import TK_BF16X2, TK_F, TK_F16X2, TK_S, TK_U, Op
from warpsim.ptx.rows import K_IMM, K_REG

SPECIAL = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
           0x7F800001, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x00800001, 0x7F7FFFFF, 0xFF7FFFFF,
           0x3F000000, 0xC2FC0000, 0xC3000000, 0x43000000, 0xC2FE0000, 0x33800000, 0x34000000, 0x4B000000]
F = FLAGS


def _operands(seed):
    """32-lane operand rows: each special value against each, then random bits and nearby exponents."""
    rng = np.random.default_rng(seed)
    special = np.array(SPECIAL, np.int64)
    a, b = np.meshgrid(special, special)
    rows = [np.stack([a.ravel(), b.ravel(), np.roll(a.ravel(), 7)])]
    bits = rng.integers(0, 1 << 32, (3, 32 * 40), dtype=np.int64)
    near = (rng.integers(100, 140, (3, 32 * 40)) << 23) | rng.integers(0, 1 << 23, (3, 32 * 40))
    near |= rng.integers(0, 2, (3, 32 * 40)) << 31
    rows += [bits, near]
    flat = np.concatenate(rows, axis=1)
    flat = flat[:, :flat.shape[1] // 32 * 32]
    return flat.reshape(3, -1, 32).transpose(1, 0, 2)          # [row, operand, lane]


FORMS = [(Op.FARITH, TK_F, 32, FOPS.index(f), RN, flags) for f in ("add", "sub", "mul", "fma")
         for flags in (0, F["ftz"], F["sat"], F["ftz"] | F["sat"])]
FORMS += [(Op.FARITH, TK_F, 32, FOPS.index(f), 0, flags) for f in ("max", "min")
          for flags in (0, F["ftz"], F["nan_mode"], F["xorsign_abs"], F["ftz"] | F["nan_mode"])]
FORMS += [(Op.FARITH, TK_F, 32, FOPS.index(f), 0, flags) for f in ("neg", "abs") for flags in (0, F["ftz"])]
FORMS += [(Op.FARITH, TK_F, 32, FOPS.index("ex2"), 0, F["approx"] | F["ftz"]),
          (Op.FARITH, TK_F, 32, FOPS.index("ex2"), 0, F["approx"])]
_FMT = FORMATS.index
# cvt between float formats (M0 the kind, M3 source * 8 + destination): f32 -> f16/bf16/tf32 with each rounding and
# modifier, f16/bf16 -> f32, f32 -> f16 .ftz
FORMS += [(Op.FCVT, TK_F, 16, CVT_KINDS.index("float"), rnd, flags, _FMT("f32") * 8 + _FMT(dst))
          for dst in ("f16", "bf16") for rnd in (RN, RZ, RM, RP)
          for flags in (0, F["sat"], F["relu"], F["satfinite"], F["ftz"])]
FORMS += [(Op.FCVT, TK_F, 32, CVT_KINDS.index("float"), RN, flags, _FMT(src) * 8 + _FMT("f32"))
          for src in ("f16", "bf16") for flags in (0, F["ftz"], F["sat"])]
IN_PLACE_OPS = ("add", "sub", "mul", "fma", "max", "min", "neg", "abs", "ex2")
# hoisted (hoisted_in_place): the directed roundings of f32, f16x2, setp.f32, cvt from f32 to an integer -- each
# operation, rounding and comparison once, the modifiers and boolean operations on some
HOISTED = [(Op.FARITH, TK_F, 32, FOPS.index(f), rnd, flags) for f in ("add", "sub", "mul", "fma")
           for rnd in (RZ, RM, RP) for flags in (0, F["ftz"] | F["sat"])]
HOISTED += [(Op.FARITH, TK_F, 32, FOPS.index("add"), RZ, F["ftz"]), (Op.FARITH, TK_F, 32, FOPS.index("mul"), RM, F["sat"]),
            (Op.FARITH, TK_F, 32, FOPS.index("fma"), RZ, F["neg_a"])]
HOISTED += [(Op.FARITH, TK_F16X2, 32, FOPS.index(f), RN, flags) for f in ("add", "sub", "mul", "fma")
            for flags in (0, F["ftz"], F["sat"])]
HOISTED += [(Op.FARITH, TK_F16X2, 32, FOPS.index("add"), rnd, 0) for rnd in (RZ, RM, RP)]
HOISTED += [(Op.FARITH, TK_F16X2, 32, FOPS.index("fma"), RN, F["relu"]),
            (Op.FARITH, TK_F16X2, 32, FOPS.index("fma"), RN, F["neg_c"])]
HOISTED += [(Op.FSETP, TK_F, 32, cmp, 0, flags) for cmp in range(len(CMP)) for flags in (0, F["ftz"])]
HOISTED += [(Op.FSETP, TK_F, 32, CMP[c], bop, 0) for c in ("lt", "nan", "geu") for bop in (1, 2, 3)]
HOISTED += [(Op.FCVT, tk, 32, CVT_KINDS.index("to_int"), rnd, 0, _FMT("f32") * 8) for tk in (TK_S, TK_U)
            for rnd in (RN, RZ, RM, RP)]
HOISTED += [(Op.FCVT, tk, tb, CVT_KINDS.index("to_int"), RN, flags, _FMT("f32") * 8) for tk in (TK_S, TK_U)
            for tb in (8, 16, 64) for flags in (0, F["ftz"])]
# warp_float computes them too (through plain_result): a few of each kind
FORMS += HOISTED[::6]
# left to plain_result lane by lane, and the forms of the MUFU tables
FORMS += [(Op.FARITH, TK_F, 16, FOPS.index("add"), RN, 0), (Op.FARITH, TK_BF16X2, 32, FOPS.index("fma"), RN, 0),
          (Op.FSETP, TK_F16X2, 32, CMP["lt"], 0, 0), (Op.FSETP, TK_F, 64, CMP["ge"], 2, 0),
          (Op.FCVT, TK_F, 32, CVT_KINDS.index("round_int"), RZ, 0, _FMT("f32") * 9),
          (Op.FARITH, TK_F, 32, FOPS.index("rcp"), 0, F["approx"] | F["ftz"]),
          (Op.FARITH, TK_F, 64, FOPS.index("rcp"), 0, F["approx"] | F["ftz"])]


@pytest.fixture(scope="module")
def tables():
    return mufu_operands(("ex2", "rcp"))


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f"op{int(f[0])}-tk{f[1]}-fop{f[3]}-rnd{f[4]}-flags{f[5]}"
                                                   + (f"-fmts{f[6]}" if len(f) > 6 else ""))
def test_warp_float_gives_float_results_bits(form, tables):
    op, tk, tb, m0, m1, m2 = form[:6]
    m3 = form[6] if len(form) > 6 else 0
    gmask = 0xFFFFFFFF
    for k, (a, b, c) in enumerate(_operands(int(m0) * 64 + int(m2))):
        if k % 3 == 2:
            gmask = 0x5A5AF00F                                  # some lanes held back by their guard
        d = np.full(32, -7, np.int64)
        q = np.full(32, -9, np.int64)
        if op == Op.FCVT and m3 // 8 != _FMT("f32"):
            a = a & 0xFFFF                                      # a 16-bit source register
        warp_float(op, tk, tb, m0, m1, m2, m3, 0, 0, gmask, a.copy(), b.copy(), c.copy(), d, q, tables)   # (it may
        # negate an operand in place: a contracted sub)
        for lane in range(32):
            if not (gmask >> lane) & 1:
                assert (d[lane], q[lane]) == (-7, -9), f"lane {lane} is outside the guard mask but was written"
                continue
            want = float_result(op, tk, tb, m0, m1, m2, m3, 0, 0, a[lane], b[lane], c[lane], tables)
            got = (int(d[lane]), int(q[lane]))
            assert got == (int(want[0]), int(want[1])), (
                f"form {form} lane {lane}: a={int(a[lane]):#010x} b={int(b[lane]):#010x} c={int(c[lane]):#010x}: "
                f"warp_float {got[0]:#x}, {got[1]}; float_result {int(want[0]):#x}, {int(want[1])}")
        gmask = 0xFFFFFFFF



IN_PLACE = [f for f in FORMS if f[0] == Op.FARITH and f[1] == TK_F and f[2] == 32 and FOPS[f[3]] in IN_PLACE_OPS
            and (f[4] == RN or FOPS[f[3]] not in ("add", "sub", "mul", "fma"))]
IN_PLACE += [(Op.FARITH, TK_F, 32, FOPS.index("fma"), RN, F["neg_a"]), (Op.FARITH, TK_F, 32, FOPS.index("fma"), RN,
                                                                           F["neg_c"] | F["ftz"])]


@pytest.mark.parametrize("form", IN_PLACE, ids=lambda f: f"fop{f[3]}-rnd{f[4]}-flags{f[5]}")
def test_f32_in_place_gives_float_results_bits(form, tables):
    """``f32_in_place`` (registers to register, no gather) against ``float_result`` lane by lane; a register, an
    immediate ``b``, lanes outside the guard untouched."""
    op, tk, tb, m0, m1, m2 = form[:6]
    ex2 = tables[m32.EX2]
    for k, (a, b, c) in enumerate(_operands(int(m0) * 64 + int(m2) + 1)):
        gmask = 0x5A5AF00F if k % 3 == 2 else 0xFFFFFFFF
        regs = np.zeros((2, 32, 4), np.uint32)
        regs[1, :, 1], regs[1, :, 2], regs[1, :, 3] = a, b, c
        regs[1, :, 0] = 0xDEADBEEF
        b_imm = k % 4 == 1                                      # b an immediate: lane 0's value in every lane
        kb, ib = (K_IMM, int(b[0])) if b_imm else (K_REG, 0)
        assert f32_in_place(m0, m1, m2, gmask, regs, 1, K_REG, 0, 1, K_REG, 1, 1, 0, 0, kb, 2, 1, ib, 0,
                            K_REG, 3, 1, 0, 0, ex2)
        for lane in range(32):
            if not (gmask >> lane) & 1:
                assert regs[1, lane, 0] == 0xDEADBEEF
                continue
            bv = b[0] if b_imm else b[lane]
            want = float_result(op, tk, tb, m0, m1, m2, 0, 0, 0, a[lane], bv, c[lane], tables)[0]
            assert int(regs[1, lane, 0]) == int(want) & 0xFFFFFFFF, (form, lane, hex(int(a[lane])), hex(int(bv)))


@pytest.mark.parametrize("fop, rnd, flags", [("add", RZ, 0), ("rcp", 0, F["approx"] | F["ftz"]), ("div", RN, 0)])
def test_f32_in_place_leaves_the_other_forms(fop, rnd, flags, tables):
    regs = np.full((1, 32, 4), 0x3F800000, np.uint32)
    assert not f32_in_place(FOPS.index(fop), rnd, flags, 0xFFFFFFFF, regs, 0, K_REG, 0, 1, K_REG, 1, 1, 0, 0,
                            K_REG, 2, 1, 0, 0, K_REG, 3, 1, 0, 0, tables[m32.EX2])
    assert (regs == 0x3F800000).all()


@pytest.mark.parametrize("form", HOISTED, ids=lambda f: f"op{int(f[0])}-tk{f[1]}-tb{f[2]}-m0{f[3]}-m1{f[4]}-flags{f[5]}")
def test_hoisted_in_place_gives_float_results_bits(form, tables):
    """``hoisted_in_place`` (registers to registers) against ``float_result`` lane by lane: ``b`` (a ``cvt``'s ``a``)
    an immediate as well as a register, ``setp``'s predicate ``c`` as ``!p``, a 64-bit destination, lanes outside
    the guard untouched."""
    op, tk, tb, m0, m1, m2 = form[:6]
    m3 = form[6] if len(form) > 6 else 0
    setp, cvt = op == Op.FSETP, op == Op.FCVT
    wide = cvt and tb == 64                                     # the destination a register pair: slots 0, 1
    # the operands' register slots by position: setp p, q, a, b, c; the others d, a, b, c
    slots = [0, 1, 2, 3, 4] if setp else [0, 2, 3, 4, 1]
    srcs = (2, 3, 4) if setp else (1, 2, 3)                    # the positions of a, b, c
    imm_at = 1 if cvt else srcs[1]
    for k, (a, b, c) in enumerate(_operands(int(m0) * 64 + int(m2) + int(op) + 2)):
        gmask = 0x5A5AF00F if k % 3 == 2 else 0xFFFFFFFF
        regs = np.full((2, 32, 5), 0xDEADBEEF, np.uint32)
        for pos, v in zip(srcs, (a, b, c)):
            regs[1, :, slots[pos]] = v
        fields = [[K_REG, slots[j], 1, 0, 0] for j in range(5)]
        if wide:
            fields[0][2] = 2
        if k % 4 == 1:                                          # an immediate: lane 0's value in every lane
            fields[imm_at] = [K_IMM, 0, 1, int(regs[1, 0, slots[imm_at]]), 0]
        if setp and k % 4 == 3:
            fields[4][4] = 1                                    # !p: lane_get gives 1 - the register
        args = fields[0][:3] + [x for f in fields[1:] for x in f]
        assert hoisted_in_place(op, tk, tb, m0, m1, m2, m3, gmask, regs, 1, *args)
        for lane in range(32):
            if not (gmask >> lane) & 1:
                assert regs[1, lane, 0] == 0xDEADBEEF, f"lane {lane} is outside the guard mask but was written"
                continue
            x = []                                              # the sources' slots are not the destinations'
            for pos in srcs:
                kind, slot, _, imm, neg = fields[pos]
                v = imm if kind == K_IMM else int(regs[1, lane, slot])
                x.append(1 - v if neg else v)
            want = float_result(op, tk, tb, m0, m1, m2, m3, 0, 0, *x, tables)
            if setp:
                got, exp = (int(regs[1, lane, 0]), int(regs[1, lane, 1])), (int(want[0]), int(want[1]))
            elif wide:
                got, exp = int(regs[1, lane, 0]) | int(regs[1, lane, 1]) << 32, int(want[0]) & (2**64 - 1)
            else:
                got, exp = int(regs[1, lane, 0]), int(want[0]) & 0xFFFFFFFF
            assert got == exp, (form, lane, [hex(v) for v in x], got, exp)
