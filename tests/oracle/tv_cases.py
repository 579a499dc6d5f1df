"""Oracle configurations for tiled MMA / tiled copy partitions (compiled by ``tv_report.hpp``).

Each :class:`MmaConfig` is a tiled MMA, the shared layouts of A and B (and the layouts their
fragments are made from: the seed's Vᵀ uses an un-swizzled twin), the copy atoms that fill the
fragments, an (M, N) accumulator shape and optionally a tiled copy storing C. Each
:class:`CopyConfig` is a ``make_tiled_copy`` with a global source and a shared destination.
Every value is written once and rendered both as C++ and as warpsim Python (``case_dsl``).

For every thread, the oracle prints CuTe's partition, fragment, copy-partition and copy-view
layouts, the copy partition's element offsets, the copy view's register slots and the (row,
col) of every MMA-view element; ``test_tv_oracle.py`` compares warpsim with all of them.
"""

from dataclasses import dataclass
from pathlib import Path

from case_dsl import L, X, fn, sw
from oracle_harness import CaseGroup, OracleCase

HERE = Path(__file__).resolve().parent

CPP_TYPE = {"f16": "half_t", "bf16": "bfloat16_t", "u16": "uint16_t", "f32": "float", "u32": "uint32_t"}


def mma(op, thr=(1, 1, 1), tile=None):
    """``make_tiled_mma(op, Layout<Shape<thr>>, Tile<tile>)``."""
    thr_cpp = "Layout<Shape<" + ",".join(f"_{t}" for t in thr) + ">>{}"
    thr_py = f"make_layout({thr!r})"
    if tile is None:
        return X(f"make_tiled_mma({op}{{}}, {thr_cpp})", f"make_tiled_mma({op}(), {thr_py})")
    tile_cpp = "Tile<" + ",".join(f"_{t}" for t in tile) + ">{}"
    return X(f"make_tiled_mma({op}{{}}, {thr_cpp}, {tile_cpp})", f"make_tiled_mma({op}(), {thr_py}, {tile!r})")


def copy_atom(op, dtype):
    """``Copy_Atom<op, T>`` (``op`` is a CuTe name; ``UniversalCopy<uintN_t>`` as ``"U32"`` etc.)."""
    if op.startswith("U") and op[1:].isdigit():
        bits = int(op[1:])
        return X(f"Copy_Atom<UniversalCopy<uint{bits}_t>, {CPP_TYPE[dtype]}>{{}}",
                 f"Copy_Atom(UniversalCopy({bits}), {dtype!r})")
    return X(f"Copy_Atom<{op}, {CPP_TYPE[dtype]}>{{}}", f"Copy_Atom({op}(), {dtype!r})")


def swz_row(b, m, s, rows, cols, shape):
    """``tile_to_shape(composition(Swizzle<b,m,s>, Layout<(rows,cols),(cols,1)>), shape)``: K-major."""
    return fn("tile_to_shape", fn("composition", sw(b, m, s), L((rows, cols), (cols, 1))), shape)


def swz_col(b, m, s, rows, cols, shape):
    """``tile_to_shape(composition(Swizzle<b,m,s>, Layout<(rows,cols),(1,rows)>), shape)``: MN-major."""
    return fn("tile_to_shape", fn("composition", sw(b, m, s), L((rows, cols), (1, rows))), shape)


def row(shape):
    """Row-major (K-major) plain layout."""
    return L(shape, (shape[1], 1))


def col(shape):
    """Column-major (MN-major) plain layout."""
    return L(shape)


@dataclass(frozen=True)
class Operand:
    layout: X              # shared layout the copy reads
    copy: X                # Copy_Atom
    frag_layout: X = None  # layout the fragment is made from (default: layout)


@dataclass(frozen=True)
class MmaConfig:
    name: str
    mma: X
    ab: str                # element type of A and B
    cd: str                # accumulator type
    a: Operand
    b: Operand
    shape_mn: tuple
    c_layout: X = None     # shared layout C is stored to (with c_copy)
    c_copy: X = None


