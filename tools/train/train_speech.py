#!/usr/bin/python3
"""Trains the bundled speech recogniser (phonemes from synthetic speech, location-aware attention) and measures it.

    /usr/bin/python3 -m tools.train.speech_data --out /tmp/speech          the corpora (attnscope-cli speech --batch)
    /usr/bin/python3 -m tools.train.train_speech --data /tmp/speech [--out DIR] [--threads N] [--max-minutes M]
    /usr/bin/python3 -m tools.train.train_speech --data /tmp/speech --report    measure the model in --out again

Model: speech_torch.py (MODELS.md section 6). Training: teacher forcing, cross-entropy over the phonemes and </s>,
Adam, gradient norm clipped at 1, batches of 32 utterances of similar length; every --eval-every steps the batched
greedy decoder's phoneme error rate on the validation set; the best model is kept; training stops at --max-minutes.
Measured on the two test sets (utterances of words seen in training, and of words never heard), decoded one at a
time as the engine decodes (float64 from the float32 weights):

  PER        phoneme error rate: Levenshtein distance to espeak-ng's phonemes / their number, over the set
  alignment  teacher-forced on the reference phonemes: the share whose attention peak (the argmax encoder step of the
             row that emits it) has its centre inside that phoneme's time span from espeak-ng's phoneme events
"""

import argparse
import datetime as dt
import os
import random
import time
from collections import Counter

import numpy as np
import torch
import torch.nn.functional as F

from tools.train import seq2seq_torch as st
from tools.train import speech_data as sd
from tools.train import speech_torch as sp
from tools.train.report_dates import update_card

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

SIZES = dict(e=48, h=128, d=192, a=128, layers=2, filters=10, width=31)
TRAINED_ON = ("espeak-ng's synthetic voices (en-us and its 12 variants, 140-210 words per minute, light noise) saying "
              "1-4 random English words (tools/train/speech_data.py); it has never heard a human voice")
MAX_SOURCE_STEPS = 1000   # 30 s of audio
MAX_PHONEMES = 120


class Corpus:
    def __init__(self, data, split):
        feats, starts, utts = sd.load(data, split)
        self.feats = torch.from_numpy(feats)
        self.starts = starts
        self.utts = utts

    def frames(self, i):
        return self.feats[int(self.starts[i]):int(self.starts[i + 1])]

    def __len__(self):
        return len(self.utts)


def phonemes(u):
    return [p["phoneme"] for p in u["phonemes"]]


def batch(corpus, idx, config):
    frames = [corpus.frames(i) for i in idx]
    lengths = torch.tensor([f.shape[0] for f in frames], dtype=torch.long)
    src = torch.zeros(len(idx), int(lengths.max()), frames[0].shape[1])
    for b, f in enumerate(frames):
        src[b, :f.shape[0]] = f
    rows = [sp.target_ids(phonemes(corpus.utts[i]), config) for i in idx]
    T = max(len(r) for r in rows)
    tgt = torch.zeros(len(idx), T, dtype=torch.long)
    for b, r in enumerate(rows):
        tgt[b, :len(r)] = torch.tensor(r)
    tgt_in = torch.cat([torch.full((len(idx), 1), st.BOS, dtype=torch.long), tgt[:, :-1]], dim=1)
    return src, lengths, tgt_in, tgt


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def alignment_hits(alpha, corpus, idx):
    """alpha [B, T, S] teacher-forced: (hits, phonemes)."""
    arg = alpha.argmax(-1)
    hits = n = 0
    for b, i in enumerate(idx):
        for t, p in enumerate(corpus.utts[i]["phonemes"]):
            centre = sd.step_centre(int(arg[b, t]))
            hits += int(p["start"] <= centre < p["end"])
            n += 1
    return hits, n


@torch.no_grad()
def evaluate(model, corpus, config, size=200):
    model.eval()
    errors = total = hits = n = 0
    for b in range(0, len(corpus), size):
        idx = list(range(b, min(b + size, len(corpus))))
        src, lengths, tgt_in, _ = batch(corpus, idx, config)
        ids, _ = model.greedy_batch(src, lengths, MAX_PHONEMES)
        for k, i in enumerate(idx):
            out = ids[k].tolist()
            out = out[:out.index(st.EOS)] if st.EOS in out else out
            want = phonemes(corpus.utts[i])
            errors += edit_distance([config["target_vocab"][j] for j in out], want)
            total += len(want)
        _, alpha, _ = model(src, lengths, tgt_in)
        h, m = alignment_hits(alpha, corpus, idx)
        hits, n = hits + h, n + m
    model.train()
    return errors / total, hits / n


