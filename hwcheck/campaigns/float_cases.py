"""Float instruction campaigns: one PTX form per case, its kernel, its inputs, its simulation.

A form is PTX instruction text without operands, e.g. ``fma.rz.ftz.f32``, ``min.NaN.bf16x2``,
``setp.ltu.f32``, ``testp.subnormal.f32``, ``cvt.rz.relu.f16x2.f32``, ``cvt.rni.s64.f32``.
:func:`parse_form` reads it into a :class:`FloatForm`: the opcode, its modifiers, the register kind
of each source and of the destination. Thread ``i`` of a form's kernel executes the instruction once
on ``a[i]``, ``b[i]``, ``c[i]`` (as many as it takes) and writes ``d[i]``; a predicate is written as
1 or 0 (``setp`` on x2 types: ``2 * p + q``). 64-bit sources and results travel as uint64 arrays and
are compared as two 32-bit registers (low first).

:data:`FLOAT_FORMS` is the default campaign: every form warpsim models, in every rounding mode and
with each modifier at least once, and the eight 16-bit MUFU forms (``ex2.approx.f16``,
``tanh.approx.bf16x2`` ...), simulated by the H200's tables (``warpsim.isa.mufu16``).
``FloatCase(form, cls)`` has the interface of ``hwcheck.campaigns.cases``' cases (inputs, simulate, run,
warp_inputs) and plugs into ``hwcheck.campaigns.campaign`` as ``--instr float``.

>>> f = parse_form("fma.rn.relu.bf16x2")
>>> f.op, f.type, f.mods, f.sources, f.dest
('fma', 'bf16x2', ('rn', 'relu'), ('b32', 'b32', 'b32'), 'b32')
>>> parse_form("cvt.rni.s64.f32").dest, parse_form("setp.geu.f16x2").dest
('b64', 'pred2')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwcheck.device.kernels import CVT_THREADS, Kernel
from warpsim.isa.cvt import FLOAT_CODES, INT_TYPES, cvt_convert
from warpsim.isa.fpbatch import float_arith, float_minmax, float_setp, float_sign, float_testp
from warpsim.isa.fpcompare import CMP, TESTP
from warpsim.isa.fp64 import float64_batch
from warpsim.isa.fpinputs import FLOAT_CLASSES, float_operands
from warpsim.isa.mufu16 import MUFU16_FORMS, X2_FORMS, float_mufu16

__all__ = ["FloatForm", "parse_form", "FLOAT_FORMS", "F64_FORMS", "float_kernel", "simulate_form", "FloatCase",
           "F64Case", "FLOAT_CLASSES"]

_MUFU16 = frozenset(MUFU16_FORMS) | frozenset(X2_FORMS.values())   # ex2/tanh.approx on 16-bit types: H200 tables
_ARITH = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1}
_TYPES = ("f32", "f16", "bf16", "f16x2", "bf16x2", "f64")
_REG = {"f32": "f32", "f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32", "tf32": "b32",
        "s32": "b32", "u32": "b32", "s64": "b64", "u64": "b64", "s16": "b16", "u16": "b16", "f64": "f64"}
# register kind -> (C type of the array element, asm constraint, C type of the asm operand, load, store)
_C = {
    "f32": ("unsigned", "f", "float", "__uint_as_float({})", "__float_as_uint({})"),
    "b32": ("unsigned", "r", "unsigned", "{}", "{}"),
    "b16": ("unsigned", "h", "unsigned short", "(unsigned short){}", "(unsigned){}"),
    "b64": ("unsigned long long", "l", "unsigned long long", "{}", "{}"),
    "f64": ("unsigned long long", "d", "double", "__longlong_as_double({})", "__double_as_longlong({})"),
}


@dataclass(frozen=True)
class FloatForm:
    """One PTX float instruction form (see the module docstring)."""

    text: str
    op: str
    mods: tuple
    type: str           # the instruction type; cvt: the destination type
    src_type: str       # cvt: the source type; else the instruction type
    sources: tuple      # register kind per source operand
    dest: str           # register kind of the destination, or "pred" / "pred2"

    @property
    def operand_kinds(self) -> tuple:
        """The input generator's kind of each source (``warpsim.isa.fpinputs``)."""
        return (self.src_type,) * len(self.sources)

    @property
    def regs(self) -> int:
        return 2 if self.dest in ("b64", "f64") else 1

    @property
    def first_sm(self) -> int:
        """The first architecture whose ptxas accepts the form (NVRTC 13.0, checked by the tests):
        ``.xorsign.abs`` needs sm_86; add/sub/mul/ex2/tanh on bf16 and cvt from an integer to bf16 need sm_90."""
        if "xorsign" in self.mods:
            return 86
        if self.op == "cvt" and "bf16" in (self.type, self.src_type) and "f64" in (self.type, self.src_type):
            return 90
        if self.type in ("bf16", "bf16x2") and (self.op in ("add", "sub", "mul", "ex2", "tanh")
                                                or self.src_type in INT_TYPES):
            return 90
        return 80

    @property
    def compare_kind(self) -> str:
        """How a mismatching register is shown (``hwcheck.compare`` kinds)."""
        t = self.type
        if self.dest in ("pred", "pred2", "b64", "f64") or t in INT_TYPES:
            return "b32"
        if t in ("f16", "f16x2"):
            return "f16x2"
        if t in ("bf16", "bf16x2"):
            return "bf16x2"
        return "f32"


