#!/usr/bin/env python3
"""Compare the tensors of GGUF files written by convert.py with llama.cpp's quantisation of the F32 file.

    /usr/bin/python3 -m tools.gguf.check_files F32.gguf OURS.gguf TYPE [--bin GGML_BIN_DIR]

Quantises F32.gguf to TYPE with llama_model_quantize (llama_quantize.py: --pure, no importance matrix) into a
temporary file and requires every tensor of OURS.gguf to have the same name, shape, ggml type and bytes. For
Q8_0 this checks convert.py against llama-quantize rather than against convert_hf_to_gguf.py, whose Q8_0 comes
from gguf-py; both implement quantize_row_q8_0_ref, which check_quantizers.py checks row by row.
"""
import argparse
import os
import struct
import sys
import tempfile

from tools.gguf import gguf_writer as gw
from tools.gguf import llama_quantize

_NAMES = {v: k for k, v in gw.GGML_TYPES.items()}


def read_gguf(path):
    """(key/values, tensors) of a GGUF v3 file: just enough of a reader for the files these tools and llama.cpp
    write. Key/values map to Python values (arrays to lists); tensors map name -> (type name, ne, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    if magic != b"GGUF" or version != 3:
        raise ValueError(f"{path}: not a GGUF v3 file")
    pos = 24

    def string(pos):
        (n,) = struct.unpack_from("<Q", data, pos)
        return data[pos + 8:pos + 8 + n].decode("utf-8"), pos + 8 + n

    def value(value_type, pos):
        if value_type == gw.GGUF_STRING:
            return string(pos)
        if value_type == gw.GGUF_ARRAY:
            element_type, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            items = []
            for _ in range(count):
                item, pos = value(element_type, pos)
                items.append(item)
            return items, pos
        fmt = gw._SCALAR_FORMATS[value_type]
        return struct.unpack_from(fmt, data, pos)[0], pos + struct.calcsize(fmt)

    kv = {}
    for _ in range(n_kv):
        key, pos = string(pos)
        (value_type,) = struct.unpack_from("<I", data, pos)
        kv[key], pos = value(value_type, pos + 4)
    alignment = kv.get("general.alignment", 32)
    infos = []
    for _ in range(n_tensors):
        name, pos = string(pos)
        (n_dims,) = struct.unpack_from("<I", data, pos)
        ne = struct.unpack_from(f"<{n_dims}Q", data, pos + 4)
        ggml_type, offset = struct.unpack_from("<IQ", data, pos + 4 + 8 * n_dims)
        pos += 4 + 8 * n_dims + 12
        infos.append((name, _NAMES[ggml_type], ne, offset))
    base = pos + (-pos) % alignment
    tensors = {}
    for name, type_name, ne, offset in infos:
        block, size = gw.GGML_BLOCKS[type_name]
        n = 1
        for d in ne:
            n *= d
        tensors[name] = (type_name, ne, data[base + offset:base + offset + n // block * size])
    return kv, tensors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("f32")
    ap.add_argument("ours")
    ap.add_argument("type")
    ap.add_argument("--bin", default=llama_quantize.DEFAULT_BIN)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        theirs_path = os.path.join(tmp, "llama.gguf")
        llama_quantize.quantize(args.f32, theirs_path, args.type, args.bin)
        theirs = read_gguf(theirs_path)[1]
    ours = read_gguf(args.ours)[1]
    bad = 0
    if sorted(ours) != sorted(theirs):
        print(f"FAIL tensor names differ: {sorted(set(ours) ^ set(theirs))}")
        bad += 1
    for name in sorted(set(ours) & set(theirs)):
        if ours[name] != theirs[name]:
            bad += 1
            print(f"FAIL {name}: ours {ours[name][0]} {ours[name][1]}, llama.cpp {theirs[name][0]} {theirs[name][1]}")
    kinds = sorted({v[0] for v in ours.values()})
    print(f"{args.ours}: {len(ours) - bad} of {len(ours)} tensors identical to llama.cpp's {args.type} "
          f"({', '.join(kinds)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
