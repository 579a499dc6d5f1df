"""Hand-written SVG for a :class:`~warpsim.draw.scene.Scene` (no dependency).

Each cell is a group ``<g class="cell" data-...>`` holding its ``<title>`` (tooltip), its
``<rect>`` (``stroke-width`` written only when not 1) and one ``<text>`` per line, in the manner of CuTe's ``print_svg``
(``include/cute/util/print_svg.hpp``: a rectangle then ``T%d`` and ``V%d`` texts per cell). Comment
lines come first, as CuTe prints the layouts it draws. Fonts are set once in a ``<style>``.

>>> from warpsim.draw.scene import Scene
>>> from warpsim.draw.cells import Cell, Label
>>> s = Scene(40, 20, comments=["A: (_4,_8):(_8,_1)"])
>>> s.add(Cell(0, 0, 20, 20, (175, 175, 255), ("T0", "V0"), data=(("row", 0),)))
>>> s.add(Label(30, 10, "a<b"))
>>> text = to_svg(s)
>>> '<rect x="0" y="0" width="20" height="20" fill="#afafff"' in text, '>a&lt;b</text>' in text
(True, True)
>>> import xml.etree.ElementTree as ET
>>> len(ET.fromstring(text).findall(".//{http://www.w3.org/2000/svg}g"))
1
"""

from xml.sax.saxutils import escape, quoteattr

from warpsim.draw.cells import Cell, Label, line_centers
from warpsim.draw.colors import rgb_hex, text_color

__all__ = ["to_svg", "STYLE"]

STYLE = ("text{font-family:DejaVu Sans Mono,Menlo,Consolas,monospace;dominant-baseline:central;"
         "text-anchor:middle}.b{font-weight:bold}")


def _num(x):
    """A coordinate without a trailing ``.0``."""
    x = float(x)
    return str(int(x)) if x == int(x) else f"{x:.2f}".rstrip("0")


def _comment(text):
    return "<!-- " + str(text).replace("--", "- -") + " -->"


def _text(x, y, s, size, anchor, bold, fill):
    cls = ' class="b"' if bold else ""
    color = "" if tuple(fill) == (0, 0, 0) else f' fill="{rgb_hex(fill)}"'
    align = "" if anchor == "middle" else f' text-anchor="{anchor}"'
    return (f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}"{align}{cls}{color}>'
            f"{escape(str(s))}</text>")


def _cell(c):
    attrs = "".join(f" data-{k}={quoteattr(str(v))}" for k, v in c.data)
    out = [f'<g class="{c.kind}"{attrs}>']
    if c.title:
        out.append(f"<title>{escape(c.title)}</title>")
    width = "" if c.stroke_width == 1 else f' stroke-width="{_num(c.stroke_width)}"'
    out.append(f'<rect x="{_num(c.x)}" y="{_num(c.y)}" width="{_num(c.w)}" height="{_num(c.h)}" '
               f'fill="{rgb_hex(c.fill)}" stroke="{rgb_hex(c.stroke)}"{width}/>')
    ink = text_color(c.fill)
    for (x, y), line in zip(line_centers(c), c.lines):
        out.append(_text(x, y, line, c.font_size, "middle", c.bold, ink))
    out.append("</g>")
    return "".join(out)


def to_svg(scene):
    """The SVG document of ``scene``."""
    lines = [_comment(c) for c in scene.comments]
    lines.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(scene.width)}" '
                 f'height="{_num(scene.height)}" viewBox="0 0 {_num(scene.width)} {_num(scene.height)}">')
    if scene.title:
        lines.append(f"<title>{escape(scene.title)}</title>")
    lines.append(f"<style>{STYLE}</style>")
    lines.append(f'<rect class="background" x="0" y="0" width="{_num(scene.width)}" '
                 f'height="{_num(scene.height)}" fill="#ffffff"/>')
    for item in scene.items:
        if isinstance(item, Cell):
            lines.append(_cell(item))
        elif isinstance(item, Label):
            lines.append(_text(item.x, item.y, item.text, item.font_size, item.anchor, item.bold, item.fill))
    lines.append("</svg>")
    return "\n".join(lines) + "\n"
