#!/usr/bin/python3
"""Writes the entailment parity fixtures: tests/data/entailment/<case>/expected.json (+ the model for the
random case).

  random-entailment   a tiny random word-by-word model (e = 6, k = 8, a 16-word vocabulary, max_words 6):
                      config.json + model.safetensors + expected.json
  entailment-wbw      the shipped resources/models/entailment-wbw (expected.json only; "model" points to the
                      resources folder, no weights are copied)

expected.json: {"model": <model folder relative to the repo root>, "runs": [{"premise", "hypothesis",
"premise_words", "hypothesis_words" (after truncation), "premise_spans", "hypothesis_spans" ([begin, end)
bytes of each sentence), "premise_ids", "hypothesis_ids", "attention" [hypothesis words][premise words],
"probabilities", "predicted"}]}. The words are reviews_data.split_words' without the terminators . ! ?,
the first max_words of each sentence. Numbers come from entailment_torch's model in float64 on the float32
weights, rounded to 7 significant digits.

Before writing, every run is recomputed by an independent numpy implementation of MODELS.md section 5 from the
saved tensors by their contract names; the script stops if the two differ by more than 1e-9.

    /usr/bin/python3 -m tools.parity.make_entailment_fixtures            # random case, and the shipped one
                                                                        # when resources/models has it
"""

import json
import os
import sys

import numpy as np
import torch

from tools.safetensors_io import read_safetensors
from tools.train import entailment_torch as et
from tools.train.reviews_data import split_words

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

OUT = os.path.join(ROOT, "tests", "data", "entailment")
SHIPPED = "entailment-wbw"

RANDOM_VOCAB = ["a", "the", "man", "dog", "is", "not", "sleeping", "running", "on", "beach", "park", "old",
                "young", "some", "all", "people"]

RANDOM_PAIRS = [
    ("A man is sleeping.", "A man is not sleeping!"),
    # Unknown words ("zebra", "isn't"), upper case, non-ASCII letters separating words (café -> caf).
    ("The ZEBRA isn't sleeping on the café beach", "the dog"),
    # More words than max_words (6) on both sides.
    ("some old people and all young dogs are running on the beach in the park", "all old people are running on "
     "the beach"),
    # One word each; tabs and CR LF; a lone terminator between words.
    ("dog", "\tpeople\r\n ? ?"),
]

SHIPPED_PAIRS = [
    ("A young man is sleeping on the beach.", "A man is sleeping."),
    ("the farmer is eating near the river", "the farmer is not eating near the river"),
    ("All dogs are running in the park.", "All animals are running in the park."),
    ("some students are swimming", "some people are swimming near the big house"),
    ("A tall woman is playing on the street", "A short woman is playing on the street"),
    # Unknown words ("spaceship", "zooming") and a question.
    ("The spaceship is zooming near the house", "Is the dog zooming?"),
]


def words_of(config, text):
    tokens, spans, _ = split_words(text)
    keep = [i for i, t in enumerate(tokens) if t not in (".", "!", "?")][: config["max_words"]]
    words = [tokens[i] for i in keep]
    return words, [list(spans[i]) for i in keep], et.word_ids(config, words)


def torch_run(model, config, premise, hypothesis):
    p_words, p_spans, p_ids = words_of(config, premise)
    h_words, h_spans, h_ids = words_of(config, hypothesis)
    with torch.no_grad():
        logits, attention = model(torch.tensor([p_ids]), torch.tensor([len(p_ids)]), torch.tensor([h_ids]),
                                  torch.tensor([len(h_ids)]))
    probabilities = torch.softmax(logits[0], 0).numpy()
    return {"premise": premise, "hypothesis": hypothesis, "premise_words": p_words, "hypothesis_words": h_words,
            "premise_spans": p_spans, "hypothesis_spans": h_spans, "premise_ids": p_ids, "hypothesis_ids": h_ids,
            "attention": attention[0].numpy(), "probabilities": probabilities,
            "predicted": int(np.argmax(probabilities))}


