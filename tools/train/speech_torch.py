"""Torch implementation of the speech recogniser of tools/train/MODELS.md section 6: Chorowski et al. 2015's
attention-based recogniser with location-aware attention, in seq2seq_torch.py's family ("attention": "location",
"unit": "frame").

  encoder   log-mel frames [T, 80] normalised per band ((x - mean) / std, both stored), STACK consecutive frames
            concatenated (T // STACK steps of 30 ms, the rest dropped), `encoder_layers` bidirectional GRU layers
  decoder   seq2seq_torch.py's Bahdanau decoder (GRU cell over [emb(y) ; c], output from [s ; c ; emb(y)]) whose
            score adds location features: f = F * alpha_{t-1} (k filters of odd width r, centred, no bias),
            e_tj = v . tanh(W s_{t-1} + U h_j + L f_j); alpha_0 is one-hot on the first step
  output    phonemes (espeak-ng's mnemonics), joined with spaces as a word model's words

Used by train_speech.py and tools/parity/make_speech_fixtures.py; beam search is seq2seq_torch.beam_search (the
previous alignment rides in the hypothesis' `feed`). forward() and greedy_batch() are seq2seq_common.StepDecoder's;
seq2seq_torch builds this model for "attention": "location" (new_model, load_model) and is not imported here.
"""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tools.train.seq2seq_common import EOS, StepDecoder


def expected_shapes(c):
    vt = len(c["target_vocab"])
    e, h, d, a = c["embedding_size"], c["encoder_hidden"], c["decoder_hidden"], c["attention_size"]
    f = c["features"]
    x = f["bands"] * f["stack"]
    k, r = c["location_filters"], c["location_width"]
    s = {"encoder.feature_mean": [f["bands"]], "encoder.feature_std": [f["bands"]],
         "decoder.embedding.weight": [vt, e], "decoder.init.weight": [d, 2 * h], "decoder.init.bias": [d]}
    for layer in range(c["encoder_layers"]):
        n_in = x if layer == 0 else 2 * h
        for sfx in (f"_l{layer}", f"_l{layer}_reverse"):
            s.update({f"encoder.gru.weight_ih{sfx}": [3 * h, n_in], f"encoder.gru.weight_hh{sfx}": [3 * h, h],
                      f"encoder.gru.bias_ih{sfx}": [3 * h], f"encoder.gru.bias_hh{sfx}": [3 * h]})
    s.update({"decoder.gru.weight_ih": [3 * d, e + 2 * h], "decoder.gru.weight_hh": [3 * d, d],
              "decoder.gru.bias_ih": [3 * d], "decoder.gru.bias_hh": [3 * d],
              "attention.W.weight": [a, d], "attention.U.weight": [a, 2 * h], "attention.v.weight": [1, a],
              "attention.F.weight": [k, 1, r], "attention.L.weight": [a, k],
              "decoder.out.weight": [vt, d + 2 * h + e], "decoder.out.bias": [vt]})
    return s


def make_config(target_vocab, e, h, d, a, layers, filters, width, max_source_length, max_target_length, task,
                trained_on):
    assert width % 2 == 1, "the location filters are centred: an odd width"
    return {"architectures": ["AttnScopeSeq2Seq"], "task": task, "trained_on": trained_on, "attention": "location",
            "score": "additive", "unit": "frame",
            "features": {"sample_rate": 16000, "window": 400, "hop": 160, "fft": 512, "bands": 80, "stack": 3},
            "source_vocab": [], "target_vocab": list(target_vocab), "embedding_size": e, "encoder_hidden": h,
            "encoder_layers": layers, "decoder_hidden": d, "attention_size": a, "location_filters": filters,
            "location_width": width, "max_source_length": max_source_length, "max_target_length": max_target_length}


