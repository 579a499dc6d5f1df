"""What ptxas makes of a PTX instruction: its SASS, compared between architectures without a GPU.

A PTX form whose bits warpsim models from one GPU (the H200, sm_90) carries to another architecture only as
far as the machine code does: if ptxas emits the same SASS for sm_80 and sm_90, the two GPUs run the same
instructions and the remaining question is the functional unit's own bits (docs/numerics.md, "What carries
to sm_80"). This module answers the first part offline:

- :func:`form_kernel` writes a one-instruction kernel (load the operands, the instruction, store the result);
- :func:`disassemble` assembles PTX with ``ptxas`` and disassembles the cubin with ``nvdisasm``;
- :func:`arithmetic` keeps the instructions between the loads and the store, registers renamed in order of
  appearance, so that two architectures' register allocation and addressing do not hide equal code.

``ptxas`` comes with the CUDA toolkit (beside ``nvcc``); ``nvdisasm`` from the toolkit or from the PyPI
package ``nvidia-cuda-nvdisasm`` (a test dependency). :func:`find_tool` says which it found, or None.

>>> arithmetic(["LDG.E R0, desc[UR4][R2.64] ;", "@!P0 FMUL R0, R0.reuse, 0.5 ;", "MUFU.EX2 R5, R0 ;",
...             "STG.E desc[UR4][R2.64], R5 ;"])
['@!P0 FMUL r0, r0, 0.5', 'MUFU.EX2 r1, r0']
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from warpsim.toolchain import find_tool

__all__ = ["SassError", "find_tool", "form_kernel", "disassemble", "arithmetic", "form_arithmetic"]


class SassError(RuntimeError):
    """ptxas or nvdisasm refused or failed; the message names the tool, the architecture and its output."""


# PTX register type of each operand type
_REG = {"f32": "f32", "f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32", "f64": "f64"}
_BYTES = {"f32": 4, "b16": 2, "b32": 4, "f64": 8}


def form_kernel(instruction, operand_type, arity, arch):
    """A kernel ``k(ptr)`` that loads ``arity`` operands of ``operand_type`` from ``ptr``, runs
    ``instruction d, a[, b[, c]];`` and stores ``d`` at ``ptr``.

    >>> "ex2.approx.f32 %v0, %v1;" in form_kernel("ex2.approx.f32", "f32", 1, "sm_90")
    True
    """
    if operand_type not in _REG:
        raise ValueError(f"form_kernel: operand type {operand_type!r} is not one of {sorted(_REG)}")
    reg = _REG[operand_type]
    size = _BYTES[reg]
    loads = "\n".join(f"  ld.global.{reg} %v{i + 1}, [%rd2+{i * size}];" for i in range(arity))
    ops = ", ".join(f"%v{i + 1}" for i in range(arity))
    return (f".version 8.0\n.target {arch}\n.address_size 64\n"
            f".visible .entry k(.param .u64 p)\n{{\n"
            f"  .reg .b64 %rd<3>;\n  .reg .{reg} %v<{arity + 1}>;\n"
            f"  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n{loads}\n"
            f"  {instruction} %v0, {ops};\n  st.global.{reg} [%rd2], %v0;\n  ret;\n}}\n")


def disassemble(ptx, arch):
    """The SASS instructions (text, one per item, without addresses) of ``ptx`` assembled for ``arch``."""
    ptxas, nvdisasm = find_tool("ptxas"), find_tool("nvdisasm")
    if ptxas is None or nvdisasm is None:
        raise SassError(f"disassemble: needs ptxas and nvdisasm (found ptxas={ptxas}, nvdisasm={nvdisasm}); "
                        "nvdisasm: pip install nvidia-cuda-nvdisasm")
    with tempfile.TemporaryDirectory(prefix="warpsim-sass-") as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        for cmd in ([ptxas, f"-arch={arch}", str(src), "-o", str(cubin)], [nvdisasm, "-c", str(cubin)]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise SassError(f"{Path(cmd[0]).name} for {arch} failed (exit {done.returncode}): "
                                f"{' '.join((done.stderr or done.stdout).split())[:400]}")   # one line
    return [m.group(1).strip() for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", done.stdout)]


_MEMORY = re.compile(r"^(@!?P\d+\s+)?(LDG|STG|LDC|ULDC|EXIT|BRA|NOP)\b")
_PARAMETER_MOVE = re.compile(r"^(MOV|IMAD\.MOV\.U32)\b.*c\[0x0\]")     # a kernel parameter or the stack pointer
_REGISTER = re.compile(r"\bR(\d+)\b")


def arithmetic(sass):
    """The instructions of a :func:`form_kernel` between its loads and its store, with general registers
    renamed ``r0, r1, ...`` in order of first appearance and the operand-cache hints (``.reuse``) dropped:
    predicates, immediates and modifiers are kept."""
    body = [s.rstrip(" ;").replace(".reuse", "") for s in sass if not _MEMORY.match(s.strip()) and not _PARAMETER_MOVE.match(s.strip())]
    names = {}

    def rename(m):
        return f"r{names.setdefault(m.group(1), len(names))}"

    return [_REGISTER.sub(rename, s) for s in body]


def form_arithmetic(instruction, operand_type, arity, arch):
    """``arithmetic(disassemble(form_kernel(...), arch))``: the SASS ptxas makes of one PTX form."""
    return arithmetic(disassemble(form_kernel(instruction, operand_type, arity, arch), arch))
