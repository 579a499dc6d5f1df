"""Element-wise arithmetic on register tensors (warpsim.program.arith): each operation, run as a program,
gives the bits of the ISA's scalar model lane by lane; both trace modes give one stream; errors name the line."""

import operator

import numpy as np
import pytest

import warpsim
from warpsim.cute import Copy_Atom, UniversalCopy, make_fragment_like, make_identity_tensor, make_layout, make_tensor, \
    make_tiled_copy
from warpsim.errors import ProgramError
from warpsim.isa.fpcompare import CMP
from warpsim.isa.fpops import FLOAT_OPS
from warpsim.isa.mufu32 import EX2, LG2, f32_ex2_approx_ftz, f32_lg2_approx_ftz, mufu_tables
from warpsim.isa.rounding import RN
from warpsim.program import (allreduce, clear, copy, copy_if, equ, exp2, fma, fmax, log2, reduce_max, reduce_sum,
                             run_program, shfl_xor, where)

N = 32 * 8
SPECIAL = np.array([0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
                    0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x00800000], np.uint32)


def _inputs(seed, count=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        bits = rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
        near = rng.standard_normal(N).astype(np.float32).view(np.uint32)
        bits[::2] = near[::2]                                     # half ordinary numbers, half any bits
        bits[:SPECIAL.size] = rng.permutation(SPECIAL)
        out.append(bits.reshape(32, 8))
    return out


def _program(body, sources=3):
    """A 32-thread program: thread t loads row t of a, b, c (8 f32 each), sets row t of y by ``body``."""
    names = "abc"[:sources]

    def kernel(tid, *, y, **xs):
        cp = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f32"), make_layout((32, 1)), make_layout((1, 1)))
        thr = cp.get_slice(tid)
        frags = []
        for name in names:
            g = thr.partition_S(xs[name])
            f = make_fragment_like(g)
            copy(cp, g, f)
            frags.append(f)
        out = make_fragment_like(frags[0])
        for i in range(8):
            out[i] = body(*(f[i] for f in frags))
        copy(cp, out, thr.partition_D(y))

    return warpsim.Program(kernel, threads=32, inputs={n: ((32, 8), "f32") for n in names},
                           outputs={"y": ((32, 8), "f32")})


def _run(program, arrays, mode="vector"):
    r = run_program(program, {}, inputs=dict(zip("abc", arrays)), mode=mode)
    return r.outputs["y"].reshape(32, 8)


def _scalar(fn, *columns):
    return np.array([fn(*(int(c[i]) for c in columns)) for i in range(columns[0].size)], np.uint32).reshape(32, 8)


CASES = {
    "add": (lambda a, b: a + b, 2, lambda a, b: FLOAT_OPS["add", "f32"].function(a, b, RN, False, False)),
    "sub": (lambda a, b: a - b, 2, lambda a, b: FLOAT_OPS["sub", "f32"].function(a, b, RN, False, False)),
    "mul": (lambda a, b: a * b, 2, lambda a, b: FLOAT_OPS["mul", "f32"].function(a, b, RN, False, False)),
    "div": (lambda a, b: a / b, 2, lambda a, b: FLOAT_OPS["div", "f32"].function(a, b, RN, False)),
    "fma": (fma, 3, lambda a, b, c: FLOAT_OPS["fma", "f32"].function(a, b, c, RN, False, False)),
    "fmax": (fmax, 2, lambda a, b: FLOAT_OPS["max", "f32"].function(a, b, False, False, False)),
    "neg": (lambda a: -a, 1, lambda a: FLOAT_OPS["neg", "f32"].function(a, False)),
    "where(a < b)": (lambda a, b: where(a < b, a, b), 2,
                     lambda a, b: a if FLOAT_OPS["setp", "f32"].function(a, b, CMP["lt"], False) else b),
    "where(equ)": (lambda a, b: where(equ(a, 0.0), 1.0, b), 2,
                   lambda a, b: 0x3F800000 if FLOAT_OPS["setp", "f32"].function(a, 0, CMP["equ"], False) else b),
    "exp2": (exp2, 1, lambda a: f32_ex2_approx_ftz(a, mufu_tables(("ex2",))[EX2])),
    "log2": (log2, 1, lambda a: f32_lg2_approx_ftz(a, mufu_tables(("lg2",))[LG2])),
    "constant": (lambda a: a * 0.69314718, 1,
                 lambda a: FLOAT_OPS["mul", "f32"].function(a, 0x3F317218, RN, False, False)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_operation_gives_the_scalar_models_bits(name):
    body, sources, model = CASES[name]
    arrays = _inputs(7, sources)
    got = _run(_program(body, sources), arrays)
    want = _scalar(model, *(a.reshape(-1) for a in arrays))
    bad = np.argwhere(got != want)
    assert not bad.size, f"{name}: thread {bad[0][0]} element {bad[0][1]}: {got[tuple(bad[0])]:#x} != {want[tuple(bad[0])]:#x}"


def test_a_nested_expression_is_computed_in_order_with_one_rounding_per_operation():
    body = lambda a, b, c: fmax(a * b - c, -(c + 1.5)) / 3.0   # noqa: E731
    arrays = _inputs(3, 3)
    got = _run(_program(body), arrays)
    f = {k: FLOAT_OPS[k, "f32"].function for k in ("mul", "sub", "add", "max", "neg", "div")}
    model = lambda a, b, c: f["div"](f["max"](f["sub"](f["mul"](a, b, RN, False, False), c, RN, False, False),   # noqa: E731
                                              f["neg"](f["add"](c, 0x3FC00000, RN, False, False), False),
                                              False, False, False), 0x40400000, RN, False)
    assert (got == _scalar(model, *(a.reshape(-1) for a in arrays))).all()


def _row_program():
    """Rows held by quads, as in an mma accumulator: thread t's 8 values (2 rows x 4 columns) are rows
    (t // 4, t // 4 + 8) of a 16x32 tile; reduce per row, combine over the quad, store one summary per row."""
    def kernel(tid, *, a, y):
        cp = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f32"), make_layout((32, 1)), make_layout((1, 1)))
        thr = cp.get_slice(tid)
        g = thr.partition_S(a)
        f = make_fragment_like(g)
        copy(cp, g, f)
        rows = make_tensor(f.engine, make_layout((2, 4)))                  # (row, col) view of the 8 values
        m, s = make_tensor("f32", (2,)), make_tensor("f32", (2,))
        clear(s)
        for r in range(2):
            m[r] = -np.inf
        reduce_max(rows, m)
        allreduce(m, fmax, 4)
        reduce_sum(rows, s)
        allreduce(s, operator.add, 4)
        out = make_fragment_like(f)
        clear(out)
        for r in range(2):
            out[r] = m[r]
            out[r + 2] = s[r]
        out[4] = shfl_xor(f[0], 1)
        copy(cp, out, thr.partition_D(y))

    return warpsim.Program(kernel, threads=32, inputs={"a": ((32, 8), "f32")}, outputs={"y": ((32, 8), "f32")})


def test_reduce_and_allreduce_over_quads_match_the_model_in_its_order():
    a = np.random.default_rng(2).standard_normal((32, 8)).astype(np.float32)
    y = _run(_row_program(), [a.view(np.uint32)])
    add = lambda x, z: FLOAT_OPS["add", "f32"].function(x, z, RN, False, False)   # noqa: E731
    mx = lambda x, z: FLOAT_OPS["max", "f32"].function(x, z, False, False, False)  # noqa: E731
    bits = a.view(np.uint32)
    m = np.zeros((32, 2), np.uint32)
    s = np.zeros((32, 2), np.uint32)
    for t in range(32):
        for r in range(2):
            vals = [int(bits[t, r + 2 * c]) for c in range(4)]              # (2,4) column-major: row r, col c
            mm, ss = 0xFF800000, 0
            for v in vals:
                mm, ss = mx(mm, v), add(ss, v)
            m[t, r], s[t, r] = mm, ss
    for table, op in ((m, mx), (s, add)):
        for k in (2, 1):
            partner = table[np.arange(32) ^ k].copy()
            for t in range(32):
                for r in range(2):
                    table[t, r] = op(int(table[t, r]), int(partner[t, r]))
    assert (y[:, :2] == m).all() and (y[:, 2:4] == s).all()
    assert (y[:, 4] == bits[np.arange(32) ^ 1, 0]).all()


def test_where_with_a_condition_known_when_tracing_and_copy_if():
    def kernel(tid, *, a, y):
        cp = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f32"), make_layout((32, 1)), make_layout((1, 1)))
        thr = cp.get_slice(tid)
        coord = thr.partition_S(make_identity_tensor((32, 8)))
        f = make_fragment_like(thr.partition_S(a))
        copy_if(cp, [coord[0, 0, j][0] < 20 for j in range(8)], thr.partition_S(a), f)
        for i in range(8):
            f[i] = where(coord[0, 0, i][1] < 5, f[i], -np.inf)
        copy_if(cp, [coord[0, 0, j][0] >= 4 for j in range(8)], f, thr.partition_D(y))

    program = warpsim.Program(kernel, threads=32, inputs={"a": ((32, 8), "f32")}, outputs={"y": ((32, 8), "f32")})
    a = np.arange(256, dtype=np.float32).reshape(32, 8) + 1
    want = np.where(np.arange(8) < 5, a, -np.inf).astype(np.float32)
    want[20:] = np.where(np.arange(8) < 5, 0, -np.inf)                       # not loaded: registers start at 0
    want[:4] = 0                                                             # not stored
    for mode in ("vector", "thread"):
        assert (_run(program, [a.view(np.uint32)], mode) == want.view(np.uint32)).all(), mode


def test_both_trace_modes_give_the_same_stream():
    for program in (_program(lambda a, b, c: where(a > b, fma(a, b, c), -c)), _row_program()):
        v, t = program.trace(mode="vector").stream, program.trace(mode="thread").stream
        assert len(v) == len(t) and all(i.key() == j.key() for i, j in zip(v, t))


@pytest.mark.parametrize("body, message", [
    (lambda a: a if a else a, "has no truth value"),
    (lambda a: where(a, a, a), "the mask must be a comparison"),
    (lambda a: a + "x", "expected a register value or a number"),
    (lambda a: (a < a) + 1.0, "a comparison's mask is not a number"),
    (lambda a: shfl_xor(a, 32), "lane offset must be an int in 1..31"),
])
def test_errors_name_the_problem(body, message):
    with pytest.raises(ProgramError, match=message):
        _program(body, 1).trace()


def test_the_debugger_names_where_an_arithmetic_result_came_from():
    from warpsim.debug.session import Session
    from warpsim.debug.views import from_view
    session = Session.program(_row_program())
    stream = session.traced.stream
    shfl = next(k for k, i in enumerate(stream) if i.ptx == "shfl.sync.bfly.b32")
    while not session.traced.executed()[shfl]:
        session.stepi()
    text = from_view(session, 5, stream[shfl].dst[0], warp=stream[shfl].warp).text()
    assert f"%r{stream[shfl].src[0]} of lane 7 (shfl.sync.bfly by 2)" in text
    last_max = max(k for k in range(shfl) if stream[k].ptx == "max.f32")
    assert "max.f32 of" in from_view(session, 0, stream[last_max].dst[0], warp=stream[last_max].warp).text()
