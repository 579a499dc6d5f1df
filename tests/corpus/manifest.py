"""The corpus of real compilers' PTX (issue 26, item 2): what each file is, how to launch it, what it must compute.

Each :class:`CorpusFile` is one PTX module under ``tests/corpus/ptx/``, made by ``tests/corpus/generate.py`` from a
kernel of ours under ``tests/corpus/src/`` by one tool -- ``nvcc`` (CUDA C++, CuTe), ``cute-dsl`` (CuTe DSL),
``triton`` or ``numba-cuda`` -- for one ``arch``, with ``build`` saying how (nvcc flags, Triton's signature and
constexprs, Numba's signature). The tool's version is not restated here: the generator appends one line naming
it to the file it writes, and :meth:`CorpusFile.made_by` reads it back.

Each :class:`Launch` of a file names its kernel as the source does (``saxpy``, not ``_Z5saxpyifPKfPf``; the
entry is found as ``warpsim run --kernel`` finds it, :func:`warpsim.frontends.kernel.find_entry`), the grid, block and
dynamic shared bytes, and its parameters in PTX order:

- :class:`In` an input array drawn from ``numpy.random.default_rng(seed)`` (floats uniform in ``[-2, 2]`` then
  rounded to the dtype, e4m3/e5m2 to the nearest code; integers uniform bits, or uniform in ``[low, high)``),
  :class:`InOut` one that the kernel also writes, :class:`Out` an output filled with zeros;
- :class:`Scalar` a number (a Triton kernel's two trailing scratch pointers are ``Scalar(0)``: the null pointer
  Triton's launcher passes when the kernel needs no scratch);
- :class:`NumbaArray` one array as Numba passes it: ``meminfo, parent, nitems, itemsize, data, shape..., strides...``
  (``meminfo`` and ``parent`` null, strides in bytes).

``reference(values)`` takes the arrays (floats as float64) and scalars by name and returns the expected content
of each output, computed in float64 (integers: exactly, in their own type); ``tolerance`` is ``None`` for
bit-exact outputs (integers, and float results that are one correctly rounded operation of the inputs) or a
:class:`Tolerance` against the float64 reference. The bit-exact check of the simulator against the GPU is
hwcheck's (``hwcheck acceptance --only corpus``, :mod:`hwcheck.runs.ptx_examples`).

:data:`KNOWN_FAILURES` names the files warpsim does not run yet, with the error and the construct: the tests
expect those failures (strictly), and hwcheck's set leaves those files out.

>>> len(CORPUS) >= 15 and len({f.ptx for f in CORPUS}) == len(CORPUS)
True
>>> launch = by_name("nvcc_vector_ops_sm80.ptx").launches[0]
>>> args, values = concrete_args(launch, seed=0)
>>> len(args), values["x"].dtype.name, bool(abs(values["x"]).max() <= 2)
(4, 'float32', True)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

import references as ref

from warpsim.isa.floats import FP8, fp8_values, nearest_fp8

__all__ = ["CORPUS", "CorpusFile", "Launch", "In", "InOut", "Out", "Scalar", "NumbaArray", "Tolerance", "PTX_DIR",
           "SRC_DIR", "TOOLS", "KNOWN_FAILURES", "Known", "by_name", "concrete_args", "expected", "parameters",
           "known_failure", "LOW", "HIGH"]

HERE = os.path.dirname(os.path.abspath(__file__))
PTX_DIR = os.path.join(HERE, "ptx")
SRC_DIR = os.path.join(HERE, "src")
TOOLS = ("nvcc", "cute-dsl", "triton", "numba-cuda")
LOW, HIGH = -2.0, 2.0                     # float inputs are uniform in [LOW, HIGH]
MADE_BY = re.compile(r"^// warpsim corpus: (.*)$", re.MULTILINE)

DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "u32": np.uint32, "i32": np.int32,
          "u64": np.uint64, "e4m3": np.uint8, "e5m2": np.uint8}      # fp8 held as its codes


# ------------------------------------------------------------------------------------------------ parameters

@dataclass(frozen=True)
class In:
    """An input array: floats uniform in ``[LOW, HIGH]``, integers uniform bits (or in ``[low, high)``)."""

    name: str
    dtype: str
    shape: tuple
    low: int | None = None
    high: int | None = None
    output = False


@dataclass(frozen=True)
class InOut(In):
    """An input array the kernel overwrites (``y`` of ``y = a * x + y``)."""

    output = True


@dataclass(frozen=True)
class Out:
    """An output array, zero-filled before the launch."""

    name: str
    dtype: str
    shape: tuple
    output = True


@dataclass(frozen=True)
class Scalar:
    """A scalar parameter, packed with the parameter's PTX type."""

    name: str
    value: int | float


