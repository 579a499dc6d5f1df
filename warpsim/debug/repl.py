"""``warpsim debug``: an interactive command line over a :class:`~warpsim.debug.session.Session`.

Commands (``help`` lists them; a command's error prints one line and the session goes on)::

    step [N]          execute N instructions (default 1)          s
    next [N]          to the start of the next source line's operation  n
    cont              to the end or a breakpoint                  c
    until LINE        to the start of the next operation from LINE
    back [N]          N instructions backwards (checkpoints + replay)
    break [LINE | FILE:LINE | KIND | reg W L R | smem ADDR [N]]   b; alone: list them
    delete [N ...]    delete breakpoints (all without N)          d
    where             the next instruction, its source line, the last one
    list [LINE]       the source around the next instruction (or LINE)  l
    regs [W] [FMT] [REGS] [lane L[,L..]] [save FILE.svg]   a warp's registers; FMT hex|f16x2|bf16x2|f32
    frag NAME [mma|copy] [lane L[,L..]] [warp W] [hex]     a register tensor per lane, by coordinate
    who NAME I J.. [in TENSOR]                            which lane/register holds element (I, J..)
    from LANE REG [warp W]                                where a register's halves came from
    smem NAME [banks] [FMT] [rows A:B] [cols A:B] [save FILE.svg]   a shared tile, or its bank map
    banks [all | #I] [each] [detail]                      the bank-conflict model's report
    help [COMMAND], quit

``REGS``: ``r36-r51``, ``r4,r8`` or a register tensor's name; lanes: ``5``, ``0-3,8``. Input comes
from a terminal (readline editing, history in ``~/.warpsim_history``), a ``--commands`` file or a
pipe; a script's commands are echoed after the prompt. Output is coloured when it goes to a
terminal and ``NO_COLOR`` is unset or empty.

>>> from warpsim.program.program import Program
>>> from warpsim.program.ops import clear
>>> from warpsim.cute import make_tensor
>>> from warpsim.debug.session import Session
>>> def kernel(tid):
...     acc = make_tensor("f32", (2,))
...     clear(acc)
>>> import io
>>> out = io.StringIO()
>>> repl = Repl(Session(Program(kernel, threads=32)), out)
>>> repl.run_script(["step", "regs 0 f32 lane 1", "frag nope"])
1
>>> print(out.getvalue().splitlines()[-4])
   1 *0  *0
>>> out.getvalue().splitlines()[-1]
"error: no register tensor 'nope' (the program's per-thread tensors: acc)"
"""

from __future__ import annotations

import atexit
import os
import re
import shlex
import sys

from warpsim.debug import views
from warpsim.draw.bits import REGISTER_FORMATS
from warpsim.errors import WarpsimError

__all__ = ["Repl", "use_color", "COMMANDS", "HISTORY_FILE", "PROMPT"]

PROMPT = "(warpsim) "
HISTORY_FILE = "~/.warpsim_history"

COMMANDS = {   # name: (usage, help)
    "step": ("step [N]", "execute N instructions (default 1)"),
    "next": ("next [N]", "execute to the start of the next source line's operation (copy, gemm, ...)"),
    "cont": ("cont", "execute to the end, a breakpoint, a watched change or a fault"),
    "until": ("until LINE", "execute to the start of the next operation from source line LINE"),
    "back": ("back [N]", "go N instructions backwards (default 1)"),
    "break": ("break [LINE | FILE:LINE | KIND | reg W L R | smem ADDR [N]]",
              "stop at a source line, before an instruction kind (ldmatrix, mma, st.shared, ...), or after "
              "a register or N shared bytes (default 4) change; alone: list the breakpoints"),
    "delete": ("delete [N ...]", "delete breakpoints N (all without N)"),
    "where": ("where", "the next instruction (index, warp, PTX, source line) and the last one"),
    "list": ("list [LINE]", "the program's source around the next instruction or LINE"),
    "regs": ("regs [W] [FMT] [REGS] [lane L[,L..]] [save FILE.svg]",
             "warp W's registers (default: the last instruction's warp); FMT hex, f16x2, bf16x2 or f32; REGS "
             "r36-r51, r4,r8, a tensor name or all (default: those the warp has written so far); "
             "* marks what the last instruction wrote"),
    "frag": ("frag NAME [mma|copy] [lane L[,L..]] [warp W] [hex]",
             "a register tensor per lane: the value at each coordinate of its MMA view or copy view"),
    "who": ("who NAME I J.. [in TENSOR]",
            "which lane and register (half) of tensor NAME hold element (I, J..) of the shared/global tensor "
            "it is loaded from or stored to (or TENSOR)"),
    "from": ("from LANE REG [warp W]", "where each half of register REG of LANE came from"),
    "smem": ("smem NAME [banks] [FMT] [rows A:B] [cols A:B] [save FILE.svg]",
             "a shared tensor in its logical shape, through its swizzle; `banks`: its bank map, the last "
             "instruction's access marked *"),
    "banks": ("banks [all | #I] [each] [detail]",
              "bank conflicts of the shared accesses executed so far, of the whole program (all) or of "
              "instruction I; each: a line per access; detail: the phases of every conflicting access"),
    "help": ("help [COMMAND]", "this list, or one command"),
    "quit": ("quit", "leave (also: exit, q, end of input)"),
}
_ALIASES = {"s": "step", "n": "next", "c": "cont", "b": "break", "d": "delete", "l": "list", "q": "quit",
            "exit": "quit", "continue": "cont", "run_to": "until", "info": "break"}


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


