#!/usr/bin/python3
"""torch peer of bench_decoder: the same SmolLM2-135M-shaped checkpoint (the BF16 model.safetensors that
`bench_decoder --prepare` writes, read with tools/safetensors_io.py and widened to float32 exactly as the
engine widens it) in tools/parity/decoder_torch.py's DecoderForCausalLM (Hugging Face's modules and names,
eager attention as transformers computes it), every layer's attention kept, and prints JSON.

    /usr/bin/python3 -m tests.bench.torch_decoder_peer --checkpoint DIR [--threads 2]
                                                      [--cases forward:512,forward:2048,generate:256]
                                                      [--repetitions 5] [--min-time 0.5]

(from the repository root: it imports the tools package, `from tools.parity import decoder_torch`).

Method (mirrors Google Benchmark's in bench_decoder): eval mode under torch.no_grad(), float32, one sequence,
token i = (7919 i + 13) mod vocab as in bench_decoder.
  forward:N   the embedding, every layer (DecoderLayer.forward: its attentions kept) and the final norm and
              output embedding of the last position only (DecoderForCausalLM.unembed), which is what the
              engine's run_ids computes by default. DecoderForCausalLM.forward would also multiply every other
              position by the vocab x d output matrix (2 N d V FLOPs more: 116 GFLOP at 2,048 tokens), work the
              engine does not do.
  long:N      issue 21's peer: the same forward keeping no attention map (long_forward: the attention as
              softmax(Q K^T / sqrt(d)) V per layer over blocks of 1,024 query rows in one reused buffer, the
              weights discarded), the last position's logits; checked against forward:N's logits at small N
  generate:K  DecoderForCausalLM.generate_greedy on a 16-token prompt: K greedy tokens with past key/values,
              every step's attentions kept, no stop at EOS (as bench_decoder: stop_at_eos = false);
              tokens/s = K / the whole call, prompt included. The chosen ids are in the JSON, for
              run_decoder_vs_torch.sh to compare with the engine's.
long:N is timed once per sample, with no warm-up. The others: warm-up for min-time; then `repetitions` samples, each the mean over enough back-to-back calls to last
min-time; the median sample is reported. FLOPs are counted as in bench_decoder.cpp.
Refuses (exit 3) to time torch over the reference BLAS (see torch_mha_peer.check_torch_blas).
"""

import argparse
import json
import os
import statistics
import struct
import sys
import time

PROMPT = 16


def ids_of(n, vocab):
    return [(7919 * i + 13) % vocab for i in range(n)]


def forward_flops(c, n):
    d, q = float(c.hidden_size), float(c.heads * c.head_dim)
    kv, f = float(c.kv_heads * c.head_dim), float(c.intermediate_size)
    layer = 2.0 * n * d * (q + 2.0 * kv) + 2.0 * n * q * d + 2.0 * n * 3.0 * d * f + 4.0 * n * n * q
    return c.layers * layer + 2.0 * d * c.vocab_size


