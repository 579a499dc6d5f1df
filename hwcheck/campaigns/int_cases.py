"""Integer instruction-form campaigns: one PTX form per case, run as raw PTX on the GPU and in the PTX interpreter.

A form is PTX instruction text without operands, e.g. ``bfe.s32``, ``mul.wide.u32``, ``prmt.b32.f4e``,
``setp.lt.and.s64``, ``cvt.sat.u8.s32``; a ``setp`` that writes two predicates carries `` p|q``
(``setp.lo.or.u32 p|q``). :data:`INT_FORMS` (name -> :class:`IntForm`) holds every form that
``hwcheck fuzz``'s generator (``hwcheck.campaigns.ptx_fuzz._Gen.straight``) emits, in every type it could take,
and a few neighbours (``add.sat.s32``, ``shf``, ``cnot``, ``bfind``, ``sad``).

The kernel of a form (:func:`form_ptx`, one ``.entry`` per form, all in one module) has thread ``i`` load
its operands from ``inp`` (row ``i`` of ``uint64[count, 4]``: operand ``k`` in word ``k``; a 32-bit operand
is the word's low half; a predicate operand is ``word != 0``), execute the form once with register
operands, and store the destination into ``out`` (``uint32[count, 2]``: a 64-bit result low word first;
a 32-bit one in word 0; a predicate as 1/0; ``p|q`` as ``2 * p + q``). The destination register is set
to ``0xA5A5A5A5`` (``...A5`` for 64 bits) before, so a partial write shows.

Both machines run the very same PTX text: the GPU through CuPy (``cupy.RawModule`` of the PTX file,
:meth:`hwcheck.device.gpu.Gpu.ptx_module`), the simulator through :func:`warpsim.ptx.load` and ``launch``.

Operands (:meth:`IntCase.inputs`): class ``directed`` is the full cross product of each operand's directed
list (:data:`EDGE32`/:data:`EDGE64` for values, :data:`FIELDS` for ``bfe``/``bfi`` positions and lengths
and shift amounts, :data:`SELECTORS` for ``prmt``, 0/1 for predicates); where that exceeds
:data:`DIRECTED_CAP` the value operands take :data:`SMALL32`/:data:`SMALL64` instead. Its size is fixed by
the form (``--count`` does not apply). Class ``random`` is ``--count`` tuples of uniform random words
(fields and shift amounts: three in four uniform in 0..299, else a uniform word).

>>> f = INT_FORMS["bfe.s32"]
>>> f.dest, [s.role for s in f.sources]
('b32', ['value', 'field', 'field'])
>>> INT_FORMS["setp.lt.and.s64 p|q"].dest, INT_FORMS["mul.wide.s32"].dest
('pred2', 'b64')
>>> len(IntCase("bfe.u32", "directed").inputs(None, None)) == len(EDGE32) * len(FIELDS) ** 2
True
"""

from __future__ import annotations

import fnmatch
import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["IntOperand", "IntForm", "INT_FORMS", "INT_CLASSES", "EDGE32", "EDGE64", "SMALL32", "SMALL64", "FIELDS",
           "IMMEDIATE_FIELDS", "IMMEDIATE_SHIFTS", "SELECTORS", "DIRECTED_CAP", "THREADS", "select_forms", "form_ptx",
           "module_ptx", "IntCase", "IntRunner", "simulator_module", "write_module"]

INT_CLASSES = ("directed", "random")
THREADS = 256                 # threads per block on both machines
DIRECTED_CAP = 1 << 18        # most operand tuples of a directed case before value lists shrink
_ARGS = 4                     # operand words per thread

_SMALL = (0, 1, 2, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 257)
EDGE32 = _SMALL + (0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF,
                   0x12345678, 0x9ABCDEF0)
EDGE64 = _SMALL + (0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000,
                   0x8000000000000001, 0xFFFFFFFFFFFFFFFE, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFF80000000,
                   0x0123456789ABCDEF, 0xFEDCBA9876543210)
