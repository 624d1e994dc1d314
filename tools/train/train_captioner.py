#!/usr/bin/python3
"""Trains one bundled Show, Attend and Tell captioner (MODELS.md section 4) and writes its folder.

    /usr/bin/python3 -m tools.train.train_captioner --variant {soft,hard} [--out DIR] [--threads N]
                                                    [--seed S] [--steps N (3000)] [--batch B]

Output: DIR (default resources/models/caption-<variant>/) with config.json, model.safetensors and MODEL_CARD.md
(its metrics section is filled in by tools/train/report_captioner.py).

Data: tools/train/scenes_data.py, generated on the fly from the training seeds 0, 1, 2, ... in order, keeping
a seed when its object count c (scenes_data.object_count) passes: c == 2 always, c == 1 when seed % 3 == 0,
c in (3, 4) when seed % 3 != 0 (so the training mix is 1 : 3 : 2 : 2 for 1 : 2 : 3 : 4 objects: two-object
scenes, the only ones with a spatial relation word, are oversampled); step n's batch holds kept seeds
n * B .. n * B + B - 1 (all training seeds < 10,000,000; validation and test seeds, 10,000,000 and up, have
the generator's own uniform 1-4 mix).
Model: channels [8, 24, 48, 128] (8 x 8 grid, D 128), embedding 64, LSTM hidden 256, attention 128, the
22-word vocabulary of scenes_data.VOCAB, max_caption_length 24. Input normalised with MEAN / STD (measured
once on training scenes 0 .. 1999 and fixed here).

Training (fixed number of steps, so a run is reproducible: torch seed = --seed, the same scenes every run):
  soft: cross-entropy over the words and <end> (padding ignored) + lambda * sum_i (1 - sum_t alpha_ti)^2
        (the doubly stochastic regulariser, summed over the L cells and averaged over the batch; lambda
        --lam, default 0.002)
  hard: first --soft-steps steps (default half of --steps) with the expected context only (as soft), plus from
        a third of them on a penalty --sharpen * H(alpha_t) per word (default 0.05, growing linearly from 0 to
        its full weight at --soft-steps, then kept): it makes the expected context nearly one cell, so the
        decoder learns to read single cells before any location is sampled. Then hard attention: each image
        decoded --samples times (default 4), each with one location per step sampled from alpha_t; the
        cross-entropy and the regulariser as above over all of them, plus REINFORCE per word:
        - sum_t (R_t - b_t) log alpha_t[s_t], with the reward-to-go R_t = sum_{u >= t} gamma^(u - t) log p(y_u)
        (--gamma, default 0.5: a location mostly matters for the words right after it) and the baseline b_t
        the mean R_t of the same image's other samples (leave-one-out, so it does not depend on this
        sample's draws).
        What did not work (3000 steps each): from scratch (exact match 0 after 1000 steps); after a soft
        warm-up without the penalty, one sample per image and a moving-average baseline over the
        caption's log-likelihood, with Xu et al.'s expected-context half (0 %), argmax locations for half
        the images (0 %) or neither (6.8 %): the soft attention was too diffuse (mass inside the object
        14 %) for a sampled cell to land on the object, and a caption-level reward taught the attention to
        prefer uninformative background cells.
Adam, lr --lr (default 2e-3) with a linear warm-up over 100 steps and a cosine decay to 5 % at the last step,
gradient norm clipped at 5, batches of --batch (default 32). Every --eval-every (500) steps the batched greedy
decoder is scored on 500 validation scenes (seeds 10,500,000 ..) for the log only.
Threads: torch.set_num_threads(--threads), default 2, with OMP_WAIT_POLICY=PASSIVE (set here unless already
set); one worker process draws the scenes a few batches ahead.
"""

import argparse
import collections
import datetime as dt
import math
import multiprocessing
import os
import time

# Idle OpenMP threads sleep instead of spinning: on a machine shared with other jobs, 2 spinning threads make
# every small op wait for a descheduled thread (measured: 7.2 s per step instead of 0.9 s).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from tools.train import captioner_torch as ct  # noqa: E402
from tools.train import scenes_data as sd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

SIZES = dict(channels=[8, 24, 48, 128], embedding_size=64, hidden=256, attention_size=128)
MAX_CAPTION_LENGTH = 24
MEAN = (0.5014, 0.4982, 0.4955)     # measure_mean_std(): training scenes 0 .. 1999, rounded to 4 digits
STD = (0.1304, 0.0855, 0.1304)
VALIDATION = 500


def measure_mean_std(n=2000):
    px = np.stack([sd.generate_scene(s).pixels for s in range(n)]).reshape(-1, 3).astype(np.float64) / 255.0
    return [round(float(v), 4) for v in px.mean(0)], [round(float(v), 4) for v in px.std(0)]


