#!/usr/bin/env python3
"""Convert a Hugging Face decoder folder to GGUF as llama.cpp's convert_hf_to_gguf.py does (tools only).

    /usr/bin/python3 -m tools.gguf.convert MODEL_DIR OUT.gguf --type F32|F16|BF16|Q8_0|Q4_K

MODEL_DIR holds config.json (LlamaForCausalLM, which Mistral and SmolLM2 also use; Gemma2ForCausalLM,
Gemma3ForCausalLM, Phi3ForCausalLM or GPT2LMHeadModel), model.safetensors and either a SentencePiece tokenizer.model (written as tokenizer.ggml.model "llama") or a byte-level BPE
tokenizer.json (written as "gpt2" with its merges and llama.cpp's pre-tokenizer name).

What follows llama.cpp (the release node-llama-cpp 3.22.1 ships; conversion/llama.py, conversion/base.py and
src/llama-quant.cpp there):
- tensor names token_embd, blk.N.attn_q/k/v/output, attn_norm, ffn_gate/up/down, ffn_norm, output_norm, output
  (absent when the embeddings are tied and the folder has no lm_head); Gemma's post_attention_norm, ffn_norm (its
  pre_feedforward_layernorm), post_ffw_norm, attn_q_norm and attn_k_norm; Phi-3's fused attn_qkv and ffn_up (its
  gate_up_proj, gate rows first);
- the metadata each arch's converter class writes (add_hparams), e.g. no RoPE base for Gemma 2, Gemma 3's
  sliding-layer base and linear scaling, Phi-3's rope.dimension_count for partial RoPE and its sliding window;
- Gemma's norm weights stored as 1 + w (conversion/gemma.py adds 1 to every tensor named *norm.weight: Hugging
  Face's Gemma RMSNorm scales by 1 + w, llama.cpp's by the weight);
- for llama only, q_proj and k_proj rows permuted per head as LlamaModel.permute does: Hugging Face rotates the
  halves of each head, ggml's rope (mode 0) rotates adjacent pairs, so the converter interleaves the halves (the
  other archs run ggml's NeoX rope, which rotates the halves as Hugging Face does);
- GPT-2's position_embd, attn_qkv (its Conv1D weights transposed to [out, in], as GPT2Model.modify_tensors does)
  and the biases of its LayerNorms and products; its metadata's feed_forward_length 4 x n_embd;
- 1-D tensors (norms, biases) and a position table stay F32 whatever the type;
- F16, BF16 and Q8_0 are convert_hf_to_gguf's --outtype: every 2-D weight in that type, Q8_0 falling back to
  F16 where a row is not a multiple of 32 (gguf-py's quantiser refuses it and the converter keeps F16);
- Q4_K is what `llama-quantize --pure` makes with LLAMA_FTYPE_MOSTLY_Q4_K_S and no importance matrix (the
  converter has no K-quant output): every 2-D weight in Q4_K through quantize_row_q4_K_ref, and where a row is
  not a multiple of 256, tensor_type_fallback's Q5_0, then F16 where a row is not a multiple of 32 either;
- a Llama 3 RoPE scaling (rope_scaling's rope_type "llama3") as the tensor rope_freqs.weight, one factor per rotary
  pair (LlamaModel.generate_extra_tensors), and no rope.scaling metadata.
"""
import argparse
import json
import math
import os
import struct

import numpy as np

from tools.gguf import gguf_writer as gw
from tools.safetensors_io import read_safetensors

# llama_token_type (include/llama.h), which gguf stores per token.
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED, TOKEN_BYTE = 1, 2, 3, 4, 5, 6


def permute(w, n_head, n_head_kv):
    """LlamaModel.permute: within each head, rows (half 0, half 1) become pairs (row i of half 0, row i of half 1)."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def storage_type(name, shape, requested):
    """The ggml type a tensor is written in, for a file of the requested type."""
    if len(shape) < 2 or requested == "F32":
        return "F32"
    # The converter keeps a position table in F32 whatever the type (base.py's POS_EMBD); llama-quantize's Q4_K
    # does not (its exception is for ".position_embd", a vision tower's).
    if name == "position_embd.weight" and requested != "Q4_K":
        return "F32"
    row = shape[-1]
    if requested == "Q8_0" and row % 32:
        return "F16"
    if requested == "Q4_K" and row % 256:
        return "Q5_0" if row % 32 == 0 else "F16"
    return requested


# ----------------------------------------------------------------------------------------------------------------
# Tokenizers


def _varint(buf, pos):
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _fields(buf):
    """(field number, wire type, value) of one protobuf message; length-delimited values as bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"tokenizer.model: unsupported protobuf wire type {wire}")
        yield field, wire, value


