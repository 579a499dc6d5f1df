"""Decoding the float instructions of PTX: their modifiers checked against warpsim.isa's models.

A mixin of the instruction decoder (:class:`warpsim.ptx.families.InstructionDecoder`): ``float_instruction(fn, ins)``
decodes an instruction if it is a float one and returns True, else returns False and leaves it to
the integer decoder. Float ones are the arithmetic, selection, sign and comparison instructions
with a float type (``add sub mul fma mad div sqrt rcp min max abs neg copysign testp setp set``),
``cvt`` with a float type on either side (the plain ``cvt.rn.{f16,bf16}x2.f32`` excepted: it has
its own fast path), and ``mov``/``selp`` of ``.f32``/``.f64`` with a float immediate.

Which forms exist is read from the isa: an arithmetic, min/max, sign or comparison instruction is
decoded when ``warpsim.isa.fpops.FLOAT_OPS`` has its ``(op, type)`` model and every modifier it
carries is one of that model's parameters (f64: ``warpsim.isa.fp64``, rounding ``.rn .rz .rm .rp``, no
``.ftz``/``.sat``); cvt forms are those ``warpsim.isa.cvt`` models (f64, f32, f16, bf16, tf32 and the
integers). Everything else with a float type is refused at load:

- MUFU approximations without a bit-exact model (``rsqrt.approx.ftz.f64``): ``UnsupportedType``, saying so
  (docs/numerics.md) -- the modelled ones are ``{ex2,rcp,rsqrt,sqrt,lg2}.approx{.ftz}.f32`` and
  ``tanh.approx.f32`` (``warpsim.isa.mufu32``: the SFU's datapaths and the SASS's scalings around them),
  ``{sin,cos}.approx{.ftz}.f32`` (``warpsim.isa.sfu_sincos``, decoded only while ``sfu_sincos.HARDWARE_PROOF``
  names its H200 proof, else refused naming the command that proves it), ``rcp.approx.ftz.f64``
  (``warpsim.isa.mufu_recip``: ``MUFU.RCP64H``) and the 16-bit forms ``ex2.approx.{f16,f16x2}``,
  ``ex2.approx.ftz.{bf16,bf16x2}`` and ``tanh.approx.{f16,bf16,f16x2,bf16x2}``, whose models
  (``warpsim.isa.mufu16``: the H200's results for every input) are in ``FLOAT_OPS`` with the modifiers they imply;
- a modifier the model does not take (``add.ftz.bf16``), a rounding other than ``.rn`` on 16-bit
  types, a cvt form PTX lacks (``cvt.rm.relu.f16.f32``, ``cvt.rn.sat.bf16.f32``): ``UnsupportedType``;
  a missing rounding modifier PTX requires (``fma.f32``, ``div.f32``, narrowing ``cvt``):
  ``PtxSyntaxError``.

``add``, ``sub`` and ``mul`` without a rounding modifier are the IEEE ``.rn`` operations, except the pairs ptxas
fuses into one FMA: :mod:`warpsim.ptx.contraction` decides those, and they arrive here as ``fma.rn`` with
``Instruction.fused`` set, which adds the ``neg_a``/``neg_c`` flags of a fused ``sub`` (docs/ptx.md, "Contraction").

Float immediates: ``0f`` (binary32 bits), ``0d`` and decimal literals (binary64) are converted to
the instruction's type as PTX does, rounding to nearest even (a binary64-to-binary32 conversion on
the host: IEEE 754, the same bits as the GPU's ``cvt.rn.f32.f64``).
"""

import numpy as np

from warpsim.errors import UnsupportedType
from warpsim.isa.cvt import FLOAT_CODES, INT_TYPES
from warpsim.isa.fpcompare import CMP as FCMP
from warpsim.isa.fpcompare import TESTP
from warpsim.isa.fpops import FLOAT_OPS as ISA_FLOAT_OPS
from warpsim.isa.rounding import INT_ROUNDING, ROUNDING
from warpsim.isa import sfu_sincos
from warpsim.ptx.families.floats.fpu import CVT_KINDS, FLAGS, FOPS, FORMATS
from warpsim.ptx.opcodes import BOOL, TK_BF, TK_BF16X2, TK_F, TK_F16X2, TYPES, Op
from warpsim.ptx.rows import K_IMM, K_NONE

