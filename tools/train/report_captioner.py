#!/usr/bin/python3
"""Measures the shipped captioners and writes the numbers into their model cards.

    /usr/bin/python3 -m tools.train.report_captioner [--variants soft hard] [--n 1000] [--threads N] [--no-cards]

For every resources/models/caption-<variant>/ present, on held-out scenes (scenes_data seeds 10,000,000 ..
10,000,000 + n - 1; training never sees a seed >= 10,000,000), decoding one image at a time with the
engine's rules (captioner_torch.greedy / beam_search, float32):

  exact (greedy), exact (beam 3)   share of scenes whose caption is exactly the reference (and ended with
                                   <end>); also per object count (1, 2, 3, 4)
  BLEU-4                           corpus BLEU of the greedy captions against the one reference each
                                   (Papineni et al. 2002: clipped 1-4-gram precisions, their geometric mean
                                   with equal weights, times the brevity penalty exp(1 - r / c) when c < r;
                                   r, c = total reference / candidate words; no smoothing), as a percentage
  grounding                        teacher-forced on the reference caption (hard: argmax locations): for every
                                   colour or shape word of object k, the alpha row of the step predicting it
                                   against object k's mask reduced to the G x G grid as covered fractions m_i:
                                   mass = sum_i alpha_i m_i, chance = (1/L) sum_i m_i (MODELS.md section 4);
                                   reported: mean mass, mean chance, mean of mass / chance; overall, per word
                                   type (colour, shape) and per object size
  argmax inside                    share of those steps whose alpha argmax is a cell the object covers (m_i > 0)

Prints a table and replaces the "<!-- metrics:begin -->" .. "<!-- metrics:end -->" part of each MODEL_CARD.md.
Targets: soft grounding mass >= 3 x chance on average; exact match > 90 % on 1-2 object scenes.
"""

import argparse
import collections
import datetime as dt
import math
import os
import re
import time

import numpy as np
import torch

from tools.train import captioner_torch as ct
from tools.train import scenes_data as sd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

COMMAND = "/usr/bin/python3 -m tools.train.report_captioner"


def ngrams(words, n):
    return collections.Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def corpus_bleu(candidates, references, max_n=4):
    """candidates, references: lists of word lists (one reference per candidate). Returns BLEU in [0, 1]."""
    matched = [0] * max_n
    total = [0] * max_n
    c_len = r_len = 0
    for cand, ref in zip(candidates, references):
        c_len += len(cand)
        r_len += len(ref)
        for n in range(1, max_n + 1):
            cn, rn = ngrams(cand, n), ngrams(ref, n)
            matched[n - 1] += sum(min(v, rn[g]) for g, v in cn.items())
            total[n - 1] += max(len(cand) - n + 1, 0)
    if min(matched) == 0:
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(matched, total)) / max_n
    bp = 1.0 if c_len >= r_len else math.exp(1.0 - r_len / max(c_len, 1))
    return bp * math.exp(log_p)


def grid_masks(scene, G):
    cell = sd.S // G
    return [o.mask.reshape(G, cell, G, cell).mean(axis=(1, 3)).reshape(-1) for o in scene.objects]


@torch.no_grad()
def grounding(model, scenes):
    """Teacher-forced grounding records: (word type, size, mass, chance, argmax inside)."""
    cfg = model.config
    G = model.grid
    recs = []
    for b in range(0, len(scenes), 50):
        chunk = scenes[b:b + 50]
        ids = [ct.words_to_ids(sc.words, cfg) for sc in chunk]
        T = max(len(i) for i in ids)
        ids_in = torch.full((len(chunk), T), ct.PAD, dtype=torch.long)
        for j, i in enumerate(ids):
            ids_in[j, :len(i)] = torch.tensor([ct.START] + i[:-1])
        images = torch.from_numpy(np.stack([sc.image for sc in chunk])).to(next(model.parameters()).dtype)
        alpha = model(images, ids_in)["alpha"].numpy()           # hard: argmax locations (sample=False)
        for j, sc in enumerate(chunk):
            masks = grid_masks(sc, G)
            for t, (w, k) in enumerate(zip(sc.words, sc.word_objects)):
                if k < 0 or not (w in sd.COLOURS or w in sd.SHAPES):
                    continue
                m, a = masks[k], alpha[j, t]
                recs.append(("colour" if w in sd.COLOURS else "shape", sc.objects[k].size,
                             float((a * m).sum()), float(m.mean()), bool(m[int(np.argmax(a))] > 0)))
    return recs


def summarise(recs):
    if not recs:
        return {"n": 0}
    mass = np.array([r[2] for r in recs])
    chance = np.array([r[3] for r in recs])
    return {"n": len(recs), "mass": float(mass.mean()), "chance": float(chance.mean()),
            "ratio": float((mass / chance).mean()), "inside": float(np.mean([r[4] for r in recs]))}