SMALL32 = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678, 0x9ABCDEF0)
SMALL64 = (0, 1, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x0123456789ABCDEF,
           0xFEDCBA9876543210, 0xFFFFFFFF)
FIELDS = tuple(range(71)) + tuple(range(250, 261)) + (0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)
IMMEDIATE_FIELDS = ((0, 0), (5, 0), (0, 255), (3, 7), (28, 7), (31, 7), (32, 1), (32, 7), (40, 7), (63, 255),
                    (64, 7), (100, 3), (255, 255))   # bfe/bfi (pos, len) written as immediates (ptxas: 0..255)
IMMEDIATE_SHIFTS = (0, 1, 31, 32, 33, 63, 64, 65, 255)
SELECTORS = (0x3210, 0x7654, 0x0123, 0x4567, 0x5140, 0x8888, 0x9999, 0xCDEF, 0x7531, 0x0000, 0x0001, 0x0002,
             0x0003, 0xFFFF, 0xFFFFFFFF, 0x12345678, 0x89ABCDEF, 0x00010000)


@dataclass(frozen=True)
class IntOperand:
    """One source operand: its register ``kind`` (``b32``, ``b64``, ``pred``) and ``role`` (``value``,
    ``field`` (a bfe/bfi position or length, a shift amount), ``selector`` (prmt), ``pred``)."""

    kind: str
    role: str = "value"


@dataclass(frozen=True)
class IntForm:
    """One PTX integer instruction form: ``name`` (PTX text, `` p|q`` for two predicates), the ``text`` the
    kernel executes, its ``sources`` and the destination kind ``dest`` (``b32``, ``b64``, ``pred``, ``pred2``)."""

    name: str
    text: str
    sources: tuple
    dest: str
    immediates: tuple = ()   # operands written into the instruction after the register sources (``40, 7``)

    @property
    def regs(self) -> int:
        """32-bit words of the result compared: 2 for a 64-bit destination, else 1."""
        return 2 if self.dest == "b64" else 1

    @property
    def op(self) -> str:
        return self.text.split(".")[0]

    @property
    def kernel(self) -> str:
        """The ``.entry`` name of the form's kernel."""
        return "int_" + self.name.replace(" p|q", "_pq").replace(" imm ", "_imm_").replace(",", "_").replace(".", "_")


def _w(t: str) -> str:
    return "b64" if t.endswith("64") else "b32"


def _add(forms: dict, name: str, sources, dest: str, text: str | None = None, immediates=()) -> None:
    srcs = tuple(s if isinstance(s, IntOperand) else IntOperand(s) for s in sources)
    forms[name] = IntForm(name, text or name, srcs, dest, tuple(immediates))


def _range(t: str) -> tuple:
    bits = int(t[1:])
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t[0] == "s" else (0, (1 << bits) - 1)


def _within(src: str, dst: str) -> bool:
    """Every value of integer type ``src`` is one of ``dst``: ``_within("u8", "s16") == True``."""
    (a, b), (c, d) = _range(src), _range(dst)
    return c <= a and b <= d


