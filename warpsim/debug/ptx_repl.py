"""The debugger's commands for a PTX kernel (a ``.cu``, ``.ptx`` or CuTe DSL file) over a
:class:`~warpsim.debug.ptx_session.PtxSession`: the same prompt, script and terminal handling as
:class:`~warpsim.debug.repl.Repl` (readline history, colour, one-line errors), with the commands of
:data:`PTX_COMMANDS`.

>>> from warpsim.ptx import load
>>> import io
>>> mod = load(".version 8.0\\n.target sm_80\\n.address_size 64\\n.visible .entry k()\\n"
...            "{\\n.reg .b32 %r<3>;\\nmov.u32 %r1, %tid.x;\\nadd.u32 %r2, %r1, 1;\\nret;\\n}", filename="k.ptx")
>>> out = io.StringIO()
>>> PtxRepl(PtxSession(mod, "k", block=32), out).run_script(["stepi 2", "regs %r2 lanes 0-1", "nope"])
1
>>> print(out.getvalue().split("(warpsim) regs", 1)[1].split("(warpsim) nope")[0].strip())
%r2 lanes 0-1
warp 0, CTA (0, 0, 0), after #1 add.u32 (%r: .b32; * written by it)
lane          %r2
   0  *0x00000001
   1  *0x00000002
"""

from __future__ import annotations

import re
import shlex

from warpsim.debug import ptx_views as views
from warpsim.debug.ptx_session import PtxSession  # noqa: F401  (the doctest's)
from warpsim.debug.repl import Repl, _first_line, _int, _int_list, _UserError
from warpsim.errors import WarpsimError

__all__ = ["PtxRepl", "PTX_COMMANDS"]

PTX_COMMANDS = {
    "step": ("step [N]", "N warp instructions of the focus warp (the other warps run as scheduled in between)"),
    "stepi": ("stepi [N]", "N warp instructions of the schedule, whichever warp runs them"),
    "next": ("next [N]", "until the focus warp is about to run another source line (C++ or Python)"),
    "cont": ("cont", "to the next breakpoint, watch, fault or the end"),
    "until": ("until [FILE:]LINE", "to the next entry of a warp into a source line"),
    "back": ("back [N]", "N warp instructions backwards (a replay from the nearest checkpoint)"),
    "break": ("break [FILE:LINE | PTX-LINE]",
              "break where a warp enters a source line (any file of the .loc inline chain, e.g. gemm_smem.cu:56 "
              "or copy_sm75.hpp:134) or a PTX line; no argument: list the breakpoints"),
    "watch": ("watch %REG [lane L] | watch smem ADDR [N]",
              "stop after register %REG of the focus warp (lane L, default any) or N shared bytes change"),
    "delete": ("delete [N ...]", "delete breakpoints N (default: all)"),
    "cta": ("cta [I]", "run (or replay) until CTA I of the grid runs; no argument: the current CTA"),
    "warp": ("warp [W | auto]", "focus warp W for step/next and the views (auto: the warp that runs next)"),
    "where": ("where", "the next instruction: warp, lanes, source line, PTX line"),
    "list": ("list [LINE]", "the source around the current line, with the PTX of that line beside it"),
    "regs": ("regs [%REG | %r1..%r8 ...] [lane L | lanes 0-3] [hex] [warp W]",
             "registers by PTX name per lane, typed by their declaration (* = written by the last instruction); "
             "default: those of the last and next instruction"),
    "pred": ("pred [warp W]", "the predicate registers of every lane"),
    "mask": ("mask [warp W]", "running / waiting / exited lanes, and each lane's pc where the warp is diverged"),
    "smem": ("smem ADDR [COUNT] [hex|u32|s32|f32|f16|u16|u8|f64]", "shared memory of the current CTA"),
    "banks": ("banks [next] [warp W]", "the bank model on the actual addresses of the warp's last shared access "
                                       "(or its next instruction)"),
    "printf": ("printf", "device printf output so far"),
    "help": ("help [COMMAND]", "this list, or one command"),
    "quit": ("quit", "leave (also: exit, q, end of input)"),
}
_ALIASES = {"s": "step", "si": "stepi", "n": "next", "c": "cont", "b": "break", "d": "delete", "l": "list",
            "q": "quit", "exit": "quit", "continue": "cont", "info": "break"}


def _warp_option(args):
    if "warp" in args:
        k = args.index("warp")
        if k + 1 >= len(args):
            raise _UserError("warp: needs a value")
        return _int(args[k + 1], "warp"), args[:k] + args[k + 2:]
    return None, args


