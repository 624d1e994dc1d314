#!/usr/bin/env python3
"""Compare gguf_writer's quantisers with ggml's own, byte for byte (tools only).

    /usr/bin/python3 -m tools.gguf.check_quantizers [GGML_BIN_DIR]

GGML_BIN_DIR holds libggml-base.so of node-llama-cpp's prebuilt llama.cpp (default: tools/golden's
node_modules/@node-llama-cpp/linux-x64/bins/linux-x64). Each case quantises the same random float32 rows with
both, through ggml_fp32_to_fp16_row, ggml_fp32_to_bf16_row_ref, quantize_row_q8_0_ref, quantize_row_q5_0_ref,
quantize_row_q4_K_ref and ggml_quantize_chunk (llama-quantize's entry point, no importance matrix), and exits 1
on the first byte that differs. The rows mix scales, signs, exact zeros, constant blocks, ties at .5 and
outliers, which are where rounding and the scale search's branches differ.
"""
import ctypes
import os
import sys

import numpy as np

from tools.gguf import gguf_writer as gw
from tools.gguf.llama_quantize import DEFAULT_BIN


def cases(rng):
    yield "normal", rng.standard_normal(256 * 64).astype(np.float32)
    yield "tiny", (rng.standard_normal(256 * 16) * 1e-6).astype(np.float32)
    yield "large", (rng.standard_normal(256 * 16) * 1e4).astype(np.float32)
    yield "positive", np.abs(rng.standard_normal(256 * 16)).astype(np.float32)
    yield "negative", -np.abs(rng.standard_normal(256 * 16)).astype(np.float32)
    yield "uniform", rng.uniform(-1, 1, 256 * 32).astype(np.float32)
    outliers = rng.standard_normal(256 * 16).astype(np.float32)
    outliers[rng.integers(0, outliers.size, 64)] *= 50
    yield "outliers", outliers
    flat = rng.standard_normal(256 * 8).astype(np.float32)
    flat[:256] = 0
    flat[256:512] = 0.25
    flat[512:544] = -3
    yield "zeros and constants", flat
    yield "halves", (rng.integers(-254, 255, 256 * 8) / 2).astype(np.float32)
    yield "small integers", rng.integers(-8, 8, 256 * 8).astype(np.float32)
    sparse = rng.standard_normal(256 * 8).astype(np.float32)
    sparse[rng.random(sparse.size) < 0.9] = 0
    yield "sparse", sparse
    yield "fp16 edge", np.array([65504, 65520, 1e5, 6e-8, 3e-8, 2.98e-8, 1e-40, -0.0, np.inf, -np.inf] * 128,
                                dtype=np.float32)


def main():
    bindir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BIN
    lib = ctypes.CDLL(os.path.join(bindir, "libggml-base.so"))
    fptr = ctypes.POINTER(ctypes.c_float)
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, fptr, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.c_int64, fptr]
    for name in ("quantize_row_q8_0_ref", "quantize_row_q5_0_ref", "quantize_row_q4_K_ref", "ggml_fp32_to_fp16_row",
                 "ggml_fp32_to_bf16_row_ref"):
        getattr(lib, name).argtypes = [fptr, ctypes.c_void_p, ctypes.c_int64]
        getattr(lib, name).restype = None

    def ggml(fn, x, nbytes):
        x = np.ascontiguousarray(x, dtype=np.float32)
        out = (ctypes.c_uint8 * nbytes)()
        getattr(lib, fn)(x.ctypes.data_as(fptr), out, x.size)
        return bytes(out)

    def chunk(type_name, x, n_per_row):
        x = np.ascontiguousarray(x, dtype=np.float32)
        block, size = gw.GGML_BLOCKS[type_name]
        out = (ctypes.c_uint8 * (x.size // block * size))()
        lib.ggml_quantize_chunk(gw.GGML_TYPES[type_name], x.ctypes.data_as(fptr), out, 0, x.size // n_per_row,
                                n_per_row, None)
        return bytes(out)

    rng = np.random.default_rng(45)
    checks = failures = 0
    for label, x in cases(rng):
        finite = x if np.isfinite(x).all() else np.nan_to_num(x, posinf=1e3, neginf=-1e3)
        pairs = [
            ("F16 row", gw.encode_tensor(x, "F16"), ggml("ggml_fp32_to_fp16_row", x, x.size * 2)),
            ("BF16 row", gw.encode_tensor(x, "BF16"), ggml("ggml_fp32_to_bf16_row_ref", x, x.size * 2)),
            ("Q8_0 ref", gw.encode_tensor(finite, "Q8_0"),
             ggml("quantize_row_q8_0_ref", finite, finite.size // 32 * 34)),
            ("Q5_0 ref", gw.encode_tensor(finite, "Q5_0"),
             ggml("quantize_row_q5_0_ref", finite, finite.size // 32 * 22)),
            ("Q4_K ref", gw.encode_tensor(finite, "Q4_K"),
             ggml("quantize_row_q4_K_ref", finite, finite.size // 256 * 144)),
            ("Q8_0 chunk", gw.encode_tensor(finite, "Q8_0"), chunk("Q8_0", finite, 256)),
            ("Q4_K chunk", gw.encode_tensor(finite, "Q4_K"), chunk("Q4_K", finite, 256)),
        ]
        for what, ours, theirs in pairs:
            checks += 1
            if ours != theirs:
                failures += 1
                diff = next(i for i in range(len(ours)) if ours[i] != theirs[i])
                print(f"FAIL {label:20s} {what}: first differing byte {diff} of {len(ours)}")
            else:
                print(f"ok   {label:20s} {what}: {len(ours)} bytes identical")
    print(f"{checks - failures} of {checks} identical")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
