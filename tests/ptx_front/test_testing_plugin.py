"""warpsim.testing: assert_bits_equal's messages, and the plugin run by pytest on a user's project."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from warpsim.testing import assert_bits_equal, bits_differences


def has_interpreter():
    try:
        from warpsim import ptx
    except ImportError:
        return False
    return hasattr(ptx, "load")


ROOT = Path(__file__).resolve().parents[2]


def test_equal_bits_pass():
    assert_bits_equal(np.float32([0.0, np.nan]), np.float32([0.0, np.nan]))
    assert_bits_equal(np.arange(6, dtype=np.uint16).reshape(2, 3), np.arange(6, dtype=np.uint16).reshape(2, 3))


def test_messages_name_elements_hex_and_decoded():
    got = np.float32([[1.0, 2.0], [-0.0, 4.0]])
    want = np.float32([[1.0, 2.5], [0.0, 4.0]])
    with pytest.raises(AssertionError) as e:
        assert_bits_equal(got, want, name="s", where=lambda i: f"CTA 0 lane {i[0] * 4} reg {i[1]}")
    assert str(e.value).splitlines() == [
        "s: 2 of 4 elements differ (decoded as f32):",
        "  [0, 1] (CTA 0 lane 0 reg 1): got 0x40000000, want 0x40200000: 2.0 vs 2.5",
        "  [1, 0] (CTA 0 lane 4 reg 0): got 0x80000000, want 0x00000000: -0.0 vs 0.0",
    ]


def test_bf16_integers_shapes_and_limit():
    lines = bits_differences(np.uint16([0x3F80]), np.uint16([0x4000]), dtype="bf16")
    assert lines[1] == "  [0]: got 0x3f80, want 0x4000: 1.0 vs 2.0"
    assert bits_differences(np.int32([5]), np.int32([-1]))[1] == "  [0]: got 0x00000005, want 0xffffffff: 5 vs -1"
    assert bits_differences(np.zeros(3), np.zeros(4)) == ["shape differs: got (3,), want (4,)"]
    many = bits_differences(np.zeros(40, np.uint32), np.ones(40, np.uint32), limit=4)
    assert len(many) == 6 and many[-1] == "  ... and 36 more"


USER_TEST = '''
import numpy as np
from warpsim.testing import assert_bits_equal

def test_same():
    assert_bits_equal(np.float32([1, 2]), np.float32([1, 2]))

def test_differs():
    assert_bits_equal(np.float32([1, 2]), np.float32([1, 3]), name="y")

def test_fixture_missing_kernel(warpsim_kernel):
    warpsim_kernel("add_index.ptx", "nope")
'''

USER_KERNEL_TEST = '''
import numpy as np
from warpsim.testing import assert_bits_equal

def test_add_index(warpsim_kernel):
    k = warpsim_kernel("add_index.ptx", "add_index", arch="sm_80")
    x = np.arange(200, dtype=np.uint32)
    res = k.launch(grid=2, block=128, args={"x": x, "y": np.zeros(200, np.uint32), "n": 200})
    assert_bits_equal(k.buffers(res)["y"].view(np.uint32).reshape(-1), 2 * x)
'''


def run_user_project(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    shutil.copy(ROOT / "examples/ptx/add_index.ptx", tmp_path)
    # the plugin by name, with entry-point plugins off: the same run whether or not warpsim is installed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "warpsim.testing", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    return done.stdout + done.stderr


def test_plugin_on_a_user_project(tmp_path):
    out = run_user_project(tmp_path, {"test_user.py": USER_TEST})
    assert "2 failed, 1 passed" in out, out
    assert "AssertionError: y: 1 of 2 elements differ (decoded as f32):" in out
    assert "[1]: got 0x40000000, want 0x40400000: 2.0 vs 3.0" in out
    assert "--kernel nope: no such kernel; the module has: add_index" in out


@pytest.mark.skipif(not has_interpreter(), reason="the PTX interpreter (warpsim.ptx.load) is not in this tree yet")
def test_plugin_launches_a_kernel(tmp_path):
    out = run_user_project(tmp_path, {"test_kernel.py": USER_KERNEL_TEST})
    assert "1 passed" in out, out


def test_plugin_entry_point_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\nwarpsim = "warpsim.testing"' in text
