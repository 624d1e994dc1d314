#!/usr/bin/python3
"""Writes the intervention fixtures (issue 43): tests/data/interventions/<case>.json, one per model folder,
from the torch reference with hooks (interventions_torch.py, whose docstring defines every intervention and
metric), in float64 over the committed weights as stored (widened exactly, as the parity fixtures read them).

Cases: the transformer fixtures gpt2, bert, distilbert, vit (tests/data/transformers/), the shipped
induction-gpt2 (resources/models/) and every decoder fixture but stories260k (tests/data/decoders/).

Each JSON ("format": "attnscope-intervention-fixture-1"):
  case, model (the folder, relative to the repository root), family ("bert", "distilbert", "gpt2", "vit",
  "decoder"), model_type, layers, heads, tokens (n)
  clean_ids, corrupt_ids      [n] token ids as run_ids takes them (special tokens included), equal length;
                              ViT instead: clean_image, corrupt_image (PNG paths relative to the repository
                              root) and pixels (how the PNG becomes the model's input)
  corrupted_positions         where the two inputs differ (ViT: the changed region [x, y, w, h] in pixels)
  position                    the measured position (ViT: 0, the class token)
  answer, wrong               token ids (ViT: class indices): answer = the clean run's top prediction, wrong =
                              the corrupted run's (always another one here: every corruption moves the top)
  clean_logits, corrupt_logits  [vocab] (ViT: [labels]) the measured logits of the two runs
  metrics                     {"clean": {logit, logprob, logit_diff}, "corrupt": {logit, logprob, logit_diff, kl}}
  ablations                   on the clean input: [{"heads": [[l, h], ...], "mode": "zero" | "mean" |
                              "resample", "logits": [vocab]}]; resample's source is the corrupted input
  sweeps                      on the corrupted input with the clean run's activations, normalised recovery:
      heads               [layers][heads]     z of head (l, h) at every position, logit_diff
      heads_positions     [layers][heads][n]  z of head (l, h) at position p, logit_diff
      layers_positions    [layers][n]         resid_pre of layer l at position p, logit_diff
      attn_out_positions  [layers][n]         attn_out of layer l at position p, logit_diff
      mlp_out_positions   [layers][n]         mlp_out of layer l at position p, logit_diff
      heads_logprob       [layers][heads]     as heads, logprob
      heads_kl            [layers][heads]     as heads, kl: (kl(patched) - kl(corrupt)) / (0 - kl(corrupt))

Floats are rounded to 9 significant digits. Inputs come from seeded generators: the output is deterministic.
Before writing, the script checks the torch reference against the committed parity fixtures (maps and logits,
with no hook and with a hook that returns every value unchanged), that patching any single activation of a
clean run with its own value leaves the logits bit-identical, and that patching resid_pre of layer 0 at every
position into the corrupted run recovers exactly 1.

    /usr/bin/python3 -m tools.parity.make_intervention_fixtures
"""

import json
import math
import os
import sys

import numpy as np
import torch

from tools.parity import interventions_torch as it
from tools.parity.make_transformer_fixtures import write_png
from tools.safetensors_io import read_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "interventions")

TRANSFORMERS = ("gpt2", "bert", "distilbert", "vit")
DECODERS = ("llama", "llama-dynamic", "llama-tied-linear-bf16", "llama-yarn-bias-bf16", "llama3-rope-f16",
            "mistral-window", "phi3-fused-partial", "qwen2-bias", "qwen3-head-dim", "gemma2-softcap",
            "gemma3-local-global")

# A corruption must move the prediction clearly: every recovery divides by these differences.
MIN_LOGIT_DIFF_CHANGE = 1.0
MIN_LOGPROB_CHANGE = 0.1
MIN_KL = 0.01
ATTEMPTS = 200
PIXELS = ("x / 255, then (x - image_mean) / image_std per channel (the case's preprocessor_config.json); "
          "the images are the model's 32x32, so no resize")


def f9(x):
    x = float(x)
    assert math.isfinite(x), x
    return float(f"{x:.9g}")


def rounded(a):
    if isinstance(a, torch.Tensor):
        a = a.tolist()
    if isinstance(a, (list, tuple)):
        return [rounded(v) for v in a]
    return f9(a)


