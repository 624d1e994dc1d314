#!/usr/bin/python3
"""Writes the speech parity fixtures for the C++ engine (MODELS.md section 6).

    /usr/bin/python3 -m tools.parity.make_speech_fixtures [random|trained|all]

  log-mel  tests/data/audio/fox-f2.logmel.safetensors: speech_torch.log_mel (float64, stored as float32) of
           tests/data/audio/fox-f2.wav (espeak-ng's en-us+f2 saying "the quick brown fox" with noise 0.003, written
           by `attnscope-cli speech --text "the quick brown fox" --voice en-us+f2 --noise 0.003 --seed 7 --wav-out`)
  random   a tiny random speech model (e 8, h 8, d 16, a 8, 2 encoder layers, 3 location filters of width 5, five
           phonemes, max_source_length 30 steps so that the whole WAV is cut, max_target_length 12; the first seed
           from 1101 whose fixture is robust and varied): tests/data/seq2seq/random-speech/{config.json,
           model.safetensors, frames.safetensors, expected.json}
  trained  the shipped resources/models/speech-location: tests/data/seq2seq/speech-location/{frames.safetensors,
           expected.json}; after its four runs, six more over the whole WAV with the weights shaped (SHAPINGS: a run's
           "shaping" is the engine's AttentionShaping, speech_torch.shape_weights in torch)

frames.safetensors holds each run's log-mel frames ("run0", ...: the WAV's frames whole and in parts, float32);
expected.json is make_seq2seq_fixtures.py's, each run naming its frames ({"frames": "run0", "greedy", "beam"}),
decoded by seq2seq_torch.beam_search in float64 and checked as robust (margins, float32 drift) the same way.
"""

import argparse
import os
import wave

import numpy as np
import torch

from tools.parity import make_seq2seq_fixtures as mf
from tools.safetensors_io import write_safetensors
from tools.train import seq2seq_torch as st
from tools.train import speech_torch as sp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

WAV = os.path.join(ROOT, "tests", "data", "audio", "fox-f2.wav")
PARTS = [(0, None), (0, 40), (0, 3), (10, 70)]   # frame ranges of the runs
# The trained model's further runs over the whole WAV, each with one way of shaping the weights (the engine's
# AttentionShaping, speech_torch.shape_weights).
SHAPINGS = [{"sharpen": 2.0}, {"sharpen": 0.5}, {"smooth": True}, {"top_k": 3}, {"window": 4},
            {"sharpen": 1.5, "top_k": 6, "window": 8}]


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2, path
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768.0


def frames():
    whole = sp.log_mel(read_wav(WAV)).float()
    return whole, [whole[a:b] for a, b in PARTS]


def decode_run(model, x, margins):
    x = sp.cut(x, model.config)
    trace_g, trace_b = [], []
    g = st.greedy(model, x.double(), trace=trace_g)
    hyps = st.beam_search(model, x.double(), mf.BEAM, trace=trace_b)
    for trace, k in ((trace_g, 1), (trace_b, mf.BEAM)):
        for scores in trace:
            if len(scores) > k:
                margins.append(scores[k - 1] - scores[k])
    for a, b in zip(hyps, hyps[1:]):
        margins.append(a.log_prob - b.log_prob)
    cfg = model.config
    return {"greedy": g.as_dict(cfg), "beam": {"width": mf.BEAM, "hypotheses": [h.as_dict(cfg) for h in hyps]}}


def decode_all(model, inputs, shapings=()):
    """One run per input, then one per shaping over the first input (the whole WAV)."""
    margins = []
    runs = []
    for i, x in enumerate(inputs):
        run = {"frames": f"run{i}"}
        run.update(decode_run(model, x, margins))
        runs.append(run)
    for shaping in shapings:
        model.shaping = shaping
        run = {"frames": "run0", "shaping": shaping}
        run.update(decode_run(model, inputs[0], margins))
        runs.append(run)
    model.shaping = None
    return runs, min(margins)


def float32_drift(folder, inputs, runs):
    m32 = st.load_model(folder, torch.float32)
    worst = 0.0
    for run in runs:
        x = sp.cut(inputs[int(run["frames"][3:])], m32.config)
        m32.shaping = run.get("shaping")
        pairs = [(run["greedy"], st.greedy(m32, x))] + list(zip(run["beam"]["hypotheses"],
                                                                st.beam_search(m32, x, mf.BEAM)))
        for want, got in pairs:
            if got.ids != want["ids"]:
                return float("inf")
            got = got.as_dict(m32.config)
            diffs = [abs(got["log_prob"] - want["log_prob"])]
            diffs += [abs(a - b) for a, b in zip(mf.flat(got["attention"]), mf.flat(want["attention"]))]
            worst = max(worst, max(diffs))
    return worst


def write_frames(case, inputs):
    write_safetensors(os.path.join(case, "frames.safetensors"),
                      {f"run{i}": x.numpy().astype(np.float32) for i, x in enumerate(inputs)})


def make_logmel():
    whole, _ = frames()
    path = os.path.join(ROOT, "tests", "data", "audio", "fox-f2.logmel.safetensors")
    write_safetensors(path, {"log_mel": whole.numpy().astype(np.float32)})
    print(f"{os.path.relpath(path, ROOT)}: {list(whole.shape)}")


def make_random(out):
    whole, inputs = frames()
    case = os.path.join(out, "random-speech")
    os.makedirs(case, exist_ok=True)
    vocab = ["<pad>", "<s>", "</s>", "a", "b", "k", "s", "@"]
    for seed in range(1101, 1200):
        torch.manual_seed(seed)
        cfg = sp.make_config(vocab, e=8, h=8, d=16, a=8, layers=2, filters=3, width=5, max_source_length=30,
                             max_target_length=12, task="parity fixture (random weights)",
                             trained_on="nothing: random weights")
        model = st.new_model(cfg)
        mf.randomise(model, seed)
        with torch.no_grad():
            model.encoder.feature_mean.copy_(whole.mean(0))
            model.encoder.feature_std.copy_(whole.std(0).clamp_min(1e-3))
        st.save_model(model, case)
        model = st.load_model(case, torch.float64)
        runs, worst = decode_all(model, inputs)
        if worst > mf.MARGIN and mf.varied(runs):
            drift = float32_drift(case, inputs, runs)
            if drift <= mf.DRIFT:
                break
    else:
        raise SystemExit("random-speech: no seed gave a robust, varied fixture")
    print(f"random-speech: seed {seed}")
    write_frames(case, inputs)
    mf.write_expected(case, os.path.relpath(case, ROOT), runs, worst, drift)


def make_trained(out):
    folder = os.path.join(ROOT, "resources", "models", "speech-location")
    if not os.path.exists(os.path.join(folder, "model.safetensors")):
        print("skipped speech-location: no model")
        return
    _, inputs = frames()
    case = os.path.join(out, "speech-location")
    os.makedirs(case, exist_ok=True)
    model = st.load_model(folder, torch.float64)
    runs, worst = decode_all(model, inputs, SHAPINGS)
    write_frames(case, inputs)
    mf.write_expected(case, os.path.relpath(folder, ROOT), runs, worst, float32_drift(folder, inputs, runs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", nargs="?", default="all", choices=["random", "trained", "all"])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "seq2seq"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    make_logmel()
    if args.mode in ("random", "all"):
        make_random(args.out)
    if args.mode in ("trained", "all"):
        make_trained(args.out)


if __name__ == "__main__":
    main()
