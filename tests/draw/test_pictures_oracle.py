"""warpsim's TV pictures against CuTe's own ``print_svg`` / ``print_latex`` (real CuTe, compiled by nvcc).

``cute_pictures.cpp`` prints CuTe's pictures of three tiled MMAs and five tiled copies. For each cell
CuTe paints, warpsim's picture of the same object must show the same ``T{t}`` / ``V{v}`` in the same
place (for ``print_svg`` the same pixel position and colour; for ``print_latex`` the same grid
position), and paint no other cell. A failure names the configuration, the cell, CuTe's label and
warpsim's.
"""

import re
import xml.etree.ElementTree as ET

import pytest

import warpsim.cute as cute
from warpsim.draw import CELL, draw_tiled_copy, draw_tiled_mma

pytestmark = pytest.mark.oracle

NS = "{http://www.w3.org/2000/svg}"
LATEX_NODE = re.compile(r"\\node\[fill=([^\]]*)\] at \((-?\d+),(-?\d+)\) \{\\shortstack\{T(\d+) \\\\ V(\d+)\}\};")


def seed_mma():
    return cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN(), cute.make_layout((4, 1, 1)), (64, 16, 16))


def k8_mma():
    return cute.make_tiled_mma(cute.SM80_16x8x8_F16F16F16F16_TN(), cute.make_layout((2, 2, 1)))


def bf16_mma():
    return cute.make_tiled_mma(cute.SM80_16x8x16_F32BF16BF16F32_TN(), cute.make_layout((2, 2, 1)), (32, 32, 16))


MMAS = {"seed": seed_mma, "k8_2x2": k8_mma, "bf16_2x2": bf16_mma}
COPIES = {
    "copy_A_ldsm_n": lambda: cute.make_tiled_copy_A(cute.Copy_Atom(cute.SM75_U32x4_LDSM_N(), "f16"), seed_mma()),
    "copy_B_ldsm_n": lambda: cute.make_tiled_copy_B(cute.Copy_Atom(cute.SM75_U32x4_LDSM_N(), "f16"), seed_mma()),
    "copy_B_ldsm_t": lambda: cute.make_tiled_copy_B(cute.Copy_Atom(cute.SM75_U16x8_LDSM_T(), "f16"), seed_mma()),
    "copy_A_x2_k8": lambda: cute.make_tiled_copy_A(cute.Copy_Atom(cute.SM75_U32x2_LDSM_N(), "f16"), k8_mma()),
    "copy_universal": lambda: cute.make_tiled_copy(cute.Copy_Atom(cute.UniversalCopy(128), "f16"),
                                                   cute.make_layout((16, 8), (8, 1)), cute.make_layout((1, 8))),
}


def warpsim_cells(scene):
    """``{(x, y): (thread, value, fill)}`` read back from warpsim's SVG text."""
    root = ET.fromstring(scene.svg())
    out = {}
    for g in root.iter(f"{NS}g"):
        if g.get("class") != "cell":
            continue
        rect = g.find(f"{NS}rect")
        texts = [t.text for t in g.findall(f"{NS}text")]
        key = (float(rect.get("x")), float(rect.get("y")))
        assert key not in out, f"two warpsim cells at {key}"
        assert len(texts) == 2 and texts[0].startswith("T") and texts[1].startswith("V"), texts
        out[key] = (int(texts[0][1:]), int(texts[1][1:]), rect.get("fill"))
    return out


def cute_svg_cells(text):
    """``{(x, y): (thread, value, fill)}`` of CuTe's print_svg: each rect, then its T and V texts."""
    root = ET.fromstring(text)
    out, pending = {}, None
    for el in root:
        if el.tag == f"{NS}rect":
            pending = [(float(el.get("x")), float(el.get("y"))), el.get("fill"), []]
        elif el.tag == f"{NS}text" and pending is not None:
            pending[2].append(el.text)
            if len(pending[2]) == 2:
                (xy, fill, (t, v)) = pending
                r, g, b = (int(c) for c in fill[4:-1].split(","))
                out[xy] = (int(t[1:]), int(v[1:]), f"#{r:02x}{g:02x}{b:02x}")
                pending = None
    return out


def cute_latex_mma_cells(text, tile_mnk):
    """CuTe's print_latex of a tiled MMA, mapped to print_svg's pixel positions (C at (m,n), A at
    (m, k-K-1), B at (k-K-1, n) in TikZ units; print_svg puts C at ((n+K+2), (m+K+2)) cells, A at
    ((k+1), (m+K+2)), B at ((n+K+2), (k+1)))."""
    _m, _n, k_size = tile_mnk
    out = {}
    for _fill, a, b, t, v in LATEX_NODE.findall(text):
        a, b = int(a), int(b)
        if a >= 0 and b >= 0:
            x, y = b + k_size + 2, a + k_size + 2
        elif b < 0:
            x, y = b + k_size + 1 + 1, a + k_size + 2
        else:
            x, y = b + k_size + 2, a + k_size + 1 + 1
        out[(float(x * CELL), float(y * CELL))] = (int(t), int(v))
    return out


def cute_latex_copy_cells(text, n_size):
    """CuTe's print_latex of a tiled copy: S at (m, n), D at (m, n+N+3); warpsim draws S from one cell
    in and D N+3 cells further right."""
    out = {}
    for _fill, m, n, t, v in LATEX_NODE.findall(text):
        out[(float(CELL + int(n) * CELL), float(CELL + int(m) * CELL))] = (int(t), int(v))
    return out


def compare(name, want, got, with_fill):
    errors = []
    for xy, w in sorted(want.items()):
        g = got.get(xy)
        g = None if g is None else (g if with_fill else g[:2])
        if g != w:
            errors.append(f"{name}: cell at pixel {xy}: CuTe T{w[0]}V{w[1]}, warpsim "
                          + ("nothing" if g is None else f"T{g[0]}V{g[1]}") + (f" ({w[2]} vs {g[2]})" if g and with_fill else ""))
    extra = sorted(set(got) - set(want))
    if extra:
        errors.append(f"{name}: warpsim paints {len(extra)} cells CuTe does not, e.g. at {extra[0]}")
    assert not errors, "\n".join(errors[:20]) + (f"\n... {len(errors)} mismatches" if len(errors) > 20 else "")


@pytest.mark.parametrize("name", list(MMAS))
def test_tiled_mma_picture_matches_cute(cute_pictures, name):
    kind, text = cute_pictures[name]
    mma = MMAS[name]()
    scene = draw_tiled_mma(mma)
    got = warpsim_cells(scene)
    m, n, k = (int(x) for x in cute.tile_shape(mma))
    assert len(got) == m * k + n * k + m * n
    if kind == "svg":
        want = cute_svg_cells(text)
        assert (scene.width, scene.height) == ((k + n + 2) * CELL, (k + m + 2) * CELL)
        compare(name, want, got, with_fill=True)
    else:
        compare(name, cute_latex_mma_cells(text, (m, n, k)), got, with_fill=False)


@pytest.mark.parametrize("name", list(COPIES))
def test_tiled_copy_picture_matches_cute(cute_pictures, name):
    _kind, text = cute_pictures[name]
    copy = COPIES[name]()
    got = warpsim_cells(draw_tiled_copy(copy))
    m, n = (int(x) for x in cute.product_each(copy.Tiler_MN))
    assert len(got) == 2 * m * n
    compare(name, cute_latex_copy_cells(text, n), got, with_fill=False)
