"""Interventions on the torch reference models (transformer_torch.py, decoder_torch.py) through their hooks,
TransformerLens style: the reference the engine's head ablation, activation patching, metrics and sweeps
(issue 43) are checked against. Everything runs in float64 on the weights as stored, widened exactly.

Sites, for layer l in [0, layers):
  resid_pre  [n, d]  the residual stream entering layer l (l = 0: the embeddings as the first layer receives
                     them: BERT/DistilBERT after the embedding LayerNorm, Gemma after the sqrt(d) scaling,
                     ViT the patch + class + position embeddings)
  z          [n, heads, head_dim]  each head's attention output before the output projection,
                     z_h = softmax(scores_h) V_h (grouped-query decoders: per query head, V of its group)
  attn_out   [n, d]  what the attention block adds to the residual stream: the output projection of z plus its
                     bias (Gemma: after its post-attention norm; BERT/DistilBERT, post-LN: the projection plus
                     bias before the add-and-LayerNorm)
  mlp_out    [n, d]  what the MLP adds to the residual stream (Gemma: after its post-FFN norm; BERT/DistilBERT:
                     before the add-and-LayerNorm)

Definitions:
  Head ablation on a run: z of head (l, h) replaced, at every position, by 0 (zero), by its mean over the
    run's positions (mean: per head_dim component, over all n positions of the same run), or by the z of the
    same head in a second input's run of the same token count (resample). Any set of heads at once.
    Conventions: the mean is taken over the z that the ablated run itself computes at layer l, so with a set
    of heads the ablations of earlier layers are already in effect (heads of the same layer are all replaced
    from that layer's z before any of them is changed); the resample source is the second input's run without
    any ablation.
  Patching: a run of the corrupted input in which one activation is replaced by the clean run's: resid_pre of
    layer l at position p; z of head (l, h) at every position, or at position p only; attn_out or mlp_out of
    layer l at position p. The clean values come from the clean input's run without any intervention.
  The measured logits: causal models (GPT-2, decoders) at the last position unless a position is given;
    BERT/DistilBERT at a [MASK] position (the fixture puts a [MASK] id in the input and records the position);
    ViT: the classifier's logits (class token).
  Metrics on the measured logits: logit = logits[answer]; logprob = log_softmax(logits)[answer];
    logit_diff = logits[answer] - logits[wrong]; kl = KL(P_clean || P_run) = sum P_clean (log P_clean - log P_run)
    (natural log, softmax of the logits; for kl the "clean" distribution is always the clean run's).
  Normalised recovery of a patch: (metric(patched) - metric(corrupted)) / (metric(clean) - metric(corrupted));
    for kl, metric(clean) = 0: (kl(patched) - kl(corrupted)) / (0 - kl(corrupted)).
"""

import json
import os
import struct
import zlib

import numpy as np
import torch

from tools.parity import decoder_torch as dt
from tools.parity import transformer_torch as tt
from tools.safetensors_io import read_safetensors

SITES = ("resid_pre", "z", "attn_out", "mlp_out")
ABLATION_MODES = ("zero", "mean", "resample")
METRICS = ("logit", "logprob", "logit_diff", "kl")


# ---------------------------------------------------------------- loading

