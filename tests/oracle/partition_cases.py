"""Oracle cases for tensor partitioning: ``local_tile`` and ``local_partition`` (``partition_report.hpp``).

Each :class:`PartCase` cuts a tensor (global, shared with the seed's swizzle, dynamic-shaped, or
a register fragment) with ``local_tile`` or, for every thread of a thread layout (a run-time
``int`` thread index, as threadIdx.x), with ``local_partition``. CuTe prints the resulting
layout and every element's offset from the start of the tensor it was cut from;
``test_partition_oracle.py`` compares warpsim's. Values are written once with ``case_dsl``.
"""

from dataclasses import dataclass
from pathlib import Path

from case_dsl import D, L, U, X, c, fn, p, sw
from oracle_harness import CaseGroup, OracleCase

HERE = Path(__file__).resolve().parent

CPP_TYPE = {"f16": "half_t", "f32": "float"}


def gmem(layout, dtype="f32"):
    """A global-memory tensor on a buffer (offsets from the buffer start)."""
    return X(f"make_tensor(make_gmem_ptr(part::buf<{CPP_TYPE[dtype]}>()), {layout.cpp})",
             f"make_tensor(make_gmem_ptr(0, {dtype!r}), {layout.py})")


def smem(layout, dtype="f16"):
    """A shared-memory tensor on a buffer."""
    return X(f"make_tensor(make_smem_ptr(part::buf<{CPP_TYPE[dtype]}>()), {layout.cpp})",
             f"make_tensor(make_smem_ptr(0, {dtype!r}), {layout.py})")


def rmem(layout, dtype="f32"):
    """An owning register fragment (offsets are register slots)."""
    return X(f"make_tensor<{CPP_TYPE[dtype]}>({layout.cpp})", f"make_tensor({dtype!r}, {layout.py})")


def step(*modes):
    """CuTe ``Step<...>{}`` of ``1`` and ``X`` (Python: a tuple of ``1`` and ``X``)."""
    cpp = ",".join("_1" if m == 1 else "X" for m in modes)
    return X(f"Step<{cpp}>{{}}", "(" + ", ".join("1" if m == 1 else "X" for m in modes) + ")")


@dataclass(frozen=True)
class PartCase:
    id: str
    tensor: X          # the tensor cut
    op: str            # "local_tile" or "local_partition"
    args: tuple        # the arguments after the tensor (local_partition: thread layout[, proj])
    threads: int = 0   # local_partition: every thread index below this

    def cpp(self):
        make = f"[]{{ return {self.tensor.cpp}; }}"
        if self.op == "local_tile":
            args = ", ".join(c(a) for a in self.args)
            return f"part::one({make}, [](auto& t) {{ return local_tile(t, {args}); }})"
        layout, *proj = self.args
        tail = "".join(f", {c(a)}" for a in proj)
        return f"part::each({self.threads}, {make}, [](auto& t, int i) {{ return local_partition(t, {c(layout)}, i{tail}); }})"

    def py_args(self):
        """The Python text of the arguments after the tensor (and, for local_partition, the index)."""
        return [p(a) for a in self.args]


SEED_SK = fn("tile_to_shape", fn("composition", sw(3, 3, 3), L((8, 64), (64, 1))), (64, 64))
ROW = L((64, 32), (32, 1))
COL = L((64, 32))
CUBE = L((32, 16, 4))
DYN_ROW = L((D(96), D(64)), (D(64), 1))
DYN_COL = L((D(96), D(64)))
FRAG = L((8, 16))
FRAG3 = L((4, 8, 2), (1, 8, 4))
THR_COL = L((4, 8))
THR_ROW = L((8, 4), (4, 1))


