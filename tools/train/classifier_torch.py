#!/usr/bin/python3
"""The attention-pooling text classifiers of tools/train/MODELS.md section 2, in torch.

  FlatClassifier          embedding -> BiGRU -> attention pooling (r heads) -> linear
  HierarchicalClassifier  per sentence: embedding -> word BiGRU -> word pooling (r heads);
                          sentence vectors -> sentence BiGRU -> sentence pooling (1 head) -> linear
  LstmClassifier          ("kind": "lstm") embedding -> LSTM -> the last state -> linear
  CnnClassifier           ("kind": "cnn") embedding -> convolution -> ReLU -> global max pooling -> linear

and the saliency each gives without a query (word_saliency()): the pooling weights (mean over heads), the
share of the LSTM's final cell state each word wrote (kappa_t = i_t * prod_{s>t} f_s, MODELS.md section
2), and the words under the windows where the CNN's channels take their maxima, weighted by the channel's
classifier weight for the predicted label;

plus the section's tokenizer (split_words, from reviews_data.py), the model folder format (config.json +
model.safetensors, float32, the section's tensor names) and a single-text inference, analyse(), that
returns what the engine's ClassifierSession::run returns (tokens, byte spans, ids, per-head word
weights, sentence weights, probabilities).

Truncation (as the engine does it, with a warning): flat: the first max_words tokens; hierarchical: the
first max_sentences sentences and the first max_words tokens of each.

GRU tensor names: MODELS.md names a bidirectional GRU's tensors `<prefix>.gru.weight_ih`, `weight_hh`,
`bias_ih`, `bias_hh` and the same four with the suffix `_reverse`. torch's nn.GRU calls them
`weight_ih_l0` ... `weight_ih_l0_reverse`; save_model() writes the contract's names (drops `_l0`) and
load_model() reads either.

A library: train_sentiment.py trains, tools/parity/make_classifier_fixtures.py writes fixtures.
"""

import re

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tools.safetensors_io import read_model_folder, write_model_folder
from tools.train.reviews_data import split_words  # noqa: F401  (re-exported: the section's tokenizer)

PAD, UNK = 0, 1
ARCHITECTURE = "AttnScopeClassifier"


# ---------------------------------------------------------------- configuration

# config.json's "trained_on": shown in the Alignment tab beside the model.
TRAINED_ON = ("short generated reviews of films, restaurants, products, hotels, books and games (a 437-word vocabulary; tools/train/reviews_data.py); other words are read as <unk>")

def make_config(vocab_words, hierarchical, heads, embedding_size, hidden, attention_size, max_words,
                max_sentences=None, task="review sentiment", labels=("negative", "positive"),
                trained_on=TRAINED_ON):
    """config.json as MODELS.md section 2 lists it. vocab_words: the words after <pad>, <unk>."""
    c = {"architectures": [ARCHITECTURE], "task": task, "trained_on": trained_on, "labels": list(labels),
         "vocab": ["<pad>", "<unk>"] + [w for w in vocab_words if w not in ("<pad>", "<unk>")],
         "hierarchical": bool(hierarchical), "heads": int(heads), "embedding_size": int(embedding_size),
         "hidden": int(hidden), "attention_size": int(attention_size), "max_words": int(max_words)}
    if hierarchical:
        c["max_sentences"] = int(max_sentences)
    if not trained_on:
        del c["trained_on"]
    return c


def make_kind_config(vocab_words, kind, embedding_size, hidden=None, channels=None, kernel=None, max_words=80,
                     task="review sentiment", labels=("negative", "positive"), trained_on=TRAINED_ON):
    """config.json of the saliency models ("kind": "lstm" or "cnn"; MODELS.md section 2)."""
    c = {"architectures": [ARCHITECTURE], "task": task, "trained_on": trained_on, "labels": list(labels),
         "vocab": ["<pad>", "<unk>"] + [w for w in vocab_words if w not in ("<pad>", "<unk>")],
         "kind": kind, "embedding_size": int(embedding_size), "max_words": int(max_words)}
    if kind == "lstm":
        c["hidden"] = int(hidden)
    elif kind == "cnn":
        c["channels"], c["kernel"] = int(channels), int(kernel)
    else:
        raise ValueError(kind)
    if not trained_on:
        del c["trained_on"]
    return c