def read_png(path):
    """An 8-bit RGB PNG without interlace whose rows all use filter 0 (what make_transformer_fixtures.write_png
    and this package write): [h, w, 3] uint8."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, colour, interlace) == (8, 2, 0), path
            size = (h, w)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    h, w = size
    raw = zlib.decompress(idat)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(h, 1 + 3 * w)
    assert (rows[:, 0] == 0).all(), f"{path}: a row filter other than 0"
    return rows[:, 1:].reshape(h, w, 3).copy()


def vit_pixels(rgb, preprocessor):
    """ViTImageProcessor on an image already of the model's size: x / 255, then (x - image_mean) / image_std
    per channel; [1, 3, h, w] float64."""
    size = preprocessor["size"]
    assert rgb.shape[:2] == (size["height"], size["width"]), "no resize: the image is the model's size"
    assert abs(preprocessor.get("rescale_factor", 1 / 255) - 1 / 255) < 1e-12
    x = rgb.transpose(2, 0, 1).astype(np.float64) / 255.0
    mean = np.array(preprocessor["image_mean"], dtype=np.float64)[:, None, None]
    std = np.array(preprocessor["image_std"], dtype=np.float64)[:, None, None]
    return torch.from_numpy((x - mean) / std)[None]


class Model:
    """A model folder loaded into the torch reference (float64), run on one input with an optional hook.

    family: "bert", "distilbert", "gpt2", "vit" or "decoder"; layers, heads: the model's shape. An input is a
    list of token ids, or for ViT a [1, 3, h, w] pixel tensor."""

    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        self.config = config
        weights, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
        state = {k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()}
        model_type = config.get("model_type")
        if model_type in ("bert", "distilbert", "gpt2", "vit"):
            self.family = model_type
            self.module = self._transformer(config, state)
            if model_type == "vit":
                with open(os.path.join(folder, "preprocessor_config.json")) as f:
                    self.preprocessor = json.load(f)
        else:
            self.family = "decoder"
            self.module = dt.build(config)
            self.module.load_state_dict({k: v.to(torch.float64) for k, v in state.items()}, strict=True)
        self.module = self.module.double().eval()
        if self.family == "decoder":
            c = self.module.cfg
            self.layers, self.heads, self.head_dim = c.layers, c.heads, c.head_dim
        elif self.family == "distilbert":
            self.layers, self.heads = config["n_layers"], config["n_heads"]
        elif self.family == "gpt2":
            self.layers, self.heads = config["n_layer"], config["n_head"]
        else:
            self.layers, self.heads = config["num_hidden_layers"], config["num_attention_heads"]

    def _transformer(self, config, state):
        family = config["model_type"]
        c = tt.Config(config)
        if family == "bert":
            module = tt.BertForMaskedLM(c)
            tied = ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias")
        elif family == "distilbert":
            module = tt.DistilBertForMaskedLM(c)
            tied = ("vocab_projector.weight",)
        elif family == "gpt2":
            module = tt.GPT2LMHeadModel(c)
            tied = ("lm_head.weight",)
            state = {k if k.startswith(("transformer.", "lm_head.")) else "transformer." + k: v
                     for k, v in state.items()}
        else:
            if "num_labels" not in c:
                c["num_labels"] = len(c.get("id2label", {})) or 2
            module = tt.ViTForImageClassification(c)
            tied = ()
        missing, unexpected = module.load_state_dict(state, strict=False)
        assert not unexpected, unexpected
        assert all(k in tied or k.endswith((".attn.bias", ".attn.masked_bias")) for k in missing), missing
        return module

    def forward(self, inputs, hook=None):
        """The full logits: text models [n, vocab], ViT [labels]."""
        with torch.no_grad():
            if self.family == "decoder":
                return self.module(torch.tensor(inputs, dtype=torch.long), hook=hook)["logits"]
            if self.family == "vit":
                return self.module(inputs, output_attentions=False, hook=hook)["logits"][0]
            ids = torch.tensor([inputs], dtype=torch.long)
            return self.module(input_ids=ids, output_attentions=False, hook=hook)["logits"][0]

    def measured(self, inputs, position, hook=None):
        """The measured logits row (float64): text models at `position`, ViT the class logits."""
        logits = self.forward(inputs, hook)
        return logits if self.family == "vit" else logits[position]


# ---------------------------------------------------------------- hooks

def cache(model, inputs):
    """Every site's value in a run without intervention: {(site, layer): tensor}."""
    store = {}

    def hook(site, layer, t):
        store[(site, layer)] = t.detach().clone()

    model.forward(inputs, hook)
    return store


def ablation_hook(heads, mode, source=None):
    """heads: [(layer, head)]; mode zero / mean / resample; source: the second input's cache (resample)."""
    assert mode in ABLATION_MODES, mode
    by_layer = {}
    for layer, head in heads:
        by_layer.setdefault(layer, []).append(head)

    def hook(site, layer, z):
        if site != "z" or layer not in by_layer:
            return None
        out = z.clone()
        for h in by_layer[layer]:
            if mode == "zero":
                out[:, h] = 0.0
            elif mode == "mean":
                out[:, h] = z[:, h].mean(dim=0, keepdim=True).expand_as(z[:, h])
            else:
                assert source[("z", layer)].shape == z.shape, "resample needs the same token count"
                out[:, h] = source[("z", layer)][:, h]
        return out

    return hook


def patch_hook(clean, patches):
    """patches: [(site, layer, head or None, position or None)]: each activation replaced by the clean run's
    (clean: its cache); head only for z; position None = every position."""
    def hook(site, layer, t):
        mine = [p for p in patches if p[0] == site and p[1] == layer]
        if not mine:
            return None
        out = t.clone()
        src = clean[(site, layer)]
        assert src.shape == t.shape, "patching needs the same token count"
        for _, _, head, position in mine:
            index = (slice(None) if position is None else position,)
            if head is not None:
                index += (head,)
            out[index] = src[index]
        return out

    return hook


# ---------------------------------------------------------------- metrics

def metric(name, logits, answer, wrong=None, clean_logits=None):
    logits = logits.to(torch.float64)
    if name == "logit":
        return float(logits[answer])
    if name == "logprob":
        return float(torch.log_softmax(logits, -1)[answer])
    if name == "logit_diff":
        return float(logits[answer] - logits[wrong])
    if name == "kl":
        p_log = torch.log_softmax(clean_logits.to(torch.float64), -1)
        q_log = torch.log_softmax(logits, -1)
        return float((p_log.exp() * (p_log - q_log)).sum())
    raise ValueError(name)


def recovery(patched, corrupted, clean):
    return (patched - corrupted) / (clean - corrupted)
