#!/usr/bin/python3
"""Writes the transformer parity fixtures: tests/data/transformers/<case>/, each a loadable model folder.

Every case is a small random model (2 layers, d 64, 4 heads, FFN 128, a vocabulary of about 100 entries)
built with transformer_torch.py, whose parameter names are Hugging Face's:

  config.json, model.safetensors (+ vocab.txt / vocab.json + merges.txt, tokenizer_config.json;
  ViT: preprocessor_config.json and image.png), and
  expected.json          runs: ids, type ids, attention mask, text, predictions (top 5: id, probability, logit)
  expected.safetensors   <run>.attn.<layer> [heads, n, n], <run>.hidden.<i> [n, d] (float32; computed in
                         float64 by torch), ViT: image.pixels [3, 32, 32] (the PNG's bytes / 255)

Cases: induction-gpt2 (the shipped resources/models/induction-gpt2: expectations only, "model" names the folder), bert (BertForMaskedLM names, tied decoder absent), bert_legacy (`bert.` prefix, LayerNorm.gamma/beta,
untied copy of the decoder, pooler + seq_relationship present, float16 storage), bert_bare (BertModel
without prefix, pooler), distilbert (DistilBertForMaskedLM, sinusoidal positions), gpt2 (hub layout: no
prefix, attn.bias / attn.masked_bias buffers, lm_head absent), vit (ViTForImageClassification, id2label).

    /usr/bin/python3 -m tools.parity.make_transformer_fixtures [out_dir]
"""

import json
import math
import os
import re
import struct
import sys
import zlib

import numpy as np
import torch

from tools.parity import transformer_torch as tt
from tools.safetensors_io import read_safetensors, write_safetensors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data", "transformers")

SMALL = dict(hidden=64, heads=4, layers=2, intermediate=128)
POSITIONS = 32

# ---------------------------------------------------------------- files

def write_png(path, rgb):
    """8-bit RGB PNG (no filter) with zlib: rgb is [h, w, 3] uint8."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------- vocabularies

WORDS = ("the a an cat cats dog dogs sat sit on mat is was are it he she they we you i and or but of to in "
         "with for at by from up down over under play run jump walk talk house tree big small red blue green "
         "happy sad good bad old new day night sun moon water fire book table chair door window car road "
         "city river bird fish eat ate see saw hello world this that very not").split()
WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'"] + WORDS + \
    ["##s", "##ing", "##ed", "##er", "##ly"]


def wp_ids(tokens):
    return [WORDPIECE.index(t) for t in tokens]


B2U = tt.bytes_to_unicode()
MERGES = [("Ġ", "t"), ("h", "e"), ("a", "t"), ("Ġt", "he"), ("Ġ", "c"), ("Ġc", "at"), ("Ġ", "s"), ("Ġs", "at"),
          ("Ġ", "o"), ("Ġo", "n"), ("Ġ", "m"), ("Ġm", "at"), ("t", "he"), ("Ġ", "d"), ("o", "g"), ("Ġd", "og"),
          ("Ġ", "w"), ("a", "s"), ("Ġw", "as"), ("Ġ", "h"), ("a", "p"), ("p", "y"), ("Ġh", "ap"), ("Ġhap", "py"),
          ("i", "n"), ("Ġ", "r"), ("u", "n"), ("Ġr", "un"), ("Ġ", "a"), ("n", "d"), ("Ġa", "nd")]
BPE_VOCAB = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [".", ",", "!", "?", "'", "Ġ"] + \
    ["".join(m) for m in MERGES] + ["<|endoftext|>"]


def bpe_word(word):
    parts = list(word)
    ranks = {m: i for i, m in enumerate(MERGES)}
    while len(parts) > 1:
        pairs = [(ranks.get((parts[i], parts[i + 1]), 1 << 30), i) for i in range(len(parts) - 1)]
        rank, i = min(pairs)
        if rank == 1 << 30:
            break
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return parts


def bpe_ids(text):
    pattern = r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+"
    out = []
    for word in re.findall(pattern, text):
        mapped = "".join(B2U[b] for b in word.encode())
        out += [BPE_VOCAB.index(p) for p in bpe_word(mapped)]
    return out


# ---------------------------------------------------------------- models

def randomise(model, seed):
    """Weights large enough that attention is far from uniform and the FFN is non-linear."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name or "layer_norm" in name or "ln_" in name or "layernorm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(p.shape, generator=g))
            elif p.dim() == 4:  # ViT's patch projection (a conv)
                p.copy_(1.3 * torch.randn(p.shape, generator=g) / math.sqrt(p[0].numel()))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "embeddings" in name or name.endswith(("wte.weight", "wpe.weight", "cls_token")):
                p.copy_(0.8 * torch.randn(p.shape, generator=g))
            else:
                fan_in = p.shape[1] if "c_" not in name else p.shape[0]  # Conv1D is [in, out]
                p.copy_(1.3 * torch.randn(p.shape, generator=g) / math.sqrt(fan_in))


