// The logit lens (nostalgebraist 2020): what each layer's residual stream would predict if the model stopped
// there, read with the model's own final norm and output embedding.
#include "transformer_impl.h"
#include "decoder_impl.h"
#include "norm_math.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn::models {

Result<LogitLens> TransformerModel::logit_lens(const TransformerRun& run, const std::vector<int>& positions,
                                               int top) const {
  const Impl& m = *impl_;
  const auto& c = m.config;
  if (c.family != Family::Decoder && c.family != Family::Gpt2) {
    return fail(ErrorKind::Unsupported,
                "logit lens: " + description() + " has no next-token head to read the layers with");
  }
  if (!m.has_head) return fail(ErrorKind::Unsupported, "logit lens: the checkpoint has no output embedding");
  if (run.hidden_states.size() != static_cast<std::size_t>(c.layers) + 1) {
    return fail(ErrorKind::Mismatch, "logit lens: the run kept no hidden states (RunOptions::hidden_states)");
  }
  const Index n = run.hidden_states.front().rows(), d = c.hidden, V = c.vocab_size;
  for (const int p : positions) {
    if (p < 0 || p >= n) {
      return fail(ErrorKind::OutOfRange,
                  "logit lens: position " + std::to_string(p) + " is outside the run's 0.." + std::to_string(n - 1));
    }
  }
  const Index P = static_cast<Index>(positions.size());
  LogitLens lens;
  lens.positions = positions;
  Matrix normed(P, d), logits(P, V);
  std::vector<float> scratch;
  // One layer's reading of every position into `logits`.
  const auto read_layer = [&](int l) {
    const Matrix& h = run.hidden_states[static_cast<std::size_t>(l) + 1];
    const bool last = l == c.layers - 1;  // already after the final norm, as transformers reports it
    for (Index i = 0; i < P; ++i) {
      const float* row = h.row(positions[static_cast<std::size_t>(i)]).data();
      if (last) {
        normed.row(i) = h.row(positions[static_cast<std::size_t>(i)]);
      } else if (c.family == Family::Decoder && c.decoder.gpt2) {
        layer_norm_row(row, normed.row(i).data(), m.lm_weights->final_norm, m.lm_weights->final_norm_bias, d,
                       c.decoder.rms_eps);
      } else if (c.family == Family::Decoder) {
        rms_norm(row, normed.row(i).data(), m.lm_weights->final_norm, d, c.decoder.rms_eps);
      } else {
        layer_norm_row(row, normed.row(i).data(), m.final_gamma, m.final_beta, d, c.layer_norm_eps);
      }
    }
    if (c.family == Family::Decoder) {
      stored_linear(normed.data(), P, d, m.lm_weights->output(), logits.data(), V, scratch);
      if (c.decoder.final_softcap > 0.0f) {
        const float cap = c.decoder.final_softcap;
        logits.array() = (logits.array() / cap).tanh() * cap;
      }
    } else {
      logits.noalias() = normed * m.output_embedding().transpose();
      if (m.decoder_bias.size() == V) logits.rowwise() += m.decoder_bias;
    }
  };
  // The model's final choice at each position, then every layer's top tokens and the rank it gives that
  // choice (how many tokens it puts above it).
  read_layer(c.layers - 1);
  std::vector<Index> final_choice(static_cast<std::size_t>(P));
  for (Index i = 0; i < P; ++i) logits.row(i).maxCoeff(&final_choice[static_cast<std::size_t>(i)]);
  lens.final_rank.assign(static_cast<std::size_t>(c.layers), std::vector<int>(static_cast<std::size_t>(P)));
  for (int l = 0; l < c.layers; ++l) {
    read_layer(l);
    std::vector<std::vector<Prediction::Candidate>> row_tops;
    for (Index i = 0; i < P; ++i) {
      row_tops.push_back(top_k(logits.row(i), top, m.tokenizer.get(), nullptr));
      const Index best = final_choice[static_cast<std::size_t>(i)];
      const float v = logits(i, best);
      int rank = 0;
      for (Index j = 0; j < V; ++j) rank += logits(i, j) > v || (logits(i, j) == v && j < best);
      lens.final_rank[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)] = rank;
    }
    lens.top.push_back(std::move(row_tops));
  }
  return lens;
}

}  // namespace attn::models
