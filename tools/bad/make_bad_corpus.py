#!/usr/bin/python3
"""Writes tests/data/bad/: the bad-input corpus every loader and attnscope-cli are run against, and its
MANIFEST.tsv (one line per input: path, loader, expected kind, the file the message must name, what is
wrong with it).

Every byte is written here (numpy for float data, struct and zlib for the containers, a baseline JPEG
encoder for the flat-coloured JPEGs), and nothing depends on the date, the machine or a random state that is
not seeded, so running it again rewrites the same files. The expected kind is ErrorKind's name as
attn::to_string spells it ("truncated", "too-large", ...), "warning" for inputs that load with a warning
(NaN and infinite weights), or "ok" for inputs that are odd but valid and must decode to the values the
unit test checks (tests/unit/test_bad_corpus.cpp).

    /usr/bin/python3 -m tools.bad.make_bad_corpus [OUT_DIR]   (default: tests/data/bad of this repo)
"""
import json
import pathlib
import shutil
import struct
import sys
import zlib

import numpy as np

# The container, written byte by byte, is shared with tests/data/safetensors' generator.
from tools.make_bad_safetensors import container as st_container, entry as st_entry, header_bytes as st_header

# ---------------------------------------------------------------------------------------------------------
# safetensors, by hand


def st_file(tensors: dict, metadata=None) -> bytes:
    """name -> float32 array, in the reference layout (sorted names, header padded to 8)."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        raw = a.tobytes()
        header[name] = st_entry("F32", list(a.shape), offset, offset + len(raw))
        blobs.append(raw)
        offset += len(raw)
    return st_container(header, b"".join(blobs))


# Far past the 64 levels every JSON reader allows, yet small enough for the corpus to stay under 1 MB; the
# unit tests (tests/unit/test_hostile_files.cpp) go to 300,000 levels, where the readers that recursed crashed.
DEEP = 20_000


def deep_header_file(header: str) -> bytes:
    raw = header.encode()
    return struct.pack("<Q", len(raw)) + raw + b"\x00" * 4


def safetensors_cases():
    """(name, bytes, kind, what)"""
    rng = np.random.default_rng(7)
    good = st_file({"weight": rng.standard_normal((4, 4)).astype(np.float32), "bias": np.arange(4, dtype=np.float32)})
    n = struct.unpack("<Q", good[:8])[0]
    out = []
    out.append(("truncated.safetensors", good[:len(good) - 20], "truncated",
                "a valid file cut 20 bytes before its end: the last tensor's data runs past the end"))
    out.append(("truncated-header.safetensors", good[:8 + n // 2], "truncated",
                "cut in the middle of its JSON header: the header length runs past the end of the file"))

    def flipped(data: bytes, at: int, bit: int) -> bytes:
        b = bytearray(data)
        b[at] ^= 1 << bit
        return bytes(b)

    out.append(("bitflip-length.safetensors", flipped(good, 5, 0), "too-large",
                "bit 0 of byte 5 flipped: the header length becomes 2^40 + N, over the 100,000,000-byte limit"))
    out.append(("bitflip-brace.safetensors", flipped(good, 8, 0), "malformed",
                "bit 0 of byte 8 flipped: the header's opening '{' becomes 'z', which is not JSON"))
    name_at = good.index(b'"bias"') + 1
    out.append(("bitflip-name.safetensors", flipped(good, name_at, 7), "encoding",
                "bit 7 of the first byte of the name \"bias\" flipped: 0xE2 starts a UTF-8 sequence the next byte "
                "does not continue"))
    shape_at = good.index(b'"shape":[4]') + len(b'"shape":[')
    out.append(("bitflip-shape.safetensors", flipped(good, shape_at, 0), "mismatch",
                "bit 0 of the digit in \"shape\":[4] flipped to [5]: 5 F32 values need 20 bytes, data_offsets give 16"))

    out.append(("empty.safetensors", b"", "truncated", "0 bytes: not even the 8-byte header length"))
    out.append(("seven-bytes.safetensors", struct.pack("<Q", 2)[:7], "truncated",
                "7 bytes: the file ends inside the 8-byte header length"))
    out.append(("header-length-0.safetensors", struct.pack("<Q", 0), "malformed",
                "header length 0: an empty header is not a JSON object"))
    out.append(("header-length-7.safetensors", st_container(b"{}     ", pad=False), "ok",
                "header length 7 (\"{}\" and 5 spaces, not a multiple of 8): a valid file with no tensors, as the "
                "reference reads it"))
    out.append(("header-length-8.safetensors", st_container(b"{}      ", pad=False), "ok",
                "header length 8 (\"{}\" and 6 spaces): a valid file with no tensors"))
    # Data "@@@@@@@@" (two floats of 3.00390625): printable, so the refusal is the JSON parser's, at the first
    # byte after the object (a NUL there would read as the end of the text).
    two = b"@" * 8
    h = st_header({"x": st_entry("F32", [2], 0, 8)})
    out.append(("header-length-whole-file.safetensors", struct.pack("<Q", len(h) + len(two)) + h + two, "malformed",
                "header length = the whole rest of the file: the tensor bytes are read as part of the JSON"))
    out.append(("header-length-past-end.safetensors", struct.pack("<Q", len(h) + len(two) + 1) + h + two,
                "truncated", "header length one byte past the end of the file"))
    out.append(("header-length-max.safetensors", struct.pack("<Q", 2**64 - 1) + h + two, "too-large",
                "header length 2^64 - 1"))

    a = np.arange(4, dtype=np.float32).tobytes()
    out.append(("overlap.safetensors",
                st_container({"a": st_entry("F32", [2], 0, 8), "b": st_entry("F32", [2], 4, 12)}, a[:12]),
                "malformed", "tensor b's data_offsets [4, 12] overlap tensor a's [0, 8]"))
    out.append(("gap.safetensors",
                st_container({"a": st_entry("F32", [1], 0, 4), "b": st_entry("F32", [1], 8, 12)}, a[:12]),
                "malformed", "bytes 4 to 8 of the data belong to no tensor"))
    out.append(("dtype-lies.safetensors", st_container({"w": st_entry("F16", [4], 0, 16)}, a), "mismatch",
                "dtype F16 for 4 values (8 bytes) but data_offsets hold 16 bytes: the F32 data of a file that "
                "says F16"))
    out.append(("unknown-dtype.safetensors", st_container({"w": st_entry("F4", [2], 0, 1)}, b"\x00"),
                "unsupported", "dtype \"F4\", which is not a safetensors dtype AttnScope knows"))
    out.append(("negative-dim.safetensors", st_container({"w": st_entry("F32", [-1], 0, 4)}, a[:4]),
                "out-of-range", "shape [-1]"))
    out.append(("huge-shape.safetensors",
                st_container({"w": st_entry("F32", [10**12, 10**12], 0, 4)}, a[:4]), "too-large",
                "shape [10^12, 10^12]: more bytes than fit in 63 bits, refused before anything is allocated"))
    out.append(("trailing-bytes.safetensors", good + b"\x00" * 8, "malformed",
                "8 bytes follow the last tensor's data"))
    out.append(("integer-tensor.safetensors", st_container({"ids": st_entry("I32", [2], 0, 8)}, a[:8]),
                "unsupported", "an I32 tensor: a valid file, but only float tensors convert to float32"))
    nan = np.arange(6, dtype=np.float32)
    nan[[1, 4]] = np.nan
    out.append(("nan.safetensors", st_file({"weight": nan.reshape(2, 3)}), "warning",
                "tensor \"weight\" holds 2 NaN values of 6: loads, with a warning naming the file and the tensor"))
    inf = np.arange(4, dtype=np.float32)
    inf[0], inf[3] = np.inf, -np.inf
    out.append(("inf.safetensors", st_file({"weight": inf}), "warning",
                "tensor \"weight\" holds +inf and -inf: loads, with a warning naming the file and the tensor"))
    entry = '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'
    out.append(("byte-order-mark.safetensors", deep_header_file("\ufeff" + entry), "malformed",
                "the header starts with a UTF-8 byte-order mark, which the reference reader refuses (nlohmann "
                "would skip it)"))
    out.append(("duplicate-field.safetensors",
                deep_header_file(entry.replace('"dtype": "F32"', '"dtype": "F16", "dtype": "F32"')), "malformed",
                "tensor \"w\" gives \"dtype\" twice (F16, then F32): the reference refuses a duplicate field, "
                "nlohmann would keep the last"))
    for field in ("data_offsets", "shape"):
        header = ('{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'
                  .replace(f'"{field}": ', f'"{field}": ' + "[" * DEEP + "]" * DEEP + ", \"x\": ", 1))
        out.append((f"deep-{field.replace('_', '-')}.safetensors", deep_header_file(header), "too-large",
                    f"\"{field}\" wrapped in {DEEP:,} nested arrays: refused from a scan of the header's bytes "
                    "(at the bracket that opens level 65), before a recursive parser can run out of stack"))
    return out


# ---------------------------------------------------------------------------------------------------------
# PNG, BMP, GIF, WebP and a baseline JPEG, by hand


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, bit_depth, colour_type, rows, extra_before_idat=b"", extra_after_idat=b"") -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra_before_idat +
            png_chunk(b"IDAT", zlib.compress(raw, 9)) + extra_after_idat + png_chunk(b"IEND", b""))


def png_header_only(width, height) -> bytes:
    """A PNG whose IHDR claims a size; the probe refuses it before any pixel is read."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IEND", b"")


