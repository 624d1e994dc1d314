#!/usr/bin/python3
"""Converts a llama2.c checkpoint (karpathy/llama2.c's run.c format, version 0) into a Hugging Face Llama
folder: config.json, model.safetensors (float32, Hugging Face's tensor names), and the tokenizer beside it
(tokenizer.model with a tokenizer_config.json that adds BOS, as Llama's tokenizer and run.c do).

    /usr/bin/python3 -m tools.convert_llama2c ../shared/data/models/llama2c/stories260K.bin OUT_DIR \
        [--tokenizer-model tok512.model] [--check tok512.bin]

The format, as run.c reads it: a header of 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
vocab_size, seq_len; a negative vocab_size means the classifier is not the embedding), then float32 tensors
in this order, each matrix as torch stores it ([out, in], row-major):

    token_embedding_table [vocab, dim]
    rms_att_weight        [layers, dim]
    wq                    [layers, heads * head_size, dim]
    wk, wv                [layers, kv_heads * head_size, dim]
    wo                    [layers, dim, heads * head_size]
    rms_ffn_weight        [layers, dim]
    w1 (gate)             [layers, hidden, dim]
    w2 (down)             [layers, dim, hidden]
    w3 (up)               [layers, hidden, dim]
    rms_final_weight      [dim]
    freq_cis_real, freq_cis_imag [seq_len, head_size / 2] (not used: RoPE is recomputed)
    wcls                  [vocab, dim] (only when vocab_size was negative)

run.c rotates interleaved pairs (2i, 2i + 1) of each head by the frequency 10000^(-2i / head_size); Hugging
Face's Llama rotates halves (i, i + head_size / 2). The two agree when the rows of wq and wk are permuted
within each head so that row 2i moves to i and row 2i + 1 to i + head_size / 2: the scores q . k are sums
over the same pairs either way, so every attention map and output is unchanged. RMSNorm's epsilon is 1e-5
(run.c), rope_theta 10000.

--check TOK.bin decodes a greedy continuation of <s> (BOS, id 1) with tools/parity/decoder_torch.py over the
converted folder and prints it, with llama2.c's tokenizer (tok512.bin: int32 max length, then per token a
float32 score, an int32 length and the bytes; "<0xHH>" pieces are raw bytes). llama2.c's doc/stories260K.md
publishes the greedy story of stories260K ("Once upon a time, there was a little girl named Lily. She loved
to play outside in the park. ..."), so this checks the conversion and the reference decoder at once.
"""

import argparse
import json
import os
import shutil
import struct

import numpy as np

from tools.safetensors_io import write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))


