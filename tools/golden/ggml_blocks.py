#!/usr/bin/env python3
"""ggml's own quantised blocks and their dequantisation, for tests/unit/test_ggml_types.cpp (tools only: nothing here
runs in AttnScope, and the test needs neither Python nor ggml).

    /usr/bin/python3 -m tools.golden.ggml_blocks [--lib PATH/libggml-base.so] [--out tests/data/gguf_blocks]

The library is llama.cpp's CPU build as the npm package node-llama-cpp ships it (@node-llama-cpp/linux-x64,
bins/linux-x64/libggml-base.so), called through ctypes. For each type the engine reads it writes
  <TYPE>.bin  the raw blocks: rows quantised by ggml_quantize_chunk (quantize_row_q8_K_ref for Q8_K, which the
              chunk function does not take) from fixed-seed inputs, then blocks of random bytes whose f16 (or f32)
              scales are replaced by finite values, so that every bit of the quants and 6-bit scales is exercised,
              including patterns ggml's quantisers rarely write;
  <TYPE>.f32  what ggml's to_float (dequantize_row_*) makes of those blocks, little-endian float32;
and a MANIFEST: the library's version, its type table (every number below GGML_TYPE_COUNT with its block size,
bytes per block and name), and one line per case.
"""
import argparse
import ctypes as C
import json
import pathlib

import numpy as np

DEFAULT_LIB = "/tmp/nlc/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so"
GGML_TYPE_COUNT = 43
ROW = 512  # elements per quantised row: two K-quant super-blocks, sixteen 32-element blocks
RANDOM_ROWS = 2  # rows of random-byte blocks after the quantised ones

# The types the engine reads, by ggml number. F32 has no to_float in ggml (it is a copy); the test checks it alone.
TYPES = {"F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11, "Q4_K": 12,
         "Q5_K": 13, "Q6_K": 14, "Q8_K": 15, "BF16": 30}
# Byte offsets of each block's float scales (ggml-common.h), to be made finite in the random-byte blocks: a NaN
# there would make the expected values NaN and compare nothing.
F16_SCALES = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "Q2_K": [80, 82],
              "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}
F32_SCALES = {"Q8_K": [0]}


class TypeTraits(C.Structure):
    # struct ggml_type_traits (ggml.h)
    _fields_ = [("type_name", C.c_char_p), ("blck_size", C.c_int64), ("blck_size_interleave", C.c_int64),
                ("type_size", C.c_size_t), ("is_quantized", C.c_bool), ("to_float", C.c_void_p),
                ("from_float_ref", C.c_void_p)]


ROW_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_int64)


def load(path):
    lib = C.CDLL(path)
    lib.ggml_get_type_traits.restype = C.POINTER(TypeTraits)
    lib.ggml_get_type_traits.argtypes = [C.c_int]
    lib.ggml_quantize_chunk.restype = C.c_size_t
    lib.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64, C.c_int64, C.c_int64,
                                        C.c_void_p]
    lib.ggml_version.restype = C.c_char_p
    lib.ggml_commit.restype = C.c_char_p
    return lib


def inputs(rng):
    """The quantised rows: ordinary, outliers, zeros, negative only, positive with an offset (the min-based types'
    case), tiny (scales in f16's subnormal range) and large."""
    g = rng.standard_normal((7, ROW)).astype(np.float32)
    rows = [g[0],
            np.where(rng.random(ROW) < 0.01, g[1] * 60.0, g[1]).astype(np.float32),
            np.zeros(ROW, np.float32),
            -np.abs(g[2]),
            (3.0 + rng.random(ROW)).astype(np.float32),
            g[3] * np.float32(1e-6),
            g[4] * np.float32(3e3)]
    return np.stack(rows).astype(np.float32)


