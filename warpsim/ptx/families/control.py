"""Control flow: ``bra``, ``call`` (with its ``.param`` argument and return copies), ``ret``, ``exit``, ``trap``, and
the built-in calls ``vprintf`` (a log record per thread) and ``__assertfail`` (a trap naming the assertion),
decoded and executed.

A thread's calls are a stack of return pcs (``stack[t]``, ``depth[t]``); ``call`` copies its arguments and ``ret``
its returns through the per-thread ``.func`` parameter space (``fparam``, copy rows in ``copies``). ``exit`` (or
``ret`` from the kernel) sets the thread ``EXITED`` and lands its pending ``cp.async`` copies. :func:`warp_branch`
takes a ``bra`` for a whole group at once.
"""

from numba import njit

from warpsim.errors import UnsupportedType
from warpsim.isa.faults import FAULT_CALL_DEPTH, FAULT_TRAP, set_fault
from warpsim.isa.scratch import njit_borrowing
from warpsim.ptx.codes import EXITED, PRINT_ARGS
from warpsim.ptx.families.async_copy import land
from warpsim.ptx.families.common import FamilyDecoder
from warpsim.ptx.memory import SP_GENERIC, load, locate, read_bytes
from warpsim.ptx.opcodes import Op
from warpsim.ptx.rows import IMM, K_IMM, K_LABEL, M0, M1, M2, O0, TRAP_ASSERT

__all__ = ["ControlDecoder", "DECODER", "thread_control", "warp_branch", "warp_exit"]


def _refused_call(name):
    """Why warpsim does not run a call of ``name``, a function without a body (``vprintf`` and ``__assertfail`` are
    built in): nvcc declares ``malloc``/``free`` for device code, ``__cudaCDP2*`` (``-rdc``) for the device runtime
    of dynamic parallelism; anything else is an external function.

    >>> _refused_call("free")
    'malloc/free in device code are not supported (warpsim has no device heap)'
    """
    if name in ("malloc", "free"):
        return "malloc/free in device code are not supported (warpsim has no device heap)"
    if name.startswith(("__cudaCDP", "cuda")):
        return ("device-side CUDA runtime calls (dynamic parallelism, cudaMalloc/cudaFree in device code) are not "
                "supported")
    return ("a function without a body (an external one: warpsim runs one PTX module, so compile its definition "
            "into it, without -rdc; built in: vprintf, __assertfail)")


class ControlDecoder(FamilyDecoder):
    """Decodes ``bra``, ``call`` (``vprintf`` and ``__assertfail`` built in), ``ret``, ``exit`` and ``trap``."""

    def do_bra(self, fn, ins, op, mods, types, ops):
        self.count(ins, ops, 1)
        target = ops[0]
        if target.kind != "sym" or target.name not in fn.labels:
            raise self.error(target.token, "unknown branch target")
        self.emit(fn, ins, op, operands=[self.add_opnd(K_LABEL, imm=fn.labels[target.name])])

    def do_ret(self, fn, ins, op, mods, types, ops):
        self.emit(fn, ins, op)

    do_exit = do_ret
    do_trap = do_ret

    def do_call(self, fn, ins, op, mods, types, ops):
        rets, args = [], []
        rest = list(ops)
        if rest and rest[0].kind == "list":
            rets = rest.pop(0).items
        if not rest or rest[0].kind != "sym":
            raise self.error(ins.token, "call: expected a function name (indirect calls are not supported)")
        target = rest.pop(0)
        if rest and rest[0].kind == "list":
            args = rest.pop(0).items
        callee = self.m.functions.get(target.name)
        if callee is None:
            raise self.error(target.token, "call of an undeclared function")
        vars_ = [self.param_var(fn, o) for o in args]
        outs = [self.param_var(fn, o) for o in rets]
        if target.name == "vprintf":
            if len(vars_) != 2:
                raise self.error(ins.token, "vprintf takes 2 arguments")
            out = outs[0][0] if outs else -1
            return self.emit(fn, ins, Op.PRINTF, mods=(vars_[0][0], vars_[1][0], out, 0))
        if target.name == "__assertfail" and callee.declared_only:
            if len(vars_) != 5:
                raise self.error(ins.token, f"__assertfail takes 5 arguments (message, file, line, function, "
                                            f"char size), got {len(vars_)}")
            offsets = [self.add_opnd(K_IMM, imm=off) for off, _ in vars_[:4]]
            return self.emit(fn, ins, Op.TRAP, mods=(TRAP_ASSERT, 0, 0, 0), operands=offsets)
        if callee.declared_only:
            raise self.error(ins.token, f"call of {target.name}: {_refused_call(target.name)}", UnsupportedType)
        if len(vars_) != len(callee.params) or len(outs) != len(callee.returns):
            raise self.error(ins.token, f"call of {target.name}: {len(vars_)} arguments and {len(outs)} "
                                        f"returns, the function has {len(callee.params)} and "
                                        f"{len(callee.returns)}")
        target_fn = self.pending_layout(target.name, ins)
        start = len(self.copies)
        for (off, size), p in zip(vars_, callee.params):
            self.copies.append((off, target_fn.symbols[p.name][1], min(size, self.var_bytes(p))))
        for (off, size), p in zip(outs, callee.returns):
            self.copies.append((target_fn.symbols[p.name][1], off, min(size, self.var_bytes(p))))
        label = self.add_opnd(K_LABEL, imm=-1)
        self.patches.append((label, target.name))
        self.emit(fn, ins, op, mods=(start, len(vars_), len(outs), 0), operands=[label])


DECODER = ControlDecoder