def round_to_half(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())


def state(model, drop=(), rename=None, dtype=np.float32):
    out = {}
    for k, v in model.state_dict().items():
        if k in drop:
            continue
        a = v.detach().cpu().numpy()
        if a.dtype == np.float32 or a.dtype == np.float64:
            a = a.astype(dtype)
        out[rename(k) if rename else k] = a
    return out


def expected_run(model, name, tensors, kwargs, family, top=5, mask_id=None):
    """Runs the model in float64; stores maps and hidden states; returns the run's JSON entry."""
    m64 = model.double()
    with torch.no_grad():
        out = m64(**kwargs, output_attentions=True, output_hidden_states=True)
    model.float()
    for layer, a in enumerate(out["attentions"]):
        tensors[f"{name}.attn.{layer}"] = a[0].float().numpy()
    for i, h in enumerate(out["hidden_states"]):
        tensors[f"{name}.hidden.{i}"] = h[0].float().numpy()
    entry = {"name": name, "tokens": int(out["attentions"][0].shape[-1])}
    preds = []
    if family in ("bert", "distilbert") and "logits" in out:
        ids = kwargs["input_ids"][0].tolist()
        for pos, tok in enumerate(ids):
            if tok == mask_id:
                preds.append(top_k(out["logits"][0, pos], pos, top))
    elif family == "gpt2":
        n = kwargs["input_ids"].shape[1]
        preds.append(top_k(out["logits"][0, n - 1], n - 1, top))
    elif family == "vit":
        preds.append(top_k(out["logits"][0], 0, top))
    entry["predictions"] = preds
    return entry


def expected_generation(model, name, tensors, prompt, steps):
    """Greedy generation by a full float64 forward per token (no cache: the reference the engine's cache must
    equal), then the final sequence's maps, hidden states and prediction stored as for a run."""
    ids = list(prompt)
    m64 = model.double()
    with torch.no_grad():
        for _ in range(steps):
            logits = m64(input_ids=ids_tensor(ids))["logits"][0, -1]
            ids.append(int(torch.argmax(logits)))
    model.float()
    kw = {"input_ids": ids_tensor(ids)}
    return text_entry(kw, dict(expected_run(model, name, tensors, kw, "gpt2"), prompt_tokens=len(prompt)))


def top_k(logits, position, k):
    p = torch.softmax(logits.double(), dim=-1)
    order = torch.argsort(logits, descending=True)[:k]
    return {"position": position,
            "top": [{"id": int(i), "probability": float(p[i]), "logit": float(logits[i])} for i in order]}


def text_entry(kwargs, extra):
    e = {"ids": kwargs["input_ids"][0].tolist()}
    if kwargs.get("token_type_ids") is not None:
        e["type_ids"] = kwargs["token_type_ids"][0].tolist()
    if kwargs.get("attention_mask") is not None:
        e["attention_mask"] = kwargs["attention_mask"][0].tolist()
    e.update(extra)
    return e


def ids_tensor(ids):
    return torch.tensor([ids], dtype=torch.long)


def save_case(case, files, weights, runs, tensors, weight_dtype="F32", generations=None):
    d = os.path.join(OUT, case)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    write_safetensors(os.path.join(d, "model.safetensors"), weights, {"format": "pt"})
    write_safetensors(os.path.join(d, "expected.safetensors"), tensors)
    for name, content in files.items():
        path = os.path.join(d, name)
        if isinstance(content, (dict, list)):
            write_json(path, content)
        elif isinstance(content, bytes):
            with open(path, "wb") as f:
                f.write(content)
        else:
            with open(path, "w") as f:
                f.write(content)
    expected = {"format": "attnscope-transformer-fixture-1", "case": case, "weights": weight_dtype, "runs": runs}
    if generations:
        expected["generations"] = generations
    write_json(os.path.join(d, "expected.json"), expected)


def wordpiece_files(cfg):
    return {"config.json": cfg, "vocab.txt": "\n".join(WORDPIECE) + "\n",
            "tokenizer_config.json": {"do_lower_case": True}}


