"""Source lines of a PTX kernel's instructions: the ``.loc`` inline chains, down to the user's own line.

``nvcc -lineinfo`` and the CuTe DSL write a ``.loc FILE LINE COL`` before instructions; for inlined code
``.loc F L C, function_name ..., inlined_at F2 L2 C2`` names the call site it was inlined at, and that
call site's own ``.loc`` (emitted earlier, with its ``inlined_at``) names the next one out. Following
those links gives an instruction's *chain*: ``((file, line), ...)`` from the kernel's own line inward
(``gemm_smem.cu:124`` -> ``gemm_smem.cu:102`` -> ``gemm_smem.cu:56`` -> ``copy.hpp:545`` -> ...).

The *user line* of an instruction is the innermost frame of its chain in the file of the outermost
frame (the kernel's file): for CuTe C++ the line of the user's ``copy(...)`` rather than CuTe's header,
for a CuTe DSL kernel the Python line. A call site inlined from several places keeps the link seen
last before the instruction (the compiler emits a chain just before the code that uses it); a link
to itself is ignored.

>>> text = ('.file 1 "k.cu"\\n.file 2 "cute/copy.hpp"\\n.loc 1 20 3\\nmov.u32 %r1, 1;\\n'
...         '.loc 1 7 5, function_name $L__s0, inlined_at 1 20 3\\n'
...         '.loc 2 99 1, function_name $L__s1, inlined_at 1 7 5\\nadd.u32 %r1, %r1, 1;\\n')
>>> chains = source_chains(text, {1: "k.cu", 2: "cute/copy.hpp"}, [4, 7])
>>> chains[7], user_line(chains[7])
((('k.cu', 20), ('k.cu', 7), ('copy.hpp', 99)), ('k.cu', 7))
"""

from __future__ import annotations

import re

__all__ = ["source_chains", "user_line"]

_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:\s*,\s*function_name\s+[^,\s]+(?:\s*\+\s*\d+)?)?"
                  r"(?:\s*,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")
_FUNCTION = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(?:entry|func)\b")


def source_chains(text, files, ptx_lines):
    """``{ptx_line: chain}`` for each PTX line in ``ptx_lines`` (1-based), ``chain`` a tuple of
    ``(file base name, line)`` from the outermost call inward; ``()`` where no ``.loc`` precedes it.
    ``files``: the module's ``.file`` table (index -> path)."""
    wanted = set(ptx_lines)
    parent = {}                    # (file, line, col) -> (file, line, col) it was inlined at
    current = None
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = _LOC.match(line)
        if m:
            f, ln, col = (int(m.group(k)) for k in (1, 2, 3))
            current = (f, ln, col)
            if m.group(4) is not None:
                at = (int(m.group(4)), int(m.group(5)), int(m.group(6)))
                if at != current:
                    parent[current] = at
            else:
                parent.pop(current, None)
        elif _FUNCTION.match(line):
            current = None
        if number in wanted:
            out[number] = _chain(current, parent, files)
    return out


def _chain(loc, parent, files):
    frames, seen = [], set()
    while loc is not None and loc not in seen and loc[1] > 0:
        seen.add(loc)
        name = files.get(loc[0], f"file{loc[0]}").replace("\\", "/").rsplit("/", 1)[-1]
        frames.append((name, loc[1]))
        loc = parent.get(loc)
    return tuple(reversed(frames))


def user_line(chain):
    """The innermost frame of ``chain`` in the outermost frame's file, or None for an empty chain."""
    if not chain:
        return None
    return [frame for frame in chain if frame[0] == chain[0][0]][-1]