def sentencepiece_vocab(path):
    """(pieces, scores, types) of a tokenizer.model: ModelProto field 1 is the repeated SentencePiece
    {1: piece, 2: score (float), 3: type (NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, BYTE 6, UNUSED 5)},
    whose numbering is llama_token_type's, so the types pass through as the converter's IsUnknown/IsControl/...
    chain gives them."""
    with open(path, "rb") as f:
        buf = f.read()
    pieces, scores, types = [], [], []
    for field, wire, value in _fields(buf):
        if field != 1 or wire != 2:
            continue
        piece, score, kind = "", 0.0, TOKEN_NORMAL
        for f2, _, v2 in _fields(value):
            if f2 == 1:
                piece = v2.decode("utf-8")
            elif f2 == 2:
                (score,) = struct.unpack("<f", v2)
            elif f2 == 3:
                kind = v2
        pieces.append(piece)
        scores.append(score)
        types.append(kind)
    return pieces, scores, types


def llama_pre_name(tokenizer):
    """llama.cpp's tokenizer.ggml.pre for a tokenizer.json. convert_hf_to_gguf.py recognises a tokenizer by
    hashing its tokens of a check text; here the pre-tokenizer itself is read, and only the ones these tools
    convert are named: SmolLM's (single digits, then GPT-2's byte-level regex) is "smollm"
    (LLAMA_VOCAB_PRE_TYPE_SMOLLM), GPT-2's alone "gpt-2"."""
    pre = tokenizer.get("pre_tokenizer") or {}
    parts = pre.get("pretokenizers", [pre])
    kinds = [(p.get("type"), p.get("individual_digits"), p.get("use_regex")) for p in parts]
    if kinds == [("Digits", True, None), ("ByteLevel", None, True)]:
        return "smollm"
    if kinds == [("ByteLevel", None, True)]:
        return "gpt-2"
    raise ValueError(f"no llama.cpp pre-tokenizer name known for {pre}; pass --pre")


def add_tokenizer(w, folder, config, pre_override):
    tok_config = {}
    if os.path.exists(os.path.join(folder, "tokenizer_config.json")):
        with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
            tok_config = json.load(f)
    n_vocab = config["vocab_size"]
    is_spm = os.path.exists(os.path.join(folder, "tokenizer.model"))
    if is_spm:
        pieces, scores, types = sentencepiece_vocab(os.path.join(folder, "tokenizer.model"))
        if len(pieces) != n_vocab:
            raise ValueError(f"{folder}: tokenizer.model has {len(pieces)} pieces, config says {n_vocab}")
        w.add_string("tokenizer.ggml.model", "llama")
        w.add_string("tokenizer.ggml.pre", "default")
        w.add_array("tokenizer.ggml.tokens", gw.GGUF_STRING, pieces)
        w.add_array("tokenizer.ggml.scores", gw.GGUF_FLOAT32, scores)
        w.add_array("tokenizer.ggml.token_type", gw.GGUF_INT32, types)
        ids = {p: i for i, p in enumerate(pieces)}
        unk = types.index(TOKEN_UNKNOWN) if TOKEN_UNKNOWN in types else None
    else:
        with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
            tokenizer = json.load(f)
        vocab = tokenizer["model"]["vocab"]
        ids = dict(vocab)
        added = {a["id"]: a for a in tokenizer.get("added_tokens", [])}
        for a in added.values():
            ids[a["content"]] = a["id"]
        by_id = {i: t for t, i in ids.items()}
        tokens, types = [], []
        for i in range(n_vocab):
            if i not in by_id:
                tokens.append(f"[PAD{i}]")
                types.append(TOKEN_UNUSED)
            else:
                tokens.append(by_id[i])
                types.append((TOKEN_CONTROL if added[i].get("special") else TOKEN_USER_DEFINED) if i in added
                             else TOKEN_NORMAL)
        merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"].get("merges", [])]
        w.add_string("tokenizer.ggml.model", "gpt2")
        w.add_string("tokenizer.ggml.pre", pre_override or llama_pre_name(tokenizer))
        w.add_array("tokenizer.ggml.tokens", gw.GGUF_STRING, tokens)
        w.add_array("tokenizer.ggml.token_type", gw.GGUF_INT32, types)
        w.add_array("tokenizer.ggml.merges", gw.GGUF_STRING, merges)
        unk = None

    def special(name):
        value = tok_config.get(name)
        if isinstance(value, dict):
            value = value.get("content")
        return ids.get(value) if value is not None else None

    eos_cfg = config.get("eos_token_id")
    found = {
        "bos": special("bos_token") if special("bos_token") is not None else config.get("bos_token_id"),
        "eos": special("eos_token") if special("eos_token") is not None else
        (eos_cfg[0] if isinstance(eos_cfg, list) else eos_cfg),
        "unknown": special("unk_token") if special("unk_token") is not None else unk,
        "padding": special("pad_token"),
    }
    for key, value in found.items():
        if value is not None:
            w.add_uint32(f"tokenizer.ggml.{key}_token_id", value)
    # convert_hf_to_gguf.py copies add_bos_token/add_eos_token from tokenizer_config.json, and writes
    # add_bos_token false for SmolLM's 49152-token vocabulary, whose tokenizer_config.json does not say.
    add_bos = tok_config.get("add_bos_token")
    if add_bos is None and not is_spm:
        add_bos = False
    if add_bos is not None:
        w.add_bool("tokenizer.ggml.add_bos_token", add_bos)
    if tok_config.get("add_eos_token") is not None:
        w.add_bool("tokenizer.ggml.add_eos_token", tok_config["add_eos_token"])
    if tok_config.get("chat_template"):
        w.add_string("tokenizer.chat_template", tok_config["chat_template"])