def bert_runs(model, family, with_types=True):
    runs, tensors = [], {}
    mask = WORDPIECE.index("[MASK]")
    # 1. a pair with token types and a [MASK]; "playing" is two pieces.
    toks = ["[CLS]", "the", "cat", "is", "play", "##ing", "on", "the", "[MASK]", ".", "[SEP]",
            "it", "was", "happy", ".", "[SEP]"]
    types = [0] * 11 + [1] * 5
    kw = {"input_ids": ids_tensor(wp_ids(toks))}
    if with_types:
        kw["token_type_ids"] = ids_tensor(types)
    runs.append(text_entry(kw, expected_run(model, "mask", tensors, kw, family, mask_id=mask)))
    # 2. padding: three [PAD] keys masked out.
    toks = ["[CLS]", "the", "dog", "is", "[MASK]", "[SEP]", "[PAD]", "[PAD]", "[PAD]"]
    kw = {"input_ids": ids_tensor(wp_ids(toks)), "attention_mask": ids_tensor([1] * 6 + [0] * 3)}
    runs.append(text_entry(kw, expected_run(model, "padding", tensors, kw, family, mask_id=mask)))
    # 3. from text: run_text must tokenise to these ids.
    toks = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]", "hello", "world", "!", "[SEP]"]
    kw = {"input_ids": ids_tensor(wp_ids(toks))}
    if with_types:
        kw["token_type_ids"] = ids_tensor([0] * 9 + [1] * 4)
    runs.append(text_entry(kw, dict(expected_run(model, "text", tensors, kw, family, mask_id=mask),
                                    text="The cat sat on the mat.", pair="Hello world!")))
    return runs, tensors


def make_bert():
    cfg = tt.config("bert", vocab=len(WORDPIECE), positions=POSITIONS, **SMALL)
    model = tt.BertForMaskedLM(tt.Config(cfg))
    randomise(model, 1)
    runs, tensors = bert_runs(model, "bert")
    weights = state(model, drop=("cls.predictions.decoder.weight", "cls.predictions.decoder.bias"))
    save_case("bert", wordpiece_files(cfg), weights, runs, tensors)


def make_bert_legacy():
    cfg = tt.config("bert", vocab=len(WORDPIECE), positions=POSITIONS, architectures=["BertForPreTraining"],
                    **SMALL)
    model = tt.BertForMaskedLM(tt.Config(cfg))
    randomise(model, 2)
    round_to_half(model)
    runs, tensors = bert_runs(model, "bert")
    runs = [r for r in runs if r["name"] != "text"]
    tensors = {k: v for k, v in tensors.items() if not k.startswith("text.")}

    def old(k):
        return k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")

    weights = state(model, drop=("cls.predictions.decoder.bias",), rename=old, dtype=np.float16)
    g = np.random.default_rng(2)
    d = SMALL["hidden"]
    weights["bert.pooler.dense.weight"] = (g.standard_normal((d, d)) * 0.1).astype(np.float16)
    weights["bert.pooler.dense.bias"] = np.zeros(d, np.float16)
    weights["cls.seq_relationship.weight"] = (g.standard_normal((2, d)) * 0.1).astype(np.float16)
    weights["cls.seq_relationship.bias"] = np.zeros(2, np.float16)
    save_case("bert_legacy", wordpiece_files(cfg), weights, runs, tensors, "F16")


def make_bert_bare():
    cfg = tt.config("bert", vocab=len(WORDPIECE), positions=POSITIONS, architectures=["BertModel"], **SMALL)
    model = tt.BertModel(tt.Config(cfg), add_pooling_layer=True)
    randomise(model, 3)
    round_to_half(model)
    runs, tensors = [], {}
    toks = ["[CLS]", "the", "big", "red", "car", "[SEP]", "it", "is", "new", "[SEP]"]
    kw = {"input_ids": ids_tensor(wp_ids(toks)), "token_type_ids": ids_tensor([0] * 6 + [1] * 4)}
    runs.append(text_entry(kw, expected_run(model, "pair", tensors, kw, "bert_bare")))
    save_case("bert_bare", wordpiece_files(cfg), state(model, dtype=np.float16), runs, tensors, "F16")


def make_distilbert():
    cfg = tt.config("distilbert", vocab=len(WORDPIECE), positions=POSITIONS, sinusoidal_pos_embds=True, **SMALL)
    model = tt.DistilBertForMaskedLM(tt.Config(cfg))
    randomise(model, 4)
    with torch.no_grad():  # the sinusoidal table is fixed, not random
        model.distilbert.embeddings.position_embeddings.weight.copy_(tt.sinusoidal_table(POSITIONS, SMALL["hidden"]))
    runs, tensors = bert_runs(model, "distilbert", with_types=False)
    weights = state(model, drop=("vocab_projector.weight",))
    save_case("distilbert", wordpiece_files(cfg), weights, runs, tensors)


