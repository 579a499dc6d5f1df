"""``warpsim explain`` through the command line (subprocess) and ``warpsim.explain``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import warpsim
from warpsim import cute

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    return subprocess.run([sys.executable, "-m", "warpsim", "explain", *args], capture_output=True, text=True,
                          cwd=ROOT)


def seed_tensors():
    kv = cute.tile_to_shape(cute.composition(cute.Swizzle(3, 3, 3), cute.make_layout((8, 64), (64, 1))), (64, 64))
    return {"Q": cute.make_tensor(cute.make_smem_ptr(0, "f16"), kv),
            "K": cute.make_tensor(cute.make_smem_ptr(8192, "f16"), kv),
            # V(key, d) is written with the K layout; V^T(d, key) is the same element
            "Vt": cute.make_tensor(cute.make_smem_ptr(16384, "f16"), kv)}


def test_seed_text():
    proc = run("--config", "seed", "--threads", "0,5")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "thread 0 (warp 0, lane 0)" in out and "thread 5 (warp 0, lane 5)" in out
    assert "MMA view (fragment)    ((_2,_2),_8,(_2,_2)):((_1,_2),_4,(_32,_64))" in out
    assert "copy view (retile_D)   ((_8,_1),_4,_4):((_1,_0),_8,_32)" in out
    assert "MMA view (fragment)    ((_2,_2),_8,_4):((_1,_2),_4,_32)" in out          # V^T, the seed's MMA 视图
    assert "MMA partition          ((_2,_2),_8,(_2,_2)):((_1,-8),_512,(16,32))" in out  # K, thread 5


def test_seed_json_schema_and_addresses():
    proc = run("--config", "seed", "--threads", "0,37", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["config"] == "seed" and [t["thread"] for t in report["threads"]] == [0, 37]
    smem = seed_tensors()
    for th in report["threads"]:
        assert (th["warp"], th["lane"]) == (th["thread"] // 32, th["thread"] % 32)
        assert [f["name"] for f in th["fragments"]] == ["Q", "K", "Vt"]
        for f in th["fragments"]:
            n_slots = len(f["slots"])
            assert n_slots == (32 if f["operand"] == "A" else 128) and f["dtype"] == "f16"
            assert sorted(s["slot"] for s in f["slots"]) == list(range(n_slots))
            assert sorted(s["copy_index"] for s in f["slots"]) == list(range(n_slots))
            for s in f["slots"]:
                assert s["register"] == s["slot"] // 2 and s["half"] == s["slot"] % 2
                r, c = (s["col"], s["row"]) if f["name"] == "Vt" else (s["row"], s["col"])
                assert s["address"] == smem[f["name"]].address(r, c), (th["thread"], f["name"], s)
                assert s["row_address"] <= s["address"] < s["row_address"] + 16 and s["row_address"] % 16 == 0


def test_ptx_fragment_of_thread_0():
    """K is B: thread 0 (g = t = 0) holds (n 0, k 0..1) in r0 and (n 0, k 8..9) in r1 (PTX ISA)."""
    k = warpsim.explain("seed", [0])["threads"][0]["fragments"][1]
    assert [(s["row"], s["col"]) for s in k["slots"][:4]] == [(0, 0), (0, 1), (0, 8), (0, 9)]


def test_config_file():
    proc = run("--config", "examples/explain_config.py", "--threads", "0-1,127")
    assert proc.returncode == 0, proc.stderr
    assert "thread 127 (warp 3, lane 31)" in proc.stdout and "bf16" in proc.stdout


@pytest.mark.parametrize("text, message", [
    ("tiled_mma = 3\n", "must define tiled_mma"),
    ("from warpsim.cute import *\ntiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN())\n", "must define fragments"),
    ("x = (\n", "SyntaxError"),
    ("import warpsim\n\nraise RuntimeError('boom')\n", "(line 3): RuntimeError: boom"),
])
def test_bad_config_file(tmp_path, text, message):
    path = tmp_path / "bad.py"
    path.write_text(text)
    proc = run("--config", str(path))
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unknown_thread_and_missing_file():
    for args, message in [(("--threads", "128"), "unknown thread 128: the tiled MMA has 128 threads (0-127)"),
                          (("--threads", "x"), "bad thread list 'x'"),
                          (("--config", "no/such.py"), "config file no/such.py does not exist")]:
        proc = run(*args)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_python_api():
    report = warpsim.explain("seed-bf16", threads="3")
    assert report["threads"][0]["fragments"][0]["dtype"] == "bf16"
    with pytest.raises(ValueError, match="unknown thread 500"):
        warpsim.explain("seed", [500])


def test_a_wgmma_descriptor_is_explained_row_by_row():
    """Triton's A descriptor (K-major, 64-byte swizzle, SBO 512): each row's two 16-byte chunks, where
    warpsim.isa.wgmma's addresses put them; a bad descriptor is one line naming the option."""
    from warpsim.isa.wgmma import descriptor_addresses
    bits = 0x8000002000000000 | (0x400 >> 4)
    out = run("--descriptor", hex(bits), "--rows", "16")
    assert out.returncode == 0 and out.stdout.startswith(f"descriptor {bits:#018x}: start 0x400, LBO 0, SBO 512, "
                                                         "layout 64B, K-major"), out.stdout
    rows = out.stdout.splitlines()[2:]
    addrs = descriptor_addresses(bits, 16)
    assert len(rows) == 16 and all(r.split()[1] == hex(int(addrs[m, 0])) and r.split()[4] == hex(int(addrs[m, 8]))
                                   for m, r in enumerate(rows)), out.stdout
    bad = run("--descriptor", "0x1" + "0" * 16)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "--descriptor" in bad.stderr