# ----------------------------------------------------------------------------------------------------------------


# The architectures written: general.architecture and the Hugging Face classes converted to it.
ARCHS = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "llama", "Gemma2ForCausalLM": "gemma2",
         "Gemma3ForCausalLM": "gemma3", "Phi3ForCausalLM": "phi3", "GPT2LMHeadModel": "gpt2"}


def add_gpt2_hparams(w, config):
    """conversion/gpt2.py GPT2Model.set_gguf_parameters: the context is n_ctx, the feed-forward 4 x n_embd."""
    w.add_uint32("gpt2.block_count", config["n_layer"])
    w.add_uint32("gpt2.context_length", config["n_ctx"])
    w.add_uint32("gpt2.embedding_length", config["n_embd"])
    w.add_uint32("gpt2.feed_forward_length", 4 * config["n_embd"])
    w.add_uint32("gpt2.attention.head_count", config["n_head"])
    w.add_float32("gpt2.attention.layer_norm_epsilon", config["layer_norm_epsilon"])


def gpt2_tensor_names(config):
    """(Hugging Face name, GGUF name) for GPT2LMHeadModel (gguf-py's tensor_mapping.py)."""
    names = [("transformer.wte.weight", "token_embd.weight"), ("transformer.wpe.weight", "position_embd.weight")]
    layer = [("ln_1", "attn_norm"), ("attn.c_attn", "attn_qkv"), ("attn.c_proj", "attn_output"), ("ln_2", "ffn_norm"),
             ("mlp.c_fc", "ffn_up"), ("mlp.c_proj", "ffn_down")]
    for i in range(config["n_layer"]):
        names += [(f"transformer.h.{i}.{hf}.{kind}", f"blk.{i}.{gg}.{kind}") for hf, gg in layer
                  for kind in ("weight", "bias")]
    names += [("transformer.ln_f.weight", "output_norm.weight"), ("transformer.ln_f.bias", "output_norm.bias")]
    return names


