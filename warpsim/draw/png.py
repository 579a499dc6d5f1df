"""PNG output of a :class:`~warpsim.draw.scene.Scene`, through Pillow (the optional extra ``warpsim[draw]``).

Pillow is imported inside :func:`to_png`; without it, ``to_png`` raises ``ImportError`` with the
install hint ``pip install "warpsim[draw]"``. The scene is drawn ``scale`` times larger than its
SVG size (text stays readable); fonts are DejaVu Sans Mono when the system has it, else Pillow's
built-in font.
"""

from functools import lru_cache

from warpsim.draw.cells import Cell, Label, line_centers
from warpsim.draw.colors import rgb_hex, text_color

__all__ = ["to_png", "INSTALL_HINT"]

INSTALL_HINT = 'PNG output needs Pillow: pip install "warpsim[draw]" (or: pip install pillow)'


def _pillow():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=64)
def _font(size, bold):
    _image, _draw, ImageFont = _pillow()
    for name in (("DejaVuSansMono-Bold.ttf" if bold else "DejaVuSansMono.ttf"), "DejaVuSansMono.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            pass
    try:
        return ImageFont.load_default(size=size)
    except TypeError:        # Pillow < 10.1: a fixed-size bitmap font
        return ImageFont.load_default()


def to_png(scene, path, scale=2):
    """Rasterise ``scene`` into the PNG file ``path``, ``scale`` pixels per scene unit."""
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not 0 < scale <= 16:
        raise ValueError(f"to_png: scale must be a number in (0, 16], got {scale!r}")
    Image, ImageDraw, _font_module = _pillow()
    width, height = max(1, round(scene.width * scale)), max(1, round(scene.height * scale))
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)

    def text(x, y, s, size, anchor, bold, fill):
        font = _font(max(1, round(size * scale)), bool(bold))
        draw.text((x * scale, y * scale), str(s), fill=rgb_hex(fill), font=font,
                  anchor="mm" if anchor == "middle" else "lm")

    for item in scene.items:
        if isinstance(item, Cell):
            box = [item.x * scale, item.y * scale, (item.x + item.w) * scale, (item.y + item.h) * scale]
            draw.rectangle(box, fill=rgb_hex(item.fill), outline=rgb_hex(item.stroke),
                           width=max(1, round(item.stroke_width * scale)))
            ink = text_color(item.fill)
            for (x, y), line in zip(line_centers(item), item.lines):
                text(x, y, line, item.font_size, "middle", item.bold, ink)
        elif isinstance(item, Label):
            text(item.x, item.y, item.text, item.font_size, item.anchor, item.bold, item.fill)
    image.save(path, format="PNG")
