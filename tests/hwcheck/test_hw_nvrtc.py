"""Every campaign kernel compiles with NVRTC for sm_90, with CuPy's options, and holds its instruction."""

import re

import pytest

from hwcheck.device.kernels import all_kernels, module_source
from hwcheck.device.nvrtc import CUPY_OPTIONS, NvrtcError, compile_cuda, gpu_arch


@pytest.fixture(scope="module")
def compiled_campaign_module(nvrtc):
    return compile_cuda(module_source(all_kernels()), arch="sm_90", name="campaign.cu")


def _ptx_functions(ptx):
    """PTX text of each .entry, by name."""
    parts = re.split(r"\.visible \.entry ", ptx)[1:]
    return {p[:p.index("(")]: p for p in parts}


def test_every_campaign_kernel_compiles_for_sm90(compiled_campaign_module):
    kernels = all_kernels()
    assert len(kernels) == 14 and len({k.name for k in kernels}) == 14
    c = compiled_campaign_module
    assert c.log == "", f"NVRTC warned:\n{c.log}"
    assert c.cubin[:4] == b"\x7fELF"
    functions = _ptx_functions(c.ptx)
    for k in kernels:
        assert k.name in functions, f"{k.name}: no .entry in the PTX"
        body = functions[k.name]
        assert body.count(k.ptx + " ") == 1, f"{k.name}: {k.ptx} appears {body.count(k.ptx + ' ')} times"
        assert k.name.encode() in c.cubin, f"{k.name}: not in the cubin"


def test_each_kernel_compiles_alone(nvrtc):
    for k in all_kernels()[::5]:   # a sample: the whole module is compiled above
        assert compile_cuda(k.source, name=f"{k.name}.cu").log == ""


def test_compile_error_carries_the_log(nvrtc):
    with pytest.raises(NvrtcError) as e:
        compile_cuda('extern "C" __global__ void k() { undefined_thing(); }', name="broken.cu")
    assert "broken.cu" in str(e.value) and "sm_90" in str(e.value)
    assert "undefined_thing" in e.value.log


def test_options_and_arch():
    assert CUPY_OPTIONS == ("--std=c++17", "-ftz=true")
    assert gpu_arch("sm_90") == gpu_arch("sm90") == gpu_arch(90) == "sm_90"
    for bad in ("compute_90", "sm_9x", "", True, "90a"):
        with pytest.raises(ValueError, match="arch"):
            gpu_arch(bad)
    with pytest.raises(TypeError, match="source"):
        compile_cuda(b"bytes")


def test_other_arch_compiles(nvrtc):
    c = compile_cuda(module_source(all_kernels()[:1]), arch="sm_80")
    assert c.arch == "sm_80" and ".target sm_80" in c.ptx


def test_missing_libnvrtc_is_one_hwcheck_error(monkeypatch):
    import types

    import hwcheck.device.nvrtc as mod
    from hwcheck.errors import HwcheckError

    def not_found():
        raise RuntimeError("Failure finding libnvrtc.so")
    monkeypatch.setattr(mod, "_nvrtc", lambda: types.SimpleNamespace(nvrtcVersion=not_found))
    with pytest.raises(HwcheckError, match=r"^hwcheck: NVRTC is not available \(pip install cuda-bindings "
                                           r"nvidia-cuda-nvrtc\): Failure finding libnvrtc.so$"):
        compile_cuda("int x;")


def test_a_compile_leaves_pythons_one_byte_objects_alone(nvrtc):
    """NVRTC writes its log into the buffer it is given; an empty log is one NUL. Written into ``b" " * 1`` (CPython's
    shared one-byte object) it made every later ``b" "`` of the process a NUL (np.savez then wrote broken headers).
    Run in a fresh interpreter, so that a failure here cannot spoil the other tests' process."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    code = ("from hwcheck.device.nvrtc import compile_cuda\n"
            "c = compile_cuda('extern \"C\" __global__ void k() {}', arch='sm_90')\n"
            "assert c.log == '', c.log\n"
            "print(bytes([32])[0], (b'-' + bytes([32]) * 3).hex())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["32", "2d202020"]
