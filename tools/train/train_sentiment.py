#!/usr/bin/python3
"""Trains the bundled review-sentiment classifiers (MODELS.md section 2) on reviews_data.py's
templated reviews and writes the model folder with its MODEL_CARD.md (metrics filled in).

    /usr/bin/python3 -m tools.train.train_sentiment --variant pooling        # -> resources/models/sentiment-pooling
    /usr/bin/python3 -m tools.train.train_sentiment --variant hierarchical   # -> resources/models/sentiment-hierarchical
    /usr/bin/python3 -m tools.train.train_sentiment --variant lstm           # -> resources/models/sentiment-lstm
    /usr/bin/python3 -m tools.train.train_sentiment --variant cnn            # -> resources/models/sentiment-cnn

Options: --out DIR (another folder), --threads N (torch threads, default 1), --epochs N, --seed N,
--measure (no training: evaluate the folder's model and write its "saliency_on_deciding_words").
Fixed seeds: data (training seed 1, held-out seed 2, disjoint by text), torch seed 0 (--seed).

Metrics on the held-out set (2000 reviews):
  accuracy (required >= 95%);
  attention figure (required >= 50%):
    pooling:       the mean over heads of the word-attention mass on the deciding words;
    lstm, cnn:     the same measure on their saliency without a query (classifier_torch.word_saliency: the
                   share of the final cell state each word wrote; the words under the channels' winning
                   windows, weighted by their classifier weight); no minimum, it is what they show;
    hierarchical:  the word-attention mass (mean over heads) on the deciding words within each deciding
                   sentence, and the sentence-attention mass on the deciding sentences.
The script exits with status 1 when a requirement is not met (the folder is written all the same).
"""

import argparse
import json
import os
import random
import sys
import time

import numpy as np
import torch
from torch import nn

from tools.train import classifier_torch as ct
from tools.train import reviews_data as rd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

N_TRAIN, N_TEST = 20000, 2000
WORD_DROPOUT = 0.03   # a token becomes <unk> during training, so <unk> has a trained embedding

VARIANTS = {
    "pooling": dict(hierarchical=False, heads=2, embedding_size=64, hidden=64, attention_size=64, max_words=80,
                    epochs=6, lr=2e-3, batch=32),
    "hierarchical": dict(hierarchical=True, heads=2, embedding_size=64, hidden=48, attention_size=48, max_words=24,
                         max_sentences=8, epochs=6, lr=2e-3, batch=32),
    "lstm": dict(kind="lstm", embedding_size=64, hidden=64, max_words=80, epochs=6, lr=2e-3, batch=32),
    "cnn": dict(kind="cnn", embedding_size=64, channels=128, kernel=3, max_words=80, epochs=6, lr=2e-3, batch=32),
}


def encode(config, reviews):
    out = []
    for r in reviews:
        p = ct.prepare(config, r["text"])
        assert not p["warnings"], r["text"]   # the generator stays inside max_words / max_sentences
        out.append((p["ids"], p["sentence"], r["label"]))
    return out


def make_batch(config, items, rng=None):
    ids_list, sentences = [], []
    for ids, sent, _ in items:
        if rng is not None:
            ids = [ct.UNK if rng.random() < WORD_DROPOUT else i for i in ids]
        ids_list.append(ids)
        sentences.append(sent)
    labels = torch.tensor([y for _, _, y in items])
    if not config.get("hierarchical", False):
        return ct.batch_flat(ids_list), labels
    docs = [ct.sentences_of(i, s) for i, s in zip(ids_list, sentences)]
    return ct.batch_hierarchical(docs), labels