def quantise(lib, name, number, x):
    t = lib.ggml_get_type_traits(number).contents
    rows = x.shape[0]
    out = np.zeros(rows * ROW // t.blck_size * t.type_size, np.uint8)
    if name == "Q8_K":
        # quantize_row_q8_K_ref(const float *, block_q8_K *, int64_t): a row at a time, as the chunk function would.
        for r in range(rows):
            lib.quantize_row_q8_K_ref(x[r].ctypes.data_as(C.c_void_p),
                                      C.c_void_p(out.ctypes.data + r * (ROW // 256) * 292), C.c_int64(ROW))
        return out
    written = lib.ggml_quantize_chunk(number, x.ctypes.data_as(C.c_void_p), out.ctypes.data_as(C.c_void_p), 0,
                                      rows, ROW, None)
    assert written == out.size, (name, written, out.size)
    return out


def random_blocks(rng, name, blck, size):
    """Random bytes, RANDOM_ROWS rows of them, with each block's scales replaced by finite values of both signs,
    subnormal halves among them."""
    n = RANDOM_ROWS * ROW // blck
    raw = rng.integers(0, 256, (n, size), dtype=np.uint8)
    if name in ("F16", "BF16"):
        return raw.reshape(-1)
    for off in F16_SCALES.get(name, []):
        halves = (rng.standard_normal(n) * 0.05).astype(np.float16)
        halves[0] = np.float16(-0.0)
        halves[1] = np.frombuffer(np.uint16(0x0001).tobytes(), np.float16)[0]  # the smallest subnormal
        halves[2] = np.frombuffer(np.uint16(0x83FF).tobytes(), np.float16)[0]  # the largest, negative
        raw[:, off:off + 2] = halves.view(np.uint8).reshape(n, 2)
    for off in F32_SCALES.get(name, []):
        raw[:, off:off + 4] = (rng.standard_normal(n) * 0.05).astype(np.float32).view(np.uint8).reshape(n, 4)
    return raw.reshape(-1)


def sixteen_bit(name, rng):
    """F16 and BF16: every zero, subnormal, infinity and NaN of both signs, and a sample of 4096 normal numbers."""
    exp_mask = 0x7C00 if name == "F16" else 0x7F80
    every = np.arange(65536, dtype=np.uint32)
    edges = every[((every & exp_mask) == 0) | ((every & exp_mask) == exp_mask)]
    rest = rng.choice(every[((every & exp_mask) != 0) & ((every & exp_mask) != exp_mask)], 4096, replace=False)
    patterns = np.concatenate([edges, np.sort(rest)]).astype(np.uint16)
    pad = (-patterns.size) % ROW
    return np.concatenate([patterns, rng.integers(0, 65536, pad).astype(np.uint16)]).view(np.uint8)


def dequantise(lib, name, number, blocks, elements):
    out = np.zeros(elements, np.float32)
    if name == "Q8_K":
        # Q8_K's traits in ggml-base have no to_float; the exported reference function is the same code.
        lib.dequantize_row_q8_K(blocks.ctypes.data_as(C.c_void_p), out.ctypes.data_as(C.c_void_p),
                                C.c_int64(elements))
    else:
        to_float = ROW_FN(lib.ggml_get_type_traits(number).contents.to_float)
        to_float(blocks.ctypes.data_as(C.c_void_p), out.ctypes.data_as(C.c_void_p), elements)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=DEFAULT_LIB)
    ap.add_argument("--out", default="tests/data/gguf_blocks")
    args = ap.parse_args()
    lib = load(args.lib)
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    lib_path = pathlib.Path(args.lib)
    meta = json.loads((lib_path.parent / "_nlcBuildMetadata.json").read_text())
    package = json.loads((lib_path.parents[2] / "package.json").read_text())
    lines = ["# tests/data/gguf_blocks, written by: /usr/bin/python3 -m tools.golden.ggml_blocks",
             f"# {package['name']} {package['version']}, build metadata llamaCpp.release "
             f"{meta['buildOptions']['llamaCpp']['release']}",
             f"library ggml {lib.ggml_version().decode()} commit {lib.ggml_commit().decode()}",
             "# type NUMBER BLOCK_ELEMENTS BLOCK_BYTES GGML_NAME (ggml_get_type_traits)"]
    for number in range(GGML_TYPE_COUNT):
        t = lib.ggml_get_type_traits(number).contents
        lines.append(f"type {number} {t.blck_size} {t.type_size} {t.type_name.decode()}")
    lines.append("# case TYPE NUMBER ELEMENTS (TYPE.bin: the blocks; TYPE.f32: ggml's floats)")
    for name, number in TYPES.items():
        rng = np.random.default_rng(45 + number)  # one fixed seed per type: a type's files stand alone
        t = lib.ggml_get_type_traits(number).contents
        if name in ("F16", "BF16"):
            blocks = sixteen_bit(name, rng)
        else:
            blocks = np.concatenate([quantise(lib, name, number, inputs(rng)),
                                     random_blocks(rng, name, t.blck_size, t.type_size)])
        elements = blocks.size // t.type_size * t.blck_size
        expected = dequantise(lib, name, number, blocks, elements)
        (out_dir / f"{name}.bin").write_bytes(blocks.tobytes())
        (out_dir / f"{name}.f32").write_bytes(expected.astype("<f4").tobytes())
        lines.append(f"case {name} {number} {elements}")
    (out_dir / "MANIFEST").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