def keep_seed(seed):
    c = sd.object_count(seed)
    return c == 2 or (c == 1 and seed % 3 == 0) or (c >= 3 and seed % 3 != 0)


def training_seeds(count):
    out, seed = [], 0
    while len(out) < count:
        if keep_seed(seed):
            out.append(seed)
        seed += 1
    assert seed < sd.TRAIN_SEEDS
    return out


def scene_arrays(seeds):
    """Worker side of the prefetch: pixels [B, S, S, 3] uint8 and the caption words (picklable)."""
    scenes = [sd.generate_scene(s) for s in seeds]
    return np.stack([sc.pixels for sc in scenes]), [sc.words for sc in scenes]


def batch_of(seeds, config, arrays=None):
    if arrays is None:
        scenes = [sd.generate_scene(s) for s in seeds]
        pixels, words = np.stack([sc.pixels for sc in scenes]), [sc.words for sc in scenes]
    else:
        scenes = None
        pixels, words = arrays
    images = torch.from_numpy(pixels).float() / 255.0
    ids = [ct.words_to_ids(w, config) for w in words]
    T = max(len(i) for i in ids)
    tgt = torch.full((len(ids), T), ct.PAD, dtype=torch.long)
    for b, i in enumerate(ids):
        tgt[b, :len(i)] = torch.tensor(i)
    ids_in = torch.cat([torch.full((len(ids), 1), ct.START, dtype=torch.long), tgt[:, :-1]], 1)
    ids_in[ids_in == ct.END] = ct.PAD            # <end> is never an input (the step after it is padding)
    return scenes, images, ids_in, tgt


def grid_masks(scene, G):
    """Per object the covered fraction of each grid cell [L]."""
    cell = sd.S // G
    return [o.mask.reshape(G, cell, G, cell).mean(axis=(1, 3)).reshape(-1) for o in scene.objects]


@torch.no_grad()
def evaluate(model, val, config):
    """val: list of (scenes, images, ids_in, tgt) batches -> exact match, grounding ratio (teacher-forced)."""
    model.eval()
    exact = n = 0
    ratios = []
    for scenes, images, ids_in, tgt in val:
        ids, _ = model.greedy_batch(images, MAX_CAPTION_LENGTH)
        for b, sc in enumerate(scenes):
            want = ct.words_to_ids(sc.words, config)
            got = ids[b].tolist()
            got = got[:got.index(ct.END) + 1] if ct.END in got else got
            exact += int(got == want)
            n += 1
        alpha = model(images, ids_in)["alpha"]
        G = model.grid
        for b, sc in enumerate(scenes):
            masks = grid_masks(sc, G)
            for t, (w, k) in enumerate(zip(sc.words, sc.word_objects)):
                if k >= 0 and (w in sd.COLOURS or w in sd.SHAPES):
                    m = masks[k]
                    ratios.append(float((alpha[b, t].numpy() * m).sum()) / float(m.mean()))
    model.train()
    return exact / n, float(np.mean(ratios))