def numpy_run(t, p_ids, h_ids):
    """MODELS.md section 5 from the tensors alone, in float64."""
    t = {k: v.astype(np.float64) for k, v in t.items()}
    k = t["attention.w.weight"].shape[1]
    sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731

    def lstm(base, ids, h, c):
        out = []
        for i in ids:
            g = t["embedding.weight"][i] @ t[base + ".weight_ih"].T + t[base + ".bias_ih"] + \
                h @ t[base + ".weight_hh"].T + t[base + ".bias_hh"]
            c = sig(g[k:2 * k]) * c + sig(g[:k]) * np.tanh(g[2 * k:3 * k])
            h = sig(g[3 * k:]) * np.tanh(c)
            out.append(h)
        return np.array(out), h, c

    Y, h, c = lstm("premise", p_ids, np.zeros(k), np.zeros(k))
    H, _, _ = lstm("hypothesis", h_ids, h, c)
    lin = lambda name, x: x @ t[name].T  # noqa: E731
    r = np.zeros(k)
    rows = []
    for ht in H:
        M = np.tanh(lin("attention.W_y.weight", Y) + lin("attention.W_h.weight", ht) + lin("attention.W_r.weight", r))
        s = M @ t["attention.w.weight"][0]
        a = np.exp(s - s.max())
        a /= a.sum()
        rows.append(a)
        r = a @ Y + np.tanh(lin("attention.W_t.weight", r))
    hstar = np.tanh(lin("final.W_p.weight", r) + lin("final.W_x.weight", H[-1]))
    logits = lin("classifier.weight", hstar) + t["classifier.bias"]
    p = np.exp(logits - logits.max())
    return np.array(rows), p / p.sum()


def rounded(x):
    return [rounded(v) for v in x] if isinstance(x, (list, np.ndarray)) else float(f"{float(x):.7g}")


def write_case(name, folder, pairs, rel_model):
    model, config = et.load_model(folder)
    model = model.double()
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    runs = []
    for premise, hypothesis in pairs:
        run = torch_run(model, config, premise, hypothesis)
        attention, probabilities = numpy_run(tensors, run["premise_ids"], run["hypothesis_ids"])
        gap = max(np.abs(attention - run["attention"]).max(), np.abs(probabilities - run["probabilities"]).max())
        if gap > 1e-9:
            sys.exit(f"{name}: torch and numpy differ by {gap} on {premise!r} / {hypothesis!r}")
        run["attention"] = rounded(run["attention"])
        run["probabilities"] = rounded(run["probabilities"])
        runs.append(run)
    os.makedirs(os.path.join(OUT, name), exist_ok=True)
    with open(os.path.join(OUT, name, "expected.json"), "w") as f:
        json.dump({"model": rel_model, "runs": runs}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{name}: {len(runs)} runs, numpy agrees")


def main():
    torch.manual_seed(7)
    vocab = ["<pad>", "<unk>"] + RANDOM_VOCAB
    config = et.make_config(vocab, 6, 8)
    config["max_words"] = 6
    config["task"] = "random parity model"
    model = et.build(config)
    with torch.no_grad():
        for p in model.parameters():
            p.uniform_(-1.5, 1.5)  # larger than the default init: peaked attention rows
    folder = os.path.join(OUT, "random-entailment")
    et.save_model(folder, model, config)
    write_case("random-entailment", folder, RANDOM_PAIRS, os.path.relpath(folder, ROOT))
    shipped = os.path.join(ROOT, "resources", "models", SHIPPED)
    if os.path.isdir(shipped):
        write_case(SHIPPED, shipped, SHIPPED_PAIRS, os.path.relpath(shipped, ROOT))
    else:
        print(f"{shipped} is missing: only the random case written")


if __name__ == "__main__":
    main()
