#!/usr/bin/python3
"""Writes the captioner parity fixtures for the C++ engine: tests/data/captioner/.

    /usr/bin/python3 -m tools.parity.make_captioner_fixtures [random|trained|scenes|all] [--out DIR]

  random   tiny random models, soft and hard (channels [4, 8] on S = 16 -> a 4 x 4 grid, D 8, E 8, H 16,
           A 8, a 9-word vocabulary, max_caption_length 8, mean/std (0.4, 0.5, 0.6)/(0.2, 0.25, 0.3));
           the first seed from 101 (soft) / 201 (hard) on whose fixture passes the checks below and is varied;
           writes tests/data/captioner/random-<soft|hard>/{config.json, model.safetensors, expected.json,
           expected.safetensors}; inputs: 3 random images (float32 in [0, 1])
  trained  the shipped models resources/models/caption-<soft|hard>/ (those present): writes
           tests/data/captioner/caption-<variant>/{expected.json, expected.safetensors} ("model" points at the
           resources folder); inputs: held-out scenes 10,000,002 (2 objects) and 10,000,001 (4 objects)
  scenes   tests/data/captioner/scenes.{json,safetensors}: scenes_data.generate_scene for a few seeds, for the
           C++ port of the generator (engine/src/vision/scenes.cpp), plus splitmix64 outputs
  all      everything (the default)

expected.json:
  {"model": "<model folder relative to the repo root>", "attention": "soft"|"hard", "grid": G, "beam_width": 3,
   "runs": [{"name": "run0", "scene_seed": seed or null, "reference": caption or null,
             "teacher_ids": [...],
             "greedy": {"ids", "words", "text", "log_prob", "finished"},
             "beam": [{same keys}, ... best first],
             "teacher": {"ids", "log_prob", "finished"}}]}
expected.safetensors (float32 unless said; <run> = run0, run1, ...; <dec> = greedy, beam0, beam1, ..., teacher):
  <run>.image          [S, S, 3]  the input in [0, 1] (row-major y, x, RGB; the engine normalises with mean/std)
  <run>.features       [L, D]     the annotations
  <run>.<dec>.ids      [n] I32    emitted ids (no <start>; <end> included when emitted)
  <run>.<dec>.alpha    [n, L]     per emitted id the alpha of the step that emitted it
  <run>.<dec>.beta     [n]
  <run>.<dec>.log_softmax [n, V]  per step the log-softmax of the logits
  <run>.<dec>.locations [n] I32   hard only: the argmax cell each step read
Decoding follows tools/train/captioner_torch.py (MODELS.md section 4 "Decoding") in float64 from the float32
weights; everything is rounded to float32 once, when written. teacher: the decoder fed the given ids (the
reference caption's ids + <end> for scenes), one row per given id.

Robustness checks (as make_seq2seq_fixtures.py): every search decision (the k-th against the (k+1)-th candidate,
the order of returned hypotheses, greedy's argmax) and every hard argmax location (the best alpha against the
second) is won by more than MARGIN, and torch's own float32 decode gives the same ids and locations with every
alpha, beta and log_prob within DRIFT of the float64 one.

scenes.json: {"splitmix64": [{"seed": "<decimal>", "outputs": ["<decimal>", ... 8]}],
              "scenes": [{"seed", "caption", "words", "word_objects", "prng_calls",
                          "objects": [{"shape", "colour", "size", "r", "E", "cx", "cy", "rgb", "bbox"}]}]}
scenes.safetensors: "<seed>.pixels" U8 [128, 128, 3] and "<seed>.labels" U8 [128, 128] (0 background,
k + 1 where object k's mask is).
"""

import argparse
import json
import os

import numpy as np
import torch

from tools import safetensors_io
from tools.train import captioner_torch as ct
from tools.train import scenes_data as sd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# safetensors_io writes F32/F16/I32/I64; the scene pixels and labels are U8 (the format's "U8").
safetensors_io._DT.setdefault(np.dtype("uint8"), "U8")
safetensors_io._NP.setdefault("U8", np.dtype("uint8"))