def tile_cases():
    t = lambda name, tensor, *args: PartCase(f"part/local_tile/{name}", tensor, "local_tile", args)
    return [
        t("gmem_row_static", gmem(ROW), (16, 8), (1, 2)),
        t("gmem_row_dynamic", gmem(ROW), (16, 8), (D(3), D(1))),
        t("gmem_col_mixed", gmem(COL), (32, 16), (D(1), 0)),
        t("gmem_col_keep_rest", gmem(COL), (16, 8), (2, U)),
        t("gmem_col_keep_first", gmem(COL), (16, 8), (U, D(3))),
        t("gmem_row_flat_index", gmem(ROW), (16, 8), D(7)),
        t("gmem_row_layout_tiler", gmem(ROW), (L(8, 2), 16), (1, D(1))),
        t("gmem_3d_static", gmem(CUBE), (8, 4, 2), (1, 2, 1)),
        t("gmem_3d_dynamic", gmem(CUBE), (8, 4, 2), (D(3), D(0), D(1))),
        t("gmem_3d_short_tiler", gmem(CUBE), (8, 4), (2, D(1))),
        t("gmem_3d_keep_k", gmem(CUBE), (8, 4, 2), (D(1), D(2), U)),
        t("dyn_row", gmem(DYN_ROW), (32, 16), (D(2), D(3))),
        t("dyn_col_keep", gmem(DYN_COL), (32, 16), (D(1), U)),
        t("dyn_row_static_coord", gmem(DYN_ROW), (32, 16), (1, 2)),
        t("proj_A", gmem(ROW), (16, 64, 8), (D(2), D(0), U), step(1, "X", 1)),
        t("proj_B", gmem(COL), (16, 32, 8), (D(1), D(1), U), step("X", 1, 1)),
        t("proj_C", gmem(ROW), (16, 8, 4), (D(1), D(3), U), step(1, 1, "X")),
        t("proj_dyn_A", gmem(DYN_ROW), (32, 8, 16), (D(1), D(5), D(2)), step(1, "X", 1)),
        t("seed_sK_static", smem(SEED_SK), (16, 32), (1, 1)),
        t("seed_sK_dynamic", smem(SEED_SK), (16, 32), (D(3), D(1))),
        t("seed_sK_rows", smem(SEED_SK), (8, 64), (D(5), 0)),
        t("seed_sK_keep", smem(SEED_SK), (32, 16), (D(1), U)),
        t("seed_sK_proj", smem(SEED_SK), (16, 4, 32), (D(2), D(3), D(1)), step(1, "X", 1)),
        t("frag_static", rmem(FRAG), (4, 8), (1, 1)),
        t("frag_dynamic", rmem(FRAG), (4, 8), (D(1), D(1))),
        t("frag_3d_keep", rmem(FRAG3), (2, 4), (1, U)),
    ]


def partition_cases():
    t = lambda name, tensor, n, *args: PartCase(f"part/local_partition/{name}", tensor, "local_partition", args, n)
    proj_thr = L((2, 16, 1), (16, 1, 0))
    return [
        t("gmem_row_thr_col", gmem(ROW), 32, THR_COL),
        t("gmem_row_thr_row", gmem(ROW), 32, THR_ROW),
        t("gmem_col_thr_row", gmem(COL), 32, THR_ROW),
        t("gmem_3d_thr_col", gmem(CUBE), 32, THR_COL),
        t("dyn_row_thr_col", gmem(DYN_ROW), 32, THR_COL),
        t("dyn_col_thr_row", gmem(DYN_COL), 32, THR_ROW),
        t("seed_sK_thr_col", smem(SEED_SK), 32, THR_COL),
        t("seed_sK_thr_row", smem(SEED_SK), 32, THR_ROW),
        t("frag_thr_col", rmem(FRAG), 32, THR_COL),
        t("frag_thr_row", rmem(FRAG), 32, THR_ROW),
        t("proj_A", gmem(L((32, 16), (16, 1))), 32, proj_thr, step(1, "X", 1)),
        t("proj_B", gmem(L((64, 16))), 32, proj_thr, step("X", 1, 1)),
        t("proj_C", gmem(L((32, 64))), 32, proj_thr, step(1, 1, "X")),
    ]


CASES = {k.id: k for k in tile_cases() + partition_cases()}


def groups():
    """Two groups (tiles, thread partitions) so that nvcc compiles them in parallel."""
    preamble = (HERE / "partition_report.hpp").read_text()
    out = []
    for name, cases in (("part_tile", tile_cases()), ("part_thr", partition_cases())):
        out.append(CaseGroup(name, [OracleCase(k.id, k.cpp(), k.id) for k in cases], preamble=preamble))
    return out