def make_gpt2():
    cfg = tt.config("gpt2", vocab=len(BPE_VOCAB), positions=POSITIONS, **SMALL)
    model = tt.GPT2LMHeadModel(tt.Config(cfg))
    randomise(model, 5)
    runs, tensors = [], {}
    text = "the cat sat on the mat. the dog was happy and ran"
    kw = {"input_ids": ids_tensor(bpe_ids(text))}
    runs.append(text_entry(kw, dict(expected_run(model, "text", tensors, kw, "gpt2"), text=text)))
    kw = {"input_ids": ids_tensor(bpe_ids(" the cat"))}
    runs.append(text_entry(kw, expected_run(model, "short", tensors, kw, "gpt2")))
    generations = [expected_generation(model, "generated", tensors, bpe_ids(" the cat"), 12)]
    weights = state(model, drop=("lm_head.weight",), rename=lambda k: k.removeprefix("transformer."))
    vocab = {t: i for i, t in enumerate(BPE_VOCAB)}
    merges = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES)
    files = {"config.json": cfg, "vocab.json": vocab, "merges.txt": merges}
    save_case("gpt2", files, weights, runs, tensors, generations=generations)


def make_induction():
    """The shipped resources/models/induction-gpt2 (tools/train/train_induction.py): expectations only; the
    weights stay in resources/models and expected.json names that folder ("model", relative to the source
    tree)."""
    folder = os.path.join(ROOT, "resources", "models", "induction-gpt2")
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    model = tt.GPT2LMHeadModel(tt.Config(cfg))
    weights, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    state_dict = {k: torch.from_numpy(v) for k, v in weights.items()}
    state_dict["lm_head.weight"] = state_dict["transformer.wte.weight"]
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    assert not unexpected and all(k.endswith((".attn.bias", ".attn.masked_bias")) for k in missing), missing
    runs, tensors = [], {}
    for name, text in (("twice", "qwhdkeiaplzmxncbvrtsu" * 2), ("separated", "attention|attention|atten")):
        kw = {"input_ids": ids_tensor(list(text.encode()))}
        runs.append(text_entry(kw, dict(expected_run(model, name, tensors, kw, "gpt2"), text=text)))
    generations = [expected_generation(model, "generated", tensors, list(b"attention|attention|atten"), 16)]
    d = os.path.join(OUT, "induction-gpt2")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    write_safetensors(os.path.join(d, "expected.safetensors"), tensors)
    write_json(os.path.join(d, "expected.json"),
               {"format": "attnscope-transformer-fixture-1", "case": "induction-gpt2", "weights": "F32",
                "model": "resources/models/induction-gpt2", "runs": runs, "generations": generations})


def make_vit():
    labels = {"0": "cat", "1": "dog", "2": "bird", "3": "fish"}
    cfg = tt.config("vit", image_size=32, patch_size=8, id2label=labels,
                    label2id={v: int(k) for k, v in labels.items()}, **SMALL)
    model = tt.build("vit", image_size=32, patch_size=8, id2label=labels, **SMALL)
    randomise(model, 6)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    # A smooth picture with some structure (a disc on a gradient), deterministic.
    y, x = np.mgrid[0:32, 0:32].astype(np.float64)
    r = np.clip(255 * x / 31, 0, 255)
    gch = np.clip(255 * y / 31, 0, 255)
    b = np.where((x - 20) ** 2 + (y - 12) ** 2 < 64, 230.0, 40.0)
    rgb = np.stack([r, gch, b], axis=-1).round().astype(np.uint8)
    pixels = rgb.transpose(2, 0, 1).astype(np.float64) / 255.0
    norm = (pixels - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]
    tensors = {"image.pixels": pixels.astype(np.float32)}
    kw = {"pixel_values": torch.from_numpy(norm[None])}
    runs = [dict(expected_run(model, "image", tensors, kw, "vit", top=3), image="image.png",
                 grid=[4, 4], labels=labels)]
    pre = {"do_normalize": True, "do_rescale": True, "do_resize": True, "image_mean": mean, "image_std": std,
           "resample": 2, "rescale_factor": 1 / 255, "size": {"height": 32, "width": 32},
           "image_processor_type": "ViTImageProcessor"}
    d = os.path.join(OUT, "vit")
    os.makedirs(d, exist_ok=True)
    save_case("vit", {"config.json": cfg, "preprocessor_config.json": pre}, state(model), runs, tensors)
    write_png(os.path.join(d, "image.png"), rgb)


def main():
    torch.set_num_threads(1)
    make_bert()
    make_bert_legacy()
    make_bert_bare()
    make_distilbert()
    make_gpt2()
    make_induction()
    make_vit()
    total = 0
    for root, _, files in os.walk(OUT):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(f"wrote {OUT}: {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