MARGIN = 2e-4
DRIFT = 5e-5
BEAM = 3
RANDOM_VOCAB = ["<pad>", "<start>", "<end>", "<unk>", "a", "red", "circle", "above", "and"]
TRAINED_SEEDS = [10_000_002, 10_000_001]   # 2 and 4 objects
SCENE_SEEDS = [0, 4, 5, 82, 10_000_000, 2 ** 64 - 1]   # 2, 1, 4, 2 (equal keys), 3, 4 objects


def randomise(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("embedding.weight"):
                p.copy_(0.8 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                fan_in = p[0].numel()
                scale = 2.5 if "attention" in name else 1.3
                p.copy_(scale * torch.randn(p.shape, generator=g) / fan_in ** 0.5)
        # <pad> and <start> are never emitted; <end> likely enough that some hypotheses end early and some not.
        model.decoder.out.bias[ct.PAD] = -8.0
        model.decoder.out.bias[ct.START] = -8.0
        model.decoder.out.bias[ct.END] += 1.0


def location_margins(model, hyp):
    out = []
    if model.hard:
        for row in hyp.alpha:
            s = sorted(row, reverse=True)
            out.append(s[0] - s[1])
    return out


def decode(model, image, teacher_ids, margins):
    trace_g, trace_b = [], []
    g = ct.greedy(model, image, trace=trace_g)
    hyps = ct.beam_search(model, image, BEAM, trace=trace_b)
    tf = ct.teacher_forced(model, image, teacher_ids)
    for trace, k in ((trace_g, 1), (trace_b, BEAM)):
        for scores in trace:
            if len(scores) > k:
                margins.append(scores[k - 1] - scores[k])
    for a, b in zip(hyps, hyps[1:]):
        margins.append(a.log_prob - b.log_prob)
    for h in [g, tf] + hyps:
        margins.extend(location_margins(model, h))
    for h in [g] + hyps:
        assert all(i not in (ct.PAD, ct.START) for i in h.ids), h.ids
    return g, hyps, tf


def features_of(model, image):
    with torch.no_grad():
        img = torch.as_tensor(image, dtype=next(model.parameters()).dtype)[None]
        return model.encode(img)[0].numpy()


def drift_of(folder, runs):
    """Largest difference between torch's float32 decode and the float64 one (inf if ids or locations differ)."""
    m32 = ct.load_model(folder, torch.float32)
    worst = 0.0
    for run in runs:
        image = run["image"]
        got = [ct.greedy(m32, image)] + ct.beam_search(m32, image, BEAM) + [ct.teacher_forced(m32, image, run["teacher_ids"])]
        want = [run["greedy"]] + run["beam"] + [run["teacher"]]
        if len(got) != len(want):
            return float("inf")
        for a, b in zip(got, want):
            if a.ids != b.ids or a.locations != b.locations:
                return float("inf")
            d = [abs(a.log_prob - b.log_prob)]
            d += [abs(x - y) for ra, rb in zip(a.alpha, b.alpha) for x, y in zip(ra, rb)]
            d += [abs(x - y) for x, y in zip(a.beta, b.beta)]
            worst = max(worst, max(d))
        f32 = features_of(m32, image).astype(np.float64)
        worst = max(worst, float(np.abs(f32 - run["features"]).max() / max(1.0, np.abs(run["features"]).max())))
    return worst


def hyp_json(h, cfg):
    return {"ids": list(h.ids), "words": ct.ids_to_words(h.ids, cfg), "text": ct.ids_to_text(h.ids, cfg),
            "log_prob": float(f"{h.log_prob:.9g}"), "finished": h.finished}


def put_hyp(tensors, prefix, h, hard):
    tensors[prefix + ".ids"] = np.array(h.ids, dtype=np.int32)
    tensors[prefix + ".alpha"] = np.array(h.alpha, dtype=np.float32)
    tensors[prefix + ".beta"] = np.array(h.beta, dtype=np.float32)
    tensors[prefix + ".log_softmax"] = np.array(h.log_softmax, dtype=np.float32)
    if hard:
        tensors[prefix + ".locations"] = np.array(h.locations, dtype=np.int32)


def decode_all(model, inputs):
    """inputs: list of dicts (image, teacher_ids, scene_seed, reference) -> runs, smallest margin."""
    margins, runs = [], []
    for inp in inputs:
        g, hyps, tf = decode(model, inp["image"], inp["teacher_ids"], margins)
        runs.append(dict(inp, greedy=g, beam=hyps, teacher=tf, features=features_of(model, inp["image"])))
    return runs, min(margins)


def write_case(case_dir, model_rel, model, runs, worst, drift):
    cfg = model.config
    os.makedirs(case_dir, exist_ok=True)
    tensors, jruns = {}, []
    for r, run in enumerate(runs):
        name = f"run{r}"
        tensors[name + ".image"] = np.asarray(run["image"], dtype=np.float32)
        tensors[name + ".features"] = run["features"].astype(np.float32)
        put_hyp(tensors, name + ".greedy", run["greedy"], model.hard)
        for b, h in enumerate(run["beam"]):
            put_hyp(tensors, f"{name}.beam{b}", h, model.hard)
        put_hyp(tensors, name + ".teacher", run["teacher"], model.hard)
        jruns.append({"name": name, "scene_seed": run["scene_seed"], "reference": run["reference"],
                      "teacher_ids": list(run["teacher_ids"]), "greedy": hyp_json(run["greedy"], cfg),
                      "beam": [hyp_json(h, cfg) for h in run["beam"]],
                      "teacher": {"ids": list(run["teacher"].ids), "log_prob": float(f"{run['teacher'].log_prob:.9g}"),
                                  "finished": run["teacher"].finished}})
    safetensors_io.write_safetensors(os.path.join(case_dir, "expected.safetensors"), tensors)
    with open(os.path.join(case_dir, "expected.json"), "w") as f:
        f.write(json.dumps({"model": model_rel, "attention": cfg["attention"], "grid": model.grid,
                            "beam_width": BEAM}, separators=(",", ": "))[:-1] + ',\n "runs": [\n')
        f.write(",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in jruns))
        f.write("\n ]}\n")
    size = sum(os.path.getsize(os.path.join(case_dir, n)) for n in os.listdir(case_dir))
    print(f"{os.path.relpath(case_dir, ROOT)}: {size} bytes, smallest margin {worst:.2e}, float32 drift {drift:.1e}, "
          f"greedy {[(r['greedy'].finished, len(r['greedy'].ids)) for r in runs]}, "
          f"beam finished {[[h.finished for h in r['beam']] for r in runs]}")
    if worst <= MARGIN:
        raise SystemExit(f"{case_dir}: a decision is won by only {worst:.2e} (<= {MARGIN}); change the inputs")
    if drift > DRIFT:
        raise SystemExit(f"{case_dir}: float32 decoding drifts {drift:.2e} (> {DRIFT}) from float64")


def varied(runs):
    g = [(r["greedy"].finished, len(r["greedy"].ids)) for r in runs]
    b = [h.finished for r in runs for h in r["beam"]]
    return any(f and n >= 3 for f, n in g) and any(not f for f, _ in g) and any(b) and not all(b)


def make_random(out):
    for variant, first in (("soft", 101), ("hard", 201)):
        case = os.path.join(out, f"random-{variant}")
        os.makedirs(case, exist_ok=True)
        for seed in range(first, first + 99):
            torch.manual_seed(seed)
            cfg = ct.make_config(variant, RANDOM_VOCAB, [4, 8], embedding_size=8, hidden=16, attention_size=8,
                                 max_caption_length=8, image_size=16, mean=(0.4, 0.5, 0.6), std=(0.2, 0.25, 0.3),
                                 task="parity fixture (random weights)")
            model = ct.Captioner(cfg)
            randomise(model, seed)
            ct.save_model(model, case)
            model = ct.load_model(case, torch.float64)
            g = torch.Generator().manual_seed(seed)
            inputs = [{"image": torch.rand(16, 16, 3, generator=g).numpy().astype(np.float32),
                       "teacher_ids": ids, "scene_seed": None, "reference": None}
                      for ids in ([4, 5, 6, 2], [4, 5, 6, 7, 4, 8, 6, 2], [7, 3, 8])]
            runs, worst = decode_all(model, inputs)
            if worst > MARGIN and varied(runs):
                drift = drift_of(case, runs)
                if drift <= DRIFT:
                    break
        else:
            raise SystemExit(f"{variant}: no seed gave a robust, varied fixture")
        print(f"random-{variant}: seed {seed}")
        write_case(case, os.path.relpath(case, ROOT), model, runs, worst, drift)


def make_trained(out):
    for variant in ("soft", "hard"):
        folder = os.path.join(ROOT, "resources", "models", f"caption-{variant}")
        if not os.path.exists(os.path.join(folder, "model.safetensors")):
            print(f"skipped caption-{variant}: no model")
            continue
        model = ct.load_model(folder, torch.float64)
        inputs = []
        for s in TRAINED_SEEDS:
            sc = sd.generate_scene(s)
            inputs.append({"image": sc.image, "teacher_ids": ct.words_to_ids(sc.words, model.config),
                           "scene_seed": s, "reference": sc.caption})
        runs, worst = decode_all(model, inputs)
        write_case(os.path.join(out, f"caption-{variant}"), os.path.relpath(folder, ROOT), model, runs, worst,
                   drift_of(folder, runs))


def make_scenes(out):
    os.makedirs(out, exist_ok=True)
    mixes = []
    for seed in (0, 12345, 2 ** 64 - 1):
        rng = sd.SplitMix64(seed)
        mixes.append({"seed": str(seed), "outputs": [str(rng.next()) for _ in range(8)]})
    tensors, scenes = {}, []
    for seed in SCENE_SEEDS:
        sc = sd.generate_scene(seed)
        labels = np.zeros((sd.S, sd.S), dtype=np.uint8)
        for k, o in enumerate(sc.objects):
            labels[o.mask] = k + 1
        tensors[f"{seed}.pixels"] = sc.pixels
        tensors[f"{seed}.labels"] = labels
        sd_calls = _count_calls(seed)       # the number of PRNG calls: a port's first check
        scenes.append({"seed": str(seed), "caption": sc.caption, "words": sc.words, "word_objects": sc.word_objects,
                       "prng_calls": sd_calls,
                       "objects": [{"shape": o.shape, "colour": o.colour, "size": o.size, "r": o.r, "E": o.E,
                                    "cx": o.cx, "cy": o.cy, "rgb": list(o.rgb), "bbox": list(o.bbox)}
                                   for o in sc.objects]})
    safetensors_io.write_safetensors(os.path.join(out, "scenes.safetensors"), tensors)
    with open(os.path.join(out, "scenes.json"), "w") as f:
        f.write('{"splitmix64": [\n')
        f.write(",\n".join("  " + json.dumps(m, separators=(",", ":")) for m in mixes))
        f.write('\n ],\n "scenes": [\n')
        f.write(",\n".join("  " + json.dumps(s, separators=(",", ":")) for s in scenes))
        f.write("\n ]}\n")
    print(f"{os.path.relpath(out, ROOT)}/scenes.*: {len(scenes)} scenes, "
          f"{os.path.getsize(os.path.join(out, 'scenes.safetensors')) + os.path.getsize(os.path.join(out, 'scenes.json'))} bytes")


def _count_calls(seed):
    original = sd.SplitMix64
    made = []

    class Counting(original):
        def __init__(self, s):
            super().__init__(s)
            made.append(self)

    sd.SplitMix64 = Counting
    try:
        sd.generate_scene(seed)
    finally:
        sd.SplitMix64 = original
    return made[0].calls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", nargs="?", default="all", choices=["random", "trained", "scenes", "all"])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "captioner"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.mode in ("scenes", "all"):
        make_scenes(args.out)
    if args.mode in ("random", "all"):
        make_random(args.out)
    if args.mode in ("trained", "all"):
        make_trained(args.out)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.out) for f in fs)
    print(f"{os.path.relpath(args.out, ROOT)}: {total} bytes in all")


if __name__ == "__main__":
    main()
