#!/usr/bin/env python3
"""A random Hugging Face checkpoint shaped like SmolLM2, small enough to commit as GGUF (tools only).

    /usr/bin/python3 -m tools.gguf.make_random_smollm OUT_DIR [--tokenizer DIR]

Writes OUT_DIR/config.json, model.safetensors, tokenizer.json, tokenizer_config.json. SmolLM2's architecture
(LlamaForCausalLM, tied embeddings, RoPE theta 100000, grouped-query attention, RMSNorm eps 1e-5, SiLU MLP) at
hidden 256, 4 heads of 64 (SmolLM2-135M's head size), 2 key/value heads, MLP 256 and 1 layer: every weight row
is 256 long, so Q4_K and the other K-quants cover every matrix without a fallback, and the whole family of
files stays a few megabytes (stories260K covers several layers).

The tokenizer is SmolLM's (DIR, default /work/shared/data/tokenizers/modern/smollm) cut to its first 384 ids:
the 17 special tokens, the 256 byte symbols and the first 111 merge results. A byte-level BPE's ids grow with
its merges, so keeping a prefix of ids and every merge whose halves and result are kept leaves a complete BPE
(every text still tokenizes, through the byte symbols) that merges exactly as the full one would with fewer
merges learned.

The weights are drawn from a fixed seed (numpy's PCG64, stable across numpy versions). Their scales make the
logits decisive (a few units between the top tokens) so that greedy continuations do not hinge on rounding
differences between implementations, and the norms' weights are not all one, so a norm that is read wrongly
shows.
"""
import argparse
import json
import os
import shutil

import numpy as np

from tools.safetensors_io import write_model_folder

VOCAB = 384
HIDDEN = 256
INTERMEDIATE = 256
LAYERS = 1
HEADS = 4
KV_HEADS = 2
SEED = 45


def trim_tokenizer(src_dir, out_dir):
    with open(os.path.join(src_dir, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    vocab = {t: i for t, i in tok["model"]["vocab"].items() if i < VOCAB}
    merges = []
    for m in tok["model"]["merges"]:
        a, b = m.split(" ") if isinstance(m, str) else m
        if a in vocab and b in vocab and a + b in vocab:
            merges.append(m)
    tok["model"]["vocab"] = vocab
    tok["model"]["merges"] = merges
    tok["added_tokens"] = [a for a in tok["added_tokens"] if a["id"] < VOCAB]
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(src_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        tok_config = json.load(f)
    tok_config["vocab_size"] = VOCAB
    # SmolLM's "[PAD]" is not in its vocabulary; it names no id, so it is left out.
    tok_config.pop("pad_token", None)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tok_config, f, indent=1, ensure_ascii=False)
    return len(merges)


def weights(rng):
    head_dim = HIDDEN // HEADS

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    t = {"model.embed_tokens.weight": normal((VOCAB, HIDDEN), 0.1)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = (1 + normal((HIDDEN,), 0.1)).astype(np.float32)
        t[p + "self_attn.q_proj.weight"] = normal((HEADS * head_dim, HIDDEN), 0.06)
        t[p + "self_attn.k_proj.weight"] = normal((KV_HEADS * head_dim, HIDDEN), 0.06)
        t[p + "self_attn.v_proj.weight"] = normal((KV_HEADS * head_dim, HIDDEN), 0.1)
        t[p + "self_attn.o_proj.weight"] = normal((HIDDEN, HEADS * head_dim), 0.1)
        t[p + "post_attention_layernorm.weight"] = (1 + normal((HIDDEN,), 0.1)).astype(np.float32)
        t[p + "mlp.gate_proj.weight"] = normal((INTERMEDIATE, HIDDEN), 0.1)
        t[p + "mlp.up_proj.weight"] = normal((INTERMEDIATE, HIDDEN), 0.1)
        t[p + "mlp.down_proj.weight"] = normal((HIDDEN, INTERMEDIATE), 0.1)
    # Twice a unit norm: the tied output then spreads the logits by several units (see the docstring).
    t["model.norm.weight"] = (2 + normal((HIDDEN,), 0.2)).astype(np.float32)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--tokenizer", default="/work/shared/data/tokenizers/modern/smollm")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "vocab_size": VOCAB,
        "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-05,
        "rope_theta": 100000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": True,
        "bos_token_id": 0,
        "eos_token_id": 0,
        "torch_dtype": "float32",
    }
    write_model_folder(args.out, config, weights(np.random.default_rng(SEED)))
    n_merges = trim_tokenizer(args.tokenizer, args.out)
    if os.path.exists(os.path.join(args.tokenizer, "special_tokens_map.json")):
        shutil.copyfile(os.path.join(args.tokenizer, "special_tokens_map.json"),
                        os.path.join(args.out, "special_tokens_map.json"))
    print(f"{args.out}: {VOCAB} tokens, {n_merges} merges")


if __name__ == "__main__":
    main()