def evaluate(model, config, reviews, data, batch=200):
    """accuracy, attention figures (see the module doc), per-head word mass."""
    model.eval()
    correct = 0
    word_mass, sent_mass, head_mass, near_mass = [], [], [], []
    with torch.no_grad():
        for start in range(0, len(data), batch):
            items = data[start:start + batch]
            inputs, labels = make_batch(config, items)
            out = model(*inputs)
            correct += int((out[0].argmax(-1) == labels).sum())
            flat = ct.kind_of(config) != "hierarchical"
            sal = ct.word_saliency(model, config, [i for i, _, _ in items]) if flat else None
            for b, r in enumerate(reviews[start:start + batch]):
                words = r["deciding_words"]
                if flat:
                    alpha = sal[b].get("heads", sal[b]["saliency"][None, :])   # [r, n]
                    m = alpha[:, words].sum(axis=1)                        # per head
                    head_mass.append(m)
                    word_mass.append(m.mean())
                    near = sorted({j for i in words for j in (i - 1, i, i + 1) if 0 <= j < alpha.shape[1]})
                    near_mass.append(alpha[:, near].sum(axis=1).mean())
                else:
                    walpha, salpha = out[1][b].numpy(), out[2][b].numpy()  # [S, r, W], [S]
                    sent_of = items[b][1]
                    first = {}
                    for i, s in enumerate(sent_of):
                        first.setdefault(s, i)
                    for s in r["deciding_sentences"]:
                        pos = [i - first[s] for i in words if sent_of[i] == s]
                        m = walpha[s][:, pos].sum(axis=1)
                        head_mass.append(m)
                        word_mass.append(m.mean())
                        n_s = sum(1 for k in sent_of if k == s)
                        near = sorted({j for i in pos for j in (i - 1, i, i + 1) if 0 <= j < n_s})
                        near_mass.append(walpha[s][:, near].sum(axis=1).mean())
                    sent_mass.append(salpha[r["deciding_sentences"]].sum())
    res = {"accuracy": correct / len(data), "word_mass": float(np.mean(word_mass)),
           "near_mass": float(np.mean(near_mass)),
           "head_mass": [float(x) for x in np.mean(head_mass, axis=0)]}
    if sent_mass:
        res["sentence_mass"] = float(np.mean(sent_mass))
    return res


def subset_accuracy(model, config, reviews, data, keep):
    idx = [i for i, r in enumerate(reviews) if keep(r)]
    if not idx:
        return float("nan"), 0
    items = [data[i] for i in idx]
    model.eval()
    with torch.no_grad():
        inputs, labels = make_batch(config, items)
        pred = model(*inputs)[0].argmax(-1)
    return float((pred == labels).float().mean()), len(idx)


def negated(r):
    toks = rd.split_words(r["text"])[0]
    return any(toks[i] in rd.NEGATORS + rd.NEGATED_COPULAS for i in r["deciding_words"])