@dataclass(frozen=True)
class CopyCConfig:
    name: str
    mma: X
    cd: str                # accumulator type
    shape_mn: tuple        # (M, N) of the accumulator and of C's shared layout
    c_layout: X            # shared layout of C
    c_copy: X              # Copy_Atom given to make_tiled_copy_C
    threads: tuple         # the threads reported


@dataclass(frozen=True)
class CopyConfig:
    name: str
    dtype: str
    atom: X
    thr: X
    val: X
    src: X                 # global source layout
    dst: X                 # shared destination layout


SEED_SK = swz_row(3, 3, 3, 8, 64, (64, 64))
SEED_SVT = swz_col(3, 3, 3, 64, 64, (64, 64))
SEED_SVT_TWIN = L((64, 64), (1, 64))
K16 = "SM80_16x8x16_F32F16F16F32_TN"


def mma_configs():
    """At least one configuration per atom, thread layout, tiler kind, layout kind and dtype."""
    x4n, x2n, x1n = "SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x1_LDSM_N"
    x4t, x2t, x1t = "SM75_U16x8_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x2_LDSM_T"
    seed = mma(K16, (4, 1, 1), (64, 16, 16))
    seed_bf = mma("SM80_16x8x16_F32BF16BF16F32_TN", (4, 1, 1), (64, 16, 16))
    c_smem = row((64, 64))
    out = [
        MmaConfig("seed_qk_f16", seed, "f16", "f32", Operand(SEED_SK, copy_atom(x4n, "f16")),
                  Operand(SEED_SK, copy_atom(x4n, "f16")), (64, 64), c_smem, copy_atom("U32", "f32")),
        MmaConfig("seed_qk_bf16", seed_bf, "bf16", "f32", Operand(SEED_SK, copy_atom(x4n, "bf16")),
                  Operand(SEED_SK, copy_atom(x4n, "bf16")), (64, 64)),
        MmaConfig("seed_pv_f16", seed, "f16", "f32", Operand(SEED_SK, copy_atom(x4n, "f16")),
                  Operand(SEED_SVT, copy_atom(x4t, "f16"), SEED_SVT_TWIN), (64, 64)),
        MmaConfig("seed_pv_bf16", seed_bf, "bf16", "f32", Operand(SEED_SK, copy_atom(x4n, "bf16")),
                  Operand(SEED_SVT, copy_atom(x4t, "bf16"), SEED_SVT_TWIN), (64, 64), c_smem, copy_atom("U64", "f32")),
        MmaConfig("k16_f16acc_111", mma("SM80_16x8x16_F16F16F16F16_TN"), "f16", "f16",
                  Operand(row((16, 16)), copy_atom(x4n, "f16")), Operand(row((8, 16)), copy_atom(x2n, "f16")),
                  (16, 8), row((16, 8)), copy_atom("U32", "f16")),
        MmaConfig("k16_221_swz32", mma(K16, (2, 2, 1), (32, 32, 16)), "f16", "f32",
                  Operand(swz_row(2, 3, 3, 8, 32, (32, 32)), copy_atom(x4n, "f16")),
                  Operand(swz_row(2, 3, 3, 8, 32, (32, 32)), copy_atom(x4n, "f16")), (32, 32)),
        MmaConfig("k16_bf16_141", mma("SM80_16x8x16_F32BF16BF16F32_TN", (1, 4, 1), (16, 64, 16)), "bf16", "f32",
                  Operand(swz_row(3, 3, 3, 8, 64, (16, 64)), copy_atom(x4n, "bf16")),
                  Operand(swz_row(3, 3, 3, 8, 64, (64, 64)), copy_atom(x4n, "bf16")), (16, 64)),
        MmaConfig("k8_f32_411", mma("SM80_16x8x8_F32F16F16F32_TN", (4, 1, 1), (64, 8, 8)), "f16", "f32",
                  Operand(row((64, 32)), copy_atom(x2n, "f16")), Operand(row((32, 32)), copy_atom(x1n, "f16")),
                  (64, 32)),
        MmaConfig("k8_f16acc_111", mma("SM80_16x8x8_F16F16F16F16_TN"), "f16", "f16",
                  Operand(row((32, 16)), copy_atom(x2n, "f16")), Operand(row((16, 16)), copy_atom(x1n, "f16")),
                  (32, 16)),
        MmaConfig("k8_bf16_221_ldsmT", mma("SM80_16x8x8_F32BF16BF16F32_TN", (2, 2, 1), (32, 16, 8)), "bf16", "f32",
                  Operand(row((32, 32)), copy_atom(x2n, "bf16")), Operand(col((32, 32)), copy_atom(x1t, "bf16")),
                  (32, 32)),
        MmaConfig("k16_111_ldsmT_x2", mma(K16), "f16", "f32",
                  Operand(row((16, 32)), copy_atom(x4n, "f16")), Operand(col((8, 32)), copy_atom(x2t, "f16")),
                  (16, 8)),
        MmaConfig("k16_411_A_mn_major", mma(K16, (4, 1, 1), (64, 16, 16)), "f16", "f32",
                  Operand(col((64, 32)), copy_atom(x4t, "f16")), Operand(row((32, 32)), copy_atom(x4n, "f16")),
                  (64, 32)),
        MmaConfig("k16_111_universal32_A", mma(K16), "f16", "f32",
                  Operand(row((16, 16)), copy_atom("U32", "f16")), Operand(row((8, 16)), copy_atom("U16", "f16")),
                  (16, 8)),
        MmaConfig("k16_221_universal_A16_B32", mma(K16, (2, 2, 1)), "f16", "f32",
                  Operand(row((32, 32)), copy_atom("U16", "f16")), Operand(row((16, 32)), copy_atom("U32", "f16")),
                  (32, 16)),
        MmaConfig("k16_bf16_411_no_tile", mma("SM80_16x8x16_F32BF16BF16F32_TN", (4, 1, 1)), "bf16", "f32",
                  Operand(swz_row(3, 3, 3, 8, 64, (64, 64)), copy_atom(x4n, "bf16")),
                  Operand(swz_row(3, 3, 3, 8, 64, (16, 64)), copy_atom(x2n, "bf16")), (64, 16)),
        MmaConfig("k16_141_swz_mn_major_B", mma(K16, (1, 4, 1), (16, 64, 16)), "f16", "f32",
                  Operand(row((16, 64)), copy_atom(x4n, "f16")),
                  Operand(swz_col(3, 3, 3, 64, 8, (64, 64)), copy_atom(x4t, "f16"), col((64, 64))), (16, 64)),
        MmaConfig("k8_221_f32", mma("SM80_16x8x8_F32F16F16F32_TN", (2, 2, 1), (32, 16, 8)), "f16", "f32",
                  Operand(swz_row(2, 3, 3, 8, 32, (32, 32)), copy_atom(x2n, "f16")),
                  Operand(swz_row(2, 3, 3, 8, 32, (16, 32)), copy_atom(x1n, "f16")), (32, 16)),
        MmaConfig("k16_f16acc_221", mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2, 1), (32, 32, 16)), "f16", "f16",
                  Operand(swz_row(3, 3, 3, 8, 64, (32, 64)), copy_atom(x4n, "f16")),
                  Operand(swz_row(3, 3, 3, 8, 64, (32, 64)), copy_atom(x4n, "u16")), (32, 32)),
    ]
    return out


