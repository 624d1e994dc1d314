#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora, tests/fuzz/corpus/<target>/, from the project's own test data and
resources plus a few files built here (tokenizer.json, attention dumps, settings). Run it again after a
format changes; the corpora are committed and stay small (a few KB per target). JPEG and WebP seeds cannot be
written with the standard library: corpus/image/opencv-* were written by OpenCV 4.6's imwrite (see
corpus/README.md), and this script leaves them alone.

Parts of one input are separated by 0x1E (tests/fuzz/fuzz_util.h): vocab.txt 0x1E text [0x1E flags], ...
"""
import json
import os
import shutil
import struct

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(TOP, "tests", "data")
RES = os.path.join(TOP, "resources")
OUT = os.path.join(TOP, "tests", "fuzz", "corpus")
SEP = b"\x1e"

TEXTS = [
    "Hello, world! The unaffable runner's café.",
    "she ate the apples in the garden",
    "中文 mixed with ASCII, émigré naïve — 123 4.5e6",
    "  leading  and trailing   spaces \t tab\nnewline ",
    "[CLS] hello [SEP] [MASK] <|endoftext|> don't we'll they're",
]


def read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


def put(target, name, data):
    folder = os.path.join(OUT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---------------------------------------------------------------------------------------------------------
# safetensors by hand, for every dtype (tools/safetensors_io.py writes only the four the models use)

DTYPE_SIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
              "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, raw bytes)] in data order."""
    header, blobs, offset = {}, [], 0
    for name, dtype, shape, raw in tensors:
        count = 1
        for d in shape:
            count *= d
        assert len(raw) == count * DTYPE_SIZE[dtype], name
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def f16(values):
    return struct.pack("<%de" % len(values), *values)


def bf16(values):
    return b"".join(struct.pack("<f", v)[2:] for v in values)


def rows_summing_to_one(heads, rows, cols, seed):
    out = []
    for h in range(heads):
        for i in range(rows):
            row = [1.0 + ((seed + 7 * h + 3 * i + j) % 5) for j in range(cols)]
            s = sum(row)
            out += [v / s for v in row]
    return out


def make_safetensors():
    for name in ["valid_bf16", "valid_f16", "valid_rank0", "valid_zero_elements", "gap", "overlap", "duplicate_key",
                 "trailing_bytes", "not_utf8", "shape_overflow", "metadata_not_string"]:
        put("safetensors", name + ".safetensors", read(DATA, "safetensors", name + ".safetensors"))
    put("safetensors", "every_dtype.safetensors", safetensors(
        [("a.f32", "F32", [2, 3], f32([0.5, -1, 2, 3.25, 1e-3, 7])),
         ("b.f64", "F64", [2], struct.pack("<2d", 1.5, -2.5)),
         ("c.f16", "F16", [3], f16([1, -0.5, 65504])),
         ("d.bf16", "BF16", [1, 2], bf16([3.0, -4.0])),
         ("e.i64", "I64", [2], struct.pack("<2q", 1, -1)),
         ("f.u8", "U8", [4], bytes([0, 1, 2, 255])),
         ("g.bool", "BOOL", [2], bytes([0, 1])),
         ("h.i32", "I32", [], struct.pack("<i", 42)),
         ("i.f8", "F8_E4M3", [2], bytes([0x38, 0xB8]))],
        {"format": "pt", "note": "every dtype"}))
    put("safetensors", "empty_header.safetensors", safetensors([], None))
    put("safetensors", "matrix_f32.safetensors", safetensors(
        [("weight", "F32", [3, 2], f32([1, 2, 3, 4, 5, 6])), ("bias", "F32", [2], f32([0.1, 0.2]))]))