@dataclass(frozen=True)
class NumbaArray:
    """An array as a Numba CUDA kernel takes it: ``meminfo, parent, nitems, itemsize, data, shape..., strides...``
    (C order; Numba passes null ``meminfo`` and ``parent`` pointers when it launches)."""

    array: In | Out

    @property
    def width(self):
        return 5 + 2 * len(self.array.shape)


@dataclass(frozen=True)
class Tolerance:
    """Elementwise ``|got - want| <= atol + rtol * |want|`` against the float64 reference."""

    rtol: float
    atol: float


@dataclass(frozen=True)
class Launch:
    """One launch of one kernel of a corpus file (see the module docstring)."""

    kernel: str
    grid: tuple
    block: tuple
    args: tuple
    reference: object
    tolerance: Tolerance | None
    smem: int = 0

    @property
    def arrays(self):
        """The :class:`In`/:class:`InOut`/:class:`Out` of the launch, in parameter order."""
        return [a.array if isinstance(a, NumbaArray) else a for a in self.args if not isinstance(a, Scalar)]

    @property
    def outputs(self):
        return [a.name for a in self.arrays if a.output]


@dataclass(frozen=True)
class CorpusFile:
    """One PTX file: ``ptx`` (its name under ``ptx/``), the ``tool`` and ``source`` (under ``src/``) that made it,
    the ``arch`` (``sm_80``/``sm_90``), ``build`` (the tool's options) and its ``launches``."""

    ptx: str
    tool: str
    source: str
    arch: str
    launches: tuple
    build: dict = field(default_factory=dict)

    @property
    def path(self):
        return os.path.join(PTX_DIR, self.ptx)

    @property
    def source_path(self):
        return os.path.join(SRC_DIR, self.source)

    def made_by(self):
        """The generator's line: the tool and its version, the arch and the build options (None before the file
        exists)."""
        try:
            with open(self.path, encoding="utf-8") as f:
                found = MADE_BY.findall(f.read())
        except OSError:
            return None
        return found[-1] if found else None


def by_name(ptx):
    """The :class:`CorpusFile` whose PTX file is named ``ptx``."""
    for entry in CORPUS:
        if entry.ptx == ptx:
            return entry
    raise ValueError(f"corpus: no file {ptx!r}; files: {', '.join(e.ptx for e in CORPUS)}")


def parameters(launch):
    """``[(kind, spec)]`` per PTX parameter, in order: ``("array", In/Out)``, ``("scalar", value)`` (Numba's
    array expanded into its fields)."""
    out = []
    for a in launch.args:
        if isinstance(a, Scalar):
            out.append(("scalar", a.value))
        elif isinstance(a, NumbaArray):
            arr = a.array
            itemsize = np.dtype(DTYPES[arr.dtype]).itemsize
            strides = [itemsize * int(np.prod(arr.shape[i + 1:])) for i in range(len(arr.shape))]
            out += [("scalar", 0), ("scalar", 0), ("scalar", int(np.prod(arr.shape))), ("scalar", itemsize),
                    ("array", arr), *[("scalar", int(s)) for s in arr.shape], *[("scalar", s) for s in strides]]
        else:
            out.append(("array", a))
    return out