def parse_form(text: str) -> FloatForm:
    """Read PTX instruction text (no operands) into a :class:`FloatForm`; ``ValueError`` if not modelled."""
    parts = text.split(".")
    op = parts[0]
    bad = ValueError(f"float form {text!r} is not one warpsim models")
    if op == "cvt":
        if len(parts) < 3:
            raise bad
        dst, src = parts[-2], parts[-1]
        mods = tuple(parts[1:-2])
        if dst in ("f16x2", "bf16x2") and src == "f32":
            return FloatForm(text, op, mods, dst, src, ("f32", "f32"), "b32")
        if dst not in _REG or src not in _REG or src == "tf32":
            raise bad
        return FloatForm(text, op, mods, dst, src, (_REG[src],), _REG[dst])
    t = parts[-1]
    if t not in _TYPES:
        raise bad
    mods = tuple(parts[1:-1])
    reg = _REG[t]
    if op in _ARITH:
        return FloatForm(text, op, mods, t, t, (reg,) * _ARITH[op], reg)
    if op in ("min", "max", "copysign"):
        return FloatForm(text, op, mods, t, t, (reg, reg), reg)
    if op in ("abs", "neg") or text in _MUFU16:
        return FloatForm(text, op, mods, t, t, (reg,), reg)
    if op == "setp" and mods and mods[0] in CMP:
        return FloatForm(text, op, mods, t, t, (reg, reg), "pred2" if t.endswith("x2") else "pred")
    if op == "testp" and mods and mods[0] in TESTP:
        return FloatForm(text, op, mods, t, t, (reg,), "pred")
    raise bad


