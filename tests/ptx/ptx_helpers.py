"""Small PTX kernels for the tests: a header, parameters and a body."""

import shutil
import subprocess

import pytest

import warpsim.ptx

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

REGS = """
  .reg .pred %p<8>;
  .reg .b16 %h<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<40>;
"""

# %r0 = global thread index, %rd0 = 4 * %r0; pointer params loaded into %rd10.. in order
PROLOGUE = """
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r0, %r2, %r3, %r1;
  mul.wide.u32 %rd0, %r0, 4;
"""


def kernel(body, params=("out",), name="k", extra="", prologue=True, decls=""):
    """PTX text of kernel ``name`` with ``.u64`` pointer ``params`` loaded into ``%rd10, %rd11, ...``."""
    plist = ", ".join(f".param .u64 {p}" for p in params)
    loads = "".join(f"  ld.param.u64 %rd{10 + k}, [{p}];\n" for k, p in enumerate(params))
    return (f"{HEADER}{extra}\n.visible .entry {name}({plist})\n{{{REGS}{decls}\n"
            f"{PROLOGUE if prologue else ''}{loads}{body}\n  ret;\n}}\n")


def load(body, **kw):
    return warpsim.ptx.load(kernel(body, **kw))


def store_r(reg, ptr="%rd10"):
    """Store 32-bit ``reg`` to ``ptr[thread]``."""
    return f"  add.s64 %rd30, {ptr}, %rd0;\n  st.global.u32 [%rd30], {reg};\n"


def nvcc_ptx(tmp_path, source, arch="sm_80", flags=()):
    """Compile CUDA ``source`` to PTX with ``nvcc -ptx -lineinfo`` (and ``flags``); skip when nvcc is missing."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    cu = tmp_path / "k.cu"
    cu.write_text(source)
    out = tmp_path / "k.ptx"
    subprocess.run([nvcc, "-ptx", "-lineinfo", f"-arch={arch}", *flags, "-o", str(out), str(cu)], check=True,
                   capture_output=True, cwd=tmp_path)
    return out