GREY16 = [[0, 65535, 32768], [1000, 50000, 257]]


def apng() -> bytes:
    """A 2 x 1 APNG of two frames (red, then blue): acTL, an fcTL per frame, IDAT for the first, fdAT for the
    second."""
    def fctl(seq, delay):
        return png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", seq, 2, 1, 0, 0, delay, 10, 0, 0))
    red = [bytes([255, 0, 0, 255, 0, 0])]
    blue = b"\x00" + bytes([0, 0, 255, 0, 0, 255])
    fdat = png_chunk(b"fdAT", struct.pack(">I", 2) + zlib.compress(blue, 9))
    return png(2, 1, 8, 2, red, extra_before_idat=png_chunk(b"acTL", struct.pack(">II", 2, 0)) + fctl(0, 1),
               extra_after_idat=fctl(1, 1) + fdat)


def bmp24(width, height, pixel) -> bytes:
    row = bytes(pixel[::-1]) * width
    row += b"\x00" * ((4 - len(row) % 4) % 4)
    data = row * height
    header = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + 40 + len(data), 0, 0, 54) + header + data


def animated_gif() -> bytes:
    """A 1 x 1 GIF89a of two frames (black, white) that loops: the NETSCAPE2.0 extension and two images."""
    out = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    for colour in (0, 1):
        out += b"\x21\xf9\x04\x04\x0a\x00\x00\x00"  # graphic control: 0.1 s
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0)
        # LZW, minimum code size 2: clear (4), the pixel, end (5) in 3-bit codes, least significant bit first.
        codes = 4 | colour << 3 | 5 << 6
        out += b"\x02\x02" + struct.pack("<H", codes) + b"\x00"
    return out + b"\x3b"


def animated_webp() -> bytes:
    """RIFF/WEBP with a VP8X chunk whose flags mark an animation (bit 1), an ANIM chunk and one ANMF frame
    header (its frame bitstream left empty: the header alone makes it an animation)."""
    vp8x = b"VP8X" + struct.pack("<I", 10) + bytes([0x02, 0, 0, 0]) + (0).to_bytes(3, "little") * 2
    anim = b"ANIM" + struct.pack("<I", 6) + b"\x00\x00\x00\x00" + struct.pack("<H", 0)
    anmf_payload = (0).to_bytes(3, "little") * 2 + (0).to_bytes(3, "little") * 2 + (100).to_bytes(3, "little") + b"\x00"
    anmf = b"ANMF" + struct.pack("<I", len(anmf_payload)) + anmf_payload
    body = b"WEBP" + vp8x + anim + anmf
    return b"RIFF" + struct.pack("<I", len(body)) + body


# Baseline JPEG (ITU T.81 annex K tables), for flat-coloured pictures: each 8 x 8 block holds one value
# per component, so every block's DCT is its DC term alone and the encoder needs no AC coefficients.
DC_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
DC_VALUES = list(range(12))
AC_BITS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D]
AC_VALUES = [
    0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71,
    0x14, 0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0, 0x24, 0x33, 0x62, 0x72,
    0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x34, 0x35, 0x36, 0x37,
    0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59,
    0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x83,
    0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3,
    0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3,
    0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2,
    0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA]