def make_config():
    for rel in ["transformers/bert/config.json", "transformers/distilbert/config.json", "transformers/gpt2/config.json",
                "transformers/vit/config.json", "seq2seq/random-bahdanau/config.json",
                "seq2seq/random-luong-local-p/config.json", "classifier/random-pooling/config.json",
                "classifier/random-hierarchical/config.json", "captioner/random-soft/config.json",
                "captioner/random-hard/config.json"]:
        put("config", rel.replace("/", "-"), read(DATA, rel))
    put("config", "induction-gpt2-config.json", read(RES, "models", "induction-gpt2", "config.json"))
    put("config", "bert-legacy-keys.json", json.dumps({
        "architectures": ["BertForSequenceClassification"], "hidden_size": 8, "num_attention_heads": 2,
        "num_hidden_layers": 1, "intermediate_size": 16, "vocab_size": 30, "max_position_embeddings": 16,
        "hidden_act": "gelu_new", "id2label": {"0": "NEGATIVE", "1": "POSITIVE"}, "layer_norm_eps": 1e-12}))


def make_wordpiece():
    vocab = read(DATA, "transformers", "bert", "vocab.txt")
    for k, text in enumerate(TEXTS):
        put("wordpiece", "bert-%d" % k, vocab + SEP + text.encode())
    put("wordpiece", "bert-cased-no-specials", vocab + SEP + TEXTS[4].encode() + SEP + bytes([0x20 | 0x08 | 0x10]))
    put("wordpiece", "bert-short-words", vocab + SEP + TEXTS[0].encode() + SEP + bytes([0x40 | 0x01 | 0x04]))
    put("wordpiece", "crlf-vocab", b"[UNK]\r\n[CLS]\r\n[SEP]\r\nhello\r\n##s\r\nworld\r\n" + SEP + b"hellos world")


def make_bpe():
    vocab = read(DATA, "transformers", "gpt2", "vocab.json")
    merges = read(DATA, "transformers", "gpt2", "merges.txt")
    for k, text in enumerate(TEXTS):
        put("bpe", "gpt2-%d" % k, vocab + SEP + merges + SEP + text.encode())
    put("bpe", "gpt2-prefix-unk", vocab + SEP + merges + SEP + TEXTS[2].encode() + SEP + bytes([0x03]))
    induction = os.path.join(RES, "models", "induction-gpt2")
    put("bpe", "induction", read(induction, "vocab.json") + SEP + read(induction, "merges.txt") + SEP +
        b"A B C D A B C D")


def make_tokenizer_json():
    vocab_lines = read(DATA, "transformers", "bert", "vocab.txt").decode().splitlines()
    wp_vocab = {t: i for i, t in enumerate(vocab_lines)}
    added = [{"id": wp_vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
             if t in wp_vocab]
    wordpiece = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing"},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": wp_vocab},
    }
    for k, text in enumerate(TEXTS[:3]):
        put("tokenizer_json", "wordpiece-%d" % k, json.dumps(wordpiece).encode() + SEP + text.encode())

    bpe_vocab = json.loads(read(DATA, "transformers", "gpt2", "vocab.json"))
    merges = [m for m in read(DATA, "transformers", "gpt2", "merges.txt").decode().splitlines()
              if m and not m.startswith("#version")]
    bpe = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": bpe_vocab["<|endoftext|>"], "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": True, "special": True}]
        if "<|endoftext|>" in bpe_vocab else [],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": bpe_vocab,
                  "merges": merges},
    }
    put("tokenizer_json", "bpe-strings", json.dumps(bpe).encode() + SEP + TEXTS[4].encode())
    bpe["model"]["merges"] = [m.split(" ") for m in merges]
    bpe["pre_tokenizer"]["add_prefix_space"] = True
    put("tokenizer_json", "bpe-pairs", json.dumps(bpe).encode() + SEP + TEXTS[0].encode())