__all__ = ["FloatDecoder", "MUFU_NAMES", "MUFU_REASON"]

MUFU_NAMES = ("ex2", "lg2", "rsqrt", "sin", "cos", "tanh")
MUFU32_NAMES = ("ex2", "rcp", "rsqrt", "sqrt", "lg2", "tanh")   # .approx{.ftz}.f32 (tanh: no .ftz): isa.mufu32
MUFU_REASON = "this MUFU approximation is not modelled bit-exactly yet; see docs/numerics.md"
_FLOAT_KINDS = (TK_F, TK_BF, TK_F16X2, TK_BF16X2)
_ARITH = {"add", "sub", "mul", "mad", "fma", "div", "sqrt", "rcp", "min", "max", "abs", "neg", "copysign"}
_NEEDS_ROUNDING = {"fma", "mad", "div", "sqrt", "rcp"}     # f32/f64 forms that PTX gives no default
# instruction modifiers -> the isa's parameter names
_FLAG_MODS = {"ftz": "ftz", "sat": "sat", "relu": "relu", "NaN": "nan_mode", "satfinite": "satfinite"}
_FROUND = ("rn", "rz", "rm", "rp")


def _name(ins):
    return ".".join((ins.opcode,) + tuple(ins.mods))


def _is_float(t):
    return t in TYPES and TYPES[t][0] in _FLOAT_KINDS


