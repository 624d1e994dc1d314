#!/usr/bin/python3
"""torch peer of bench_mha: times torch.nn.MultiheadAttention self-attention with every head's weights
kept (need_weights=True, average_attn_weights=False), d_model 768, 12 heads, and prints JSON.

    /usr/bin/python3 tests/bench/torch_mha_peer.py [--threads 2] [--lengths 32,128,512,2048]
                                                   [--repetitions 5] [--min-time 0.3]

Method (mirrors Google Benchmark's in bench_mha): module in eval mode under torch.no_grad(), input
(1, L, 768) float32 with batch_first=True and query is key is value, so torch takes its fused fast
path (torch._native_multi_head_attention), the fastest it offers; "torch_path" in the output says which
path one checked call went through. Warm-up for min-time; then
`repetitions` samples, each the mean over enough back-to-back calls to last min-time; the median sample
is reported. FLOPs are counted as in bench_mha.cpp: 4 projections 2 L E^2 each, Q K^T and weights V
2 L^2 E each.

It reports which BLAS torch actually loaded (from /proc/self/maps) and refuses (exit 3) when that is the
reference BLAS (/usr/lib/x86_64-linux-gnu/blas/) or cannot be identified: ratios against the unoptimised
reference implementation mean nothing. Select OpenBLAS with
    update-alternatives --config libblas.so.3-x86_64-linux-gnu
"""

import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time

E = 768
HEADS = 12
REFERENCE_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/blas/"


def mha_flops(L):
    return 4.0 * 2.0 * L * E * E + 2.0 * 2.0 * L * L * E


def loaded_blas():
    """Distinct BLAS-like shared objects mapped into this process."""
    libs = []
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) < 6:
                continue
            path = parts[5].strip()
            base = os.path.basename(path)
            if base.startswith(("libblas", "libopenblas", "libmkl", "libblis", "libcblas")) and path not in libs:
                libs.append(path)
    return libs


def openblas_info(path):
    """Asks a loaded OpenBLAS what it is (config string, core, threads); None for other libraries."""
    try:
        lib = ctypes.CDLL(path)  # already mapped: dlopen returns the same handle
    except OSError:
        return None
    info = {}
    for name, restype in (("openblas_get_config", ctypes.c_char_p), ("openblas_get_corename", ctypes.c_char_p),
                          ("openblas_get_num_threads", ctypes.c_int), ("openblas_get_parallel", ctypes.c_int)):
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        fn.restype = restype
        fn.argtypes = []
        v = fn()
        info[name.replace("openblas_get_", "")] = v.decode() if isinstance(v, bytes) else v
    return info or None


def check_torch_blas(torch, threads, program):
    """Sets torch's threads and checks what it runs on, as every torch peer must before it times anything.

    Returns (loaded BLAS paths, 0), or (paths, exit status) after printing why ratios against this torch
    would mean nothing: an unknown BLAS (3), Debian's reference BLAS (3), or another thread count (2)."""
    torch.set_num_threads(threads)
    # Touch BLAS once so that a lazily loaded library is mapped before we look.
    torch.ones(64, 64) @ torch.ones(64, 64)
    blas = loaded_blas()
    if not blas:
        print(f"{program}: cannot tell which BLAS torch loaded (no libblas/libopenblas/libmkl in "
              "/proc/self/maps); refusing to report ratios against an unknown BLAS", file=sys.stderr)
        return blas, 3
    reference = [p for p in blas if os.path.realpath(p).startswith(REFERENCE_BLAS_DIR) or
                 p.startswith(REFERENCE_BLAS_DIR)]
    if reference:
        print(f"{program}: torch loaded the reference BLAS ({', '.join(reference)}); timings against it "
              "mean nothing. Select OpenBLAS: update-alternatives --config libblas.so.3-x86_64-linux-gnu",
              file=sys.stderr)
        return blas, 3
    if torch.get_num_threads() != threads:
        print(f"{program}: torch.get_num_threads() = {torch.get_num_threads()}, asked for {threads}",
              file=sys.stderr)
        return blas, 2
    return blas, 0


def time_calls(fn, min_time):
    """Mean seconds per call over enough calls to last min_time."""
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    calls = max(1, math.ceil(min_time / max(once, 1e-9)))
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lengths", default="32,128,512,2048")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds per sample (and of warm-up)")
    args = ap.parse_args()
    lengths = [int(s) for s in args.lengths.split(",") if s]

    import torch  # after argument parsing: --help works without torch

    blas, status = check_torch_blas(torch, args.threads, "torch_mha_peer")
    if status:
        return status
    blas_info = {p: openblas_info(p) for p in blas}

    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(E, HEADS, batch_first=True).eval()
    results = []
    with torch.no_grad():
        for L in lengths:
            x = torch.randn(1, L, E)

            def call():
                return mha(x, x, x, need_weights=True, average_attn_weights=False)

            # Which torch path is being timed: count calls into the fused kernel during one call.
            native = getattr(torch, "_native_multi_head_attention", None)
            fused_calls = [0]
            if native is not None:
                def counting(*a, **k):
                    fused_calls[0] += 1
                    return native(*a, **k)
                torch._native_multi_head_attention = counting
            try:
                out, weights = call()
            finally:
                if native is not None:
                    torch._native_multi_head_attention = native
            # The same checks as bench_mha: per-head weights kept, rows sum to 1, finite output.
            assert weights.shape == (1, HEADS, L, L), weights.shape
            assert out.shape == (1, L, E) and torch.isfinite(out).all()
            assert torch.allclose(weights.sum(-1), torch.ones(()), atol=1e-3)

            warm_end = time.perf_counter() + args.min_time
            while time.perf_counter() < warm_end:
                call()
            samples, calls = [], []
            for _ in range(args.repetitions):
                t, c = time_calls(call, args.min_time)
                samples.append(t)
                calls.append(c)
            median = statistics.median(samples)
            results.append({
                "L": L,
                "torch_path": "fused _native_multi_head_attention" if fused_calls[0] else "python multi_head_attention_forward",
                "samples_ms": [round(s * 1e3, 4) for s in samples],
                "calls_per_sample": calls,
                "median_ms": median * 1e3,
                "flop": mha_flops(L),
                "gflops": mha_flops(L) / median * 1e-9,
            })

    report = {
        "peer": "torch.nn.MultiheadAttention",
        "config": {"d_model": E, "heads": HEADS, "batch_first": True, "need_weights": True,
                   "average_attn_weights": False, "mode": "eval + no_grad", "dtype": "float32"},
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "blas_loaded": blas,
        "blas_info": blas_info,
        "repetitions": args.repetitions,
        "min_time_s": args.min_time,
        "results": results,
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
