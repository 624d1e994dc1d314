"""Synthetic speech for the speech recogniser (tools/train/MODELS.md section 6): random words and short phrases said
by espeak-ng through AttnScope's own pipeline (`attnscope-cli speech --batch`: espeak-ng's library in-process, the
audio resampled to 16 kHz with libsamplerate, light white noise, the 80-band log-mel spectrogram of
engine/src/audio/speech.cpp), so the model trains on exactly what the app computes when a user types a sentence.
Each utterance keeps espeak-ng's phonemes and each phoneme's time span (its phoneme events).

Words: the whole lower-case words of BERT's vocabulary (tests/data/tokenizers/bert_base_uncased_vocab.txt, in its
order), the first SEEN_WORDS for training and the "seen" test set, the next UNSEEN_WORDS for the "unseen" test set
(words the model never heard). Voices: espeak-ng's en-us and its 12 variants (m1-m7, f1-f5, audio.h's
voice_variants), 140-210 words per minute, pitch 25-75, noise of standard deviation 0.001-0.006.

    /usr/bin/python3 -m tools.train.speech_data --cli build/ci/app/attnscope-cli --out DIR    the corpora into DIR
"""

import argparse
import json
import os
import random
import subprocess

import numpy as np

from tools.safetensors_io import read_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

SEEN_WORDS, UNSEEN_WORDS = 8000, 2000
VOICES = ["en-us"] + [f"en-us+{v}" for v in ("m1", "m2", "m3", "m4", "m5", "m6", "m7", "f1", "f2", "f3", "f4", "f5")]
SPLITS = {  # name: (utterances, seed, word pool)
    "train": (14000, 1, "seen"),
    "valid": (400, 2, "seen"),
    "test-seen": (1000, 3, "seen"),
    "test-unseen": (1000, 4, "unseen"),
}
STACK = 3        # log-mel frames per encoder step (30 ms)
HOP_S = 0.010    # seconds between frames
WINDOW_S = 0.025


def words():
    path = os.path.join(ROOT, "tests", "data", "tokenizers", "bert_base_uncased_vocab.txt")
    out = [w for w in open(path).read().split("\n") if 2 <= len(w) <= 10 and w.isascii() and w.isalpha()
           and w.islower()]
    return out[:SEEN_WORDS], out[SEEN_WORDS:SEEN_WORDS + UNSEEN_WORDS]


def specs(n, seed, pool):
    seen, unseen = words()
    vocab = seen if pool == "seen" else unseen
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = rng.choices([1, 2, 3, 4], weights=[3, 3, 2, 2])[0]
        out.append({"text": " ".join(rng.choice(vocab) for _ in range(k)), "voice": rng.choice(VOICES),
                    "rate": rng.randint(140, 210), "pitch": rng.randint(25, 75),
                    "noise": round(rng.uniform(0.001, 0.006), 4), "seed": seed * 1000003 + i})
    return out


def make(cli, out, split):
    n, seed, pool = SPLITS[split]
    folder = os.path.join(out, split)
    os.makedirs(folder, exist_ok=True)
    spec_path = os.path.join(folder, "specs.jsonl")
    with open(spec_path, "w") as f:
        for s in specs(n, seed, pool):
            f.write(json.dumps(s) + "\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    subprocess.run([cli, "speech", "--batch", spec_path, "--out-dir", folder], check=True, env=env)


def load(out, split):
    """(features [frames, 80] float32, starts [n + 1], utterances: dicts with text, voice, phonemes ...)."""
    folder = os.path.join(out, split)
    tensors, _ = read_safetensors(os.path.join(folder, "features.safetensors"))
    utterances = [json.loads(line) for line in open(os.path.join(folder, "utterances.jsonl"))]
    return tensors["features"], tensors["starts"], utterances


def step_centre(j):
    """Seconds at the centre of encoder step j (frames STACK j .. STACK j + STACK - 1)."""
    return (STACK * j + (STACK - 1) / 2) * HOP_S + WINDOW_S / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "ci", "app", "attnscope-cli"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--splits", nargs="*", default=list(SPLITS))
    args = ap.parse_args()
    for split in args.splits:
        make(args.cli, args.out, split)
        feats, starts, utts = load(args.out, split)
        print(f"{split}: {len(utts)} utterances, {feats.shape[0]} frames, "
              f"{sum(len(u['phonemes']) for u in utts)} phonemes, {np.mean([u['seconds'] for u in utts]):.2f} s mean")


if __name__ == "__main__":
    main()
