#!/usr/bin/python3
"""Writes the seq2seq parity fixtures for the C++ engine: tests/data/seq2seq/<case>/expected.json.

    /usr/bin/python3 -m tools.parity.make_seq2seq_fixtures [random|trained|all] [--out DIR]

  random   tiny random models, one per variant (e 8, h 8, d 16, a 8, local-p window 3; ConvS2S width 8, 2 encoder
           layers of kernel 3, 2 decoder layers of kernel 2; the date
           vocabularies, max_source_length 40, max_target_length 12; variant i takes the first seed
           from 101 + 100 i on whose fixture passes the checks below and is varied): writes
           tests/data/seq2seq/random-<variant>/{config.json, model.safetensors, expected.json}
           and a random word model (Bahdanau, the headline vocabularies, seeds from 901): random-words
  trained  the shipped models resources/models/date-<variant>/ and headlines-gru/ (those present): writes only
           tests/data/seq2seq/<name>/expected.json ("model" points at the resources folder)
  all      both (the default)

expected.json:
  {"model": "<model folder relative to the repo root>",
   "runs": [{"text": ..., "source_ids": [...],
             "greedy": {"ids", "text", "log_prob", "finished", "attention", "positions"},
             "beam": {"width": 5, "hypotheses": [ {same keys}, ... best first ]}}]}
  ids exclude <s> and include </s> when emitted; text excludes </s>; attention has one row per id (the row
  of the step that emitted it) over the source characters (after truncation); positions is p_t per step for
  local-p, [] otherwise. ConvS2S adds "layers" [L][ids][S], each decoder layer's rows; its "attention" is their
  mean. Decoding follows tools/train/seq2seq_torch.py (MODELS.md "Decoding") in float64
  from the float32 weights of the folder; floats are rounded to 7 significant digits.

The script checks that the fixtures are robust for a float32 engine compared at 1e-4: every choice the
search makes (the k-th against the (k+1)-th candidate, the order of the returned hypotheses, greedy's
argmax) is won by more than MARGIN, no local-p source position lies within MARGIN of a window edge, and
torch's own float32 decode of every run gives the same ids with every number within DRIFT of the float64
one (log_prob and attention absolute, p_t relative to max(1, |p_t|)) (a random model whose decode amplifies rounding is rejected).
"""

import argparse
import json
import os

import torch

from tools.train import dates_data as dd
from tools.train import headlines_data as hd
from tools.train import seq2seq_torch as st

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

VARIANTS = list(st.VARIANTS)
RANDOM_CONVS2S = dict(embedding_size=8, encoder_layers=2, encoder_kernel=3, decoder_layers=2, decoder_kernel=2)
MARGIN = 2e-4
DRIFT = 2.5e-5
BEAM = 5

LONG = "  Wednesday, the 23rd of September, 2026"       # exactly max_source_length (40) characters
assert len(LONG) == dd.MAX_SOURCE_LENGTH
RANDOM_INPUTS = ["21 Nov 2026", "Saturday, 21 November 2026", "21/11/26", "21 Nov 2026 \u00e9", LONG, "7"]
TRAINED_INPUTS = ["Saturday, 21 November 2026", "nov 21st 2026", "the 3rd of MAY, 1999", "21 Nov 2026 \u00e9",
                  LONG, "7"]
# The word models' (headlines): sentences of the generator, one with words it never wrote, one of 42 words (truncated
# to max_source_length 40), one word.
LONG_SENTENCE = ("Zenith confirmed on Monday that it will build 500 new homes in Madrid next year, in a decision that "
                 "was welcomed by local business leaders and residents, according to a statement released by the city "
                 "council late in the evening on Friday.")
assert len(st.source_units(LONG_SENTENCE, {"unit": "word"})) == 42
WORD_INPUTS = ["Police in Leeds arrested a 23 year old man on Monday after a robbery.",
               "The price of milk rose by 5 percent in May, the statistics office said.",
               "Astronomers in Chile discovered a bright comet on Friday!", LONG_SENTENCE, "Veltro"]