class PtxRepl(Repl):
    """Commands over a :class:`PtxSession`, written to ``out`` (coloured when ``color``)."""

    def execute(self, line):
        """Run one command line; False when it asks to quit. A user error prints one line."""
        try:
            tokens = shlex.split(line)
        except ValueError as e:
            return self._error(f"cannot parse {line!r}: {e}")
        if not tokens:
            return True
        name = _ALIASES.get(tokens[0], tokens[0])
        if name == "quit":
            return False
        handler = getattr(self, f"_ptx_{name}", None)
        if name not in PTX_COMMANDS or handler is None:
            return self._error(f"unknown command {tokens[0]!r}; `help` lists the commands")
        try:
            handler(tokens[1:])
        except (WarpsimError, ValueError, TypeError, KeyError, OSError, ImportError) as e:
            return self._error(_first_line(e))
        except Exception as e:                  # a slip of ours: still one line, and the session goes on
            return self._error(f"{tokens[0]}: {type(e).__name__}: {_first_line(e)}")
        return True

    # -- motion -----------------------------------------------------------------------------------
    def _report(self, stop):
        s = self.session
        lines = [f"printf: {text.rstrip(chr(10))}" for _cta, _tid, text in stop.printed]
        for bp, detail in stop.hits:
            kind = "Watch" if bp.kind in ("reg", "smem") else "Breakpoint"
            lines.append(self.paint("stop", f"{kind} {bp.number}, {bp}" + (f": {detail}" if detail else "")))
        if stop.reason == "fault":
            lines.append(self.paint("error", f"fault: {stop.message}"))
            at = s.fault_at
            if at is not None:
                lines.append(f"stopped at #{at.position} w{at.warp} lanes {views.lane_ranges(at.lanes)}: "
                             f"{s.where_text(at.pc)}: {s.text[at.pc]} (`back` leaves the fault)")
        elif stop.reason == "back":
            lines.append(f"back to #{s.position} (replayed from the checkpoint at "
                         f"#{max(k for k in s.checkpoints if k <= s.position)})")
        elif stop.executed == 1 and s.last is not None:
            last = s.last
            wrote = f"; wrote {', '.join(last.written)}" if last.written else ""
            lines.append(f"executed #{last.position} w{last.warp} lanes {views.lane_ranges(last.lanes)}: "
                         f"{s.text[last.pc]}{wrote}")
        elif stop.executed:
            last = s.last
            tail = f"; the last: w{last.warp} {s.text[last.pc]}" if last is not None else ""
            lines.append(f"executed {stop.executed} warp instructions (#{s.position - stop.executed}-"
                         f"#{s.position - 1}){tail}")
        if stop.reason != "fault":
            text = views.where_text(s)
            lines.append(self.paint("here", text.splitlines()[0]) + "".join("\n" + t for t in text.splitlines()[1:]))
        self.write("\n".join(lines))

    def _ptx_step(self, args):
        self._report(self.session.step(self._count(args, "step")))

    def _ptx_stepi(self, args):
        self._report(self.session.stepi(self._count(args, "stepi")))

    def _ptx_next(self, args):
        self._report(self.session.next(self._count(args, "next")))

    def _ptx_cont(self, args):
        if args:
            raise _UserError("cont: takes no arguments")
        self._report(self.session.cont())

    def _ptx_until(self, args):
        if len(args) != 1:
            raise _UserError("until: expected one source line, e.g. until 56 or until gemm_smem.cu:56")
        file, line = self._line(args[0])
        self._report(self.session.run_to(line, file))

    def _ptx_back(self, args):
        self._report(self.session.back(self._count(args, "back")))

    def _ptx_cta(self, args):
        s = self.session
        if not args:
            self.write(f"CTA {s.cta} (index {s.run._next} of {len(s.run._ctas)})")
            return
        if len(args) != 1:
            raise _UserError("cta: expected one CTA index, e.g. cta 1")
        stop = s.go_cta(_int(args[0], "cta"))
        self._report(stop)

    def _ptx_warp(self, args):
        s = self.session
        if args == ["auto"]:
            s.pinned_warp = None
        elif len(args) == 1:
            w = _int(args[0], "warp")
            s._check_warp(w)
            s.pinned_warp = w
        elif args:
            raise _UserError("warp: expected one warp number or auto")
        self.write(f"focus warp {s.warp}" + (" (pinned)" if s.pinned_warp is not None else
                                             " (the warp that runs next)"))

    # -- breakpoints --------------------------------------------------------------------------------
    def _ptx_break(self, args):
        s = self.session
        if not args:
            if not s.breakpoints:
                self.write("no breakpoints")
            for bp in s.breakpoints:
                self.write(f"{bp.number:3d}  {bp}  (hit {s.hit_counts[bp.number]} times)")
            return
        if len(args) != 1 or not re.fullmatch(r"(.+:)?\d+", args[0]):
            raise _UserError(f"break: expected FILE:LINE or a PTX line number, got {' '.join(args)}")
        file, line = self._line(args[0])
        bp = s.break_line(line, file) if file else s.break_ptx(line)
        where = f" ({len(bp.pcs)} instructions)"
        self.write(f"Breakpoint {bp.number}: {bp}{where}")

    def _ptx_watch(self, args):
        s = self.session
        if args[:1] == ["smem"]:
            if len(args) not in (2, 3):
                raise _UserError("watch smem: expected smem ADDR [NBYTES], e.g. watch smem 0x200 4")
            bp = s.watch_smem(_int(args[1], "address"), _int(args[2], "bytes") if len(args) == 3 else 4)
        elif len(args) in (1, 3) and args[0].startswith("%"):
            lane = -1
            if len(args) == 3:
                if args[1] != "lane":
                    raise _UserError("watch: expected %REG [lane L]")
                lane = _int(args[2], "lane")
            bp = s.watch_register(args[0], lane)
        else:
            raise _UserError(f"watch: usage: {PTX_COMMANDS['watch'][0]}")
        self.write(f"Watch {bp.number}: {bp}")

    def _ptx_delete(self, args):
        if not args:
            self.session.delete()
            self.write("deleted all breakpoints")
        for a in args:
            self.session.delete(_int(a, "delete"))
            self.write(f"deleted breakpoint {a}")

    # -- views ------------------------------------------------------------------------------------
    def _ptx_where(self, args):
        text = views.where_text(self.session)
        self.write(self.paint("here", text.splitlines()[0]) + "".join("\n" + t for t in text.splitlines()[1:]))

    def _ptx_list(self, args):
        self.write(views.source_text(self.session, _int(args[0], "list") if args else None))

    def _ptx_regs(self, args):
        warp, args = _warp_option(args)
        names, lanes, fmt, k = [], None, "typed", 0
        while k < len(args):
            tok = args[k]
            if tok in ("lane", "lanes"):
                if k + 1 >= len(args):
                    raise _UserError(f"{tok}: needs a value")
                lanes = _int_list(args[k + 1], "lane", 32)
                k += 2
                continue
            if tok == "hex":
                fmt = "hex"
            elif tok.startswith("%"):
                names.append(tok)
            else:
                raise _UserError(f"regs: unexpected {tok!r}; usage: {PTX_COMMANDS['regs'][0]}")
            k += 1
        self.write(self.paint.marks(views.regs_text(self.session, names, lanes, fmt, warp)))

    def _ptx_pred(self, args):
        warp, args = _warp_option(args)
        if args:
            raise _UserError(f"pred: usage: {PTX_COMMANDS['pred'][0]}")
        self.write(views.pred_text(self.session, warp))

    def _ptx_mask(self, args):
        warp, args = _warp_option(args)
        if args:
            raise _UserError(f"mask: usage: {PTX_COMMANDS['mask'][0]}")
        self.write(views.mask_text(self.session, warp))

    def _ptx_smem(self, args):
        if not 1 <= len(args) <= 3:
            raise _UserError(f"smem: usage: {PTX_COMMANDS['smem'][0]}")
        fmt = args[-1] if len(args) > 1 and not args[-1][0].isdigit() else "hex"
        numbers = [a for a in args[1:] if a != fmt]
        count = _int(numbers[0], "count") if numbers else 16
        self.write(views.smem_text(self.session, _int(args[0], "address"), count, fmt))

    def _ptx_banks(self, args):
        warp, args = _warp_option(args)
        if args not in ([], ["next"], ["last"]):
            raise _UserError(f"banks: usage: {PTX_COMMANDS['banks'][0]}")
        self.write(views.banks_text(self.session, warp, args[0] if args else "last"))

    def _ptx_printf(self, args):
        self.write(views.printf_text(self.session))

    def _ptx_help(self, args):
        if args:
            name = _ALIASES.get(args[0], args[0])
            if name not in PTX_COMMANDS:
                raise _UserError(f"help: unknown command {args[0]!r}")
            usage, text = PTX_COMMANDS[name]
            self.write(f"{usage}\n  {text}")
            return
        width = max(len(u) for u, _t in PTX_COMMANDS.values() if len(u) < 40)
        self.write("\n".join(f"{u:<{width}}  {t}" if len(u) < 40 else f"{u}\n{'':<{width}}  {t}"
                             for u, t in PTX_COMMANDS.values()))