def huffman_codes(bits, values):
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(bits[length - 1]):
            codes[values[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return codes


class BitWriter:
    def __init__(self):
        self.out, self.acc, self.n = bytearray(), 0, 0

    def put(self, value, length):
        for i in range(length - 1, -1, -1):
            self.acc = self.acc << 1 | (value >> i & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)  # byte stuffing
                self.acc, self.n = 0, 0

    def flush(self):
        if self.n:
            self.put((1 << (8 - self.n)) - 1, 8 - self.n)  # pad with 1 bits
        return bytes(self.out)


def jpeg_flat(blocks, adobe_cmyk=False) -> bytes:
    """blocks: rows of 8 x 8 blocks, each a tuple of component values 0..255 (1, 3 or 4 components, no
    colour transform: the values are stored as given). Quantisation 1, so each value comes back exactly."""
    rows, cols, comps = len(blocks), len(blocks[0]), len(blocks[0][0])
    seg = lambda marker, data: b"\xff" + bytes([marker]) + struct.pack(">H", len(data) + 2) + data
    out = b"\xff\xd8"
    if adobe_cmyk:  # APP14 "Adobe", version 100, transform 0: the four components are CMYK as stored
        out += seg(0xEE, b"Adobe" + struct.pack(">HHHB", 100, 0, 0, 0))
    else:  # JFIF 1.01: one component is grey, three are YCbCr
        out += seg(0xE0, b"JFIF\x00" + struct.pack(">BBBHHBB", 1, 1, 0, 1, 1, 0, 0))
    out += seg(0xDB, b"\x00" + bytes([1] * 64))
    sof = struct.pack(">BHHB", 8, rows * 8, cols * 8, comps)
    for c in range(comps):
        sof += bytes([c + 1, 0x11, 0])
    out += seg(0xC0, sof)
    out += seg(0xC4, b"\x00" + bytes(DC_BITS) + bytes(DC_VALUES))
    out += seg(0xC4, b"\x10" + bytes(AC_BITS) + bytes(AC_VALUES))
    sos = bytes([comps]) + b"".join(bytes([c + 1, 0x00]) for c in range(comps)) + b"\x00\x3f\x00"
    out += seg(0xDA, sos)
    dc, ac = huffman_codes(DC_BITS, DC_VALUES), huffman_codes(AC_BITS, AC_VALUES)
    w = BitWriter()
    previous = [0] * comps
    for r in range(rows):
        for c in range(cols):
            for k in range(comps):
                value = 8 * (blocks[r][c][k] - 128)  # the DC term of a flat block after the level shift
                diff = value - previous[k]
                previous[k] = value
                size = 0 if diff == 0 else int(abs(diff)).bit_length()
                w.put(*dc[size])
                if size:
                    w.put(diff if diff > 0 else diff + (1 << size) - 1, size)
                w.put(*ac[0x00])  # end of block: every AC coefficient is 0
    return out + w.flush() + b"\xff\xd9"


def image_cases():
    """(name, bytes, kind, what)"""
    out = []
    rgb = [bytes([255, 0, 0, 0, 255, 0, 0, 0, 255]), bytes([255, 255, 255, 128, 64, 32, 0, 0, 0])]
    good_png = png(3, 2, 8, 2, rgb)
    out.append(("empty.png", b"", "truncated", "0 bytes"))
    out.append(("truncated.png", good_png[:len(good_png) - 20], "truncated",
                "a 3 x 2 PNG cut 20 bytes before its end: no IEND chunk"))
    out.append(("zero-size.png", png_header_only(0, 0), "out-of-range", "IHDR claims 0 x 0 pixels"))
    out.append(("tall-1x100000.png", png_header_only(1, 100000), "too-large",
                "IHDR claims 1 x 100,000 pixels: only 100,000 pixels, but 100,000 rows is over the limit of 16,384 "
                "per side (ImageLimits::max_side), so it is refused from the header, before any decoding"))
    grey16 = [b"".join(struct.pack(">H", v) for v in row) for row in GREY16]
    out.append(("grey16.png", png(3, 2, 16, 0, grey16), "ok",
                "a 16-bit greyscale PNG: loads with all 16 bits (0, 65535, 32768 / 1000, 50000, 257 over 65535)"))
    out.append(("animated.png", apng(), "unsupported",
                "an animated PNG (acTL: 2 frames): refused as unsupported, not shown as its first frame"))
    out.append(("animated.gif", animated_gif(), "unsupported",
                "an animated GIF (2 frames): GIF is not a format AttnScope reads"))
    out.append(("animated.webp", animated_webp(), "unsupported",
                "a WebP whose VP8X flags mark an animation: refused from the header"))
    out.append(("text.png", b"this is a text file named .png\n", "unsupported",
                "text with an image's extension: the format comes from the bytes, not the name"))
    good_bmp = bmp24(4, 4, (10, 20, 30))
    out.append(("truncated.bmp", good_bmp[:len(good_bmp) - 10], "truncated",
                "a 4 x 4 24-bit BMP cut 10 bytes into its last row"))
    flat = [[(200, 40, 40), (40, 200, 40)], [(40, 40, 200), (128, 128, 128)]]
    good_jpg = jpeg_flat(flat)
    out.append(("truncated.jpg", good_jpg[:len(good_jpg) - 6], "truncated",
                "a 16 x 16 baseline JPEG cut 6 bytes before its end: no end-of-image marker"))
    # Adobe CMYK as Photoshop writes it: the stored values are 255 - ink. Left block: no cyan, full magenta
    # and yellow, no black = red; right block: no colour, half black = grey 128.
    out.append(("cmyk.jpg", jpeg_flat([[(255, 0, 0, 255), (255, 255, 255, 128)]], adobe_cmyk=True), "ok",
                "a 16 x 8 CMYK JPEG (Adobe APP14, inverted CMYK): loads as RGB, red on the left, grey 128 on the right"))
    return out


# ---------------------------------------------------------------------------------------------------------
# Text: tokenizers, configs


def text_cases():
    """(name, bytes, loader, kind, what) for single files."""
    out = []
    out.append(("vocab-duplicate.txt", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\nhello\n", "wordpiece", "malformed",
                "vocab.txt lists \"hello\" twice (lines 5 and 7)"))
    out.append(("vocab-invalid-utf8.txt", b"[PAD]\n[UNK]\ncaf\xe9\nworld\n", "wordpiece", "encoding",
                "line 3 is \"caf\" and byte 0xE9 (Latin-1, not UTF-8)"))
    wp = {"model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                    "max_input_chars_per_word": 100, "vocab": None},
          "normalizer": None, "pre_tokenizer": {"type": "BertPreTokenizer"}}
    text = json.dumps(wp).replace('"vocab": null', '"vocab": {"[UNK]": 0, "caf\xe9": 1}')
    out.append(("tokenizer-invalid-utf8.json", text.encode("latin-1"), "tokenizer_json", "encoding",
                "tokenizer.json with the vocabulary entry \"caf\" + byte 0xE9"))
    text = json.dumps(wp).replace('"vocab": null', '"vocab": {"[UNK]": 0, "hello": 1, "world": 1}')
    out.append(("tokenizer-duplicate-id.json", text.encode(), "tokenizer_json", "malformed",
                "tokenizer.json gives \"hello\" and \"world\" the same id 1"))
    text = json.dumps(wp).replace('"vocab": null', '"vocab": {"[UNK]": 0, "hello": 1}')
    bad = json.dumps(dict(wp, pre_tokenizer={"type": "UnicodeScripts"})).replace('"vocab": null',
                                                                                 '"vocab": {"[UNK]": 0, "hello": 1}')
    out.append(("tokenizer-pretokenizer-unsupported.json", bad.encode(), "tokenizer_json", "unsupported",
                "tokenizer.json whose pre_tokenizer is UnicodeScripts: refused by name (not \"no tokenizer\")"))
    bad = json.dumps(dict(wp, pre_tokenizer={"type": "Split", "pattern": {"Regex": "(?<=a"}, "behavior": "Isolated",
                                              "invert": False})).replace('"vocab": null',
                                                                         '"vocab": {"[UNK]": 0, "hello": 1}')
    out.append(("tokenizer-split-bad-regex.json", bad.encode(), "tokenizer_json", "malformed",
                "tokenizer.json whose Split pattern \"(?<=a\" does not compile: PCRE2's message and offset"))
    out.append(("tokenizer-cut.json", text[:len(text) // 2].encode(), "tokenizer_json", "malformed",
                "tokenizer.json cut in the middle: not JSON, refused with the byte where it ends"))
    out.append(("vocab-crlf.txt", b"[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhello\r\nworld\r\n", "wordpiece", "ok",
                "vocab.txt with Windows line endings: read as Python's text mode reads it, \"hello\" without the CR"))
    bert = {"model_type": "bert", "vocab_size": 8, "hidden_size": 4, "num_attention_heads": 2,
            "num_hidden_layers": 1, "intermediate_size": 8, "max_position_embeddings": 8}

    def config(name, what, kind, **changes):
        c = dict(bert)
        c.update(changes)
        out.append((name, json.dumps(c, indent=2).encode(), "config", kind, what))
    config("config-hidden-0.json", "hidden_size 0", "out-of-range", hidden_size=0)
    config("config-layers-negative.json", "num_hidden_layers -1", "out-of-range", num_hidden_layers=-1)
    config("config-vocab-1e12.json", "vocab_size 10^12: over the limit, refused before anything is allocated",
           "too-large", vocab_size=10**12)
    config("config-positions-1e12.json", "max_position_embeddings 10^12", "too-large",
           max_position_embeddings=10**12)
    config("config-heads-0.json", "num_attention_heads 0", "out-of-range", num_attention_heads=0)
    config("config-heads-not-dividing.json", "hidden_size 4 with 3 heads", "mismatch", num_attention_heads=3)
    config("config-model-type.json", "model_type \"mamba\": the message lists the types AttnScope runs", "unsupported",
           model_type="mamba")
    llama = {"model_type": "llama", "vocab_size": 8, "hidden_size": 8, "num_attention_heads": 4,
             "num_key_value_heads": 2, "num_hidden_layers": 1, "intermediate_size": 8, "max_position_embeddings": 16}
    out.append(("config-rope-longrope.json",
                json.dumps(dict(llama, rope_scaling={"rope_type": "longrope", "factor": 4.0}), indent=2).encode(),
                "config", "unsupported", "a Llama config with rope_scaling type \"longrope\": refused by name, with the "
                "types AttnScope supports"))
    out.append(("config-kv-heads-not-dividing.json", json.dumps(dict(llama, num_key_value_heads=3), indent=2).encode(),
                "config", "mismatch", "num_key_value_heads 3 does not divide num_attention_heads 4"))
    text = json.dumps(bert, indent=2).replace('"bert"', '"b\xe9rt"').encode("latin-1")
    out.append(("config-invalid-utf8.json", text, "config", "encoding",
                "model_type \"b\" + byte 0xE9 + \"rt\": not UTF-8"))
    out.append(("config-not-json.json", b'{"model_type": "bert",\n "hidden_size": 4,,\n}\n', "config", "malformed",
                "two commas in a row on line 2"))
    text = json.dumps(bert, indent=2).replace('"hidden_size": 4', '"hidden_size": ' + "[" * DEEP + "]" * DEEP)
    out.append(("config-deep-nesting.json", text.encode(), "config", "too-large",
                f"hidden_size is {DEEP:,} nested arrays: refused from a scan of the bytes, before parsing"))
    text = json.dumps(wp).replace('"vocab": null', '"vocab": {"[UNK]": 0}, "added_tokens": ' + "[" * DEEP + "]" * DEEP)
    out.append(("tokenizer-deep-nesting.json", text.encode(), "tokenizer_json", "too-large",
                f"tokenizer.json whose added_tokens are {DEEP:,} nested arrays"))
    return out


BPE_BASE = {"a": 0, "b": 1, "ab": 2}


def bpe_cases():
    """(folder, {file: bytes}, kind, names, what)"""
    out = []
    vocab = json.dumps(BPE_BASE).encode()
    merges = b"#version: 0.2\na b\n"
    out.append(("bpe-vocab-duplicate", {"vocab.json": b'{"a": 0, "b": 1, "ab": 2, "a": 3}', "merges.txt": merges},
                "malformed", "vocab.json", "vocab.json lists \"a\" twice (ids 0 and 3)"))
    out.append(("bpe-vocab-invalid-utf8", {"vocab.json": b'{"a": 0, "b": 1, "ab": 2, "\xff": 3}', "merges.txt": merges},
                "encoding", "vocab.json", "vocab.json has a key that is the byte 0xFF"))
    out.append(("bpe-merges-invalid-utf8", {"vocab.json": vocab, "merges.txt": b"#version: 0.2\na b\n\xc3 b\n"},
                "encoding", "merges.txt", "line 3 of merges.txt starts with 0xC3 and no continuation byte"))
    out.append(("bpe-vocab-deep-nesting", {"vocab.json": b'{"a": ' + b"[" * DEEP + b"]" * DEEP + b"}",
                                           "merges.txt": merges},
                "too-large", "vocab.json", f"vocab.json whose first id is {DEEP:,} nested arrays"))
    out.append(("bpe-merges-three-symbols", {"vocab.json": vocab, "merges.txt": b"#version: 0.2\na b\nab b a\n"},
                "malformed", "merges.txt", "line 3 of merges.txt is \"ab b a\": three symbols, a merge has two"))
    return out


def huge_image_cases():
    """(name, bytes, kind, what), read as ViT reads a photo: resampled to 224 x 224 while decoding."""
    side = 10000
    rows = [bytes(side)] * side
    return [("huge-10000x10000.png", png(side, side, 8, 0, rows), "ok",
             "a 10,000 x 10,000 grey PNG (100 million pixels, within the limit) of about 100 KB: ViT's 224 x 224 "
             "input and a 1,024-pixel view are resampled from the 8-bit decode; the 1.2 GB float image is never made")]


# ---------------------------------------------------------------------------------------------------------
# Attention dumps


def dump_cases():
    """(name, bytes, kind, what)"""
    out = []
    maps = np.full((1, 2, 2), 0.5, dtype=np.float32)
    meta = {"format": "attnscope.attn", "version": "1", "tokens": json.dumps(["a", "b"])}

    def dump(tensors, metadata):
        return st_file(tensors, metadata)
    raw = dump({"attn.encoder.0": maps}, meta)
    # The tokens' JSON sits in the header as a string; put a raw invalid byte in it.
    bad = raw.replace(b'\\"a\\"', b'\\"\xff\\"', 1)
    assert bad != raw
    out.append(("tokens-invalid-utf8.attn.safetensors", bad, "encoding",
                "metadata \"tokens\" holds the byte 0xFF: the header is not UTF-8"))
    m = dict(meta)
    m["tokens"] = '["\\udc80", "b"]'
    out.append(("tokens-lone-surrogate.attn.safetensors", dump({"attn.encoder.0": maps}, m), "encoding",
                "metadata \"tokens\" is the JSON [\"\\udc80\", \"b\"]: a lone low surrogate, which no UTF-8 "
                "text can hold"))
    out.append(("shape-mismatch.attn.safetensors",
                dump({"attn.encoder.0": np.full((1, 3, 3), 1 / 3, dtype=np.float32)}, meta), "mismatch",
                "maps of 3 x 3 for 2 tokens"))
    out.append(("heads-zero.attn.safetensors", dump({"attn.encoder.0": np.zeros((0, 2, 2), np.float32)}, meta),
                "out-of-range", "a map stack of 0 heads"))
    m = dict(meta)
    m["format"] = "something.else"
    out.append(("not-a-dump.attn.safetensors", dump({"attn.encoder.0": maps}, m), "unsupported",
                "metadata \"format\" is \"something.else\""))
    m = dict(meta)
    m["tokens"] = "[" * DEEP + "]" * DEEP
    out.append(("tokens-deep-nesting.attn.safetensors", dump({"attn.encoder.0": maps}, m), "too-large",
                f"metadata \"tokens\" is the JSON text of {DEEP:,} nested arrays (a string in the header, parsed "
                "again as JSON)"))
    wild = maps.copy()
    wild[0, 0, 0], wild[0, 1, 1] = -0.5, 1e30
    out.append(("weights-outside-unit.attn.safetensors", dump({"attn.encoder.0": wild}, meta), "warning",
                "weights -0.5 and 10^30: loads, with a warning that these are not attention probabilities "
                "(drawn as they are, the colour bar would run to 10^30 with nothing said)"))
    nan = maps.copy()
    nan[0, 1, 0] = np.nan
    out.append(("nan.attn.safetensors", dump({"attn.encoder.0": nan}, meta), "warning",
                "one attention weight is NaN: loads with a warning, and the view says the map holds non-finite "
                "values"))
    return out


# ---------------------------------------------------------------------------------------------------------
# Model folders


def gpt2_tensors(rng, d=4, vocab=8, positions=8, layers=1):
    t = {"wte.weight": rng.standard_normal((vocab, d)), "wpe.weight": rng.standard_normal((positions, d)),
         "ln_f.weight": np.ones(d), "ln_f.bias": np.zeros(d)}
    for i in range(layers):
        p = f"h.{i}."
        t.update({p + "ln_1.weight": np.ones(d), p + "ln_1.bias": np.zeros(d),
                  p + "attn.c_attn.weight": 0.5 * rng.standard_normal((d, 3 * d)), p + "attn.c_attn.bias": np.zeros(3 * d),
                  p + "attn.c_proj.weight": 0.5 * rng.standard_normal((d, d)), p + "attn.c_proj.bias": np.zeros(d),
                  p + "ln_2.weight": np.ones(d), p + "ln_2.bias": np.zeros(d),
                  p + "mlp.c_fc.weight": 0.5 * rng.standard_normal((d, 4 * d)), p + "mlp.c_fc.bias": np.zeros(4 * d),
                  p + "mlp.c_proj.weight": 0.5 * rng.standard_normal((4 * d, d)), p + "mlp.c_proj.bias": np.zeros(d)})
    return {k: np.asarray(v, dtype=np.float32) for k, v in t.items()}


def llama_tensors(rng, d=8, heads=4, kv=2, ffn=8, vocab=8):
    hd = d // heads
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, d)), "model.norm.weight": np.ones(d),
         "lm_head.weight": rng.standard_normal((vocab, d))}
    p = "model.layers.0."
    t.update({p + "self_attn.q_proj.weight": rng.standard_normal((heads * hd, d)),
              p + "self_attn.k_proj.weight": rng.standard_normal((kv * hd, d)),
              p + "self_attn.v_proj.weight": rng.standard_normal((kv * hd, d)),
              p + "self_attn.o_proj.weight": rng.standard_normal((d, heads * hd)),
              p + "mlp.gate_proj.weight": rng.standard_normal((ffn, d)),
              p + "mlp.up_proj.weight": rng.standard_normal((ffn, d)),
              p + "mlp.down_proj.weight": rng.standard_normal((d, ffn)),
              p + "input_layernorm.weight": np.ones(d), p + "post_attention_layernorm.weight": np.ones(d)})
    return {k: np.asarray(v, dtype=np.float32) for k, v in t.items()}


LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 8, "hidden_size": 8,
         "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 1, "intermediate_size": 8,
         "max_position_embeddings": 16}
GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 4, "n_head": 2, "n_layer": 1,
        "n_positions": 8, "vocab_size": 8}
VOCAB_TXT = b"[UNK]\nthe\ncat\nsat\non\nmat\na\ndog\n"


def model_cases():
    """(folder, {file: bytes}, kind, names, what)"""
    rng = np.random.default_rng(11)
    out = []

    def gpt2(folder, config_changes, tensors, kind, names, what, tokenizer=True):
        c = dict(GPT2)
        c.update(config_changes)
        files = {"config.json": json.dumps(c, indent=2).encode(), "model.safetensors": st_file(tensors)}
        if tokenizer:
            files["vocab.txt"] = VOCAB_TXT
        out.append((folder, files, kind, names, what))

    base = gpt2_tensors(rng)
    # The config asks for sizes within every limit whose tables would need 2^36 floats (256 GiB): the file's
    # 2 KB of tensors disagree, and the loader must say so before allocating anything from the config.
    gpt2("gpt2-config-256gib", {"n_embd": 65536, "n_head": 1, "vocab_size": 1 << 20}, base, "mismatch",
         "model.safetensors", "config.json asks for n_embd 65536 and vocab_size 2^20 (a 256 GiB embedding); "
         "model.safetensors holds a 4-wide model of 8 tokens")
    gpt2("gpt2-layers-3", {"n_layer": 3}, base, "mismatch", "model.safetensors",
         "config.json says 3 layers, model.safetensors holds 1")
    gpt2("gpt2-layers-1e6", {"n_layer": 10**6}, base, "too-large", "config.json",
         "config.json says 10^6 layers, over the limit of 1024")
    gpt2("gpt2-hidden-0", {"n_embd": 0}, base, "out-of-range", "config.json", "config.json says n_embd 0")
    nan = {k: v.copy() for k, v in base.items()}
    nan["h.0.attn.c_attn.weight"][0, :3] = [np.nan, np.inf, -np.inf]
    gpt2("gpt2-nan", {}, nan, "warning", "model.safetensors",
         "h.0.attn.c_attn.weight holds a NaN, +inf and -inf: the model loads with a warning naming the file and the "
         "tensor, and its attention maps are flagged as not finite")
    # A demo captioner's config with a width of 10^12 (tools/train/MODELS.md section 4).
    cap = {"architectures": ["AttnScopeCaptioner"], "attention": "soft", "image_size": 32, "mean": 0.5, "std": 0.25,
           "channels": [4, 8], "vocab": ["<pad>", "<start>", "<end>", "<unk>", "red"], "embedding_size": 8,
           "hidden": 10**12, "attention_size": 8, "max_caption_length": 8}
    out.append(("captioner-hidden-1e12", {"config.json": json.dumps(cap, indent=2).encode(),
                                          "model.safetensors": st_file({})},
                "too-large", "config.json", "a captioner's hidden 10^12"))
    cls = {"architectures": ["AttnScopeClassifier"], "labels": ["neg", "pos"],
           "vocab": ["<pad>", "<unk>", "good", "bad", "good"], "embedding_size": 4, "hidden": 4, "attention_size": 4,
           "max_words": 16}
    out.append(("classifier-vocab-duplicate", {"config.json": json.dumps(cls, indent=2).encode(),
                                               "model.safetensors": st_file({})},
                "malformed", "config.json", "a classifier's vocab lists \"good\" twice"))
    cnn = {"architectures": ["AttnScopeClassifier"], "labels": ["neg", "pos"], "vocab": ["<pad>", "<unk>", "good"],
           "kind": "cnn", "embedding_size": 4, "channels": 8, "kernel": 4, "max_words": 16}
    out.append(("classifier-cnn-kernel-even", {"config.json": json.dumps(cnn, indent=2).encode(),
                                               "model.safetensors": st_file({})},
                "out-of-range", "config.json", "a CNN classifier's kernel 4: the words are padded (k - 1) / 2 a side"))
    out.append(("classifier-kind-unknown", {"config.json": json.dumps(dict(cnn, kind="gru-max"), indent=2).encode(),
                                            "model.safetensors": st_file({})},
                "unsupported", "config.json", "a classifier of kind \"gru-max\", which no reader knows"))
    s2s = {"architectures": ["AttnScopeSeq2Seq"], "attention": "bahdanau", "score": "additive",
           "source_vocab": ["<pad>", "<unk>", "1", "2"], "target_vocab": ["<pad>", "<s>", "</s>", "1"],
           "embedding_size": 0, "encoder_hidden": 4, "decoder_hidden": 4, "attention_size": 4,
           "max_source_length": 8, "max_target_length": 8}
    out.append(("seq2seq-embedding-0", {"config.json": json.dumps(s2s, indent=2).encode(),
                                        "model.safetensors": st_file({})},
                "out-of-range", "config.json", "a seq2seq model's embedding_size 0"))
    ent = {"architectures": ["AttnScopeEntailment"], "labels": ["entailment", "contradiction", "neutral"],
           "vocab": ["<pad>", "<unk>", "man"], "embedding_size": 2, "hidden": 0, "max_words": 8}
    out.append(("entailment-hidden-0", {"config.json": json.dumps(ent, indent=2).encode(),
                                        "model.safetensors": st_file({})},
                "out-of-range", "config.json", "an entailment model's hidden size 0"))
    e, k = 2, 2
    ent_tensors = {"embedding.weight": np.zeros((3, e)), "classifier.weight": np.zeros((3, k)),
                   "classifier.bias": np.zeros(3), "attention.w.weight": np.zeros(k)}
    for lstm in ("premise", "hypothesis"):
        ent_tensors.update({lstm + ".weight_ih": np.zeros((4 * k, e)), lstm + ".weight_hh": np.zeros((4 * k, k)),
                            lstm + ".bias_ih": np.zeros(4 * k), lstm + ".bias_hh": np.zeros(4 * k)})
    for w in ("attention.W_y", "attention.W_h", "attention.W_r", "attention.W_t", "final.W_p", "final.W_x"):
        ent_tensors[w + ".weight"] = np.zeros((k, k))
    out.append(("entailment-w-vector", {"config.json": json.dumps(dict(ent, hidden=k), indent=2).encode(),
                                        "model.safetensors": st_file(ent_tensors)},
                "mismatch", "model.safetensors", "an entailment model whose attention.w.weight is [2], not the "
                "Linear(k, 1) weight [1, 2] MODELS.md names"))
    def llama(folder, config_changes, files, kind, names, what):
        c = dict(LLAMA)
        c.update(config_changes)
        out.append((folder, dict({"config.json": json.dumps(c, indent=2).encode()}, **files), kind, names, what))

    weights = llama_tensors(rng)
    llama("llama-head-dim-mismatch", {"head_dim": 4}, {"model.safetensors": st_file(weights)}, "mismatch",
          "model.safetensors", "config.json's head_dim 4 x 4 heads = 16, the q_proj in model.safetensors is 8 wide")
    index = {"metadata": {"total_size": 0},
             "weight_map": {name: ("model-00001-of-00002.safetensors" if "layers" not in name
                                   else "model-00002-of-00002.safetensors") for name in weights}}
    llama("llama-missing-shard", {}, {"model.safetensors.index.json": json.dumps(index, indent=1).encode(),
                                      "model-00001-of-00002.safetensors":
                                          st_file({k: v for k, v in weights.items() if "layers" not in k})},
          "io", "model-00002-of-00002.safetensors",
          "a sharded checkpoint whose index names model-00002-of-00002.safetensors, which is not in the folder")
    llama("gguf-checkpoint", {}, {"model.gguf": b"GGUF\x03\x00\x00\x00 a llama.cpp checkpoint stands here"},
          "too-large", "model.gguf", "only model.gguf, which the folder then opens: text after a GGUF v3 header, whose "
          "tensor count reads as 7 x 10^18, refused before anything is allocated")
    out.append(("pickled-checkpoint", {"config.json": json.dumps(GPT2, indent=2).encode(),
                                       "pytorch_model.bin": b"PK\x03\x04 a pickled torch checkpoint stands here"},
                "unsupported", "pytorch_model.bin",
                "only pytorch_model.bin: AttnScope does not unpickle (unpickling runs code)"))
    return out


