"""The lowering of hwcheck.device.lower compiles with NVRTC for sm_90 (as CuPy would call it), for a stream
that holds every instruction kind, in uniform phases and in per-warp (divergent) phases."""

import re

import numpy as np

from hwcheck.device.lower import KERNEL_NAME, lower
from hwcheck.device.nvrtc import compile_cuda
from warpsim.program.instr import MMA_REGS, Instr, Op


def _rows(base, stride=16):
    return base + np.arange(32, dtype=np.int64) * stride


def every_kind_stream(warps=2):
    """A stream using MOV, LD/ST (shared and global, 16..128 bits), every ldmatrix variant, every mma
    shape and type, both cvt, and BAR; the first phase is uniform, the second differs per warp."""
    s = []
    for w in range(warps):
        s.append(Instr(Op.MOV, w, dst=(0, 1), imm=0x3C003C00))
        for bits, regs in ((32, (2,)), (64, (2, 3)), (128, (2, 3, 4, 5))):
            s.append(Instr(Op.ST, w, src=regs, addr=_rows(0, 16), space="shared", bits=bits))
            s.append(Instr(Op.LD, w, dst=regs, addr=_rows(0, 16), space="shared", bits=bits))
            s.append(Instr(Op.ST, w, src=regs, addr=_rows(512, 16), space="global", bits=bits))
            s.append(Instr(Op.LD, w, dst=regs, addr=_rows(512, 16), space="global", bits=bits))
        for half in (0, 1):
            for space in ("shared", "global"):
                s.append(Instr(Op.ST, w, src=(6,), addr=_rows(0, 2), space=space, bits=16, half=half))
                s.append(Instr(Op.LD, w, dst=(6,), addr=_rows(0, 2), space=space, bits=16, half=half))
        for num in (1, 2, 4):
            for trans in (False, True):
                s.append(Instr(Op.LDMATRIX, w, dst=tuple(range(8, 8 + num)), addr=_rows(0), num=num, trans=trans))
        s.append(Instr(Op.BAR, w))
    for w in range(warps):   # a per-warp phase: each warp runs a different mix
        for shape in ("m16n8k16", "m16n8k8"):
            for ab, cd in (("f16", "f32"), ("bf16", "f32"), ("f16", "f16")):
                if (shape == "m16n8k8") == (w == 0):
                    continue
                na, nb, nc = MMA_REGS[(shape, cd)]
                src = tuple(range(12, 12 + na + nb + nc))
                s.append(Instr(Op.MMA, w, dst=tuple(range(30, 30 + nc)), src=src, shape=shape, ab=ab, cd=cd))
        s.append(Instr(Op.CVT, w, dst=(7,), src=(30, 31), ab="f16" if w == 0 else "bf16"))
        s.append(Instr(Op.BAR, w))
    return s


def test_lowered_stream_with_every_instruction_kind_compiles(nvrtc):
    stream = every_kind_stream()
    low = lower(stream, warps=2, regs=34, smem_bytes=1024)
    compiled = compile_cuda(low.source, arch="sm_90", name="lowered.cu")
    assert compiled.log == "", f"NVRTC warned on the lowered kernel:\n{compiled.log}"
    assert f".entry {KERNEL_NAME}(" in compiled.ptx
    ptx_ops = set(re.findall(r"^\s*((?:mma|ldmatrix|cvt\.rn|ld|st|bar)\.[\w.]+)", compiled.ptx, re.M))
    missing = sorted({i.ptx for i in stream if i.op not in (Op.MOV, Op.BAR)} - ptx_ops)
    assert not missing, f"instructions of the stream absent from the PTX: {missing}"
    assert any(op.startswith("bar.sync") for op in ptx_ops), "bar.sync absent from the PTX"
    assert low.snap_positions > 0 and (low.snap_slots >= 0).any()
