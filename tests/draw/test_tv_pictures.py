"""TV pictures without nvcc: the labels agree with PTX's fragment maps and with the layouts evaluated
point by point; SVG is well-formed with one cell per tile element; PNG is written when Pillow is there."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import warpsim.cute as cute
from warpsim.draw import CELL, copy_tv_grid, draw_tiled_copy, draw_tiled_mma, mma_tv_grid
from warpsim.isa import MMA_FRAGMENTS

NS = "{http://www.w3.org/2000/svg}"
THR_LAYOUTS = [(1, 1, 1), (2, 2, 1), (4, 1, 1), (1, 2, 1)]


def svg_cells(scene):
    """``[(data dict, rect attrs, texts)]`` of every cell, parsed from the SVG text."""
    root = ET.fromstring(scene.svg())
    out = []
    for g in root.iter(f"{NS}g"):
        if g.get("class") == "cell":
            data = {k[5:]: v for k, v in g.attrib.items() if k.startswith("data-")}
            out.append((data, g.find(f"{NS}rect").attrib, [t.text for t in g.findall(f"{NS}text")]))
    return out


def first_owner_by_calls(layout_tv, rows):
    """``{(row, col): (t, v)}``: CuTe's drawing loop, written out with the layout called at each (t, v)."""
    out = {}
    for t in range(int(cute.size(layout_tv, 0))):
        for v in range(int(cute.size(layout_tv, 1))):
            idx = int(layout_tv(t, v))
            out.setdefault((idx % rows, idx // rows), (t, v))
    return out


@pytest.mark.parametrize("op", list(cute.MMA_OPS.values()), ids=list(cute.MMA_OPS))
def test_single_atom_labels_are_ptx_fragment_positions(op):
    """Drawn alone, cell (row, col) of operand X says T{lane}V{v} where PTX's fragment map puts value v
    (register v // per_reg, half v % per_reg) of that lane (PTX ISA, "Matrix fragments for mma.m16n8k*")."""
    m, n, k = op.Shape_MNK
    tiled = cute.make_tiled_mma(op)
    cd = "C.f16" if op.ValTypeC == "f16" else "C.f32"
    for operand, key, swap in (("A", "A", False), ("B", "B", True), ("C", cd, False)):
        fmap = MMA_FRAGMENTS[(f"m16n8k{k}", key)]
        cells = svg_cells(draw_tiled_mma(tiled, operand=operand))
        assert len(cells) == fmap.shape[0] * fmap.shape[1]
        for data, _rect, texts in cells:
            first, second = ("n", "k") if operand == "B" else (("m", "k") if operand == "A" else ("m", "n"))
            r, c = int(data[first]), int(data[second])
            lane, v = int(texts[0][1:]), int(texts[1][1:])
            ptx = fmap.at(lane, v // fmap.halves, v % fmap.halves)
            assert ptx == ((c, r) if swap else (r, c)), (
                f"{op.name} {operand}: cell {first}={r},{second}={c} drawn T{lane}V{v}; PTX puts that value at {ptx}")


@pytest.mark.parametrize("thr", THR_LAYOUTS)
@pytest.mark.parametrize("name", ["SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x8_F16F16F16F16_TN"])
def test_tiled_mma_cells_follow_the_drawing_loop(name, thr):
    tiled = cute.make_tiled_mma(cute.MMA_OPS[name], cute.make_layout(thr))
    m, n, k = (int(x) for x in cute.tile_shape(tiled))
    cells = svg_cells(draw_tiled_mma(tiled))
    assert len(cells) == m * k + n * k + m * n
    for operand, (first, second), rows in (("A", ("m", "k"), m), ("B", ("n", "k"), n), ("C", ("m", "n"), m)):
        want = first_owner_by_calls(tiled.get_layout_TV(operand), rows)
        mine = [c for c in cells if c[0]["panel"] == operand]
        assert len(mine) == len(want)
        for data, rect, texts in mine:
            r, c = int(data[first]), int(data[second])
            t, v = want[(r, c)]
            assert texts == [f"T{t}", f"V{v}"], f"{name} {thr} {operand} ({r},{c}): want T{t}V{v}, got {texts}"
            assert (int(data["thread"]), int(data["value"])) == (t, v)
            # print_svg's geometry: A (k+1, m+K+2), B (n+K+2, k+1), C (n+K+2, m+K+2) cells
            col, row = {"A": (c + 1, r + k + 2), "B": (r + k + 2, c + 1), "C": (c + k + 2, r + k + 2)}[operand]
            assert (float(rect["x"]), float(rect["y"])) == (col * CELL, row * CELL)


def test_every_thread_is_listed_in_the_tooltips():
    tiled = cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN(), cute.make_layout((4, 1, 1)), (64, 16, 16))
    root = ET.fromstring(draw_tiled_mma(tiled, operand="B").svg())
    seen = set()
    for g in root.iter(f"{NS}g"):
        title = g.find(f"{NS}title").text
        seen |= {int(x[1:].split("V")[0]) for x in title.split(": ")[1].split()}
    assert seen == set(range(128))      # B is held by all 4 warps; CuTe draws only warp 0's labels


def test_highlight_outlines_exactly_the_threads_values():
    tiled = cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN(), cute.make_layout((4, 1, 1)), (64, 16, 16))
    grid = mma_tv_grid(tiled, "B")
    for t in (5, 37):
        cells = svg_cells(draw_tiled_mma(tiled, operand="B", highlight=t))
        hot = {(int(d["n"]), int(d["k"])): texts for d, rect, texts in cells if rect.get("stroke-width", "1") != "1"}
        want = {grid.coord(t, v): [f"T{t}", f"V{v}"] for v in range(grid.values)}
        assert hot == want
    with pytest.raises(ValueError, match="highlight"):
        draw_tiled_mma(tiled, highlight=128)


def test_copy_grid_matches_the_copy_layouts():
    tiled = cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN(), cute.make_layout((4, 1, 1)), (64, 16, 16))
    copy = cute.make_tiled_copy_B(cute.Copy_Atom(cute.SM75_U32x4_LDSM_N(), "f16"), tiled)
    for side, layout in (("S", copy.get_layoutS_TV()), ("D", copy.get_layoutD_TV())):
        g = copy_tv_grid(copy, side)
        want = first_owner_by_calls(layout, g.shape[0])
        got = {(r, c): (int(g.thread[r, c]), int(g.value[r, c])) for r in range(g.shape[0]) for c in range(g.shape[1])}
        assert got == want
    cells = svg_cells(draw_tiled_copy(copy))
    assert len(cells) == 2 * 16 * 16 and {c[0]["panel"] for c in cells} == {"S", "D"}