def copy_configs():
    """``make_tiled_copy`` with universal copies: global -> shared fills."""
    return [
        CopyConfig("fill_u128_f16_swz", "f16", copy_atom("U128", "f16"), L((16, 8), (8, 1)), L((1, 8)),
                   row((64, 64)), SEED_SK),
        CopyConfig("fill_u64_bf16_col", "bf16", copy_atom("U64", "bf16"), L((16, 8)), L((4, 1)),
                   col((64, 64)), col((64, 64))),
        CopyConfig("fill_u32_f32", "f32", copy_atom("U32", "f32"), L((8, 16), (16, 1)), L((1, 1)),
                   row((32, 32)), row((32, 32))),
        CopyConfig("fill_u16_u16_colthr", "u16", copy_atom("U16", "u16"), L((32, 4)), L((1, 1)),
                   col((64, 16)), swz_row(1, 3, 3, 8, 16, (64, 16))),
    ]


def copy_c_configs():
    """``make_tiled_copy_C``: each thread layout and accumulator type, plain and swizzled C tiles."""
    seed = mma(K16, (4, 1, 1), (64, 16, 16))
    some = (0, 1, 5, 31, 127)
    return [
        CopyCConfig("seed_u64_row", seed, "f32", (64, 64), row((64, 64)), copy_atom("U64", "f32"), some),
        CopyCConfig("seed_u32_swz", seed, "f32", (64, 64), swz_row(3, 3, 3, 8, 64, (64, 64)),
                    copy_atom("U32", "f32"), some),
        CopyCConfig("k16_221_u64_col", mma(K16, (2, 2, 1), (32, 32, 16)), "f32", (32, 32), col((32, 32)),
                    copy_atom("U64", "f32"), some),
        CopyCConfig("k16_f16acc_111_u32", mma("SM80_16x8x16_F16F16F16F16_TN"), "f16", (16, 8), row((16, 8)),
                    copy_atom("U32", "f16"), (0, 1, 5, 31)),
        CopyCConfig("k8_141_u32_col", mma("SM80_16x8x8_F32F16F16F32_TN", (1, 4, 1), (16, 64, 8)), "f32",
                    (16, 64), col((16, 64)), copy_atom("U32", "f32"), some),
        CopyCConfig("k16_f16acc_221_u16", mma("SM80_16x8x16_F16F16F16F16_TN", (2, 2, 1)), "f16", (32, 32),
                    swz_row(2, 3, 3, 8, 32, (32, 32)), copy_atom("U16", "f16"), some),
    ]