def _build() -> dict:
    forms: dict = {}
    F, P, S = IntOperand("b32", "field"), IntOperand("pred", "pred"), IntOperand("b32", "selector")
    types = ("u32", "s32", "u64", "s64")
    for t in types:
        r = _w(t)
        for op in ("add", "sub", "min", "max"):
            _add(forms, f"{op}.{t}", (r, r), r)
        for op in ("div", "rem"):
            _add(forms, f"{op}.{t}", (r, r), r)
        for h in ("lo", "hi"):
            _add(forms, f"mul.{h}.{t}", (r, r), r)
            _add(forms, f"mad.{h}.{t}", (r, r, r), r)
    for t in ("u32", "s32"):
        _add(forms, f"mul.wide.{t}", ("b32", "b32"), "b64")
        _add(forms, f"mad.wide.{t}", ("b32", "b32", "b64"), "b64")
    for op in ("add.sat.s32", "sub.sat.s32"):
        _add(forms, op, ("b32", "b32"), "b32")
    _add(forms, "mad.hi.sat.s32", ("b32", "b32", "b32"), "b32")
    for t in ("s32", "s64"):
        _add(forms, f"abs.{t}", (_w(t),), _w(t))
        _add(forms, f"neg.{t}", (_w(t),), _w(t))
    for t in ("b32", "b64"):
        for op in ("and", "or", "xor"):
            _add(forms, f"{op}.{t}", (t, t), t)
        _add(forms, f"not.{t}", (t,), t)
        _add(forms, f"cnot.{t}", (t,), t)
        _add(forms, f"brev.{t}", (t,), t)
        _add(forms, f"popc.{t}", (t,), "b32")
        _add(forms, f"clz.{t}", (t,), "b32")
        _add(forms, f"shl.{t}", (t, F), t)
        _add(forms, f"shr.{t}", (t, F), t)
        _add(forms, f"bfi.{t}", (t, t, F, F), t)
    for t in types:
        _add(forms, f"shr.{t}", (_w(t), F), _w(t))
        _add(forms, f"bfe.{t}", (_w(t), F, F), _w(t))
        _add(forms, f"bfind.{t}", (_w(t),), "b32")
        _add(forms, f"bfind.shiftamt.{t}", (_w(t),), "b32")
    for d in ("l", "r"):
        for m in ("wrap", "clamp"):
            _add(forms, f"shf.{d}.{m}.b32", ("b32", "b32", F), "b32")
    for t in ("u32", "s32"):
        _add(forms, f"sad.{t}", ("b32", "b32", "b32"), "b32")
    for mode in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"):
        _add(forms, f"prmt.b32{mode}", ("b32", "b32", S), "b32")
    cmps = {"u": ("eq", "ne", "lo", "ls", "hi", "hs"), "s": ("eq", "ne", "lt", "le", "gt", "ge"), "b": ("eq", "ne")}
    for t in ("u32", "s32", "u64", "s64", "b32", "b64"):
        for c in cmps[t[0]]:
            _add(forms, f"setp.{c}.{t}", (_w(t), _w(t)), "pred")
            _add(forms, f"setp.{c}.{t} p|q", (_w(t), _w(t)), "pred2", f"setp.{c}.{t}")
            for b in ("and", "or", "xor"):
                _add(forms, f"setp.{c}.{b}.{t}", (_w(t), _w(t), P), "pred")
                _add(forms, f"setp.{c}.{b}.{t} p|q", (_w(t), _w(t), P), "pred2", f"setp.{c}.{b}.{t}")
    for t in ("b32", "b64"):
        _add(forms, f"selp.{t}", (t, t, P), t)
    # immediate fields: ptxas folds some of these at compile time (bfe.s32 40, 7 is all ones: docs/ptx.md)
    for t in types:
        for pos, length in IMMEDIATE_FIELDS:
            _add(forms, f"bfe.{t} imm {pos},{length}", (_w(t),), _w(t), f"bfe.{t}", (pos, length))
    for t in ("b32", "b64"):
        for pos, length in IMMEDIATE_FIELDS:
            _add(forms, f"bfi.{t} imm {pos},{length}", (t, t), t, f"bfi.{t}", (pos, length))
        for op in ("shl", "shr"):
            for n in IMMEDIATE_SHIFTS:
                _add(forms, f"{op}.{t} imm {n}", (t,), t, f"{op}.{t}", (n,))
    for t in ("s32", "s64"):
        for n in IMMEDIATE_SHIFTS:
            _add(forms, f"shr.{t} imm {n}", (_w(t),), _w(t), f"shr.{t}", (n,))
    ints = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")
    for dst, src in itertools.permutations(ints, 2):
        _add(forms, f"cvt.{dst}.{src}", (_w(src),), _w(dst))
        if not _within(src, dst):   # ptxas refuses .sat where nothing can saturate
            _add(forms, f"cvt.sat.{dst}.{src}", (_w(src),), _w(dst))
    return forms


