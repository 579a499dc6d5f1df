"""Oracle cases for CuTe's TMA copies (``copy_traits_sm90_tma.hpp``): for each configuration, what
``make_tma_copy`` builds -- the box's ``TmaGmemBasis``, the ``TiledLayout_TV``, ``Tiler_MN``, the atom's
``ValLayoutRef`` -- and the arguments it gives ``cuTensorMapEncodeTiled`` (recorded by ``tma_stub.hpp``'s stand-in
for the driver), against ``warpsim.cute.make_tma_copy``. The configurations are CuTe's own documented examples
(2D K-major, GMMA swizzled, 3D; its cuTENSOR 4D example does not compile with CUTLASS 4.2), every GMMA smem atom (K and MN major, INTER to SW128), static
global shapes (where CuTe merges box modes up to 256), multicast over 2 and 4 CTAs, store and reduce-add."""

import hashlib
from dataclasses import dataclass

from oracle_harness import HERE, CaseGroup, OracleCase

INCLUDES = ("tma_stub.hpp",)
CPP_TYPES = {"f16": "half_t", "bf16": "bfloat16_t", "f32": "float", "u32": "uint32_t"}


@dataclass(frozen=True)
class TmaConfig:
    """One ``make_tma_copy``: each field written once in C++ and once in warpsim Python."""

    name: str
    op: str
    dtype: str
    g_cpp: str            # the global layout's arguments after the pointer: make_tensor(gptr, <g_cpp>)
    g_py: str
    s_cpp: str            # the smem layout
    s_py: str
    extra_cpp: str = ""   # ", cta_tiler, cluster_size" when given
    extra_py: str = ""

    def cpp(self, what):
        t = CPP_TYPES[self.dtype]
        build = (f"{t}* gptr = nullptr; Tensor g = make_tensor(gptr, {self.g_cpp}); "
                 f"auto tma = make_tma_copy({self.op}{{}}, g, {self.s_cpp}{self.extra_cpp});")
        if what == "encode":
            return f"[]{{ oracle_tma::last() = {{}}; {build} return oracle_tma::last(); }}()"
        if what == "gbasis":                           # its values are coordinates: printed as (shape, stride)
            basis = "typename decltype(tma)::Traits::AuxParams::TmaGmemBasis{}"
            return f"[]{{ {build} auto b = {basis}; return make_tuple(shape(b), stride(b)); }}()"
        member = {"TV": "TiledLayout_TV", "tiler": "Tiler_MN",
                  "ref": "ValLayoutRef"}[what]
        return f"[]{{ {build} return typename decltype(tma)::{member}{{}}; }}()"

    def py(self, what):
        build = (f"make_tma_copy({self.op}, make_tensor(make_gmem_ptr(0, {self.dtype!r}), {self.g_py}), "
                 f"{self.s_py}{self.extra_py})")
        return {"encode": f"{build}.encode_text()", "gbasis": f"({build}.tma_gbasis.shape, {build}.tma_gbasis.stride)", "TV": f"{build}.TiledLayout_TV",
                "tiler": f"{build}.Tiler_MN", "ref": f"{build}.atom.ValLayoutRef"}[what]


def _gmma(major, swizzle, dtype, m, k):
    """A GMMA smem atom tiled to (m, k): C++ and Python."""
    return (f"tile_to_shape(GMMA::Layout_{major}_{swizzle}_Atom<{CPP_TYPES[dtype]}>{{}}, make_shape(Int<{m}>{{}}, "
            f"Int<{k}>{{}}))", f"tile_to_shape(gmma_smem_atom({major!r}, {swizzle!r}, {dtype!r}), ({m}, {k}))")


