"""One front door for a user's kernel: compile a ``.cu`` / ``.ptx`` / CuTe DSL file, find the kernel, name its
arguments as the source does, and launch it on the simulated CTA.

``open_kernel(source, kernel, arch="sm_90")`` compiles the source for the arch (``sm_80`` or ``sm_90``;
the same arch picks the tensor-core arithmetic model), loads the PTX with ``warpsim.ptx.load`` and
returns a :class:`Kernel`. Its ``launch(grid, block, args, smem=0, cta=None)`` runs the grid's CTAs
one after another over one global memory and returns the core's result (``.buffers``: param name ->
numpy array after the run, ``.printf``, ``.stats``).

Finding the kernel: ``kernel`` is the PTX entry name, or the name the source gives it: a C++ name
whose entry is mangled (``_Z4saxpyPfS_i`` for ``saxpy``), or a CuTe DSL ``@cute.kernel`` name
(``kernel_cutlass_copy_kernel_..._0`` for ``copy_kernel``). A name that matches none or several
entries is an error listing the entries.

Naming arguments: a key of ``args`` is the PTX param name, its position (``0``, ``"0"``), or the
source's name for it (the C++ parameter names of a ``__global__`` function, read from the ``.cu`` and
the local headers it includes; the parameter names of a DSL ``@cute.kernel`` when they are as many as
the entry's params). Values: a numpy array for a pointer; an int or float for a scalar; for a CuTe DSL
tensor param (a byte struct ``.param .align 8 .b8 X[N]``) a list of ``(ptx_type, value)`` fields, or
just the array when the struct is the pointer alone (``N == 8``: the tensor's shape and strides are
static).

Example (needs nvcc)::

    k = open_kernel("examples/cute_cpp/gemm_smem.cu", "gemm_smem_f16_qk_swizzle", arch="sm_80")
    res = k.launch(grid=1, block=128, args={"q": q, "k": kk, "s": np.zeros((64, 64), np.float32)})
    res.buffers[k.param_name("s")]     # the 64x64 f32 accumulator
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from warpsim.ptx.compile import compile_source, cuda_source_text, normalize_arch

__all__ = ["Kernel", "KernelParam", "open_kernel", "entry_params", "source_param_names", "find_entry",
           "parse_dim3"]

ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)", re.DOTALL)
PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+"
                   r"(?:\.(?:ptr|global|shared|const|local)\s+|\.align\s+\d+\s+)*"      # pointer attributes
                   r"([\w$.]+)(?:\s*\[(\d+)\])?")
CUDA_KERNEL = re.compile(r"__global__\s+(?:[\w:<>,\s()]*?\s)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                         r"(\w+)\s*\(([^)]*)\)", re.DOTALL)
DSL_KERNEL = re.compile(r"@cute\.kernel[^\n]*\n\s*def\s+(\w+)\s*\((.*?)\)\s*(?:->[^:]*)?:", re.DOTALL)


@dataclass(frozen=True)
class KernelParam:
    """One ``.param`` of an entry: its PTX name and type, ``size`` bytes for a byte array (else None)."""

    name: str
    ptx_type: str
    size: int | None = None
    source_name: str | None = None


def entry_params(ptx):
    """``{entry name: [KernelParam, ...]}`` of every ``.entry`` in a PTX text, params in order.

    entry_params(".entry f(.param .u64 f_param_0, .param .u32 f_param_1)")["f"][1].ptx_type == "u32"
    entry_params(".entry f(.param .u64 .ptr .global .align 16 f_param_0)")["f"][0].name == "f_param_0"
    """
    entries = {}
    for match in ENTRY.finditer(ptx):
        params = [KernelParam(p.group(3), p.group(2), int(p.group(4)) if p.group(4) else None)
                  for p in PARAM.finditer(match.group(2))]
        entries[match.group(1)] = params
    return entries


def _split_params(text):
    """Top-level comma split (templates and parentheses kept whole)."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def _last_identifier(decl, python=False):
    decl = decl.split("=")[0]                               # a default value
    if python:
        decl = decl.split(":")[0]                           # a Python annotation
        names = re.findall(r"[A-Za-z_]\w*", decl)
        return names[0] if names else None
    names = re.findall(r"[A-Za-z_]\w*", decl)
    return names[-1] if names else None