def _forms() -> tuple:
    modes = ("rn", "rz", "rm", "rp")
    forms = [f"{op}.{m}.f32" for op in ("add", "sub", "mul", "fma", "div", "sqrt", "rcp") for m in modes]
    forms += ["add.rn.ftz.f32", "add.rz.sat.f32", "mul.rn.ftz.sat.f32", "mul.rm.ftz.f32", "fma.rn.ftz.f32",
              "fma.rp.sat.f32", "fma.rn.ftz.sat.f32", "div.rn.ftz.f32", "sqrt.rn.ftz.f32", "rcp.rn.ftz.f32"]
    forms += [f"{op}{m}.f32" for op in ("min", "max") for m in ("", ".ftz", ".NaN", ".xorsign.abs")]
    forms += ["abs.f32", "neg.f32", "abs.ftz.f32", "neg.ftz.f32", "copysign.f32"]
    forms += [f"setp.{c}.f32" for c in CMP] + ["setp.lt.ftz.f32", "setp.equ.ftz.f32"]
    forms += [f"testp.{c}.f32" for c in TESTP]
    for t in ("f16", "f16x2"):
        forms += [f"{op}.rn.{t}" for op in ("add", "sub", "mul", "fma")]
        forms += [f"add.rn.ftz.{t}", f"mul.rn.sat.{t}", f"fma.rn.relu.{t}", f"fma.rn.sat.{t}", f"fma.rn.ftz.{t}"]
        forms += [f"min.{t}", f"max.NaN.{t}", f"min.xorsign.abs.{t}", f"max.ftz.{t}", f"neg.{t}", f"abs.{t}"]
    for t in ("bf16", "bf16x2"):
        forms += [f"{op}.rn.{t}" for op in ("add", "sub", "mul", "fma")]
        forms += [f"fma.rn.relu.{t}", f"min.{t}", f"max.NaN.{t}", f"min.xorsign.abs.{t}", f"neg.{t}", f"abs.{t}"]
    forms += [f"setp.{c}.f16x2" for c in ("eq", "ne", "lt", "ge", "equ", "ltu", "num", "nan")]
    forms += [f"cvt.{m}.f16.f32" for m in modes] + ["cvt.rn.relu.f16.f32", "cvt.rn.satfinite.f16.f32",
                                                    "cvt.rz.sat.f16.f32", "cvt.rn.ftz.f16.f32"]
    forms += ["cvt.rn.bf16.f32", "cvt.rz.bf16.f32", "cvt.rn.relu.bf16.f32", "cvt.rz.satfinite.bf16.f32",
              "cvt.rn.relu.f16x2.f32", "cvt.rz.f16x2.f32", "cvt.rn.bf16x2.f32", "cvt.rz.relu.bf16x2.f32",
              "cvt.rna.tf32.f32", "cvt.rna.satfinite.tf32.f32", "cvt.f32.f16", "cvt.f32.bf16"]
    forms += [f"cvt.{m}.s32.f32" for m in ("rni", "rzi", "rmi", "rpi")]
    forms += ["cvt.rni.u32.f32", "cvt.rzi.ftz.s32.f32", "cvt.rni.s64.f32", "cvt.rzi.u64.f32",
              "cvt.rpi.s16.f32", "cvt.rmi.u16.f32"]
    forms += [f"cvt.{m}.f32.s32" for m in modes] + ["cvt.rn.f32.u32", "cvt.rz.f32.s64", "cvt.rn.f32.u64",
                                                    "cvt.rn.f16.s32", "cvt.rz.bf16.u32"]
    forms += [f"cvt.{m}.f32.f32" for m in ("rni", "rzi", "rmi", "rpi")] + ["cvt.rni.ftz.f32.f32"]
    forms += [f for scalar in MUFU16_FORMS for f in (scalar, X2_FORMS[scalar])]
    return tuple(forms)


FLOAT_FORMS = _forms()


