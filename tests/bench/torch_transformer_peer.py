#!/usr/bin/python3
"""torch peer of bench_transformer: the same BERT-base and GPT-2-small shapes (12 layers, d 768, 12 heads,
FFN 3072) built from tools/parity/transformer_torch.py (Hugging Face's modules and names, eager attention
as transformers computes it), every layer's attention returned (output_attentions=True), and prints JSON.

    /usr/bin/python3 -m tests.bench.torch_transformer_peer [--threads 2] [--cases bert:128,bert:512,gpt2:128,gpt2:1024]
                                                          [--repetitions 5] [--min-time 0.5]

(from the repository root: it imports the tools package, `from tools.parity import transformer_torch`).

Method (mirrors Google Benchmark's in bench_transformer): BertModel / GPT2Model without a prediction head
(the engine's benchmark models have none), eval mode under torch.no_grad(), float32, batch 1, random ids.
Warm-up for min-time; then `repetitions` samples, each the mean over enough back-to-back calls to last
min-time; the median sample is reported. FLOPs are counted as in bench_transformer.cpp.
Refuses (exit 3) to time torch over the reference BLAS (see torch_mha_peer.check_torch_blas).
"""

import argparse
import json
import os
import statistics
import sys

LAYERS, HIDDEN, HEADS, FFN = 12, 768, 12, 3072


def model_flops(n):
    d, f = float(HIDDEN), float(FFN)
    return LAYERS * (2.0 * n * (4.0 * d * d + 2.0 * d * f) + 4.0 * n * n * d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cases", default="bert:128,bert:512,gpt2:128,gpt2:1024")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.5, help="seconds per sample (and of warm-up)")
    args = ap.parse_args()
    cases = [(c.split(":")[0], int(c.split(":")[1])) for c in args.cases.split(",") if c]

    import torch
    from tests.bench.torch_mha_peer import check_torch_blas, openblas_info, time_calls
    from tools.parity import transformer_torch as tt

    blas, status = check_torch_blas(torch, args.threads, "torch_transformer_peer")
    if status:
        return status
    torch.manual_seed(0)
    models = {}
    results = []
    with torch.no_grad():
        for family, n in cases:
            if family not in models:
                if family == "bert":
                    c = tt.Config(tt.config("bert", vocab=30522, positions=512))
                    models[family] = (tt.BertModel(c, add_pooling_layer=False).eval(), 30522)
                elif family == "gpt2":
                    c = tt.Config(tt.config("gpt2", vocab=50257, positions=1024))
                    models[family] = (tt.GPT2Model(c).eval(), 50257)
                else:
                    raise SystemExit(f"unknown family {family}")
            model, vocab = models[family]
            ids = torch.randint(0, vocab, (1, n))

            def call():
                return model(ids, output_attentions=True)

            out = call()
            att = out["attentions"]
            assert len(att) == LAYERS and tuple(att[0].shape) == (1, HEADS, n, n), [a.shape for a in att]
            assert torch.allclose(att[-1].sum(-1), torch.ones(()), atol=1e-3)
            warm = time_calls(call, args.min_time)
            del warm
            samples, calls = [], []
            for _ in range(args.repetitions):
                t, k = time_calls(call, args.min_time)
                samples.append(t)
                calls.append(k)
            median = statistics.median(samples)
            results.append({"family": family, "L": n, "samples_ms": [round(s * 1e3, 3) for s in samples],
                            "calls_per_sample": calls, "median_ms": median * 1e3, "flop": model_flops(n),
                            "gflops": model_flops(n) / median * 1e-9})

    print(json.dumps({
        "peer": "transformer_torch BertModel / GPT2Model (Hugging Face modules, eager attention)",
        "config": {"layers": LAYERS, "hidden": HIDDEN, "heads": HEADS, "ffn": FFN, "output_attentions": True,
                   "mode": "eval + no_grad", "dtype": "float32"},
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "blas_loaded": blas,
        "blas_info": {p: openblas_info(p) for p in blas},
        "results": results,
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
