#!/usr/bin/python3
"""Writes the classifier parity fixtures: tests/data/classifier/<case>/expected.json (+ the model for the
random cases).

  random-pooling        a tiny random flat classifier (2 heads, e = h = a = 8, 20-word vocabulary,
                        max_words 12): config.json + model.safetensors + expected.json
  random-hierarchical   a tiny random hierarchical one (2 word heads, e = h = a = 8, max_words 5,
                        max_sentences 3): config.json + model.safetensors + expected.json
  sentiment-pooling     the shipped resources/models/sentiment-pooling (expected.json only; "model"
                        points to the resources folder, no weights are copied)
  sentiment-hierarchical the shipped resources/models/sentiment-hierarchical (likewise)
  random-lstm           a tiny random LSTM classifier ("kind": "lstm", e = h = 8, max_words 12)
  random-cnn            a tiny random CNN classifier ("kind": "cnn", e = 8, 6 channels of width 3, max_words 12)
  sentiment-lstm, sentiment-cnn   the shipped saliency models (expected.json only)

expected.json: {"model": <model folder relative to the repo root>, "runs": [{"text", "tokens", "spans"
([begin_byte, end_byte) in the UTF-8 text), "sentence_of_token", "ids", "word_attention" ([heads][tokens];
hierarchical: each head's weights sum to 1 within each sentence; [] for the LSTM and the CNN),
"sentence_attention" (hierarchical, else []), "probabilities", "predicted", and for the flat kinds
"saliency" [tokens] (classifier_torch.word_saliency); the LSTM adds "input_gate", "forget_gate",
"written" [units][tokens], the CNN "activations" [channels][tokens], "winners", "channel_weights" (for the
shipped models only on texts of at most 40 tokens, to keep the fixtures small)}]}. Every array describes the input *after truncation*: flat, the
first max_words tokens; hierarchical, the first max_sentences sentences and the first max_words tokens of
each. Numbers come from torch in float64 on the float32 weights, rounded to 7 significant digits.

Before writing, every run is recomputed by an independent numpy implementation of MODELS.md section 2
(GRU gate equations, pooling) from the saved tensors by their contract names; the script stops if the two
differ by more than 1e-9.

    /usr/bin/python3 -m tools.parity.make_classifier_fixtures            # random cases, and the shipped
                                                                        # ones when resources/models has them
    /usr/bin/python3 -m tools.parity.make_classifier_fixtures --random   # random cases only
    /usr/bin/python3 -m tools.parity.make_classifier_fixtures --trained  # shipped models only
"""

import json
import os
import sys

import numpy as np
import torch

from tools.safetensors_io import read_safetensors
from tools.train import classifier_torch as ct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

OUT = os.path.join(ROOT, "tests", "data", "classifier")

RANDOM_VOCAB = ["the", "film", "was", "great", "bad", "not", "food", "i", "it", "a", "very", "and", "good",
                "movie", "service", "slow", "loved", "hated", ".", "!"]   # "?" deliberately absent: <unk>

RANDOM_TEXTS = [
    "The film was great.",
    # "zebra" and "?" are unknown; an apostrophe word.
    "The zebra wasn't good? I loved it!",
    # Punctuation-only noise: every . ! ? is a token and ends a sentence; the rest separates tokens.
    "?! ... --- ### !!",
    # More words than max_words (flat 12), more sentences than max_sentences (3) and a sentence longer
    # than max_words (5) for the hierarchical model.
    "The food was not good and the service was very slow. I hated it. The movie was great! "
    "A very good film and a very good movie. It was bad.",
    # Non-ASCII letters separate tokens (Café -> caf); 。 is not a sentence end; no final punctuation.
    "Ünïcödé CAFÉ — naïve film, très good 映画は良い。 the ﬁlm was 𝐠𝐨𝐨𝐝",
    # Tabs, CR LF, digits and a lone apostrophe.
    "I\tloved\r\nthe 2 films ' 10/10 it was GOOD.",
]

TRAINED_TEXTS = [
    "The film was superb. We watched it on a Sunday evening with my sister.",
    # Negation, an unknown word ("popcornish"), an intensifier, a question.
    "We went there on a friday night. The popcornish pasta was not good at all. Do they take reservations?",
    # Punctuation-only noise between two sentences.
    "I bought the kettle last march. ?! ... ### The lid is truly dreadful.",
    # Longer than max_words (flat: 80) and than max_sentences (hierarchical: 8), with one sentence
    # longer than max_words (hierarchical: 24).
    "I read the book on the train to Lisbon. The writing was absolutely wonderful and the story follows "
    "two sisters and their father in the 1970s and the collection was first published in the 1980s by a "
    "small press in Rome and Dublin. It has 12 chapters. The author grew up in Oslo. My friend lent me a "
    "copy in May. I finished it on a Sunday afternoon. It is the second book in a series. Is there a "
    "sequel? I read the paperback edition. Our reading group chose it for June. The ending was brilliant.",
    # Non-ASCII letters (they separate tokens) and an emoji.
    "Le café était très délicieux 😋. The food was excellent. Überall gemütlich.",
    # Mixed case, apostrophes, no final punctuation.
    "THE ROOM WAS AWFUL. the staff wasn't helpful and the wifi isn't great",
]


