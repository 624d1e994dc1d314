#!/usr/bin/env python3
"""Quantise a GGUF file with llama.cpp's own quantiser (tools only): the bytes are llama.cpp's, not ours.

    /usr/bin/python3 -m tools.gguf.llama_quantize IN.gguf OUT.gguf TYPE [--bin GGML_BIN_DIR]

TYPE is one of F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K. This calls
llama_model_quantize(fname_inp, fname_out, &params) (include/llama.h) from libllama of node-llama-cpp's prebuilt
llama.cpp, with llama_model_quantize_default_params() changed in three fields: ftype (the K-quants' small "_S"
mixture, LLAMA_FTYPES in gguf_writer), pure = true (every 2-D weight in that one type, as `llama-quantize --pure`,
instead of the mixture's per-tensor choices; rows the type cannot hold still take tensor_type_fallback's type)
and nthread = 1. No importance matrix: the quantisers' reference paths (quantize_row_*_ref), as for a file
quantised without --imatrix.
"""
import argparse
import ctypes
import os

from tools.gguf import gguf_writer as gw

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.path.join(HERE, "..", "golden", "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")


class QuantizeParams(ctypes.Structure):
    """struct llama_model_quantize_params of include/llama.h, field for field."""
    _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int32), ("output_tensor_type", ctypes.c_int32),
                ("token_embedding_type", ctypes.c_int32), ("allow_requantize", ctypes.c_bool),
                ("quantize_output_tensor", ctypes.c_bool), ("only_copy", ctypes.c_bool), ("pure", ctypes.c_bool),
                ("keep_split", ctypes.c_bool), ("dry_run", ctypes.c_bool), ("imatrix", ctypes.c_void_p),
                ("kv_overrides", ctypes.c_void_p), ("tt_overrides", ctypes.c_void_p),
                ("prune_layers", ctypes.c_void_p), ("max_buf_size", ctypes.c_size_t)]


def quantize(src, dst, type_name, bindir=DEFAULT_BIN):
    lib = ctypes.CDLL(os.path.join(bindir, "libllama.v0.5.0.so"))
    lib.llama_model_quantize_default_params.restype = QuantizeParams
    lib.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(QuantizeParams)]
    lib.llama_model_quantize.restype = ctypes.c_uint32
    lib.llama_backend_init()
    params = lib.llama_model_quantize_default_params()
    params.ftype = gw.LLAMA_FTYPES[type_name]
    params.pure = True
    params.nthread = 1
    status = lib.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(params))
    if status != 0:
        raise RuntimeError(f"llama_model_quantize({src}, {dst}, {type_name}) returned {status}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("type", choices=["F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K",
                                     "Q5_K", "Q6_K"])
    ap.add_argument("--bin", default=DEFAULT_BIN)
    args = ap.parse_args()
    quantize(args.src, args.dst, args.type, args.bin)


if __name__ == "__main__":
    main()
