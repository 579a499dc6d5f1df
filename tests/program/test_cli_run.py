"""``warpsim run`` through a real subprocess: every example, its dumps, its summary, its user errors."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from warpsim.program import load_program
from warpsim.program.reference import gemm_reference

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if "warpsim.Program(" in p.read_text())
DTYPE_BITS = {"f16": 16, "bf16": 16, "u16": 16, "f32": 32, "u32": 32}


def warpsim_run(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "warpsim", "run", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def combos(program):
    out = [{}]
    for name, spec in program.params.items():
        out = [dict(c, **{name: v}) for c in out for v in spec]
    return out


def diagonal(program):
    """The combinations that take every param's choices in turn, all at once: one per choice of the param with the
    most, so together they take each choice of each param. (flash_fwd: 3 of its 24; gemm_smem: 2 of its 8.)

    >>> from types import SimpleNamespace
    >>> diagonal(SimpleNamespace(params={"a": (1, 2), "b": ("x", "y", "z")}))
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}, {'a': 1, 'b': 'z'}]
    """
    specs = program.params
    most = max(map(len, specs.values()), default=1)
    return [{name: spec[i % len(spec)] for name, spec in specs.items()} for i in range(most)]


# each combination is a fresh `warpsim run` process (a few seconds each, ~130 s for all 32): by default the diagonal
# combinations, every one with --slow
CASES = [pytest.param(path, params, id=f"{path.stem}-{'-'.join(map(str, params.values()))}",
                      marks=() if params in diagonal(program) else pytest.mark.slow)
         for path, program in ((path, load_program(path)) for path in EXAMPLES) for params in combos(program)]


@pytest.mark.parametrize("path,params", CASES)
def test_every_example_dumps_its_tensors(tmp_path, path, params):
    program = load_program(path)
    trace = program.trace(params)
    names = sorted(trace.tensors)
    assert names, f"{path.name} binds no per-thread register tensors"
    param_args = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
    done = warpsim_run(path, *param_args, "--dump", ",".join(names), "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    for name in names:
        info = trace.tensors[name]
        array = np.load(tmp_path / f"{name}.npy")
        want_dtype = np.uint16 if DTYPE_BITS[info.dtype] == 16 else np.uint32
        assert array.shape == (program.threads(program.resolve_params(params)), info.slots), name
        assert array.dtype == want_dtype, name


def test_gemm_smem_dump_shapes(tmp_path):
    """The issue's per-thread tensors: 128 threads; tSrQ 32 f16 slots, tSrK / tOrVt 128, acc 32 f32."""
    path = ROOT / "examples" / "gemm_smem.py"
    done = warpsim_run(path, "--dump", "tSrQ,tSrK,acc", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    shapes = {n: (np.load(tmp_path / f"{n}.npy").shape, np.load(tmp_path / f"{n}.npy").dtype.name)
              for n in ("tSrQ", "tSrK", "acc")}
    assert shapes == {"tSrQ": ((128, 32), "uint16"), "tSrK": ((128, 128), "uint16"), "acc": ((128, 32), "uint32")}
    done = warpsim_run(path, "--param", "product=pv", "--dump", "tOrVt", "--out", tmp_path)
    assert done.returncode == 0 and np.load(tmp_path / "tOrVt.npy").shape == (128, 128)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_summary(path):
    done = warpsim_run(path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "warp instructions executed:" in out and "total" in out and "time: trace" in out
    if load_program(path).reference is not None:
        assert "bit-identical" in out and "MISMATCH" not in out


def test_summary_with_given_inputs_and_sm80(tmp_path):
    rng = np.random.default_rng(9)
    q = rng.integers(0, 1 << 16, (64, 64)).astype(np.uint16) & 0xBBFF      # finite f16 of magnitude < 2
    v = rng.integers(0, 1 << 16, (64, 64)).astype(np.uint16) & 0xBBFF
    np.save(tmp_path / "q.npy", q)
    np.save(tmp_path / "v.npy", v)
    path = ROOT / "examples" / "gemm_smem.py"
    done = warpsim_run(path, "--param", "product=pv", "--input", f"q={tmp_path / 'q.npy'}", "--input",
                       f"v={tmp_path / 'v.npy'}", "--arch", "sm80", "--dump", "acc", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    done = warpsim_run(path, "--param", "product=pv", "--input", f"q={tmp_path / 'q.npy'}", "--input",
                       f"v={tmp_path / 'v.npy'}", "--arch", "sm80")
    assert done.returncode == 0 and "4096/4096 elements equal: bit-identical" in done.stdout
    # the dumped accumulator holds the model's values (as a multiset per thread block of 32 threads' 32 slots)
    acc = np.load(tmp_path / "acc.npy")
    want = gemm_reference(q, v.T, ab="f16", arch="sm80")
    assert np.array_equal(np.sort(acc.ravel()), np.sort(want.ravel()))


@pytest.mark.parametrize("args,message", [
    (["--dump", "acc,nope", "--out", "{tmp}"], "--dump: unknown per-thread tensor 'nope' (valid: acc, tSrK, tSrQ)"),
    (["--param", "dtype=f32"], "param dtype='f32' is not one of the choices: f16, bf16"),
    (["--param", "colour=red"], "unknown param 'colour' (params: dtype, product, swizzle)"),
    (["--param", "dtype"], "--param 'dtype': expected NAME=VALUE"),
    (["--input", "q={tmp}/missing.npy"], "--input q="),
    (["--input", "x={tmp}/q.npy"], "unknown input 'x' (inputs: q, k)"),
    (["--dump", "acc"], "--dump needs --out DIR"),
])
def test_user_errors_are_one_line(tmp_path, args, message):
    np.save(tmp_path / "q.npy", np.zeros((64, 64), np.uint16))
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = warpsim_run(ROOT / "examples" / "gemm_smem.py", *args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("warpsim run: error: ") and message in done.stderr, done.stderr


def test_missing_program_file():
    done = warpsim_run(ROOT / "examples" / "no_such_program.py")
    assert done.returncode == 2 and "no such program file" in done.stderr and "Traceback" not in done.stderr


def test_warning_is_one_line(tmp_path):
    prog = tmp_path / "noclear.py"
    prog.write_text(
        "import warpsim\n"
        "from warpsim.program import copy\n"
        "from warpsim.cute import Copy_Atom, UniversalCopy, make_fragment_like, make_layout, make_tiled_copy\n"
        "tc = make_tiled_copy(Copy_Atom(UniversalCopy(32), 'f32'), make_layout((32, 1)), make_layout((1, 1)))\n"
        "def kernel(tid, *, y):\n"
        "    dst = tc.get_slice(tid).partition_D(y)\n"
        "    acc = make_fragment_like(dst)\n"
        "    copy(tc, acc, dst)\n"
        "program = warpsim.Program(kernel, threads=32, outputs={'y': ((32, 1), 'f32')})\n")
    done = warpsim_run(prog)
    assert done.returncode == 0, done.stderr
    # (a first run in a fresh checkout also says it is compiling the simulator's kernels: a line of its own)
    lines = [x for x in done.stderr.splitlines() if "compiling the simulator's kernels" not in x]
    assert len(lines) == 1 and lines[0].startswith("warpsim run: warning: st.global.b32 (instruction 0) at noclear.py:8:")
    assert "no reference" in done.stdout
    done = warpsim_run(prog, "--strict")
    assert done.returncode == 2 and "which no instruction wrote before" in done.stderr