def read_checkpoint(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 28:
        raise SystemExit(f"{path}: {len(data)} bytes, shorter than llama2.c's 28-byte header")
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack("<7i", data[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    if min(dim, hidden, layers, heads, kv_heads, vocab, seq_len) <= 0 or dim % heads or heads % kv_heads:
        raise SystemExit(f"{path}: header {dim, hidden, layers, heads, kv_heads, vocab, seq_len} is not a llama2.c "
                         "checkpoint's (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len)")
    hs = dim // heads
    floats = np.frombuffer(data, dtype="<f4", offset=28)
    at = 0

    def take(*shape):
        nonlocal at
        n = int(np.prod(shape))
        if at + n > floats.size:
            raise SystemExit(f"{path}: ends at byte {len(data)} inside the weights (needs {4 * (at + n) + 28})")
        a = floats[at:at + n].reshape(shape).astype(np.float32)
        at += n
        return a

    w = {"embed": take(vocab, dim), "rms_att": take(layers, dim), "wq": take(layers, heads * hs, dim),
         "wk": take(layers, kv_heads * hs, dim), "wv": take(layers, kv_heads * hs, dim),
         "wo": take(layers, dim, heads * hs), "rms_ffn": take(layers, dim), "w1": take(layers, hidden, dim),
         "w2": take(layers, dim, hidden), "w3": take(layers, hidden, dim), "rms_final": take(dim)}
    take(seq_len, hs // 2)
    take(seq_len, hs // 2)
    if not shared:
        w["wcls"] = take(vocab, dim)
    if at != floats.size:
        raise SystemExit(f"{path}: {4 * (floats.size - at)} bytes after the last tensor")
    config = {"dim": dim, "hidden": hidden, "layers": layers, "heads": heads, "kv_heads": kv_heads, "vocab": vocab,
              "seq_len": seq_len, "shared": shared}
    return config, w


def to_rotate_half(m, heads):
    """Rows of a q or k projection [heads * hs, dim] from interleaved pairs to halves, per head."""
    rows, dim = m.shape
    hs = rows // heads
    return m.reshape(heads, hs // 2, 2, dim).transpose(0, 2, 1, 3).reshape(rows, dim)


def convert(checkpoint, out):
    c, w = read_checkpoint(checkpoint)
    tensors = {"model.embed_tokens.weight": w["embed"], "model.norm.weight": w["rms_final"]}
    for i in range(c["layers"]):
        p = f"model.layers.{i}."
        tensors[p + "input_layernorm.weight"] = w["rms_att"][i]
        tensors[p + "post_attention_layernorm.weight"] = w["rms_ffn"][i]
        tensors[p + "self_attn.q_proj.weight"] = to_rotate_half(w["wq"][i], c["heads"])
        tensors[p + "self_attn.k_proj.weight"] = to_rotate_half(w["wk"][i], c["kv_heads"])
        tensors[p + "self_attn.v_proj.weight"] = w["wv"][i]
        tensors[p + "self_attn.o_proj.weight"] = w["wo"][i]
        tensors[p + "mlp.gate_proj.weight"] = w["w1"][i]
        tensors[p + "mlp.down_proj.weight"] = w["w2"][i]
        tensors[p + "mlp.up_proj.weight"] = w["w3"][i]
    if not c["shared"]:
        tensors["lm_head.weight"] = w["wcls"]
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": c["dim"],
              "intermediate_size": c["hidden"], "num_hidden_layers": c["layers"],
              "num_attention_heads": c["heads"], "num_key_value_heads": c["kv_heads"], "vocab_size": c["vocab"],
              "max_position_embeddings": c["seq_len"], "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
              "hidden_act": "silu", "tie_word_embeddings": c["shared"], "bos_token_id": 1,
              # llama2.c trains on stories each begun by BOS and run.c stops when BOS comes next: the model ends a
              # story with 1, so generation stops at </s> (2) or at the next story's BOS (1).
              "eos_token_id": [2, 1],
              "torch_dtype": "float32"}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, {"format": "pt"})
    return config


def read_llama2c_tokenizer(path, vocab):
    with open(path, "rb") as f:
        data = f.read()
    at, pieces = 4, []
    for i in range(vocab):
        if at + 8 > len(data):
            raise SystemExit(f"{path}: ends at byte {len(data)} before token {i} of {vocab}")
        _, n = struct.unpack("<fi", data[at:at + 8])
        pieces.append(data[at + 8:at + 8 + n])
        at += 8 + n
    return pieces


def decode(pieces, ids, bos=1):
    out, prev = b"", bos
    for t in ids:
        p = pieces[t]
        if prev == bos and p.startswith(b" "):
            p = p[1:]
        if len(p) == 6 and p.startswith(b"<0x") and p.endswith(b">"):
            p = bytes([int(p[3:5], 16)])
        out += p
        prev = t
    return out.decode("utf-8", errors="replace")


def check(folder, tokenizer, steps):
    import torch
    from tools.parity import decoder_torch as dt
    from tools.safetensors_io import read_safetensors

    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    model = dt.build(config)
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    model = model.double().eval()
    new, _ = model.generate_greedy(torch.tensor([config["bos_token_id"]]), steps, eos=config["bos_token_id"])
    pieces = read_llama2c_tokenizer(tokenizer, config["vocab_size"])
    print(decode(pieces, [t for t in new if t != config["bos_token_id"]]))
    return new


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("out")
    ap.add_argument("--tokenizer-model", help="a SentencePiece tokenizer.model to copy beside the weights")
    ap.add_argument("--check", metavar="TOK_BIN", help="llama2.c's tokenizer: print a greedy story")
    ap.add_argument("--steps", type=int, default=256)
    args = ap.parse_args()
    config = convert(args.checkpoint, args.out)
    if args.tokenizer_model:
        shutil.copyfile(args.tokenizer_model, os.path.join(args.out, "tokenizer.model"))
        # Llama's SentencePiece tokenizer adds BOS to every text (LlamaTokenizer's add_bos_token), as run.c does.
        with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
            json.dump({"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>", "eos_token": "</s>",
                       "unk_token": "<unk>", "tokenizer_class": "LlamaTokenizer"}, f, indent=1)
            f.write("\n")
    print(f"wrote {args.out}: {config['num_hidden_layers']} layers, d {config['hidden_size']}, "
          f"{config['num_attention_heads']} heads, {config['num_key_value_heads']} key/value heads, "
          f"vocab {config['vocab_size']}")
    if args.check:
        check(args.out, args.check, args.steps)


if __name__ == "__main__":
    main()