def _is_constexpr(decl):
    """Whether a CuTe DSL parameter is annotated ``Constexpr`` (compile-time: it is no ``.param`` of the PTX)."""
    return ":" in decl and "Constexpr" in decl.split("=")[0].split(":", 1)[1]


def source_param_names(source_text, kind):
    """``{kernel name in the source: [parameter names]}`` of the ``__global__`` functions (``kind="cuda"``)
    or the ``@cute.kernel`` functions (``kind="dsl"``).

    source_param_names("__global__ void f(float* x, int n) {}", "cuda") == {"f": ["x", "n"]}
    """
    if kind == "cuda":
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", source_text, flags=re.DOTALL)
        found = CUDA_KERNEL.findall(text)
        return {name: [_last_identifier(p) for p in _split_params(params) if p.strip() not in ("", "void")]
                for name, params in found}
    if kind == "dsl":
        found = DSL_KERNEL.findall(source_text)
        return {name: [_last_identifier(p, True) for p in _split_params(params)
                       if _last_identifier(p, True) != "self" and not _is_constexpr(p)]
                for name, params in found}
    return {}


def find_entry(entries, name):
    """The entry of ``entries`` that ``name`` names (exact, C++ mangled, or CuTe DSL), else ``ValueError``
    listing them.

    find_entry(["_Z5saxpyPfi", "g"], "saxpy") == "_Z5saxpyPfi"
    """
    entries = list(entries)
    if name in entries:
        return name
    mangled = f"_Z{len(name)}{name}"
    for rule in (lambda e: e.startswith(mangled) and not e[len(mangled):len(mangled) + 1].isdigit(),
                 lambda e: e.startswith(f"kernel_cutlass_{name}_"),
                 lambda e: re.fullmatch(rf"{re.escape(name)}_\d+", e) is not None,   # DSL set_name_prefix(name)
                 lambda e: name in e):
        hits = [e for e in entries if rule(e)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ValueError(f"--kernel {name}: names {len(hits)} kernels: {', '.join(hits)}")
    listed = ", ".join(entries) if entries else "none"
    raise ValueError(f"--kernel {name}: no such kernel; the module has: {listed}")


def _source_name_of(entry):
    """The name the source gives a PTX entry: C++ unmangled base name, CuTe DSL kernel name, or itself."""
    mangled = re.match(r"_Z(\d+)(\w+)", entry)
    if mangled:
        return mangled.group(2)[:int(mangled.group(1))]
    return entry


def parse_dim3(value, what="--grid"):
    """``(x, y, z)`` of ``4``, ``"4"``, ``"4,2"``, ``(4, 2, 1)``; ``ValueError`` naming ``what``.

    parse_dim3("4,2") == (4, 2, 1)
    """
    if isinstance(value, int):
        parts = [value]
    elif isinstance(value, str):
        try:
            parts = [int(v) for v in value.replace("x", ",").split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"{what} {value}: expected up to three integers, e.g. 4,2,1") from None
    else:
        parts = [int(v) for v in value]
    if not 1 <= len(parts) <= 3 or any(p < 1 for p in parts):
        raise ValueError(f"{what} {value}: expected one to three positive integers, e.g. 4,2,1")
    return tuple(parts) + (1,) * (3 - len(parts))


@dataclass
class Kernel:
    """A loaded kernel: ``module`` (the core's PTX module), ``name`` (its entry), ``params``, ``arch``."""

    module: object
    name: str
    params: list
    arch: str
    source: Path | None = None
    _by_name: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for i, p in enumerate(self.params):
            for key in (p.name, str(i), p.source_name):
                if key is not None:
                    self._by_name.setdefault(key, p)

    def param_name(self, key):
        """The PTX name of the param that ``key`` names (PTX name, position, or source name)."""
        param = self._by_name.get(str(key))
        if param is None:
            names = ", ".join(p.source_name or p.name for p in self.params) or "none"
            raise ValueError(f"{self.name}: no parameter {key!r}; it takes: {names}")
        return param.name

    def param(self, key):
        return self._by_name[self.param_name(key)]

    def core_args(self, args):
        """``args`` keyed by PTX param name, a DSL tensor's byte struct given as an array made ``[("u64", a)]``;
        ``ValueError`` for an unknown or missing param."""
        out = {}
        for key, value in args.items():
            param = self.param(key)
            if param.size is not None and isinstance(value, np.ndarray):
                if param.size != 8:
                    raise ValueError(f"{self.name}: parameter {key!r} is a {param.size}-byte struct (a CuTe DSL "
                                     "tensor with run-time shape or strides): give its fields as "
                                     "[('u64', array), ('s32', ...), ...]")
                value = [("u64", value)]
            out[param.name] = value
        missing = [p.source_name or p.name for p in self.params if p.name not in out]
        if missing:
            raise ValueError(f"{self.name}: missing argument(s) {', '.join(missing)} "
                             f"(of {len(self.params)}: {', '.join(p.source_name or p.name for p in self.params)})")
        return out

    def launch(self, grid=1, block=128, args=None, smem=0, cta=None, profile=False):
        """Run the kernel; returns the core's result with ``.buffers`` keyed by PTX param name (``profile``:
        see :meth:`warpsim.ptx.launch.PtxModule.launch`)."""
        return self.module.launch(self.name, grid=parse_dim3(grid, "--grid"), block=parse_dim3(block, "--block"),
                                  args=self.core_args(args or {}), smem=smem, arch=self.arch.replace("_", ""),
                                  cta=cta, profile=profile)

    def buffers(self, result):
        """``result.buffers`` keyed by the name the user would give (source name where known)."""
        by_ptx = {p.name: (p.source_name or p.name) for p in self.params}
        return {by_ptx.get(name, name): value for name, value in result.buffers.items()}


def open_kernel(source, kernel, arch="sm_90", nvcc_flags=(), module=None, compiled=None, ptxas="auto", cubin=None):
    """Compile ``source`` for ``arch``, load it with ``warpsim.ptx.load``, and return the :class:`Kernel`
    ``kernel`` names. For a CuTe DSL file with several ``WARPSIM`` entries the kernel is looked up in each.
    ``compiled``: the source's :class:`~warpsim.ptx.compile.Compiled` PTX made earlier (no compile here).
    ``ptxas``, ``cubin``: who decides FMA contraction (``warpsim.ptx.load``; ``"none"``: no contraction)."""
    arch = normalize_arch(arch)
    compiled = compile_source(source, arch, nvcc_flags) if compiled is None else compiled
    text = (cuda_source_text(source) if compiled.kind == "cuda"
            else Path(source).read_text(encoding="utf-8", errors="replace"))
    names = source_param_names(text, compiled.kind)
    texts = compiled.modules if module is None else (compiled.modules[module],)
    candidates = {e: (text, params) for text in texts for e, params in entry_params(text).items()}
    entry = find_entry(candidates, kernel)
    text, params = candidates[entry]
    source_names = names.get(_dsl_or_cuda_name(entry, names), [])
    if len(source_names) == len(params):
        params = [KernelParam(p.name, p.ptx_type, p.size, s) for p, s in zip(params, source_names)]
    ptx_name = compiled.source.name if compiled.kind == "ptx" else f"{compiled.source.stem}.{arch}.ptx"
    cubin = None if cubin is None else str(cubin)
    return Kernel(_load(text, ptx_name, arch, str(ptxas), cubin), entry, params, arch, compiled.source)


@lru_cache(maxsize=16)
def _load(text, filename, arch="sm_90", ptxas="auto", cubin=None):
    """``warpsim.ptx.load`` once per PTX text (and contraction choice): the kernels of one module share it."""
    from warpsim import ptx as core        # the interpreter: loads Numba, so only when a kernel is opened
    return core.load(text, filename=filename, arch=arch, ptxas=ptxas, cubin=cubin)


def _dsl_or_cuda_name(entry, names):
    base = _source_name_of(entry)
    if base in names:
        return base
    for name in names:
        if entry.startswith(f"kernel_cutlass_{name}_"):
            return name
    prefixed = [name for name in names if entry.startswith(f"{name}_")]      # a DSL kernel renamed by a prefix
    return max(prefixed, key=len) if prefixed else base
