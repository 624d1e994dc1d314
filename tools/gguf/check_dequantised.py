#!/usr/bin/env python3
"""How far llama.cpp's goldens are from exact arithmetic on the same file's weights (tools only).

    /usr/bin/python3 -m tools.gguf.check_dequantised FILE.gguf [GOLDEN.json] [--bin GGML_BIN_DIR]

Dequantises every tensor of FILE.gguf with ggml's own dequantize_row_* (libggml-base.so), undoes the converter's
q/k permutation, loads the result into tools/parity/decoder_torch.py's Llama in float64 and runs the golden's
prompts (default GOLDEN: FILE's stem + ".golden.json"). Prints, per prompt, the largest difference between
llama.cpp's top-5 log-probabilities and float64's for the same ids, and how many greedy tokens agree.

An engine that dequantises the weights and computes in float is that float64 reference up to its own rounding,
so these figures are the floor of its distance from llama.cpp: what llama.cpp adds by rounding activations (the
F16 key/value cache; for F16 and quantised weights, the activations quantised to F16, Q8_0 or Q8_K before each
matrix product).
"""
import argparse
import ctypes
import json
import os

import numpy as np
import torch

from tools.gguf.check_files import read_gguf
from tools.gguf.llama_quantize import DEFAULT_BIN
from tools.parity.decoder_torch import build


def dequantise(lib, type_name, ne, raw):
    n = int(np.prod(ne))
    if type_name == "F32":
        flat = np.frombuffer(raw, dtype="<f4").copy()
    elif type_name == "F16":
        flat = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    elif type_name == "BF16":
        flat = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        out = np.empty(n, dtype=np.float32)
        fn = getattr(lib, "dequantize_row_" + type_name.lower().replace("_k", "_K"))
        fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int64]
        fn.restype = None
        fn(raw, out.ctypes.data, n)
        flat = out
    return flat.reshape(tuple(reversed(ne)))


def unpermute(w, n_head):
    """The inverse of convert.permute: each head's interleaved pairs back to halves."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def hf_model(path, lib):
    kv, tensors = read_gguf(path)
    n_head = kv["llama.attention.head_count"]
    n_head_kv = kv["llama.attention.head_count_kv"]
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": kv["llama.embedding_length"], "intermediate_size": kv["llama.feed_forward_length"],
        "num_hidden_layers": kv["llama.block_count"], "num_attention_heads": n_head,
        "num_key_value_heads": n_head_kv, "vocab_size": len(kv["tokenizer.ggml.tokens"]),
        "max_position_embeddings": kv["llama.context_length"],
        "rms_norm_eps": kv["llama.attention.layer_norm_rms_epsilon"], "rope_theta": kv["llama.rope.freq_base"],
        "hidden_act": "silu", "tie_word_embeddings": "output.weight" not in tensors,
    }
    names = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
             "output.weight": "lm_head.weight"}
    parts = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    state = {}
    for name, (type_name, ne, raw) in tensors.items():
        w = dequantise(lib, type_name, ne, raw)
        if name.startswith("blk."):
            _, layer, part, _ = name.split(".")
            hf = f"model.layers.{layer}.{parts[part]}.weight"
            if part == "attn_q":
                w = unpermute(w, n_head)
            elif part == "attn_k":
                w = unpermute(w, n_head_kv)
        else:
            hf = names[name]
        state[hf] = torch.tensor(w, dtype=torch.float64)
    model = build(config).double()
    model.load_state_dict(state, strict=False)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gguf")
    ap.add_argument("golden", nargs="?")
    ap.add_argument("--bin", default=DEFAULT_BIN)
    args = ap.parse_args()
    golden_path = args.golden or os.path.splitext(args.gguf)[0] + ".golden.json"
    with open(golden_path, encoding="utf-8") as f:
        golden = json.load(f)
    lib = ctypes.CDLL(os.path.join(args.bin, "libggml-base.so"))
    model = hf_model(args.gguf, lib)
    worst = 0.0
    for case in golden["cases"]:
        ids = list(case["tokens"])
        with torch.no_grad():
            lp = torch.log_softmax(model(torch.tensor(ids))["logits"][-1], -1)
            diff = max(abs(lp[t["id"]].item() - t["logprob"]) for t in case["top5"])
            generated = []
            for _ in range(len(case["greedy"])):
                generated.append(int(model(torch.tensor(ids + generated))["logits"][-1].argmax()))
        agree = next((i for i, (a, b) in enumerate(zip(generated, case["greedy"])) if a != b), len(generated))
        worst = max(worst, diff)
        print(f"{os.path.basename(args.gguf)} {case['prompt']!r}: top-5 log-prob max diff {diff:.2e}, "
              f"greedy {agree}/{len(generated)} agree (smallest llama.cpp margin {min(case['greedy_margins']):.3f})")
    print(f"{os.path.basename(args.gguf)}: largest top-5 log-prob difference {worst:.2e}")


if __name__ == "__main__":
    main()