@njit_borrowing
def thread_control(p, op, t, code, opnd, copies, pc, status, stack, depth, smem, gmem, ends, local, const, kparam,
                   fparam, pend, npend, groups, pend_map, prbuf, prrec, nprint, fault):
    """One thread's ``bra``, ``call``, ``ret``, ``exit``, ``trap`` or ``vprintf``; moves its pc. False on a fault."""
    o = code[p, O0:]
    if op == Op.BRA:
        pc[t] = opnd[o[0], IMM]
        return True
    elif op == Op.CALL:
        if depth[t] >= stack.shape[1]:
            set_fault(fault, FAULT_CALL_DEPTH, t, stack.shape[1], 0)
            return False
        start, nargs = code[p, M0], code[p, M1]
        for k in range(start, start + nargs):
            for b in range(copies[k, 2]):
                fparam[t, copies[k, 1] + b] = fparam[t, copies[k, 0] + b]
        stack[t, depth[t]] = p
        depth[t] += 1
        pc[t] = opnd[o[0], IMM]
        return True
    elif op == Op.RET or op == Op.EXIT:
        if op == Op.RET and depth[t] > 0:
            depth[t] -= 1
            cp = stack[t, depth[t]]
            start = code[cp, M0] + code[cp, M1]
            for k in range(start, start + code[cp, M2]):
                for b in range(copies[k, 2]):
                    fparam[t, copies[k, 1] + b] = fparam[t, copies[k, 0] + b]
            pc[t] = cp + 1
            return True
        status[t] = EXITED
        land(t, -1, pend, npend, groups, pend_map, smem, gmem)
        return True
    elif op == Op.TRAP:
        set_fault(fault, FAULT_TRAP, t, 0, 0)
        return False
    elif op == Op.PRINTF:
        return _printf(p, t, code, smem, gmem, ends, local, const, kparam, fparam, pc, prbuf, prrec, nprint, fault)
    pc[t] += 1
    return True


@njit_borrowing
def warp_exit(p, op, w, group, gmask, pc, status, depth, npend):
    """``ret`` or ``exit`` of the kernel itself (no call to return from) for a whole group, as :func:`thread_control`
    does lane by lane: the lanes of ``gmask`` exit, the others advance. False, nothing changed, when a lane is inside a
    call or has ``cp.async`` copies in flight (the thread path then returns or lands them)."""
    if op != Op.RET and op != Op.EXIT:
        return False
    t0 = 32 * w
    for lane in range(32):
        if (gmask >> lane) & 1 and ((op == Op.RET and depth[t0 + lane] > 0) or npend[t0 + lane] > 0):
            return False
    for lane in range(32):
        if (gmask >> lane) & 1:
            status[t0 + lane] = EXITED
        elif (group >> lane) & 1:
            pc[t0 + lane] += 1
    return True


@njit_borrowing
def warp_branch(p, w, group, gmask, code, opnd, pc):
    """``bra`` for the lanes of ``group``: those of ``gmask`` (guard true) jump, the others advance."""
    t0 = 32 * w
    target = opnd[code[p, O0], IMM]
    for lane in range(32):
        if (gmask >> lane) & 1:
            pc[t0 + lane] = target
        elif (group >> lane) & 1:
            pc[t0 + lane] += 1
    return True


@njit(cache=True)
def _printf(p, t, code, smem, gmem, ends, local, const, kparam, fparam, pc, prbuf, prrec, nprint, fault):
    """``call vprintf``: copy the format string and the argument buffer of thread ``t`` to the log; the
    return value is the number of conversions in the format (``%%`` is none), as CUDA's printf returns
    the number of arguments it parsed."""
    fmt_addr = read_bytes(fparam[t], code[p, M0], 8)
    args_addr = read_bytes(fparam[t], code[p, M1], 8)
    k = nprint[0]
    if k >= prrec.shape[0]:
        pc[t] += 1
        return True
    start = nprint[1]
    n = 0
    while True:
        sp, off = locate(SP_GENERIC, fmt_addr + n, 1, t, gmem, ends, smem, local, const, kparam, fparam, fault)
        if sp < 0:
            return False
        ch = load(sp, off, 1, t, gmem, smem, local, const, kparam, fparam)
        if ch == 0 or start + n >= prbuf.shape[0] - PRINT_ARGS:
            break
        prbuf[start + n] = ch
        n += 1
    parsed = 0
    i = 0
    while i < n:
        if prbuf[start + i] == 37:              # '%': a conversion unless it is '%%'
            if i + 1 < n and prbuf[start + i + 1] == 37:
                i += 1
            else:
                parsed += 1
        i += 1
    nargs = 0
    if args_addr != 0:
        sp, off = locate(SP_GENERIC, args_addr, 1, t, gmem, ends, smem, local, const, kparam, fparam, fault)
        if sp < 0:
            return False
        while nargs < PRINT_ARGS:
            sp2, off2 = locate(SP_GENERIC, args_addr + nargs, 1, t, gmem, ends, smem, local, const, kparam,
                               fparam, fault)
            if sp2 < 0:
                fault[:] = 0
                break
            prbuf[start + n + nargs] = load(sp2, off2, 1, t, gmem, smem, local, const, kparam, fparam)
            nargs += 1
    prrec[k, 0], prrec[k, 1], prrec[k, 2], prrec[k, 3] = t, start, n, nargs
    nprint[0] = k + 1
    nprint[1] = start + n + nargs
    ret = code[p, M2]
    if ret >= 0:
        for b in range(4):
            fparam[t, ret + b] = (parsed >> (8 * b)) & 0xFF
    pc[t] += 1
    return True
