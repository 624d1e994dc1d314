#!/usr/bin/python3
"""Trains the bundled tiny character-level GPT-2 with induction heads (MODELS.md section 3) and writes a
Hugging Face-style GPT-2 folder with its MODEL_CARD.md (metrics filled in).

    /usr/bin/python3 -m tools.train.train_induction        # -> resources/models/induction-gpt2

Options: --out DIR, --threads N (torch threads, default 1), --steps N (5600), --batch N (32), --lr X (2e-3),
--seed N (torch and data, default 0).

Model: GPT-2, 2 layers, 4 heads, n_embd 64, n_inner 256 (4 x n_embd), n_positions 128, vocab 256: one
token per byte (vocab.json maps GPT-2's 256 byte symbols to ids 0..255 by byte value; merges.txt holds
only "#version: 0.2"). Built with tools/parity/transformer_torch.py, so model.safetensors carries
transformers' names (transformer.wte.weight, transformer.h.0.attn.c_attn.weight, ...; lm_head is tied
and not stored, as save_pretrained does).

Training sequences (a curriculum over the window T = 24, 48, 80, then 128 tokens at steps 2000, 3500,
5000): a random string S of lowercase letters (length T/8 .. min(40, (T-1)/2); distinct letters with
probability 0.8 when it fits in 26, else drawn with replacement) repeated 2 or more times to fill T,
joined by nothing, " " or "|", cut at T. Next-byte cross-entropy on every position; the first copy is
unpredictable (ln 26 = 3.26 nats), the later copies can be copied.

A training aid, not part of the model: a linear probe reads layer 0's output and is trained (weight 1)
to name the previous byte. Without it the previous-token head formed only after thousands of steps of
a flat loss (the copy task's plateau); with it the head forms within 200 steps. The probe is dropped
when the model is saved.

Evaluation (fixed set, seed 1000): 500 sequences S S (no separator; |S| 20-40, letters drawn with
replacement), as one would paste into the workbench:
  loss and accuracy on the first copy (targets S[1..L-1]) and on the second copy (targets S[1..L-1] of
  the copy; its first letter cannot be known without a separator);
  per head: previous-token score = mean attention from position t to t-1 over t >= 1; and where the
  second copy looks in the first: the mean attention from each position L+i to position i+k of the
  first copy, for k = 0 (the same letter), 1 (the letter after it: the textbook induction head's
  target), 2 and 3.
"""

import argparse
import json
import math
import os
import random
import string
import time

import numpy as np
import torch
import torch.nn.functional as F

from tools.parity import transformer_torch as tt
from tools.safetensors_io import write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

N_EMBD, N_HEAD, N_LAYER, N_POS = 64, 4, 2, 128
BOS_EOS = 0   # byte 0 (symbol "Ā"); never seen in training, named because config.json wants one
LETTERS = string.ascii_lowercase


def hf_config():
    """config.json as transformers writes a GPT2LMHeadModel's (dropout 0: it was trained without)."""
    return {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.0,
            "bos_token_id": BOS_EOS, "embd_pdrop": 0.0, "eos_token_id": BOS_EOS, "initializer_range": 0.02,
            "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": N_POS, "n_embd": N_EMBD,
            "n_head": N_HEAD, "n_inner": None, "n_layer": N_LAYER, "n_positions": N_POS,
            "reorder_and_upcast_attn": False, "resid_pdrop": 0.0, "scale_attn_by_inverse_layer_idx": False,
            "scale_attn_weights": True, "summary_activation": None, "summary_first_dropout": 0.1,
            "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
            "torch_dtype": "float32", "use_cache": True, "vocab_size": 256}


def rand_letters(rng, n):
    return "".join(rng.choice(LETTERS) for _ in range(n))


PHASES = ((2000, 24), (3500, 48), (5000, 80))   # (last step, window); then 128


def window(step):
    for last, T in PHASES:
        if step <= last:
            return T
    return N_POS