def stored_dtypes(path):
    """The dtypes a safetensors file's header names (its tensors as stored, before any widening)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return sorted({info["dtype"] for info in header.values()})


def forward_last(torch, model, ids):
    """DecoderForCausalLM.forward with the logits of the last position only: (logits [1, vocab], attentions)."""
    positions = torch.arange(ids.shape[0])
    x = model.model.embed_tokens(ids)
    if model.cfg.gemma:
        x = x * torch.tensor(model.cfg.hidden_size ** 0.5, dtype=x.dtype)
    attentions = []
    for layer in model.model.layers:
        x, probs, _ = layer(x, positions, None)
        attentions.append(probs)
    return model.unembed(x[-1:]), attentions


def long_forward(torch, model, ids, block=1024):
    """The forward of issue 21's peer (long inputs): every layer as DecoderLayer.forward computes it, but the
    attention as softmax(Q K^T * scaling, causal mask) V per layer in float32 over blocks of `block` query rows
    (Debian's torch 1.13 has no scaled_dot_product_attention), the weights discarded; then the last position's
    logits. The block's scores live in one buffer reused by every block and layer, the softmax done in place in it
    (bmm(out=), masked_fill_, sub_, exp_, div_): a fresh tensor per block is a fresh mmap of hundreds of MB, whose
    page faults alone made the first version 13x slower here. Returns the logits [1, vocab]. The Llama layout only
    (bench_decoder's SmolLM2 shape)."""
    from tools.parity import decoder_torch as dt
    c = model.cfg
    assert not (c.fused or c.gemma or c.qk_norm or c.attn_softcap), "long_forward: the Llama layout only"
    n, h, kv, hd = ids.shape[0], c.heads, c.kv_heads, c.head_dim
    positions = torch.arange(n)
    x = model.model.embed_tokens(ids)
    group = h // kv
    inv, factor = dt.rope_inv_freq(c, n)
    scores_buffer = torch.empty(h * min(block, n) * n)
    out = torch.empty(h, n, hd)
    j = torch.arange(n)[None, :]
    for layer in model.model.layers:
        a = layer.self_attn
        xn = layer.input_layernorm(x)
        q = a.q_proj(xn).view(n, h, hd).transpose(0, 1)
        k = a.k_proj(xn).view(n, kv, hd).transpose(0, 1)
        v = a.v_proj(xn).view(n, kv, hd).transpose(0, 1)
        q, k = dt.apply_rope(q, positions, inv, factor), dt.apply_rope(k, positions, inv, factor)
        kt = k.repeat_interleave(group, dim=0).transpose(1, 2).contiguous()
        vv = v.repeat_interleave(group, dim=0).contiguous()
        q = (q * c.scaling).contiguous()
        for r0 in range(0, n, block):
            r1 = min(n, r0 + block)
            scores = scores_buffer[: h * (r1 - r0) * n].view(h, r1 - r0, n)
            torch.bmm(q[:, r0:r1], kt, out=scores)
            scores.masked_fill_((j > positions[r0:r1, None])[None], float("-inf"))
            scores.sub_(scores.amax(dim=-1, keepdim=True)).exp_()
            scores.div_(scores.sum(dim=-1, keepdim=True))
            torch.bmm(scores, vv, out=out[:, r0:r1])
        x = x + a.o_proj(out.transpose(0, 1).reshape(n, h * hd))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.unembed(x[-1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="the SmolLM2 folder bench_decoder --prepare printed")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cases", default="forward:512,forward:2048,generate:256")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.5, help="seconds per sample (and of warm-up)")
    args = ap.parse_args()
    cases = [(c.split(":")[0], int(c.split(":")[1])) for c in args.cases.split(",") if c]

    import torch
    from tests.bench.torch_mha_peer import check_torch_blas, openblas_info, time_calls
    from tools.parity import decoder_torch as dt
    from tools.safetensors_io import read_safetensors

    blas, status = check_torch_blas(torch, args.threads, "torch_decoder_peer")
    if status:
        return status
    weights = os.path.join(args.checkpoint, "model.safetensors")
    if not os.path.exists(weights):
        print(f"torch_decoder_peer: {weights} not found; write it with bench_decoder --prepare", file=sys.stderr)
        return 2
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        config = json.load(f)
    model = dt.build(config).eval()
    stored = stored_dtypes(weights)
    if stored != ["BF16"]:
        print(f"torch_decoder_peer: {weights} holds {stored}, not BF16 only: not bench_decoder's checkpoint",
              file=sys.stderr)
        return 2
    tensors, _ = read_safetensors(weights)  # BF16 widened to float32 exactly
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    del tensors
    c = model.cfg
    results = []
    with torch.no_grad():
        for kind, n in cases:
            if kind == "forward":
                ids = torch.tensor(ids_of(n, c.vocab_size))

                def call():
                    return forward_last(torch, model, ids)

                logits, att = call()
                assert len(att) == c.layers and tuple(att[0].shape) == (c.heads, n, n), [a.shape for a in att]
                assert torch.allclose(att[-1].sum(-1), torch.ones(()), atol=1e-3)
                assert float(att[0][:, 0, 1:].abs().max()) == 0.0, "weight on future tokens"
                assert tuple(logits.shape) == (1, c.vocab_size)
                del logits, att  # 4.5 GB of maps at 2,048 tokens: not kept while timing
            elif kind == "long":
                ids = torch.tensor(ids_of(n, c.vocab_size))

                def call():
                    return long_forward(torch, model, ids)

                if n <= 512:  # the blocked forward against the model's own (small n only: its maps are n^2)
                    want, _ = forward_last(torch, model, ids)
                    assert torch.allclose(call(), want, atol=1e-4, rtol=1e-4)
            elif kind == "generate":
                prompt = torch.tensor(ids_of(PROMPT, c.vocab_size))

                def call():
                    return model.generate_greedy(prompt, n)

                chosen, step_maps = call()
                assert len(chosen) == n and len(step_maps) == n, (len(chosen), len(step_maps))
                assert tuple(step_maps[-1][0].shape) == (c.heads, 1, PROMPT + n), step_maps[-1][0].shape
                del step_maps
            else:
                raise SystemExit(f"unknown case {kind}")
            samples, calls = [], []
            if kind == "long":
                # Seconds to minutes a call: no warm-up, one call per sample (as bench_decoder's one iteration).
                for _ in range(args.repetitions):
                    start = time.perf_counter()
                    call()
                    samples.append(time.perf_counter() - start)
                    calls.append(1)
            else:
                warm = time_calls(call, args.min_time)
                del warm
                for _ in range(args.repetitions):
                    t, k = time_calls(call, args.min_time)
                    samples.append(t)
                    calls.append(k)
            median = statistics.median(samples)
            row = {"case": kind, "n": n, "samples_ms": [round(s * 1e3, 3) for s in samples],
                   "calls_per_sample": calls, "median_ms": median * 1e3}
            if kind in ("forward", "long"):
                row.update(flop=forward_flops(c, n), gflops=forward_flops(c, n) / median * 1e-9)
            else:
                row.update(prompt=PROMPT, tokens_per_s=n / median, ids=chosen)
            results.append(row)

    print(json.dumps({
        "peer": "decoder_torch DecoderForCausalLM (Hugging Face modules, eager attention)",
        "checkpoint": os.path.abspath(args.checkpoint),
        "config": {"layers": c.layers, "hidden": c.hidden_size, "heads": c.heads, "kv_heads": c.kv_heads,
                   "head_dim": c.head_dim, "ffn": c.intermediate_size, "vocab": c.vocab_size, "tied": c.tie,
                   "weights_stored": stored, "attentions": True, "mode": "eval + no_grad", "dtype": "float32"},
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