def make_attention_dump():
    tokens = ["[CLS]", "hello", "world", "[SEP]"]
    meta = {"format": "attnscope.attn", "version": "1", "tokens": json.dumps(tokens),
            "spans": json.dumps([[0, 0], [0, 5], [6, 11], [0, 0]]), "model": "fuzz seed"}
    put("attention_dump", "encoder-f32-f16.attn.safetensors", safetensors(
        [("attn.encoder.0", "F32", [2, 4, 4], f32(rows_summing_to_one(2, 4, 4, 0))),
         ("attn.encoder.1", "F16", [2, 4, 4], f16(rows_summing_to_one(2, 4, 4, 1)))], meta))
    cross_rows = ["<s>", "bonjour", "</s>"]
    put("attention_dump", "decoder-cross-bf16.attn.safetensors", safetensors(
        [("attn.cross.0", "BF16", [1, 3, 4], bf16(rows_summing_to_one(1, 3, 4, 2))),
         ("attn.decoder.0", "F32", [4, 4], f32(rows_summing_to_one(1, 4, 4, 3))),
         ("attn.encoder.0", "F64", [1, 1, 4, 4], struct.pack("<16d", *rows_summing_to_one(1, 4, 4, 4))),
         ("logits", "F32", [2], f32([0.25, 0.75]))],
        {"tokens": json.dumps(tokens), "cross_rows": json.dumps(cross_rows)}))
    put("attention_dump", "nan-and-negative.attn.safetensors", safetensors(
        [("attn.encoder.0", "F32", [1, 2, 2], f32([float("nan"), -1.0, float("inf"), 0.0]))],
        {"tokens": json.dumps(["a", "b"])}))


def make_image():
    for name in ["rgb-3x2.png", "rgba-3x2.png", "grey16-3x2.png", "iccp-3x2.png", "rgb-3x2.bmp", "topdown-3x2.bmp",
                 "rgb-3x2-le.tif", "rgb-3x2-be.tif", "truncated.bmp", "huge-header.png"]:
        put("image", name, read(DATA, "images", name))


def make_glimpse_settings():
    def settings(family, **stn):
        base = {"family": family,
                "no_shear": {"scale_x": 0.5, "shift_x": 0.1, "scale_y": 0.6, "shift_y": -0.2},
                "similarity": {"scale": 0.5, "rotation": 0.3, "shift_x": 0.0, "shift_y": 0.1},
                "translation_scale": {"scale": 0.4, "shift_x": -0.3, "shift_y": 0.2},
                "affine": [0.5, 0.1, 0.0, -0.1, 0.5, 0.2], "theta": [1, 0, 0, 0, 1, 0],
                "out_w": 8, "out_h": 6, "sampling": "bilinear", "padding": "zeros"}
        base.update(stn)
        return {"format": "attnscope.glimpse", "version": 1, "image": {"width": 24, "height": 16, "path": "a.png"},
                "gaussian": {"x": {"first": 2.0, "stride": 2.5, "sigma": 1.0, "n": 6},
                             "y": {"first": 1.0, "stride": 2.0, "sigma": 0.8, "n": 5}, "gamma": 1.0},
                "draw": {"gx_tilde": 0, "gy_tilde": 0, "log_sigma2": 0, "log_delta_tilde": 0, "log_gamma": 0,
                         "nx": 6, "ny": 5, "exact": False},
                "stn": base, "same_window": False}
    put("glimpse_settings", "affine.json", json.dumps(settings("affine"), indent=2))
    put("glimpse_settings", "no-shear-nearest.json",
        json.dumps(settings("no-shear", sampling="nearest", padding="border")))
    put("glimpse_settings", "similarity-specs", json.dumps(settings("similarity")).encode() + SEP +
        b"cx=12,cy=8,N=5,d=2,s=1,gamma=1.5" + SEP + b"family=similarity,scale=0.5,rotation=30deg,tx=0.1,ty=0,w=8,h=8")
    put("glimpse_settings", "translation-draw-specs", json.dumps(settings("translation-scale")).encode() + SEP +
        b"gx~=0.1,gy~=-0.2,logsigma2=0,logdelta~=-1,loggamma=0,Nx=4,Ny=3" + SEP +
        b"family=affine,theta=0.5;0;0.1;0;0.5;-0.1,sampling=nearest,padding=border")
    put("glimpse_settings", "specs-only", SEP + b"ux=1,uy=2,dx=1.5,dy=2,sx=0.5,sy=0.7,Nx=3,Ny=4" + SEP +
        b"family=no-shear,sx=0.5,sy=0.5,tx=0.2,ty=-0.2")


