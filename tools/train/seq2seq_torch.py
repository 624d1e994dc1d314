"""Torch implementation of the character seq2seq models of tools/train/MODELS.md section 1.

Used by train_dates.py (batched teacher-forced training), report_dates.py (evaluation) and
tools/parity/make_seq2seq_fixtures.py (the C++ engine's parity fixtures). Nothing here is run directly.
The special ids and the decoding loop (forward, greedy_batch) are seq2seq_common.py's, shared with
convs2s_torch.py and speech_torch.py, which this module builds for their configs (new_model, expected_shapes).

  Seq2Seq(config)                  the module; its state_dict() names are exactly the tensor names of MODELS.md
  model(src, lengths, tgt_in)      teacher-forced forward: logits [B, T, Vt], attention [B, T, S], p_t [B, T]
  save_model(model, folder)        config.json + model.safetensors (float32)
  load_model(folder, dtype)        the reverse (strict: every tensor present with its MODELS.md shape)
  greedy(model, ids)               single-example decoding as MODELS.md "Decoding" says ...
  beam_search(model, ids, k)       ... each returning Hypothesis objects (ids, text, log_prob, finished,
                                   attention rows, positions)

Decoding runs in the model's dtype; the fixtures and the report load the model with dtype=torch.float64
(the float32 weights of the folder, widened), so every number they write is a float64 computation.

Tensor names: torch's own. The encoder is one `nn.GRU(e, h, batch_first=True, bidirectional=True)`, so its
names are encoder.gru.{weight_ih,weight_hh,bias_ih,bias_hh}_l0 and the same with the suffix _reverse;
the decoder is an `nn.GRUCell`: decoder.gru.{weight_ih,weight_hh,bias_ih,bias_hh}. expected_shapes(config)
lists every name with its shape.

Beam search (MODELS.md "Decoding", made precise):
  alive = [<s> with score 0]; ended = []
  each step: every alive hypothesis is extended by every target id (log-softmax of its logits added);
    the k best extensions are kept (ranking: higher score first, ties by the id sequences compared
    lexicographically, i.e. lower token id first); an extension ending in </s> or holding
    max_target_length ids has ended and moves to `ended`, the others are the new `alive`;
  stop when the k best of ended + alive (same ranking) have all ended, or nothing is alive;
  the result is the best min(k, len(ended)) ended hypotheses, best first.
Greedy is the same with k = 1 (argmax, ties to the lower id). A hypothesis never holds more than
max_target_length ids (</s> included); it is `finished` when its last id is </s>.
"""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tools.safetensors_io import read_model_folder, write_model_folder
from tools.train import convs2s_torch, speech_torch
from tools.train.reviews_data import split_words
from tools.train.seq2seq_common import BOS, EOS, PAD, UNK, StepDecoder  # noqa: F401  (PAD, UNK: st.PAD, st.UNK)

# config.json's "trained_on": the Alignment tab shows it beside the model, so that nobody mistakes an answer
# to unlike input for knowledge.
TRAINED_ON = ("one date from 1900 to 2099 in any of 21 written forms (numbers, English month and weekday names; tools/train/dates_data.py); any other text is still read as a date")

VARIANTS = {
    "bahdanau": {"attention": "bahdanau", "score": "additive"},
    "luong-dot": {"attention": "luong", "score": "dot"},
    "luong-general": {"attention": "luong", "score": "general"},
    "luong-concat": {"attention": "luong", "score": "concat"},
    "luong-local-p": {"attention": "luong", "score": "general", "local": True},
    "convs2s": {"attention": "convs2s"},
}
# ConvS2S's sizes (convs2s_torch.py): one width d (embedding_size) everywhere, the layers and the kernels.
CONVS2S_KEYS = ("embedding_size", "encoder_layers", "encoder_kernel", "decoder_layers", "decoder_kernel")