def configs():
    dyn = ("make_shape(1024, 256), GenRowMajor{}", "(DInt(1024), DInt(256)), GenRowMajor")       # K-major
    dyn_mn = ("make_shape(1024, 256)", "(DInt(1024), DInt(256))")                               # MN-major
    out = [TmaConfig("simple_2d_f32", "SM90_TMA_LOAD", "f32", *dyn,
                     "make_layout(make_shape(Int<64>{}, Int<32>{}), GenRowMajor{})", "make_layout((64, 32), GenRowMajor)")]
    for major, g in (("K", dyn), ("MN", dyn_mn)):
        for swizzle in ("INTER", "SW32", "SW64", "SW128"):
            for dtype in ("f16", "f32"):
                out.append(TmaConfig(f"gmma_{major}_{swizzle}_{dtype}", "SM90_TMA_LOAD", dtype, *g,
                                     *_gmma(major, swizzle, dtype, 128, 64)))
    out.append(TmaConfig("gmma_K_SW128_bf16_64x256", "SM90_TMA_LOAD", "bf16", *dyn, *_gmma("K", "SW128", "bf16", 64, 256)))
    out.append(TmaConfig("doc_3d", "SM90_TMA_LOAD", "f32",
                         "make_shape(1024, 32, 512), make_stride(64, Int<1>{}, 65536)",
                         "(DInt(1024), DInt(32), DInt(512)), (DInt(64), 1, DInt(65536))",
                         "make_layout(make_shape(Int<16>{}, Int<8>{}, Int<2>{}), make_stride(Int<16>{}, Int<1>{}, Int<8>{}))",
                         "Layout((16, 8, 2), (16, 1, 8))"))
    # static global shapes: CuTe merges box modes while their strides are compile-time facts
    out.append(TmaConfig("static_8x32_f32", "SM90_TMA_LOAD", "f32",
                         "make_shape(Int<8>{}, Int<32>{}), GenRowMajor{}", "(8, 32), GenRowMajor",
                         "make_layout(make_shape(Int<8>{}, Int<32>{}), GenRowMajor{})", "make_layout((8, 32), GenRowMajor)"))
    out.append(TmaConfig("static_64x64_f16", "SM90_TMA_LOAD", "f16",
                         "make_shape(Int<256>{}, Int<64>{}), GenRowMajor{}", "(256, 64), GenRowMajor",
                         "make_layout(make_shape(Int<64>{}, Int<64>{}), GenRowMajor{})", "make_layout((64, 64), GenRowMajor)"))
    for n in (2, 4):
        out.append(TmaConfig(f"multicast_{n}", "SM90_TMA_LOAD_MULTICAST", "f16", *dyn, *_gmma("K", "SW128", "f16", 128, 64),
                             f", make_shape(Int<128>{{}}, Int<64>{{}}), Int<{n}>{{}}", f", (128, 64), {n}"))
    out.append(TmaConfig("store_f32", "SM90_TMA_STORE", "f32", *dyn_mn,
                         "make_layout(make_shape(Int<64>{}, Int<32>{}))", "make_layout((64, 32))"))
    out.append(TmaConfig("reduce_add_f32", "SM90_TMA_REDUCE_ADD", "f32", *dyn, *_gmma("K", "SW64", "f32", 64, 32)))
    return out


WHAT = ("encode", "gbasis", "TV", "tiler", "ref")


def cases():
    out = [OracleCase(f"tma/{c.name}/{what}", c.cpp(what), c.py(what)) for c in configs() for what in WHAT]
    for major in ("K", "MN"):                        # the GMMA smem atoms themselves (the layout part)
        for swizzle in ("INTER", "SW32", "SW64", "SW128"):
            for dtype in ("f16", "f32"):
                out.append(OracleCase(f"tma/atom/{major}_{swizzle}_{dtype}",
                                      f"get_nonswizzle_portion(GMMA::Layout_{major}_{swizzle}_Atom<{CPP_TYPES[dtype]}>{{}})",
                                      f"get_nonswizzle_portion(gmma_smem_atom({major!r}, {swizzle!r}, {dtype!r}))"))
    return out


def groups():
    # the stub's text is part of each TU's cache key through this comment (the harness keys TUs by their text)
    stub = hashlib.sha256((HERE / "tma_stub.hpp").read_bytes()).hexdigest()[:16]
    return [CaseGroup("tma", cases(), includes=INCLUDES, preamble=f"// tma_stub.hpp {stub}")]