def add_hparams(w, arch, config):
    """The metadata each architecture's converter class writes (conversion/llama.py LlamaModel, gemma.py
    Gemma2Model and Gemma3Model, phi.py Phi3MiniModel), in their order where it matters to no one."""
    a = arch
    n_head = config["num_attention_heads"]
    n_embd = config["hidden_size"]
    head_dim = config.get("head_dim") or n_embd // n_head
    w.add_uint32(f"{a}.block_count", config["num_hidden_layers"])
    w.add_uint32(f"{a}.context_length", config["max_position_embeddings"])
    w.add_uint32(f"{a}.embedding_length", n_embd)
    w.add_uint32(f"{a}.feed_forward_length", config["intermediate_size"])
    w.add_uint32(f"{a}.attention.head_count", n_head)
    w.add_uint32(f"{a}.attention.head_count_kv", config.get("num_key_value_heads", n_head))
    if arch == "llama":  # (in the order these tools always wrote it: the files' bytes stay the same)
        w.add_float32("llama.rope.freq_base", config.get("rope_theta", 10000.0))
    w.add_float32(f"{a}.attention.layer_norm_rms_epsilon", config["rms_norm_eps"])
    if arch == "gemma2":
        # Gemma2Model writes no RoPE base (llama.cpp's default 10000 is Gemma 2's) and always both caps.
        w.add_uint32("gemma2.attention.key_length", head_dim)
        w.add_uint32("gemma2.attention.value_length", head_dim)
        w.add_float32("gemma2.attn_logit_softcapping", config["attn_logit_softcapping"])
        w.add_float32("gemma2.final_logit_softcapping", config["final_logit_softcapping"])
        w.add_uint32("gemma2.attention.sliding_window", config["sliding_window"])
    elif arch == "gemma3":
        w.add_float32("gemma3.rope.freq_base", config.get("rope_theta", 1000000.0))
        if config.get("rope_local_base_freq") is not None:
            w.add_float32("gemma3.rope.freq_base_swa", config["rope_local_base_freq"])
        scaling = config.get("rope_scaling") or {}
        if scaling.get("rope_type", scaling.get("type")) == "linear" and scaling.get("factor") is not None:
            w.add_string("gemma3.rope.scaling.type", "linear")
            w.add_float32("gemma3.rope.scaling.factor", scaling["factor"])
        w.add_uint32("gemma3.attention.key_length", head_dim)
        w.add_uint32("gemma3.attention.value_length", head_dim)
        if config.get("final_logit_softcapping"):
            w.add_float32("gemma3.final_logit_softcapping", config["final_logit_softcapping"])
        if config.get("sliding_window_pattern") != 1:
            w.add_uint32("gemma3.attention.sliding_window", config["sliding_window"])
    elif arch == "phi3":
        rot = config.get("partial_rotary_factor", 1.0)
        w.add_uint32("phi3.rope.scaling.original_context_length", config["original_max_position_embeddings"])
        w.add_uint32("phi3.rope.dimension_count", int(rot * n_embd) // n_head)
        w.add_float32("phi3.rope.freq_base", config.get("rope_theta", 10000.0))
        w.add_uint32("phi3.attention.sliding_window", config.get("sliding_window") or 0)
        if (config.get("rope_scaling") or {}).get("long_factor"):
            raise ValueError("Phi-3 LongRoPE (rope_factors_long/short) is not converted here")


def llama3_rope_factors(config):
    """rope_freqs.weight for a Llama 3 RoPE scaling (rope_type "llama3"), as conversion/llama.py's
    generate_extra_tensors computes it: the pairs' frequencies in float32, then per pair 1 (wavelength under
    original_max_position_embeddings / high_freq_factor), the factor (over ... / low_freq_factor), or
    1 / ((1 - smooth) / factor + smooth) between; None for any other scaling. llama.cpp divides each pair's angle
    by its factor, and the file then has no rope.scaling.type."""
    scaling = config.get("rope_scaling") or {}
    if str(scaling.get("rope_type", scaling.get("type", ""))).lower() != "llama3":
        return None
    base = config.get("rope_theta", 10000.0)
    dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    freqs = np.float32(1.0) / (np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))
    factor = scaling.get("factor", 8.0)
    low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
    old = scaling.get("original_max_position_embeddings", 8192)
    factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / float(freq)
        if wavelen < old / high:
            factors.append(1.0)
        elif wavelen > old / low:
            factors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def tensor_names(arch, config, tensors):
    """(Hugging Face name, GGUF name) of every tensor written (gguf-py's tensor_mapping.py for the arch)."""
    gemma = arch in ("gemma2", "gemma3")
    names = [("model.embed_tokens.weight", "token_embd.weight")]
    for i in range(config["num_hidden_layers"]):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        layer = [("input_layernorm.weight", "attn_norm.weight")]
        if arch == "phi3":
            layer.append(("self_attn.qkv_proj.weight", "attn_qkv.weight"))
        else:
            layer += [("self_attn.q_proj.weight", "attn_q.weight"), ("self_attn.k_proj.weight", "attn_k.weight"),
                      ("self_attn.v_proj.weight", "attn_v.weight")]
        layer.append(("self_attn.o_proj.weight", "attn_output.weight"))
        if arch == "gemma3":
            layer += [("self_attn.q_norm.weight", "attn_q_norm.weight"),
                      ("self_attn.k_norm.weight", "attn_k_norm.weight")]
        if gemma:
            layer += [("post_attention_layernorm.weight", "post_attention_norm.weight"),
                      ("pre_feedforward_layernorm.weight", "ffn_norm.weight")]
        else:
            layer.append(("post_attention_layernorm.weight", "ffn_norm.weight"))
        if arch == "phi3":
            layer.append(("mlp.gate_up_proj.weight", "ffn_up.weight"))
        else:
            layer += [("mlp.gate_proj.weight", "ffn_gate.weight"), ("mlp.up_proj.weight", "ffn_up.weight")]
        layer.append(("mlp.down_proj.weight", "ffn_down.weight"))
        if gemma:
            layer.append(("post_feedforward_layernorm.weight", "post_ffw_norm.weight"))
        names += [(p + hf, b + gg) for hf, gg in layer]
    names.append(("model.norm.weight", "output_norm.weight"))
    # Gemma 2's converter skips lm_head (llama.cpp takes the output from the embedding).
    if "lm_head.weight" in tensors and arch != "gemma2":
        names.append(("lm_head.weight", "output.weight"))
    return names


