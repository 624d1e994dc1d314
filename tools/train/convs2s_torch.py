"""Torch implementation of the convolutional seq2seq model of tools/train/MODELS.md section 1 ("ConvS2S").

Gehring et al. 2017, "Convolutional Sequence to Sequence Learning": gated convolutions (GLU) over the
characters with learned position embeddings, and one dot-product attention per decoder layer (multi-step
attention). Used through seq2seq_torch (make_config, load_model, beam_search dispatch on
config["attention"] == "convs2s"); nothing here is run directly.

    e_j     = (E_s[x_j] + P_s[j])                               source embedding + position, [S, d]
    z^0     = e;  z^l = sqrt(1/2) (z^{l-1} + GLU(conv_centred(z^{l-1})))     l = 1 .. encoder_layers
    z       = z^L;  values_j = z_j + e_j
    g_i     = E_t[y_i] + P_t[i]                                 target input i (y_0 = <s>)
    h^0     = g;  per decoder layer l (causal convolution: positions i - k + 1 .. i):
      o     = GLU(conv_causal(h^{l-1}))
      q_i   = o_i W_l^T + b_l + g_i
      a_ij  = softmax_j(q_i . z_j)                              <- layer l's attention row
      c_i   = sum_j a_ij values_j
      h^l   = sqrt(1/2) (h^{l-1} + o + c)
    logits  = h^L W_out^T + b_out

GLU([A ; B]) = A * sigmoid(B) over the 2d channels of the convolution (A the first d). Convolutions pad with
zeros (the encoder's k // 2 on both sides, the decoder's k - 1 on the left). The paper's m sqrt(1/m)
scaling of the attention's output is left out (every layer attends over the same S values here, and the
sum is scaled by sqrt(1/2) with the rest).

Tensor names (torch's own; Conv1d weights are [out = 2d, in = d, k], tap t of a centred convolution reads
position i + t - k // 2, of a causal one i + t - (k - 1)):
  encoder.embedding.weight [Vs, d], encoder.positions.weight [max_source_length, d],
  encoder.convs.<l>.weight [2d, d, ke], encoder.convs.<l>.bias [2d],
  decoder.embedding.weight [Vt, d], decoder.positions.weight [max_target_length, d],
  decoder.convs.<l>.weight [2d, d, kd], decoder.convs.<l>.bias [2d],
  decoder.attention.<l>.weight [d, d], decoder.attention.<l>.bias [d],
  decoder.out.weight [Vt, d], decoder.out.bias [Vt].

The decoder state a beam hypothesis carries is the history of its layers' inputs, [L, t, d] after t steps
(the causal convolutions read the last k of them); step() returns the attention of every layer, [B, L, S].
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from tools.train.seq2seq_common import StepDecoder

HALF = math.sqrt(0.5)


def expected_shapes(c):
    vs, vt, d = len(c["source_vocab"]), len(c["target_vocab"]), c["embedding_size"]
    ke, kd = c["encoder_kernel"], c["decoder_kernel"]
    s = {"encoder.embedding.weight": [vs, d], "encoder.positions.weight": [c["max_source_length"], d],
         "decoder.embedding.weight": [vt, d], "decoder.positions.weight": [c["max_target_length"], d],
         "decoder.out.weight": [vt, d], "decoder.out.bias": [vt]}
    for l in range(c["encoder_layers"]):
        s.update({f"encoder.convs.{l}.weight": [2 * d, d, ke], f"encoder.convs.{l}.bias": [2 * d]})
    for l in range(c["decoder_layers"]):
        s.update({f"decoder.convs.{l}.weight": [2 * d, d, kd], f"decoder.convs.{l}.bias": [2 * d],
                  f"decoder.attention.{l}.weight": [d, d], f"decoder.attention.{l}.bias": [d]})
    return s


def glu(x, dim):
    a, b = x.chunk(2, dim=dim)
    return a * torch.sigmoid(b)


class ConvS2S(StepDecoder):
    def __init__(self, config):
        super().__init__()
        c = self.config = dict(config)
        vs, vt, d = len(c["source_vocab"]), len(c["target_vocab"]), c["embedding_size"]
        self.d, self.ke, self.kd = d, c["encoder_kernel"], c["decoder_kernel"]
        assert self.ke % 2 == 1, "the encoder's kernel is centred: it must be odd"
        self.layers = c["decoder_layers"]
        self.bahdanau = True      # seq2seq_torch.beam_search: no Luong feed
        self.window = None        # no local-p
        self.encoder = nn.Module()
        self.encoder.embedding = nn.Embedding(vs, d)
        self.encoder.positions = nn.Embedding(c["max_source_length"], d)
        self.encoder.convs = nn.ModuleList(nn.Conv1d(d, 2 * d, self.ke) for _ in range(c["encoder_layers"]))
        self.decoder = nn.Module()
        self.decoder.embedding = nn.Embedding(vt, d)
        self.decoder.positions = nn.Embedding(c["max_target_length"], d)
        self.decoder.convs = nn.ModuleList(nn.Conv1d(d, 2 * d, self.kd) for _ in range(self.layers))
        self.decoder.attention = nn.ModuleList(nn.Linear(d, d) for _ in range(self.layers))
        self.decoder.out = nn.Linear(d, vt)
        for conv in list(self.encoder.convs) + list(self.decoder.convs):   # GLU's init (Gehring sec. 3.5)
            nn.init.normal_(conv.weight, 0.0, math.sqrt(4.0 / (conv.kernel_size[0] * d)))
            nn.init.zeros_(conv.bias)
        for emb in (self.encoder.embedding, self.encoder.positions, self.decoder.embedding, self.decoder.positions):
            nn.init.normal_(emb.weight, 0.0, 0.1)
        got = {k: list(v.shape) for k, v in self.state_dict().items()}
        assert got == expected_shapes(c), (got, expected_shapes(c))

    # ------------------------------------------------------------ encoder

    def encode(self, src, lengths):
        """src [B, S] (padded with 0), lengths [B] -> z [B, S, d], values [B, S, d], mask [B, S], and s0: the
        empty layer-input history [B, L, 0, d]. Padded positions are zeroed after every layer, so that a batch
        computes what one example alone computes (its convolution reads zeros there)."""
        B, n = src.shape
        mask = torch.arange(n, device=src.device)[None, :] < lengths[:, None]
        keep = mask[:, :, None].to(self.encoder.embedding.weight.dtype)
        e = (self.encoder.embedding(src) + self.encoder.positions.weight[:n][None]) * keep
        z = e
        for conv in self.encoder.convs:
            y = conv(F.pad(z.transpose(1, 2), (self.ke // 2, self.ke // 2)))
            z = HALF * (z + glu(y, 1).transpose(1, 2)) * keep
        s0 = e.new_zeros(B, self.layers, 0, self.d)
        return {"z": z, "values": z + e, "mask": mask, "s0": s0}

    def initial_feed(self, enc):
        return None

    def _attend(self, l, o, g, enc):
        """o, g [B, T, d] -> h-increment parts: attention [B, T, S], context [B, T, d]."""
        q = self.decoder.attention[l](o) + g
        score = torch.bmm(q, enc["z"].transpose(1, 2))
        a = torch.softmax(score.masked_fill(~enc["mask"][:, None, :], float("-inf")), dim=-1)
        return a, torch.bmm(a, enc["values"])

    # ------------------------------------------------------------ teacher forcing

    def forward(self, src, lengths, tgt_in):
        """tgt_in [B, T] starts with <s>: logits [B, T, Vt], attention [B, T, L, S], None."""
        enc = self.encode(src, lengths)
        T = tgt_in.shape[1]
        g = self.decoder.embedding(tgt_in) + self.decoder.positions.weight[:T][None]
        h, alphas = g, []
        for l, conv in enumerate(self.decoder.convs):
            o = glu(conv(F.pad(h.transpose(1, 2), (self.kd - 1, 0))), 1).transpose(1, 2)
            a, c = self._attend(l, o, g, enc)
            h = HALF * (h + o + c)
            alphas.append(a)
        return self.decoder.out(h), torch.stack(alphas, 2), None

    # ------------------------------------------------------------ one decoder step

    def step(self, y_prev, s_prev, feed, enc):
        """y_prev [B] ids, s_prev [B, L, t, d] (the layers' inputs at positions 0 .. t-1) -> logits [B, Vt],
        the history [B, L, t+1, d], None, attention [B, L, S], None."""
        t = s_prev.shape[2]
        g = (self.decoder.embedding(y_prev) + self.decoder.positions.weight[t])[:, None, :]   # [B, 1, d]
        h, inputs, alphas = g, [], []
        for l, conv in enumerate(self.decoder.convs):
            inputs.append(h)
            window = torch.cat([s_prev[:, l], h], dim=1)[:, -self.kd:]                       # [B, <=k, d]
            window = F.pad(window.transpose(1, 2), (self.kd - window.shape[1], 0))
            o = glu(conv(window), 1).transpose(1, 2)                                        # [B, 1, d]
            a, c = self._attend(l, o, g, enc)
            h = HALF * (h + o + c)
            alphas.append(a[:, 0])
        s = torch.cat([s_prev, torch.stack(inputs, 1)], dim=2)
        return self.decoder.out(h[:, 0]), s, None, torch.stack(alphas, 1), None

    # Batched greedy decoding (training-time evaluation): ids [B, steps], attention [B, steps, L, S]: the GRU
    # models' loop, StepDecoder.greedy_batch, which only calls encode, initial_feed and step.