def rel(path):
    return os.path.relpath(path, ROOT)


# ---------------------------------------------------------------- checks against the parity fixtures

def identity_hook(site, layer, t):
    return t.clone()


def check_transformer_fixture(model, expected_dir):
    """The torch reference with and without an identity hook against expected.json / expected.safetensors."""
    with open(os.path.join(expected_dir, "expected.json")) as f:
        expected = json.load(f)
    tensors, _ = read_safetensors(os.path.join(expected_dir, "expected.safetensors"))
    for run in expected["runs"]:
        if model.family == "vit":
            kw = {"pixel_values": it.vit_pixels(it.read_png(os.path.join(expected_dir, run["image"])),
                                                model.preprocessor)}
        else:
            kw = {"input_ids": torch.tensor([run["ids"]])}
            if model.family == "bert" and "type_ids" in run:
                kw["token_type_ids"] = torch.tensor([run["type_ids"]])
            if "attention_mask" in run:
                kw["attention_mask"] = torch.tensor([run["attention_mask"]])
        with torch.no_grad():
            plain = model.module(**kw, output_attentions=True)
            hooked = model.module(**kw, output_attentions=True, hook=identity_hook)
        assert torch.equal(plain["logits"], hooked["logits"]), run["name"]
        for layer, a in enumerate(plain["attentions"]):
            assert torch.equal(a, hooked["attentions"][layer])
            want = tensors[f"{run['name']}.attn.{layer}"]
            diff = np.abs(a[0].float().numpy() - want).max()
            assert diff <= 1e-6, (run["name"], layer, diff)
        for pred in run["predictions"]:
            row = plain["logits"][0] if model.family == "vit" else plain["logits"][0, pred["position"]]
            for top in pred["top"]:
                diff = abs(float(row[top["id"]]) - top["logit"])
                assert diff <= 1e-12 * max(1.0, abs(top["logit"])), (run["name"], diff)


def check_decoder_fixture(model, folder):
    with open(os.path.join(folder, "expected.json")) as f:
        expected = json.load(f)
    ids = torch.tensor(expected["prompt"])
    with torch.no_grad():
        plain = model.module(ids)
        hooked = model.module(ids, hook=identity_hook)
    assert torch.equal(plain["logits"], hooked["logits"])
    want = torch.tensor(expected["logits"], dtype=torch.float64)
    diff = ((plain["logits"] - want).abs() / want.abs().clamp(min=1.0)).max().item()
    assert diff <= 1e-6, ("logits", diff)
    for layer, a in enumerate(plain["attentions"]):
        assert torch.equal(a, hooked["attentions"][layer])
        diff = (a - torch.tensor(expected["attentions"][layer], dtype=torch.float64)).abs().max().item()
        assert diff <= 1e-6, (layer, diff)