def make_config(variant, source_vocab, target_vocab, e, h, d, a, max_source_length, max_target_length,
                window=None, task="date normalisation", trained_on=TRAINED_ON, convs2s=None, unit="character"):
    """convs2s: for that variant, the dict of CONVS2S_KEYS (e, h, d, a are then unused)."""
    v = VARIANTS[variant]
    if variant == "convs2s":
        c = {"architectures": ["AttnScopeSeq2Seq"], "task": task, "trained_on": trained_on, "attention": "convs2s",
             "source_vocab": list(source_vocab), "target_vocab": list(target_vocab)}
        c.update({k: int(convs2s[k]) for k in CONVS2S_KEYS})
        c.update({"max_source_length": max_source_length, "max_target_length": max_target_length})
        return c
    c = {"architectures": ["AttnScopeSeq2Seq"], "task": task, "trained_on": trained_on, "attention": v["attention"],
         "score": v["score"]}
    if v.get("local"):
        c["local"] = {"kind": "predictive", "window": int(window)}
    if unit != "character":
        c["unit"] = unit
    c.update({"source_vocab": list(source_vocab), "target_vocab": list(target_vocab),
              "embedding_size": e, "encoder_hidden": h, "decoder_hidden": d, "attention_size": a,
              "max_source_length": max_source_length, "max_target_length": max_target_length})
    if c["score"] == "dot" and d != 2 * h:
        raise ValueError("dot score needs decoder_hidden = 2 * encoder_hidden")
    return c


def variant_of(config):
    if config["attention"] in ("bahdanau", "convs2s"):
        return config["attention"]
    if config.get("local"):
        return "luong-local-p"
    return "luong-" + config["score"]


def expected_shapes(config):
    """Every tensor of MODELS.md section 1 for this config: name -> shape."""
    c = config
    if c["attention"] == "convs2s":
        return convs2s_torch.expected_shapes(c)
    if c["attention"] == "location":
        return speech_torch.expected_shapes(c)
    vs, vt = len(c["source_vocab"]), len(c["target_vocab"])
    e, h, d, a = c["embedding_size"], c["encoder_hidden"], c["decoder_hidden"], c["attention_size"]
    s = {"encoder.embedding.weight": [vs, e], "decoder.embedding.weight": [vt, e],
         "decoder.init.weight": [d, 2 * h], "decoder.init.bias": [d]}
    for sfx in ("_l0", "_l0_reverse"):
        s.update({f"encoder.gru.weight_ih{sfx}": [3 * h, e], f"encoder.gru.weight_hh{sfx}": [3 * h, h],
                  f"encoder.gru.bias_ih{sfx}": [3 * h], f"encoder.gru.bias_hh{sfx}": [3 * h]})
    gin = e + 2 * h if c["attention"] == "bahdanau" else e + d
    s.update({"decoder.gru.weight_ih": [3 * d, gin], "decoder.gru.weight_hh": [3 * d, d],
              "decoder.gru.bias_ih": [3 * d], "decoder.gru.bias_hh": [3 * d]})
    if c["attention"] == "bahdanau":
        s.update({"attention.W.weight": [a, d], "attention.U.weight": [a, 2 * h], "attention.v.weight": [1, a],
                  "decoder.out.weight": [vt, d + 2 * h + e], "decoder.out.bias": [vt]})
    else:
        s.update({"decoder.combine.weight": [d, 2 * h + d], "decoder.out.weight": [vt, d], "decoder.out.bias": [vt]})
        if c["score"] == "general":
            s["attention.W.weight"] = [d, 2 * h]
        elif c["score"] == "concat":
            s.update({"attention.W.weight": [a, d + 2 * h], "attention.v.weight": [1, a]})
        if c.get("local"):
            s.update({"local.W.weight": [a, d], "local.v.weight": [1, a]})
    return s


