#!/usr/bin/env python3
"""AttnScope's icon: a small attention matrix, six output steps over six inputs, each row a soft alignment peaked on
the input it reads (rows 2 and 3 cross, as a date model reorders day and month), in viridis on a dark rounded
square, the third row outlined as the Alignment tab outlines the step in view. Writes the scalable SVG (the window's
icon, compiled into the programs, and the desktop's) and a 256 x 256 PNG drawn from the same shapes, with no
library beyond Python's own (3 x 3 samples a pixel).

    python3 -m tools.make_icon [OUT_DIR]     (default: resources/icons)
"""
import argparse
import math
import pathlib
import struct
import zlib

VIEW = 64.0  # the SVG's user units
BACKGROUND = (2.0, 2.0, 60.0, 60.0, 10.0)  # x, y, width, height, corner radius
BACKGROUND_COLOUR = "#1f1d2b"
GRID = (10.0, 10.0, 44.0)  # x, y, side of the matrix
CELLS = 6
GAP = 1.0
CELL_RADIUS = 1.0
PEAKS = [0, 1, 3, 2, 4, 5]  # the input each output step reads most
SIGMA = 0.6
OUTLINED_ROW = 2
OUTLINE_COLOUR = "#f4f4f4"
OUTLINE_WIDTH = 1.0

# Viridis at 0, 0.1, ..., 1 (matplotlib's table), linearly interpolated between.
VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884", "#44bf70", "#7ad151",
           "#bddf26", "#fde725"]


def rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def viridis(t):
    t = min(max(t, 0.0), 1.0) * (len(VIRIDIS) - 1)
    i = min(int(t), len(VIRIDIS) - 2)
    a, b = rgb(VIRIDIS[i]), rgb(VIRIDIS[i + 1])
    f = t - i
    return "#%02x%02x%02x" % tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))


def weights():
    """Each row: a Gaussian around its peak, normalised to sum 1, then shown against the row's maximum."""
    rows = []
    for peak in PEAKS:
        row = [math.exp(-((j - peak) ** 2) / (2 * SIGMA * SIGMA)) for j in range(CELLS)]
        total = sum(row)
        row = [w / total for w in row]
        top = max(row)
        rows.append([w / top for w in row])
    return rows


def cell_rect(i, j):
    x0, y0, side = GRID
    step = side / CELLS
    return (x0 + j * step + GAP / 2, y0 + i * step + GAP / 2, step - GAP, step - GAP, CELL_RADIUS)


def outline_rect():
    x0, y0, side = GRID
    step = side / CELLS
    pad = GAP / 2 + OUTLINE_WIDTH / 2
    return (x0 - pad, y0 + OUTLINED_ROW * step - pad + GAP / 2, side + 2 * pad, step - GAP + 2 * pad, 2.0)


def shapes():
    """(kind, rect, colour) back to front; kind "fill" or "stroke"."""
    out = [("fill", BACKGROUND, BACKGROUND_COLOUR)]
    for i, row in enumerate(weights()):
        for j, w in enumerate(row):
            out.append(("fill", cell_rect(i, j), viridis(w)))
    out.append(("stroke", outline_rect(), OUTLINE_COLOUR))
    return out


def svg():
    lines = ['<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">',
             "  <title>AttnScope</title>",
             "  <!-- Written by tools/make_icon.py: edit that, not this. -->"]
    for kind, (x, y, w, h, r), colour in shapes():
        common = 'x="%g" y="%g" width="%g" height="%g" rx="%g"' % (round(x, 3), round(y, 3), round(w, 3), round(h, 3), r)
        if kind == "fill":
            lines.append('  <rect %s fill="%s"/>' % (common, colour))
        else:
            lines.append('  <rect %s fill="none" stroke="%s" stroke-width="%g"/>' % (common, colour, OUTLINE_WIDTH))
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


def inside_rounded(px, py, rect):
    x, y, w, h, r = rect
    if px < x or py < y or px > x + w or py > y + h:
        return False
    cx = min(max(px, x + r), x + w - r)
    cy = min(max(py, y + r), y + h - r)
    return (px - cx) ** 2 + (py - cy) ** 2 <= r * r


def inside_stroke(px, py, rect):
    x, y, w, h, r = rect
    half = OUTLINE_WIDTH / 2
    outer = (x - half, y - half, w + 2 * half, h + 2 * half, r + half)
    inner = (x + half, y + half, w - 2 * half, h - 2 * half, max(r - half, 0.0))
    return inside_rounded(px, py, outer) and not inside_rounded(px, py, inner)


def png(size, samples=3):
    """RGBA rows of the shapes at `size` pixels a side: each pixel the mean of samples x samples points."""
    drawn = [(kind, rect, rgb(colour)) for kind, rect, colour in shapes()]
    scale = VIEW / size
    rows = []
    for py in range(size):
        row = bytearray()
        for px in range(size):
            r = g = b = a = 0.0
            for sy in range(samples):
                for sx in range(samples):
                    x = (px + (sx + 0.5) / samples) * scale
                    y = (py + (sy + 0.5) / samples) * scale
                    colour = None
                    for kind, rect, c in drawn:  # the last shape that covers the point is on top
                        hit = inside_rounded(x, y, rect) if kind == "fill" else inside_stroke(x, y, rect)
                        if hit:
                            colour = c
                    if colour is not None:
                        r += colour[0]
                        g += colour[1]
                        b += colour[2]
                        a += 1.0
            # Premultiplied sums back to straight alpha.
            if a > 0:
                row += bytes((round(r / a), round(g / a), round(b / a), round(255 * a / (samples * samples))))
            else:
                row += bytes(4)
        rows.append(bytes(row))
    return rows


def write_png(path, rows):
    size = len(rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) +
                     chunk(b"IEND", b""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", default="resources/icons", type=pathlib.Path)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "attnscope.svg").write_text(svg())
    write_png(args.out_dir / "attnscope-256.png", png(256))
    print("wrote %s and %s" % (args.out_dir / "attnscope.svg", args.out_dir / "attnscope-256.png"))


if __name__ == "__main__":
    main()
