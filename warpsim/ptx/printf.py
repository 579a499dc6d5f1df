"""Device ``printf`` (``vprintf``): a C format string and the argument buffer the kernel packed.

CUDA passes ``vprintf(format, args)`` where ``args`` points to the arguments laid out one after
another, each aligned to its size: ints of up to 32 bits as 4 bytes, ``long``/``long long`` and
pointers as 8, floats promoted to double (8 bytes), ``%s`` as an 8-byte address of the string.

>>> import struct
>>> format_printf("t=%d x=%lld f=%.2f %%\\n", struct.pack("<iiqd", 3, 0, -5, 1.5))
't=3 x=-5 f=1.50 %\\n'
"""

import re
import struct

__all__ = ["format_printf"]

_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t)?([diouxXcsfFeEgGaAp%])")


def format_printf(fmt, args, read_string=None):
    """The text ``printf(fmt, ...)`` prints with the packed argument bytes ``args``.

    ``read_string(address) -> str`` reads a ``%s`` argument (default: shows the address).
    Arguments missing from ``args`` print as ``<missing>``.
    """
    out, pos, offset = [], 0, 0

    def take(size, fmt_char):
        nonlocal offset
        offset = -(-offset // size) * size
        if offset + size > len(args):
            return None
        value = struct.unpack_from("<" + fmt_char, args, offset)[0]
        offset += size
        return value

    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if width == "*":
            width = str(take(4, "i"))
        if prec == "*":
            prec = str(take(4, "i"))
        spec = "%" + flags + (width or "") + (f".{prec}" if prec is not None else "")
        wide = length in ("ll", "l", "z", "j", "t")
        if conv in "di":
            v = take(8, "q") if wide else take(4, "i")
            text = None if v is None else (spec + "d") % v
        elif conv in "ouxX":
            v = take(8, "Q") if wide else take(4, "I")
            if v is not None and length == "h":
                v &= 0xFFFF
            text = None if v is None else (spec + conv) % v
        elif conv == "c":
            v = take(4, "i")
            text = None if v is None else (spec + "c") % chr(v & 0xFF)
        elif conv in "fFeEgGaA":
            v = take(8, "d")
            text = None if v is None else (float(v).hex() if conv in "aA" else (spec + conv) % v)
        elif conv == "p":
            v = take(8, "Q")
            text = None if v is None else f"0x{v:x}"
        else:   # s
            v = take(8, "Q")
            text = None if v is None else (spec + "s") % (read_string(v) if read_string else f"<string {v:#x}>")
        out.append("<missing>" if text is None else text)
    out.append(fmt[pos:])
    return "".join(out)
