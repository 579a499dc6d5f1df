"""One front door for a user's kernel: compile a ``.cu`` / ``.ptx`` / CuTe DSL file, find the kernel, name its
arguments as the source does, and launch it on the simulated CTA.

``open_kernel(source, kernel, arch="sm_90")`` compiles the source for the arch (``sm_80`` or ``sm_90``;
the same arch picks the tensor-core arithmetic model), loads the PTX with ``warpsim.ptx.load`` and
returns a :class:`Kernel`. Its ``launch(grid, block, args, smem=0, cta=None)`` runs the grid's CTAs
one after another over one global memory and returns the core's result (``.buffers``: param name ->
numpy array after the run, ``.printf``, ``.stats``).

Finding the kernel: ``kernel`` is the PTX entry name, or the name the source gives it, exactly: a C++ name
whose entry is mangled (``_Z4saxpyPfS_i`` for ``saxpy``; nested ``_ZN2ns5saxpy...`` for ``saxpy`` or
``ns::saxpy``), or a CuTe DSL ``@cute.kernel`` name (``kernel_cutlass_copy_kernel_..._0`` for
``copy_kernel``). A name that matches none, several, or only part of entry names is an error listing them.

Naming arguments: a key of ``args`` is the PTX param name, its position (``0``, ``"0"``), or the
source's name for it (the C++ parameter names of a ``__global__`` function, read from the ``.cu`` and
the local headers it includes; the parameter names of a DSL ``@cute.kernel`` when they are as many as
the entry's params). Values: a numpy array for a pointer; an int or float for a scalar; for a CuTe DSL
tensor param (a byte struct ``.param .align 8 .b8 X[N]``) a list of ``(ptx_type, value)`` fields, or
just the array when the struct is the pointer alone (``N == 8``: the tensor's shape and strides are
static). Each value is checked against its parameter (:func:`fit_argument`): a buffer holds numbers (a
big-endian array is converted), a scalar given as an array is one element of the param's PTX type, a pointer
is not given a number other than 0, and no parameter is given twice. A message of the core that names a
parameter by its PTX name (``buffer _Z4fillPfi_param_0``) names it as the source does too.

Example (needs nvcc)::

    k = open_kernel("examples/cute_cpp/gemm_smem.cu", "gemm_smem_f16_qk_swizzle", arch="sm_80")
    res = k.launch(grid=1, block=128, args={"q": q, "k": kk, "s": np.zeros((64, 64), np.float32)})
    res.buffers[k.param_name("s")]     # the 64x64 f32 accumulator
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from warpsim.errors import WarpsimError
from warpsim.frontends.compiled import normalize_arch
from warpsim.frontends.nvcc import cuda_source_text
from warpsim.frontends.source import compile_source
from warpsim.ptx.launch import DEFAULT_MAX_STEPS

__all__ = ["Kernel", "KernelParam", "open_kernel", "entry_params", "source_param_names", "find_entry",
           "entry_names", "itanium_name", "fit_argument", "parse_dim3", "NUMERIC_KINDS"]

NUMERIC_KINDS = "biufc"          # numpy dtype kinds that hold numbers: bool, integers, floats, complex

ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)", re.DOTALL)
PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+"
                   r"(?:\.(?:ptr|global|shared|const|local)\s+|\.align\s+\d+\s+)*"      # pointer attributes
                   r"([\w$.]+)(?:\s*\[(\d+)\])?")
CUDA_KERNEL = re.compile(r"__global__\s+(?:[\w:<>,\s()]*?\s)?void\s+(?:(?:__launch_bounds__|__cluster_dims__)\s*\([^)]*\)\s*)*"
                         r"(\w+)\s*\(([^)]*)\)", re.DOTALL)
DSL_KERNEL = re.compile(r"@cute\.kernel[^\n]*\n\s*def\s+(\w+)\s*\((.*?)\)\s*(?:->[^:]*)?:", re.DOTALL)


@dataclass(frozen=True)
class KernelParam:
    """One ``.param`` of an entry: its PTX name and type, ``size`` bytes for a byte array (else None), the
    source's name for it, and ``pointer``: True where the source declares a pointer or the PTX uses the value
    as an address, False where the source declares something else, None where nothing says."""

    name: str
    ptx_type: str
    size: int | None = None
    source_name: str | None = None
    pointer: bool | None = None

    def describe(self):
        """``out (.u64, a pointer)``: how messages name it."""
        kind = f".b8[{self.size}]" if self.size is not None else f".{self.ptx_type}"
        return f"{self.source_name or self.name} ({kind}{', a pointer' if self.pointer else ''})"


def entry_params(ptx):
    """``{entry name: [KernelParam, ...]}`` of every ``.entry`` in a PTX text, params in order.

    entry_params(".entry f(.param .u64 f_param_0, .param .u32 f_param_1)")["f"][1].ptx_type == "u32"
    entry_params(".entry f(.param .u64 .ptr .global .align 16 f_param_0)")["f"][0].name == "f_param_0"
    """
    entries = {}
    matches = list(ENTRY.finditer(ptx))
    for k, match in enumerate(matches):
        body = ptx[match.end():matches[k + 1].start() if k + 1 < len(matches) else len(ptx)]
        params = [KernelParam(p.group(3), p.group(2), int(p.group(4)) if p.group(4) else None,
                              pointer=True if (".ptr" in p.group(0) or _used_as_address(body, p.group(3))) else None)
                  for p in PARAM.finditer(match.group(2))]
        entries[match.group(1)] = params
    return entries


def _used_as_address(body, name):
    """Whether the entry ``body`` loads the 64-bit param ``name`` into a register and uses that register as an
    address: ``cvta.to.*`` of it, or ``[%rd]`` / ``[%rd+8]`` (what nvcc, hand-written PTX and the DSLs do)."""
    loaded = re.findall(rf"ld\.param\.[bus]64\s+(%\w+),\s*\[{re.escape(name)}(?:\+0)?\]", body)
    return any(re.search(rf"cvta\.to\.\w+\.u64\s+%\w+,\s*{re.escape(r)}\b|\[{re.escape(r)}(?:\s*\+\s*-?\d+)?\]", body)
               for r in loaded)


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


def _declares_pointer(decl):
    """Whether a C++ parameter declaration is a pointer: a ``*`` or ``[]`` outside template arguments."""
    decl = decl.split("=")[0]
    while True:
        plain = re.sub(r"<[^<>]*>", "", decl)
        if plain == decl:
            return "*" in plain or "[" in plain
        decl = plain


def _is_constexpr(decl):
    """Whether a CuTe DSL parameter is annotated ``Constexpr`` (compile-time: it is no ``.param`` of the PTX)."""
    return ":" in decl and "Constexpr" in decl.split("=")[0].split(":", 1)[1]


def source_param_names(source_text, kind):
    """``{kernel name in the source: [parameter names]}`` of the ``__global__`` functions (``kind="cuda"``)
    or the ``@cute.kernel`` functions (``kind="dsl"``).

    source_param_names("__global__ void f(float* x, int n) {}", "cuda") == {"f": ["x", "n"]}
    """
    return {name: [n for n, _pointer in params] for name, params in _source_params(source_text, kind).items()}


def _source_params(source_text, kind):
    """``{kernel name: [(parameter name, pointer)]}``: ``pointer`` is True or False for C++ (a ``*`` outside
    template arguments), None for the DSL (its tensors are byte structs)."""
    if kind == "cuda":
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", source_text, flags=re.DOTALL)
        found = CUDA_KERNEL.findall(text)
        return {name: [(_last_identifier(p), _declares_pointer(p))
                       for p in _split_params(params) if p.strip() not in ("", "void")]
                for name, params in found}
    if kind == "dsl":
        found = DSL_KERNEL.findall(source_text)
        return {name: [(_last_identifier(p, True), None) for p in _split_params(params)
                       if _last_identifier(p, True) != "self" and not _is_constexpr(p)]
                for name, params in found}
    return {}


def itanium_name(entry):
    """The qualified name ``[namespace..., name]`` of an Itanium-mangled entry (``_Z5saxpyPfi``, Numba's
    ``_ZN10vector_ops5saxpyB2v1...E...``), else None.

    itanium_name("_ZN10vector_ops5saxpyB2v1B3abcE5Array") == ["vector_ops", "saxpy"]
    itanium_name("_Z4tmplIfEvPT_") == ["tmpl"]
    """
    nested = entry.startswith("_ZN")
    match = re.match(r"_ZN?", entry)
    if match is None:
        return None
    names, pos = [], match.end()
    while True:
        size = re.match(r"\d+", entry[pos:])
        if size is None or int(size.group()) == 0:
            break
        start = pos + len(size.group())
        names.append(entry[start:start + int(size.group())])
        pos = start + int(size.group())
        while entry.startswith("B", pos):                    # ABI tags: B<length><tag>
            tag = re.match(r"B(\d+)", entry[pos:])
            if tag is None:
                break
            pos += len(tag.group()) + int(tag.group(1))
        if not nested:
            break
    return names or None


def _dsl_name_of(entry, source_names):
    """The ``@cute.kernel`` name of a CuTe DSL entry ``kernel_cutlass_<name>_<argument types>_<n>``: the longest of
    ``source_names`` it starts with; without them (a bare PTX file), the ``<name>`` up to where the entry goes on
    with what the DSL mangles arguments into (``_tensorptr``, ``_ptr``, a capitalised type, the count)."""
    if not entry.startswith("kernel_cutlass_"):
        return []
    rest = entry[len("kernel_cutlass_"):]
    if source_names:
        known = [n for n in source_names if rest.startswith(f"{n}_")]
        return [max(known, key=len)] if known else []
    first = re.search(r"(?<=.)_(?=tensor|ptr|[A-Z]|\d+$)", rest)
    return [rest[:first.start()]] if first else []


def entry_names(entry, source_names=()):
    """The names that call ``entry`` exactly: itself, its C++ (or Numba) name, ``ns::name`` qualified, its CuTe
    DSL ``@cute.kernel`` name, or ``name`` of a DSL ``set_name_prefix`` entry ``name_<n>``.

    sorted(entry_names("_ZN2ns5saxpyEv")) == ["_ZN2ns5saxpyEv", "ns::saxpy", "saxpy"]
    """
    names = {entry}
    qualified = itanium_name(entry)
    if qualified:
        names |= {qualified[-1], "::".join(qualified)}
    names |= set(_dsl_name_of(entry, source_names))
    prefixed = re.fullmatch(r"(\w+?)_\d+", entry)               # DSL set_name_prefix(name)
    if prefixed and not entry.startswith("kernel_cutlass_"):
        names.add(prefixed.group(1))
    return names


def find_entry(entries, name, source_names=()):
    """The entry of ``entries`` that ``name`` names exactly (:func:`entry_names`; ``source_names``: the kernel
    names the source defines, which tell a CuTe DSL kernel's name from its mangled arguments), else
    ``ValueError``: for a name that calls several entries, or that is only part of entry names (``reduce`` of
    ``reduce_transpose``), the line lists them; for none, the module's entries.

    find_entry(["_Z5saxpyPfi", "g"], "saxpy") == "_Z5saxpyPfi"
    """
    entries = list(entries)
    if name in entries:
        return name
    hits = [e for e in entries if name in entry_names(e, source_names)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise ValueError(f"--kernel {name}: names {len(hits)} kernels: {', '.join(hits)}; give the PTX entry name")
    partial = [e for e in entries if any(name in n for n in entry_names(e, source_names))]
    if partial:
        raise ValueError(f"--kernel {name}: no kernel of that exact name; it is part of: {', '.join(partial)} "
                         f"(give the whole name)")
    listed = ", ".join(entries) if entries else "none"
    raise ValueError(f"--kernel {name}: no such kernel; the module has: {listed}")


def _source_name_of(entry):
    """The name the source gives a PTX entry: C++ unmangled base name, CuTe DSL kernel name, or itself."""
    qualified = itanium_name(entry)
    return qualified[-1] if qualified else entry


def fit_argument(param, value, what):
    """``value`` made what the launch takes for ``param`` (a :class:`KernelParam`); ``ValueError`` starting
    with ``what`` (how the message names the argument) for a value of the wrong kind:

    - a buffer (an array for a pointer, or a 64-bit param nothing says is a scalar) must hold numbers; one of
      non-native byte order (a big-endian ``.npy``) is converted, so the kernel reads its values;
    - an array for a scalar param must have one element whose dtype is the param's PTX type (``.f32``:
      float32; ``.u32``/``.s32``: a 4-byte integer, its bits; ``.b32``: any 4-byte number, its bits), in
      either byte order; the number is passed;
    - a number for a pointer param is refused, but 0 (the null pointer).

    fit_argument(KernelParam("n", "u32"), np.array([7], ">u4"), "n") == 7
    """
    if param.size is not None or isinstance(value, (list, tuple)):
        return value                                        # a byte struct's fields: the launch checks them
    scalar = param.pointer is False or (param.pointer is None and _ptx_bytes(param.ptx_type) != 8)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in NUMERIC_KINDS:
            raise ValueError(f"{what}: holds {value.dtype.str} ({_non_numeric(value.dtype)}), not numbers; "
                             f"give a numeric array")
        if scalar:
            return _scalar_of(param, value, what)
        return value if value.dtype.isnative else value.astype(value.dtype.newbyteorder("="))
    if param.pointer and not isinstance(value, bool) and isinstance(value, (int, float, np.number)) and value != 0:
        raise ValueError(f"{what}: parameter {param.describe()} takes a buffer (FILE.npy or zeros:DTYPE:SHAPE), "
                         f"not the number {value} (0 is the null pointer)")
    return value


def _ptx_bytes(ptx_type):
    bits = re.search(r"\d+", ptx_type)
    return int(bits.group()) // 8 if bits else 0


def _non_numeric(dtype):
    return {"U": "strings", "S": "byte strings", "O": "Python objects", "V": "records", "M": "dates",
            "m": "time spans"}.get(dtype.kind, dtype.name)


def _scalar_of(param, array, what):
    """The number a one-element array gives the scalar ``param`` (see :func:`fit_argument`)."""
    ptype, width, dtype = param.ptx_type, _ptx_bytes(param.ptx_type), array.dtype
    if array.size != 1:
        raise ValueError(f"{what}: parameter {param.describe()} is a scalar: give a number or a one-element "
                         f"array, not shape {array.shape}")
    kinds = {"f": "f", "u": "iu", "s": "iu"}.get(ptype[0], NUMERIC_KINDS)
    if dtype.kind not in kinds or dtype.itemsize != width:
        want = {"f": f"a float{8 * width}", "u": f"a {width}-byte integer", "s": f"a {width}-byte integer"}.get(
            ptype[0], f"a {width}-byte number (its bits)")
        raise ValueError(f"{what}: parameter {param.describe()} takes {want}; the array holds "
                         f"{dtype.name} ({dtype.str})")
    native = array.reshape(1).astype(dtype.newbyteorder("="))
    if ptype[0] == "f":
        return float(native[0])
    return int(native.view(f"i{width}" if ptype[0] == "s" else f"u{width}")[0])


def _named(key, what):
    """How a message names the argument given as ``key``: ``what[key]`` where given, else ``'key'``."""
    return (what or {}).get(key) or repr(key)


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

    def core_args(self, args, what=None):
        """``args`` keyed by PTX param name, each made what the launch takes (:func:`fit_argument`), a DSL
        tensor's byte struct given as an array made ``[("u64", a)]``; ``ValueError`` for an unknown or missing
        param, or one given twice (by name and by position). ``what``: ``{key: how a message names the
        argument}`` (the command line's ``--arg n=FILE``), by default ``KERNEL: argument 'key'``."""
        out, given = {}, {}
        for key, value in args.items():
            param = self.param(key)
            if param.name in given:
                raise ValueError(f"{self.name}: parameter {param.describe()} is given twice: as "
                                 f"{_named(given[param.name], what)} and as {_named(key, what)}")
            given[param.name] = key
            if param.size is not None and isinstance(value, np.ndarray):
                if param.size != 8:
                    tma = (" or, for a CUtensorMap, a warpsim.TensorMap (--arg NAME=tensormap:BOX:SWIZZLE:TENSOR)"
                           if param.size == 128 else "")
                    raise ValueError(f"{self.name}: parameter {key!r} is a {param.size}-byte struct (a CuTe DSL "
                                     "tensor with run-time shape or strides): give its fields as "
                                     f"[('u64', array), ('s32', ...), ...]{tma}")
                value = [("u64", value)]
            out[param.name] = fit_argument(param, value, (what or {}).get(key) or f"{self.name}: argument {key!r}")
        missing = [p.source_name or p.name for p in self.params if p.name not in out]
        if missing:
            raise ValueError(f"{self.name}: missing argument(s) {', '.join(missing)} "
                             f"(of {len(self.params)}: {', '.join(p.source_name or p.name for p in self.params)})")
        return out

    def launch(self, grid=1, block=128, args=None, smem=0, cta=None, profile=False, max_steps=DEFAULT_MAX_STEPS,
               cluster=None, progress=None, jobs=1):
        """Run the kernel; returns the core's result with ``.buffers`` keyed by PTX param name (``profile``,
        ``max_steps``, ``cluster``, ``progress``, ``jobs``: see :meth:`warpsim.ptx.launch.PtxModule.launch`). A message of the core that names a
        parameter by its PTX name (nvcc's ``_Z..._param_1``) names it as the source does too."""
        args = self.core_args(args or {})
        with self.naming_params():
            return self.module.launch(self.name, grid=parse_dim3(grid, "--grid"), block=parse_dim3(block, "--block"),
                                      args=args, smem=smem, arch=self.arch.replace("_", ""), cta=cta,
                                      profile=profile, max_steps=max_steps, progress=progress, jobs=jobs,
                                      cluster=None if cluster is None else parse_dim3(cluster, "--cluster"))

    @contextmanager
    def naming_params(self):
        """Inside, a ``WarpsimError`` (a fault), ``ValueError`` or ``TypeError`` whose message names a parameter by its
        PTX name (``buffer _Z4copyPfS_i_param_1``, ``parameter _Z..._param_1``) has the
        source's name written beside it (``buffer out (_Z4copyPfS_i_param_1)``); the instruction text is left as is."""
        try:
            yield
        except (WarpsimError, ValueError, TypeError) as e:
            if len(e.args) == 1 and isinstance(e.args[0], str):
                e.args = (self.name_params(e.args[0]),)          # the same error, its type and attributes kept
            raise

    def name_params(self, text):
        """``text`` with each ``buffer NAME`` / ``parameter NAME`` of a PTX param name that the source names
        otherwise written ``buffer SOURCE (NAME)``.

        Kernel(None, "k", [KernelParam("k_param_0", "u64", source_name="out")], "sm_90").name_params(
            "past the end of buffer k_param_0 [0x0, 0x4)") == "past the end of buffer out (k_param_0) [0x0, 0x4)"
        """
        return naming_params({p.name: p.source_name for p in self.params})(text)

    def buffers(self, result):
        """``result.buffers`` keyed by the name the user would give (source name where known)."""
        by_ptx = {p.name: (p.source_name or p.name) for p in self.params}
        return {by_ptx.get(name, name): value for name, value in result.buffers.items()}


def naming_params(names):
    """A function that writes each ``buffer NAME`` / ``parameter NAME`` of a text whose PTX param ``NAME`` the source
    names otherwise (``names``: ``{PTX name: source name}``) as ``buffer SOURCE (NAME)`` (:meth:`Kernel.name_params`;
    the Python front ends' sanitizer reports).

    naming_params({"k_param_1": "total_ptr"})("buffer k_param_1 bytes [0, 4)") == "buffer total_ptr (k_param_1) bytes [0, 4)"
    """
    renamed = [(ptx, source) for ptx, source in names.items() if source and source != ptx]

    def name(text):
        for ptx, source in renamed:
            text = re.sub(rf"\b(buffer|parameter) {re.escape(ptx)}(?![\w$.])",
                          lambda m, source=source, ptx=ptx: f"{m.group(1)} {source} ({ptx})", text)
        return text
    return name


def open_kernel(source, kernel, arch="sm_90", nvcc_flags=(), module=None, compiled=None, ptxas="auto", cubin=None,
                progress=None):
    """Compile ``source`` for ``arch``, load it with ``warpsim.ptx.load``, and return the :class:`Kernel`
    ``kernel`` names. For a CuTe DSL file with several ``WARPSIM`` entries the kernel is looked up in each.
    ``compiled``: the source's :class:`~warpsim.frontends.compiled.Compiled` PTX made earlier (no compile here).
    ``ptxas``, ``cubin``: who decides FMA contraction (``warpsim.ptx.load``; ``"none"``: no contraction);
    ``progress``: told of a long load (``warpsim.ptx.load``'s)."""
    arch = normalize_arch(arch)
    compiled = compile_source(source, arch, nvcc_flags) if compiled is None else compiled
    text = (cuda_source_text(source) if compiled.kind == "cuda"
            else Path(source).read_text(encoding="utf-8", errors="replace"))
    names = _source_params(text, compiled.kind)
    texts = compiled.modules if module is None else (compiled.modules[module],)
    candidates = {e: (text, params) for text in texts for e, params in entry_params(text).items()}
    entry = find_entry(candidates, kernel, names if compiled.kind == "dsl" else ())
    text, params = candidates[entry]
    declared = names.get(_dsl_or_cuda_name(entry, names), [])
    if len(declared) == len(params):
        params = [KernelParam(p.name, p.ptx_type, p.size, name, p.pointer if pointer is None else pointer)
                  for p, (name, pointer) in zip(params, declared)]
    ptx_name = compiled.source.name if compiled.kind == "ptx" else f"{compiled.source.stem}.{arch}.ptx"
    cubin = None if cubin is None else str(cubin)
    return Kernel(_load(text, ptx_name, arch, str(ptxas), cubin, progress), entry, params, arch, compiled.source)


@lru_cache(maxsize=16)
def _load(text, filename, arch="sm_90", ptxas="auto", cubin=None, progress=None):
    """``warpsim.ptx.load`` once per PTX text (and contraction choice): the kernels of one module share it."""
    from warpsim import ptx as core        # the interpreter: loads Numba, so only when a kernel is opened
    return core.load(text, filename=filename, arch=arch, ptxas=ptxas, cubin=cubin, progress=progress)


def _dsl_or_cuda_name(entry, names):
    base = _source_name_of(entry)
    if base in names:
        return base
    for name in _dsl_name_of(entry, names):
        return name
    prefixed = [name for name in names if entry.startswith(f"{name}_")]      # a DSL kernel renamed by a prefix
    return max(prefixed, key=len) if prefixed else base
