"""Torch implementation of the Show, Attend and Tell captioner of tools/train/MODELS.md section 4.

Used by train_captioner.py (batched teacher-forced training), report_captioner.py (evaluation) and
tools/parity/make_captioner_fixtures.py (the C++ engine's parity fixtures). Nothing here is run directly.

  Captioner(config)                 the module; its state_dict() names are exactly the tensor names of MODELS.md
  model.encode(images)              images [B, S, S, 3] in [0, 1] (not normalised) -> features [B, L, D]
  model(images, ids_in, ...)        teacher-forced forward -> dict(logits [B, T, V], alpha [B, T, L], beta [B, T],
                                    locations [B, T] (hard), log_p_loc [B, T] (hard, sampled), entropy [B, T])
  save_model(model, folder)         config.json + model.safetensors (float32)
  load_model(folder, dtype)         the reverse (strict: every tensor present with its MODELS.md shape)
  greedy(model, image)              single-image decoding as MODELS.md "Decoding" says ...
  beam_search(model, image, k)      ... each returning Hypothesis objects (ids, words, log_prob, finished,
                                    per emitted id: alpha row [L], beta, location (hard), log-softmax row [V])
  teacher_forced(model, image, ids) single image, the given ids (without <start>): the same per-step rows

Hard attention, locations: training samples s ~ Categorical(α_t) (or, per image with probability
`soft_share`, uses the expected value Σ_i α_i a_i as Xu et al. do for half the images); inference and
teacher_forced() use s = argmax_i α_ti, the lowest i on ties (torch.argmax returns the first maximum).

Beam search (MODELS.md "Decoding", the same rules as seq2seq_torch.beam_search):
  alive = [<start> with score 0]; ended = []
  each step: every alive hypothesis is extended by every word id (log-softmax of its logits added);
    the k best extensions are kept (ranking: higher score first, ties by the id sequences compared
    lexicographically, i.e. lower id first); an extension ending in <end> or holding max_caption_length
    ids has ended and moves to `ended`, the others are the new `alive`;
  stop when the k best of ended + alive (same ranking) have all ended, or nothing is alive;
  the result is the best min(k, len(ended)) ended hypotheses, best first.
Greedy is the same with k = 1.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from tools.safetensors_io import read_model_folder, write_model_folder

PAD, START, END, UNK = 0, 1, 2, 3


def make_config(attention, vocab, channels, embedding_size, hidden, attention_size, max_caption_length,
                image_size=128, mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25), task="synthetic scene captions"):
    assert attention in ("soft", "hard")
    assert list(vocab[:4]) == ["<pad>", "<start>", "<end>", "<unk>"]
    assert image_size % (2 ** len(channels)) == 0
    return {"architectures": ["AttnScopeCaptioner"], "task": task, "attention": attention,
            "image_size": int(image_size), "mean": [float(m) for m in mean], "std": [float(s) for s in std],
            "channels": [int(c) for c in channels], "vocab": list(vocab), "embedding_size": int(embedding_size),
            "hidden": int(hidden), "attention_size": int(attention_size),
            "max_caption_length": int(max_caption_length)}


def expected_shapes(config):
    """Every tensor of MODELS.md section 4 for this config: name -> shape."""
    c = config
    V, E, H, A = len(c["vocab"]), c["embedding_size"], c["hidden"], c["attention_size"]
    ch = [3] + list(c["channels"])
    D = ch[-1]
    s = {}
    for k in range(len(ch) - 1):
        s[f"encoder.convs.{k}.weight"] = [ch[k + 1], ch[k], 3, 3]
        s[f"encoder.convs.{k}.bias"] = [ch[k + 1]]
    s.update({
        "decoder.init_h.weight": [H, D], "decoder.init_h.bias": [H],
        "decoder.init_c.weight": [H, D], "decoder.init_c.bias": [H],
        "decoder.attention.encoder.weight": [A, D], "decoder.attention.encoder.bias": [A],
        "decoder.attention.decoder.weight": [A, H], "decoder.attention.full.weight": [1, A],
        "decoder.gate.weight": [1, H], "decoder.gate.bias": [1],
        "decoder.embedding.weight": [V, E],
        "decoder.lstm.weight_ih": [4 * H, E + D], "decoder.lstm.weight_hh": [4 * H, H],
        "decoder.lstm.bias_ih": [4 * H], "decoder.lstm.bias_hh": [4 * H],
        "decoder.deep_h.weight": [E, H], "decoder.deep_z.weight": [E, D],
        "decoder.out.weight": [V, E], "decoder.out.bias": [V],
    })
    return s


class Captioner(nn.Module):
    def __init__(self, config):
        super().__init__()
        c = self.config = dict(config)
        V, E, H, A = len(c["vocab"]), c["embedding_size"], c["hidden"], c["attention_size"]
        ch = [3] + list(c["channels"])
        D = ch[-1]
        self.hard = c["attention"] == "hard"
        self.D, self.H = D, H
        self.grid = c["image_size"] // 2 ** len(c["channels"])
        self.encoder = nn.Module()
        self.encoder.convs = nn.ModuleList(nn.Conv2d(ch[k], ch[k + 1], 3, padding=1) for k in range(len(ch) - 1))
        d = self.decoder = nn.Module()
        d.init_h = nn.Linear(D, H)
        d.init_c = nn.Linear(D, H)
        d.attention = nn.Module()
        d.attention.encoder = nn.Linear(D, A)
        d.attention.decoder = nn.Linear(H, A, bias=False)
        d.attention.full = nn.Linear(A, 1, bias=False)
        d.gate = nn.Linear(H, 1)
        d.embedding = nn.Embedding(V, E)
        d.lstm = nn.LSTMCell(E + D, H)
        d.deep_h = nn.Linear(H, E, bias=False)
        d.deep_z = nn.Linear(D, E, bias=False)
        d.out = nn.Linear(E, V)
        self.register_buffer("mean", torch.tensor(c["mean"]).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(c["std"]).view(1, 3, 1, 1), persistent=False)
        got = {k: list(v.shape) for k, v in self.state_dict().items()}
        assert got == expected_shapes(c), (got, expected_shapes(c))

    # ------------------------------------------------------------ encoder

    def encode(self, images):
        """images [B, S, S, 3] in [0, 1] -> features [B, L, D] (row-major grid cells)."""
        x = images.permute(0, 3, 1, 2).to(self.mean.dtype)
        x = (x - self.mean) / self.std
        for conv in self.encoder.convs:
            x = F.max_pool2d(F.relu(conv(x)), 2)
        B, D = x.shape[0], x.shape[1]
        return x.permute(0, 2, 3, 1).reshape(B, -1, D)

    def init_state(self, feats):
        m = feats.mean(1)
        return torch.tanh(self.decoder.init_h(m)), torch.tanh(self.decoder.init_c(m))

    # ------------------------------------------------------------ one decoder step

    def attend(self, keys, h):
        """keys [B, L, A] (attention.encoder(a_i)), h [B, H] -> alpha [B, L], beta [B]."""
        d = self.decoder
        e = d.attention.full(torch.tanh(keys + d.attention.decoder(h)[:, None, :])).squeeze(-1)
        alpha = torch.softmax(e, dim=-1)
        beta = torch.sigmoid(d.gate(h)).squeeze(-1)
        return alpha, beta

    def step_with_context(self, y_prev, h, c, ctx, beta):
        """ctx [B, D] the (unscaled) context, beta [B]: z = beta ctx -> logits [B, V], h, c."""
        d = self.decoder
        emb = d.embedding(y_prev)
        z = beta[:, None] * ctx
        h, c = d.lstm(torch.cat([emb, z], dim=-1), (h, c))
        logits = d.out(emb + d.deep_h(h) + d.deep_z(z))
        return logits, h, c

    def step(self, y_prev, h, c, feats, keys):
        """Inference step (hard: argmax location) -> logits, h, c, alpha, beta, location (or None)."""
        alpha, beta = self.attend(keys, h)
        if self.hard:
            loc = alpha.argmax(-1)
            ctx = feats[torch.arange(feats.shape[0]), loc]
        else:
            loc = None
            ctx = torch.bmm(alpha[:, None, :], feats).squeeze(1)
        logits, h, c = self.step_with_context(y_prev, h, c, ctx, beta)
        return logits, h, c, alpha, beta, loc

    # ------------------------------------------------------------ teacher forcing (training)

    def forward(self, images, ids_in, sample=False, soft_share=0.0, generator=None, argmax_share=0.0, repeat=1):
        """ids_in [B, T] starts with <start>. sample (hard only): locations drawn from alpha (else argmax);
        soft_share: per image, with this probability the expected context is used instead of a sample;
        argmax_share: per image (of the others), with this probability the argmax location (what inference
        reads) instead of a sample. "soft_rows" in the result marks the images that did not sample.
        repeat: each image is encoded once and decoded `repeat` times (rows b * repeat .. b * repeat + repeat - 1
        of the result; with sample=True each row draws its own locations)."""
        feats = self.encode(images)
        if repeat > 1:
            feats = feats.repeat_interleave(repeat, 0)
            ids_in = ids_in.repeat_interleave(repeat, 0)
        keys = self.decoder.attention.encoder(feats)
        h, c = self.init_state(feats)
        B, T = ids_in.shape
        rows = torch.arange(B)
        use_soft = None
        use_argmax = None
        if self.hard and sample and soft_share > 0:
            use_soft = torch.rand(B, generator=generator) < soft_share
        if self.hard and sample and argmax_share > 0:
            use_argmax = torch.rand(B, generator=generator) < argmax_share
            if use_soft is not None:
                use_argmax &= ~use_soft
        out = {"logits": [], "alpha": [], "beta": [], "locations": [], "log_p_loc": [], "entropy": []}
        for t in range(T):
            alpha, beta = self.attend(keys, h)
            if self.hard:
                if sample:
                    loc = torch.multinomial(alpha.detach(), 1, generator=generator).squeeze(1)
                    if use_argmax is not None:
                        loc = torch.where(use_argmax, alpha.detach().argmax(-1), loc)
                else:
                    loc = alpha.argmax(-1)
                ctx = feats[rows, loc]
                if use_soft is not None:
                    ctx = torch.where(use_soft[:, None], torch.bmm(alpha[:, None, :], feats).squeeze(1), ctx)
                out["locations"].append(loc)
                out["log_p_loc"].append(torch.log(alpha[rows, loc] + 1e-12))
            else:
                ctx = torch.bmm(alpha[:, None, :], feats).squeeze(1)
            out["entropy"].append(-(alpha * torch.log(alpha + 1e-12)).sum(-1))
            logits, h, c = self.step_with_context(ids_in[:, t], h, c, ctx, beta)
            out["logits"].append(logits)
            out["alpha"].append(alpha)
            out["beta"].append(beta)
        res = {k: torch.stack(v, 1) for k, v in out.items() if v}
        fixed = use_soft if use_argmax is None else (use_argmax if use_soft is None else use_soft | use_argmax)
        if fixed is not None:
            res["soft_rows"] = fixed
        return res

    @torch.no_grad()
    def greedy_batch(self, images, steps):
        """Batched greedy decoding (training-time evaluation): ids [B, steps], alpha [B, steps, L]."""
        feats = self.encode(images)
        keys = self.decoder.attention.encoder(feats)
        h, c = self.init_state(feats)
        y = torch.full((images.shape[0],), START, dtype=torch.long)
        ids, alphas = [], []
        for _ in range(steps):
            logits, h, c, alpha, _, _ = self.step(y, h, c, feats, keys)
            y = logits.argmax(-1)
            ids.append(y)
            alphas.append(alpha)
        return torch.stack(ids, 1), torch.stack(alphas, 1)


# ---------------------------------------------------------------- words <-> ids

def words_to_ids(words, config):
    index = {w: i for i, w in enumerate(config["vocab"])}
    return [index.get(w, UNK) for w in words] + [END]


def ids_to_words(ids, config):
    return [config["vocab"][i] for i in ids]


def ids_to_text(ids, config):
    return " ".join(config["vocab"][i] for i in ids if i != END)


# ---------------------------------------------------------------- files

def save_model(model, folder):
    write_model_folder(folder, model.config,
                       {k: v.detach().cpu().float().numpy() for k, v in model.state_dict().items()})


def load_model(folder, dtype=torch.float32):
    config, tensors = read_model_folder(folder, expected_shapes)
    model = Captioner(config)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    return model.to(dtype).eval()


# ---------------------------------------------------------------- single-image decoding

class Hypothesis:
    __slots__ = ("ids", "log_prob", "alpha", "beta", "locations", "log_softmax", "h", "c", "finished")

    def __init__(self, ids, log_prob, alpha, beta, locations, log_softmax, h, c, finished=False):
        self.ids, self.log_prob, self.alpha, self.beta = ids, log_prob, alpha, beta
        self.locations, self.log_softmax, self.h, self.c, self.finished = locations, log_softmax, h, c, finished

    def key(self):
        return (-self.log_prob, self.ids)

    def as_dict(self, config):
        return {"ids": list(self.ids), "words": ids_to_words(self.ids, config), "text": ids_to_text(self.ids, config),
                "log_prob": self.log_prob, "finished": self.finished, "alpha": [list(r) for r in self.alpha],
                "beta": list(self.beta), "locations": list(self.locations),
                "log_softmax": [list(r) for r in self.log_softmax]}


def _prepare(model, image):
    dev_dtype = next(model.parameters()).dtype
    img = torch.as_tensor(np.asarray(image), dtype=dev_dtype)
    if img.dim() == 3:
        img = img[None]
    feats = model.encode(img)
    keys = model.decoder.attention.encoder(feats)
    h, c = model.init_state(feats)
    return feats, keys, h, c


@torch.no_grad()
def beam_search(model, image, k, max_steps=None, trace=None):
    """image [S, S, 3] in [0, 1]. Returns up to k ended Hypothesis objects, best first. `trace`, when a list,
    receives per step the sorted candidate scores (for margin checks)."""
    max_t = max_steps if max_steps is not None else model.config["max_caption_length"]
    feats1, keys1, h0, c0 = _prepare(model, image)
    alive = [Hypothesis([], 0.0, [], [], [], [], h0[0], c0[0])]
    ended = []
    while alive:
        n = len(alive)
        feats, keys = feats1.expand(n, -1, -1), keys1.expand(n, -1, -1)
        y = torch.tensor([hy.ids[-1] if hy.ids else START for hy in alive], dtype=torch.long)
        h = torch.stack([hy.h for hy in alive])
        c = torch.stack([hy.c for hy in alive])
        logits, h, c, alpha, beta, loc = model.step(y, h, c, feats, keys)
        logp_t = torch.log_softmax(logits, dim=-1)
        logp = logp_t.tolist()
        cands = []
        for i, hy in enumerate(alive):
            for tok, lp in enumerate(logp[i]):
                cands.append((-(hy.log_prob + lp), hy.ids + [tok], i))
        cands.sort(key=lambda cd: (cd[0], cd[1]))
        if trace is not None:
            trace.append([-cd[0] for cd in cands[:k + 1]])
        new_alive = []
        for neg, new_ids, i in cands[:k]:
            hy = alive[i]
            nh = Hypothesis(new_ids, -neg, hy.alpha + [alpha[i].tolist()], hy.beta + [float(beta[i])],
                            hy.locations + ([int(loc[i])] if loc is not None else []),
                            hy.log_softmax + [logp[i]], h[i], c[i])
            if new_ids[-1] == END or len(new_ids) >= max_t:
                nh.finished = new_ids[-1] == END
                nh.h = nh.c = None
                ended.append(nh)
            else:
                new_alive.append(nh)
        alive = new_alive
        ended.sort(key=Hypothesis.key)
        ranked = sorted(ended[:k] + alive, key=Hypothesis.key)[:k]
        if len(ended) >= k and all(hy.h is None for hy in ranked):
            break
    ended.sort(key=Hypothesis.key)
    return ended[:k]


def greedy(model, image, max_steps=None, trace=None):
    return beam_search(model, image, 1, max_steps, trace)[0]


@torch.no_grad()
def teacher_forced(model, image, ids):
    """ids: the target ids without <start> (normally ending with <end>). Returns a Hypothesis whose rows are
    the steps predicting each id (its log_prob the sum of their log-softmax; hard: argmax locations)."""
    feats, keys, h, c = _prepare(model, image)
    hy = Hypothesis([], 0.0, [], [], [], [], None, None)
    y = torch.tensor([START], dtype=torch.long)
    for tok in ids:
        logits, h, c, alpha, beta, loc = model.step(y, h, c, feats, keys)
        lp = torch.log_softmax(logits, dim=-1)[0]
        hy.ids.append(int(tok))
        hy.log_prob += float(lp[tok])
        hy.alpha.append(alpha[0].tolist())
        hy.beta.append(float(beta[0]))
        if loc is not None:
            hy.locations.append(int(loc[0]))
        hy.log_softmax.append(lp.tolist())
        y = torch.tensor([tok], dtype=torch.long)
    hy.finished = bool(ids) and ids[-1] == END
    return hy