# ---------------------------------------------------------------------------------------------------------
# Hostile files, round 2 (issue 42): decoder configs, version-2 dumps, sharded checkpoints. One folder,
# tests/data/bad/decoders/; each case is (loader, name, bytes or {file: bytes}, kind, [names,] what).


def v2_dump(n=6, dim=2, causal=True, change=None):
    """A version-2 attention dump (engine/include/attn/io/attention_dump.h) of one layer, one head, one key group
    over n tokens, its statistics computed from its queries and keys as the forward computes them; `change(parts)`
    alters the parts (and the layout) before the checksums are taken, so every checksum is valid."""
    rng = np.random.default_rng(42)
    q = rng.standard_normal((n, dim)).astype(np.float32)
    k = rng.standard_normal((n, dim)).astype(np.float32)
    s = q.astype(np.float64) @ k.astype(np.float64).T
    visible = np.tril(np.ones((n, n), bool)) if causal else np.ones((n, n), bool)
    s = np.where(visible, s, -np.inf)
    shift = s.max(axis=1)
    e = np.where(visible, np.exp(s - shift[:, None]), 0.0)
    inv = 1.0 / e.sum(axis=1)
    w = e * inv[:, None]
    j = np.arange(n)
    logs = np.log(np.where(w > 0, w, 1.0))
    stats = np.array([[-(w * logs).sum(), (w * np.abs(j[:, None] - j[None, :])).sum(), w[:, 0].sum(), w.max(), n]])
    parts = {"layer.0.head.0.queries": q, "layer.0.group.0.keys": k, "layer.0.head.0.shift": shift.astype(np.float32),
             "layer.0.head.0.inv_sum": inv.astype(np.float32),
             "layer.0.head.0.received": w.sum(axis=0).astype(np.float32),
             "layer.0.head.0.overview": w.astype(np.float16), "layer.0.stats": stats.astype(np.float64)}
    layout = {"layers": 1, "heads": 1, "kv_heads": 1, "head_dim": dim, "causal": causal, "windows": [0],
              "softcap": 0.0, "overview_factor": 1}
    if change:
        change(parts, layout)
    dtypes = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32", np.dtype(np.float16): "F16"}
    # Largest element first, so that every tensor is aligned to its element size in the file.
    order = sorted(parts, key=lambda name: (-parts[name].dtype.itemsize, name))
    header, blobs, offset, crc = {}, [], 0, {}
    for name in order:
        raw = np.ascontiguousarray(parts[name]).tobytes()
        header[name] = st_entry(dtypes[parts[name].dtype], list(parts[name].shape), offset, offset + len(raw))
        crc[name] = "%08x" % zlib.crc32(raw)
        blobs.append(raw)
        offset += len(raw)
    tokens = ["Once", " upon", " a", " time", " there", " was"][:n]
    header["__metadata__"] = {"format": "attnscope.attn", "version": "2", "tokens": json.dumps(tokens),
                              "layout": json.dumps(layout), "crc32": json.dumps(crc)}
    return st_container(header, b"".join(blobs))