def write_card(folder, variant, v, config, model, metrics, extra, seconds, epochs_log, command, threads):
    size = os.path.getsize(os.path.join(folder, "model.safetensors"))
    hier = v.get("hierarchical", False)
    kind = v.get("kind")
    if kind == "lstm":
        lines = [
            f"# sentiment-{variant}: review sentiment with an LSTM, read through its forget gate",
            "",
            "A demo model for AttnScope's saliency without a query: an LSTM has no attention, but its gates",
            "decide how much of each word reaches the final state. Trained on the same synthetic, templated",
            "reviews as sentiment-pooling, so it knows only the generator's words; a teaching model.",
            "",
        ]
    elif kind == "cnn":
        lines = [
            f"# sentiment-{variant}: review sentiment with a CNN, read through its global max pooling",
            "",
            "A demo model for AttnScope's saliency without a query: each channel of a convolution keeps only",
            "its largest response, so the positions that win the maxima are the only words the classifier",
            "sees. Trained on the same synthetic, templated reviews as sentiment-pooling; a teaching model.",
            "",
        ]
    else:
        lines = [
            f"# sentiment-{variant}: review sentiment with {'hierarchical ' if hier else ''}attention pooling",
            "",
            "A demo model for AttnScope's classifier views: which words (and sentences) the pooling attends to",
            "when it decides whether a short review is positive or negative. Trained on synthetic, templated",
            "reviews, so it knows only the generator's words; it is a teaching model, not a sentiment analyser.",
            "",
        ]
    lines += [
        "## Task and data",
        "- Task: binary review sentiment, labels `negative` (0) and `positive` (1).",
        "- Data: `tools/train/reviews_data.py`: reviews of 2-6 sentences about films, restaurants, products,",
        "  hotels, books and games; neutral filler sentences plus one or two deciding sentences, each with one",
        "  sentiment phrase: `[negator] [intensifier] word` (20 positive, 20 negative adjectives; 4 + 4 verbs;",
        "  negators not, never, hardly, wasn't, isn't flip the polarity). All phrases of a review agree; that",
        "  polarity is the label. Deciding words: the sentiment word and its negator (not the intensifier).",
        f"- {N_TRAIN} training reviews (seed 1), {N_TEST} held-out reviews (seed 2, none with a training text),",
        f"  balanced labels. Vocabulary: the generator's {len(config['vocab']) - 2} words + `<pad>`, `<unk>`;",
        f"  during training each token becomes `<unk>` with probability {WORD_DROPOUT}.",
        "",
        "## Architecture (tools/train/MODELS.md section 2)",
    ]
    if kind == "lstm":
        lines += [
            f"Embedding (e = {v['embedding_size']}) -> LSTM (h = {v['hidden']}, one direction, gates i, f, g, o) ->",
            f"the hidden state after the last word -> linear [{len(config['labels'])}, {v['hidden']}] -> softmax.",
            f"max_words {v['max_words']} (longer inputs: the first max_words words).",
            "",
            "The reading (MODELS.md section 2): c_T = sum_t written_t * g_t with written_t = i_t * prod_{s>t} f_s,",
            "so written (units x words) is how much of each word's candidate g_t is still in the final cell state;",
            "a word's saliency is its column's sum over units, over the whole map's sum. The Alignment tab shows f,",
            "i and written, their means over the units, and this saliency beside the other two readings.",
        ]
    elif kind == "cnn":
        lines += [
            f"Embedding (e = {v['embedding_size']}) -> Conv1d ({v['channels']} channels, kernel {v['kernel']},"
            f" zero padding {(v['kernel'] - 1) // 2}) -> ReLU ->",
            f"max over the words -> linear [{len(config['labels'])}, {v['channels']}] -> softmax."
            f" max_words {v['max_words']}.",
            "",
            "The reading (MODELS.md section 2): each channel's winner is the first position of its maximum; its",
            "weight is max(0, W[predicted, c] - mean over labels of W[., c]) (0 when its maximum is 0); a word's",
            "saliency is the sum of the weights of the channels whose winning window covers it, normalised.",
        ]
    elif hier:
        lines += [
            f"Hierarchical attention network (Yang et al. 2016): per sentence, embedding (e = {v['embedding_size']}) ->",
            f"bidirectional GRU (h = {v['hidden']} per direction) -> attention pooling with {v['heads']} heads",
            f"(a = {v['attention_size']}) -> sentence vector [{v['heads'] * 2 * v['hidden']}]; sentence vectors ->",
            f"bidirectional GRU (h = {v['hidden']}) -> attention pooling (1 head) -> linear -> softmax.",
            f"max_words {v['max_words']} per sentence, max_sentences {v['max_sentences']} (longer inputs: the first",
            "max_sentences sentences and the first max_words words of each).",
        ]
    else:
        lines += [
            f"Embedding (e = {v['embedding_size']}) -> bidirectional GRU (h = {v['hidden']} per direction) ->",
            f"attention pooling with r = {v['heads']} heads (a = {v['attention_size']}; s_i = w_k . tanh(W x_i + b)) ->",
            f"linear [{len(config['labels'])}, {v['heads'] * 2 * v['hidden']}] -> softmax. max_words {v['max_words']}",
            "(longer inputs: the first max_words words).",
        ]
    lines += [
        "",
        f"Parameters: {ct.parameter_count(model):,}; model.safetensors {size / 1024:.0f} KiB (float32).",
        "",
        "## Training",
        f"Adam (lr {v['lr']}), batch {v['batch']}, {v['epochs']} epochs, cross-entropy, gradient norm clipped at 5;",
        f"torch seed {extra['seed']}, {threads} thread(s). Training time: {seconds:.0f} s of wall time (with a held-out",
        "evaluation after each epoch) on a shared 2-core machine (torch 1.13, CPU).",
        "",
        "| epoch | training loss | held-out accuracy |",
        "|---|---|---|",
    ]
    lines += [f"| {e} | {loss:.4f} | {acc * 100:.2f}% |" for e, loss, acc in epochs_log]
    lines += [
        "",
        f"## Metrics (held-out, {N_TEST} reviews)",
        f"- Accuracy: **{metrics['accuracy'] * 100:.2f}%** (negated phrases: {extra['neg_acc'] * 100:.2f}% of"
        f" {extra['neg_n']}; two deciding sentences: {extra['two_acc'] * 100:.2f}% of {extra['two_n']}).",
    ]
    if kind in ("lstm", "cnn"):
        what = "share of the final cell state" if kind == "lstm" else "max-pooling saliency"
        lines += [
            f"- Saliency on the deciding words ({what}): **{metrics['word_mass'] * 100:.1f}%**; on them or a"
            f" token next to one: {metrics['near_mass'] * 100:.1f}%.",
            "  The same measure as sentiment-pooling's word attention on the deciding words (its card).",
        ] + ([
            "  The final cell state holds mostly the last words read (the forget gates of the words after a",
            "  deciding phrase multiply its share away), so the reading points at the end of the review even",
            "  where the classifier is right.",
        ] if kind == "lstm" else []) + [
        ]
    elif hier:
        lines += [
            f"- Word attention on the deciding words within the deciding sentences (mean over heads): "
            f"**{metrics['word_mass'] * 100:.1f}%** (per head: "
            + ", ".join(f"{m * 100:.1f}%" for m in metrics["head_mass"]) + ").",
            f"- Sentence attention on the deciding sentences: **{metrics['sentence_mass'] * 100:.1f}%**.",
            f"- Word attention on the deciding words or a token next to one (same sentences):"
            f" {metrics['near_mass'] * 100:.1f}%.",
        ]
    else:
        lines += [
            f"- Word attention on the deciding words (mean over the {v['heads']} heads): "
            f"**{metrics['word_mass'] * 100:.1f}%** (per head: "
            + ", ".join(f"{m * 100:.1f}%" for m in metrics["head_mass"]) + ").",
            f"- Word attention on the deciding words or a token next to one: {metrics['near_mass'] * 100:.1f}%"
            " (the rest of the deciding mass mostly sits on the word before the sentiment word, e.g. `was` in",
            "  `was lovely`, whose backward GRU state has already read it).",
        ]
    lines += [
        "",
        "Measured by the training command itself (it prints the same numbers).",
        "",
        "## Retrain (one command, deterministic seeds)",
        "```",
        command,
        "```",
        "Parity: `tools/parity/make_classifier_fixtures.py --trained` writes tests/data/classifier/"
        f"sentiment-{variant}/expected.json from this folder.",
        "",
    ]
    with open(os.path.join(folder, "MODEL_CARD.md"), "w") as f:
        f.write("\n".join(lines))