def count_params(model):
    return sum(p.numel() for p in model.parameters())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", required=True, choices=["soft", "hard"])
    ap.add_argument("--out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--lam", type=float, default=0.002)
    ap.add_argument("--sharpen", type=float, default=0.05)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--gamma", type=float, default=0.5)
    ap.add_argument("--soft-steps", type=int)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--max-minutes", type=float, default=29.0)
    args = ap.parse_args()
    if args.steps is None:
        args.steps = 3000
    if args.soft_steps is None:
        args.soft_steps = args.steps // 2 if args.variant == "hard" else 0
    out = args.out or os.path.join(ROOT, "resources", "models", f"caption-{args.variant}")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1000)

    config = ct.make_config(args.variant, sd.VOCAB, max_caption_length=MAX_CAPTION_LENGTH,
                            mean=MEAN, std=STD, **SIZES)
    model = ct.Captioner(config)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    warm = 100

    def lr_at(step):
        if step < warm:
            return args.lr * (step + 1) / warm
        p = (step - warm) / max(1, args.steps - warm)
        return args.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * p)))

    val = []
    for b in range(0, VALIDATION, 100):
        val.append(batch_of(range(sd.VALIDATION_START + b, sd.VALIDATION_START + b + 100), config))
    print(f"{args.variant}: {count_params(model)} parameters, threads {args.threads}, seed {args.seed}, "
          f"{args.steps} steps of {args.batch}", flush=True)

    # the scenes are drawn by one worker process, a few batches ahead (the same seeds whatever the timing)
    train_seeds = training_seeds(args.steps * args.batch)
    pool = multiprocessing.get_context("fork").Pool(1)
    pending = collections.deque()

    def next_batch(step):
        while len(pending) < 4 and step + len(pending) < args.steps:
            n = step + len(pending)
            pending.append(pool.apply_async(scene_arrays, (train_seeds[n * args.batch:(n + 1) * args.batch],)))
        return pending.popleft().get()

    start, cpu_start = time.time(), time.process_time()
    running = None
    exact = ground = float("nan")
    reached = True
    for step in range(args.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        _, images, ids_in, tgt = batch_of(None, config, next_batch(step))
        hard = args.variant == "hard"
        soft_phase = step < args.soft_steps   # hard: the first steps train the expected context only
        K = args.samples if hard and not soft_phase else 1
        o = model(images, ids_in, sample=hard, soft_share=(1.0 if soft_phase else 0.0) if hard else 0.0,
                  generator=gen, repeat=K)
        tgt = tgt.repeat_interleave(K, 0)
        valid = (tgt != ct.PAD).to(o["alpha"].dtype)                       # [B K, T]
        logp = torch.log_softmax(o["logits"], -1)
        tok_lp = logp.gather(-1, tgt.clamp(min=0)[..., None]).squeeze(-1) * valid   # [B K, T]
        ce = -tok_lp.sum() / valid.sum()
        cover = (o["alpha"] * valid[..., None]).sum(1)                     # [B K, L]
        reg = ((1.0 - cover) ** 2).sum(1).mean()
        loss = ce + args.lam * reg
        ent = (o["entropy"] * valid).sum() / valid.sum()                   # nats per word
        if hard:
            # sharpening: from a third of the warm-up on, a growing penalty on the attention entropy, so the
            # expected context comes to be (nearly) one cell and the decoder learns to read single cells
            ramp = min(1.0, max(0.0, (step - args.soft_steps / 3) / max(1.0, args.soft_steps * 2 / 3)))
            loss = loss + args.sharpen * ramp * ent
        if hard and not soft_phase:
            # REINFORCE with K samples per image: the reward of location s_t is the discounted log-likelihood
            # of the words from t on, R_t = sum_{u >= t} gamma^(u - t) log p(y_u); the baseline is the mean
            # R_t of the image's other K - 1 samples (leave one out: independent of this sample's draws)
            lp = tok_lp.detach()
            R = torch.zeros_like(lp)
            acc = torch.zeros(lp.shape[0], dtype=lp.dtype)
            for t in range(lp.shape[1] - 1, -1, -1):
                acc = lp[:, t] + args.gamma * acc
                R[:, t] = acc
            Rk = R.view(-1, K, R.shape[1])
            base = (Rk.sum(1, keepdim=True) - Rk) / (K - 1)
            adv = (Rk - base).view_as(R) * valid
            reinforce = -(adv * o["log_p_loc"]).sum() / valid.sum()
            loss = loss + reinforce
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        running = float(ce) if running is None else 0.98 * running + 0.02 * float(ce)
        last = step + 1 == args.steps
        if (step + 1) % args.eval_every == 0 or last:
            exact, ground = evaluate(model, val, config)
            minutes = (time.time() - start) / 60
            print(f"step {step + 1:6d}  ce {running:.4f}  reg {float(reg):.2f}  entropy {float(ent):.2f}  "
                  f"validation exact {exact:.4f}  "
                  f"grounding x{ground:.2f}  lr {lr_at(step):.1e}  {minutes:.1f} min", flush=True)
            if minutes > args.max_minutes and not last:
                print("time limit reached before the last step (the run is NOT the reproducible one)", flush=True)
                reached = False
                break
    steps = step + 1
    pool.terminate()
    seconds, cpu = time.time() - start, time.process_time() - cpu_start
    model.eval()
    ct.save_model(model, out)
    write_card(out, args, config, count_params(model), steps, seconds, cpu, exact, ground, reached)
    print(f"saved {out} after {steps} steps ({steps * args.batch} scenes) in {seconds / 60:.1f} min "
          f"({cpu / 60:.1f} min CPU)", flush=True)


def write_card(out, args, config, params, steps, seconds, cpu, exact, ground, reached):
    v = args.variant
    last_seed = training_seeds(steps * args.batch)[-1]
    size = os.path.getsize(os.path.join(out, "model.safetensors"))
    defaults = {"seed": 1, "batch": 32, "lr": 2e-3, "lam": 0.002, "threads": 2}
    if v == "hard":
        defaults.update({"sharpen": 0.05, "samples": 4, "gamma": 0.5})
    extra = "".join(f" --{k} {getattr(args, k):g}" for k, d in defaults.items() if getattr(args, k) != d)
    if args.steps != 3000:
        extra += f" --steps {args.steps}"
    if args.eval_every != 500:  # the log and the run's time only: the weights do not depend on it
        extra += f" --eval-every {args.eval_every}"
    if args.soft_steps != (args.steps // 2 if v == "hard" else 0):
        extra += f" --soft-steps {args.soft_steps}"
    attention = ("soft: z_t = beta_t * sum_i alpha_ti a_i" if v == "soft" else
                 "hard: z_t = beta_t * a_s, s = argmax_i alpha_ti at inference (trained with sampled "
                 "locations and REINFORCE)")
    training = (f"cross-entropy + lambda {args.lam:g} * sum_i (1 - sum_t alpha_ti)^2" if v == "soft" else
                f"the first {args.soft_steps} steps with the expected (soft) context only, plus from step "
                f"{args.soft_steps // 3} on a penalty on the attention entropy growing linearly to {args.sharpen:g} "
                f"nats^-1 per word at step {args.soft_steps} and kept after it (it makes the expected context nearly "
                f"one cell, so the decoder learns to read single cells); then hard attention: each image decoded "
                f"{args.samples} times, each time with one location per step sampled from alpha_t; cross-entropy + "
                f"lambda {args.lam:g} * sum_i (1 - sum_t alpha_ti)^2 + the entropy penalty + REINFORCE: "
                f"- sum_t (R_t - b_t) log alpha_t[s_t] per word, with R_t = sum_(u >= t) {args.gamma:g}^(u - t) "
                f"log p(y_u) and the baseline b_t the mean R_t of the image's other {args.samples - 1} samples")
    status = "" if reached else " **The time limit stopped the run early: these weights are not reproducible.**"
    text = f"""# caption-{v}: Show, Attend and Tell on synthetic scenes ({v} attention)

**Task.** Captioning synthetic 128 x 128 scenes of 1-4 flat-coloured shapes on a textured background,
e.g. "a small red circle above a large blue square". A bundled model of AttnScope's captioning workbench;
its attention over the 8 x 8 grid shows where the model looked for each word (Xu et al. 2015).

**Data.** Synthetic, generated on the fly by `tools/train/scenes_data.py` (no data files; its docstring is
the exact specification the engine's scene generator ports). Background: 2-3 gratings (wave, stripes,
checks) blending two greys, plus a fixed colour ramp (red grows to the right, blue downwards: the only
absolute position cue, since the encoder has no position term). Objects: shape (circle, square, triangle,
cross), colour (red, green, blue, yellow, purple), size (small: radius 6-9 px, large: 12-16 px), flat
colours, non-overlapping. Captions: one object
`a <size> <colour> <shape>`; two objects `<phrase> above|below|left of|right of <phrase>` (first the object
with the smaller (size, colour, shape) key: small before large, then red, green, blue, yellow, purple, then
circle, square, triangle, cross; the relation by the dominant axis of the centres, which the generator keeps
at least 16 px longer than the other); 3-4 objects the phrases left to right joined by
`and`. Training scenes: {steps * args.batch} scenes from the seeds 0 .. {last_seed} (two-object scenes
oversampled: a 1 : 3 : 2 : 2 mix of 1-4 objects); held-out scenes: seeds from 10,000,000 on (a uniform mix).

**Architecture** (`tools/train/MODELS.md` section 4, `"architectures": ["AttnScopeCaptioner"]`). Encoder:
4 x (3x3 convolution, ReLU, 2x2 max pooling), channels {config['channels']} -> 8 x 8 grid of D = 128
annotations. Decoder: LSTM cell, hidden {config['hidden']}, initial state from the mean annotation; MLP
attention (size {config['attention_size']}); gate beta; {attention}; deep output (word embedding
{config['embedding_size']}). Input (pixel - mean) / std with mean {config['mean']}, std {config['std']}.
Vocabulary: {len(config['vocab'])} words; max_caption_length {config['max_caption_length']}.
{params} parameters; model.safetensors {size} bytes (float32).

**Training.** {training}. Adam lr {args.lr:g} (warm-up 100 steps, cosine decay to 5 %), gradient norm clipped at 5,
{steps} steps of {args.batch} scenes, torch seed {args.seed}, {args.threads} thread(s) (torch 1.13, CPU).
Last validation (500 scenes, seeds 10,500,000 ..; batched greedy): exact match {exact:.4f}, grounding
(teacher-forced mass inside / chance) x{ground:.2f}. Training time (evaluations included): {seconds / 60:.1f} min
wall clock, {cpu / 60:.1f} min CPU, on a 2-core machine shared with other jobs
({dt.datetime.utcnow().strftime('%Y-%m-%d')}).{status}

**Retrain** (overwrites this folder; then re-run the report and the fixtures):

    /usr/bin/python3 -m tools.train.train_captioner --variant {v}{extra}
    /usr/bin/python3 -m tools.train.report_captioner
    /usr/bin/python3 -m tools.parity.make_captioner_fixtures

## Metrics

<!-- metrics:begin -->
(not measured yet: run `/usr/bin/python3 -m tools.train.report_captioner`)
<!-- metrics:end -->
"""
    with open(os.path.join(out, "MODEL_CARD.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
