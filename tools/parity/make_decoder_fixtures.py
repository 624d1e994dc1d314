#!/usr/bin/python3
"""Writes the decoder parity fixtures: tests/data/decoders/<case>/config.json (Hugging Face's keys),
model.safetensors (Hugging Face's tensor names, in the case's dtype) and expected.json, from small random
configs (2 layers, d 64, 4 heads, 2 key/value heads) that between them turn on every switch of
decoder_torch.py: each family, tied and untied output embeddings, F32, F16 and BF16 weights, every
rope_scaling type, biases, explicit head_dim, q/k norms, partial rotary, a sliding window shorter than the
prompt, attention and final logit soft-capping.

expected.json: {"prompt": ids, "logits": [n][vocab] (every prompt position), "attentions": [layer][head]
[n][n] (0 where masked), "lens": [layer][n] (the logit lens: the argmax of unembed(residual after layer l)
at every position), "generated": greedy ids (the key/value cache, `steps` new tokens), "last_step":
[layer][head][total] (the attention of the last generated token, fed back through the cache, over the
prompt, the tokens generated and itself)}. Numbers
come from torch in float64 over the weights as stored (16-bit weights widened exactly), rounded to 7
significant digits.

    /usr/bin/python3 -m tools.parity.make_decoder_fixtures
"""

import json
import os

import numpy as np
import torch

from tools.parity import decoder_torch as dt
from tools.safetensors_io import read_safetensors, write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

OUT = os.path.join(ROOT, "tests", "data", "decoders")
PROMPT_LENGTH = 12
STEPS = 6

BASE = {"vocab_size": 64, "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2}

# name: (architectures, config overrides, dtype)
CASES = {
    "llama": ("LlamaForCausalLM", {"model_type": "llama", "tie_word_embeddings": False}, torch.float32),
    "llama-tied-linear-bf16": ("LlamaForCausalLM", {
        "model_type": "llama", "tie_word_embeddings": True,
        "rope_scaling": {"rope_type": "linear", "factor": 2.0}}, torch.bfloat16),
    "llama3-rope-f16": ("LlamaForCausalLM", {
        "model_type": "llama", "tie_word_embeddings": True,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 16}}, torch.float16),
    "llama-dynamic": ("LlamaForCausalLM", {
        "model_type": "llama", "max_position_embeddings": 8, "tie_word_embeddings": False,
        "rope_scaling": {"type": "dynamic", "factor": 4.0}}, torch.float32),
    "llama-yarn-bias-bf16": ("LlamaForCausalLM", {
        "model_type": "llama", "attention_bias": True, "mlp_bias": True, "tie_word_embeddings": False,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8}},
        torch.bfloat16),
    "mistral-window": ("MistralForCausalLM", {
        "model_type": "mistral", "sliding_window": 4, "tie_word_embeddings": False}, torch.bfloat16),
    "qwen2-bias": ("Qwen2ForCausalLM", {
        "model_type": "qwen2", "tie_word_embeddings": True, "use_sliding_window": False,
        "sliding_window": 4, "rope_theta": 1000000.0}, torch.bfloat16),
    "qwen3-head-dim": ("Qwen3ForCausalLM", {
        "model_type": "qwen3", "head_dim": 32, "tie_word_embeddings": False, "rope_theta": 1000000.0},
        torch.bfloat16),
    "gemma2-softcap": ("Gemma2ForCausalLM", {
        "model_type": "gemma2", "head_dim": 16, "query_pre_attn_scalar": 24, "attn_logit_softcapping": 4.0,
        "final_logit_softcapping": 5.0, "sliding_window": 4, "hidden_activation": "gelu_pytorch_tanh",
        "tie_word_embeddings": True}, torch.float32),
    "gemma3-local-global": ("Gemma3ForCausalLM", {
        "model_type": "gemma3_text", "head_dim": 16, "query_pre_attn_scalar": 16, "sliding_window": 4,
        "sliding_window_pattern": 2, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "hidden_activation": "gelu_pytorch_tanh",
        "tie_word_embeddings": True}, torch.bfloat16),
    "phi3-fused-partial": ("Phi3ForCausalLM", {
        "model_type": "phi3", "partial_rotary_factor": 0.5, "tie_word_embeddings": False}, torch.float16),
}

DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


def sig7(x):
    return float(f"{float(x):.7g}")


def rounded(a):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        return sig7(a)
    return [rounded(v) for v in a]


