#!/usr/bin/env python3
"""How far llama.cpp's Gemma numbers are from exact arithmetic, and why (tools only).

    PYTHONPATH=. /usr/bin/python3 -m tools.gguf.check_gelu_table CHECKPOINT_DIR FLOAT_CACHE_GOLDEN.json

Runs the Hugging Face checkpoint a GGUF file was converted from (tools/gguf/make_random_archs.py) in float64
through tools/parity/decoder_torch.py, once with GELU as transformers computes it (tanh approximation) and once as
ggml's CPU backend does (ggml-cpu/vec.h with GGML_GELU_FP16, which it defines: the input rounded to F16, the value
read from a table of F16 results, x itself from 10 up and 0 from -10 down), and prints each one's largest distance
from llama.cpp's top-5 log-probabilities in the golden (a *.kv-f32.golden.json: llama.cpp with a float key/value
cache). Measured on gemma2-random and gemma3-random: 1.19e-3 and 2.28e-3 exact, 2.9e-6 and 6.8e-5 with the table.
"""
import argparse
import json
import os

import numpy as np
import torch

from tools.parity import decoder_torch as dt
from tools.safetensors_io import read_safetensors


def ggml_gelu(x):
    """ggml_vec_geglu_f32's GELU under GGML_GELU_FP16: table[fp16(x)], the table holding fp16(gelu(x)) for every
    half x, computed in float32 (ggml_gelu_f32)."""
    xf = x.to(torch.float32)
    h = xf.to(torch.float16).to(torch.float32)
    k = np.float32(0.7978845608028654)
    g = (0.5 * h * (1.0 + torch.tanh(k * h * (1.0 + 0.044715 * h * h)))).to(torch.float16).to(torch.float64)
    g = torch.where(xf <= -10, torch.zeros_like(g), g)
    return torch.where(xf >= 10, x, g)


def worst_distance(model, golden):
    worst = 0.0
    for case in golden["cases"]:
        with torch.no_grad():
            logits = model(torch.tensor(case["tokens"]))["logits"][-1]
        lp = torch.log_softmax(logits, -1)
        for e in case["top5"]:
            worst = max(worst, abs(lp[e["id"]].item() - e["logprob"]))
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("golden")
    args = ap.parse_args()
    with open(os.path.join(args.checkpoint, "config.json"), encoding="utf-8") as f:
        model = dt.build(json.load(f)).double()
    tensors, _ = read_safetensors(os.path.join(args.checkpoint, "model.safetensors"))
    model.load_state_dict({k: torch.from_numpy(np.asarray(v, dtype=np.float64)) for k, v in tensors.items()})
    with open(args.golden, encoding="utf-8") as f:
        golden = json.load(f)
    for name, act in (("exact GELU", lambda t: torch.nn.functional.gelu(t, approximate="tanh")),
                      ("ggml's F16-table GELU", ggml_gelu)):
        for layer in model.model.layers:
            layer.mlp.act = act
        print(f"{os.path.basename(args.golden)}: float64 with {name}: "
              f"{worst_distance(model, golden):.3g} from llama.cpp's top-5 log-probabilities")


if __name__ == "__main__":
    main()
