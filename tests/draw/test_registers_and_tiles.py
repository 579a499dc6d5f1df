"""Register-file pictures, HTML tables and bank maps: decoded texts read back to the same bits (checked
with Python's ``struct``, an independent decoder), highlights land on the right cells, bank colours
follow ``(address // 4) % 32`` of the tensor's own addresses."""

import struct
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import warpsim.cute as cute
from warpsim.isa.banks import bank_report
from warpsim.draw import bank_color, bank_map, register_grid, smem_tile, tile_view

NS = "{http://www.w3.org/2000/svg}"
RNG = np.random.default_rng(7)


def random_regs(n=4):
    regs = RNG.integers(0, 2**32, size=(32, n), dtype=np.uint64).astype(np.uint32)
    regs[0, :] = [0x3C00C000, 0x7C00FC00, 0x00018000, 0x7FC00000][:n]   # low|high: -2|1, -inf|inf, -0|2^-24; f32 NaN
    return regs


def f16(h):
    return struct.unpack("<e", struct.pack("<H", h))[0]


def f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def same(text, value, to_bits, bits):
    """The text names the value: NaN for NaN, else it reads back to the same bit pattern."""
    if value != value:
        return text == "nan"
    return to_bits(float(text)) == bits


def f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def test_decoded_texts_read_back_to_the_same_bits():
    regs = random_regs()
    hexes, halves, bhalves, singles = (register_grid(regs, f).cells for f in ("hex", "f16x2", "bf16x2", "f32"))
    for lane in range(32):
        for r in range(regs.shape[1]):
            b = int(regs[lane, r])
            assert hexes[lane, r] == "0x%08x" % b
            lo, hi = halves[lane, r].split(" | ")
            assert same(lo, f16(b & 0xFFFF), f16_bits, b & 0xFFFF) and same(hi, f16(b >> 16), f16_bits, b >> 16)
            blo, bhi = bhalves[lane, r].split(" | ")
            for text, h in ((blo, b & 0xFFFF), (bhi, b >> 16)):
                v = f32(h << 16)
                assert same(text, v, lambda x: f32_bits(x) >> 16, h), (lane, r, text, hex(h))
            assert same(singles[lane, r], f32(b), f32_bits, b), (lane, r, singles[lane, r], hex(b))
    assert halves[0, 0] == "-2 | 1" and halves[0, 1] == "-inf | inf" and halves[0, 2] == "-0 | 6e-08"


def test_register_picture_and_table_highlight_exactly_the_given_cells():
    regs = random_regs()
    hot = {(5, 0), (5, 3), (31, 1)}
    grid = register_grid(regs, "f16x2", highlight=hot, title="warp 0 after ldmatrix")
    root = ET.fromstring(grid.svg())
    cells = [g for g in root.iter(f"{NS}g") if g.get("class") == "cell"]
    assert len(cells) == 32 * 4
    marked = {(int(g.get("data-lane")), int(g.get("data-reg"))) for g in cells if g.get("data-highlight") == "1"}
    assert marked == hot
    for g in cells:
        lane, r = int(g.get("data-lane")), int(g.get("data-reg"))
        assert g.find(f"{NS}text").text == grid.cells[lane, r]
        assert g.get("data-bits") == "0x%08x" % int(regs[lane, r])
    lines = grid.text().splitlines()
    assert lines[0] == "warp 0 after ldmatrix" and lines[2 + 5].count("*") == 2
    html = grid._repr_html_()
    assert html.count("<tr>") == 33 and html.count("font-weight:bold") == 3


@pytest.mark.parametrize("call,exc,message", [
    (lambda: register_grid(np.zeros((31, 4), np.uint32)), ValueError, r"\[32, R\]"),
    (lambda: register_grid(np.zeros((32, 4), np.float32)), TypeError, "integer"),
    (lambda: register_grid(np.full((32, 1), 2**32, np.int64)), ValueError, "32-bit"),
    (lambda: register_grid(np.zeros((32, 4), np.uint32), "f64"), ValueError, "unknown format"),
    (lambda: register_grid(np.zeros((32, 4), np.uint32), highlight=[(3, 4)]), ValueError, "outside"),
    (lambda: register_grid(np.zeros((32, 4), np.uint32), names=["a"]), ValueError, "names"),
])
def test_register_grid_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