class SpeechSeq2Seq(StepDecoder):
    def __init__(self, config):
        super().__init__()
        c = self.config = dict(config)
        vt = len(c["target_vocab"])
        e, h, d, a = c["embedding_size"], c["encoder_hidden"], c["decoder_hidden"], c["attention_size"]
        f = c["features"]
        self.stack, self.bands = f["stack"], f["bands"]
        self.bahdanau, self.score, self.window, self.d = True, "additive", None, d
        self.encoder = nn.Module()
        self.encoder.register_buffer("feature_mean", torch.zeros(self.bands))
        self.encoder.register_buffer("feature_std", torch.ones(self.bands))
        self.encoder.gru = nn.GRU(self.bands * self.stack, h, num_layers=c["encoder_layers"], batch_first=True,
                                  bidirectional=True)
        self.decoder = nn.Module()
        self.decoder.init = nn.Linear(2 * h, d)
        self.decoder.embedding = nn.Embedding(vt, e)
        self.decoder.gru = nn.GRUCell(e + 2 * h, d)
        self.decoder.out = nn.Linear(d + 2 * h + e, vt)
        self.attention = nn.Module()
        self.attention.W = nn.Linear(d, a, bias=False)
        self.attention.U = nn.Linear(2 * h, a, bias=False)
        self.attention.v = nn.Linear(a, 1, bias=False)
        r = c["location_width"]
        self.attention.F = nn.Conv1d(1, c["location_filters"], r, padding=r // 2, bias=False)
        self.attention.L = nn.Linear(c["location_filters"], a, bias=False)
        got = {k: list(v.shape) for k, v in self.state_dict().items()}
        assert got == expected_shapes(c), (got, expected_shapes(c))

    def steps_of(self, frames):
        return frames // self.stack

    def encode(self, src, lengths):
        """src [B, T, bands] log-mel frames (padded), lengths [B] in frames -> seq2seq_torch's encoder dict over
        the T // stack encoder steps."""
        x = (src - self.encoder.feature_mean) / self.encoder.feature_std
        n = src.shape[1] // self.stack
        x = x[:, :n * self.stack].reshape(src.shape[0], n, self.stack * self.bands)
        steps = lengths // self.stack
        if bool((steps == n).all()):
            out, hn = self.encoder.gru(x)
        else:
            packed = pack_padded_sequence(x, steps.cpu(), batch_first=True, enforce_sorted=False)
            out, hn = self.encoder.gru(packed)
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=n)
        s0 = torch.tanh(self.decoder.init(torch.cat([hn[-2], hn[-1]], dim=-1)))
        mask = torch.arange(n, device=src.device)[None, :] < steps[:, None]
        return {"H": out, "s0": s0, "mask": mask, "S": steps.to(out.dtype), "keys": self.attention.U(out)}

    def initial_feed(self, enc):
        alpha = enc["H"].new_zeros(enc["H"].shape[0], enc["H"].shape[1])
        alpha[:, 0] = 1.0
        return alpha

    def step(self, y_prev, s_prev, feed, enc):
        """feed: the previous alignment [B, S]; returns it anew as the next feed."""
        H, mask = enc["H"], enc["mask"]
        emb = self.decoder.embedding(y_prev)
        q = self.attention.W(s_prev)
        loc = self.attention.L(self.attention.F(feed[:, None, :]).transpose(1, 2))      # [B, S, a]
        e = self.attention.v(torch.tanh(q[:, None, :] + enc["keys"] + loc)).squeeze(-1)
        alpha = shape_weights(e, mask, feed, getattr(self, "shaping", None))
        c = torch.bmm(alpha[:, None, :], H).squeeze(1)
        s = self.decoder.gru(torch.cat([emb, c], dim=-1), s_prev)
        logits = self.decoder.out(torch.cat([s, c, emb], dim=-1))
        return logits, s, alpha, alpha, None


def shape_weights(e, mask, feed, shaping=None):
    """The scores e [B, S] into weights: the softmax, or as `shaping` says (the engine's AttentionShaping):
    {"sharpen": beta} softmax(beta e); {"smooth": True} sigmoid(e) / sum sigmoid(e); {"top_k": k} only the k
    highest scores, renormalised; {"window": w} only the steps within +-w of the median of the previous alignment
    `feed` (the first step where its running sum reaches one half). Padding (~mask) is never attended."""
    shaping = shaping or {}
    beta, smooth = shaping.get("sharpen", 1.0), shaping.get("smooth", False)
    k, w = shaping.get("top_k", 0), shaping.get("window", 0)
    keep = mask.clone()
    if w > 0:
        median = (torch.cumsum(feed, dim=-1) < 0.5).sum(-1).clamp_max(e.shape[1] - 1)
        j = torch.arange(e.shape[1], device=e.device)[None, :]
        keep &= (j >= median[:, None] - w) & (j <= median[:, None] + w)
    if k > 0:
        top = e.masked_fill(~keep, float("-inf")).topk(min(k, e.shape[1]), dim=-1).indices
        keep &= torch.zeros_like(keep).scatter(1, top, True)
    if smooth:
        weights = torch.sigmoid(e) * keep
        return weights / weights.sum(-1, keepdim=True)
    return torch.softmax((beta * e).masked_fill(~keep, float("-inf")), dim=-1)


def cut(frames, config):
    """The frames a model reads: at most max_source_length steps (the engine's run_frames cuts the rest, with a
    warning)."""
    return frames[:config["max_source_length"] * config["features"]["stack"]]


def target_ids(phonemes, config):
    index = {u: i for i, u in enumerate(config["target_vocab"]) if i >= 3}
    return [index[p] for p in phonemes] + [EOS]


def mel_filters(bands=80, fft=512, rate=16000, low=0.0, high=8000.0):
    """[bands, fft / 2 + 1]: triangles on the HTK mel scale (audio.h's mel_filters), in float64."""
    def mel(hz):
        return 2595.0 * torch.log10(1.0 + hz / 700.0)
    edges_mel = torch.linspace(float(mel(torch.tensor(low, dtype=torch.float64))),
                               float(mel(torch.tensor(high, dtype=torch.float64))), bands + 2, dtype=torch.float64)
    edges = 700.0 * (10.0 ** (edges_mel / 2595.0) - 1.0)
    hz = torch.arange(fft // 2 + 1, dtype=torch.float64) * rate / fft
    left, centre, right = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    return torch.clamp(torch.minimum((hz - left) / (centre - left), (right - hz) / (right - centre)), min=0.0)


def log_mel(samples, window=400, hop=160, fft=512, bands=80):
    """audio.h's log_mel in float64: frame t is samples [t hop, t hop + window) times a periodic Hann window, zero
    padded to fft; log(mel power + 1e-6) [frames, bands]."""
    x = torch.as_tensor(samples, dtype=torch.float64)
    if x.shape[0] < window:
        return torch.zeros(0, bands, dtype=torch.float64)
    frames = x.unfold(0, window, hop) * torch.hann_window(window, periodic=True, dtype=torch.float64)
    spectrum = torch.fft.rfft(frames, n=fft)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    return torch.log(power @ mel_filters(bands, fft).t() + 1e-6)
