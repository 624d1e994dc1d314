#!/usr/bin/python3
"""The held-out inputs the faithfulness benchmark reads for the bundled word models (tests/bench/bench_faithfulness):
the first N reviews of the sentiment models' held-out set (reviews_data.make_splits: seed 2, none with a training text)
and the first N pairs of the entailment model's (entailment_data.pairs(N, 2, "test"): premises held out by their hash).
Each is exactly what the training scripts evaluate on, so no input was seen in training.

    /usr/bin/python3 -m tools.train.heldout_inputs [--count N] [--out tests/data/faithfulness]

Writes reviews.jsonl ({"text": ..., "label": 0|1}) and entailment.jsonl ({"text": premise, "pair": hypothesis,
"label": "entailment"|"contradiction"|"neutral"}), one input a line (the corpus format of attnscope-cli).
"""

import argparse
import json
import pathlib

from tools.train import entailment_data as ed
from tools.train import reviews_data as rd
from tools.train.train_sentiment import N_TRAIN as REVIEWS_TRAIN


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--out", default="tests/data/faithfulness")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _, reviews = rd.make_splits(REVIEWS_TRAIN, args.count)
    with open(out / "reviews.jsonl", "w") as f:
        for r in reviews:
            f.write(json.dumps({"text": r["text"], "label": r["label"]}) + "\n")
    pairs = ed.pairs(args.count, 2, "test")
    with open(out / "entailment.jsonl", "w") as f:
        for p in pairs:
            f.write(json.dumps({"text": " ".join(p["premise"]), "pair": " ".join(p["hypothesis"]),
                                "label": p["label"]}) + "\n")
    print(f"{out}: {len(reviews)} reviews, {len(pairs)} entailment pairs")


if __name__ == "__main__":
    main()
