#!/usr/bin/env python3
"""Random Gemma 2, Gemma 3, Phi-3, Llama 3 and GPT-2 checkpoints, small enough to commit as GGUF (tools only).

    /usr/bin/python3 -m tools.gguf.make_random_archs OUT_DIR [--tokenizer DIR]

Writes OUT_DIR/gemma2-random, gemma3-random, phi3-random, llama3-random and gpt2-random, each a folder with
config.json (the fields transformers writes for Gemma2ForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM,
LlamaForCausalLM and GPT2LMHeadModel),
model.safetensors and the
trimmed SmolLM tokenizer of make_random_smollm.py (384 ids, byte-level BPE: llama.cpp takes any vocabulary for
any architecture, and Gemma 3's converter writes a tokenizer.json folder as "gpt2" too).

What each exercises, at hidden 64 (32 for Gemma 3, whose 6 layers would otherwise pass 500 kB) and heads of 16:
- gemma2-random: 2 layers (layer 0 slides, layer 1 is global: Gemma 2's period of 2) with a window of 4 keys,
  shorter than every test prompt; soft caps of the scores (attn_logit_softcapping 2) and of the logits
  (final_logit_softcapping 15) small enough that tanh bends them; grouped-query attention (4 heads, 2 key/value).
- gemma3-random: 6 layers (layers 0-4 slide, 5 is global: Gemma 3's default period, the one llama.cpp's converter
  relies on), window 4, the sliding layers' RoPE base 10000 against the global 1000000, linear RoPE scaling 2 on
  the global layer only (as Gemma 3 4B's factor 8), per-head q/k norms, no soft caps.
- llama3-random: Llama 3's RoPE scaling (rope_type llama3, factor 8) with original_max_position_embeddings 64, so
  that over a test prompt's positions the pairs' three cases all occur (the first pair kept, the second and third
  between, the rest divided by 8; llama.cpp stores the factors as rope_freqs.weight); 2 layers, grouped queries.
- gpt2-random: 2 layers of GPT-2 (LayerNorms with biases, Conv1D weights, a 256-position table, the tanh GELU,
  the output tied to the embedding), heads of 16.
- phi3-random: 2 layers with the fused qkv_proj and gate_up_proj, RoPE on half of each head
  (partial_rotary_factor 0.5, as Phi-4-mini's 0.75 is less than 1), an untied lm_head and a sliding_window that
  llama.cpp does not apply.
Every Gemma norm weight is stored as Hugging Face does, the w of (1 + w); query_pre_attn_scalar is head_dim, the
scale llama.cpp uses for every Gemma but the 27B ones.

The weights are drawn from a fixed seed (numpy's PCG64). As in make_random_smollm.py, their scales make the logits
decisive (a few units between the top tokens, before the caps) so that greedy continuations do not hinge on
rounding.
"""
import argparse
import os
import shutil

import numpy as np

from tools.gguf.make_random_smollm import VOCAB, trim_tokenizer
from tools.safetensors_io import write_model_folder

SEED = 45
HEAD_DIM = 16

ARCHS = {
    "gemma2-random": dict(hidden=64, heads=4, kv_heads=2, intermediate=128, layers=2),
    "gemma3-random": dict(hidden=32, heads=2, kv_heads=1, intermediate=64, layers=6),
    "phi3-random": dict(hidden=64, heads=4, kv_heads=2, intermediate=128, layers=2),
    # (last: the others' weights come from the generator first, as before it was added)
    "llama3-random": dict(hidden=64, heads=4, kv_heads=2, intermediate=128, layers=2),
    # (after llama3-random for the same reason; GPT-2's MLP is 4 x hidden and its heads all key/value heads)
    "gpt2-random": dict(hidden=64, heads=4, kv_heads=4, intermediate=256, layers=2),
}
GPT2_POSITIONS = 256


def config_of(name, s):
    if name.startswith("gpt2"):  # GPT2LMHeadModel's config.json
        return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": s["hidden"],
                "n_layer": s["layers"], "n_head": s["heads"], "n_positions": GPT2_POSITIONS, "n_ctx": GPT2_POSITIONS,
                "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05,
                "vocab_size": VOCAB, "bos_token_id": 0, "eos_token_id": 0, "tie_word_embeddings": True,
                "torch_dtype": "float32"}
    common = {
        "hidden_size": s["hidden"],
        "intermediate_size": s["intermediate"],
        "num_hidden_layers": s["layers"],
        "num_attention_heads": s["heads"],
        "num_key_value_heads": s["kv_heads"],
        "head_dim": HEAD_DIM,
        "vocab_size": VOCAB,
        "bos_token_id": 0,
        "eos_token_id": 0,
        "torch_dtype": "float32",
    }
    if name.startswith("gemma2"):
        return {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", **common,
                "max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
                "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": HEAD_DIM,
                "sliding_window": 4, "attn_logit_softcapping": 2.0, "final_logit_softcapping": 15.0,
                "tie_word_embeddings": True}
    if name.startswith("gemma3"):
        return {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", **common,
                "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
                "rope_local_base_freq": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": HEAD_DIM,
                "sliding_window": 4, "sliding_window_pattern": 6,
                "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
                "final_logit_softcapping": None, "attn_logit_softcapping": None, "tie_word_embeddings": True}
    if name.startswith("llama3"):
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", **common,
                "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
                "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
                "hidden_act": "silu", "tie_word_embeddings": True}
    return {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", **common,
            "max_position_embeddings": 4096, "original_max_position_embeddings": 4096, "rms_norm_eps": 1e-05,
            "rope_theta": 10000.0, "partial_rotary_factor": 0.5, "rope_scaling": None, "hidden_act": "silu",
            "sliding_window": 2047, "tie_word_embeddings": False}