class Seq2Seq(StepDecoder):
    def __init__(self, config):
        super().__init__()
        c = self.config = dict(config)
        vs, vt = len(c["source_vocab"]), len(c["target_vocab"])
        e, h, d, a = c["embedding_size"], c["encoder_hidden"], c["decoder_hidden"], c["attention_size"]
        self.bahdanau = c["attention"] == "bahdanau"
        self.score = c["score"]
        self.window = c["local"]["window"] if c.get("local") else None
        self.d = d
        self.encoder = nn.Module()
        self.encoder.embedding = nn.Embedding(vs, e)
        self.encoder.gru = nn.GRU(e, h, batch_first=True, bidirectional=True)
        self.decoder = nn.Module()
        self.decoder.init = nn.Linear(2 * h, d)
        self.decoder.embedding = nn.Embedding(vt, e)
        if self.bahdanau:
            self.decoder.gru = nn.GRUCell(e + 2 * h, d)
            self.decoder.out = nn.Linear(d + 2 * h + e, vt)
            self.attention = nn.Module()
            self.attention.W = nn.Linear(d, a, bias=False)
            self.attention.U = nn.Linear(2 * h, a, bias=False)
            self.attention.v = nn.Linear(a, 1, bias=False)
        else:
            self.decoder.gru = nn.GRUCell(e + d, d)
            self.decoder.combine = nn.Linear(2 * h + d, d, bias=False)
            self.decoder.out = nn.Linear(d, vt)
            if self.score == "dot":
                assert d == 2 * h, "dot score needs d = 2h"
            elif self.score == "general":
                self.attention = nn.Module()
                self.attention.W = nn.Linear(2 * h, d, bias=False)
            elif self.score == "concat":
                self.attention = nn.Module()
                self.attention.W = nn.Linear(d + 2 * h, a, bias=False)
                self.attention.v = nn.Linear(a, 1, bias=False)
            else:
                raise ValueError(f"unknown Luong score {self.score!r}")
            if self.window is not None:
                assert self.score == "general", "local-p uses the general score"
                self.local = nn.Module()
                self.local.W = nn.Linear(d, a, bias=False)
                self.local.v = nn.Linear(a, 1, bias=False)
        shapes = expected_shapes(c)
        got = {k: list(v.shape) for k, v in self.state_dict().items()}
        assert got == shapes, (got, shapes)

    # ------------------------------------------------------------ encoder

    def encode(self, src, lengths):
        """src [B, S] ids (padded with 0), lengths [B] -> dict with H [B, S, 2h], s0 [B, d], the valid mask,
        the per-example source length and the step-independent part of the score."""
        emb = self.encoder.embedding(src)
        n = src.shape[1]
        if bool((lengths == n).all()):
            out, hn = self.encoder.gru(emb)
        else:
            packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, hn = self.encoder.gru(packed)
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=n)
        s0 = torch.tanh(self.decoder.init(torch.cat([hn[0], hn[1]], dim=-1)))
        mask = torch.arange(n, device=src.device)[None, :] < lengths[:, None]
        enc = {"H": out, "s0": s0, "mask": mask, "S": lengths.to(out.dtype)}
        if self.bahdanau:
            enc["keys"] = self.attention.U(out)                                   # U H_j        [B, S, a]
        elif self.score == "general":
            enc["keys"] = self.attention.W(out)                                   # W H_j        [B, S, d]
        elif self.score == "concat":
            enc["keys"] = out @ self.attention.W.weight[:, self.d:].t()          # W_[H] H_j    [B, S, a]
        else:
            enc["keys"] = out
        return enc

    def initial_feed(self, enc):
        return None if self.bahdanau else enc["H"].new_zeros(enc["H"].shape[0], self.d)

    # ------------------------------------------------------------ one decoder step

    def step(self, y_prev, s_prev, feed, enc):
        """y_prev [B] ids, s_prev [B, d], feed [B, d] (Luong's h~_{t-1}; None for Bahdanau)
        -> logits [B, Vt], s_t, feed_t, alpha [B, S], p_t [B] (local-p) or None."""
        H, mask = enc["H"], enc["mask"]
        emb = self.decoder.embedding(y_prev)
        p = None
        if self.bahdanau:
            q = self.attention.W(s_prev)
            e = self.attention.v(torch.tanh(q[:, None, :] + enc["keys"])).squeeze(-1)
            alpha = torch.softmax(e.masked_fill(~mask, float("-inf")), dim=-1)
            c = torch.bmm(alpha[:, None, :], H).squeeze(1)
            s = self.decoder.gru(torch.cat([emb, c], dim=-1), s_prev)
            logits = self.decoder.out(torch.cat([s, c, emb], dim=-1))
            return logits, s, None, alpha, None
        s = self.decoder.gru(torch.cat([emb, feed], dim=-1), s_prev)
        if self.score == "concat":
            q = s @ self.attention.W.weight[:, :self.d].t()
            score = self.attention.v(torch.tanh(q[:, None, :] + enc["keys"])).squeeze(-1)
        else:  # dot, general (and local-p): s_t . keys_j
            score = torch.bmm(enc["keys"], s[:, :, None]).squeeze(-1)
        if self.window is None:
            alpha = torch.softmax(score.masked_fill(~mask, float("-inf")), dim=-1)
        else:
            D = float(self.window)
            sigma = D / 2.0
            p = enc["S"] * torch.sigmoid(self.local.v(torch.tanh(self.local.W(s))).squeeze(-1))
            j = torch.arange(score.shape[1], device=score.device, dtype=score.dtype)
            dist = j[None, :] - p[:, None]
            visible = (dist.abs() <= D) & mask
            alpha = torch.softmax(score.masked_fill(~visible, float("-inf")), dim=-1)
            alpha = alpha * torch.exp(-dist * dist / (2.0 * sigma * sigma))
        c = torch.bmm(alpha[:, None, :], H).squeeze(1)
        ht = torch.tanh(self.decoder.combine(torch.cat([c, s], dim=-1)))
        logits = self.decoder.out(ht)
        return logits, s, ht, alpha, p

    # ------------------------------------------------------------ teacher forcing, batched greedy decoding

    # forward(src, lengths, tgt_in) and greedy_batch(src, lengths, steps): seq2seq_common.StepDecoder's, over
    # encode, initial_feed and step above.


