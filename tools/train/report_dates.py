#!/usr/bin/python3
"""Measures the shipped date models and writes the numbers into their model cards.

    /usr/bin/python3 -m tools.train.report_dates [--variants V ...] [--threads N] [--no-cards]

For every resources/models/date-<variant>/ present, on the fixed test set (dates_data.TEST: 2000 examples
whose (date, format) keys are held out from training, seed 2002), decoding one example at a time exactly as
the engine does (seq2seq_torch.greedy / beam_search, float64 from the float32 weights):

  exact (greedy)   share of examples whose greedy output is the target and ended with </s>
  exact (beam 5)   the same for the best hypothesis of a width-5 beam search
  alignment        over the greedy outputs' field characters (the digits of YYYY, MM and DD, output positions
                   0-3, 5-6, 8-9), the share of steps whose attention argmax (the row of the step that emitted
                   the character) lies inside the source span of that same field (dates_data spans: the day's
                   digits, the month's digits or name, the year's 2 or 4 digits); also per field

Prints a table and replaces the "<!-- metrics:begin -->" .. "<!-- metrics:end -->" part of each MODEL_CARD.md.
Requirements: exact >= 0.99 for every variant, alignment >= 0.90 for bahdanau and the Luong global variants.
ConvS2S: the alignment of every decoder layer's own map too (its field alignment is that of the layers' mean).
"""

import argparse
import datetime as dt
import os
import re
import time

import torch

from tools.train import dates_data as dd
from tools.train import seq2seq_torch as st

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

FIELDS = {"year": range(0, 4), "month": range(5, 7), "day": range(8, 10)}
COMMAND = "/usr/bin/python3 -m tools.train.report_dates"


def first_max(row):
    return max(range(len(row)), key=lambda k: (row[k], -k))


def measure(model, examples):
    cfg = model.config
    g_ok = b_ok = 0
    hits = {f: 0 for f in FIELDS}
    steps = {f: 0 for f in FIELDS}
    layer_hits = None     # ConvS2S: per decoder layer
    for ex in examples:
        ids = st.source_ids(ex["text"], cfg)
        g = st.greedy(model, ids)
        b = st.beam_search(model, ids, 5)[0]
        g_ok += int(g.finished and st.target_text(g.ids, cfg) == ex["target"])
        b_ok += int(b.finished and st.target_text(b.ids, cfg) == ex["target"])
        rows = g.as_dict(cfg)["attention"]      # ConvS2S: the layers' mean, as the engine's alignment
        layers = g.as_dict(cfg).get("layers")
        if layers is not None and layer_hits is None:
            layer_hits = [0] * len(layers)
        for field, positions in FIELDS.items():
            lo, hi = ex["spans"][field]
            for t in positions:
                if t < len(rows):
                    steps[field] += 1
                    hits[field] += int(lo <= first_max(rows[t]) < hi)
                    for l, layer in enumerate(layers or []):
                        layer_hits[l] += int(lo <= first_max(layer[t]) < hi)
    n = len(examples)
    total = max(sum(steps.values()), 1)
    return {"greedy": g_ok / n, "beam5": b_ok / n, "align": sum(hits.values()) / total,
            **{f"align_{f}": hits[f] / max(steps[f], 1) for f in FIELDS}, "n": n,
            "align_layers": [h / total for h in layer_hits] if layer_hits else None}


def card_section(variant, m, seconds):
    need = {"luong-local-p": "n/a (local-p: reported only)", "convs2s": "n/a (reported only)"}.get(variant, ">= 90 %")
    layers = ""
    if m["align_layers"]:
        layers = (f"| field alignment per decoder layer, 0 to {len(m['align_layers']) - 1} (the field alignment above "
                  f"is their mean map's) | " + " / ".join(f"{100 * a:.2f} %" for a in m["align_layers"]) + " | |\n")
    return (f"Measured {dt.datetime.utcnow().strftime('%Y-%m-%d')} with `{COMMAND}` on the test set: {m['n']} "
            f"examples from held-out (date, format) keys (`dates_data.TEST`, seed 2002), decoded one at a time "
            f"with the engine's greedy and beam-search rules (seq2seq_torch, float64; {seconds:.0f} s).\n\n"
            f"| metric | value | requirement |\n|---|---|---|\n"
            f"| exact match, greedy | {100 * m['greedy']:.2f} % | >= 99 % |\n"
            f"| exact match, beam 5 | {100 * m['beam5']:.2f} % | |\n"
            f"| field alignment (attention argmax inside the source span of the field being written) | "
            f"{100 * m['align']:.2f} % | {need} |\n"
            f"| alignment, year / month / day digits | {100 * m['align_year']:.1f} % / {100 * m['align_month']:.1f} % / "
            f"{100 * m['align_day']:.1f} % | |\n" + layers)


def update_card(folder, text):
    path = os.path.join(folder, "MODEL_CARD.md")
    card = open(path).read()
    new = re.sub(r"<!-- metrics:begin -->.*<!-- metrics:end -->",
                 lambda _: "<!-- metrics:begin -->\n" + text + "<!-- metrics:end -->", card, flags=re.S)
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", nargs="*", default=list(st.VARIANTS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-cards", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    test = dd.heldout_set(**dd.TEST)
    rows = []
    for v in args.variants:
        folder = os.path.join(ROOT, "resources", "models", f"date-{v}")
        if not os.path.exists(os.path.join(folder, "model.safetensors")):
            print(f"date-{v}: not trained yet")
            continue
        t0 = time.time()
        m = measure(st.load_model(folder, torch.float64), test)
        seconds = time.time() - t0
        rows.append((v, m, os.path.getsize(os.path.join(folder, "model.safetensors"))))
        if not args.no_cards and os.path.exists(os.path.join(folder, "MODEL_CARD.md")):
            update_card(folder, card_section(v, m, seconds))
    print(f"\ntest set: {len(test)} held-out examples (seed {dd.TEST['seed']})\n")
    print(f"{'variant':15s} {'greedy':>8s} {'beam 5':>8s} {'align':>8s} {'year':>7s} {'month':>7s} {'day':>7s} {'bytes':>9s}")
    for v, m, size in rows:
        print(f"{v:15s} {100 * m['greedy']:7.2f}% {100 * m['beam5']:7.2f}% {100 * m['align']:7.2f}% "
              f"{100 * m['align_year']:6.1f}% {100 * m['align_month']:6.1f}% {100 * m['align_day']:6.1f}% {size:9d}"
              + ("  layers " + " / ".join(f"{100 * a:.2f}%" for a in m["align_layers"]) if m["align_layers"] else ""))
    bad = [v for v, m, _ in rows if m["greedy"] < 0.99 or (v not in ("luong-local-p", "convs2s") and m["align"] < 0.9)]
    if bad:
        print("below requirement: " + ", ".join(bad))


if __name__ == "__main__":
    main()