def convert(folder, out_path, requested, pre_override=None, name=None):
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    hf_class = config.get("architectures", ["LlamaForCausalLM"])[0]
    if hf_class not in ARCHS:
        raise ValueError(f"{folder}: {hf_class} is not converted; these are: {sorted(ARCHS)}")
    arch = ARCHS[hf_class]
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    n_head = config.get("num_attention_heads", config.get("n_head"))
    n_head_kv = config.get("num_key_value_heads", n_head)

    w = gw.GGUFWriter()
    w.add_string("general.architecture", arch)
    w.add_string("general.name", name or os.path.basename(os.path.normpath(folder)))
    if arch == "gpt2":
        if config.get("n_inner") not in (None, 4 * config["n_embd"]):
            raise ValueError(f"{folder}: n_inner {config['n_inner']}: llama.cpp's converter writes 4 x n_embd")
        add_gpt2_hparams(w, config)
    else:
        add_hparams(w, arch, config)
    w.add_uint32("general.file_type", gw.LLAMA_FTYPES[requested])
    w.add_uint32(f"{arch}.vocab_size", config["vocab_size"])
    if arch == "llama":
        w.add_uint32("llama.rope.dimension_count", config.get("head_dim") or config["hidden_size"] // n_head)
    add_tokenizer(w, folder, config, pre_override)

    names = gpt2_tensor_names(config) if arch == "gpt2" else tensor_names(arch, config, tensors)
    unused = set(tensors) - {hf for hf, _ in names} - ({"lm_head.weight"} if arch == "gemma2" else set())
    if unused:
        raise ValueError(f"{folder}: tensors not converted: {sorted(unused)}")
    # The converter's extra tensors come first (ModelBase.prepare_tensors).
    factors = llama3_rope_factors(config) if arch == "llama" else None
    if factors is not None:
        w.add_tensor("rope_freqs.weight", factors.shape, "F32", gw.encode_tensor(factors, "F32"))
    for hf, gg in names:
        data = tensors[hf].astype(np.float32)
        if arch == "llama" and gg.endswith("attn_q.weight"):
            data = permute(data, n_head, n_head)
        elif arch == "llama" and gg.endswith("attn_k.weight"):
            data = permute(data, n_head, n_head_kv)
        elif arch in ("gemma2", "gemma3") and hf.endswith("norm.weight"):
            data = data + np.float32(1)  # Gemma's RMSNorm scales by 1 + w: the converter stores 1 + w
        elif arch == "gpt2" and data.ndim == 2 and hf.endswith(("c_attn.weight", "c_proj.weight", "c_fc.weight")):
            data = np.ascontiguousarray(data.T)  # Conv1D [in, out] to [out, in] rows (GPT2Model.modify_tensors)
        kind = storage_type(gg, data.shape, requested)
        w.add_tensor(gg, data.shape, kind, gw.encode_tensor(data, kind))
    w.write(out_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--type", default="F32", choices=["F32", "F16", "BF16", "Q8_0", "Q4_K"])
    ap.add_argument("--pre", help="tokenizer.ggml.pre to write for a tokenizer.json whose pre-tokenizer is not known")
    ap.add_argument("--name", help="general.name (default: the folder's name)")
    args = ap.parse_args()
    convert(args.model_dir, args.out, args.type, args.pre, args.name)


if __name__ == "__main__":
    main()
