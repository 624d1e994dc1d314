"""What the attention seq2seq models of tools/train/MODELS.md sections 1 and 6 share: the special ids and the
decoding loop over one decoder step.

seq2seq_torch.py (the GRU models, and make_config, load_model, beam_search for every variant), convs2s_torch.py
(ConvS2S) and speech_torch.py (the speech recogniser) import this module; it imports none of them, so that
seq2seq_torch can build and load the other two models without either of them importing seq2seq_torch back.

  PAD, UNK, BOS, EOS               the special ids (source: <pad> 0, <unk> 1; target: <pad> 0, <s> 1, </s> 2)
  StepDecoder                      the base of the three modules: teacher-forced forward() and greedy_batch(),
                                   written over the model's encode(src, lengths), initial_feed(enc) and
                                   step(y_prev, s_prev, feed, enc) (which seq2seq_torch.beam_search also calls)
"""

import torch
import torch.nn as nn

PAD, UNK = 0, 1          # source ids
BOS, EOS = 1, 2          # target ids (<pad> is 0 there too)


class StepDecoder(nn.Module):
    """A model decoding one step at a time. A subclass defines encode(src, lengths) -> a dict holding at least
    "s0" (the decoder's first state), initial_feed(enc), step(y_prev, s_prev, feed, enc) -> (logits [B, Vt], s,
    feed, attention, p or None), and self.window (local-p's window; None otherwise)."""

    def forward(self, src, lengths, tgt_in):
        """tgt_in [B, T] starts with <s>: logits [B, T, Vt], attention [B, T, S], p_t [B, T] (or None)."""
        enc = self.encode(src, lengths)
        s, feed = enc["s0"], self.initial_feed(enc)
        logits, alphas, ps = [], [], []
        for t in range(tgt_in.shape[1]):
            lg, s, feed, alpha, p = self.step(tgt_in[:, t], s, feed, enc)
            logits.append(lg)
            alphas.append(alpha)
            ps.append(p)
        pos = torch.stack(ps, 1) if self.window is not None else None
        return torch.stack(logits, 1), torch.stack(alphas, 1), pos

    @torch.no_grad()
    def greedy_batch(self, src, lengths, steps):
        """Batched greedy decoding (training-time evaluation): ids [B, steps], attention [B, steps, S] (ConvS2S:
        [B, steps, L, S]); only encode, initial_feed and step are called."""
        enc = self.encode(src, lengths)
        s, feed = enc["s0"], self.initial_feed(enc)
        y = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)
        out, alphas = [], []
        for _ in range(steps):
            lg, s, feed, alpha, _ = self.step(y, s, feed, enc)
            y = lg.argmax(-1)
            out.append(y)
            alphas.append(alpha)
        return torch.stack(out, 1), torch.stack(alphas, 1)