# ---------------------------------------------------------------- text <-> ids

def is_word_model(config):
    """Outputs joined by spaces: word models' words, speech models' phonemes ("unit": "frame")."""
    return config.get("unit", "character") in ("word", "frame")


def source_units(text, config):
    """The source as the model reads it: code points, or (unit "word") MODELS.md's words: reviews_data.split_words
    (lower case, [a-z0-9']+) without the terminators . ! ?"""
    if not is_word_model(config):
        return list(text)
    return [w for w in split_words(text)[0] if w not in (".", "!", "?")]


def source_ids(text, config):
    """One id per unit (<unk> when not in the vocabulary), truncated to max_source_length."""
    index = {u: i for i, u in enumerate(config["source_vocab"]) if i >= 2}
    return [index.get(u, UNK) for u in source_units(text, config)[:config["max_source_length"]]]


def target_text(ids, config):
    """The output of target ids without </s>: characters, or words with a space between (a <pad> or <s> would
    appear as its vocabulary string)."""
    voc = config["target_vocab"]
    return (" " if is_word_model(config) else "").join(voc[i] for i in ids if i != EOS)


def target_ids(text, config):
    """text: a string of characters, or (unit "word") a list of words."""
    index = {u: i for i, u in enumerate(config["target_vocab"]) if i >= 3}
    return [index[u] for u in text] + [EOS]


# ---------------------------------------------------------------- files

def new_model(config):
    """The module of a config: Seq2Seq, or convs2s_torch.ConvS2S for "attention": "convs2s"."""
    if config["attention"] == "convs2s":
        return convs2s_torch.ConvS2S(config)
    if config["attention"] == "location":
        return speech_torch.SpeechSeq2Seq(config)
    return Seq2Seq(config)


def save_model(model, folder):
    write_model_folder(folder, model.config,
                       {k: v.detach().cpu().float().numpy() for k, v in model.state_dict().items()})


def load_model(folder, dtype=torch.float32):
    config, tensors = read_model_folder(folder, expected_shapes)
    model = new_model(config)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    return model.to(dtype).eval()


