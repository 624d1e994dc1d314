#!/usr/bin/python3
"""Writes the classifier attribution fixtures: tests/data/attribution/classifier/<case>.json, torch autograd's
gradient x input and integrated gradients of one label's logit with respect to the embedded words, for every
classifier of tests/data/classifier (the four tiny random models whose weights are there, and the shipped
resources/models/sentiment-* models; tools/parity/make_classifier_fixtures.py writes both).

The models are tools/train/classifier_torch.py's, loaded from the folders and run in float64 on the float32
weights, batch 1 (no padding, so packing changes nothing): the forward below starts at the embedded words
x [n, e] instead of the ids, so that autograd gives dF/dx. F is the logit of `label` (-1: the predicted one;
the other runs name a label, so that a label other than the prediction is explained too).

Each JSON ("format": "attnscope-classifier-attribution-1"):
  case, model (the folder, relative to the repo root), steps (integrated gradients' steps)
  runs: [{text, tokens (after truncation, as classifier_torch.prepare() makes them), label (the option),
          resolved (the label explained), value F(x), baseline_value F(0),
          grad_x_input [n] sum_e x * dF/dx,
          integrated_gradients [n] sum_e x * mean over alpha = (s + 1/2) / steps of dF/dx at alpha x,
          gap sum(integrated_gradients) - (value - baseline_value)}]

    /usr/bin/python3 -m tools.parity.make_classifier_attribution_fixtures
"""

import json
import os

import torch

from tools.train import classifier_torch as ct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "attribution", "classifier")

STEPS = 16

RANDOM_TEXTS = [
    ("The film was great.", -1),
    # Unknown words ("zebra", "?"), an apostrophe word, three sentences.
    ("The zebra wasn't good? I loved it!", 0),
    # Truncated (flat: 12 words; hierarchical: 3 sentences of at most 5 words).
    ("The food was not good and the service was very slow. I hated it. The movie was great! "
     "A very good film.", 1),
]

TRAINED_TEXTS = [
    ("The film was superb. We watched it on a Sunday evening with my sister.", -1),
    ("We went there on a friday night. The popcornish pasta was not good at all. Do they take reservations?", 0),
    ("I bought the kettle last march. The lid is truly dreadful.", 1),
]

CASES = [(f"random-{k}", f"tests/data/classifier/random-{k}", RANDOM_TEXTS)
         for k in ("pooling", "hierarchical", "lstm", "cnn")] + \
        [(f"sentiment-{k}", f"resources/models/sentiment-{k}", TRAINED_TEXTS)
         for k in ("pooling", "hierarchical", "lstm", "cnn")]


def f7(x):
    return float(f"{float(x):.7g}")


def logits_of(model, config, x, sentence):
    """The model's logits [labels] for the embedded words x [n, e] (float64), sentence ids per word."""
    kind = ct.kind_of(config)
    n = x.shape[0]
    if kind == "lstm":
        _, (h, _) = model.encoder.lstm(x[None])
        return model.classifier(h[0])[0]
    if kind == "cnn":
        a = torch.relu(model.conv(x.T[None]))             # [1, C, n]
        return model.classifier(a.max(dim=2).values)[0]
    mask = torch.ones(1, n, dtype=torch.bool)
    if kind == "attention-pooling":
        out, _ = model.encoder.gru(x[None])
        pooled, _ = model.pool(out, mask)
        return model.classifier(pooled)[0]
    vectors = []
    for s in range(sentence[-1] + 1):
        rows = [i for i, k in enumerate(sentence) if k == s]
        out, _ = model.word.gru(x[rows[0]:rows[-1] + 1][None])
        v, _ = model.word.pool(out, torch.ones(1, len(rows), dtype=torch.bool))
        vectors.append(v)
    y, _ = model.sentence.gru(torch.cat(vectors)[None])
    doc, _ = model.sentence.pool(y, torch.ones(1, len(vectors), dtype=torch.bool))
    return model.classifier(doc)[0]


def value_and_gradient(model, config, x, sentence, label):
    x = x.detach().clone().requires_grad_(True)
    f = logits_of(model, config, x, sentence)[label]
    (g,) = torch.autograd.grad(f, x)
    return float(f), g


def make(case, rel, texts):
    model, config = ct.load_model(os.path.join(ROOT, rel))
    model = model.double()
    embedding = model.word.embedding if ct.kind_of(config) == "hierarchical" else model.embedding
    runs = []
    for text, option in texts:
        p = ct.prepare(config, text)
        x = embedding.weight.detach()[torch.tensor(p["ids"])]
        # The forward from the embedded words must be the model's own (analyse() runs the ids through it).
        reference = ct.analyse(model, config, text)
        with torch.no_grad():
            mine = torch.softmax(logits_of(model, config, x, p["sentence"]), dim=0).numpy()
        if abs(mine - reference["probabilities"]).max() > 1e-9:
            raise SystemExit(f"{case}: the forward from the embedded words differs from the model's on {text!r}")
        label = reference["predicted"] if option == -1 else option
        value, g = value_and_gradient(model, config, x, p["sentence"], label)
        baseline, _ = value_and_gradient(model, config, torch.zeros_like(x), p["sentence"], label)
        mean = torch.zeros_like(x)
        for s in range(STEPS):
            mean += value_and_gradient(model, config, (s + 0.5) / STEPS * x, p["sentence"], label)[1]
        mean /= STEPS
        ig = (x * mean).sum(dim=1)
        runs.append({"text": text, "tokens": p["tokens"], "label": option, "resolved": label, "value": f7(value),
                     "baseline_value": f7(baseline), "grad_x_input": [f7(v) for v in (x * g).sum(dim=1)],
                     "integrated_gradients": [f7(v) for v in ig],
                     "gap": f7(float(ig.sum()) - (value - baseline))})
        print(f"  {case}: {text[:40]!r}... label {label}, {len(p['ids'])} words, IG gap {runs[-1]['gap']:+.2e}")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, case + ".json"), "w", encoding="utf-8") as f:
        json.dump({"format": "attnscope-classifier-attribution-1", "case": case, "model": rel, "steps": STEPS,
                   "runs": runs}, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def main():
    torch.set_num_threads(1)
    for case, rel, texts in CASES:
        make(case, rel, texts)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {OUT}: {total / 1024:.1f} KiB in all")


if __name__ == "__main__":
    main()