def gpt2_weights(s, rng):
    """GPT2LMHeadModel's tensors: Conv1D weights [in, out], LayerNorms with biases, a learned position table."""
    d, f = s["hidden"], s["intermediate"]

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    t = {"transformer.wte.weight": normal((VOCAB, d), 0.1), "transformer.wpe.weight": normal((GPT2_POSITIONS, d), 0.05)}
    for i in range(s["layers"]):
        p = f"transformer.h.{i}."
        for ln in ("ln_1", "ln_2"):
            t[p + ln + ".weight"] = (1.0 + normal((d,), 0.1)).astype(np.float32)
            t[p + ln + ".bias"] = normal((d,), 0.05)
        t[p + "attn.c_attn.weight"] = normal((d, 3 * d), 0.15)
        t[p + "attn.c_attn.bias"] = normal((3 * d,), 0.05)
        t[p + "attn.c_proj.weight"] = normal((d, d), 0.15)
        t[p + "attn.c_proj.bias"] = normal((d,), 0.05)
        t[p + "mlp.c_fc.weight"] = normal((d, f), 0.15)
        t[p + "mlp.c_fc.bias"] = normal((f,), 0.05)
        t[p + "mlp.c_proj.weight"] = normal((f, d), 0.15)
        t[p + "mlp.c_proj.bias"] = normal((d,), 0.05)
    # A final norm of a few units, as the other archs'.
    t["transformer.ln_f.weight"] = (3.0 + normal((d,), 0.2)).astype(np.float32)
    t["transformer.ln_f.bias"] = normal((d,), 0.05)
    return t


def weights(name, s, rng):
    if name.startswith("gpt2"):
        return gpt2_weights(s, rng)
    d, f, hd = s["hidden"], s["intermediate"], HEAD_DIM
    q, kv = s["heads"] * hd, s["kv_heads"] * hd
    gemma = name.startswith("gemma")

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def norm(n, centre=0.0, std=0.1):
        # Gemma stores w of (1 + w) (around 0), the others the scale itself (around 1).
        return (centre + (0.0 if gemma else 1.0) + normal((n,), std)).astype(np.float32)

    t = {"model.embed_tokens.weight": normal((VOCAB, d), 0.1 if not gemma else 0.04)}
    for i in range(s["layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = norm(d)
        if name.startswith("phi3"):
            t[p + "self_attn.qkv_proj.weight"] = np.concatenate(
                [normal((q, d), 0.15), normal((kv, d), 0.15), normal((kv, d), 0.15)])
            t[p + "mlp.gate_up_proj.weight"] = normal((2 * f, d), 0.15)
        else:
            t[p + "self_attn.q_proj.weight"] = normal((q, d), 0.15)
            t[p + "self_attn.k_proj.weight"] = normal((kv, d), 0.15)
            t[p + "self_attn.v_proj.weight"] = normal((kv, d), 0.15)
            t[p + "mlp.gate_proj.weight"] = normal((f, d), 0.15)
            t[p + "mlp.up_proj.weight"] = normal((f, d), 0.15)
        t[p + "self_attn.o_proj.weight"] = normal((d, q), 0.15)
        t[p + "mlp.down_proj.weight"] = normal((d, f), 0.15)
        t[p + "post_attention_layernorm.weight"] = norm(d)
        if gemma:
            t[p + "pre_feedforward_layernorm.weight"] = norm(d)
            t[p + "post_feedforward_layernorm.weight"] = norm(d)
        if name.startswith("gemma3"):
            t[p + "self_attn.q_norm.weight"] = norm(hd)
            t[p + "self_attn.k_norm.weight"] = norm(hd)
    # A final norm of a few units: the output then spreads the logits by several units.
    t["model.norm.weight"] = norm(d, 8.0 if gemma else 3.0, 0.2)
    if name.startswith("phi3"):
        t["lm_head.weight"] = normal((VOCAB, d), 0.1)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--tokenizer", default="/work/shared/data/tokenizers/modern/smollm")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    for name, sizes in ARCHS.items():
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        write_model_folder(folder, config_of(name, sizes), weights(name, sizes, rng))
        trim_tokenizer(args.tokenizer, folder)
        special = os.path.join(args.tokenizer, "special_tokens_map.json")
        if os.path.exists(special):
            shutil.copyfile(special, os.path.join(folder, "special_tokens_map.json"))
        print(f"{folder}: {sizes}")


if __name__ == "__main__":
    main()