def _f64_forms() -> tuple:
    modes = ("rn", "rz", "rm", "rp")
    forms = [f"{op}.{m}.f64" for op in ("add", "sub", "mul", "fma", "div", "sqrt", "rcp") for m in modes]
    forms += [f"{op}.f64" for op in ("min", "max", "abs", "neg", "copysign")]
    forms += [f"setp.{c}.f64" for c in CMP] + [f"testp.{c}.f64" for c in TESTP]
    forms += [f"cvt.{m}.f32.f64" for m in modes] + ["cvt.rn.ftz.f32.f64", "cvt.rz.sat.f32.f64",
                                                    "cvt.f64.f32", "cvt.ftz.f64.f32", "cvt.f64.f16", "cvt.f64.bf16"]
    forms += [f"cvt.{m}.f16.f64" for m in modes] + ["cvt.rn.bf16.f64", "cvt.rz.bf16.f64"]
    forms += [f"cvt.{m}.s32.f64" for m in ("rni", "rzi", "rmi", "rpi")] + [
        "cvt.rni.u32.f64", "cvt.rzi.s64.f64", "cvt.rni.u64.f64", "cvt.rpi.s16.f64"]
    forms += [f"cvt.{m}.f64.s64" for m in modes] + ["cvt.rn.f64.s32", "cvt.rn.f64.u32", "cvt.rz.f64.u64"]
    forms += [f"cvt.{m}.f64.f64" for m in ("rni", "rzi", "rmi", "rpi")]
    return tuple(forms)


F64_FORMS = _f64_forms()   # ``--instr f64``: the f64 family (warpsim.isa.fp64, cvt), apart from FLOAT_FORMS


def float_kernel(form: FloatForm, prefix: str = "hwcheck_float_") -> Kernel:
    """The kernel running ``form`` once per thread (launch ``CVT_THREADS`` per block), named ``prefix``
    followed by the form with ``_`` for ``.``."""
    name = prefix + form.text.replace(".", "_")
    args = []
    ins = []
    for i, (kind, var) in enumerate(zip(form.sources, "abc")):
        elem, cons, _ctype, load, _store = _C[kind]
        ins.append(f'"{cons}"({load.format(f"{var}[i]")})')
    operands = ", ".join(f"%{i + 1}" for i in range(len(form.sources)))
    in_elems = [_C[k][0] for k in form.sources] + [_C[form.sources[0]][0]] * (3 - len(form.sources))
    for var, elem in zip("abc", in_elems):
        args.append(f"const {elem}* __restrict__ {var}")
    if form.dest in ("pred", "pred2"):
        out_elem = "unsigned"
        if form.dest == "pred":
            body = (f'asm volatile("{{ .reg .pred p; {form.text} p, {operands}; selp.u32 %0, 1, 0, p; }}" '
                    f': "=r"(r) : {", ".join(ins)});')
        else:
            body = (f'asm volatile("{{ .reg .pred p, q; .reg .b32 x, y; {form.text} p|q, {operands}; '
                    f'selp.b32 x, 2, 0, p; selp.b32 y, 1, 0, q; or.b32 %0, x, y; }}" : "=r"(r) : {", ".join(ins)});')
        decl, store = "unsigned r;", "r"
    else:
        out_elem, cons, ctype, _load, store_fmt = _C[form.dest]
        body = f'asm volatile("{form.text} %0, {operands};" : "={cons}"(r) : {", ".join(ins)});'
        decl, store = f"{ctype} r;", store_fmt.format("r")
    source = f"""
// {form.text}: thread i executes it on a[i], b[i], c[i] (as many as it takes) into d[i].
extern "C" __global__ void {name}({", ".join(args)}, {out_elem}* __restrict__ d, long long count)
{{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= count) return;
  {decl}
  {body}
  d[i] = {store};
}}
"""
    return Kernel(name, form.text, source)