class Repl:
    """Commands over ``session``, written to ``out`` (coloured when ``color``)."""

    def __init__(self, session, out=None, color=False):
        self.session = session
        self.out = out if out is not None else sys.stdout
        self.paint = _Paint(color)
        self.errors = 0

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
        name = _ALIASES.get(tokens[0], tokens[0])
        if name == "quit":
            return False
        handler = getattr(self, f"_cmd_{name}", None)
        if name not in COMMANDS or handler is None:
            return self._error(f"unknown command {tokens[0]!r}; `help` lists the commands")
        try:
            handler(tokens[1:])
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

    def interact(self, stdin=None):
        """Read commands from a terminal with readline editing and history until ``quit`` or end of input."""
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
            if not self.execute(line):
                return 0

    # -- motion ----------------------------------------------------------------------------------
    def _count(self, args, what):
        if len(args) > 1:
            raise _UserError(f"{what}: expected at most one count, got {' '.join(args)}")
        return _int(args[0], what) if args else 1

    def _report(self, stop):
        s = self.session
        lines = []
        for bp, detail in stop.hits:
            kind = "Watch" if bp.kind in ("reg", "smem") else "Breakpoint"
            lines.append(self.paint("stop", f"{kind} {bp.number}, {bp}" + (f": {detail}" if detail else "")))
        if stop.reason == "fault":
            lines.append(self.paint("error", f"fault: {stop.message}"))
        if stop.reason == "back":
            lines.append(f"back to position {s.position} (replayed from the checkpoint at "
                         f"{max(k for k in s.checkpoints if k <= s.position)})")
        elif stop.executed == 1 and s.last is not None:
            last = s.last
            regs = views.register_ranges(last.dst)
            lines.append(f"executed #{s.position - 1} w{last.warp} {last.ptx}" + (f"; wrote w{last.warp} {regs}"
                                                                                  if regs else ""))
        elif stop.executed:
            lines.append(f"executed {stop.executed} instructions (#{s.position - stop.executed}-#{s.position - 1})")
        text = views.where_text(s)
        lines.append(self.paint("here", text.splitlines()[0]) + "\n" + "\n".join(text.splitlines()[1:]))
        self.write("\n".join(lines))

    def _cmd_step(self, args):
        self._report(self.session.step(self._count(args, "step")))

    def _cmd_next(self, args):
        self._report(self.session.next(self._count(args, "next")))

    def _cmd_cont(self, args):
        if args:
            raise _UserError("cont: takes no arguments")
        self._report(self.session.cont())

    def _cmd_until(self, args):
        if len(args) != 1:
            raise _UserError("until: expected one source line, e.g. until 99")
        file, line = self._line(args[0])
        self._report(self.session.run_to(line, file))

    def _cmd_back(self, args):
        self._report(self.session.back(self._count(args, "back")))

    # -- breakpoints --------------------------------------------------------------------------------
    @staticmethod
    def _line(token):
        file, sep, line = token.rpartition(":")
        return (file if sep else None), _int(line, "line")

    def _cmd_break(self, args):
        s = self.session
        if not args or args == ["breakpoints"]:
            if not s.breakpoints:
                self.write("no breakpoints")
            for bp in s.breakpoints:
                self.write(f"{bp.number:3d}  {bp}  (hit {s.hit_counts[bp.number]} times)")
            return
        if args[0] == "reg":
            if len(args) != 4:
                raise _UserError("break reg: expected reg WARP LANE REG, e.g. break reg 0 5 r52")
            bp = s.watch_register(_int(args[1], "warp"), _int(args[2], "lane"), _int(args[3].lstrip("r"), "register"))
        elif args[0] == "smem":
            if len(args) not in (2, 3):
                raise _UserError("break smem: expected smem ADDR [NBYTES], e.g. break smem 0x2000 2")
            bp = s.watch_smem(_int(args[1], "address"), _int(args[2], "bytes") if len(args) == 3 else 4)
        elif len(args) == 1 and re.fullmatch(r"(.+:)?\d+", args[0]):
            file, line = self._line(args[0])
            bp = s.break_line(line, file)
        elif len(args) == 1:
            bp = s.break_kind(args[0])
        else:
            raise _UserError(f"break: expected LINE, FILE:LINE, KIND, reg W L R or smem ADDR [N], got {' '.join(args)}")
        self.write(f"Breakpoint {bp.number}: {bp}")

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
        self.write(self.paint("here", text.splitlines()[0]) + "\n" + "\n".join(text.splitlines()[1:]))

    def _cmd_list(self, args):
        line = _int(args[0], "list") if args else None
        self.write(views.source_text(self.session, line))

    def _cmd_regs(self, args):
        opts, rest = _options(args, ("lane", "lanes", "save", "warp"))
        warp = _int(opts["warp"], "warp") if "warp" in opts else None
        fmt, regs = "hex", None
        for tok in rest:
            if re.fullmatch(r"\d+", tok) and warp is None:
                warp = int(tok)
            elif tok in REGISTER_FORMATS:
                fmt = tok
            elif regs is None:
                regs = tok
            else:
                raise _UserError(f"regs: unexpected {tok!r}; usage: {COMMANDS['regs'][0]}")
        lanes = opts.get("lane", opts.get("lanes"))
        view = views.register_view(self.session, warp, fmt, regs, _int_list(lanes, "lane", 32) if lanes else None)
        if "save" in opts:
            view.save(opts["save"])
            self.write(f"wrote {opts['save']}")
            return
        self.write(self.paint.marks(view.text()))

    def _cmd_frag(self, args):
        opts, rest = _options(args, ("lane", "lanes", "warp"))
        if not rest:
            raise _UserError(f"frag: usage: {COMMANDS['frag'][0]}")
        name, kind, fmt = rest[0], "mma", "value"
        for tok in rest[1:]:
            if tok in ("mma", "copy"):
                kind = tok
            elif tok == "hex":
                fmt = "hex"
            else:
                raise _UserError(f"frag: unexpected {tok!r}; usage: {COMMANDS['frag'][0]}")
        warp = _int(opts["warp"], "warp") if "warp" in opts else None
        lanes = opts.get("lane", opts.get("lanes"))
        view = views.frag_view(self.session, name, kind, warp)
        self.write(view.text(_int_list(lanes, "lane", 32) if lanes else None, fmt))

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
        self.write(views.from_view(self.session, _int(rest[0], "lane"), _int(rest[1].lstrip("r"), "register"),
                                   warp).text())

    def _cmd_smem(self, args):
        opts, rest = _options(args, ("rows", "cols", "save"))
        if not rest:
            raise _UserError(f"smem: usage: {COMMANDS['smem'][0]}")
        name, banks, fmt = rest[0], False, None
        for tok in rest[1:]:
            if tok == "banks":
                banks = True
            elif tok in ("f16", "bf16", "f32", "hex"):
                fmt = tok
            else:
                raise _UserError(f"smem: unexpected {tok!r}; usage: {COMMANDS['smem'][0]}")
        rows = _span(opts["rows"], "rows") if "rows" in opts else None
        cols = _span(opts["cols"], "cols") if "cols" in opts else None
        tile = views.smem_banks(self.session, name, rows, cols) if banks else \
            views.smem_view(self.session, name, fmt, rows, cols)
        if "save" in opts:
            tile.save(opts["save"])
            self.write(f"wrote {opts['save']}")
            return
        self.write(self.paint.marks(tile.text()))

    def _cmd_banks(self, args):
        scope, detail, each = "done", False, False
        for tok in args:
            if tok == "detail":
                detail = True
            elif tok == "each":
                each = True
            elif tok in ("all", "done"):
                scope = tok
            else:
                scope = _int(tok.lstrip("#"), "banks")
        self.write(views.banks_view(self.session, scope, detail, each).text())

    def _cmd_help(self, args):
        if args:
            name = _ALIASES.get(args[0], args[0])
            if name not in COMMANDS:
                raise _UserError(f"help: unknown command {args[0]!r}")
            usage, text = COMMANDS[name]
            self.write(f"{usage}\n  {text}")
            return
        width = max(len(u) for u, _t in COMMANDS.values())
        lines = [f"{u:<{width}}  {t}" if len(u) < 40 else f"{u}\n{'':<{width}}  {t}" for u, t in COMMANDS.values()]
        self.write("\n".join(lines))


def _save_history(readline, path):
    try:
        readline.write_history_file(path)
    except OSError:
        pass