def _draw(rng, spec):
    dtype = DTYPES[spec.dtype]
    if isinstance(spec, Out) and not isinstance(spec, In):
        return np.zeros(spec.shape, dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(LOW, HIGH, spec.shape).astype(dtype)
    if spec.dtype in FP8:
        return nearest_fp8(rng.uniform(LOW, HIGH, spec.shape), spec.dtype)
    if spec.low is not None:
        return rng.integers(spec.low, spec.high, spec.shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(0, 1 << info.bits, spec.shape, dtype=np.uint64).astype(dtype)


def concrete_args(launch, seed):
    """``(args, values)``: the launch's arguments in PTX parameter order (arrays as numpy arrays, fresh per call)
    and ``values``, the arrays and scalars by name (the same array objects)."""
    rng = np.random.default_rng(seed)
    values = {}
    for a in launch.args:
        spec = a.array if isinstance(a, NumbaArray) else a
        values[spec.name] = spec.value if isinstance(spec, Scalar) else _draw(rng, spec)
    args = []
    for kind, spec in parameters(launch):
        args.append(values[spec.name] if kind == "array" else spec)
    return args, values


def expected(launch, values):
    """The reference's outputs for ``values`` (the inputs as :func:`concrete_args` drew them, before the launch);
    the reference sees every float array, fp8 codes decoded, as float64."""
    fp8 = {s.name: s.dtype for s in (a.array if isinstance(a, NumbaArray) else a for a in launch.args)
           if not isinstance(s, Scalar) and s.dtype in FP8}
    as64 = {k: (fp8_values(fp8[k])[v] if k in fp8 else
                v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)
            for k, v in values.items()}
    return launch.reference(as64)


# ------------------------------------------------------------------------------------------------ the corpus

F32_ROUNDED = None                          # one correctly rounded f32 operation: the f32 of the reference, exactly
ROWS, COLS = 16, 100                        # the softmax launches' (rows, cols): a tail in every row
LN_ROWS, LN_COLS = 8, 300                   # the layer norms': 300 = 2 x 128 + 44
SOFTMAX_TOL = Tolerance(1e-5, 1e-7)
SOFTMAX_FAST_TOL = Tolerance(1e-4, 1e-6)    # ex2.approx and an approximate division
LN_TOL = Tolerance(1e-4, 1e-5)
# wgmma's fp8 dot keeps 13 fraction bits below the largest term of each block of 32 (isa.dot_add): an f32 sum of 80
# products of magnitude up to 4 may lose ~2**-13 of each block's largest, far more than f16's rounding of the result
FP8_DOT_TOL = Tolerance(2e-2, 1e-3)


def _saxpy(v):
    return {"y": v["a"] * v["x"] + v["y"]}


def _softmax_launch(kernel="softmax_rows", tol=SOFTMAX_TOL):
    return Launch(kernel, (ROWS // 4, 1, 1), (128, 1, 1),
                  (In("x", "f32", (ROWS, COLS)), Out("y", "f32", (ROWS, COLS)), Scalar("rows", ROWS),
                   Scalar("cols", COLS)),
                  lambda v: {"y": ref.softmax(v["x"])}, tol)


def _layernorm_launch():
    return Launch("layernorm", (LN_ROWS, 1, 1), (128, 1, 1),
                  (In("x", "f32", (LN_ROWS, LN_COLS)), In("gamma", "f32", (LN_COLS,)), In("beta", "f32", (LN_COLS,)),
                   Out("y", "f32", (LN_ROWS, LN_COLS)), Out("mean", "f32", (LN_ROWS,)), Out("rstd", "f32", (LN_ROWS,)),
                   Scalar("cols", LN_COLS), Scalar("eps", 1e-5)),
                  lambda v: ref.layernorm_outputs(v, "y", "mean", "rstd"), LN_TOL)


def _nvcc():
    saxpy = Launch("saxpy", (8, 1, 1), (128, 1, 1),
                   (Scalar("n", 1000), Scalar("a", 0.75), In("x", "f32", (1000,)), InOut("y", "f32", (1000,))),
                   _saxpy, Tolerance(1e-6, 1e-6))
    axpby4 = Launch("axpby4", (2, 1, 1), (128, 1, 1),
                    (In("x", "f32", (1000,)), In("y", "f32", (1000,)), Out("out", "f32", (1000,)), Scalar("a", -1.25),
                     Scalar("b", 0.5), Scalar("n4", 250)),
                    lambda v: {"out": v["a"] * v["x"] + v["b"] * v["y"]}, Tolerance(1e-6, 1e-6))
    mix = Launch("mix_u32", (4, 1, 1), (128, 1, 1), (In("x", "u32", (2000,)), Out("y", "u32", (2000,)),
                                                     Scalar("n", 2000)), ref.mix_u32_reference, None)
    row_sum = Launch("row_sum", (8, 1, 1), (256, 1, 1),
                     (In("x", "f32", (8, 1000)), Out("out", "f32", (8,)), Scalar("cols", 1000)),
                     lambda v: {"out": v["x"].sum(axis=1)}, Tolerance(1e-5, 1e-4))
    sum_u32 = Launch("sum_u32", (4, 1, 1), (128, 1, 1),
                     (In("x", "u32", (5000,)), Out("total", "u64", (1,)), Scalar("n", 5000)),
                     lambda v: {"total": np.array([int(v["x"].astype(np.uint64).sum())], np.uint64)}, None)
    gemm = Launch("gemm_tn", (2, 1, 1), (128, 1, 1),
                  (Scalar("M", 128), Scalar("N", 64), Scalar("K", 64), Scalar("alpha", 0.5), In("A", "f16", (128, 64)),
                   In("B", "f16", (64, 64)), Scalar("beta", 0.25), InOut("C", "f32", (128, 64))),
                  lambda v: {"C": v["alpha"] * v["A"] @ v["B"].T + v["beta"] * v["C"]}, Tolerance(1e-4, 1e-4))
    attention = Launch("attention_fwd", (80, 1, 1), (64, 1, 1),
                       (In("q", "f32", (1, 80, 64)), In("k", "f32", (1, 80, 64)), In("v", "f32", (1, 80, 64)),
                        Out("o", "f32", (1, 80, 64)), Scalar("n", 80), Scalar("scale", 0.125)),
                       lambda v: {"o": ref.attention(v["q"], v["k"], v["v"], v["scale"])}, Tolerance(1e-4, 1e-5))
    return [
        CorpusFile("nvcc_vector_ops_sm80.ptx", "nvcc", "cuda/vector_ops.cu", "sm_80", (saxpy, axpby4, mix)),
        CorpusFile("nvcc_reduction_sm80.ptx", "nvcc", "cuda/reduction.cu", "sm_80", (row_sum, sum_u32)),
        CorpusFile("nvcc_softmax_sm80.ptx", "nvcc", "cuda/softmax.cu", "sm_80", (_softmax_launch(),)),
        CorpusFile("nvcc_softmax_fastmath_sm80.ptx", "nvcc", "cuda/softmax.cu", "sm_80",
                   (_softmax_launch(tol=SOFTMAX_FAST_TOL),), {"flags": ["--use_fast_math"]}),
        CorpusFile("nvcc_softmax_G_sm80.ptx", "nvcc", "cuda/softmax.cu", "sm_80", (_softmax_launch(),),
                   {"flags": ["-G"]}),
        CorpusFile("nvcc_layernorm_sm90.ptx", "nvcc", "cuda/layernorm.cu", "sm_90", (_layernorm_launch(),)),
        CorpusFile("nvcc_layernorm_lineinfo_sm80.ptx", "nvcc", "cuda/layernorm.cu", "sm_80", (_layernorm_launch(),),
                   {"flags": ["-lineinfo"]}),
        CorpusFile("nvcc_gemm_cute_sm80.ptx", "nvcc", "cuda/gemm_cute.cu", "sm_80", (gemm,), {"cute": True}),
        CorpusFile("nvcc_attention_sm90.ptx", "nvcc", "cuda/attention.cu", "sm_90", (attention,)),
    ]


def _dsl():
    add = Launch("elementwise_add_kernel", (16, 1, 1), (128, 1, 1),
                 (In("a", "f32", (64, 512)), In("b", "f32", (64, 512)), Out("c", "f32", (64, 512))),
                 lambda v: {"c": v["a"] + v["b"]}, F32_ROUNDED)
    softmax = Launch("softmax_kernel", (16, 1, 1), (128, 1, 1), (In("x", "f32", (64, 256)), Out("y", "f32", (64, 256))),
                     lambda v: {"y": ref.softmax(v["x"])}, SOFTMAX_TOL)
    return [
        CorpusFile("dsl_elementwise_add_sm80.ptx", "cute-dsl", "dsl/elementwise_add.py", "sm_80", (add,)),
        CorpusFile("dsl_softmax_sm80.ptx", "cute-dsl", "dsl/softmax.py", "sm_80", (softmax,)),
        CorpusFile("dsl_softmax_sm90.ptx", "cute-dsl", "dsl/softmax.py", "sm_90", (softmax,)),
    ]


SCRATCH = (Scalar("global_scratch", 0), Scalar("profile_scratch", 0))    # null: the kernels need no scratch


def _triton_build(kernel, signature, constexprs, **options):
    return {"kernel": kernel, "signature": signature, "constexprs": constexprs, "options": options}


def _triton():
    ptr = lambda t: f"*{t}"                                             # noqa: E731 -- Triton's pointer types
    add_build = _triton_build("add_kernel", {"x_ptr": ptr("fp32"), "y_ptr": ptr("fp32"), "output_ptr": ptr("fp32"),
                                             "n_elements": "i32", "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 256})
    add = Launch("add_kernel", (4, 1, 1), (128, 1, 1),
                 (In("x", "f32", (1000,)), In("y", "f32", (1000,)), Out("output", "f32", (1000,)),
                  Scalar("n_elements", 1000), *SCRATCH),
                 lambda v: {"output": v["x"] + v["y"]}, F32_ROUNDED)
    softmax_build = _triton_build("softmax_kernel", {
        "output_ptr": ptr("fp32"), "input_ptr": ptr("fp32"), "input_row_stride": "i32", "output_row_stride": "i32",
        "n_rows": "i32", "n_cols": "i32", "BLOCK_SIZE": "constexpr", "num_stages": "constexpr"},
        {"BLOCK_SIZE": 128, "num_stages": 2})
    softmax = Launch("softmax_kernel", (4, 1, 1), (128, 1, 1),          # 4 programs, 4 rows each
                     (Out("output", "f32", (ROWS, COLS)), In("input", "f32", (ROWS, COLS)), Scalar("in_stride", COLS),
                      Scalar("out_stride", COLS), Scalar("n_rows", ROWS), Scalar("n_cols", COLS), *SCRATCH),
                     lambda v: {"output": ref.softmax(v["input"])}, SOFTMAX_FAST_TOL, smem=528)
    ln_build = _triton_build("_layer_norm_fwd_fused", {
        "X": ptr("fp32"), "Y": ptr("fp32"), "W": ptr("fp32"), "B": ptr("fp32"), "Mean": ptr("fp32"),
        "Rstd": ptr("fp32"), "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"},
        {"BLOCK_SIZE": 128})
    layer_norm = Launch("_layer_norm_fwd_fused", (LN_ROWS, 1, 1), (128, 1, 1),
                        (In("x", "f32", (LN_ROWS, LN_COLS)), Out("Y", "f32", (LN_ROWS, LN_COLS)),
                         In("gamma", "f32", (LN_COLS,)), In("beta", "f32", (LN_COLS,)), Out("Mean", "f32", (LN_ROWS,)),
                         Out("Rstd", "f32", (LN_ROWS,)), Scalar("stride", LN_COLS), Scalar("N", LN_COLS),
                         Scalar("eps", 1e-5), *SCRATCH),
                        lambda v: ref.layernorm_outputs(v, "Y", "Mean", "Rstd"), LN_TOL, smem=16)
    M, N, K = 80, 64, 40                                                # tails in M and K
    mm_build = _triton_build("matmul_kernel", {
        "a_ptr": ptr("fp16"), "b_ptr": ptr("fp16"), "c_ptr": ptr("fp16"), "M": "i32", "N": "i32", "K": "i32",
        **{f"stride_{s}": "i32" for s in ("am", "ak", "bk", "bn", "cm", "cn")},
        **{c: "constexpr" for c in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}},
        {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=3)
    matmul = Launch("matmul_kernel", (2, 1, 1), (128, 1, 1),
                    (In("a", "f16", (M, K)), In("b", "f16", (K, N)), Out("c", "f16", (M, N)), Scalar("M", M),
                     Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1),
                     Scalar("stride_bk", N), Scalar("stride_bn", 1), Scalar("stride_cm", N), Scalar("stride_cn", 1),
                     *SCRATCH),
                    lambda v: {"c": v["a"] @ v["b"]}, Tolerance(1e-3, 1e-3), smem=8192)
    K8 = 80                                                             # fp8: the tutorial's pre-transposed B
    mm8_build = _triton_build("matmul_kernel", {**mm_build["signature"], "a_ptr": ptr("fp8e5"), "b_ptr": ptr("fp8e5")},
                              {**mm_build["constexprs"], "BLOCK_SIZE_K": 64}, num_stages=3)
    matmul8 = Launch("matmul_kernel", (2, 1, 1), (128, 1, 1),
                     (In("a", "e5m2", (M, K8)), In("b", "e5m2", (N, K8)), Out("c", "f16", (M, N)), Scalar("M", M),
                      Scalar("N", N), Scalar("K", K8), Scalar("stride_am", K8), Scalar("stride_ak", 1),
                      Scalar("stride_bk", 1), Scalar("stride_bn", K8), Scalar("stride_cm", N), Scalar("stride_cn", 1),
                      *SCRATCH),
                     lambda v: {"c": v["a"] @ v["b"].T}, FP8_DOT_TOL, smem=8192)
    Z, H, n, d = 1, 2, 80, 64
    strides = [H * n * d, n * d, d, 1]
    attn_build = _triton_build("_attn_fwd", {
        "Q": ptr("fp16"), "K": ptr("fp16"), "V": ptr("fp16"), "sm_scale": "fp32", "Out": ptr("fp16"),
        **{f"stride_{t}{a}": "i32" for t, axes in (("q", "zhmk"), ("k", "zhnk"), ("v", "zhnk"), ("o", "zhmn"))
           for a in axes},
        "H": "i32", "N_CTX": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "HEAD_DIM": "constexpr"},
        {"BLOCK_M": 64, "BLOCK_N": 32, "HEAD_DIM": d})
    attention = Launch("_attn_fwd", (2, Z * H, 1), (128, 1, 1),
                       (In("q", "f16", (Z, H, n, d)), In("k", "f16", (Z, H, n, d)), In("v", "f16", (Z, H, n, d)),
                        Scalar("sm_scale", 0.125), Out("o", "f16", (Z, H, n, d)),
                        *[Scalar(f"stride_{t}{i}", s) for t in "qkvo" for i, s in enumerate(strides)],
                        Scalar("H", H), Scalar("N_CTX", n), *SCRATCH),
                       lambda v: {"o": ref.attention(v["q"], v["k"], v["v"], v["sm_scale"])}, Tolerance(1e-2, 2e-3),
                       smem=12288)
    out = []
    for stem, source, build, launch, archs in (("vector_add", "vector_add.py", add_build, add, (80, 90)),
                                               ("softmax", "softmax.py", softmax_build, softmax, (80, 90)),
                                               ("layer_norm", "layer_norm.py", ln_build, layer_norm, (80,)),
                                               ("matmul", "matmul.py", mm_build, matmul, (80, 90)),
                                               ("matmul_fp8", "matmul.py", mm8_build, matmul8, (90,)),
                                               ("attention", "attention.py", attn_build, attention, (80, 90))):
        out += [CorpusFile(f"triton_{stem}_sm{a}.ptx", "triton", f"triton/{source}", f"sm_{a}", (launch,), build)
                for a in archs]
    return out


def _numba():
    n = 1000
    saxpy = Launch("saxpy", (8, 1, 1), (128, 1, 1),
                   (Scalar("a", 0.75), NumbaArray(In("x", "f32", (n,))), NumbaArray(In("y", "f32", (n,))),
                    NumbaArray(Out("out", "f32", (n,)))),
                   lambda v: {"out": v["a"] * v["x"] + v["y"]}, Tolerance(1e-6, 1e-6))
    clamp = Launch("clamp_scale", (2, 1, 1), (128, 1, 1),                # a grid-stride loop: 4 rounds
                   (NumbaArray(In("x", "f64", (n,))), NumbaArray(Out("out", "f64", (n,))), Scalar("lo", -1.0),
                    Scalar("hi", 1.5)),
                   lambda v: {"out": np.minimum(np.maximum(v["x"], v["lo"]), v["hi"]) * 0.5}, None)
    xorshift = Launch("xorshift", (8, 1, 1), (128, 1, 1),
                      (NumbaArray(In("x", "u32", (n,))), NumbaArray(Out("out", "u32", (n,)))), ref.xorshift_reference, None)
    block_sum = Launch("block_sum", (4, 1, 1), (256, 1, 1),
                       (NumbaArray(In("x", "f32", (n,))), NumbaArray(Out("partial", "f32", (4,)))),
                       lambda v: {"partial": np.add.reduceat(v["x"], [0, 256, 512, 768])}, Tolerance(1e-5, 1e-5))
    softmax = Launch("softmax_rows", (1, 1, 1), (64, 1, 1),                 # one thread per row: 40 of 64
                     (NumbaArray(In("x", "f32", (40, 50))), NumbaArray(Out("y", "f32", (40, 50)))),
                     lambda v: {"y": ref.softmax(v["x"])}, SOFTMAX_TOL)
    sig = {"saxpy": "void(float32, float32[::1], float32[::1], float32[::1])",
           "clamp_scale": "void(float64[::1], float64[::1], float64, float64)",
           "xorshift": "void(uint32[::1], uint32[::1])",
           "block_sum": "void(float32[::1], float32[::1])",
           "softmax_rows": "void(float32[:, ::1], float32[:, ::1])"}
    return [CorpusFile(f"numba_{launch.kernel}_sm80.ptx", "numba-cuda", f"numba/{source}", "sm_80", (launch,),
                       {"kernel": launch.kernel, "signature": sig[launch.kernel]})
            for source, launch in (("vector_ops.py", saxpy), ("vector_ops.py", clamp), ("vector_ops.py", xorshift),
                                   ("reduction.py", block_sum), ("softmax.py", softmax))]


CORPUS = tuple(_nvcc() + _dsl() + _triton() + _numba())


# ------------------------------------------------------------------------------------------------ what warpsim fails

@dataclass(frozen=True)
class Known:
    """A corpus file that warpsim does not run yet: the ``error`` it raises (a class name of
    :mod:`warpsim.errors`) and why, naming the construct and its line."""

    error: str
    reason: str


KNOWN_FAILURES = {}        # every corpus file runs (Triton's sm_90 tl.dot, wgmma, since the Hopper issue)


def known_failure(entry):
    """The :class:`Known` failure of a corpus file, or None."""
    return KNOWN_FAILURES.get(entry.ptx)