def kind_of(c):
    return c.get("kind", "hierarchical" if c.get("hierarchical") else "attention-pooling")


# ---------------------------------------------------------------- modules

class Pooling(nn.Module):
    """s_i^(k) = w_k . tanh(W x_i + b); alpha^(k) = softmax_i; pooled = [c^(1); ...; c^(r)]."""

    def __init__(self, d_in, attention_size, heads):
        super().__init__()
        self.W = nn.Linear(d_in, attention_size)
        self.w = nn.Linear(attention_size, heads, bias=False)

    def forward(self, x, mask):
        """x [B, n, d], mask [B, n] (True = a real row) -> pooled [B, r*d], alpha [B, r, n]."""
        s = self.w(torch.tanh(self.W(x)))                        # [B, n, r]
        s = s.masked_fill(~mask[:, :, None], float("-inf"))
        alpha = torch.softmax(s, dim=1)
        pooled = torch.einsum("bnr,bnd->brd", alpha, x).reshape(x.shape[0], -1)
        return pooled, alpha.transpose(1, 2)


class BiGRU(nn.Module):
    """A one-layer bidirectional GRU over padded batches (packed, so padding never enters a state)."""

    def __init__(self, d_in, hidden):
        super().__init__()
        self.gru = nn.GRU(d_in, hidden, batch_first=True, bidirectional=True)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return out


