#!/usr/bin/python3
"""Rocktaeschel et al. (2016), "Reasoning about entailment with neural attention": the word-by-word attention model,
in torch, for tools/train/train_entailment.py (and, later, the parity fixtures of the engine's port).

Equations (k = hidden size; every W a k x k matrix without bias, `Linear(k, k, bias=False)`: x W means W(x)):

    premise   y_1..y_L   = LSTM_p(emb(p_1..p_L))                   Y = [y_1..y_L]  (L x k)
    hypothesis h_1..h_N  = LSTM_h(emb(h_1..h_N)), started from LSTM_p's final (h_L, c_L)
    per hypothesis word t = 1..N, r_0 = 0:
        M_t     = tanh(Y W^y + (h_t W^h + r_{t-1} W^r) for every premise row)       (L x k)
        alpha_t = softmax_j(M_t w)                          <- the attention row of word t over the premise
        r_t     = alpha_t Y + tanh(r_{t-1} W^t)
    h* = tanh(r_N W^p + h_N W^x);  p(label) = softmax(h* W_c^T + b_c)   (3 labels)

Both LSTMs are torch LSTMCells (gates i, f, g, o; weight_ih [4k, e], weight_hh [4k, k], bias_ih, bias_hh [4k]),
run as loops so that padding never enters a state: a sequence's state stops at its last word.

Tensor names (model.safetensors): embedding.weight [V, e]; premise.weight_ih, premise.weight_hh, premise.bias_ih,
premise.bias_hh; hypothesis.(same); attention.W_y.weight, attention.W_h.weight, attention.W_r.weight,
attention.W_t.weight, attention.w.weight [1, k]; final.W_p.weight, final.W_x.weight; classifier.weight [3, k],
classifier.bias [3].
"""

import os

import numpy as np
import torch
from torch import nn

from tools.safetensors_io import read_model_folder, write_model_folder

HERE = os.path.dirname(os.path.abspath(__file__))

PAD, UNK = 0, 1
LABELS = ["entailment", "contradiction", "neutral"]


def make_config(vocab, embedding_size, hidden):
    return {
        "architectures": ["AttnScopeEntailment"],
        "task": "textual entailment",
        "vocab": vocab,
        "labels": LABELS,
        "embedding_size": embedding_size,
        "hidden": hidden,
        "max_words": 24,
    }


class Attention(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.W_y = nn.Linear(k, k, bias=False)
        self.W_h = nn.Linear(k, k, bias=False)
        self.W_r = nn.Linear(k, k, bias=False)
        self.W_t = nn.Linear(k, k, bias=False)
        self.w = nn.Linear(k, 1, bias=False)


class Final(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.W_p = nn.Linear(k, k, bias=False)
        self.W_x = nn.Linear(k, k, bias=False)


class Entailment(nn.Module):
    def __init__(self, c):
        super().__init__()
        e, k = c["embedding_size"], c["hidden"]
        self.k = k
        self.embedding = nn.Embedding(len(c["vocab"]), e, padding_idx=PAD)
        self.premise = nn.LSTMCell(e, k)
        self.hypothesis = nn.LSTMCell(e, k)
        self.attention = Attention(k)
        self.final = Final(k)
        self.classifier = nn.Linear(k, len(LABELS))

    @staticmethod
    def _run(cell, x, lengths, state):
        """Steps of `cell` over x [B, T, e]; a row's state stops at its length. Outputs [B, T, k], final state."""
        h, c = state
        outs = []
        for t in range(x.shape[1]):
            h2, c2 = cell(x[:, t], (h, c))
            live = (t < lengths).unsqueeze(1)
            h = torch.where(live, h2, h)
            c = torch.where(live, c2, c)
            outs.append(h2)
        return torch.stack(outs, 1), (h, c)

    def forward(self, p_ids, p_len, h_ids, h_len, keep_state=None):
        """Logits [B, 3] and the attention [B, N, L] (rows of padded hypothesis words are 0). Training only:
        keep_state [B] (0 or 1) zeroes the premise's final state before the hypothesis LSTM where it is 0."""
        B = p_ids.shape[0]
        zero = p_ids.new_zeros((B, self.k), dtype=self.embedding.weight.dtype)
        Y, state = self._run(self.premise, self.embedding(p_ids), p_len, (zero, zero))
        if keep_state is not None:
            state = tuple(s * keep_state.unsqueeze(1) for s in state)
        H, _ = self._run(self.hypothesis, self.embedding(h_ids), h_len, state)
        a = self.attention
        Yw = a.W_y(Y)                                                  # [B, L, k]
        mask = torch.arange(Y.shape[1]).unsqueeze(0) < p_len.unsqueeze(1)   # [B, L]
        r = zero
        rows = []
        r_last = zero
        h_last = zero
        for t in range(H.shape[1]):
            M = torch.tanh(Yw + (a.W_h(H[:, t]) + a.W_r(r)).unsqueeze(1))
            scores = a.w(M).squeeze(2).masked_fill(~mask, float("-inf"))
            alpha = torch.softmax(scores, 1)
            r = torch.bmm(alpha.unsqueeze(1), Y).squeeze(1) + torch.tanh(a.W_t(r))
            live = (t < h_len).unsqueeze(1)
            last = (t == h_len - 1).unsqueeze(1)
            r_last = torch.where(last, r, r_last)
            h_last = torch.where(last, H[:, t], h_last)
            rows.append(alpha * live)
        hstar = torch.tanh(self.final.W_p(r_last) + self.final.W_x(h_last))
        return self.classifier(hstar), torch.stack(rows, 1)


def build(c):
    return Entailment(c)


def weights(model):
    return {k: v.detach().cpu().float().numpy().astype(np.float32) for k, v in model.state_dict().items()}


def save_model(folder, model, config):
    write_model_folder(folder, config, weights(model))


def load_model(folder):
    config, tensors = read_model_folder(folder)
    model = build(config)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()})
    return model.eval(), config


def word_ids(config, words):
    index = {w: i for i, w in enumerate(config["vocab"])}
    return [index.get(w, UNK) for w in words]


def batch(config, pairs):
    """(p_ids, p_len, h_ids, h_len) tensors of a list of pairs (dicts with "premise" and "hypothesis" word lists)."""
    ps = [word_ids(config, p["premise"]) for p in pairs]
    hs = [word_ids(config, p["hypothesis"]) for p in pairs]

    def pad(seqs):
        T = max(len(s) for s in seqs)
        return torch.tensor([s + [PAD] * (T - len(s)) for s in seqs]), torch.tensor([len(s) for s in seqs])

    p_ids, p_len = pad(ps)
    h_ids, h_len = pad(hs)
    return p_ids, p_len, h_ids, h_len


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())