def randomise(model, seed, gemma):
    """Far from the initialisation, so every map is sharp somewhere and every switch shows."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_((0.0 if gemma else 1.0) + 0.2 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name:
                # Gemma multiplies the embedding by sqrt(d) = 8 and ties the output to it: smaller, or every
                # token's logits are its own embedding's and greedy decoding repeats the last token.
                p.copy_((0.05 if gemma else 1.0) * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(2.0 * torch.randn(p.shape, generator=g) / np.sqrt(p.shape[1]))


def make(case, architecture, overrides, dtype, seed):
    config = dict(BASE, architectures=[architecture], torch_dtype=DTYPE_NAMES[dtype], **overrides)
    torch.manual_seed(seed)
    model = dt.build(config)
    randomise(model, seed, model.cfg.gemma)
    # The weights as stored: rounded to the case's dtype, then widened exactly for the float64 reference.
    stored = {k: v.detach().to(dtype) for k, v in model.state_dict().items()
              if not (model.cfg.tie and k == "lm_head.weight")}
    model.load_state_dict({k: v.to(torch.float64) for k, v in stored.items()}, strict=True)
    model = model.double().eval()

    folder = os.path.join(OUT, case)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")
    write_safetensors(os.path.join(folder, "model.safetensors"), stored, {"format": "pt"})

    g = torch.Generator().manual_seed(1000 + seed)
    prompt = torch.randint(3, config["vocab_size"], (PROMPT_LENGTH,), generator=g)
    with torch.no_grad():
        out = model(prompt)
        lens = [model.unembed(h).argmax(-1).tolist() for h in out["hidden"]]
        generated, steps = model.generate_greedy(prompt, STEPS)
    if model.cfg.rope_scaling is None or model.cfg.rope_scaling.get("type") != "dynamic":
        # The cache path against one forward over the whole sequence (dynamic RoPE differs on purpose: cached
        # keys keep the rotation of the length they were computed at).
        whole = torch.cat((prompt, torch.tensor(generated, dtype=prompt.dtype)))
        with torch.no_grad():
            full = model(whole)
        assert full["logits"][PROMPT_LENGTH - 1:-1].argmax(-1).tolist() == generated, case
        for layer, a in enumerate(steps[-1]):
            diff = (full["attentions"][layer][:, -1, :] - a[:, 0, :]).abs().max().item()
            assert diff < 1e-12, (case, layer, diff)
    expected = expectations(model, prompt, STEPS)
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, separators=(",", ":"))
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(folder, x)) for x in os.listdir(folder))
    print(f"{case}: {DTYPE_NAMES[dtype]}, {sum(p.numel() for p in model.parameters()):,} parameters, "
          f"generated {generated}, {size / 1024:.0f} KiB")


def expectations(model, prompt, steps):
    with torch.no_grad():
        out = model(prompt)
        lens = [model.unembed(h).argmax(-1).tolist() for h in out["hidden"]]
        generated, step_maps = model.generate_greedy(prompt, steps)
    return {
        "prompt": prompt.tolist(),
        "logits": rounded(out["logits"].numpy()),
        "attentions": [rounded(a.numpy()) for a in out["attentions"]],
        "lens": lens,
        "generated": generated,
        "last_step": [rounded(a[:, 0, :].numpy()) for a in step_maps[-1]] if step_maps else [],
    }


def shipped_stories260k():
    """The bundled real Llama (resources/models/stories260k, tools/convert_llama2c.py): its greedy story from
    BOS, the first 16 tokens as the prompt ("Once upon a time, there was a little girl named Lily"), the next 24
    generated."""
    folder = os.path.join(ROOT, "resources", "models", "stories260k")
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    model = dt.build(config)
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    model = model.double().eval()
    with torch.no_grad():
        story, _ = model.generate_greedy(torch.tensor([1]), 15)
    prompt = torch.tensor([1] + story)
    expected = dict(expectations(model, prompt, 24), model="resources/models/stories260k")
    out = os.path.join(OUT, "stories260k")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, separators=(",", ":"))
        f.write("\n")
    print(f"stories260k: prompt {prompt.tolist()}, generated {expected['generated']}")


def main():
    torch.set_num_threads(1)
    for seed, (case, (architecture, overrides, dtype)) in enumerate(CASES.items(), start=1):
        make(case, architecture, overrides, dtype, seed)
    shipped_stories260k()


if __name__ == "__main__":
    main()