def decoder_round2_cases():
    out = []
    base = dict(LLAMA, max_position_embeddings=2048)

    def config(name, rope, kind, what, **extra):
        c = dict(base, rope_scaling=rope, **extra)
        out.append(("config", name, json.dumps(c, indent=2).encode(), kind, what))

    config("rope-dynamic-1e30.json", {"type": "dynamic", "factor": 1e30}, "too-large",
           "rope_scaling {\"type\": \"dynamic\", \"factor\": 1e30}: max_position_embeddings x factor once overflowed "
           "int64 and the cache reservation threw std::length_error (an abort)")
    config("rope-dynamic-context.json", {"type": "dynamic", "factor": 1000}, "too-large",
           "a dynamic factor of 1000 (in range) on 2^20 positions: a context of 10^9 tokens, over the 2^24 bound",
           max_position_embeddings=1 << 20)
    config("rope-llama3-original-1e12.json", {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
                                              "high_freq_factor": 4, "original_max_position_embeddings": 1e12},
           "too-large", "llama3's original_max_position_embeddings 10^12 (once silently clamped to 10^9)")
    config("rope-yarn-beta-zero.json", {"rope_type": "yarn", "factor": 4, "beta_fast": 0}, "out-of-range",
           "YaRN's beta_fast 0: the ramp's end is log(positions / 0), and every frequency NaN")
    config("rope-yarn-theta-one.json", {"rope_type": "yarn", "factor": 4}, "out-of-range",
           "YaRN with rope_theta 1: the ramp divides by log(1) = 0, the frequencies are NaN", rope_theta=1)
    config("rope-long-factor-huge.json", {"type": "linear", "factor": 2, "long_factor": [1.0, 1e30]}, "out-of-range",
           "LongRoPE's long_factor holds 1e30")

    rng = np.random.default_rng(12)
    weights = llama_tensors(rng)
    out.append(("model", "llama-rope-dynamic-1e30",
                {"config.json": json.dumps(dict(LLAMA, rope_scaling={"type": "dynamic", "factor": 1e30}),
                                           indent=2).encode(), "model.safetensors": st_file(weights)},
                "too-large", "config.json", "a whole llama folder with rope_scaling factor 1e30: refused as it "
                "loads, never reaching a run"))
    # Shards that disagree with their index's weight_map.
    first = {k: v for k, v in weights.items() if "layers" not in k}
    second = {k: v for k, v in weights.items() if "layers" in k}
    one, two = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"

    def index(mapping):
        return json.dumps({"metadata": {"total_size": 0}, "weight_map": mapping}, indent=1).encode()
    right = {name: (one if "layers" not in name else two) for name in weights}
    twice = dict(second, **{"model.norm.weight": weights["model.norm.weight"] + 1})
    out.append(("model", "llama-tensor-in-two-shards",
                {"config.json": json.dumps(LLAMA, indent=2).encode(), "model.safetensors.index.json": index(right),
                 one: st_file(first), two: st_file(twice)},
                "mismatch", "model.safetensors.index.json",
                "model.norm.weight is in both shards (weight_map names the first): which one loaded depended on the "
                "files' order"))
    swapped = {name: (two if "layers" not in name else one) for name in weights}
    out.append(("model", "llama-weight-map-swapped",
                {"config.json": json.dumps(LLAMA, indent=2).encode(), "model.safetensors.index.json": index(swapped),
                 one: st_file(first), two: st_file(second)},
                "mismatch", "model.safetensors.index.json",
                "weight_map puts every tensor in the shard that does not hold it: it loaded all the same"))
    unlisted = {name: one for name in first}
    unlisted.update({name: two for name in second if "down_proj" not in name})
    out.append(("model", "llama-weight-map-incomplete",
                {"config.json": json.dumps(LLAMA, indent=2).encode(), "model.safetensors.index.json": index(unlisted),
                 one: st_file(first), two: st_file(second)},
                "mismatch", "model.safetensors.index.json",
                "model-00002 holds mlp.down_proj.weight, which weight_map does not list"))

    # Version-2 dumps whose checksums are all valid but whose contents a forward cannot have written.
    def set_row(name, row, value):
        def change(parts, layout):
            parts[name][row] = value
        return change
    out.append(("dump-heads", "v2-inv-sum-1e30.attn.safetensors",
                v2_dump(change=set_row("layer.0.head.0.inv_sum", 2, 1e30)), "out-of-range",
                "row 2's 1 / sum is 1e30 (a row's 1 / sum is at most 1: its largest term is 1)"))
    out.append(("dump-heads", "v2-shift-infinite.attn.safetensors",
                v2_dump(change=set_row("layer.0.head.0.shift", 1, np.inf)), "out-of-range",
                "row 1's shift is +inf with a finite 1 / sum"))

    def nan_query(parts, layout):
        parts["layer.0.head.0.queries"][3, 0] = np.nan
    out.append(("dump-heads", "v2-nan-query.attn.safetensors", v2_dump(change=nan_query), "mismatch",
                "query row 3 is NaN while its row statistics are finite: drawn as ordinary attention before"))

    def nan_row(parts, layout):
        parts["layer.0.head.0.queries"][3, 0] = np.nan
        parts["layer.0.head.0.shift"][3] = np.nan
        parts["layer.0.head.0.inv_sum"][3] = np.nan
    out.append(("dump", "v2-nan-row.attn.safetensors", v2_dump(change=nan_row), "warning",
                "query row 3 is NaN and so are its statistics (as a forward writes them): loads with a warning, "
                "as version 1's NaN maps do"))

    def flip(parts, layout):
        layout["causal"] = False
    out.append(("dump-heads", "v2-causal-flipped.attn.safetensors", v2_dump(change=flip), "mismatch",
                "the layout says \"causal\": false over rows a causal forward wrote: row 0 would spread over "
                "every key"))
    return out


