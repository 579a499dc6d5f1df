"""``warpsim debug``: one command language over a :class:`~warpsim.debug.session.Session`, for every front end.

The words are cuda-gdb's where it has one (``break``, ``step``, ``next``, ``stepi``, ``continue``,
``print``, ``x/``, ``info cuda warps``, ``cuda warp``, ``watch``, ``delete``); what cuda-gdb lacks is
added in the same style (``back``, ``who``, ``from``, ``banks``, fragment views through ``print``)::

    break [FILE:]LINE | break ptx LINE | break OPCODE    b; alone: info breakpoints
    watch %REG [lane L] [warp W] | watch shared ADDR [N]
    delete [N ...]                                       d
    step [N] / next [N]     to the focus warp's next source line          s / n
    stepi [N]               N warp instructions of the schedule           si
    continue                to a breakpoint, a watch, a fault or the end  c
    until [FILE:]LINE / back [N]
    print[/x|/f] EXPR ...   registers (%r5, $r5, %r1..%r8), a register tensor (fragment view), a
                            shared tensor (tile; `banks`: its bank map)   p
    x/[N][FMT] [shared|global] ADDR                      memory words
    info cuda warps|lanes / info warps|lanes|breakpoints|registers [REGS]|mbarriers|wgmma|tma
    cuda warp W | cuda cta I | cuda role producer        focus warp / CTA / a warp-specialised role
    where, list [LINE], who, from, banks, pred, printf, help, quit

An empty line repeats the last command at a terminal (as in gdb). Old spellings stay as aliases
(``cont``, ``regs``, ``frag``, ``smem``, ``mask``, ``warp``, ``cta``, ``break reg W L R``, ``break smem
ADDR``). Input comes from a terminal (readline editing, history in ``~/.warpsim_history``), a
``--commands`` file or a pipe; a script's commands are echoed after the prompt. Output is coloured when
it goes to a terminal and ``NO_COLOR`` is unset or empty. A command's error prints one line and the
session goes on.

>>> from warpsim.ptx import load
>>> import io
>>> mod = load(".version 8.0\\n.target sm_80\\n.address_size 64\\n.visible .entry k()\\n"
...            "{\\n.reg .b32 %r<3>;\\nmov.u32 %r1, %tid.x;\\nadd.u32 %r2, %r1, 1;\\nret;\\n}", filename="k.ptx")
>>> out = io.StringIO()
>>> Repl(Session(mod, "k", block=32), out).run_script(["stepi 2", "print $r2 lanes 0-1", "nope"])
1
>>> print(out.getvalue().split("(warpsim) print", 1)[1].split("(warpsim) nope")[0].strip())
$r2 lanes 0-1
warp 0, CTA (0, 0, 0), typed, after #1 add.u32 (* written by it)
lane  %r2
   0 *0x00000001
   1 *0x00000002
registers: %r: .b32
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import sys

from warpsim.debug import views
from warpsim.debug.session import Session  # noqa: F401  (the doctest's)
from warpsim.errors import WarpsimError

__all__ = ["Repl", "use_color", "COMMANDS", "HISTORY_FILE", "PROMPT"]

PROMPT = "(warpsim) "
HISTORY_FILE = "~/.warpsim_history"

COMMANDS = {   # name: (usage, help)
    "break": ("break [FILE:]LINE | break ptx LINE | break OPCODE",
              "stop where a warp enters a source line (any file of the .loc inline chain: gemm_smem.py:99, "
              "gemm_smem.cu:56, copy_sm75.hpp:134; LINE alone: the kernel's own file) or a PTX line, or before "
              "every instruction of an opcode (ldmatrix, mma, st.shared); alone: list the breakpoints"),
    "watch": ("watch %REG [lane L] [warp W] | watch shared ADDR [N]",
              "stop after a register of the focus warp (lane L, default any) or N shared bytes (default 4) change"),
    "delete": ("delete [N ...]", "delete breakpoints and watches N (default: all)"),
    "step": ("step [N]", "until the focus warp is about to run another source line (N times; the other warps "
                         "run as scheduled in between)"),
    "next": ("next [N]", "as step (the simulator's kernels call nothing to step over)"),
    "stepi": ("stepi [N]", "N warp instructions of the schedule, whichever warp runs them"),
    "continue": ("continue", "to the next breakpoint, watch, fault or the end"),
    "until": ("until [FILE:]LINE", "to the next entry of a warp into a source line"),
    "back": ("back [N]", "N warp instructions backwards (a replay from the nearest checkpoint)"),
    "print": ("print[/x|/f] EXPR [lane L | lanes 0-3] [warp W] [FMT] [mma|copy] [banks] [rows A:B] [cols A:B] "
              "[save FILE.svg]",
              "EXPR: registers (%r5, $r5, %r1..%r8; a traced program's r36-r51 too) per lane, * where the last "
              "instruction wrote; FMT typed, hex, f16x2, bf16x2, f32; a register tensor of a traced program by "
              "name: its MMA (or copy) view per lane by coordinate; a shared tensor by name: its tile through "
              "the swizzle, `banks` its bank map"),
    "x": ("x/[N][FMT] [shared|global] ADDR", "N words of memory (default 16, shared) from ADDR; FMT x (hex), u, "
                                             "d, f (f32), h (f16), s (u16), b (bytes), g (f64)"),
    "info": ("info [cuda] warps | lanes | breakpoints | registers [REGS] | mbarriers | wgmma | tma",
             "every warp of the CTA, the focus warp's lanes and pcs, the breakpoints, registers (as print), the "
             "mbarriers, the wgmma registers in flight, or the bulk copies (TMA) issued"),
    "cuda": ("cuda warp [W | auto] | cuda cta [I] | cuda role producer|consumer",
             "focus warp W for step and the views (auto: the warp that runs next); run (or replay) to CTA I; focus "
             "the first warp of a role in a warp-specialised kernel (from its setmaxnreg)"),
    "where": ("where", "the next instruction: warp, lanes, source line, PTX line"),
    "list": ("list [LINE]", "the source around the focus warp's line, with the PTX of that line beside it"),
    "banks": ("banks [last | next | done | all] [warp W] [each] [detail]",
              "the bank model on the actual addresses of the focus warp's last (or next) shared access; done / "
              "all: a traced program's shared accesses executed so far / of the whole program"),
    "who": ("who TENSOR I J.. [in MEMORY]", "which lane and register (half) of register tensor TENSOR hold "
                                            "element (I, J..) of the shared/global tensor it moves (traced programs)"),
    "from": ("from LANE %REG [warp W]", "where each half of a register came from (traced programs)"),
    "pred": ("pred [warp W]", "the predicate registers of every lane"),
    "printf": ("printf", "device printf output so far"),
    "help": ("help [COMMAND]", "this list, or one command"),
    "quit": ("quit", "leave (also: exit, q, end of input)"),
}
_ALIASES = {"s": "step", "n": "next", "si": "stepi", "c": "continue", "cont": "continue", "b": "break",
            "d": "delete", "l": "list", "p": "print", "q": "quit", "exit": "quit", "run_to": "until"}
_OLD = {"regs", "frag", "smem", "mask", "warp", "cta"}       # old spellings, turned into the language's
_FORMAT_LETTERS = {"x": "hex", "f": "f32"}


def use_color(stream):
    """True when ``stream`` is a terminal and ``NO_COLOR`` is unset or empty (https://no-color.org)."""
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


class _Paint:
    CODES = {"error": "31", "stop": "1;33", "here": "32", "mark": "1;35", "prompt": "1;34", "dim": "2"}

    def __init__(self, enabled):
        self.enabled = enabled

    def __call__(self, kind, text):
        return f"\x1b[{self.CODES[kind]}m{text}\x1b[0m" if self.enabled and text else text

    def marks(self, text):
        """Colour the ``*``-marked cells of a table."""
        if not self.enabled:
            return text
        return re.sub(r"\*(\S+(?: \| \S+)?)", lambda m: self("mark", m.group(0)), text)


class _UserError(ValueError):
    pass


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _int(token, what):
    try:
        return int(token, 0)
    except (TypeError, ValueError):
        raise _UserError(f"{what}: expected an integer, got {token!r}") from None


def _int_list(token, what, top):
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]``, each in ``[0, top)`` (checked before a range is expanded)."""
    out = []
    for part in token.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not m:
            raise _UserError(f"{what}: expected numbers like 5 or 0-3,8, got {token!r}")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        for value in (lo, hi):
            if value >= top:
                raise _UserError(f"{what} {value}: {what}s are 0-{top - 1}")
        out += list(range(lo, hi + 1))
    return out


def _span(token, what):
    m = re.fullmatch(r"(\d+):(\d+)", token)
    if not m:
        raise _UserError(f"{what}: expected START:STOP, e.g. 0:8, got {token!r}")
    return int(m.group(1)), int(m.group(2))


def _options(tokens, keys):
    """Split ``tokens`` into ``{key: value}`` for ``key VALUE`` pairs named in ``keys`` and the rest."""
    found, rest, k = {}, [], 0
    while k < len(tokens):
        if tokens[k] in keys:
            if k + 1 >= len(tokens):
                raise _UserError(f"{tokens[k]}: needs a value")
            found[tokens[k]] = tokens[k + 1]
            k += 2
        else:
            rest.append(tokens[k])
            k += 1
    return found, rest


def _source_line(token):
    file, sep, line = token.rpartition(":")
    return (file if sep else None), _int(line, "line")


class Repl:
    """Commands over ``session``, written to ``out`` (coloured when ``color``)."""

    def __init__(self, session, out=None, color=False):
        self.session = session
        self.out = out if out is not None else sys.stdout
        self.paint = _Paint(color)
        self.errors = 0
        self.last_line = ""

    def write(self, text):
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()

    # -- running commands ---------------------------------------------------------------------
    def execute(self, line):
        """Run one command line; False when it asks to quit. A user error prints one line."""
        try:
            tokens = shlex.split(line)
        except ValueError as e:
            return self._error(f"cannot parse {line!r}: {e}")
        if not tokens:
            return True
        word, _slash, suffix = tokens[0].partition("/")
        name = _ALIASES.get(word, word)
        if name == "quit":
            return False
        handler = getattr(self, f"_cmd_{name}", None)
        if (name not in COMMANDS and name not in _OLD) or handler is None:
            return self._error(f"unknown command {tokens[0]!r}; `help` lists the commands")
        try:
            handler(tokens[1:], suffix) if name in ("print", "x") else handler(tokens[1:])
        except (WarpsimError, ValueError, TypeError, KeyError, OSError, ImportError) as e:
            return self._error(_first_line(e))
        except Exception as e:                  # a slip of ours: still one line, and the session goes on
            return self._error(f"{tokens[0]}: {type(e).__name__}: {_first_line(e)}")
        return True

    def _error(self, message):
        self.errors += 1
        self.write(self.paint("error", f"error: {message}"))
        return True

    def run_script(self, lines, echo=True):
        """Run commands from ``lines`` (echoed after the prompt); returns 1 if any failed, else 0."""
        for line in lines:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if echo:
                self.write(self.paint("prompt", PROMPT) + line)
            if not self.execute(line):
                break
        return 1 if self.errors else 0

    def interact(self):
        """Read commands from a terminal with readline editing and history until ``quit`` or end of input; an
        empty line repeats the last command."""
        try:
            import readline
        except ImportError:          # no readline on this platform: plain input()
            readline = None
        if readline is not None:
            path = os.path.expanduser(HISTORY_FILE)
            try:
                readline.read_history_file(path)
            except OSError:
                pass
            readline.set_history_length(1000)
            atexit.register(_save_history, readline, path)
        prompt = PROMPT
        if self.paint.enabled:       # \x01 .. \x02: readline must not count the colour codes as width
            prompt = f"\x01\x1b[{_Paint.CODES['prompt']}m\x02{PROMPT}\x01\x1b[0m\x02"
        while True:
            try:
                line = input(prompt)
            except EOFError:
                self.write("")
                return 0
            except KeyboardInterrupt:
                self.write("")
                continue
            if not line.strip():
                line = self.last_line
            self.last_line = line
            if not self.execute(line):
                return 0

    # -- motion ----------------------------------------------------------------------------------
    def _count(self, args, what):
        if len(args) > 1:
            raise _UserError(f"{what}: expected at most one count, got {' '.join(args)}")
        return _int(args[0], what) if args else 1

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
                         f"{s.text[last.pc].rstrip(chr(59))}{wrote}")
        elif stop.executed:
            last = s.last
            tail = f"; the last: w{last.warp} {s.text[last.pc]}" if last is not None else ""
            lines.append(f"executed {stop.executed} warp instructions (#{s.position - stop.executed}-"
                         f"#{s.position - 1}){tail}")
        if stop.reason != "fault":
            text = views.where_text(s)
            lines.append(self.paint("here", text.splitlines()[0]) + "".join("\n" + t for t in text.splitlines()[1:]))
        self.write("\n".join(lines))

    def _cmd_step(self, args):
        self._report(self.session.step(self._count(args, "step")))

    def _cmd_next(self, args):
        self._report(self.session.next(self._count(args, "next")))

    def _cmd_stepi(self, args):
        self._report(self.session.stepi(self._count(args, "stepi")))

    def _cmd_continue(self, args):
        if args:
            raise _UserError("continue: takes no arguments")
        self._report(self.session.cont())

    def _cmd_until(self, args):
        if len(args) != 1:
            raise _UserError("until: expected one source line, e.g. until 56 or until gemm_smem.cu:56")
        file, line = _source_line(args[0])
        self._report(self.session.run_to(line, file))

    def _cmd_back(self, args):
        self._report(self.session.back(self._count(args, "back")))

    def _cmd_cuda(self, args):
        if args[:1] == ["warp"]:
            return self._cmd_warp(args[1:])
        if args[:1] == ["cta"]:
            return self._cmd_cta(args[1:])
        if args[:1] == ["role"]:
            return self._cmd_role(args[1:])
        raise _UserError(f"cuda: usage: {COMMANDS['cuda'][0]}")

    def _cmd_role(self, args):
        s = self.session
        if len(args) != 1 or args[0] not in ("producer", "consumer"):
            raise _UserError("cuda role: expected producer or consumer")
        if not s.roles:
            raise _UserError("cuda role: this kernel has no setmaxnreg, so its warps have no producer/consumer roles")
        warps = [w for w in range(s.warps) if s.role_of(w) == args[0]]
        if not warps:
            raise _UserError(f"cuda role: no warp of CTA {s.cta} is a {args[0]} yet (a warp takes its role at its "
                             f"setmaxnreg: step on)")
        s.pinned_warp = warps[0]
        self.write(f"focus warp {s.warp} (pinned), the first {args[0]} of warps "
                   f"{', '.join(str(w) for w in warps)}")

    def _cmd_cta(self, args):
        s = self.session
        if not args:
            self.write(f"CTA {s.cta} (index {s.run._next} of {len(s.run._ctas)})")
            return
        if len(args) != 1:
            raise _UserError("cuda cta: expected one CTA index, e.g. cuda cta 1")
        self._report(s.go_cta(_int(args[0], "cta")))

    def _cmd_warp(self, args):
        s = self.session
        if args == ["auto"]:
            s.pinned_warp = None
        elif len(args) == 1:
            w = _int(args[0], "warp")
            s._check_warp(w)
            s.pinned_warp = w
        elif args:
            raise _UserError("cuda warp: expected one warp number or auto")
        self.write(f"focus warp {s.warp}" + (" (pinned)" if s.pinned_warp is not None else
                                             " (the warp that runs next)"))

    # -- breakpoints --------------------------------------------------------------------------------
    def _list_breakpoints(self):
        s = self.session
        if not s.breakpoints:
            self.write("no breakpoints")
        for bp in s.breakpoints:
            self.write(f"{bp.number:3d}  {bp}  (hit {s.hit_counts[bp.number]} times)")

    def _cmd_break(self, args):
        s = self.session
        if not args:
            return self._list_breakpoints()
        if args[0] == "reg":                          # the old spelling: break reg WARP LANE REG
            if len(args) != 4:
                raise _UserError("break reg: expected reg WARP LANE REG, e.g. break reg 0 5 r52 (watch %r52 ...)")
            return self._cmd_watch([_register_token(args[3]), "lane", args[2], "warp", args[1]])
        if args[0] == "smem":                         # the old spelling: break smem ADDR [N]
            return self._cmd_watch(["shared", *args[1:]])
        if args[0] == "ptx" and len(args) == 2:
            bp = s.break_ptx(_int(args[1], "break ptx"))
        elif len(args) == 1 and re.fullmatch(r"(.+:)?-?\d+", args[0]):
            file, line = _source_line(args[0])
            bp = s.break_line(line, file)
        elif len(args) == 1:
            bp = s.break_kind(args[0])
        else:
            raise _UserError(f"break: usage: {COMMANDS['break'][0]}; got {' '.join(args)}")
        self.write(f"Breakpoint {bp.number}: {bp} ({len(bp.pcs)} instructions)")

    def _cmd_watch(self, args):
        s = self.session
        if args[:1] in (["shared"], ["smem"]):
            if len(args) not in (2, 3):
                raise _UserError("watch shared: expected shared ADDR [NBYTES], e.g. watch shared 0x400 4")
            bp = s.watch_smem(_int(args[1], "address"), _int(args[2], "bytes") if len(args) == 3 else 4)
        elif args and args[0][:1] in "%$r":
            opts, rest = _options(args, ("lane", "warp"))
            if len(rest) != 1:
                raise _UserError(f"watch: usage: {COMMANDS['watch'][0]}")
            name = views.register_names(s, [rest[0]])
            if len(name) != 1:
                raise _UserError(f"watch: one register at a time, got {rest[0]}")
            lane = _int(opts["lane"], "lane") if "lane" in opts else -1
            bp = s.watch_register(name[0], lane, _int(opts["warp"], "warp") if "warp" in opts else None)
        else:
            raise _UserError(f"watch: usage: {COMMANDS['watch'][0]}")
        self.write(f"Watch {bp.number}: {bp}")

    def _cmd_delete(self, args):
        if not args:
            self.session.delete()
            self.write("deleted all breakpoints")
        for a in args:
            self.session.delete(_int(a, "delete"))
            self.write(f"deleted breakpoint {a}")

    # -- views ------------------------------------------------------------------------------------
    def _cmd_where(self, args):
        text = views.where_text(self.session)
        self.write(self.paint("here", text.splitlines()[0]) + "".join("\n" + t for t in text.splitlines()[1:]))

    def _cmd_list(self, args):
        self.write(views.source_text(self.session, _int(args[0], "list") if args else None))

    def _cmd_info(self, args):
        args = args[1:] if args[:1] == ["cuda"] else args
        what, rest = (args[0], args[1:]) if args else ("", [])
        if what == "warps" and not rest:
            self.write(views.warps_text(self.session))
        elif what == "lanes":
            self._cmd_mask(rest)
        elif what in ("breakpoints", "break", "watchpoints") and not rest:
            self._list_breakpoints()
        elif what in ("registers", "reg", "regs"):
            self._cmd_regs(rest)
        elif what in ("mbarriers", "mbarrier") and not rest:
            self.write(views.mbarriers_text(self.session))
        elif what == "wgmma" and not rest:
            self.write(views.wgmma_text(self.session))
        elif what in ("tma", "bulk") and not rest:
            self.write(views.tma_text(self.session))
        else:
            raise _UserError(f"info: usage: {COMMANDS['info'][0]}")

    def _cmd_mask(self, args):
        opts, rest = _options(args, ("warp",))
        if rest:
            raise _UserError("info lanes: usage: info lanes [warp W]")
        self.write(views.lanes_text(self.session, _int(opts["warp"], "warp") if "warp" in opts else None))

    def _cmd_pred(self, args):
        opts, rest = _options(args, ("warp",))
        if rest:
            raise _UserError(f"pred: usage: {COMMANDS['pred'][0]}")
        self.write(views.pred_text(self.session, _int(opts["warp"], "warp") if "warp" in opts else None))

    def _cmd_printf(self, args):
        self.write(views.printf_text(self.session))

    def _cmd_print(self, args, suffix=""):
        s = self.session
        opts, rest = _options(args, ("lane", "lanes", "warp", "rows", "cols", "save"))
        fmt = _FORMAT_LETTERS.get(suffix) if suffix else None
        if suffix and fmt is None:
            raise _UserError(f"print/{suffix}: unknown format letter; x (hex) or f (f32)")
        words = [t for t in rest if t in views.FORMATS or t in ("f16", "bf16", "mma", "copy", "banks", "value")]
        names = [t for t in rest if t not in words]
        traced = s.traced
        if not names and set(words) - set(views.FORMATS):
            raise _UserError(f"print: usage: {COMMANDS['print'][0]}")
        if traced is not None and len(names) == 1 and names[0] in traced.trace.tensors:
            return self._frag(names[0], words, opts, fmt)
        if traced is not None and len(names) == 1 and names[0] in traced.tensors.memory_tensors():
            return self._tile(names[0], words, opts, fmt)
        bad = [w for w in words if w not in views.FORMATS]
        if bad:
            raise _UserError(f"print: {bad[0]!r} applies to a tensor; usage: {COMMANDS['print'][0]}")
        self._registers(names, [fmt] if fmt else words, opts)

    def _registers(self, names, formats, opts, warp=None):
        if len(formats) > 1:
            raise _UserError(f"print: one format, got {' '.join(formats)}")
        if "warp" in opts:
            warp = _int(opts["warp"], "warp")
        lanes = opts.get("lane", opts.get("lanes"))
        view = views.register_view(self.session, names, _int_list(lanes, "lane", 32) if lanes else None,
                                   formats[0] if formats else "typed", warp)
        if "save" in opts:
            view.save(opts["save"])
            self.write(f"wrote {opts['save']}")
            return
        self.write(self.paint.marks(view.text()))

    def _frag(self, name, words, opts, fmt):
        kind = "copy" if "copy" in words else "mma"
        bad = [w for w in words if w not in ("mma", "copy", "hex", "value")]
        if bad or set(opts) - {"lane", "lanes", "warp"}:
            raise _UserError(f"print: unexpected {(bad or sorted(set(opts) - {'lane', 'lanes', 'warp'}))[0]!r} "
                             f"for register tensor {name}")
        warp = _int(opts["warp"], "warp") if "warp" in opts else None
        lanes = opts.get("lane", opts.get("lanes"))
        view = views.frag_view(self.session, name, kind, warp)
        self.write(view.text(_int_list(lanes, "lane", 32) if lanes else None,
                             "hex" if "hex" in words or fmt == "hex" else "value"))

    def _tile(self, name, words, opts, fmt):
        banks = "banks" in words
        formats = [w for w in words if w in ("f16", "bf16", "f32", "hex")] + ([fmt] if fmt else [])
        bad = [w for w in words if w not in ("banks", "f16", "bf16", "f32", "hex")]
        if bad or "lane" in opts or "lanes" in opts:
            raise _UserError(f"print: unexpected {bad[0] if bad else 'lane'!r} for shared tensor {name}")
        rows = _span(opts["rows"], "rows") if "rows" in opts else None
        cols = _span(opts["cols"], "cols") if "cols" in opts else None
        warp = _int(opts["warp"], "warp") if "warp" in opts else None
        tile = views.smem_banks(self.session, name, rows, cols, warp) if banks else \
            views.smem_view(self.session, name, formats[0] if formats else None, rows, cols)
        if "save" in opts:
            tile.save(opts["save"])
            self.write(f"wrote {opts['save']}")
            return
        self.write(self.paint.marks(tile.text()))

    def _cmd_regs(self, args):
        """The old ``regs [W] [FMT] [REGS] [lane L] [warp W] [save F]``: ``print`` of registers."""
        opts, rest = _options(args, ("lane", "lanes", "warp", "save"))
        warp = None
        if rest and rest[0].isdigit() and "warp" not in opts:
            warp, rest = int(rest[0]), rest[1:]
        formats = [t for t in rest if t in views.FORMATS]
        names = [_register_token(t) for t in rest if t not in views.FORMATS]
        if self.session.traced is not None and not names and "save" in opts:
            raise _UserError("regs: name the registers to save: regs %r0..%r7 save FILE.svg")
        self._registers(names, formats, opts, warp)

    def _cmd_frag(self, args):
        """The old ``frag NAME [mma|copy] [lane L] [warp W] [hex]``: ``print`` of a register tensor."""
        opts, rest = _options(args, ("lane", "lanes", "warp"))
        if not rest:
            raise _UserError("frag: usage: print TENSOR [mma|copy] [lane L] [warp W] [hex]")
        unknown = [t for t in rest[1:] if t not in ("mma", "copy", "hex")]
        if unknown:
            raise _UserError(f"frag: unexpected {unknown[0]!r}; usage: print TENSOR [mma|copy] [lane L] [hex]")
        self._frag(rest[0], rest[1:], opts, None)

    def _cmd_smem(self, args, suffix=""):
        """The old ``smem NAME ...`` (a shared tensor: ``print``) and ``smem ADDR [COUNT] [TYPE]`` (``x/``)."""
        if not args:
            raise _UserError("smem: usage: print SHARED_TENSOR [banks] ... or x/N shared ADDR")
        if args[0][:1].isdigit():
            letters = {"hex": "x", "u32": "u", "s32": "d", "f32": "f", "f16": "h", "u16": "s", "u8": "b", "f64": "g"}
            kind = letters.get(args[-1], "") if len(args) > 1 and not args[-1][0].isdigit() else ""
            numbers = [a for a in args[1:] if a[0].isdigit()]
            return self._cmd_x(["shared", args[0]], (numbers[0] if numbers else "") + (kind or "x"))
        opts, rest = _options(args, ("rows", "cols", "save", "warp"))
        words = rest[1:]
        if self.session.traced is None or rest[0] not in self.session.traced.tensors.memory_tensors():
            views.smem_view(self.session, rest[0])            # names the problem
        self._tile(rest[0], words, opts, None)

    def _cmd_x(self, args, suffix=""):
        m = re.fullmatch(r"(\d*)([a-z]?)", suffix)
        if not m:
            raise _UserError(f"x: expected x/[COUNT][FORMAT], e.g. x/8x shared 0x400, got x/{suffix}")
        space = "shared"
        if args[:1] in (["shared"], ["global"]):
            space, args = args[0], args[1:]
        if len(args) != 1:
            raise _UserError(f"x: usage: {COMMANDS['x'][0]}")
        count = int(m.group(1)) if m.group(1) else 16
        self.write(views.memory_text(self.session, _int(args[0], "address"), count, m.group(2) or "x", space))

    def _cmd_banks(self, args):
        opts, rest = _options(args, ("warp",))
        scope, detail, each = "last", False, False
        for tok in rest:
            if tok == "detail":
                detail = True
            elif tok == "each":
                each = True
            elif tok in ("last", "next", "done", "all"):
                scope = tok
            else:
                raise _UserError(f"banks: unexpected {tok!r}; usage: {COMMANDS['banks'][0]}")
        if scope in ("last", "next"):
            warp = _int(opts["warp"], "warp") if "warp" in opts else None
            self.write(views.banks_text(self.session, warp, scope))
        else:
            self.write(views.banks_view(self.session, scope, detail, each).text())

    def _cmd_who(self, args):
        opts, rest = _options(args, ("in",))
        if len(rest) < 2:
            raise _UserError(f"who: usage: {COMMANDS['who'][0]}")
        coord = tuple(_int(t, "who") for t in rest[1:])
        self.write(views.who_view(self.session, rest[0], coord, opts.get("in")).text())

    def _cmd_from(self, args):
        opts, rest = _options(args, ("warp",))
        if len(rest) != 2:
            raise _UserError(f"from: usage: {COMMANDS['from'][0]}")
        warp = _int(opts["warp"], "warp") if "warp" in opts else None
        reg = _int(_register_token(rest[1])[2:], "register")
        self.write(views.from_view(self.session, _int(rest[0], "lane"), reg, warp).text())

    def _cmd_help(self, args):
        if args:
            name = _ALIASES.get(args[0], args[0])
            if name not in COMMANDS:
                raise _UserError(f"help: unknown command {args[0]!r}")
            usage, text = COMMANDS[name]
            self.write(f"{usage}\n  {text}")
            return
        width = max(len(u) for u, _t in COMMANDS.values() if len(u) < 40)
        self.write("\n".join(f"{u:<{width}}  {t}" if len(u) < 40 else f"{u}\n{'':<{width}}  {t}"
                             for u, t in COMMANDS.values()))


def _register_token(token):
    """A register as the old commands wrote it (``r52``, ``52``) in PTX's spelling (``%r52``); others unchanged."""
    return f"%r{token.lstrip('r')}" if re.fullmatch(r"r?\d+", token) else token


def _save_history(readline, path):
    try:
        readline.write_history_file(path)
    except OSError:
        pass