def record_saliency(folder, config, m):
    """config.json's "saliency_on_deciding_words" (flat models): the held-out share the Alignment tab shows
    beside each reading."""
    if ct.kind_of(config) == "hierarchical":
        return
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        text = json.load(f)
    text["saliency_on_deciding_words"] = round(m["word_mass"], 4)
    with open(path, "w") as f:
        json.dump(text, f, indent=1)
        f.write("\n")


def measure(folder):
    model, config = ct.load_model(folder)
    _, test = rd.make_splits(N_TRAIN, N_TEST)
    m = evaluate(model, config, test, encode(config, test))
    record_saliency(folder, config, m)
    print(f"{folder}: held-out accuracy {m['accuracy'] * 100:.2f}%, saliency on the deciding words "
          f"{m['word_mass'] * 100:.1f}% (written to config.json)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", choices=sorted(VARIANTS), required=True)
    ap.add_argument("--out")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--measure", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    v = dict(VARIANTS[args.variant])
    if args.epochs:
        v["epochs"] = args.epochs
    folder = args.out or os.path.join(ROOT, "resources", "models", f"sentiment-{args.variant}")
    if args.measure:
        measure(folder)
        return

    train, test = rd.make_splits(N_TRAIN, N_TEST)
    if "kind" in v:
        config = ct.make_kind_config(rd.vocabulary(), v["kind"], v["embedding_size"], v.get("hidden"),
                                     v.get("channels"), v.get("kernel"), v["max_words"])
    else:
        config = ct.make_config(rd.vocabulary(), v["hierarchical"], v["heads"], v["embedding_size"], v["hidden"],
                                v["attention_size"], v["max_words"], v.get("max_sentences"),
                                task="review sentiment")
    train_data, test_data = encode(config, train), encode(config, test)

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    model = ct.build(config)
    opt = torch.optim.Adam(model.parameters(), lr=v["lr"])
    loss_fn = nn.CrossEntropyLoss()
    print(f"{args.variant}: {ct.parameter_count(model):,} parameters, vocabulary {len(config['vocab'])}, "
          f"{len(train_data)} training / {len(test_data)} held-out reviews")
    t0 = time.perf_counter()
    log = []
    order = list(range(len(train_data)))
    for epoch in range(1, v["epochs"] + 1):
        model.train()
        rng.shuffle(order)
        total, count = 0.0, 0
        for start in range(0, len(order), v["batch"]):
            items = [train_data[i] for i in order[start:start + v["batch"]]]
            inputs, labels = make_batch(config, items, rng)
            logits = model(*inputs)[0]
            loss = loss_fn(logits, labels)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            total += float(loss) * len(items)
            count += len(items)
        m = evaluate(model, config, test, test_data)
        log.append((epoch, total / count, m["accuracy"]))
        extra_s = f", sentence mass {m['sentence_mass'] * 100:.1f}%" if "sentence_mass" in m else ""
        print(f"epoch {epoch}: loss {total / count:.4f}, held-out accuracy {m['accuracy'] * 100:.2f}%, "
              f"word mass {m['word_mass'] * 100:.1f}% (heads {[round(x * 100, 1) for x in m['head_mass']]})"
              f"{extra_s}  [{time.perf_counter() - t0:.0f} s]", flush=True)
    seconds = time.perf_counter() - t0

    ct.save_model(folder, model, config)
    model, config = ct.load_model(folder)   # measure the float32 weights as saved
    m = evaluate(model, config, test, test_data)
    record_saliency(folder, config, m)
    neg_acc, neg_n = subset_accuracy(model, config, test, test_data, negated)
    two_acc, two_n = subset_accuracy(model, config, test, test_data, lambda r: len(r["deciding_sentences"]) == 2)
    command = f"/usr/bin/python3 -m tools.train.train_sentiment --variant {args.variant}"
    write_card(folder, args.variant, v, config, model, m,
               dict(seed=args.seed, neg_acc=neg_acc, neg_n=neg_n, two_acc=two_acc, two_n=two_n),
               seconds, log, command, args.threads)
    size = os.path.getsize(os.path.join(folder, "model.safetensors"))
    print(f"saved {folder} ({size / 1024:.0f} KiB), training {seconds:.0f} s")
    print(f"held-out accuracy {m['accuracy'] * 100:.2f}% (negated {neg_acc * 100:.2f}% of {neg_n}, "
          f"two deciding sentences {two_acc * 100:.2f}% of {two_n})")
    ok = m["accuracy"] >= 0.95 and (m["word_mass"] >= 0.5 or "kind" in v)
    print(f"word attention on deciding words: {m['word_mass'] * 100:.1f}% "
          f"(per head {[round(x * 100, 1) for x in m['head_mass']]}); on them or a neighbour "
          f"{m['near_mass'] * 100:.1f}%")
    if "sentence_mass" in m:
        print(f"sentence attention on deciding sentences: {m['sentence_mass'] * 100:.1f}%")
        ok = ok and m["sentence_mass"] >= 0.5
    if not ok:
        print("REQUIREMENT NOT MET (accuracy >= 95%, attention figures >= 50% for the attention models)")
        sys.exit(1)


if __name__ == "__main__":
    main()