def seed_sk(swizzled=True):
    atom = cute.composition(cute.Swizzle(3, 3, 3), cute.make_layout((8, 64), (64, 1)))
    layout = cute.tile_to_shape(atom, (64, 64)) if swizzled else cute.make_layout((64, 64), (64, 1))
    return cute.make_tensor(cute.make_smem_ptr(8192, "f16"), layout)


@pytest.mark.parametrize("swizzled", [True, False])
def test_bank_map_colours_each_element_by_its_own_address(swizzled):
    sk = seed_sk(swizzled)
    m = bank_map(sk)
    assert m.shape == (64, 64)
    for r in range(0, 64, 7):
        for c in range(64):
            addr = int(sk.address(r, c))
            assert int(m.address[r, c]) == addr and int(m.bank[r, c]) == (addr // 4) % 32
    root = ET.fromstring(m.scene(rows=(8, 16)).svg())
    cells = [g for g in root.iter(f"{NS}g") if g.get("class") == "cell"]
    assert len(cells) == 8 * 64
    for g in cells[::37]:
        r, c = int(g.get("data-row")), int(g.get("data-col"))
        bank = (int(sk.address(r, c)) // 4) % 32
        assert g.find(f"{NS}text").text == str(bank)
        assert g.find(f"{NS}rect").get("fill") == "#%02x%02x%02x" % bank_color(bank)


def test_bank_map_marks_the_lanes_of_one_ldmatrix_phase():
    """Phase 0 of an ldmatrix.x4 reading rows 0-7, columns 8-15 of sK: lane l supplies row l's address,
    so the 8 elements (l, 8..15) are marked with lane l; swizzled: no conflict, unswizzled: all 8-way."""
    for swizzled in (True, False):
        sk = seed_sk(swizzled)
        addrs = np.array([int(sk.address(lane % 8, 8 + 8 * (lane // 8))) for lane in range(32)], np.int64)
        phase = bank_report("ldmatrix", addrs, num=4).phases[0]
        m = bank_map(sk, phase)
        assert m.marks == {(lane, c): (lane,) for lane in range(8) for c in range(8, 16)}
        assert m.conflicts == (frozenset() if swizzled else frozenset(m.marks))
        root = ET.fromstring(m.svg(rows=(0, 8)))
        labelled = {(int(g.get("data-row")), int(g.get("data-col"))): [t.text for t in g.findall(f"{NS}text")]
                    for g in root.iter(f"{NS}g") if g.get("class") == "cell" and g.get("data-lanes")}
        assert labelled == {(r, c): [str(int(m.bank[r, c])), f"L{r}"] for r in range(8) for c in range(8, 16)}


def test_bank_map_bad_input():
    with pytest.raises(TypeError, match="Tensor"):
        bank_map("sK")
    with pytest.raises(ValueError, match="shared-memory"):
        bank_map(cute.make_tensor(cute.make_gmem_ptr(0, "f16"), cute.make_layout((8, 8))))
    with pytest.raises(TypeError, match="BankPhase"):
        bank_map(seed_sk(), access=[0, 1])
    with pytest.raises(ValueError, match="rows"):
        bank_map(seed_sk()).scene(rows=(8, 4))


def test_smem_tile_reads_values_through_the_swizzle():
    sk = seed_sk(True)
    smem = np.zeros(8192 + 8192, np.uint8)
    values = RNG.integers(0, 0x7C00, size=(64, 64))               # finite positive f16 patterns
    for r in range(64):
        for c in range(64):
            a = int(sk.address(r, c))
            smem[a:a + 2] = [values[r, c] & 0xFF, values[r, c] >> 8]
    tile = smem_tile(sk, smem)
    for r, c in [(0, 0), (1, 8), (63, 63), (17, 40)]:
        assert f16_bits(float(tile.values[r, c])) == values[r, c]
    assert smem_tile(sk, smem, fmt="hex").values[1, 8] == "0x%04x" % values[1, 8]
    html = tile._repr_html_()
    assert html.count("<tr>") == 65
    with pytest.raises(ValueError, match="outside shared memory"):
        smem_tile(sk, smem[:1000])
    with pytest.raises(TypeError, match="uint8"):
        smem_tile(sk, smem.astype(np.int32))
    assert tile_view([[1, 2], [3, 4]], highlight=[(1, 0)]).text().splitlines()[2].split() == ["1", "*3", "4"]