# ---------------------------------------------------------------------------------------------------------
# SentencePiece tokenizer.model files (engine/src/text/sentencepiece_check.cpp): the protobuf and the
# precompiled_charsmap (a 4-byte little-endian trie size, a darts-clone double array, then the NUL-terminated
# replacement strings), written by hand.


def pb_varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def pb_bytes(field: int, payload: bytes) -> bytes:
    return pb_varint(field << 3 | 2) + pb_varint(len(payload)) + payload


def pb_int(field: int, value: int) -> bytes:
    return pb_varint(field << 3) + pb_varint(value)


SPM_UNUSED = 0x80000000  # a unit whose label has the leaf bit: no input byte matches it


def spm_charsmap(rules: dict, trie_size_delta=0, edit=None) -> bytes:
    """rules: key bytes -> replacement bytes. Every node gets a 256-unit block of its own; a node with a
    leaf stores the replacement's offset in its block's unit 0, as darts-clone's builder does. `edit(units,
    table)` may spoil the result; `trie_size_delta` changes only the size written in front."""
    table, where = b"", {}
    for key, replacement in rules.items():
        where[key] = len(table)
        table += replacement + b"\0"
    root = {}
    for key in rules:
        node = root
        for b in key:
            node = node.setdefault(b, {})
        node[None] = where[key]
    units = [SPM_UNUSED] * 256

    def place(node):
        base = len(units)
        units.extend([SPM_UNUSED] * 256)
        for label, child in node.items():
            if label is None:
                continue
            at = base ^ label
            child_base = place(child)
            units[at] = (at ^ child_base) << 10 | (0x100 if None in child else 0) | label
            if None in child:
                units[child_base] = 0x80000000 | child[None]
        return base
    units[0] = place(root) << 10
    if edit:
        table = edit(units, table)
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie) + trie_size_delta) + trie + table


SPM_RULES = {"\uff21".encode(): b"A", "\ufb01".encode(): b"fi", "\u2460".encode(): b"1"}


def spm_model(charsmap=b"", denormalizer=None, self_test=None) -> bytes:
    """A Unigram model with <unk>, <s>, </s> and a few pieces."""
    pieces = [("<unk>", 2), ("<s>", 3), ("</s>", 3), ("\u2581", 1), ("A", 1), ("f", 1), ("i", 1), ("fi", 1),
              ("1", 1), ("a", 1), ("\u2581A", 1), ("\u2581a", 1)]
    out = b""
    for k, (piece, kind) in enumerate(pieces):
        out += pb_bytes(1, pb_bytes(1, piece.encode()) + pb_varint(2 << 3 | 5) + struct.pack("<f", -float(k))
                        + pb_int(3, kind))
    out += pb_bytes(2, pb_int(3, 1))  # trainer_spec: model_type UNIGRAM
    out += pb_bytes(3, pb_bytes(1, b"custom") + pb_bytes(2, charsmap))
    if self_test is not None:
        out += pb_bytes(4, pb_bytes(1, pb_bytes(1, self_test) + pb_bytes(2, b"")))
    if denormalizer is not None:
        out += pb_bytes(5, pb_bytes(1, b"custom") + pb_bytes(2, denormalizer))
    return out


def tokenizer_model_cases():
    """(name, bytes, kind, what), each loaded, then used to encode and decode (tests/unit/bad_corpus.h)."""
    def root_far(units, table):
        units[0] = (0x3FFFFF << 10) | (1 << 9)  # children at unit 2^30 and on: 4 GB past the trie
        return table

    def value_far(units, table):
        base = units[0] >> 10
        for b in "\uff21".encode():  # walk to the leaf of "Ａ" and give it a replacement at byte 2^31 - 16
            base ^= b
            base ^= units[base] >> 10
        units[base] = 0x80000000 | 0x7FFFFFF0
        return table

    def cycle(units, table):
        # "a" leads back to the root's own block: "aaaa..." matches at every byte, one more result each
        root_base = units[0] >> 10
        units[root_base ^ 0x61] = ((root_base ^ 0x61) ^ root_base) << 10 | 0x100 | 0x61
        units[root_base] = 0x80000000 | 0
        return table
    good = spm_charsmap(SPM_RULES)
    chain = {b"a" * n: b"b" for n in range(1, 34)}
    out = [
        ("charsmap-small.model", spm_model(good), "ok",
         "a Unigram model whose precompiled_charsmap maps U+FF21, U+FB01 and U+2460 to \"A\", \"fi\" and \"1\": a "
         "valid trie of 3 keys, checked and run by libsentencepiece"),
        ("charsmap-children-past-trie.model", spm_model(spm_charsmap(SPM_RULES, edit=root_far)), "malformed",
         "the trie's root puts its children 2^30 units out, past the trie's 2,560 units: libsentencepiece 0.1.97 "
         "reads there while encoding (SIGSEGV)"),
        ("charsmap-value-past-table.model", spm_model(spm_charsmap(SPM_RULES, edit=value_far)), "malformed",
         "the leaf of U+FF21 gives its replacement at byte 2^31 - 16 of a 7-byte string table (SIGSEGV)"),
        ("charsmap-no-nul.model", spm_model(spm_charsmap(SPM_RULES, edit=lambda u, t: t[:-1])), "malformed",
         "the string table's last replacement has no NUL: libsentencepiece reads on past the map"),
        ("charsmap-cycle.model", spm_model(spm_charsmap(SPM_RULES, edit=cycle)), "malformed",
         "\"a\" leads back to the root: every \"a\" of a text is one more prefix match, written past "
         "libsentencepiece's 32-entry stack array"),
        ("charsmap-33-matches.model", spm_model(spm_charsmap(chain)), "too-large",
         "keys \"a\", \"aa\", ... 33 \"a\": 33 prefix matches for one position, over libsentencepiece's 32"),
        ("charsmap-trie-size-past-blob.model", spm_model(spm_charsmap(SPM_RULES, trie_size_delta=10)), "truncated",
         "the trie's size is 10 bytes more than the map holds (libsentencepiece's own check is 4 bytes short)"),
        ("charsmap-expansion.model", spm_model(spm_charsmap({b"a": b"a" * 4000})), "too-large",
         "\"a\" becomes 4,000 bytes: a 1 MB text would normalize to 4 GB"),
        ("charsmap-not-utf8.model", spm_model(spm_charsmap({b"a": b"\xff"})), "encoding",
         "\"a\" becomes the byte 0xFF, which is not UTF-8"),
        ("denormalizer-children-past-trie.model",
         spm_model(good, denormalizer=spm_charsmap(SPM_RULES, edit=root_far)), "malformed",
         "a valid normalizer, but the denormalizer's trie puts its children 2^30 units out (SIGSEGV on decode)"),
        ("self-test-bad-map.model", spm_model(spm_charsmap(SPM_RULES, edit=root_far), self_test=b"hello"),
         "malformed", "a self-test sample with the broken trie: libsentencepiece encodes it while loading (SIGSEGV)"),
        ("protobuf-cut.model", spm_model(good)[:-7], "malformed",
         "a valid model cut 7 bytes before its end: the normalizer_spec's length runs past the file"),
    ]
    return out