def test_bad_input():
    tiled = cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN())
    with pytest.raises(ValueError, match="operand"):
        mma_tv_grid(tiled, "D")
    with pytest.raises(TypeError, match="TiledMMA"):
        draw_tiled_mma("not a tiled mma")
    with pytest.raises(TypeError, match="TiledCopy"):
        draw_tiled_copy(tiled)
    with pytest.raises(ValueError, match="side"):
        copy_tv_grid(cute.make_tiled_copy_A(cute.Copy_Atom(cute.SM75_U32x4_LDSM_N(), "f16"), tiled), "X")


def test_png_is_written_with_pillow(tmp_path):
    image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (pip install 'warpsim[draw]')")
    scene = draw_tiled_mma(cute.make_tiled_mma(cute.SM80_16x8x8_F16F16F16F16_TN()), operand="A")
    path = tmp_path / "a.png"
    scene.save(path, scale=2)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with image.open(path) as im:
        assert im.size == (round(scene.width * 2), round(scene.height * 2))
        # the top-left cell (m=0, k=0) is thread 0's colour, CuTe's first palette entry
        x, y = int((CELL + 3) * 2), int((CELL + CELL / 2) * 2)      # left of the centred text
        assert im.getpixel((x, y)) == (175, 175, 255)


def test_png_without_pillow_names_the_extra(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "PIL", None)
    scene = draw_tiled_mma(cute.make_tiled_mma(cute.SM80_16x8x8_F16F16F16F16_TN()), operand="A")
    with pytest.raises(ImportError, match=r'pip install "warpsim\[draw\]"'):
        scene.save(tmp_path / "a.png")
    with pytest.raises(ValueError, match="svg or .png"):
        scene.save(tmp_path / "a.pdf")
    scene.save(tmp_path / "a.svg")
    assert ET.parse(tmp_path / "a.svg").getroot().tag == f"{NS}svg"
    assert np.all(np.isfinite([scene.width, scene.height]))
