#!/usr/bin/env python3
"""Writes the small safetensors files of tests/data/safetensors: a few valid files (F16 and BF16 with
chosen bit patterns, a rank-0 tensor, a zero-element tensor) and the bad inputs the reader must refuse,
each with the reason and the byte offset the tests expect (see the table printed at the end).

Only the standard library (json, struct), so the bytes are exactly those written here: no torch, no
safetensors package. Headers are written compactly like the reference (json separators "," and ":"),
padded with spaces to a multiple of 8 unless a case needs otherwise.

    python3 tools/make_bad_safetensors.py [OUT_DIR]   (default: tests/data/safetensors in this repo)
"""
import json
import pathlib
import struct
import sys

QUERY = "bert.encoder.layer.0.attention.self.query.weight"


def header_bytes(header, pad=True) -> bytes:
    text = header if isinstance(header, (bytes, bytearray)) else json.dumps(
        header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return bytes(text)


def container(header, data: bytes = b"", pad=True, length=None) -> bytes:
    """The file: the header's length (or `length`, to lie about it), the header, the data."""
    h = header_bytes(header, pad)
    return struct.pack("<Q", len(h) if length is None else length) + h + data


def f32(*values) -> bytes:
    return struct.pack("<%df" % len(values), *values)


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


# F16 bit patterns and the float32 each is exactly: 1, -2, 65504 (largest), 2^-24 (smallest subnormal),
# 2^-14 (smallest normal), -0, +inf, 0.333251953125 (the half nearest 1/3).
F16_BITS = [0x3C00, 0xC000, 0x7BFF, 0x0001, 0x0400, 0x8000, 0x7C00, 0x3555]
# BF16 bit patterns: 1, -2, 3.140625, 1e-40 region subnormal 0x0001 (= 2^-133), -inf, 0x7F7F (largest).
BF16_BITS = [0x3F80, 0xC000, 0x4049, 0x0001, 0xFF80, 0x7F7F]


def cases():
    out = {}

    # --- valid ---
    out["valid_f16"] = container({"__metadata__": {"format": "pt"}, "half": entry("F16", [2, 4], 0, 16)},
                                 struct.pack("<8H", *F16_BITS))
    out["valid_bf16"] = container({"bfloat": entry("BF16", [6], 0, 12)}, struct.pack("<6H", *BF16_BITS))
    out["valid_rank0"] = container({"scalar": entry("F32", [], 0, 4)}, f32(3.5))
    out["valid_zero_elements"] = container(
        {"empty": entry("F32", [0, 4], 0, 0), "bias": entry("F32", [2], 0, 8)}, f32(1.5, -2.5))

    # --- bad: the container ---
    out["empty"] = b""
    out["four_bytes"] = b"\x10\x00\x00\x00"
    out["header_too_large"] = struct.pack("<Q", 1 << 60) + b"{}      "
    out["header_past_end"] = struct.pack("<Q", 1000) + header_bytes({"w": entry("F32", [1], 0, 4)}) + f32(1.0)
    # A \xff byte inside a key: header byte 2, file byte 10.
    out["not_utf8"] = container(b'{"\xffw":' + json.dumps(entry("F32", [1], 0, 4)).encode() + b"}", f32(1.0))
    # An unquoted word where a value belongs: JSON fails at the 'o' of nope, header byte 7, file byte 15.
    out["not_json"] = container(b'{"a": nope}')
    out["header_not_object"] = container(b"[1, 2, 3]")

    # --- bad: one entry (offset: the tensor's key in the header; "{" is header byte 0, so 8 + 1 = 9) ---
    out["wrong_length"] = container({QUERY: entry("F32", [64, 64], 0, 100)}, bytes(100))
    out["unknown_dtype"] = container({"w": entry("F12", [2], 0, 4)}, bytes(4))
    out["offsets_reversed"] = container({"w": entry("F32", [1], 8, 4)}, bytes(8))
    out["negative_dim"] = container({"w": entry("F32", [-1, 2], 0, 8)}, bytes(8))
    out["shape_overflow"] = container({"w": entry("F32", [1 << 40, 1 << 40], 0, 8)}, bytes(8))
    # Two entries named w: the second is refused at its own key.
    dup = ('{"w":' + json.dumps(entry("F32", [2], 0, 8), separators=(",", ":")) + ',"w":' +
           json.dumps(entry("F32", [2], 0, 8), separators=(",", ":")) + "}").encode()
    out["duplicate_key"] = container(dup, f32(1.0, 2.0))
    out["metadata_not_string"] = container(
        {"__metadata__": {"format": "pt", "step": 3}, "w": entry("F32", [1], 0, 4)}, f32(1.0))

    # --- bad: the layout of the data (offset: data_start + the tensor's begin) ---
    out["overlap"] = container({"a": entry("F32", [4], 0, 16), QUERY: entry("F32", [4], 8, 24)}, bytes(24))
    out["gap"] = container({"a": entry("F32", [4], 0, 16), QUERY: entry("F32", [4], 20, 36)}, bytes(36))
    out["gap_at_start"] = container({QUERY: entry("F32", [1], 4, 8)}, bytes(8))
    out["truncated"] = container({"a": entry("F32", [2], 0, 8), QUERY: entry("F32", [4, 4], 8, 72)}, bytes(40))
    out["trailing_bytes"] = container({QUERY: entry("F32", [2], 0, 8)}, f32(1.0, 2.0) + b"\x00\x01\x02\x03")
    return out


def data_start(blob: bytes) -> int:
    return 8 + struct.unpack("<Q", blob[:8])[0] if len(blob) >= 8 else 0


def main() -> None:
    root = pathlib.Path(__file__).resolve().parent.parent
    out_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "tests" / "data" / "safetensors"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, blob in cases().items():
        (out_dir / (name + ".safetensors")).write_bytes(blob)
        start = data_start(blob)
        print("%-24s %5d bytes, data section at %s" % (name, len(blob), start if start <= len(blob) else "-"))


if __name__ == "__main__":
    main()