# ---------------------------------------------------------------------------------------------------------
# Session files (*.attnscope.json, engine/include/attn/io/session.h)


def session_cases():
    """(name, bytes, kind, what)"""
    good = {"format": "attnscope.session", "version": 1, "tab": "alignment",
            "tabs": {"alignment": {"model": "date-bahdanau", "text": "Saturday, 21 November 2026", "beam": 3}}}

    def text(changes=None, top=None):
        s = json.loads(json.dumps(good))
        s["tabs"]["alignment"].update(changes or {})
        s.update(top or {})
        return json.dumps(s, indent=2, ensure_ascii=False).encode("utf-8")

    whole = text()
    out = [("empty.attnscope.json", b"", "truncated", "0 bytes: a session file created but never written"),
           ("truncated.attnscope.json", whole[:len(whole) // 2], "truncated",
            "a valid session cut in the middle (what a save without an atomic rename leaves after a crash)"),
           ("invalid-utf8.attnscope.json", text({"text": "caf\u00e9"}).replace("caf\u00e9".encode(), b"caf\xe9"),
            "encoding", "the alignment text holds \"caf\" + byte 0xE9 (Latin-1, not UTF-8)"),
           ("lone-surrogate.attnscope.json", text({"text": "LONE"}).replace(b"LONE", b"\\udc80"), "encoding",
            "the alignment text is the JSON escape \"\\udc80\": a lone low surrogate, which no UTF-8 text can hold"),
           ("duplicate-key.attnscope.json", text().replace(b'"beam": 3', b'"beam": 3,\n      "beam": 4'), "malformed",
            "the alignment section names \"beam\" twice (which one would count is not the reader's to guess)"),
           ("deep-nesting.attnscope.json",
            text().replace(b'"beam": 3', b'"beam": ' + b"[" * 10000 + b"]" * 10000), "too-large",
            "\"beam\" is 10,000 nested arrays: refused from a scan of the bytes, before any recursive parse"),
           ("newer-version.attnscope.json", text(top={"version": 2}), "unsupported",
            "version 2: a session from a newer AttnScope"),
           ("not-a-session.attnscope.json", json.dumps({"format": "attnscope.glimpse", "version": 1}).encode(),
            "unsupported", "a glimpse settings file renamed to a session"),
           ("beam-zero.attnscope.json", text({"beam": 0}), "out-of-range", "beam width 0"),
           ("beam-huge.attnscope.json", text({"beam": 18446744073709551615}), "out-of-range",
            "beam width 2^64 - 1"),
           ("beam-string.attnscope.json", text({"beam": "3"}), "malformed", "beam width \"3\", a string"),
           ("not-an-object.attnscope.json", b"[1, 2, 3]\n", "malformed", "a JSON array, not an object")]
    return out


# ---------------------------------------------------------------------------------------------------------
# audio and the Lab (issue 42): headers over the audio reader's limits, Lab requests over the Lab's budgets


def wav(rate, channels, bits, frames_bytes: bytes, fmt=1) -> bytes:
    """A WAV file: the 16-byte fmt chunk (PCM, or 3 for IEEE float), then the data as given."""
    block = channels * bits // 8
    fmt_chunk = struct.pack("<HHIIHH", fmt, channels, rate, rate * block, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt_chunk)) + fmt_chunk + b"data" + \
        struct.pack("<I", len(frames_bytes)) + frames_bytes
    return b"RIFF" + struct.pack("<I", len(body)) + body


def audio_cases():
    """(name, bytes, kind, what)"""
    return [("rate-655360.wav", wav(655360, 1, 16, bytes(64)), "unsupported",
             "a WAV declaring 655,360 Hz: over the 192,000 Hz the reader takes (a 1.4 MB FLAC at that rate decoded "
             "393 M samples)"),
            ("channels-12-at-192k.wav", wav(192000, 12, 16, bytes(24 * 4)), "too-large",
             "12 channels at 192,000 Hz: the 30 s a speech model reads would be 69,120,000 samples, over the "
             "67,108,864 decoded from a file at most")]


def lab_cases():
    """(name, bytes, kind, what)"""
    def request(mechanism, words, **params):
        r = {"query": "she ate the apples", "source": " ".join(f"w{i}" for i in range(words)),
             "mechanism": mechanism}
        r.update(params)
        return json.dumps(r).encode()
    return [("multi-head-64-heads.json", request("multi-head", 2048, heads=64), "too-large",
             "64 heads over 2,048 words: their maps would be 2.2 GB (2.7 GB measured before the budget), over the "
             "Lab's 2 GiB"),
            ("capsule-routing-64-classes.json", request("capsule-routing", 2048, classes=64, dim=1024), "too-large",
             "64 capsules over 2,048 words at dimension 1,024: 2^31 random weights, over the Lab's 2^26")]


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "tests" / "data" / "bad"
    if out.exists():
        shutil.rmtree(out)
    rows = []

    def write(rel, data):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def single(folder, loader, name, data, kind, what):
        rel = f"{folder}/{name}"
        write(rel, data)
        rows.append((rel, loader, kind, rel, what))

    def several(folder, loader, name, files, kind, names, what):
        for file, data in files.items():
            write(f"{folder}/{name}/{file}", data)
        rows.append((f"{folder}/{name}", loader, kind, f"{folder}/{name}/{names}", what))

    for case in safetensors_cases():
        single("safetensors", "safetensors", *case)
    for case in image_cases():
        single("images", "image", *case)
    for case in huge_image_cases():
        single("images", "image-224", *case)
    for name, data, loader, kind, what in text_cases():
        single("configs" if loader == "config" else "tokenizers", loader, name, data, kind, what)
    for case in bpe_cases():
        several("tokenizers", "bpe", *case)
    for case in dump_cases():
        single("dumps", "dump", *case)
    for case in session_cases():
        single("sessions", "session", *case)
    for case in tokenizer_model_cases():
        single("tokenizer-models", "tokenizer_model", *case)
    for case in model_cases():
        several("models", "model", *case)
    for case in decoder_round2_cases(): (several if isinstance(case[2], dict) else single)("decoders", *case)
    for case in audio_cases():
        single("audio", "audio", *case)
    for case in lab_cases():
        single("lab", "lab", *case)

    lines = ["# tests/data/bad: written by tools/bad/make_bad_corpus.py; do not edit by hand.",
             "# path\tloader\texpect\tnames\twhat"]
    for row in rows:
        assert all("\t" not in f and "\n" not in f for f in row), row
        lines.append("\t".join(row))
    (out / "MANIFEST.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {len(rows)} inputs, {total} bytes, to {out}")


if __name__ == "__main__":
    main()