def simulate_form(form: FloatForm, ops) -> np.ndarray:
    """warpsim's result bits of ``form`` on operand arrays ``ops`` (uint32, or uint64 for b64 results)."""
    mods, t = form.mods, form.type
    flag = lambda m: m in mods   # noqa: E731
    if t == "f64" and form.op != "cvt":
        ops = [np.asarray(x, np.uint64) for x in ops]
        rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp")), "rn")
        if form.op == "setp":
            return float64_batch("setp", *ops, cmp=mods[0]).astype(np.uint32)
        if form.op == "testp":
            return float64_batch("testp", *ops, cls=mods[0]).astype(np.uint32)
        return float64_batch(form.op, *ops, rnd=rnd)
    if form.op in _ARITH:
        rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp")), "rn")
        return float_arith(form.op, *ops, type=t, rnd=rnd, ftz=flag("ftz"), sat=flag("sat"), relu=flag("relu"))
    if form.op in ("min", "max"):
        return float_minmax(form.op, *ops, type=t, ftz=flag("ftz"), nan=flag("NaN"), xorsign_abs=flag("xorsign"))
    if form.op in ("abs", "neg", "copysign"):
        return float_sign(form.op, *ops, type=t, ftz=flag("ftz"))
    if form.text in _MUFU16:
        return float_mufu16(form.op, ops[0], type=t, ftz=flag("ftz"))
    if form.op == "setp":
        p = float_setp(mods[0], *ops, type=t, ftz=flag("ftz"))
        return (p[..., 0] * 2 + p[..., 1]).astype(np.uint32) if form.dest == "pred2" else p.astype(np.uint32)
    if form.op == "testp":
        return float_testp(mods[0], *ops, type=t).astype(np.uint32)
    rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi")), "rn")
    kw = dict(rnd=rnd, ftz=flag("ftz"), sat=flag("sat"), relu=flag("relu"), satfinite=flag("satfinite"))
    if t in ("f16x2", "bf16x2"):
        hi = cvt_convert(ops[0], dst=t[:-2], src="f32", **kw)
        lo = cvt_convert(ops[1], dst=t[:-2], src="f32", **kw)
        return ((hi << np.uint64(16)) | lo).astype(np.uint32)
    out = cvt_convert(ops[0], dst=t, src=form.src_type, **kw)
    return out if form.dest in ("b64", "f64") else out.astype(np.uint32)


@dataclass(frozen=True)
class FloatCase:
    """One float form on inputs of class ``cls``; thread ``i`` executes element ``i``."""

    form_text: str
    cls: str
    instr = "float"

    @property
    def form(self) -> FloatForm:
        return parse_form(self.form_text)

    @property
    def kernel(self) -> Kernel:
        return float_kernel(self.form)

    @property
    def ptx(self) -> str:
        return self.form_text

    @property
    def label(self) -> str:
        return self.form_text

    @property
    def kind(self) -> str:
        return self.form.compare_kind

    @property
    def regs(self) -> int:
        return self.form.regs

    def warps(self, count: int) -> int:
        if count % 32:
            raise ValueError(f"float campaign: count must be a multiple of 32, got {count}")
        return count // 32

    def inputs(self, count: int, rng):
        f = self.form
        return float_operands(self.cls, count, f.operand_kinds, op=f.op, dst=f.type, rng=rng)

    def _registers(self, out: np.ndarray) -> np.ndarray:
        if out.dtype == np.uint64:
            out = np.ascontiguousarray(out).view(np.uint32)
        return out.astype(np.uint32).reshape(-1, 32, self.regs)

    def simulate(self, inputs, arch: str) -> np.ndarray:
        return self._registers(simulate_form(self.form, inputs))

    def run(self, gpu, module, inputs) -> np.ndarray:
        count = inputs[0].shape[0]
        d = gpu.output(count * self.regs)   # uint32 words; a b64 result fills two, low first
        arrays = [gpu.put(x) for x in inputs]
        while len(arrays) < 3:
            arrays.append(arrays[0])
        blocks = (count + CVT_THREADS - 1) // CVT_THREADS
        gpu.launch(module, self.kernel.name, blocks, CVT_THREADS, (*arrays, d, np.int64(count)))
        return self._registers(gpu.get(d))

    def warp_inputs(self, inputs, warp: int) -> dict:
        lanes = slice(32 * warp, 32 * warp + 32)
        return {name: [f"{int(v):x}" for v in x[lanes]] for name, x in zip("abc", inputs)}


@dataclass(frozen=True)
class F64Case(FloatCase):
    """One form of ``F64_FORMS`` (``--instr f64``) on inputs of class ``cls``."""

    instr = "f64"

