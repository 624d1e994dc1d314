#!/usr/bin/env python3
"""llama.cpp's CPU products of activations with stored weight rows, for tests/unit/test_ggml_types.cpp's checks of
io::ggml_round_activations and of the decoder's products with GGUF weights (tools only: the test needs neither
Python nor ggml).

    /usr/bin/python3 -m tools.golden.ggml_vec_dot [--dir .../bins/linux-x64] [--cpu zen4] [--out tests/data/gguf_blocks]

The libraries are llama.cpp's CPU build as node-llama-cpp ships it (@node-llama-cpp/linux-x64, bins/linux-x64):
libggml-base.so and the CPU variant llama.cpp picks on this machine (its goldens' producer line says AVX512, VNNI
and BF16: libggml-cpu-zen4.so), called through ctypes: ggml_get_type_traits_cpu(type) gives the variant's
from_float (the activations' quantiser, x86 code) and vec_dot. Written beside ggml_blocks.py's files:
  activations.f32     ROWS rows of ROW float32 activations (fixed seed): ordinary, outliers, a zero row, a negative
                      row, an offset row, tiny and large values;
  <VT>.act.bin        those rows as from_float writes them for each vec_dot type VT (F16, BF16, Q8_0, Q8_1, Q8_K);
  <TYPE>.dot.f32      for each weight type, vec_dot(ROW, weight row r, activation row a) for every a (outer) and r
                      (inner), the weight rows being <TYPE>.bin's (ggml_blocks.py);
and VECDOT, one line "vecdot TYPE VT WEIGHT_ROWS" per weight type (Q8_K, which has no vec_dot, is not one).
"""
import argparse
import ctypes as C
import pathlib

import numpy as np

from tools.golden.ggml_blocks import ROW, TYPES, inputs

DEFAULT_DIR = "/tmp/nlc/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"


class TypeTraitsCpu(C.Structure):
    # struct ggml_type_traits_cpu (ggml-cpu.h)
    _fields_ = [("from_float", C.c_void_p), ("vec_dot", C.c_void_p), ("vec_dot_type", C.c_int),
                ("nrows", C.c_int64)]


class TypeTraits(C.Structure):
    # struct ggml_type_traits (ggml.h)
    _fields_ = [("type_name", C.c_char_p), ("blck_size", C.c_int64), ("blck_size_interleave", C.c_int64),
                ("type_size", C.c_size_t), ("is_quantized", C.c_bool), ("to_float", C.c_void_p),
                ("from_float_ref", C.c_void_p)]


FROM_FLOAT = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_int64)
VEC_DOT = C.CFUNCTYPE(None, C.c_int, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t,
                      C.c_int)
NAMES = {1: "F16", 8: "Q8_0", 9: "Q8_1", 15: "Q8_K", 30: "BF16"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=DEFAULT_DIR)
    ap.add_argument("--cpu", default="zen4")
    ap.add_argument("--out", default="tests/data/gguf_blocks")
    args = ap.parse_args()
    base = C.CDLL(str(pathlib.Path(args.dir) / "libggml-base.so"), mode=C.RTLD_GLOBAL)
    base.ggml_get_type_traits.restype = C.POINTER(TypeTraits)
    base.ggml_get_type_traits.argtypes = [C.c_int]
    cpu = C.CDLL(str(pathlib.Path(args.dir) / f"libggml-cpu-{args.cpu}.so"), mode=C.RTLD_GLOBAL)
    cpu.ggml_get_type_traits_cpu.restype = C.POINTER(TypeTraitsCpu)
    cpu.ggml_get_type_traits_cpu.argtypes = [C.c_int]
    cpu.ggml_cpu_init()
    out = pathlib.Path(args.out)
    x = inputs(np.random.default_rng(2026))
    (out / "activations.f32").write_bytes(x.astype("<f4").tobytes())
    lines = [f"# tests/data/gguf_blocks, written by: /usr/bin/python3 -m tools.golden.ggml_vec_dot --cpu {args.cpu}",
             "# vecdot TYPE VEC_DOT_TYPE WEIGHT_ROWS (TYPE.dot.f32: [activation row][weight row])"]
    written = set()
    for name, number in TYPES.items():
        traits = cpu.ggml_get_type_traits_cpu(number).contents
        if not traits.vec_dot:
            continue  # Q8_K: an activation type only, never a matrix's
        vt = traits.vec_dot_type
        vt_traits = base.ggml_get_type_traits(vt).contents
        act_row_bytes = ROW // vt_traits.blck_size * vt_traits.type_size
        acts = np.zeros(x.shape[0] * act_row_bytes, np.uint8)
        quantise = FROM_FLOAT(cpu.ggml_get_type_traits_cpu(vt).contents.from_float)
        for a in range(x.shape[0]):
            quantise(x[a].ctypes.data_as(C.c_void_p), C.c_void_p(acts.ctypes.data + a * act_row_bytes), ROW)
        if vt not in written:
            (out / f"{NAMES[vt]}.act.bin").write_bytes(acts.tobytes())
            written.add(vt)
        w = np.frombuffer((out / f"{name}.bin").read_bytes(), np.uint8)
        t = base.ggml_get_type_traits(number).contents
        w_row_bytes = ROW // t.blck_size * t.type_size
        rows = w.size // w_row_bytes
        dot = VEC_DOT(traits.vec_dot)
        result = np.zeros((x.shape[0], rows), np.float32)
        s = C.c_float()
        for a in range(x.shape[0]):
            for r in range(rows):
                dot(ROW, C.byref(s), 0, C.c_void_p(w.ctypes.data + r * w_row_bytes), 0,
                    C.c_void_p(acts.ctypes.data + a * act_row_bytes), 0, 1)
                result[a, r] = s.value
        (out / f"{name}.dot.f32").write_bytes(result.astype("<f4").tobytes())
        lines.append(f"vecdot {name} {NAMES[vt]} {rows}")
    (out / "VECDOT").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
