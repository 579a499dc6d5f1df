"""Helpers of the debugger's tests: the seed program, inputs whose bits name their coordinates, CuTe's answers.

Every element of the coded inputs holds its own coordinate: ``q[m, k] = 64 m + k``,
``k[n, k] = 0x1000 + 64 n + k``, ``v[key, d] = 0x2000 + 64 key + d`` (raw 16-bit patterns; ldmatrix and
the copies move bits, so a register half read back names the element it holds). The expectations of
who holds what come from ``warpsim.cute`` (CuTe's partitions of identity tensors), never from the
debugger.
"""

from pathlib import Path

import numpy as np

import warpsim.cute as cute

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gemm_smem.py"
BASES = {"q": 0x0000, "k": 0x1000, "v": 0x2000}


def coded_inputs(product="qk"):
    """``{q, k}`` or ``{q, v}``: 64x64 uint16, each element's bits ``base + 64 row + col``."""
    rows, cols = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    second = "k" if product == "qk" else "v"
    return {name: (BASES[name] + 64 * rows + cols).astype(np.uint16) for name in ("q", second)}


def decode(bits, name):
    """``(row, col)`` named by the 16-bit pattern ``bits`` of coded input ``name``."""
    x = int(bits) - BASES[name]
    assert 0 <= x < 4096, f"{bits:#x} is not an element of coded input {name}"
    return divmod(x, 64)


def source_line(text):
    """The line number of the one line of the example that contains ``text``."""
    lines = [n for n, line in enumerate(EXAMPLE.read_text().splitlines(), 1) if text in line]
    assert len(lines) == 1, f"{text!r} is on lines {lines} of {EXAMPLE.name}"
    return lines[0]


def seed_cute(thread, product="qk", swizzle="yes"):
    """CuTe's view of thread ``thread`` in the seed: its tiled MMA slice, the B fragment, its copy view, and
    the (n, k) coordinate of every MMA-view element of B (``partition_B`` of an identity tensor)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("seed_example_for_tests", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    traits = module.kernel_traits("f16", swizzle)
    thr = traits.tiled_mma.get_slice(thread)
    if product == "qk":
        smem_b = cute.make_tensor(cute.make_smem_ptr(module.SMEM_KV, "f16"), traits.smem_layout_kv)
        frag_source, atom = smem_b, traits.smem_copy_atom
    else:
        smem_b = cute.make_tensor(cute.make_smem_ptr(module.SMEM_KV, "f16"), traits.smem_layout_vt)
        frag_source = cute.make_tensor(cute.make_smem_ptr(module.SMEM_KV, "f16"), traits.smem_layout_vt_no_swizzle)
        atom = traits.smem_copy_atom_transposed
    frag = thr.partition_fragment_B(frag_source)
    copy_b = cute.make_tiled_copy_B(atom, traits.tiled_mma).get_slice(thread)
    view = copy_b.retile_D(frag)
    ident = thr.partition_B(cute.make_identity_tensor((64, 64)))
    coords = [tuple(int(c) for c in ident[i]) for i in range(int(cute.size(frag.layout)))]
    return {"frag": frag, "copy_view": view, "coords": coords, "smem_b": smem_b, "module": module,
            "traits": traits}