def sig7(x):
    if isinstance(x, float):
        return float(f"{x:.7g}")
    if isinstance(x, list):
        return [sig7(v) for v in x]
    if isinstance(x, dict):
        return {k: sig7(v) for k, v in x.items()}
    return x


def randomise(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("embedding.weight"):
                p.copy_(0.8 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                scale = 2.5 if name.startswith(("local.", "attention.")) else 1.3
                p.copy_(scale * torch.randn(p.shape, generator=g) / p[0].numel() ** 0.5)   # fan-in
        # <pad> and <s> are never emitted (so every hypothesis' text is plain characters); </s> is likely
        # enough that some hypotheses end before max_target_length and some do not.
        model.decoder.out.bias[st.PAD] = -8.0
        model.decoder.out.bias[st.BOS] = -8.0
        model.decoder.out.bias[st.EOS] += 1.0


def decode_run(model, text, margins):
    cfg = model.config
    ids = st.source_ids(text, cfg)
    run = {"text": text, "source_ids": ids}
    trace_g, trace_b = [], []
    g = st.greedy(model, ids, trace=trace_g)
    hyps = st.beam_search(model, ids, BEAM, trace=trace_b)
    for trace, k in ((trace_g, 1), (trace_b, BEAM)):
        for scores in trace:
            if len(scores) > k:
                margins.append(scores[k - 1] - scores[k])
    for a, b in zip(hyps, hyps[1:]):
        margins.append(a.log_prob - b.log_prob)
    if model.window is not None:
        D = model.window
        for h in [g] + hyps:
            for p in h.positions:
                margins.extend(abs(abs(j - p) - D) for j in range(len(ids)))
    for h in [g] + hyps:
        assert all(i not in (st.PAD, st.BOS) for i in h.ids), (text, h.ids)
    run["greedy"] = g.as_dict(cfg)
    run["beam"] = {"width": BEAM, "hypotheses": [h.as_dict(cfg) for h in hyps]}
    return run


def decode_all(model, inputs):
    margins = []
    runs = [decode_run(model, t, margins) for t in inputs]
    return runs, min(margins)


def float32_drift(folder, runs):
    """Largest difference between torch's float32 decode and the float64 runs (inf if ids differ): absolute for
    log_prob and attention, relative to max(1, |p_t|) for positions."""
    m32 = st.load_model(folder, torch.float32)
    worst = 0.0
    for run in runs:
        for want, got in [(run["greedy"], st.greedy(m32, run["source_ids"]))] + \
                list(zip(run["beam"]["hypotheses"], st.beam_search(m32, run["source_ids"], BEAM))):
            if got.ids != want["ids"]:
                return float("inf")
            got = got.as_dict(m32.config)
            diffs = [abs(got["log_prob"] - want["log_prob"])]
            for key in ("attention", "layers"):
                diffs += [abs(a - b) for a, b in zip(flat(got.get(key, [])), flat(want.get(key, [])))]
            diffs += [abs(a - b) / max(1.0, abs(b)) for a, b in zip(got["positions"], want["positions"])]
            worst = max(worst, max(diffs))
    return worst


def flat(x):
    return [v for item in x for v in flat(item)] if isinstance(x, list) else [x]


def varied(runs):
    """Random fixtures should show every kind of ending: a greedy </s> after a few characters, a greedy
    run cut at max_target_length, and beams holding both finished and unfinished hypotheses."""
    g = [(r["greedy"]["finished"], len(r["greedy"]["ids"])) for r in runs]
    b = [h["finished"] for r in runs for h in r["beam"]["hypotheses"]]
    return any(f and n >= 3 for f, n in g) and any(not f for f, _ in g) and any(b) and not all(b)


def write_expected(case_dir, model_rel, runs, worst, drift):
    os.makedirs(case_dir, exist_ok=True)
    path = os.path.join(case_dir, "expected.json")
    with open(path, "w") as f:
        f.write('{"model": %s,\n "runs": [\n' % json.dumps(model_rel))
        f.write(",\n".join("  " + json.dumps(sig7(r), separators=(",", ":")) for r in runs))
        f.write("\n ]}\n")
    ends = [(r["greedy"]["finished"], len(r["greedy"]["ids"])) for r in runs]
    print(f"{os.path.relpath(path, ROOT)}: {os.path.getsize(path)} bytes, smallest margin {worst:.2e}, "
          f"float32 drift {drift:.1e}, greedy (finished, length) {ends}")
    if worst <= MARGIN:
        raise SystemExit(f"{case_dir}: a decision is won by only {worst:.2e} (<= {MARGIN}); change the inputs")
    if drift > DRIFT:
        raise SystemExit(f"{case_dir}: float32 decoding drifts {drift:.2e} (> {DRIFT}) from float64; change the inputs")


def make_random(out):
    for i, variant in enumerate(VARIANTS):
        case = os.path.join(out, f"random-{variant}")
        os.makedirs(case, exist_ok=True)
        for seed in range(101 + 100 * i, 200 + 100 * i):   # the first seed whose fixture is robust and varied
            torch.manual_seed(seed)
            cfg = st.make_config(variant, dd.SOURCE_VOCAB, dd.TARGET_VOCAB, e=8, h=8, d=16, a=8,
                                 max_source_length=dd.MAX_SOURCE_LENGTH, max_target_length=dd.MAX_TARGET_LENGTH,
                                 window=3, task="parity fixture (random weights)", convs2s=RANDOM_CONVS2S,
                                 trained_on="nothing: random weights")
            model = st.new_model(cfg)
            randomise(model, seed)
            st.save_model(model, case)
            model = st.load_model(case, torch.float64)   # the float32 weights as stored, widened
            runs, worst = decode_all(model, RANDOM_INPUTS)
            if worst > MARGIN and varied(runs):
                drift = float32_drift(case, runs)
                if drift <= DRIFT:
                    break
        else:
            raise SystemExit(f"{variant}: no seed gave a robust, varied fixture")
        print(f"random-{variant}: seed {seed}")
        write_expected(case, os.path.relpath(case, ROOT), runs, worst, drift)


def make_random_words(out):
    """A random word model (Bahdanau, the headline vocabularies): random-words."""
    case = os.path.join(out, "random-words")
    os.makedirs(case, exist_ok=True)
    src, tgt = hd.vocabularies()
    for seed in range(901, 1000):
        torch.manual_seed(seed)
        cfg = st.make_config("bahdanau", src, tgt, e=8, h=8, d=16, a=8, max_source_length=hd.MAX_SOURCE_LENGTH,
                             max_target_length=hd.MAX_TARGET_LENGTH, task="parity fixture (random weights)",
                             trained_on="nothing: random weights", unit="word")
        model = st.new_model(cfg)
        randomise(model, seed)
        st.save_model(model, case)
        model = st.load_model(case, torch.float64)
        runs, worst = decode_all(model, WORD_INPUTS)
        if worst > MARGIN and varied(runs):
            drift = float32_drift(case, runs)
            if drift <= DRIFT:
                break
    else:
        raise SystemExit("random-words: no seed gave a robust, varied fixture")
    print(f"random-words: seed {seed}")
    write_expected(case, os.path.relpath(case, ROOT), runs, worst, drift)


def make_trained(out):
    models = [(f"date-{v}", TRAINED_INPUTS) for v in VARIANTS] + [("headlines-gru", WORD_INPUTS)]
    for name, inputs in models:
        folder = os.path.join(ROOT, "resources", "models", name)
        if not os.path.exists(os.path.join(folder, "model.safetensors")):
            print(f"skipped {name}: {os.path.relpath(folder, ROOT)} has no model")
            continue
        model = st.load_model(folder, torch.float64)
        runs, worst = decode_all(model, inputs)
        write_expected(os.path.join(out, name), os.path.relpath(folder, ROOT), runs, worst,
                       float32_drift(folder, runs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", nargs="?", default="all", choices=["random", "trained", "all"])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "seq2seq"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.mode in ("random", "all"):
        make_random(args.out)
        make_random_words(args.out)
    if args.mode in ("trained", "all"):
        make_trained(args.out)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.out) for f in fs)
    print(f"{os.path.relpath(args.out, ROOT)}: {total} bytes in all")


if __name__ == "__main__":
    main()