def check_sites(model, case, inputs):
    """Where the hooks sit, checked from the definitions on one run: z of head h equals A_h V_h (the run's
    attention map times the values of its key/value group, from the layer's input), the output projection of z
    is attn_out (Gemma: after its post-attention norm), and resid_pre, attn_out and mlp_out rebuild the
    layer's output (pre-LN: their sum; BERT/DistilBERT: the two add-and-LayerNorms)."""
    store = {}

    def hook(site, layer, t):
        store[(site, layer)] = t.detach().clone()

    m, f = model.module, model.family
    with torch.no_grad():
        if f == "decoder":
            out = m(torch.tensor(inputs), hook=hook)
            maps, outputs = out["attentions"], out["hidden"]
        else:
            kw = {"pixel_values": inputs} if f == "vit" else {"input_ids": torch.tensor([inputs])}
            out = m(**kw, output_attentions=True, output_hidden_states=True, hook=hook)
            maps, outputs = [a[0] for a in out["attentions"]], [h[0] for h in out["hidden_states"][1:]]

        def close(a, b, what):
            diff = (a - b).abs().max().item()
            assert diff <= 1e-10 * max(1.0, b.abs().max().item()), (case, what, diff)

        for layer in range(model.layers):
            x, z = store[("resid_pre", layer)], store[("z", layer)]
            ao, mo = store[("attn_out", layer)], store[("mlp_out", layer)]
            n, heads, hd = z.shape
            if f == "decoder":
                blk = m.model.layers[layer]
                att = blk.self_attn
                h_in = blk.input_layernorm(x)
                c = m.cfg
                if c.fused:
                    v = att.qkv_proj(h_in)[:, (c.heads + c.kv_heads) * hd:]
                else:
                    v = att.v_proj(h_in)
                v = v.view(n, c.kv_heads, hd).transpose(0, 1)
                group = c.heads // c.kv_heads
                values = [v[h // group] for h in range(heads)]
                proj = (lambda t, blk=blk: blk.post_attention_layernorm(blk.self_attn.o_proj(t))) if c.gemma \
                    else att.o_proj
            elif f == "gpt2":
                blk = m.transformer.h[layer]
                d = x.shape[-1]
                v = blk.attn.c_attn(blk.ln_1(x)[None])[0, :, 2 * d:]
                values = [v[:, h * hd:(h + 1) * hd] for h in range(heads)]
                proj = blk.attn.c_proj
            elif f == "bert":
                blk = m.bert.encoder.layer[layer]
                v = blk.attention.self.value(x)
                values = [v[:, h * hd:(h + 1) * hd] for h in range(heads)]
                proj = blk.attention.output.dense
            elif f == "distilbert":
                blk = m.distilbert.transformer.layer[layer]
                v = blk.attention.v_lin(x)
                values = [v[:, h * hd:(h + 1) * hd] for h in range(heads)]
                proj = blk.attention.out_lin
            else:
                blk = m.vit.encoder.layer[layer]
                v = blk.attention.attention.value(blk.layernorm_before(x))
                values = [v[:, h * hd:(h + 1) * hd] for h in range(heads)]
                proj = blk.attention.output.dense
            for h in range(heads):
                close(maps[layer][h] @ values[h], z[:, h], f"z of head {h} at layer {layer}")
            close(proj(z.reshape(1, n, heads * hd))[0], ao, f"attn_out at layer {layer}")
            if f == "bert":
                a = blk.attention.output.LayerNorm(ao + x)
                after = blk.output.LayerNorm(mo + a)
            elif f == "distilbert":
                after = blk.output_layer_norm(mo + blk.sa_layer_norm(ao + x))
            else:
                after = x + ao + mo
                if f == "gpt2" and layer == model.layers - 1:
                    after = m.transformer.ln_f(after)
            close(after, outputs[layer], f"the output of layer {layer}")


# ---------------------------------------------------------------- inputs

def choose(model, position, clean, corrupt):
    """(answer, wrong, metrics) when the corruption moves the prediction clearly, else None."""
    a = model.measured(clean, position)
    b = model.measured(corrupt, position)
    answer = int(a.argmax())
    wrong = int(b.argmax())
    if wrong == answer:
        return None
    m = metrics(a, b, answer, wrong)
    if (m["clean"]["logit_diff"] - m["corrupt"]["logit_diff"] < MIN_LOGIT_DIFF_CHANGE
            or abs(m["clean"]["logprob"] - m["corrupt"]["logprob"]) < MIN_LOGPROB_CHANGE
            or m["corrupt"]["kl"] < MIN_KL):
        return None
    return answer, wrong, m


def metrics(clean_row, corrupt_row, answer, wrong):
    def of(row, with_kl):
        out = {name: it.metric(name, row, answer, wrong, clean_row) for name in ("logit", "logprob", "logit_diff")}
        if with_kl:
            out["kl"] = it.metric("kl", row, answer, wrong, clean_row)
        return out

    return {"clean": of(clean_row, False), "corrupt": of(corrupt_row, True)}


def corrupt_ids(g, ids, candidates, ordinary):
    out = list(ids)
    count = 1 + int(torch.randint(0, 2, (1,), generator=g))
    where = sorted(candidates[i] for i in torch.randperm(len(candidates), generator=g)[:count].tolist())
    for p in where:
        while out[p] == ids[p]:
            out[p] = ordinary[int(torch.randint(0, len(ordinary), (1,), generator=g))]
    return out, where


def text_inputs(model, case, seed, specials):
    """IOI-style: a random clean sequence, the corrupted one differs at 1-2 positions; the first seed whose
    corruption moves the prediction clearly. specials: {"cls", "sep", "mask", "bos"} ids where the family has
    them; ordinary tokens are every other id."""
    g = torch.Generator().manual_seed(seed)
    vocab = model.config["vocab_size"]
    ordinary = [i for i in range(vocab) if i not in specials.get("exclude", ())]
    for _ in range(ATTEMPTS):
        n = int(torch.randint(8, 13, (1,), generator=g))
        body = [ordinary[i] for i in torch.randint(0, len(ordinary), (n,), generator=g).tolist()]
        if model.family in ("bert", "distilbert"):
            ids = [specials["cls"]] + body[:n - 2] + [specials["sep"]]
            position = int(torch.randint(1, n - 1, (1,), generator=g))
            ids[position] = specials["mask"]
            candidates = [p for p in range(1, n - 1) if p != position]
        else:
            ids = ([specials["bos"]] + body[:n - 1]) if "bos" in specials else body
            position = n - 1
            # Not the measured position itself: what the corruption changes reaches it through attention.
            candidates = list(range(1 if "bos" in specials else 0, n - 1))
        bad, where = corrupt_ids(g, ids, candidates, ordinary)
        found = choose(model, position, ids, bad)
        if found:
            return ids, bad, where, position, found
    raise AssertionError(f"{case}: no corruption in {ATTEMPTS} attempts moves the prediction clearly")


def induction_inputs(model, seed):
    """The bundled induction model on its own task: 12 distinct random letters A, then A's first 8 again (20
    tokens: shorter copies are not copied with confidence, the model was trained on 24 bytes and more): the
    clean run continues the copy (A's ninth letter); the corrupted input changes that letter in the first copy
    (IOI-style), so the corrupted run copies the new one."""
    g = torch.Generator().manual_seed(seed)
    letters = list(range(ord("a"), ord("z") + 1))
    for _ in range(ATTEMPTS):
        order = torch.randperm(len(letters), generator=g).tolist()
        first = [letters[i] for i in order[:12]]
        k = 8
        ids = first + first[:k]
        bad = list(ids)
        bad[k] = letters[order[12]]
        found = choose(model, len(ids) - 1, ids, bad)
        if found:
            return ids, bad, [k], len(ids) - 1, found
    raise AssertionError("induction-gpt2: no corruption moves the prediction clearly")


def vit_inputs(model, folder, seed):
    """The case's image.png and a copy with a square region painted one colour (seeded); the first that moves
    the prediction clearly, written as tests/data/interventions/vit-corrupt.png."""
    rgb = it.read_png(os.path.join(folder, "image.png"))
    clean = it.vit_pixels(rgb, model.preprocessor)
    g = torch.Generator().manual_seed(seed)
    h, w, _ = rgb.shape
    for _ in range(ATTEMPTS):
        side = int(torch.randint(8, 17, (1,), generator=g))
        x, y = (int(v) for v in torch.randint(0, w - side + 1, (2,), generator=g))
        colour = torch.randint(0, 256, (3,), generator=g).numpy().astype(np.uint8)
        bad = rgb.copy()
        bad[y:y + side, x:x + side] = colour
        found = choose(model, 0, clean, it.vit_pixels(bad, model.preprocessor))
        if found:
            return rgb, bad, [x, y, side, side], found
    raise AssertionError("vit: no region change moves the prediction clearly")


# ---------------------------------------------------------------- interventions

def self_check(model, case, clean, corrupt, position, clean_row, corrupt_row, answer, wrong, clean_cache, n):
    """Patching any single activation of the clean run with its own value changes nothing (bit-identical);
    resid_pre of layer 0 at every position at once turns the corrupted run into the clean one (recovery 1)."""
    for layer in range(model.layers):
        for site in ("resid_pre", "attn_out", "mlp_out"):
            for p in range(n):
                row = model.measured(clean, position, it.patch_hook(clean_cache, [(site, layer, None, p)]))
                assert torch.equal(row, clean_row), (case, site, layer, p)
        for h in range(model.heads):
            for p in [None] + list(range(n)):
                row = model.measured(clean, position, it.patch_hook(clean_cache, [("z", layer, h, p)]))
                assert torch.equal(row, clean_row), (case, "z", layer, h, p)
    row = model.measured(corrupt, position, it.patch_hook(clean_cache, [("resid_pre", 0, None, None)]))
    assert torch.equal(row, clean_row), case
    for name in ("logit", "logprob", "logit_diff"):
        r = it.recovery(it.metric(name, row, answer, wrong), it.metric(name, corrupt_row, answer, wrong),
                        it.metric(name, clean_row, answer, wrong))
        assert r == 1.0, (case, name, r)
    kl = it.metric("kl", row, answer, wrong, clean_row)
    assert kl == 0.0 or abs(kl) < 1e-15, (case, kl)


def ablations(model, g, clean, corrupt, position, clean_row):
    source = it.cache(model, corrupt)
    L, H = model.layers, model.heads

    def head(layer):
        return [layer, int(torch.randint(0, H, (1,), generator=g))]

    singles = [head(int(torch.randint(0, L, (1,), generator=g))) for _ in range(3)]
    # A set of three heads across the layers: one in the first layer, two distinct heads in the last.
    last = torch.randperm(H, generator=g)[:2].tolist()
    group = [head(0), [L - 1, last[0]], [L - 1, last[1]]]
    plans = [([singles[0]], "zero"), ([singles[1]], "mean"), ([singles[2]], "resample"),
             (group, "zero"), (group, "mean"), (group, "resample")]
    out = []
    for heads, mode in plans:
        row = model.measured(clean, position, it.ablation_hook([tuple(x) for x in heads], mode, source))
        assert (row - clean_row).abs().max().item() > 1e-9, (heads, mode, "the ablation changes nothing")
        out.append({"heads": heads, "mode": mode, "logits": rounded(row)})
    return out


def sweeps(model, case, clean, corrupt, position, clean_row, corrupt_row, answer, wrong, clean_cache, n):
    m_clean = {k: it.metric(k, clean_row, answer, wrong, clean_row) for k in it.METRICS}
    m_corrupt = {k: it.metric(k, corrupt_row, answer, wrong, clean_row) for k in it.METRICS}
    assert m_clean["kl"] == 0.0
    for k in it.METRICS:
        d = m_clean[k] - m_corrupt[k]
        assert math.isfinite(d) and abs(d) > 1e-3, (case, k, d)

    def patched(patches, name="logit_diff"):
        row = model.measured(corrupt, position, it.patch_hook(clean_cache, patches))
        r = it.recovery(it.metric(name, row, answer, wrong, clean_row), m_corrupt[name], m_clean[name])
        assert math.isfinite(r), (case, patches, name)
        return r

    L, H = model.layers, model.heads
    out = {"heads": [], "heads_positions": [], "layers_positions": [], "attn_out_positions": [],
           "mlp_out_positions": [], "heads_logprob": [], "heads_kl": []}
    for layer in range(L):
        heads, logprob, kl, heads_pos = [], [], [], []
        for h in range(H):
            row = model.measured(corrupt, position, it.patch_hook(clean_cache, [("z", layer, h, None)]))
            rec = {k: it.recovery(it.metric(k, row, answer, wrong, clean_row), m_corrupt[k], m_clean[k])
                   for k in ("logit_diff", "logprob", "kl")}
            heads.append(rec["logit_diff"])
            logprob.append(rec["logprob"])
            kl.append(rec["kl"])
            heads_pos.append([patched([("z", layer, h, p)]) for p in range(n)])
        out["heads"].append(heads)
        out["heads_logprob"].append(logprob)
        out["heads_kl"].append(kl)
        out["heads_positions"].append(heads_pos)
        for site, key in (("resid_pre", "layers_positions"), ("attn_out", "attn_out_positions"),
                          ("mlp_out", "mlp_out_positions")):
            out[key].append([patched([(site, layer, None, p)]) for p in range(n)])
    return {k: rounded(v) for k, v in out.items()}


def make_case(case, folder, seed):
    model = it.Model(folder)
    g = torch.Generator().manual_seed(seed)
    record = {"format": "attnscope-intervention-fixture-1", "case": case, "model": rel(folder),
              "family": model.family, "model_type": model.config["model_type"],
              "layers": model.layers, "heads": model.heads}
    if model.family == "vit":
        check_transformer_fixture(model, folder)
        rgb, bad_rgb, region, found = vit_inputs(model, folder, seed)
        corrupt_png = os.path.join(OUT, "vit-corrupt.png")
        write_png(corrupt_png, bad_rgb)
        assert np.array_equal(it.read_png(corrupt_png), bad_rgb)
        clean = it.vit_pixels(it.read_png(os.path.join(folder, "image.png")), model.preprocessor)
        corrupt = it.vit_pixels(it.read_png(corrupt_png), model.preprocessor)
        position, n = 0, int(it.cache(model, clean)[("resid_pre", 0)].shape[0])
        record.update(clean_image=rel(os.path.join(folder, "image.png")), corrupt_image=rel(corrupt_png),
                      pixels=PIXELS, corrupted_positions=region)
    else:
        if case == "induction-gpt2":
            check_transformer_fixture(model, os.path.join(ROOT, "tests", "data", "transformers", case))
            clean, corrupt, where, position, found = induction_inputs(model, seed)
        elif model.family == "decoder":
            check_decoder_fixture(model, folder)
            specials = {"bos": model.config["bos_token_id"],
                        "exclude": {model.config["bos_token_id"], model.config["eos_token_id"], 0}}
            clean, corrupt, where, position, found = text_inputs(model, case, seed, specials)
        elif model.family == "gpt2":
            check_transformer_fixture(model, folder)
            with open(os.path.join(folder, "vocab.json")) as f:
                vocab = json.load(f)
            specials = {"exclude": {vocab["<|endoftext|>"]}}
            clean, corrupt, where, position, found = text_inputs(model, case, seed, specials)
        else:
            check_transformer_fixture(model, folder)
            with open(os.path.join(folder, "vocab.txt")) as f:
                vocab = {t: i for i, t in enumerate(f.read().split("\n"))}
            specials = {"cls": vocab["[CLS]"], "sep": vocab["[SEP]"], "mask": vocab["[MASK]"],
                        "exclude": {vocab[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")}}
            clean, corrupt, where, position, found = text_inputs(model, case, seed, specials)
        n = len(clean)
        record.update(clean_ids=clean, corrupt_ids=corrupt, corrupted_positions=where)
    answer, wrong, m = found
    clean_row, corrupt_row = model.measured(clean, position), model.measured(corrupt, position)
    check_sites(model, case, clean)
    clean_cache = it.cache(model, clean)
    self_check(model, case, clean, corrupt, position, clean_row, corrupt_row, answer, wrong, clean_cache, n)
    record.update(tokens=n, position=position, answer=answer, wrong=wrong, clean_logits=rounded(clean_row),
                  corrupt_logits=rounded(corrupt_row),
                  metrics={k: {name: f9(v) for name, v in d.items()} for k, d in m.items()})
    record["ablations"] = ablations(model, g, clean, corrupt, position, clean_row)
    record["sweeps"] = sweeps(model, case, clean, corrupt, position, clean_row, corrupt_row, answer, wrong,
                              clean_cache, n)
    path = os.path.join(OUT, f"{case}.json")
    with open(path, "w") as f:
        json.dump(record, f, separators=(",", ":"))
        f.write("\n")
    size = os.path.getsize(path)
    assert size < 150 * 1024, (case, size)
    print(f"{case}: n {n}, answer {answer}, wrong {wrong}, logit_diff {m['clean']['logit_diff']:.3f} -> "
          f"{m['corrupt']['logit_diff']:.3f}, kl {m['corrupt']['kl']:.3f}, {size / 1024:.0f} KiB")


def cases():
    out = []
    for c in TRANSFORMERS:
        out.append((c, os.path.join(ROOT, "tests", "data", "transformers", c)))
    out.append(("induction-gpt2", os.path.join(ROOT, "resources", "models", "induction-gpt2")))
    for c in DECODERS:
        out.append((c, os.path.join(ROOT, "tests", "data", "decoders", c)))
    return out


def main():
    torch.set_num_threads(1)
    only = set(sys.argv[1:])
    os.makedirs(OUT, exist_ok=True)
    for seed, (case, folder) in enumerate(cases(), start=1):
        if not only or case in only:
            make_case(case, folder, 4300 + seed)


if __name__ == "__main__":
    main()