def measure(folder, corpus, beam_n):
    """One utterance at a time, as the engine decodes (float64): greedy on all, beam 5 on the first beam_n."""
    model = st.load_model(folder, torch.float64)
    cfg = model.config
    m = {"n": len(corpus), "beam_n": min(beam_n, len(corpus))}
    for key, n, k in (("greedy", len(corpus), 1), ("beam5", m["beam_n"], 5)):
        errors = total = 0
        for i in range(n):
            hyp = st.beam_search(model, corpus.frames(i).double(), k)[0]
            want = phonemes(corpus.utts[i])
            errors += edit_distance(st.target_text(hyp.ids, cfg).split(), want)
            total += len(want)
        m[key] = errors / total
    with torch.no_grad():
        hits = n = 0
        for b in range(0, len(corpus), 200):
            idx = list(range(b, min(b + 200, len(corpus))))
            src, lengths, tgt_in, _ = batch(corpus, idx, cfg)
            _, alpha, _ = model(src.double(), lengths, tgt_in)
            h, c = alignment_hits(alpha, corpus, idx)
            hits, n = hits + h, n + c
    m["align"] = hits / n
    m["phonemes"] = n
    m["seconds"] = float(np.mean([u["seconds"] for u in corpus.utts]))
    return m


def card_metrics(ms, seconds):
    rows = "".join(
        f"| {name} ({m['n']} utterances, {m['phonemes']} phonemes, {m['seconds']:.2f} s mean) | {100 * m['greedy']:.2f} % "
        f"| {100 * m['beam5']:.2f} % (first {m['beam_n']}) | {100 * m['align']:.2f} % |\n" for name, m in ms)
    return (f"Measured {dt.datetime.utcnow().strftime('%Y-%m-%d')} with `/usr/bin/python3 -m tools.train.train_speech "
            f"--data DIR --report`, decoded one at a time with the engine's greedy and beam-search rules "
            f"(seq2seq_torch, float64; {seconds:.0f} s).\n\n"
            f"| test set | PER greedy | PER beam 5 | alignment: phonemes whose attention peak is inside their span |\n"
            f"|---|---|---|---|\n{rows}")


def report(args):
    torch.set_num_threads(args.threads)
    t0 = time.time()
    ms = [("words seen in training", measure(args.out, Corpus(args.data, "test-seen"), args.beam_n)),
          ("words never heard", measure(args.out, Corpus(args.data, "test-unseen"), args.beam_n))]
    seconds = time.time() - t0
    update_card(args.out, card_metrics(ms, seconds))
    for name, m in ms:
        print(f"{name}: PER greedy {100 * m['greedy']:.2f}%, beam 5 {100 * m['beam5']:.2f}%, alignment "
              f"{100 * m['align']:.2f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default=os.path.join(ROOT, "resources", "models", "speech-location"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--max-minutes", type=float, default=25.0)
    ap.add_argument("--beam-n", type=int, default=300)
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args()
    if args.report:
        report(args)
        return
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    train, valid = Corpus(args.data, "train"), Corpus(args.data, "valid")
    counts = Counter(p for u in train.utts for p in phonemes(u))
    vocab = ["<pad>", "<s>", "</s>"] + sorted(counts, key=lambda p: (-counts[p], p))
    config = sp.make_config(vocab, **SIZES, max_source_length=MAX_SOURCE_STEPS, max_target_length=MAX_PHONEMES,
                            task="speech recognition (phonemes)", trained_on=TRAINED_ON)
    model = st.new_model(config)
    model.encoder.feature_mean.copy_(train.feats.mean(0))
    model.encoder.feature_std.copy_(train.feats.std(0).clamp_min(1e-3))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    params = sum(p.numel() for p in model.parameters()) + 2 * 80
    print(f"speech: {params} parameters, {len(vocab)} phonemes, {len(train)} utterances", flush=True)
    order = sorted(range(len(train)), key=lambda i: train.starts[i + 1] - train.starts[i])
    batches = [order[i:i + 32] for i in range(0, len(order), 32)]
    start, cpu_start = time.time(), time.process_time()
    step, best, best_align = 0, 9.0, 0.0
    while time.time() - start < args.max_minutes * 60:
        idx = rng.choice(batches)
        src, lengths, tgt_in, tgt = batch(train, idx, config)
        logits, _, _ = model(src, lengths, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.3f} {time.time() - start:.0f} s", flush=True)
        if step % args.eval_every == 0:
            per, align = evaluate(model, valid, config)
            print(f"step {step}: validation PER {100 * per:.2f}%, alignment {100 * align:.2f}%", flush=True)
            if per < best:
                best, best_align = per, align
                st.save_model(model, args.out)
    per, align = evaluate(model, valid, config)
    print(f"step {step}: validation PER {100 * per:.2f}%, alignment {100 * align:.2f}%", flush=True)
    if per < best:
        best, best_align = per, align
        st.save_model(model, args.out)
    print(f"trained {step} steps, {(time.time() - start) / 60:.1f} min wall, {(time.process_time() - cpu_start) / 60:.1f}"
          f" min CPU; best validation PER {100 * best:.2f}%, alignment {100 * best_align:.2f}%", flush=True)


if __name__ == "__main__":
    main()