# ---------------------------------------------------------------- single-example decoding

class Hypothesis:
    __slots__ = ("ids", "log_prob", "attention", "positions", "s", "feed", "finished")

    def __init__(self, ids, log_prob, attention, positions, s, feed, finished=False):
        self.ids, self.log_prob, self.attention, self.positions = ids, log_prob, attention, positions
        self.s, self.feed, self.finished = s, feed, finished

    def key(self):
        return (-self.log_prob, self.ids)

    def as_dict(self, config):
        d = {"ids": list(self.ids), "text": target_text(self.ids, config), "log_prob": self.log_prob,
             "finished": self.finished, "attention": [list(r) for r in self.attention],
             "positions": list(self.positions)}
        if self.attention and isinstance(self.attention[0][0], list):
            # ConvS2S: a row per decoder layer at every step. "layers" [L][ids][S]; "attention" their mean.
            L = len(self.attention[0])
            d["layers"] = [[list(step[l]) for step in self.attention] for l in range(L)]
            d["attention"] = [[sum(step[l][j] for l in range(L)) / L for j in range(len(step[0]))]
                              for step in self.attention]
        return d


@torch.no_grad()
def beam_search(model, ids, k, max_steps=None, trace=None):
    """Single example: ids are the source ids (already truncated), or a speech model's log-mel frames [T, bands]
    (a tensor). Returns up to k ended Hypothesis objects, best first. `trace`, when a list, receives per step the
    sorted candidate scores (for margin checks)."""
    if len(ids) == 0:
        raise ValueError("nothing to decode")
    cfg = model.config
    max_t = max_steps if max_steps is not None else cfg["max_target_length"]
    dev = next(model.parameters()).device
    src = ids[None].to(dev) if torch.is_tensor(ids) else torch.tensor([ids], dtype=torch.long, device=dev)
    enc1 = model.encode(src, torch.tensor([len(ids)], dtype=torch.long, device=dev))
    feed0 = model.initial_feed(enc1)
    alive = [Hypothesis([], 0.0, [], [], enc1["s0"][0], None if feed0 is None else feed0[0])]
    ended = []
    while alive:
        n = len(alive)
        enc = {key: v.expand(n, *v.shape[1:]) for key, v in enc1.items()}
        y = torch.tensor([h.ids[-1] if h.ids else BOS for h in alive], dtype=torch.long, device=dev)
        s = torch.stack([h.s for h in alive])
        feed = None if feed0 is None else torch.stack([h.feed for h in alive])
        logits, s, feed, alpha, p = model.step(y, s, feed, enc)
        logp = torch.log_softmax(logits, dim=-1).tolist()
        cands = []
        for i, h in enumerate(alive):
            for tok, lp in enumerate(logp[i]):
                cands.append((-(h.log_prob + lp), h.ids + [tok], i))
        cands.sort(key=lambda c: (c[0], c[1]))
        if trace is not None:
            trace.append([-c[0] for c in cands[:k + 1]])
        new_alive = []
        for neg, new_ids, i in cands[:k]:
            h = alive[i]
            row = alpha[i].tolist()
            hyp = Hypothesis(new_ids, -neg, h.attention + [row],
                             h.positions + ([float(p[i])] if p is not None else []),
                             s[i], None if feed is None else feed[i])
            if new_ids[-1] == EOS or len(new_ids) >= max_t:
                hyp.finished = new_ids[-1] == EOS
                hyp.s = hyp.feed = None
                ended.append(hyp)
            else:
                new_alive.append(hyp)
        alive = new_alive
        ended.sort(key=Hypothesis.key)
        ranked = sorted(ended[:k] + alive, key=Hypothesis.key)[:k]
        if len(ended) >= k and all(h.s is None for h in ranked):  # the k best have all ended
            break
    ended.sort(key=Hypothesis.key)
    return ended[:k]


def greedy(model, ids, max_steps=None, trace=None):
    return beam_search(model, ids, 1, max_steps, trace)[0]