def make_lab_request():
    base = {"query": "she ate the apples", "source": "The apple fell from the tree. She ate it.",
            "mechanism": "global", "score": "scaled-dot", "normaliser": "softmax", "temperature": 1.0, "window": 2,
            "sigma": -1.0, "heads": 4, "hops": 3, "classes": 3, "causal": False, "positions": "none", "seed": 42,
            "dim": 16}
    variants = [
        {}, {"mechanism": "local-p", "window": 1, "sigma": 0.5}, {"mechanism": "local-m"},
        {"mechanism": "hard-sample", "seed": 7}, {"mechanism": "multi-head", "heads": 2, "causal": True,
                                                 "positions": "sinusoidal"},
        {"mechanism": "multi-head-pooling", "heads": 4}, {"mechanism": "multi-hop", "hops": 2},
        {"mechanism": "hierarchical"}, {"mechanism": "aoa"}, {"mechanism": "capsule", "classes": 2},
        {"mechanism": "gated", "score": "concat", "normaliser": "sparsemax", "temperature": 0.5},
        {"mechanism": "location", "positions": "learned"}, {"mechanism": "self", "score": "cosine"},
        {"mechanism": "pooling"}, {"mechanism": "hard-argmax", "score": "general"},
        {"mechanism": "rot-hop", "source": "after a week the [battery life] is great but the screen is dim"},
        {"mechanism": "ian", "source": "the [screen] is dim"},
        {"mechanism": "rot-hop", "source": "a [nested [target]] and ] stray", "_name": "rot-hop-bad-markup"},
        {"mechanism": "capsule-routing", "iterations": 4}, {"mechanism": "linformer", "rank": 3},
        {"mechanism": "synth-mixture", "rank": 3}, {"mechanism": "synth-random-factorized", "rank": 3},
        {"mechanism": "reformer", "buckets": 6, "chunk": 2, "hashes": 3},
        {"mechanism": "reformer", "buckets": 0, "chunk": 0, "_name": "reformer-zero-buckets"},
        {"mechanism": "transformer-xl", "segment": 3, "layers": 2},
        {"mechanism": "capsule-multi-head", "heads": 4, "classes": 2},
        {"mechanism": "convs2s", "layers": 3}, {"mechanism": "pooling", "shuffle": True, "_name": "pooling-shuffle"},
    ]
    for k, v in enumerate(variants):
        request = dict(base)
        request.update(v)
        name = request.pop("_name", request["mechanism"])
        put("lab_request", "lab-%02d-%s.json" % (k, name), json.dumps(request, indent=2))