INT_FORMS = _build()


def select_forms(globs=None) -> list:
    """The names of :data:`INT_FORMS` matching any of ``globs`` (``fnmatch`` patterns such as ``bfe.*`` or
    ``setp.*.s32*``), in table order; all of them for None. ``ValueError`` for a pattern that matches nothing.

    >>> select_forms(["bfe.s??"]), select_forms(["bfe.s32 imm 4*"])
    (['bfe.s32', 'bfe.s64'], ['bfe.s32 imm 40,7'])
    """
    names = list(INT_FORMS)
    if globs is None:
        return names
    picked = set()
    for g in globs:
        hits = [n for n in names if fnmatch.fnmatchcase(n, g)]
        if not hits:
            raise ValueError(f"--forms: {g!r} matches no integer form (e.g. bfe.*, setp.*.s32, cvt.sat.*; the list: "
                             f"hwcheck.campaigns.int_cases.INT_FORMS)")
        picked.update(hits)
    return [n for n in names if n in picked]


_REG = {"b32": "%r", "b64": "%rd", "pred": "%p"}
_CANARY = {"b32": "0xA5A5A5A5", "b64": "0xA5A5A5A5A5A5A5A5"}


def form_ptx(form: IntForm) -> str:
    """The ``.entry`` of ``form`` (see the module docstring): ``(.param .u64 inp, .param .u64 out, .param .u32
    count)``, thread ``i = ctaid.x * ntid.x + tid.x`` working on row ``i`` when ``i < count``."""
    lines = [f".visible .entry {form.kernel}(.param .u64 inp, .param .u64 out, .param .u32 count)", "{",
             "  .reg .b32 %t<4>;", "  .reg .b64 %a<3>;", "  .reg .pred %q<1>;",
             "  .reg .b32 %r<8>;", "  .reg .b64 %rd<8>;", "  .reg .pred %p<8>;",
             "  mov.u32 %t0, %ctaid.x;", "  mov.u32 %t1, %ntid.x;", "  mov.u32 %t2, %tid.x;",
             "  mad.lo.u32 %t0, %t0, %t1, %t2;", "  ld.param.u32 %t1, [count];", "  setp.ge.u32 %q0, %t0, %t1;",
             "  @%q0 bra $L_done;", "  ld.param.u64 %a0, [inp];", "  ld.param.u64 %a1, [out];",
             "  cvta.to.global.u64 %a0, %a0;", "  cvta.to.global.u64 %a1, %a1;",
             f"  mul.wide.u32 %a2, %t0, {8 * _ARGS};", "  add.s64 %a0, %a0, %a2;",
             "  mul.wide.u32 %a2, %t0, 8;", "  add.s64 %a1, %a1, %a2;"]
    names = []
    for k, src in enumerate(form.sources):
        reg = f"{_REG[src.kind]}{k}"
        names.append(reg)
        if src.kind == "b64":
            lines.append(f"  ld.global.u64 {reg}, [%a0+{8 * k}];")
        elif src.kind == "b32":
            lines.append(f"  ld.global.u32 {reg}, [%a0+{8 * k}];")
        else:
            lines += [f"  ld.global.u32 %t3, [%a0+{8 * k}];", f"  setp.ne.u32 {reg}, %t3, 0;"]
    operands = names + [str(v) for v in form.immediates]
    if form.dest in ("pred", "pred2"):
        dest = "%p6|%p7" if form.dest == "pred2" else "%p7"
        lines.append(f"  {form.text} {dest}, {', '.join(names)};")
        if form.dest == "pred2":
            lines += ["  selp.u32 %r6, 2, 0, %p6;", "  selp.u32 %r7, 1, 0, %p7;", "  or.b32 %r7, %r7, %r6;"]
        else:
            lines.append("  selp.u32 %r7, 1, 0, %p7;")
        lines.append("  st.global.u32 [%a1], %r7;")
    else:
        dest = f"{_REG[form.dest]}7"
        width = form.dest[1:]
        lines += [f"  mov.b{width} {dest}, {_CANARY[form.dest]};", f"  {form.text} {dest}, {', '.join(operands)};",
                  f"  st.global.u{width} [%a1], {dest};"]
    lines += ["$L_done:", "  ret;", "}", ""]
    return "\n".join(lines)