class FlatClassifier(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embedding = nn.Embedding(len(c["vocab"]), c["embedding_size"])
        self.encoder = BiGRU(c["embedding_size"], c["hidden"])
        self.pool = Pooling(2 * c["hidden"], c["attention_size"], c["heads"])
        self.classifier = nn.Linear(c["heads"] * 2 * c["hidden"], len(c["labels"]))

    def forward(self, ids, lengths):
        """ids [B, n] (0-padded), lengths [B] -> logits [B, labels], word alpha [B, r, n]."""
        mask = torch.arange(ids.shape[1])[None, :] < lengths[:, None]
        x = self.encoder(self.embedding(ids), lengths)
        pooled, alpha = self.pool(x, mask)
        return self.classifier(pooled), alpha


class _WordLevel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embedding = nn.Embedding(len(c["vocab"]), c["embedding_size"])
        self.gru = BiGRU(c["embedding_size"], c["hidden"]).gru
        self.pool = Pooling(2 * c["hidden"], c["attention_size"], c["heads"])


class _SentenceLevel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gru = BiGRU(c["heads"] * 2 * c["hidden"], c["hidden"]).gru
        self.pool = Pooling(2 * c["hidden"], c["attention_size"], 1)


def _run_gru(gru, x, lengths):
    packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, _ = gru(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out


class HierarchicalClassifier(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.word = _WordLevel(c)
        self.sentence = _SentenceLevel(c)
        self.classifier = nn.Linear(2 * c["hidden"], len(c["labels"]))

    def forward(self, ids, word_lengths, sentence_lengths):
        """ids [B, S, W] (0-padded), word_lengths [B, S] (0 for absent sentences), sentence_lengths [B]
        -> logits [B, labels], word alpha [B, S, r, W], sentence alpha [B, S]."""
        B, S, W = ids.shape
        flat_ids, flat_len = ids.reshape(B * S, W), word_lengths.reshape(B * S)
        real = flat_len > 0
        sid, slen = flat_ids[real], flat_len[real]
        wmask = torch.arange(W)[None, :] < slen[:, None]
        x = _run_gru(self.word.gru, self.word.embedding(sid), slen)
        vec, walpha = self.word.pool(x, wmask)                      # [M, r*2h], [M, r, W]
        vectors = vec.new_zeros(B * S, vec.shape[1])
        vectors[real] = vec
        alphas = walpha.new_zeros(B * S, walpha.shape[1], W)
        alphas[real] = walpha
        vectors = vectors.reshape(B, S, -1)
        smask = torch.arange(S)[None, :] < sentence_lengths[:, None]
        y = _run_gru(self.sentence.gru, vectors, sentence_lengths)
        doc, salpha = self.sentence.pool(y, smask)
        return self.classifier(doc), alphas.reshape(B, S, -1, W), salpha[:, 0]


class LstmClassifier(nn.Module):
    """embedding -> one-layer LSTM (gates i, f, g, o as torch orders them) -> h at the last word -> linear."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embedding = nn.Embedding(len(c["vocab"]), c["embedding_size"])
        self.encoder = nn.Module()
        self.encoder.lstm = nn.LSTM(c["embedding_size"], c["hidden"], batch_first=True)
        self.classifier = nn.Linear(c["hidden"], len(c["labels"]))

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.embedding(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.encoder.lstm(packed)
        return (self.classifier(h[0]),)

    def gates(self, ids, lengths):
        """The input and forget gates at every position: i, f [B, n, h] (past a review's length: unused)."""
        lstm = self.encoder.lstm
        x = self.embedding(ids)
        H = lstm.hidden_size
        h = x.new_zeros(x.shape[0], H)
        c = x.new_zeros(x.shape[0], H)
        xi = x @ lstm.weight_ih_l0.T + lstm.bias_ih_l0 + lstm.bias_hh_l0
        i_all, f_all = [], []
        for t in range(x.shape[1]):
            g = xi[:, t] + h @ lstm.weight_hh_l0.T
            i, f = torch.sigmoid(g[:, :H]), torch.sigmoid(g[:, H:2 * H])
            cand, o = torch.tanh(g[:, 2 * H:3 * H]), torch.sigmoid(g[:, 3 * H:])
            c = f * c + i * cand
            h = o * torch.tanh(c)
            i_all.append(i)
            f_all.append(f)
        return torch.stack(i_all, 1), torch.stack(f_all, 1)


class CnnClassifier(nn.Module):
    """embedding -> Conv1d (kernel k, zero padding (k - 1) / 2 each side) -> ReLU -> max over the words ->
    linear. Padding positions of a batch are zeroed before the convolution and never win a max."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        k = c["kernel"]
        self.embedding = nn.Embedding(len(c["vocab"]), c["embedding_size"])
        self.conv = nn.Conv1d(c["embedding_size"], c["channels"], k, padding=(k - 1) // 2)
        self.classifier = nn.Linear(c["channels"], len(c["labels"]))

    def activations(self, ids, lengths):
        mask = torch.arange(ids.shape[1])[None, :] < lengths[:, None]
        x = self.embedding(ids) * mask[:, :, None]
        a = torch.relu(self.conv(x.transpose(1, 2)))                      # [B, C, n]
        return a, mask

    def forward(self, ids, lengths):
        a, mask = self.activations(ids, lengths)
        pooled = a.masked_fill(~mask[:, None, :], float("-inf")).max(dim=2).values
        return (self.classifier(pooled),)


def build(c):
    kind = kind_of(c)
    if kind == "lstm":
        return LstmClassifier(c)
    if kind == "cnn":
        return CnnClassifier(c)
    return HierarchicalClassifier(c) if c["hierarchical"] else FlatClassifier(c)


def word_saliency(model, config, ids_list):
    """Per text (a list of ids), its words' saliency as MODELS.md section 2 defines it (sums to 1) and the
    detail behind it: dict(saliency [n], and per kind: heads [r, n] | i, f, kappa [h, n] |
    activations [C, n], winner [C], weight [C])."""
    ids, lengths = batch_flat(ids_list)
    kind = kind_of(config)
    out = []
    with torch.no_grad():
        logits = model(ids, lengths)
        if kind == "attention-pooling":
            alpha = logits[1]
            for b, n in enumerate(lengths.tolist()):
                a = alpha[b, :, :n].double().numpy()
                out.append({"saliency": a.mean(axis=0), "heads": a})
        elif kind == "lstm":
            i_all, f_all = model.gates(ids, lengths)
            for b, n in enumerate(lengths.tolist()):
                i, f = i_all[b, :n].double().numpy().T, f_all[b, :n].double().numpy().T     # [h, n]
                after = np.ones_like(f)
                for t in range(n - 2, -1, -1):
                    after[:, t] = after[:, t + 1] * f[:, t + 1]
                kappa = i * after
                out.append({"saliency": kappa.sum(axis=0) / kappa.sum(), "i": i, "f": f, "kappa": kappa})
        elif kind == "cnn":
            act, _ = model.activations(ids, lengths)
            W = model.classifier.weight.double().numpy()
            pred = logits[0].argmax(-1).tolist()
            k = config["kernel"]
            for b, n in enumerate(lengths.tolist()):
                a = act[b, :, :n].double().numpy()
                out.append(cnn_saliency(a, W, pred[b], k))
        else:
            raise ValueError(f"no word saliency for {kind}")
    return out


def cnn_saliency(a, W, predicted, kernel):
    """a [C, n] the ReLU activations, W [labels, C]: each channel's winner (the first position of its
    maximum), its weight max(0, W[pred, c] - mean_k W[k, c]) (0 when the channel's maximum is 0: it adds
    nothing to any logit), and per word the weights of the channels whose winning window covers it."""
    C, n = a.shape
    winner = a.argmax(axis=1)
    weight = np.maximum(0.0, W[predicted] - W.mean(axis=0))
    weight = np.where(a.max(axis=1) > 0, weight, 0.0)
    pad = (kernel - 1) // 2
    s = np.zeros(n)
    for c in range(C):
        lo, hi = max(0, winner[c] - pad), min(n, winner[c] - pad + kernel)
        s[lo:hi] += weight[c]
    total = s.sum()
    return {"saliency": s / total if total > 0 else s, "activations": a, "winner": winner, "weight": weight}


# ---------------------------------------------------------------- folders

def contract_name(torch_name):
    """encoder.gru.weight_ih_l0_reverse -> encoder.gru.weight_ih_reverse (MODELS.md's names)."""
    return re.sub(r"_l0(_reverse)?$", r"\1", torch_name)


def weights(model):
    """The model's tensors by MODELS.md name, float32 numpy."""
    return {contract_name(k): v.detach().cpu().float().numpy().astype(np.float32)
            for k, v in model.state_dict().items()}


def save_model(folder, model, config):
    write_model_folder(folder, config, weights(model))


def load_model(folder):
    config, tensors = read_model_folder(folder)
    model = build(config)
    by_contract = {contract_name(k): k for k in model.state_dict()}
    state = {}
    for name, a in tensors.items():
        key = by_contract.get(name, name)
        state[key] = torch.from_numpy(a)
    model.load_state_dict(state)
    return model.eval(), config


# ---------------------------------------------------------------- text -> ids

def word_ids(config, tokens, _cache={}):
    key = id(config["vocab"])
    index = _cache.get(key)
    if index is None or index[0] is not config["vocab"]:
        index = (config["vocab"], {w: i for i, w in enumerate(config["vocab"])})
        _cache[key] = index
    return [index[1].get(t, UNK) for t in tokens]


def prepare(config, text):
    """The truncated split of text: dict(tokens, spans, sentence, ids, unknown, warnings)."""
    tokens, spans, sentence = split_words(text)
    warnings = []
    if not tokens:
        raise ValueError("the text has no word")
    keep = list(range(len(tokens)))
    mw = config["max_words"]
    if not config.get("hierarchical", False):
        if len(keep) > mw:
            warnings.append(f"input truncated to {mw} words (of {len(keep)})")
            keep = keep[:mw]
    else:
        ms = config["max_sentences"]
        n_sent = sentence[-1] + 1
        if n_sent > ms:
            warnings.append(f"input truncated to {ms} sentences (of {n_sent})")
        out = []
        for s in range(min(n_sent, ms)):
            idx = [i for i in keep if sentence[i] == s]
            if len(idx) > mw:
                warnings.append(f"sentence {s + 1} truncated to {mw} words (of {len(idx)})")
            out += idx[:mw]
        keep = out
    tokens = [tokens[i] for i in keep]
    spans = [spans[i] for i in keep]
    sentence = [sentence[i] for i in keep]
    ids = word_ids(config, tokens)
    return {"tokens": tokens, "spans": spans, "sentence": sentence, "ids": ids,
            "unknown": [i == UNK for i in ids], "warnings": warnings}


def batch_flat(id_lists):
    n = max(len(x) for x in id_lists)
    ids = torch.zeros(len(id_lists), n, dtype=torch.long)
    for b, x in enumerate(id_lists):
        ids[b, :len(x)] = torch.tensor(x)
    return ids, torch.tensor([len(x) for x in id_lists])


def sentences_of(ids, sentence):
    out = []
    for i, s in zip(ids, sentence):
        if s == len(out):
            out.append([])
        out[s].append(i)
    return out


def batch_hierarchical(docs):
    """docs: per document, a list of sentences, each a list of ids."""
    S = max(len(d) for d in docs)
    W = max(len(s) for d in docs for s in d)
    ids = torch.zeros(len(docs), S, W, dtype=torch.long)
    wl = torch.zeros(len(docs), S, dtype=torch.long)
    for b, d in enumerate(docs):
        for s, sent in enumerate(d):
            ids[b, s, :len(sent)] = torch.tensor(sent)
            wl[b, s] = len(sent)
    return ids, wl, torch.tensor([len(d) for d in docs])


# ---------------------------------------------------------------- one text

def analyse(model, config, text, double=True):
    """What the engine's ClassifierSession::run returns, computed by torch (float64 by default):
    dict(tokens, spans, sentence_of_token, ids, unknown, word_attention [heads][tokens] (the LSTM and the
    CNN: [0][tokens]), sentence_attention (hierarchical, else []), probabilities, predicted, warnings,
    saliency (flat kinds: word_saliency()'s dict))."""
    p = prepare(config, text)
    m = model
    if double:
        import copy
        m = copy.deepcopy(model).double()
    m.eval()
    saliency = None
    with torch.no_grad():
        if kind_of(config) in ("lstm", "cnn"):
            ids, lengths = batch_flat([p["ids"]])
            logits = m(ids, lengths)[0]
            saliency = word_saliency(m, config, [p["ids"]])[0]
            word = np.zeros((0, len(p["ids"])))
            sent = np.zeros(0)
        elif not config["hierarchical"]:
            ids, lengths = batch_flat([p["ids"]])
            logits, alpha = m(ids, lengths)
            word = alpha[0].double().numpy()                                   # [r, n]
            sent = np.zeros(0)
            saliency = word_saliency(m, config, [p["ids"]])[0]
        else:
            sents = sentences_of(p["ids"], p["sentence"])
            ids, wl, sl = batch_hierarchical([sents])
            logits, walpha, salpha = m(ids, wl, sl)
            word = np.concatenate([walpha[0, s, :, :len(x)].double().numpy() for s, x in enumerate(sents)], axis=1)
            sent = salpha[0].double().numpy()
        prob = torch.softmax(logits[0].double(), dim=-1).numpy()
    return {"tokens": p["tokens"], "spans": [list(s) for s in p["spans"]], "sentence_of_token": p["sentence"],
            "ids": p["ids"], "unknown": p["unknown"], "word_attention": word, "sentence_attention": sent,
            "probabilities": prob, "predicted": int(np.argmax(prob)), "warnings": p["warnings"],
            "saliency": saliency}


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())