def measure(model, scenes):
    cfg = model.config
    by_count = collections.defaultdict(lambda: [0, 0, 0])   # count -> [n, greedy ok, beam ok]
    cands, refs = [], []
    t_greedy = 0.0
    for sc in scenes:
        want = ct.words_to_ids(sc.words, cfg)
        t0 = time.process_time()
        g = ct.greedy(model, sc.image)
        t_greedy += time.process_time() - t0
        b = ct.beam_search(model, sc.image, 3)[0]
        row = by_count[len(sc.objects)]
        row[0] += 1
        row[1] += int(g.ids == want)
        row[2] += int(b.ids == want)
        cands.append([w for w in ct.ids_to_words(g.ids, cfg) if w != "<end>"])
        refs.append(sc.words)
    n = len(scenes)
    recs = grounding(model, scenes)
    m = {"n": n, "greedy": sum(r[1] for r in by_count.values()) / n, "beam3": sum(r[2] for r in by_count.values()) / n,
         "by_count": {c: (r[0], r[1] / r[0], r[2] / r[0]) for c, r in sorted(by_count.items())},
         "bleu": corpus_bleu(cands, refs), "ms_per_image": 1000 * t_greedy / n,
         "ground": summarise(recs),
         "ground_colour": summarise([r for r in recs if r[0] == "colour"]),
         "ground_shape": summarise([r for r in recs if r[0] == "shape"]),
         "ground_small": summarise([r for r in recs if r[1] == "small"]),
         "ground_large": summarise([r for r in recs if r[1] == "large"])}
    c12 = [by_count[c] for c in (1, 2) if c in by_count]
    m["greedy12"] = sum(r[1] for r in c12) / max(1, sum(r[0] for r in c12))
    return m


def pct(x):
    return f"{100 * x:.1f} %"


def card_section(variant, m, seconds):
    lines = [f"Measured {dt.datetime.utcnow().strftime('%Y-%m-%d')} with `{COMMAND}` on {m['n']} held-out scenes "
             f"(seeds 10,000,000 .. {10_000_000 + m['n'] - 1}), one image at a time with the engine's greedy and "
             f"beam-search rules (captioner_torch, float32; {seconds:.0f} s).", "",
             "| metric | value | target |", "|---|---|---|",
             f"| exact match, greedy | {pct(m['greedy'])} | |",
             f"| exact match, beam 3 | {pct(m['beam3'])} | |",
             f"| exact match, greedy, 1-2 objects | {pct(m['greedy12'])} | > 90 % |"]
    for c, (n, g, b) in m["by_count"].items():
        lines.append(f"| exact match with {c} object{'s' if c > 1 else ''} ({n} scenes), greedy / beam 3 | "
                     f"{pct(g)} / {pct(b)} | |")
    lines.append(f"| corpus BLEU-4, greedy | {100 * m['bleu']:.1f} | |")
    need = ">= 3 x chance" if variant == "soft" else ""
    for key, label in (("ground", "all colour and shape words"), ("ground_colour", "colour words"),
                       ("ground_shape", "shape words"), ("ground_small", "words of small objects"),
                       ("ground_large", "words of large objects")):
        gm = m[key]
        lines.append(f"| grounding, {label} ({gm['n']} steps): mass inside / chance (mean ratio) | "
                     f"{gm['mass']:.3f} / {gm['chance']:.3f} (x{gm['ratio']:.1f}) | {need if key == 'ground' else ''} |")
    gm = m["ground"]
    lines.append(f"| attention argmax on a cell the object covers | {pct(gm['inside'])} | |")
    lines.append(f"| greedy captioning time per image (torch, 1 thread, float32) | {m['ms_per_image']:.1f} ms | |")
    lines.append("")
    lines.append("Grounding is teacher-forced on the reference caption (the hard model with its argmax locations): "
                 "for each colour or shape word, the attention of the step predicting it against the described "
                 "object's mask reduced to the 8 x 8 grid (covered fraction m_i per cell); mass = sum_i alpha_i m_i, "
                 "chance = mean_i m_i, the ratio averaged over the words.")
    return "\n".join(lines) + "\n"


def update_card(folder, text):
    path = os.path.join(folder, "MODEL_CARD.md")
    card = open(path).read()
    new = re.sub(r"<!-- metrics:begin -->.*<!-- metrics:end -->",
                 lambda _: "<!-- metrics:begin -->\n" + text + "<!-- metrics:end -->", card, flags=re.S)
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", nargs="*", default=["soft", "hard"])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", help="folder holding caption-<variant>/ (default resources/models)")
    ap.add_argument("--no-cards", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    scenes = [sd.generate_scene(s) for s in range(sd.HELDOUT_START, sd.HELDOUT_START + args.n)]
    base = args.models or os.path.join(ROOT, "resources", "models")
    for v in args.variants:
        folder = os.path.join(base, f"caption-{v}")
        if not os.path.exists(os.path.join(folder, "model.safetensors")):
            print(f"caption-{v}: not trained yet")
            continue
        t0 = time.time()
        m = measure(ct.load_model(folder, torch.float32), scenes)
        seconds = time.time() - t0
        text = card_section(v, m, seconds)
        print(f"\ncaption-{v} ({os.path.getsize(os.path.join(folder, 'model.safetensors'))} bytes)\n" + text)
        if not args.no_cards and os.path.exists(os.path.join(folder, "MODEL_CARD.md")):
            update_card(folder, text)
        if v == "soft" and m["ground"]["ratio"] < 3:
            print("caption-soft: grounding below 3 x chance")
        if m["greedy12"] <= 0.9:
            print(f"caption-{v}: exact match on 1-2 objects at most 90 %")


if __name__ == "__main__":
    main()
