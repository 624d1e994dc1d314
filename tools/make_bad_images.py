#!/usr/bin/env python3
"""Writes the small image files of tests/data/images: tiny valid images of every format the probe reads
from first principles (PNG, BMP, TIFF), and the bad inputs the loader must refuse with a reason.

Only the standard library (struct, zlib), so the bytes are exactly those written here and the tests can
state what they expect. JPEG and WebP need real encoders; the tests write those with OpenCV at run time,
and truncated.jpg is a cut-off photograph (see SOURCES.md).

    python3 tools/make_bad_images.py [OUT_DIR]    (default: tests/data/images next to this script's repo)
"""
import pathlib
import struct
import sys
import zlib

# The 3 x 2 test picture, RGB rows top to bottom: red, green, blue / white, an orange-brown, black.
PIXELS = [
    [(255, 0, 0), (0, 255, 0), (0, 0, 255)],
    [(255, 255, 255), (128, 64, 32), (0, 0, 0)],
]
ALPHA = [[255, 128, 0], [255, 64, 1]]  # dropped on load, as PIL's convert("RGB") drops it
GREY16 = [[0, 65535, 32768], [1000, 50000, 257]]


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int, height: int, bit_depth: int, colour_type: int, rows: list) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 (None) on every row
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) +
            chunk(b"IEND", b""))


def png_rgb() -> bytes:
    rows = [bytes(v for p in row for v in p) for row in PIXELS]
    return png(3, 2, 8, 2, rows)


def png_rgb_with_profile() -> bytes:
    """rgb-3x2.png with an iCCP chunk whose profile is not a valid ICC profile: libpng warns about it."""
    data = png_rgb()
    profile = chunk(b"iCCP", b"broken\x00\x00" + zlib.compress(b"not an ICC profile" * 8))
    return data[:33] + profile + data[33:]  # after the signature and IHDR


def png_rgba() -> bytes:
    rows = [bytes(v for p, a in zip(row, alpha) for v in (*p, a)) for row, alpha in zip(PIXELS, ALPHA)]
    return png(3, 2, 8, 6, rows)


def png_grey16() -> bytes:
    rows = [b"".join(struct.pack(">H", v) for v in row) for row in GREY16]
    return png(3, 2, 16, 0, rows)


def png_pattern(width: int = 64, height: int = 48) -> bytes:
    """A picture with structure for the CLI: a colour gradient with a white square and a dark disc."""
    rows = []
    for y in range(height):
        row = bytearray()
        for x in range(width):
            r, g, b = 255 * x // (width - 1), 255 * y // (height - 1), 96
            if 8 <= x < 24 and 8 <= y < 24:
                r = g = b = 255
            if (x - 44) ** 2 + (y - 28) ** 2 < 100:
                r, g, b = 20, 20, 40
            row += bytes((r, g, b))
        rows.append(bytes(row))
    return png(width, height, 8, 2, rows)


def png_huge_header() -> bytes:
    """Valid signature and CRCs, an IHDR that claims 30000 x 30000 pixels and almost no data."""
    ihdr = struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) +
            chunk(b"IEND", b""))


def bmp(bits: int, top_down: bool) -> bytes:
    """Uncompressed BI_RGB: 24-bit rows padded to 4 bytes, or 32-bit BGRX; bottom-up unless top_down."""
    row_size = (3 * bits + 31) // 32 * 4
    order = PIXELS if top_down else list(reversed(PIXELS))
    data = b""
    for row in order:
        line = b"".join(bytes((b, g, r)) + (b"\x00" if bits == 32 else b"") for r, g, b in row)
        data += line + b"\x00" * (row_size - len(line))
    info = struct.pack("<IiiHHIIiiII", 40, 3, -2 if top_down else 2, 1, bits, 0, len(data), 2835, 2835, 0, 0)
    offset = 14 + len(info)
    header = b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset)
    return header + info + data


def tiff(big_endian: bool) -> bytes:
    """One uncompressed RGB strip. Width is a SHORT and height a LONG in the little-endian file, the other
    way round in the big-endian one, so the probe reads both types in both byte orders."""
    e = ">" if big_endian else "<"
    pixels = bytes(v for row in PIXELS for p in row for v in p)
    # Header (8), pixels at 8, BitsPerSample values, then the directory.
    bits_at = 8 + len(pixels)
    ifd_at = bits_at + 6
    SHORT, LONG = 3, 4

    def entry(tag, kind, count, value):
        if kind == SHORT and count == 1:
            field = struct.pack(e + "HH", value, 0)  # a SHORT sits in the field's first two bytes
        else:
            field = struct.pack(e + "I", value)
        return struct.pack(e + "HHI", tag, kind, count) + field

    width_type, height_type = (LONG, SHORT) if big_endian else (SHORT, LONG)
    entries = [
        entry(256, width_type, 1, 3),
        entry(257, height_type, 1, 2),
        entry(258, SHORT, 3, bits_at),  # BitsPerSample 8, 8, 8
        entry(259, SHORT, 1, 1),  # no compression
        entry(262, SHORT, 1, 2),  # RGB
        entry(273, LONG, 1, 8),  # StripOffsets
        entry(277, SHORT, 1, 3),  # SamplesPerPixel
        entry(278, SHORT, 1, 2),  # RowsPerStrip
        entry(279, LONG, 1, len(pixels)),  # StripByteCounts
        entry(284, SHORT, 1, 1),  # chunky
    ]
    magic = b"MM\x00*" if big_endian else b"II*\x00"
    ifd = struct.pack(e + "H", len(entries)) + b"".join(entries) + struct.pack(e + "I", 0)
    return magic + struct.pack(e + "I", ifd_at) + pixels + struct.pack(e + "HHH", 8, 8, 8) + ifd


def main() -> None:
    root = pathlib.Path(__file__).resolve().parent.parent
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "tests" / "data" / "images"
    out.mkdir(parents=True, exist_ok=True)
    pattern = png_pattern()
    bmp24 = bmp(24, False)
    files = {
        # Valid, for format coverage and exact pixels.
        "rgb-3x2.png": png_rgb(),
        "rgba-3x2.png": png_rgba(),
        "iccp-3x2.png": png_rgb_with_profile(),
        "grey16-3x2.png": png_grey16(),
        "rgb-3x2.bmp": bmp24,
        "topdown-3x2.bmp": bmp(32, True),
        "rgb-3x2-le.tif": tiff(False),
        "rgb-3x2-be.tif": tiff(True),
        "pattern-64x48.png": pattern,
        # Bad inputs.
        "empty.png": b"",
        "text.png": b"hello, this is a text file with an image's name\n",
        "huge-header.png": png_huge_header(),
        "truncated.png": pattern[: len(pattern) * 3 // 5],  # cut inside IDAT: no IEND
        "truncated.bmp": bmp24[: len(bmp24) - 7],  # the last row is short
    }
    for name, data in files.items():
        (out / name).write_bytes(data)
        print(f"{out / name}  {len(data)} bytes")


if __name__ == "__main__":
    main()