def _cpp_copy_c(cfg):
    shape = ", ".join(f"Int<{n}>{{}}" for n in cfg.shape_mn)
    threads = ", ".join(str(t) for t in cfg.threads)
    return (f"tv::copy_c_report<{CPP_TYPE[cfg.cd]}>({cfg.mma.cpp}, {cfg.c_layout.cpp}, {cfg.c_copy.cpp}, "
            f"make_shape({shape}), std::vector<int>{{{threads}}})")


def _cpp_mma(cfg):
    a, b = cfg.a, cfg.b
    none = X("tv::None{}", "None")
    return (f"tv::mma_report<{CPP_TYPE[cfg.ab]}, {CPP_TYPE[cfg.ab]}, {CPP_TYPE[cfg.cd]}>("
            f"{cfg.mma.cpp}, {a.layout.cpp}, {(a.frag_layout or a.layout).cpp}, {a.copy.cpp}, "
            f"{b.layout.cpp}, {(b.frag_layout or b.layout).cpp}, {b.copy.cpp}, "
            f"make_shape(Int<{cfg.shape_mn[0]}>{{}}, Int<{cfg.shape_mn[1]}>{{}}), "
            f"{(cfg.c_layout or none).cpp}, {(cfg.c_copy or none).cpp})")


def _cpp_copy(cfg):
    return (f"tv::copy_report<{CPP_TYPE[cfg.dtype]}>({cfg.atom.cpp}, {cfg.thr.cpp}, {cfg.val.cpp}, "
            f"{cfg.src.cpp}, {cfg.dst.cpp})")


CONFIGS = {c.name: c for c in mma_configs() + copy_configs()}


def groups():
    """One group per two configurations, so that nvcc compiles them in parallel."""
    preamble = (HERE / "tv_report.hpp").read_text()
    cases = [OracleCase(f"tv/mma/{c.name}", _cpp_mma(c), c.name) for c in mma_configs()]
    cases += [OracleCase(f"tv/copy/{c.name}", _cpp_copy(c), c.name) for c in copy_configs()]
    includes = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/copy_atom.hpp")
    out = [CaseGroup(f"tv{k // 2}", cases[k:k + 2], includes=includes, preamble=preamble)
           for k in range(0, len(cases), 2)]
    c_cases = [OracleCase(f"tv/copy_c/{c.name}", _cpp_copy_c(c), c.name) for c in copy_c_configs()]
    preamble_c = preamble + "\n" + (HERE / "tvc_report.hpp").read_text()
    return out + [CaseGroup("tvc", c_cases, includes=includes, preamble=preamble_c)]
