#!/usr/bin/python3
"""Writes the entailment attribution fixtures: tests/data/attribution/entailment-<case>.json, gradient x input and
integrated gradients of one label's logit with respect to both sentences' embedded words, by torch autograd through
tools/train/entailment_torch.py's model in float64 on the float32 weights.

  entailment-random   the random parity model of tools/parity/make_entailment_fixtures.py
                      (tests/data/entailment/random-entailment; run that script first)
  entailment-wbw      the shipped resources/models/entailment-wbw

Each file: {"model": <model folder relative to the repo root>, "steps": 16, "runs": [{"premise", "hypothesis",
"premise_ids", "hypothesis_ids", "label", "value" (the label's logit), "baseline_value" (the logit with every
embedded word 0), "grad_x_input" and "integrated_gradients" (one score per word: the premise's, then the
hypothesis's), "gap" (the sum of integrated gradients' scores - (value - baseline_value))}]}. Integrated gradients
use the midpoint rule, alpha_s = (s + 1/2) / steps, from the zero embedding. The words are
make_entailment_fixtures' (split_words without . ! ?, the first max_words of each sentence).

Before writing, every run's gradient is checked against central differences along random directions of the
embedded words; the script stops if they differ by more than 1e-6 relative.

    /usr/bin/python3 -m tools.parity.make_entailment_attribution_fixtures
"""

import json
import os
import sys

import numpy as np
import torch

from tools.parity.make_entailment_fixtures import words_of
from tools.train import entailment_torch as et

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "attribution")
STEPS = 16

# (premise, hypothesis, label): labels other than the prediction too.
CASES = {
    "entailment-random": (os.path.join("tests", "data", "entailment", "random-entailment"), [
        ("A man is sleeping.", "A man is not sleeping!", 0),
        # Unknown words and more words than max_words (6) in the premise.
        ("The ZEBRA isn't sleeping on the old beach in the park", "the dog is running", 2),
    ]),
    "entailment-wbw": (os.path.join("resources", "models", "entailment-wbw"), [
        ("A young man is sleeping on the beach.", "A man is sleeping.", 0),
        ("the farmer is eating near the river", "the farmer is not eating near the river", 1),
        ("The spaceship is zooming near the house", "Is the dog zooming?", 2),
    ]),
}


def logit(model, xp, xh, label):
    """The label's logit with the embedding's outputs replaced by xp [L, e] and xh [N, e] (the model's own forward
    otherwise: a forward hook hands them out in the order forward() embeds the sentences)."""
    queue = [xp.unsqueeze(0), xh.unsqueeze(0)]
    handle = model.embedding.register_forward_hook(lambda module, inputs, output: queue.pop(0))
    try:
        L, N = xp.shape[0], xh.shape[0]
        dummy_p, dummy_h = torch.zeros((1, L), dtype=torch.long), torch.zeros((1, N), dtype=torch.long)
        logits, _ = model(dummy_p, torch.tensor([L]), dummy_h, torch.tensor([N]))
    finally:
        handle.remove()
    return logits[0, label]


def gradients(model, xp, xh, label):
    xp = xp.clone().requires_grad_(True)
    xh = xh.clone().requires_grad_(True)
    value = logit(model, xp, xh, label)
    gp, gh = torch.autograd.grad(value, (xp, xh))
    return value.item(), gp, gh


def check_against_differences(model, xp, xh, label, gp, gh):
    rng = np.random.default_rng(3)
    eps = 1e-5
    for _ in range(3):
        dp = torch.from_numpy(rng.standard_normal(xp.shape))
        dh = torch.from_numpy(rng.standard_normal(xh.shape))
        with torch.no_grad():
            numeric = (logit(model, xp + eps * dp, xh + eps * dh, label) -
                       logit(model, xp - eps * dp, xh - eps * dh, label)).item() / (2 * eps)
        analytic = float((gp * dp).sum() + (gh * dh).sum())
        if abs(numeric - analytic) > 1e-6 * max(1.0, abs(analytic)):
            sys.exit(f"autograd {analytic} and central differences {numeric} differ")


def rounded(x):
    return [float(f"{float(v):.7g}") for v in x]


def attribution_run(model, config, premise, hypothesis, label):
    _, _, p_ids = words_of(config, premise)
    _, _, h_ids = words_of(config, hypothesis)
    table = model.embedding.weight.detach()
    xp, xh = table[p_ids], table[h_ids]
    value, gp, gh = gradients(model, xp, xh, label)
    check_against_differences(model, xp, xh, label, gp, gh)
    gxi = torch.cat([(xp * gp).sum(1), (xh * gh).sum(1)])
    sum_p, sum_h = torch.zeros_like(xp), torch.zeros_like(xh)
    for s in range(STEPS):
        alpha = (s + 0.5) / STEPS
        _, g_p, g_h = gradients(model, alpha * xp, alpha * xh, label)
        sum_p += g_p
        sum_h += g_h
    ig = torch.cat([(xp * sum_p / STEPS).sum(1), (xh * sum_h / STEPS).sum(1)])
    with torch.no_grad():
        baseline = logit(model, torch.zeros_like(xp), torch.zeros_like(xh), label).item()
    return {"premise": premise, "hypothesis": hypothesis, "premise_ids": p_ids, "hypothesis_ids": h_ids,
            "label": label, "value": float(f"{value:.7g}"), "baseline_value": float(f"{baseline:.7g}"),
            "grad_x_input": rounded(gxi), "integrated_gradients": rounded(ig),
            "gap": float(f"{float(ig.sum()) - (value - baseline):.7g}")}


def main():
    for name, (rel, pairs) in CASES.items():
        folder = os.path.join(ROOT, rel)
        if not os.path.isdir(folder):
            sys.exit(f"{folder} is missing")
        model, config = et.load_model(folder)
        model = model.double()
        runs = [attribution_run(model, config, *pair) for pair in pairs]
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump({"model": rel, "steps": STEPS, "runs": runs}, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"{name}: {len(runs)} runs, autograd agrees with central differences; gaps",
              [round(r["gap"], 5) for r in runs])


if __name__ == "__main__":
    main()