def module_ptx(names, target: str = "sm_90") -> str:
    """One PTX module holding the kernel of each form in ``names``."""
    head = [".version 8.0", f".target {target}", ".address_size 64", ""]
    return "\n".join(head) + "\n" + "\n".join(form_ptx(INT_FORMS[n]) for n in names)


@lru_cache(maxsize=8)
def simulator_module(names: tuple):
    """The simulator's :class:`warpsim.ptx.PtxModule` of :func:`module_ptx` (``names`` a tuple), parsed once."""
    from warpsim import ptx
    return ptx.load(module_ptx(names), filename="<int-forms>")


def _draw(role: str, kind: str, n: int, rng) -> np.ndarray:
    if role == "pred":
        return rng.integers(0, 2, n, dtype=np.uint64)
    if role == "field":
        small = rng.integers(0, 300, n, dtype=np.uint64)
        return np.where(rng.random(n) < 0.75, small, rng.integers(0, 1 << 32, n, dtype=np.uint64))
    bits = 64 if kind == "b64" else 32
    return rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64) \
        if bits == 64 else rng.integers(0, 1 << 32, n, dtype=np.uint64)


def _lists(form: IntForm, small: bool) -> list:
    out = []
    for s in form.sources:
        if s.role == "pred":
            out.append((0, 1))
        elif s.role == "field":
            out.append(FIELDS)
        elif s.role == "selector":
            out.append(SELECTORS + (EDGE32 if not small else ()))
        elif s.kind == "b64":
            out.append(SMALL64 if small else EDGE64)
        else:
            out.append(SMALL32 if small else EDGE32)
    return out


@lru_cache(maxsize=32)
def _directed(name: str) -> np.ndarray:
    form = INT_FORMS[name]
    lists = _lists(form, small=False)
    if int(np.prod([len(x) for x in lists])) > DIRECTED_CAP:
        lists = _lists(form, small=True)
    rows = np.zeros((int(np.prod([len(x) for x in lists])), _ARGS), np.uint64)
    grids = np.meshgrid(*[np.array(x, np.uint64) for x in lists], indexing="ij")
    for k, g in enumerate(grids):
        rows[:, k] = g.ravel()
    rows.setflags(write=False)
    return rows


