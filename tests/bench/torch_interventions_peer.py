"""torch peer of bench_interventions: the same three sweeps on the same SmolLM2-135M-shaped checkpoint (the BF16
model.safetensors that `bench_decoder --prepare` writes, read with tools/safetensors_io.py and widened to float32
exactly as the engine widens it, into tools/parity/decoder_torch.py's module), written the TransformerLens way: one
full forward per cell under torch.no_grad, the intervention made by torch module hooks.

  ablation  for each head (l, h): a forward pre-hook on layer l's o_proj (the output projection's input is z, the
            heads' outputs side by side) sets head h's columns to 0; the metric of that forward
  heads     the corrupted input; the same hook puts the clean run's z of head h (cached by the same hooks in one
            clean forward) in place; the normalised recovery
  resid     the corrupted input; a forward pre-hook on layer l replaces position p of the residual stream entering
            it with the clean run's; the normalised recovery

The input, the corruption and the metric are bench_interventions.cpp's: token i = (7919 i + 13) mod vocab, 32
tokens, positions 3 and 17 changed to (id + 4242) mod vocab, the logit difference of tokens 1000 and 2000 at the
last position; recovery = (metric - corrupted) / (clean - corrupted). Each forward computes the last position's
logits only (TransformerLens computes every position's: this peer is the faster of the two).

  python3 -m tests.bench.torch_interventions_peer --checkpoint DIR [--threads 2] [--repetitions 3] [--cells N]
      [--values FILE]

--cells N (SMOKE RUNS ONLY) stops each sweep after its first N cells. --values FILE writes the metrics and the first
repetition's values of each sweep as bench_interventions --values does (the runner compares the two). JSON on
stdout. Refuses (exit 3) to time torch over the reference BLAS (see torch_mha_peer.check_torch_blas).
"""

import argparse
import json
import os
import statistics
import sys
import time

TOKENS, ANSWER, WRONG, CORRUPTED = 32, 1000, 2000, (3, 17)


def clean_ids(n, vocab):
    return [(7919 * i + 13) % vocab for i in range(n)]


def corrupted_ids(ids, vocab):
    ids = list(ids)
    for p in CORRUPTED:
        ids[p] = (ids[p] + 4242) % vocab
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="the SmolLM2 folder bench_decoder --prepare wrote")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--cells", type=int, default=0, help="smoke runs only: the first N cells of each sweep")
    ap.add_argument("--values", help="write the metrics and each sweep's values here (as bench_interventions does)")
    args = ap.parse_args()

    import torch
    from tests.bench.torch_mha_peer import check_torch_blas, openblas_info
    from tests.bench.torch_decoder_peer import forward_last, stored_dtypes
    from tools.parity import decoder_torch as dt
    from tools.safetensors_io import read_safetensors

    blas, status = check_torch_blas(torch, args.threads, "torch_interventions_peer")
    if status:
        return status
    weights = os.path.join(args.checkpoint, "model.safetensors")
    if not os.path.exists(weights):
        print(f"torch_interventions_peer: {weights} not found; write it with bench_decoder --prepare", file=sys.stderr)
        return 2
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        config = json.load(f)
    model = dt.build(config).eval()
    if stored_dtypes(weights) != ["BF16"]:
        print(f"torch_interventions_peer: {weights} is not bench_decoder's BF16 checkpoint", file=sys.stderr)
        return 2
    tensors, _ = read_safetensors(weights)  # BF16 widened to float32 exactly
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    del tensors
    c = model.cfg
    layers, heads, hd = c.layers, c.heads, c.head_dim
    blocks = model.model.layers
    clean = torch.tensor(clean_ids(TOKENS, c.vocab_size))
    corrupt = torch.tensor(corrupted_ids(clean_ids(TOKENS, c.vocab_size), c.vocab_size))

    def metric(ids):
        logits = forward_last(torch, model, ids)[0][0]
        return float(logits[ANSWER] - logits[WRONG])

    def hooked(ids, module, hook):
        handle = module.register_forward_pre_hook(hook)
        try:
            return metric(ids)
        finally:
            handle.remove()

    with torch.no_grad():
        # The clean run's cache: the residual stream entering each layer and each layer's z.
        cache_resid, cache_z, handles = [None] * layers, [None] * layers, []
        for l in range(layers):
            def keep_resid(mod, a, l=l):
                cache_resid[l] = a[0].clone()

            def keep_z(mod, a, l=l):
                cache_z[l] = a[0].clone()
            handles.append(blocks[l].register_forward_pre_hook(keep_resid))
            handles.append(blocks[l].self_attn.o_proj.register_forward_pre_hook(keep_z))
        t0 = time.perf_counter()
        clean_metric = metric(clean)
        for h in handles:
            h.remove()
        corrupt_metric = metric(corrupt)
        setup_ms = (time.perf_counter() - t0) * 1e3

        def recovery(m):
            return (m - corrupt_metric) / (clean_metric - corrupt_metric)

        def cells(shape):
            out = [(l, i) for l in range(layers) for i in range(shape)]
            return out[: args.cells] if args.cells > 0 else out

        def ablation():
            values = []
            for l, h in cells(heads):
                def zero(mod, a, h=h):
                    a[0][:, h * hd:(h + 1) * hd] = 0  # z is a fresh tensor (the reshape of a transpose)
                values.append(hooked(clean, blocks[l].self_attn.o_proj, zero))
            return values

        def heads_sweep():
            values = []
            for l, h in cells(heads):
                def patch(mod, a, l=l, h=h):
                    a[0][:, h * hd:(h + 1) * hd] = cache_z[l][:, h * hd:(h + 1) * hd]
                values.append(recovery(hooked(corrupt, blocks[l].self_attn.o_proj, patch)))
            return values

        def resid_sweep():
            values = []
            for l, p in cells(TOKENS):
                def patch(mod, a, l=l, p=p):
                    x = a[0].clone()
                    x[p] = cache_resid[l][p]
                    return (x,) + tuple(a[1:])
                values.append(recovery(hooked(corrupt, blocks[l], patch)))
            return values

        results, first = {}, {}
        for name, fn in (("ablation", ablation), ("heads", heads_sweep), ("resid", resid_sweep)):
            times = []
            for r in range(args.repetitions):
                t = time.perf_counter()
                values = fn()
                times.append((time.perf_counter() - t) * 1e3)
                if r == 0:
                    first[name] = values
            results[name] = {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
                             "cells": len(first[name])}

    if args.values:
        with open(args.values, "w") as f:
            json.dump(dict(clean_metric=clean_metric, corrupt_metric=corrupt_metric, **first), f)
    print(json.dumps({
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "blas_loaded": blas,
        "blas_info": {p: openblas_info(p) for p in blas},
        "smoke_cells": args.cells,
        "setup_ms": setup_ms,
        "clean_metric": clean_metric,
        "corrupt_metric": corrupt_metric,
        "results": results,
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