def make_session():
    lab = {"query": "she ate the apples in the garden",
           "source": "The apple fell from the tree. She picked it up in the garden and ate it.",
           "mechanism": "global", "score": "scaled-dot", "normaliser": "softmax", "temperature": 1.0, "window": 2,
           "sigma": -1.0, "heads": 4, "hops": 3, "classes": 3, "causal": False, "positions": "none", "seed": 42,
           "dim": 64}
    glimpse = json.loads(open(os.path.join(OUT, "glimpse_settings", "affine.json")).read())

    def session(tab, **changes):
        tabs = {
            "alignment": {"model": "date-bahdanau", "text": "Saturday, 21 November 2026", "beam": 1,
                          "hypothesis": 0, "step": 0, "colormap": "viridis"},
            "caption": {"model": "caption-soft", "input": {"scene": 1}, "beam": 3, "hypothesis": 0, "word": 0,
                        "overlay": {"sigma": 8.0, "opacity": 0.8, "colormap": "inferno", "threshold": 0.15,
                                    "style": "colour"}, "per_row": 5},
            "lab": {"request": lab, "colormap": "viridis", "unit_range": False, "map": 0},
            "glimpse": {"image": {"sample": "astronaut"}, "image_width": 24, "image_height": 16,
                        "settings": glimpse, "write": False, "edit_stn": False},
            "transformer": {"source": "", "text": "", "pair": "", "image": {"sample": "astronaut"}, "layer": 0,
                            "head": 0, "view": "head", "matrix": "head",
                            "rollout": {"fusion": "mean", "discard_ratio": 0.0, "residual": 0.5},
                            "overlay": {"source": "rollout", "alpha": 0.65}, "line_threshold": 0.01,
                            "colormap": "viridis"},
        }
        for section, values in changes.items():
            tabs[section] = values if values is None else dict(tabs[section], **values)
        return {"format": "attnscope.session", "version": 1, "tab": tab,
                "tabs": {k: v for k, v in tabs.items() if v is not None}}

    put("session", "default.attnscope.json", json.dumps(session("alignment"), indent=2) + "\n")
    put("session", "changed.attnscope.json", json.dumps(session(
        "transformer",
        alignment={"model": "/models/my-seq2seq", "text": "1 May 2000", "beam": 4, "hypothesis": 2, "step": 3,
                   "colormap": "magma"},
        caption={"input": {"file": "/photos/cat.jpg"}, "beam": 1, "word": 2,
                 "overlay": {"sigma": 0.0, "opacity": 1.0, "colormap": "greys", "threshold": 0.95,
                             "style": "light-mask"}},
        lab={"unit_range": True, "map": 3, "colormap": "plasma"},
        glimpse={"image": {"file": "/photos/cat.png"}, "write": True, "edit_stn": True},
        transformer={"source": "induction-gpt2", "text": "A B C A B", "layer": 1, "head": 1, "view": "matrix",
                     "matrix": "rollout", "rollout": {"fusion": "max", "discard_ratio": 0.9, "residual": 1.0},
                     "overlay": {"source": "head", "alpha": 0.0}, "line_threshold": 0.5, "colormap": "cividis"}),
        indent=2))
    put("session", "lab-only.attnscope.json", json.dumps(session(
        "lab", alignment=None, caption=None, glimpse=None, transformer=None)))
    put("session", "caption-sample.attnscope.json", json.dumps(session(
        "caption", caption={"input": {"sample": "chelsea"}}, transformer={"view": "overlay", "text": "x"})))


def make_tokenizer_config():
    for rel in ["transformers/bert/tokenizer_config.json", "transformers/distilbert/tokenizer_config.json"]:
        put("tokenizer_config", rel.replace("/", "-"), read(DATA, rel))
    put("tokenizer_config", "every-field.json", json.dumps({
        "do_lower_case": False, "tokenize_chinese_chars": True, "strip_accents": None, "add_prefix_space": True,
        "model_max_length": 512, "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]"}, indent=2) + "\n")
    put("tokenizer_config", "wrong-type.json", '{"do_lower_case": "yes", "strip_accents": 1}\n')


def make_tokenizer_model():
    """text 0x1E tokenizer.model: llama2.c's tok512 (no normalization map) and the bad corpus's small model with a
    precompiled_charsmap (tools/bad/make_bad_corpus.py), each with a text its map or its pieces touch."""
    put("tokenizer_model", "tok512", TEXTS[0].encode() + SEP + read(DATA, "tokenizers", "tok512.model"))
    put("tokenizer_model", "charsmap-small", "\uff21 \ufb01\u2460 a fine day".encode() + SEP +
        read(DATA, "bad", "tokenizer-models", "charsmap-small.model"))


def make_sharded_index():
    weight_map = {f"model.layers.{i}.weight": f"model-{i // 2 + 1:05d}-of-00002.safetensors" for i in range(4)}
    put("sharded_index", "two-shards.json", json.dumps({"metadata": {"total_size": 4096}, "weight_map": weight_map},
                                                       indent=2) + "\n")
    put("sharded_index", "one-shard.json", '{"weight_map": {"a": "real.safetensors", "b": "real.safetensors"}}\n')
    put("sharded_index", "outside.json", '{"weight_map": {"a": "../elsewhere.safetensors"}}\n')


