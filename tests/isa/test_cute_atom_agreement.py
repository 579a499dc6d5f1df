"""PTX fragment maps (warpsim.isa.fragments) against CuTe's MMA atom layouts.

CuTe declares them in ``include/cute/atom/mma_traits_sm80.hpp`` (the nvidia-cutlass wheel, a test
dependency): ``(thr, val) -> index`` into the operand tile in column-major order. The test reads the
declarations from the real header, evaluates them with ``pycute``, and checks that lane ``t``'s value
``v`` lands where the ISA table puts value ``v`` of lane ``t``. The isa layer itself knows nothing
of CuTe; this test is where the two meet.
"""

import re
from pathlib import Path

import pytest

from warpsim.isa import MMA_FRAGMENTS

pycute = pytest.importorskip("pycute")
cutlass_library = pytest.importorskip("cutlass_library")

HEADER = Path(cutlass_library.__file__).parent / "source" / "include" / "cute" / "atom" / "mma_traits_sm80.hpp"

# (name in the header, shape, stride) of the layouts used by SM80_16x8x16_* and SM80_16x8x8_*
CUTE_LAYOUTS = {
    "A16": ("ALayout = Layout<Shape <Shape < _4,_8>,Shape < _2,_2, _2>>, Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>",
            ((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))),
    "B16": ("BLayout = Layout<Shape <Shape < _4,_8>,Shape <_2, _2>>, Stride<Stride<_16,_1>,Stride<_8,_64>>>",
            ((4, 8), (2, 2)), ((16, 1), (8, 64))),
    "SM80_16x8_Row": ("SM80_16x8_Row = Layout<Shape <Shape < _4,_8>,Shape < _2,_2>>, Stride<Stride<_32,_1>,Stride<_16,_8>>>",
                      ((4, 8), (2, 2)), ((32, 1), (16, 8))),
    "SM80_8x8_Row": ("SM80_8x8_Row = Layout<Shape <Shape < _4,_8>,_2>, Stride<Stride<_16,_1>,_8>>",
                     ((4, 8), 2), ((16, 1), 8)),
}
# ISA map, CuTe layout, tile rows (CuTe's first mode: M for A and C, N for B), ISA (row, col) -> CuTe (first, second)
CASES = [
    (("m16n8k16", "A"), "A16", 16, False),
    (("m16n8k16", "B"), "B16", 8, True),        # B tile (N8, K16); the ISA map is (K, N)
    (("m16n8k16", "C.f32"), "SM80_16x8_Row", 16, False),
    (("m16n8k16", "C.f16"), "SM80_16x8_Row", 16, False),
    (("m16n8k8", "A"), "SM80_16x8_Row", 16, False),   # SM80_16x8x8: ALayout = SM80_16x8_Row (M16,K8)
    (("m16n8k8", "B"), "SM80_8x8_Row", 8, True),      # BLayout = SM80_8x8_Row (N8,K8)
]


def squeeze(text):
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def header():
    if not HEADER.exists():
        pytest.skip(f"CuTe header not found at {HEADER}")
    return squeeze(HEADER.read_text())


@pytest.mark.parametrize("key", sorted(CUTE_LAYOUTS))
def test_layouts_are_the_headers(header, key):
    declaration = CUTE_LAYOUTS[key][0]
    assert squeeze(declaration) in header, f"{declaration!r} not found in {HEADER}"


@pytest.mark.parametrize("fragment,layout,rows,transposed", CASES)
def test_isa_map_agrees_with_cute_atom(fragment, layout, rows, transposed):
    fmap = MMA_FRAGMENTS[fragment]
    _, shape, stride = CUTE_LAYOUTS[layout]
    tv = pycute.Layout(shape, stride)
    values = fmap.regs * fmap.halves
    assert pycute.size(tv) == 32 * values
    for t in range(32):
        for v in range(values):
            idx = tv(t, v)
            first, second = idx % rows, idx // rows
            row, col = fmap.at(t, v // fmap.halves, v % fmap.halves)
            want = (col, row) if transposed else (row, col)
            assert (first, second) == want, (f"{fmap.name} lane {t} value {v}: CuTe {layout} gives "
                                             f"{(first, second)}, the ISA table {want}")