def training_sequence(rng, T):
    L = rng.randint(max(3, T // 8), min(40, (T - 1) // 2))
    distinct = L <= 26 and rng.random() < 0.8
    s = "".join(rng.sample(LETTERS, L)) if distinct else rand_letters(rng, L)
    sep = rng.choice(["", "", " ", "|"])
    kmax = max(2, (T + len(sep)) // (L + len(sep)))
    return sep.join([s] * rng.randint(2, kmax))[:T]


def batch_of(texts):
    n = max(len(t) for t in texts)
    ids = torch.zeros(len(texts), n, dtype=torch.long)
    mask = torch.zeros(len(texts), n, dtype=torch.bool)
    for b, t in enumerate(texts):
        ids[b, :len(t)] = torch.tensor(list(t.encode()))
        mask[b, :len(t)] = True
    return ids, mask


def eval_set(seed=1000, n=500):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = rand_letters(rng, rng.randint(20, 40))
        out.append(s)
    return out


OFFSETS = (0, 1, 2, 3)


def evaluate(model, strings):
    """Metrics of the module doc over S S sequences (float64)."""
    m = model.double().eval()
    first_loss, first_acc, second_loss, second_acc = [], [], [], []
    look = np.zeros((len(OFFSETS), N_LAYER, N_HEAD))   # second copy -> first copy, position i + k
    prev = np.zeros((N_LAYER, N_HEAD))
    with torch.no_grad():
        for s in strings:
            L = len(s)
            ids = torch.tensor([list((s + s).encode())])
            out = m(ids, output_attentions=True)
            logp = torch.log_softmax(out["logits"][0], dim=-1)              # [2L, 256]
            tgt = ids[0]
            # first copy: positions t = 0..L-2 predict t+1; second copy: t = L..2L-2 predict t+1.
            for lo, hi, lossl, accl in ((0, L - 1, first_loss, first_acc), (L, 2 * L - 1, second_loss, second_acc)):
                t = torch.arange(lo, hi)
                lossl.append(float(-logp[t, tgt[t + 1]].mean()))
                accl.append(float((logp[t].argmax(-1) == tgt[t + 1]).double().mean()))
            q = np.arange(L, 2 * L - max(OFFSETS))   # i + k stays inside the first copy
            for layer, a in enumerate(out["attentions"]):
                A = a[0].numpy()                                              # [H, 2L, 2L]
                for o, k in enumerate(OFFSETS):
                    look[o, layer] += A[:, q, q - L + k].mean(axis=1)
                t = np.arange(1, 2 * L)
                prev[layer] += A[:, t, t - 1].mean(axis=1)
    model.float()
    n = len(strings)
    out = {"first_loss": float(np.mean(first_loss)), "first_acc": float(np.mean(first_acc)),
           "second_loss": float(np.mean(second_loss)), "second_acc": float(np.mean(second_acc)),
           "previous": (prev / n).tolist()}
    for o, k in enumerate(OFFSETS):
        out[f"look_{k}"] = (look[o] / n).tolist()
    return out


def save_folder(folder, model):
    os.makedirs(folder, exist_ok=True)
    weights = {}
    for k, v in model.state_dict().items():
        if k == "lm_head.weight" or k.endswith(".attn.bias") or k.endswith(".attn.masked_bias"):
            continue   # tied to wte / causal-mask buffers: save_pretrained does not store them
        weights[k] = v.detach().cpu().float().numpy().astype(np.float32)
    write_safetensors(os.path.join(folder, "model.safetensors"), weights, {"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(hf_config(), f, indent=2)
        f.write("\n")
    b2u = tt.bytes_to_unicode()
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({b2u[b]: b for b in range(256)}, f, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(folder, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")


def table(name, rows):
    lines = [f"| {name} | head 0 | head 1 | head 2 | head 3 |", "|---|---|---|---|---|"]
    for layer, r in enumerate(rows):
        lines.append(f"| layer {layer} | " + " | ".join(f"{x:.3f}" for x in r) + " |")
    return lines


def circuit_lines(m):
    """What each head does, read off the measured scores (nothing here is assumed)."""
    lines = []
    for layer in range(N_LAYER):
        for h in range(N_HEAD):
            p = m["previous"][layer][h]
            looks = [(m[f"look_{k}"][layer][h], k) for k in OFFSETS]
            best, k = max(looks)
            if p >= 0.5:
                lines.append(f"- layer {layer} head {h}: previous-token head ({p:.2f} of each row on the letter before).")
            elif best >= 0.3:
                where = "the same letter" if k == 0 else f"{k} letter{'s' if k > 1 else ''} after it"
                lines.append(f"- layer {layer} head {h}: from each letter of the second copy to its earlier occurrence's "
                             f"position + {k} ({where}): {best:.2f} of each row.")
    return lines


def write_card(folder, model, m, seconds, args, example):
    steps, seed, threads = args.steps, args.seed, args.threads
    size = os.path.getsize(os.path.join(folder, "model.safetensors"))
    lines = [
        "# induction-gpt2: a tiny character GPT-2 that copies repeated text",
        "",
        "A demo model for AttnScope's Transformer workbench: type a random string of lowercase letters twice",
        "(e.g. `" + example + "`) and look at layer 0 (previous-token heads: a bright sub-diagonal) and layer 1",
        "(the second copy looks back into the first copy along a diagonal stripe: the in-context copying",
        "circuit of induction heads). What each head does, as measured below:",
        "",
    ]
    lines += circuit_lines(m)
    lines += [
        "",
        "The textbook induction head attends to the letter right after the earlier occurrence (offset + 1 in",
        "the tables below) and copies it. This model's copying heads look one letter further, at offset + 2.",
        "That is what a head does when it matches on the letter before the current one (which the",
        "previous-token heads write into every position) and reads the answer there from the",
        "previous-token heads' output (the letter before offset + 2 is the one to predict). The scores show",
        "where the heads look; the circuit behind them is this reading, not an ablation result.",
        "",
        "## Task and data",
        "Next-byte prediction on a random string S of lowercase letters repeated to fill a window (24, 48, 80",
        "then 128 bytes over training), joined by nothing, a space or `|`; S has distinct letters with",
        "probability 0.8 when it fits in 26. Generated on the fly by `tools/train/train_induction.py` (seed"
        f" {seed}). The first copy is unpredictable (ln 26 = 3.26 nats); the later ones can be copied.",
        "",
        "## Architecture",
        f"Hugging Face GPT-2 (`GPT2LMHeadModel`): {N_LAYER} layers, {N_HEAD} heads, n_embd {N_EMBD}, n_inner"
        f" {4 * N_EMBD}, n_positions {N_POS}, gelu_new, tied LM head. Vocabulary: 256 byte tokens (vocab.json: GPT-2's",
        "byte symbols -> ids 0..255 by byte value; merges.txt only `#version: 0.2`), so each byte is one token.",
        f"bos/eos id {BOS_EOS} (byte 0; never used in training). Parameters:"
        f" {sum(p.numel() for p in model.parameters()):,}; model.safetensors {size / 1024:.0f} KiB (float32,",
        "transformers' tensor names with the `transformer.` prefix; lm_head not stored).",
        "",
        "## Training",
        f"AdamW (lr {args.lr:g}, weight decay 0.01), batch {args.batch}, {steps} steps, no dropout, GPT-2's",
        "N(0, 0.02) initialisation. A linear probe on layer 0's output, trained to name the previous byte, is a",
        "training aid that shortens the copy task's long flat start; it is not part of the saved model.",
        f"Torch seed {seed}, {threads} thread(s). Training time: {seconds:.0f} s of wall time on a shared 2-core",
        "machine (torch 1.13, CPU).",
        "",
        "## Metrics",
        "500 held-out sequences `S S` (no separator, |S| 20-40, letters drawn with replacement, seed 1000),",
        "computed in float64:",
        "",
        "| | loss (nats) | next-letter accuracy |",
        "|---|---|---|",
        f"| first copy (targets S[1..]) | {m['first_loss']:.3f} | {m['first_acc'] * 100:.1f}% |",
        f"| second copy (targets S[1..]) | {m['second_loss']:.3f} | {m['second_acc'] * 100:.1f}% |",
        "",
        "Previous-token score: mean attention from position t to t-1 (t >= 1):",
        "",
    ]
    lines += table("previous token", m["previous"])
    for k in OFFSETS:
        what = {0: "the same letter", 1: "the letter after it: the textbook induction score",
                2: "the second letter after it", 3: "the third letter after it"}[k]
        lines += ["", f"Second copy -> first copy, offset {k}: mean attention from position L+i to position i+{k}"
                  f" ({what}):", ""]
        lines += table(f"i+{k}", m[f"look_{k}"])
    lines += [
        "",
        "Measured by the training command itself (it prints the same numbers).",
        "",
        "## Retrain (one command, deterministic seeds)",
        "```",
        "/usr/bin/python3 -m tools.train.train_induction",
        "```",
        "Check with the engine: `build/dev/app/attnscope-cli run --model resources/models/induction-gpt2"
        f" --text \"{example}\" --dump /tmp/ind.attn.safetensors`.",
        "",
    ]
    with open(os.path.join(folder, "MODEL_CARD.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "resources", "models", "induction-gpt2"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=5600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)

    model = tt.GPT2LMHeadModel(tt.Config(hf_config()))
    with torch.no_grad():   # GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer)
        for name, p in model.named_parameters():
            if name.endswith(("wte.weight", "wpe.weight")) or (p.dim() == 2 and "ln_" not in name):
                std = 0.02 / math.sqrt(2 * N_LAYER) if name.endswith("c_proj.weight") else 0.02
                p.normal_(0.0, std)
    probe = torch.nn.Linear(N_EMBD, 256)   # training aid: layer 0's output -> the previous byte
    opt = torch.optim.AdamW(list(model.parameters()) + list(probe.parameters()), lr=args.lr, weight_decay=0.01)
    evals = eval_set()
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters; {args.steps} steps", flush=True)
    t0 = time.perf_counter()
    running = None
    tr = model.transformer
    for step in range(1, args.steps + 1):
        model.train()
        ids, mask = batch_of([training_sequence(rng, window(step)) for _ in range(args.batch)])
        x = tr.wte(ids) + tr.wpe(torch.arange(ids.shape[1])[None])
        x, _ = tr.h[0](x)
        probe_logits = probe(x)
        for block in tr.h[1:]:
            x, _ = block(x)
        logits = model.lm_head(tr.ln_f(x))[:, :-1]
        target = ids[:, 1:].masked_fill(~mask[:, 1:], -100)
        loss = F.cross_entropy(logits.reshape(-1, 256), target.reshape(-1), ignore_index=-100)
        previous = ids[:, :-1].masked_fill(~mask[:, 1:], -100)
        aid = F.cross_entropy(probe_logits[:, 1:].reshape(-1, 256), previous.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        (loss + aid).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = float(loss) if running is None else 0.98 * running + 0.02 * float(loss)
        if step % 400 == 0 or step == args.steps:
            m = evaluate(model, evals[:40])
            print(f"step {step} (window {window(step)}): training loss {running:.3f}; second copy "
                  f"{m['second_loss']:.3f} / {m['second_acc'] * 100:.1f}%; best previous "
                  f"{max(max(r) for r in m['previous']):.2f}; layer 1 best i+1 {max(m['look_1'][1]):.2f}, "
                  f"i+2 {max(m['look_2'][1]):.2f}  [{time.perf_counter() - t0:.0f} s]", flush=True)
    seconds = time.perf_counter() - t0

    save_folder(args.out, model)
    m = evaluate(model, evals)
    example = "qwhdkeiaplzmxncbvrtsu" * 2
    write_card(args.out, model, m, seconds, args, example)
    print(f"saved {args.out}; training {seconds:.0f} s")
    print(f"first copy: loss {m['first_loss']:.3f}, accuracy {m['first_acc'] * 100:.1f}%")
    print(f"second copy: loss {m['second_loss']:.3f}, accuracy {m['second_acc'] * 100:.1f}%")
    for name in ["previous"] + [f"look_{k}" for k in OFFSETS]:
        for layer, r in enumerate(m[name]):
            print(f"{name:9s} layer {layer}: " + "  ".join(f"h{h} {x:.3f}" for h, x in enumerate(r)))
    print("\n".join(circuit_lines(m)))


if __name__ == "__main__":
    main()