def make_decoder_config():
    decoders = os.path.join(DATA, "decoders")
    for name in sorted(os.listdir(decoders)):
        if os.path.exists(os.path.join(decoders, name, "config.json")):
            put("decoder_config", name + ".json", read(decoders, name, "config.json"))


# ---------------------------------------------------------------------------------------------------------
# GGUF by hand: small files with every value type and a tensor of each block geometry the reader checks
# (tools/gguf/gguf_writer.py writes whole models; the seeds stay a few hundred bytes so the fuzzer mutates headers)

def gguf_string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf(kvs, tensors, version=3, alignment=32):
    """kvs: [(key, type, payload bytes)]; tensors: [(name, ne, ggml type, data bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, vtype, payload in kvs:
        out += gguf_string(key) + struct.pack("<I", vtype) + payload
    offsets, at = [], 0
    for name, ne, gtype, data in tensors:
        offsets.append(at)
        out += gguf_string(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
        out += struct.pack("<IQ", gtype, at)
        at = (at + len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * (-len(out) % alignment)
    start = len(out)
    for (name, ne, gtype, data), off in zip(tensors, offsets):
        out += b"\0" * (start + off - len(out)) + data
    return out


def make_gguf():
    kvs = [("general.architecture", 8, gguf_string("llama")), ("llama.block_count", 4, struct.pack("<I", 1)),
           ("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
           ("tokenizer.ggml.add_bos_token", 7, b"\x01"), ("general.count", 10, struct.pack("<Q", 1 << 40)),
           ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + gguf_string("<unk>") + gguf_string("a") +
            gguf_string("\xe2\x96\x81b")),
           ("tokenizer.ggml.scores", 9, struct.pack("<IQ3f", 6, 3, 0.0, -1.0, -2.0))]
    f32 = struct.pack("<8f", *range(8))
    f16 = struct.pack("<4H", 0x3C00, 0xC000, 0x7C00, 0x0001)
    q8_0 = struct.pack("<H", 0x3C00) + bytes(range(32))                     # one block: f16 scale, 32 int8
    q4_k = struct.pack("<HH", 0x3C00, 0x3800) + bytes(range(12)) + bytes(128)  # one super-block of 256
    put("gguf", "f32-f16.gguf", gguf(kvs, [("token_embd.weight", [4, 2], 0, f32), ("output_norm.weight", [4], 1, f16)]))
    put("gguf", "q8_0.gguf", gguf(kvs[:2], [("blk.0.attn_q.weight", [32, 1], 8, q8_0)]))
    put("gguf", "q4_k.gguf", gguf(kvs[:1], [("blk.0.ffn_down.weight", [256, 1], 12, q4_k)], version=2))
    put("gguf", "aligned-64.gguf", gguf(kvs[:1] + [("general.alignment", 4, struct.pack("<I", 64))],
                                        [("a", [8], 0, f32), ("b", [8], 0, f32)], alignment=64))
    put("gguf", "no-tensors.gguf", gguf(kvs, []))


def main():
    keep = {}
    image_dir = os.path.join(OUT, "image")
    if os.path.isdir(image_dir):  # the OpenCV-written seeds survive a rewrite
        for name in os.listdir(image_dir):
            if name.endswith((".jpg", ".webp")) or name.startswith("opencv-"):
                keep[name] = read(image_dir, name)
    for target in ["safetensors", "config", "wordpiece", "bpe", "tokenizer_json", "attention_dump", "image",
                   "glimpse_settings", "lab_request", "session", "tokenizer_config", "sharded_index", "decoder_config",
                   "tokenizer_model", "gguf"]:
        shutil.rmtree(os.path.join(OUT, target), ignore_errors=True)
    make_safetensors()
    make_config()
    make_wordpiece()
    make_bpe()
    make_tokenizer_json()
    make_attention_dump()
    make_image()
    for name, data in keep.items():
        put("image", name, data)
    make_glimpse_settings()
    make_lab_request()
    make_session()
    make_tokenizer_config()
    make_sharded_index()
    make_decoder_config()
    make_tokenizer_model()
    make_gguf()


if __name__ == "__main__":
    main()