class FloatDecoder:
    """The float half of the instruction decoder (see the module docstring)."""

    def float_instruction(self, fn, ins):
        name, mods = ins.opcode, ins.mods
        types = [m for m in mods if m in TYPES or m == "tf32"]
        if name in ("ex2", "tanh") and types and (name, types[-1]) in ISA_FLOAT_OPS:
            self.float_mufu16(fn, ins, mods, types[-1])
            return True
        if name in MUFU32_NAMES and "approx" in mods and types == ["f32"]:
            self.float_mufu32(fn, ins, mods)
            return True
        if name == "div" and ("approx" in mods or "full" in mods) and types == ["f32"]:
            self.float_div32(fn, ins, mods)
            return True
        if name in ("sin", "cos") and "approx" in mods and types == ["f32"]:
            if sfu_sincos.HARDWARE_PROOF is None:
                raise self.error(ins.token, f"{_name(ins)}: {sfu_sincos.PENDING_REASON}", UnsupportedType)
            self.float_mufu32(fn, ins, mods)
            return True
        if name == "rcp" and "approx" in mods and types == ["f64"]:
            self.float_rcp64(fn, ins, mods)
            return True
        if name in MUFU_NAMES or (name in _ARITH and ("approx" in mods or "full" in mods)):
            raise self.error(ins.token, f"{_name(ins)}: {MUFU_REASON}", UnsupportedType)
        if name == "cvt":
            return self.float_cvt(fn, ins, mods, types)
        if not types or not _is_float(types[-1]):
            return False
        t = types[-1]
        if name in ("mov", "selp"):
            return self.float_move(fn, ins, t)
        if name not in _ARITH and name not in ("setp", "set", "testp"):
            return False
        if name == "setp":
            self.float_setp(fn, ins, mods, t)
        elif name == "set":
            self.float_set(fn, ins, mods, types)
        elif name == "testp":
            self.float_testp(fn, ins, mods, t)
        else:
            self.float_arith(fn, ins, mods, t)
        return True

    # modifiers ------------------------------------------------------------------------------------
    def model(self, ins, op, t):
        model = ISA_FLOAT_OPS.get((op, t))
        if model is None:
            raise self.error(ins.token, f"{_name(ins)}: warpsim.isa has no model of {op} on .{t}", UnsupportedType)
        return model

    def float_flags(self, ins, mods, model, known=()):
        """``M2``'s flags of ``mods``, each checked against ``model``'s parameters; unknown ones refused."""
        flags = 0
        for m in mods:
            param = _FLAG_MODS.get(m)
            if m in ("xorsign", "abs") and "xorsign" in mods and "abs" in mods:
                param = "xorsign_abs"
            if param is None:
                if m in TYPES or m in ROUNDING or m in known:
                    continue
                raise self.error(ins.token, f"{_name(ins)}: unknown modifier .{m}")
            if param not in model.modifiers:
                takes = ", ".join(model.modifiers)
                raise self.error(ins.token, f"{_name(ins)}: .{m} is not defined for {model.op}.{model.type} "
                                            f"(warpsim.isa's model takes: {takes})", UnsupportedType)
            flags |= FLAGS[param]
        if flags & FLAGS["sat"] and flags & FLAGS["relu"]:
            raise self.error(ins.token, f"{_name(ins)}: .sat and .relu exclude each other")
        return flags

    def rounding(self, ins, mods, t, required):
        given = [m for m in mods if m in ROUNDING]
        if not given:
            if required:
                raise self.error(ins.token, f"{_name(ins)}: needs a rounding modifier "
                                            f"(.{' .'.join(_FROUND)})")
            return ROUNDING["rn"]
        if given[0] not in _FROUND or (t not in ("f32", "f64") and given[0] != "rn"):
            allowed = ".rn .rz .rm .rp" if t in ("f32", "f64") else ".rn"
            raise self.error(ins.token, f"{_name(ins)}: .{given[0]} is not a rounding of .{t} ({allowed})",
                             UnsupportedType)
        return ROUNDING[given[0]]

    def float_operand(self, fn, o, t):
        """The opnd row of a source of a ``.t`` instruction; float immediates converted to ``t``."""
        if o.kind != "fimm":
            return self.operand(fn, o)
        if t not in ("f32", "f64"):
            raise self.error(o.token, f"a float immediate for .{t} (write its bits with mov.b16/mov.b32)")
        if t == "f32":
            bits = o.value if o.bits == 32 else int(np.float64(_as(o.value, np.uint64, np.float64))
                                                     .astype(np.float32).view(np.uint32))
            return self.add_opnd(K_IMM, imm=bits)
        bits = o.value if o.bits == 64 else int(np.float32(_as(o.value, np.uint32, np.float32))
                                                .astype(np.float64).view(np.uint64))
        return self.add_opnd(K_IMM, imm=bits - (1 << 64) if bits >= 1 << 63 else bits)

    # instructions ---------------------------------------------------------------------------------
    def float_arith(self, fn, ins, mods, t):
        op = "fma" if ins.opcode == "mad" else ins.opcode
        model = self.model(ins, op, t)
        flags = self.float_flags(ins, mods, model)
        rnd = 0
        if "rnd" in model.modifiers:
            rnd = self.rounding(ins, mods, t, required=t in ("f32", "f64") and ins.opcode in _NEEDS_ROUNDING)
        elif any(m in ROUNDING for m in mods):
            raise self.error(ins.token, f"{_name(ins)}: {op}.{t} takes no rounding modifier")
        if ins.fused:                                   # a contracted add/sub: fma with the sub's negation
            flags |= FLAGS["neg_a"] * ins.fused[1] | FLAGS["neg_c"] * ins.fused[2]
        self.count(ins, ins.operands, len(model.sources) + 1)
        d, *srcs = ins.operands
        rows = [self.operand(fn, d)] + [self.float_operand(fn, o, t) for o in srcs]
        self.emit(fn, ins, Op.FARITH, (t, None), (FOPS.index(op), rnd, flags, 0), rows)

    def float_mufu16(self, fn, ins, mods, t):
        """``ex2``/``tanh`` on a 16-bit type: exactly the modifiers its model implies (``.approx``, and
        ``.ftz`` for ex2 on bf16), as PTX writes them."""
        model = ISA_FLOAT_OPS[(ins.opcode, t)]
        if tuple(m for m in mods if m != t) != model.implied:
            want = ".".join((ins.opcode,) + model.implied + (t,))
            raise self.error(ins.token, f"{_name(ins)}: PTX's form on .{t} is {want}", UnsupportedType)
        self.count(ins, ins.operands, 2)
        d, a = ins.operands
        rows = [self.operand(fn, d), self.float_operand(fn, a, t)]
        self.emit(fn, ins, Op.FARITH, (t, None), (FOPS.index(ins.opcode), 0, 0, 0), rows)

    def float_mufu32(self, fn, ins, mods):
        """``{ex2,rcp,rsqrt,sqrt,lg2}.approx{.ftz}.f32``, ``tanh.approx.f32``: the H200's MUFU (``warpsim.isa.mufu32``);
        ``{sin,cos}.approx{.ftz}.f32`` (``warpsim.isa.sfu_sincos``) once its proof is recorded."""
        extra = [m for m in mods if m not in ("approx", "f32") and (m != "ftz" or ins.opcode == "tanh")]
        if extra:
            takes = "no other modifier" if ins.opcode == "tanh" else "it takes .ftz"
            raise self.error(ins.token, f"{_name(ins)}: .{extra[0]} is not a modifier of {ins.opcode}.approx.f32 "
                                        f"({takes})", UnsupportedType)
        self.count(ins, ins.operands, 2)
        d, a = ins.operands
        flags = FLAGS["approx"] | (FLAGS["ftz"] if "ftz" in mods else 0)
        rows = [self.operand(fn, d), self.float_operand(fn, a, "f32")]
        self.emit(fn, ins, Op.FARITH, ("f32", None), (FOPS.index(ins.opcode), 0, flags, 0), rows)

    def float_rcp64(self, fn, ins, mods):
        """``rcp.approx.ftz.f64``: ``MUFU.RCP64H`` of the high word (``warpsim.isa.mufu_recip``); PTX defines
        no other ``rcp.approx`` form of ``.f64``, so ``.ftz`` is required."""
        extra = [m for m in mods if m not in ("approx", "ftz", "f64")]
        if extra or "ftz" not in mods:
            why = f".{extra[0]} is not a modifier of it" if extra else ".ftz is required"
            raise self.error(ins.token, f"{_name(ins)}: {why} (the one form is rcp.approx.ftz.f64)", UnsupportedType)
        self.count(ins, ins.operands, 2)
        d, a = ins.operands
        rows = [self.operand(fn, d), self.float_operand(fn, a, "f64")]
        self.emit(fn, ins, Op.FARITH, ("f64", None), (FOPS.index("rcp"), 0, FLAGS["approx"] | FLAGS["ftz"], 0), rows)

    def float_div32(self, fn, ins, mods):
        """``div.approx{.ftz}.f32`` and ``div.full{.ftz}.f32``: ``MUFU.RCP`` and the SASS's scalings."""
        kind = "approx" if "approx" in mods else "full"
        extra = [m for m in mods if m not in (kind, "ftz", "f32")]
        if extra:
            raise self.error(ins.token, f"{_name(ins)}: .{extra[0]} is not a modifier of div.{kind}.f32 "
                                        f"(it takes .ftz)", UnsupportedType)
        flags = FLAGS[kind] | (FLAGS["ftz"] if "ftz" in mods else 0)
        if ins.fused:                                   # its product fused with an add (warpsim.ptx.contraction)
            flags |= FLAGS["addend"] | FLAGS["neg_a"] * ins.fused[1] | FLAGS["neg_c"] * ins.fused[2]
        self.count(ins, ins.operands, 4 if ins.fused else 3)
        d, *srcs = ins.operands
        rows = [self.operand(fn, d)] + [self.float_operand(fn, o, "f32") for o in srcs]
        self.emit(fn, ins, Op.FARITH, ("f32", None), (FOPS.index("div"), 0, flags, 0), rows)

    def comparison(self, ins, mods):
        cmp = next((m for m in mods if m in FCMP), None)
        if cmp is None:
            raise self.error(ins.token, f"{_name(ins)}: unknown comparison (float ones: {', '.join(FCMP)})")
        return FCMP[cmp]

    def float_setp(self, fn, ins, mods, t):
        model = self.model(ins, "setp", t)
        cmp = self.comparison(ins, mods)
        flags = self.float_flags(ins, mods, model, known=set(FCMP) | set(BOOL))
        boolop = next((BOOL[m] for m in mods if m in BOOL), 0)
        ops = ins.operands
        self.count(ins, ops, 4 if boolop else 3)
        d = ops[0]
        p = self.operand(fn, d, pred=True)
        q = self.operand(fn, d.pair, pred=True) if d.pair is not None else self.add_opnd(K_NONE)
        rows = [p, q, self.float_operand(fn, ops[1], t), self.float_operand(fn, ops[2], t)]
        if boolop:
            rows.append(self.operand(fn, ops[3], pred=True))
        self.emit(fn, ins, Op.FSETP, (t, None), (cmp, boolop, flags, 0), rows)

    def float_set(self, fn, ins, mods, types):
        if len(types) != 2:
            raise self.error(ins.token, f"{_name(ins)}: set needs a destination and a source type")
        dt, st = types
        if any(m in BOOL for m in mods):
            raise self.error(ins.token, f"{_name(ins)}: set with .and/.or/.xor is not modelled (use setp)",
                             UnsupportedType)
        model = self.model(ins, "set", st)
        dtypes = ("u32", "s32", "f32") if st in ("f32", "f64") else ("u32", st)
        if dt not in dtypes:
            raise self.error(ins.token, f"{_name(ins)}: the destination of set on .{st} is one of "
                                        f".{' .'.join(dtypes)}", UnsupportedType)
        cmp = self.comparison(ins, mods)
        flags = self.float_flags(ins, mods, model, known=set(FCMP))
        flags |= FLAGS["as_float"] if _is_float(dt) else 0
        self.count(ins, ins.operands, 3)
        d, a, b = ins.operands
        rows = [self.operand(fn, d), self.float_operand(fn, a, st), self.float_operand(fn, b, st)]
        self.emit(fn, ins, Op.FSET, (st, None), (cmp, 0, flags, 0), rows)

    def float_testp(self, fn, ins, mods, t):
        self.model(ins, "testp", t)
        cls = next((m for m in mods if m in TESTP), None)
        if cls is None:
            raise self.error(ins.token, f"{_name(ins)}: unknown class (known: {', '.join(TESTP)})")
        self.count(ins, ins.operands, 2)
        p, a = ins.operands
        rows = [self.operand(fn, p, pred=True), self.float_operand(fn, a, t)]
        self.emit(fn, ins, Op.FTESTP, (t, None), (TESTP[cls], 0, 0, 0), rows)

    def float_move(self, fn, ins, t):
        ops = ins.operands
        if t not in ("f32", "f64") or not any(o.kind == "fimm" for o in ops):
            return False                                   # bits moved as they are: the integer decoder
        op = Op.MOV if ins.opcode == "mov" else Op.SELP
        self.count(ins, ops, 2 if op == Op.MOV else 4)
        rows = [self.operand(fn, ops[0])] + [self.float_operand(fn, o, t) for o in ops[1:3]]
        if op == Op.SELP:
            rows.append(self.operand(fn, ops[3], pred=True))
        self.emit(fn, ins, op, (t, None), operands=rows)
        return True

    def float_cvt(self, fn, ins, mods, types):
        if len(types) != 2 or not any(_is_float(x) or x == "tf32" for x in types):
            return False
        dt, st = types
        x2 = dt in ("f16x2", "bf16x2")
        if x2 and st == "f32" and "rn" in mods and "relu" not in mods and "satfinite" not in mods:
            return False                                   # the tensor-core programs' pack: its own path
        name = _name(ins)
        if "f64" in types:
            self._check_f64_cvt(ins, name, dt, st, mods)
        given = [m for m in mods if m not in types]
        irnd = [m for m in given if m in INT_ROUNDING]
        frnd = [m for m in given if m in ROUNDING]
        flags = 0
        for m in given:
            if m in _FLAG_MODS:
                flags |= FLAGS[_FLAG_MODS[m]]
            elif m not in INT_ROUNDING and m not in ROUNDING:
                raise self.error(ins.token, f"{name}: unknown modifier .{m}")
        if flags & (FLAGS["relu"] | FLAGS["satfinite"]) and not (st == "f32" and (x2 or dt in ("f16", "bf16", "tf32"))):
            raise self.error(ins.token, f"{name}: .relu and .satfinite are defined for f32 to f16/bf16/tf32 "
                                        f"(and their x2 packs) only", UnsupportedType)
        if st == "tf32":
            raise self.error(ins.token, f"{name}: tf32 is a destination type only", UnsupportedType)
        src_int, dst_int = st in INT_TYPES, dt in INT_TYPES
        if x2:
            if st != "f32" or irnd or not frnd or frnd[0] not in ("rn", "rz"):
                raise self.error(ins.token, f"{name}: the x2 packs are cvt.{{rn,rz}}[.relu][.satfinite]."
                                            f"{{f16x2,bf16x2}}.f32 d, a, b", UnsupportedType)
            self.count(ins, ins.operands, 3)
            kind, fmts, rnd = "pack_x2", FORMATS.index(dt[:-2]), ROUNDING[frnd[0]]
        elif dst_int or (st == dt and irnd):
            if not irnd:
                raise self.error(ins.token, f"{name}: a float-to-integer cvt needs .rni, .rzi, .rmi or .rpi")
            kind, rnd = ("to_int" if dst_int else "round_int"), INT_ROUNDING[irnd[0]]
            fmts = FORMATS.index(st) * 8
        elif src_int:
            if dt == "tf32" or not frnd or frnd[0] not in _FROUND:
                raise self.error(ins.token, f"{name}: an integer-to-float cvt needs .rn, .rz, .rm or .rp "
                                            f"(to f32, f16 or bf16)")
            kind, fmts, rnd = "from_int", FORMATS.index(dt), ROUNDING[frnd[0]]
        else:
            if st not in FLOAT_CODES or dt not in FLOAT_CODES:
                raise self.error(ins.token, f"{name}: warpsim.isa models cvt between "
                                            f"{', '.join(FLOAT_CODES)} and the integers", UnsupportedType)
            s_eb, s_fb, _ = FLOAT_CODES[st]
            d_eb, d_fb, d_shift = FLOAT_CODES[dt]
            narrowing = d_eb < s_eb or d_fb < s_fb
            if irnd:
                raise self.error(ins.token, f"{name}: .{irnd[0]} rounds to an integer in the same format only")
            if narrowing and not frnd:
                raise self.error(ins.token, f"{name}: a narrowing cvt needs a rounding modifier")
            allowed = ("rna", "rn", "rz") if dt == "tf32" else _FROUND
            if frnd and frnd[0] not in allowed:
                raise self.error(ins.token, f"{name}: .{frnd[0]} is not a rounding of cvt to .{dt} "
                                            f"(.{' .'.join(allowed)})", UnsupportedType)
            if st == "f32" and dt in ("f16", "bf16"):
                self._check_narrow_half(ins, name, dt, frnd[0], flags)
            kind, fmts = "float", FORMATS.index(st) * 8 + FORMATS.index(dt)
            rnd = ROUNDING[frnd[0]] if frnd else ROUNDING["rn"]
        if kind != "pack_x2":
            self.count(ins, ins.operands, 2)
        rows = [self.operand(fn, o) for o in ins.operands]
        row_types = ("b32" if dt == "tf32" else dt, st)              # tf32: an f32 register
        self.emit(fn, ins, Op.FCVT, row_types, (CVT_KINDS.index(kind), rnd, flags, fmts), rows)
        return True

    def _check_f64_cvt(self, ins, name, dt, st, mods):
        """Refuse the cvt forms with an f64 side that PTX lacks: tf32 is made from f32 only, and ``.ftz``
        needs an f32 side (PTX "cvt": ".ftz ... may be specified only when either .dtype or .atype is .f32")."""
        if dt == "tf32":
            raise self.error(ins.token, f"{name}: cvt to .tf32 takes an .f32 source", UnsupportedType)
        if "ftz" in mods and "f32" not in (dt, st):
            raise self.error(ins.token, f"{name}: .ftz needs an .f32 source or destination", UnsupportedType)

    def _check_narrow_half(self, ins, name, dt, rnd, flags):
        """Refuse the f32 -> f16/bf16 forms PTX lacks (and the H200's driver JIT refuses as invalid PTX).

        PTX ISA, "cvt": ``cvt.frnd2{.relu}{.satfinite}.{f16,bf16}.f32`` with ``.frnd2 = {.rn, .rz}``, so
        ``.relu``/``.satfinite`` take ``.rn``/``.rz`` only; ``.sat`` is not a modifier of cvt to bf16.
        """
        if flags & (FLAGS["relu"] | FLAGS["satfinite"]) and rnd not in ("rn", "rz"):
            raise self.error(ins.token, f"{name}: .relu and .satfinite take .rn or .rz only "
                                        f"(PTX: cvt.{{rn,rz}}{{.relu}}{{.satfinite}}.{dt}.f32)", UnsupportedType)
        if dt == "bf16" and flags & FLAGS["sat"]:
            raise self.error(ins.token, f"{name}: .sat is not a modifier of cvt to .bf16 "
                                        f"(PTX: cvt.{{rn,rz}}{{.relu}}{{.satfinite}}.bf16.f32)", UnsupportedType)


def _as(bits, utype, ftype):
    """``bits`` (an int) read as the float of ``ftype``'s width."""
    return np.array([bits], utype).view(ftype)[0]
