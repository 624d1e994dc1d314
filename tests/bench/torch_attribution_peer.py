"""torch peer of bench_attribution: torch autograd doing the same attribution on the same checkpoints (float32).

  gpt2-small    tools/parity/transformer_torch.py's GPT2LMHeadModel over $ATTN_BENCH_DIR/gpt2-small (bench_models.h's
                make_gpt2), logits of the last position only
  smollm2-135m  tools/parity/decoder_torch.py over the BF16 checkpoint `bench_decoder --prepare` writes, widened to
                float32 exactly as the engine widens it, logits of the last position only

Input: token i = (7919 i + 13) mod vocab, --tokens of them (512); F = the logit of token 1000 at the last position.
  forward       the forward under torch.no_grad (for scale)
  grad_x_input  a forward whose embedding output (resid_pre of layer 0, a leaf with requires_grad) is the only input
                needing a gradient (the weights do not), F.backward(), then (x0 * grad).sum(-1)
  attnlrp       the same with AttnLRP's rules patched in (tools/parity/make_attribution_fixtures.py's attnlrp(): LXT's
                efficient rules, the engine's parity reference)
Each: a warm-up call, then --repetitions samples of at least --min-time seconds; medians in ms.

  python3 -m tests.bench.torch_attribution_peer [--threads 2] [--tokens 512] [--repetitions 3] [--min-time 1]
      [--gpt2 DIR] [--smol DIR] [--values FILE]

--values FILE writes each model's F and gradient x input scores (the runner compares them with the engine's). JSON
on stdout. Refuses (exit 3) to time torch over the reference BLAS (torch_mha_peer.check_torch_blas).
"""

import argparse
import json
import os
import statistics
import sys

TARGET = 1000


def ids_of(n, vocab):
    return [(7919 * i + 13) % vocab for i in range(n)]


class Loaded:
    """A reference module as make_attribution_fixtures.attnlrp() expects it (.module), with its grad-x-input step."""

    def __init__(self, module, step):
        self.module, self.step = module, step


def load_gpt2(torch, folder, n):
    from tools.parity import transformer_torch as tt
    from tools.safetensors_io import read_safetensors
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    full = tt.config("gpt2", vocab=config["vocab_size"], positions=config["n_positions"])  # the defaults config omits
    full.update(config)
    module = tt.GPT2LMHeadModel(tt.Config(full)).eval()
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    state = {k if k.startswith(("transformer.", "lm_head.")) else "transformer." + k: torch.from_numpy(v)
             for k, v in tensors.items()}
    missing, unexpected = module.load_state_dict(state, strict=False)
    assert not unexpected and all(k == "lm_head.weight" or k.endswith((".attn.bias", ".attn.masked_bias"))
                                  for k in missing), missing
    ids = torch.tensor([ids_of(n, config["vocab_size"])])

    def step(grad):
        store = {}

        def hook(site, layer, t):
            if site == "resid_pre" and layer == 0 and grad:
                x = t.detach().requires_grad_(True)
                store["x"] = x
                return x
            return None

        out = module(ids, output_attentions=False, last_only=True, hook=hook)
        f = out["logits"][0, -1, TARGET]
        if not grad:
            return float(f), None
        f.backward()
        return float(f), (store["x"] * store["x"].grad).sum(-1)

    return Loaded(module, step)


def load_smol(torch, folder, n):
    from tools.parity import decoder_torch as dt
    from tools.safetensors_io import read_safetensors
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    module = dt.build(config).eval()
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))  # BF16 widened to float32 exactly
    module.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    del tensors
    ids = torch.tensor(ids_of(n, config["vocab_size"]))
    positions = torch.arange(n)

    def step(grad):
        x = module.model.embed_tokens(ids)
        if grad:
            x = x.detach().requires_grad_(True)
        x0 = x
        for layer in module.model.layers:
            x, _, _ = layer(x, positions, None)
        f = module.unembed(x[-1:])[0, TARGET]
        if not grad:
            return float(f), None
        f.backward()
        return float(f), (x0 * x0.grad).sum(-1)

    return Loaded(module, step)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=1.0)
    bench = os.environ.get("ATTN_BENCH_DIR", "/tmp/attnscope-bench")
    ap.add_argument("--gpt2", default=os.path.join(bench, "gpt2-small"))
    ap.add_argument("--smol", default=os.path.join(bench, "smollm2-135m-bf16"))
    ap.add_argument("--values")
    args = ap.parse_args()

    import torch
    from tests.bench.torch_mha_peer import check_torch_blas, openblas_info, time_calls
    from tools.parity.make_attribution_fixtures import attnlrp

    blas, status = check_torch_blas(torch, args.threads, "torch_attribution_peer")
    if status:
        return status
    results, values = {}, {}
    for name, loader, folder in (("gpt2-small", load_gpt2, args.gpt2), ("smollm2-135m", load_smol, args.smol)):
        if not os.path.exists(os.path.join(folder, "model.safetensors")):
            print(f"torch_attribution_peer: {folder}/model.safetensors not found (bench_attribution writes GPT-2's; "
                  "bench_decoder --prepare writes SmolLM2's)", file=sys.stderr)
            return 2
        m = loader(torch, folder, args.tokens)
        value, scores = m.step(True)
        values[name] = {"value": value, "scores": scores.tolist()}

        def forward():
            with torch.no_grad():
                m.step(False)

        def lrp():
            with attnlrp(m):
                m.step(True)

        results[name] = {}
        for case, fn in (("forward", forward), ("grad_x_input", lambda: m.step(True)), ("attnlrp", lrp)):
            time_calls(fn, args.min_time)
            samples = [time_calls(fn, args.min_time)[0] for _ in range(args.repetitions)]
            results[name][case] = {"median_ms": statistics.median(samples) * 1e3,
                                   "samples_ms": [round(s * 1e3, 3) for s in samples]}
    if args.values:
        with open(args.values, "w") as f:
            json.dump(values, f)
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "tokens": args.tokens,
                      "blas_info": {p: openblas_info(p) for p in blas}, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