@dataclass(frozen=True)
class IntCase:
    """One integer form on operands of class ``cls`` (``directed`` or ``random``); thread ``i`` executes row ``i``.

    Has the interface of :mod:`hwcheck.campaigns.cases`' cases (``inputs``, ``simulate``, ``run``,
    ``warp_inputs``), plus ``planned(count)`` (the directed class's own size) and ``operands(inputs, i)`` (row
    ``i`` as text)."""

    form_name: str
    cls: str
    instr = "int"

    @property
    def form(self) -> IntForm:
        return INT_FORMS[self.form_name]

    @property
    def ptx(self) -> str:
        return self.form_name

    @property
    def label(self) -> str:
        return self.form_name

    @property
    def kind(self) -> str:
        return "b32"

    @property
    def regs(self) -> int:
        return self.form.regs

    def planned(self, count: int) -> int:
        """How many operand tuples the case runs: the directed cross product, or ``count`` random ones."""
        return len(_directed(self.form_name)) if self.cls == "directed" else count

    def warps(self, count: int) -> int:
        if count % 32:
            raise ValueError(f"int campaign: count must be a multiple of 32, got {count}")
        return count // 32

    def inputs(self, count, rng, first: int = 0) -> np.ndarray:
        """``uint64[n, 4]`` operand rows: directed rows ``first..first+count-1`` (all of them for ``count`` None;
        past the end, the last row repeats so that a whole warp runs), or ``count`` random rows from ``rng``."""
        if self.cls == "directed":
            rows = _directed(self.form_name)
            count = len(rows) if count is None else count
            idx = np.minimum(np.arange(first, first + count), len(rows) - 1)
            return np.ascontiguousarray(rows[idx])
        out = np.zeros((count, _ARGS), np.uint64)
        for k, s in enumerate(self.form.sources):
            out[:, k] = _draw(s.role, s.kind, count, rng)
        return out

    def _registers(self, out: np.ndarray) -> np.ndarray:
        words = np.ascontiguousarray(out, dtype=np.uint32).reshape(-1, 2)[:, :self.regs]
        return np.ascontiguousarray(words).reshape(-1, 32, self.regs)

    def _launch_shape(self, count: int):
        return (count + THREADS - 1) // THREADS

    def simulate(self, inputs, arch: str, names: tuple | None = None) -> np.ndarray:
        """The PTX interpreter's result registers ``uint32[count / 32, 32, regs]`` (``count`` a multiple of 32)."""
        module = simulator_module(names or (self.form_name,))
        count = inputs.shape[0]
        res = module.launch(self.form.kernel, grid=(self._launch_shape(count), 1, 1), block=(THREADS, 1, 1),
                            args={"inp": np.ascontiguousarray(inputs), "out": np.zeros(2 * count, np.uint32),
                                  "count": count}, quiet=True)
        return self._registers(res.buffers["out"])

    def run(self, gpu, module, inputs) -> np.ndarray:
        count = inputs.shape[0]
        out = gpu.output(2 * count)
        gpu.launch(module, self.form.kernel, self._launch_shape(count), THREADS,
                   (gpu.put(np.ascontiguousarray(inputs)), out, np.uint32(count)))
        return self._registers(gpu.get(out))

    def operands(self, inputs, i: int) -> str:
        """Row ``i`` of ``inputs`` as ``a=0x... b=0x...`` (predicates as 0/1)."""
        words = []
        for k, s in enumerate(self.form.sources):
            v = int(inputs[i, k])
            words.append(f"{'abcd'[k]}={v}" if s.kind == "pred" else
                         f"{'abcd'[k]}={v:#018x}" if s.kind == "b64" else f"{'abcd'[k]}={v:#010x}")
        return " ".join(words)

    def warp_inputs(self, inputs, warp: int) -> dict:
        lanes = slice(32 * warp, 32 * warp + 32)
        return {"abcd"[k]: [f"{int(v):x}" for v in inputs[lanes, k]] for k in range(len(self.form.sources))}


class IntRunner:
    """Runs int cases on a :class:`hwcheck.device.gpu.Gpu`, with one PTX module loaded for all their kernels."""

    def __init__(self, gpu, cases):
        self.gpu = gpu
        self.names = tuple(dict.fromkeys(c.form_name for c in cases))
        self.text = module_ptx(self.names, target=gpu.info.arch if hasattr(gpu, "info") else "sm_90")
        self.module = gpu.ptx_module(self.text)

    def run(self, case, inputs) -> np.ndarray:
        from hwcheck.errors import HwcheckError
        try:
            return case.run(self.gpu, self.module, inputs)
        except HwcheckError:
            raise
        except Exception as e:   # CuPy: out of memory, a CUDA error outside a launch
            raise HwcheckError(f"hwcheck: {case.ptx} on the GPU failed: {type(e).__name__}: {e}") from None


def write_module(path: str, names=None, target: str = "sm_90") -> None:
    """Write :func:`module_ptx` of ``names`` (default all forms) to ``path`` atomically (for ``ptxas``)."""
    from hwcheck.report import write_text_atomic
    write_text_atomic(path, module_ptx(list(INT_FORMS) if names is None else names, target), what="PTX")