def sig7(x):
    return float(f"{float(x):.7g}")


def rounded(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return sig7(a)
    return [rounded(v) for v in a]


# ---------------------------------------------------------------- independent numpy reference

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gru_dir(T, prefix, suffix, X):
    Wi, Wh = T[prefix + "weight_ih" + suffix], T[prefix + "weight_hh" + suffix]
    bi, bh = T[prefix + "bias_ih" + suffix], T[prefix + "bias_hh" + suffix]
    H = Wh.shape[1]
    h = np.zeros(H)
    out = []
    for x in X:
        gi, gh = Wi @ x + bi, Wh @ h + bh
        r = _sigmoid(gi[:H] + gh[:H])
        z = _sigmoid(gi[H:2 * H] + gh[H:2 * H])
        n = np.tanh(gi[2 * H:] + r * gh[2 * H:])
        h = (1 - z) * n + z * h
        out.append(h)
    return np.array(out)


def _bigru(T, prefix, X):
    fwd = _gru_dir(T, prefix, "", X)
    bwd = _gru_dir(T, prefix, "_reverse", X[::-1])[::-1]
    return np.concatenate([fwd, bwd], axis=1)


def _pool(T, prefix, X):
    s = (T[prefix + "w.weight"] @ np.tanh(T[prefix + "W.weight"] @ X.T + T[prefix + "W.bias"][:, None]))  # [r, n]
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    return (a @ X).reshape(-1), a


def _lstm_reference(T, ids):
    """MODELS.md section 2's LSTM and its reading: probabilities, saliency, i, f, written [h, n]."""
    X = T["embedding.weight"][ids]
    Wi, Wh = T["encoder.lstm.weight_ih"], T["encoder.lstm.weight_hh"]
    b = T["encoder.lstm.bias_ih"] + T["encoder.lstm.bias_hh"]
    H = Wh.shape[1]
    h, c = np.zeros(H), np.zeros(H)
    i_cols, f_cols = [], []
    for x in X:
        g = Wi @ x + Wh @ h + b
        i, f, cand, o = _sigmoid(g[:H]), _sigmoid(g[H:2 * H]), np.tanh(g[2 * H:3 * H]), _sigmoid(g[3 * H:])
        c = f * c + i * cand
        h = o * np.tanh(c)
        i_cols.append(i)
        f_cols.append(f)
    i, f = np.array(i_cols).T, np.array(f_cols).T
    n = len(ids)
    written = np.array([i[:, t] * np.prod(f[:, t + 1:], axis=1) for t in range(n)]).T
    return h, {"saliency": written.sum(axis=0) / written.sum(), "input_gate": i, "forget_gate": f,
               "written": written}


def _cnn_reference(T, ids, kernel):
    X = T["embedding.weight"][ids]                       # [n, e]
    n, pad = len(ids), (kernel - 1) // 2
    W = T["conv.weight"]                                 # [C, e, k]
    Xp = np.vstack([np.zeros((pad, X.shape[1])), X, np.zeros((pad, X.shape[1]))])
    a = np.array([[np.sum(W[c] * Xp[p:p + kernel].T) + T["conv.bias"][c] for p in range(n)]
                  for c in range(W.shape[0])])
    return np.maximum(a, 0.0)


def reference(folder, config, ids, sentence):
    """(word attention, sentence attention, probabilities, saliency dict or None) by numpy."""
    T = {k: v.astype(np.float64) for k, v in read_safetensors(os.path.join(folder, "model.safetensors"))[0].items()}
    kind = ct.kind_of(config)
    if kind in ("lstm", "cnn"):
        if kind == "lstm":
            pooled, sal = _lstm_reference(T, ids)
        else:
            a = _cnn_reference(T, ids, config["kernel"])
            pooled = a.max(axis=1)
        logits = T["classifier.weight"] @ pooled + T["classifier.bias"]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        if kind == "cnn":
            d = ct.cnn_saliency(a, T["classifier.weight"], int(np.argmax(p)), config["kernel"])
            sal = {"saliency": d["saliency"], "activations": a, "winners": d["winner"],
                   "channel_weights": d["weight"]}
        return np.zeros((0, len(ids))), np.zeros(0), p, sal
    sal = None
    if not config["hierarchical"]:
        X = _bigru(T, "encoder.gru.", T["embedding.weight"][ids])
        pooled, word = _pool(T, "pool.", X)
        sent = np.zeros(0)
        sal = {"saliency": word.mean(axis=0)}
    else:
        vecs, words = [], []
        for s in range(max(sentence) + 1):
            sid = [i for i, k in zip(ids, sentence) if k == s]
            X = _bigru(T, "word.gru.", T["word.embedding.weight"][sid])
            v, a = _pool(T, "word.pool.", X)
            vecs.append(v)
            words.append(a)
        Y = _bigru(T, "sentence.gru.", np.array(vecs))
        pooled, sa = _pool(T, "sentence.pool.", Y)
        word, sent = np.concatenate(words, axis=1), sa[0]
    logits = T["classifier.weight"] @ pooled + T["classifier.bias"]
    p = np.exp(logits - logits.max())
    return word, sent, p / p.sum(), sal


TORCH_SALIENCY = {"input_gate": "i", "forget_gate": "f", "written": "kappa", "activations": "activations",
                  "winners": "winner", "channel_weights": "weight"}


# ---------------------------------------------------------------- cases

def runs_for(model, config, folder, texts, matrices_up_to=10**9):
    runs = []
    for text in texts:
        r = ct.analyse(model, config, text)
        word, sent, prob, sal = reference(folder, config, r["ids"], r["sentence_of_token"])
        diff = max(np.abs(word - r["word_attention"]).max() if word.size else 0.0,
                   np.abs(prob - r["probabilities"]).max(),
                   np.abs(sent - r["sentence_attention"]).max() if len(sent) else 0.0)
        extra = {}
        if sal is not None:
            got = r["saliency"]
            for key, value in sal.items():
                mine = got[TORCH_SALIENCY.get(key, key)]
                diff = max(diff, np.abs(np.asarray(value, dtype=np.float64) - np.asarray(mine, dtype=np.float64)).max())
                if key == "saliency" or len(r["ids"]) <= matrices_up_to:
                    extra[key] = [int(x) for x in value] if key == "winners" else rounded(value)
        if diff > 1e-9:
            sys.exit(f"torch and the numpy reference differ by {diff} on {text!r}")
        if r["warnings"]:
            print(f"    {text[:40]!r}...: {'; '.join(r['warnings'])}")
        runs.append({"text": text, "tokens": r["tokens"], "spans": r["spans"],
                     "sentence_of_token": r["sentence_of_token"], "ids": r["ids"],
                     "word_attention": rounded(r["word_attention"]),
                     "sentence_attention": rounded(r["sentence_attention"]),
                     "probabilities": rounded(r["probabilities"]), "predicted": r["predicted"], **extra})
    return runs


def write_expected(case, model_rel, runs):
    d = os.path.join(OUT, case)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"model": model_rel, "runs": runs}, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def randomise(model, seed):
    """Larger than the default initialisation, so the pooling weights are far from uniform."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "embedding" in name:
                p.copy_(torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith("w.weight"):
                p.copy_(2.5 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(1.2 * torch.randn(p.shape, generator=g) / np.sqrt(p.shape[1]))


def make_random(case, hierarchical, seed, kind=None):
    if kind == "lstm":
        c = ct.make_kind_config(RANDOM_VOCAB, "lstm", embedding_size=8, hidden=8, max_words=12,
                                task="random parity fixture", trained_on=None)
    elif kind == "cnn":
        c = ct.make_kind_config(RANDOM_VOCAB, "cnn", embedding_size=8, channels=6, kernel=3, max_words=12,
                                task="random parity fixture", trained_on=None)
    elif hierarchical:
        c = ct.make_config(RANDOM_VOCAB, True, heads=2, embedding_size=8, hidden=8, attention_size=8,
                           max_words=5, max_sentences=3, task="random parity fixture", trained_on=None)
    else:
        c = ct.make_config(RANDOM_VOCAB, False, heads=2, embedding_size=8, hidden=8, attention_size=8,
                           max_words=12, task="random parity fixture", trained_on=None)
    torch.manual_seed(seed)
    model = ct.build(c)
    randomise(model, seed)
    folder = os.path.join(OUT, case)
    for f in ("config.json", "model.safetensors", "expected.json"):
        if os.path.exists(os.path.join(folder, f)):
            os.remove(os.path.join(folder, f))
    ct.save_model(folder, model, c)
    model, c = ct.load_model(folder)  # the float32 weights as saved
    print(f"{case}: {ct.parameter_count(model)} parameters")
    write_expected(case, f"tests/data/classifier/{case}", runs_for(model, c, folder, RANDOM_TEXTS))


def make_trained(case):
    rel = f"resources/models/{case}"
    folder = os.path.join(ROOT, rel)
    if not os.path.exists(os.path.join(folder, "model.safetensors")):
        print(f"{case}: {rel} has no model yet (train it with tools/train/train_sentiment.py), skipped")
        return
    model, c = ct.load_model(folder)
    print(f"{case}: {rel}")
    write_expected(case, rel, runs_for(model, c, folder, TRAINED_TEXTS, matrices_up_to=40))


def main():
    torch.set_num_threads(1)
    args = sys.argv[1:]
    if not args or "--random" in args:
        make_random("random-pooling", False, 11)
        make_random("random-hierarchical", True, 12)
        make_random("random-lstm", False, 13, "lstm")
        make_random("random-cnn", False, 14, "cnn")
    if not args or "--trained" in args:
        make_trained("sentiment-pooling")
        make_trained("sentiment-hierarchical")
        make_trained("sentiment-lstm")
        make_trained("sentiment-cnn")
    total = 0
    for root, _, files in os.walk(OUT):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(f"wrote {OUT}: {total / 1024:.1f} KiB in all")


if __name__ == "__main__":
    main()
