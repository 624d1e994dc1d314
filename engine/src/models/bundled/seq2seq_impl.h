// The seq2seq model's weights and the runner's buffers, shared by seq2seq.cpp (config, loading, the GRU
// decoders, decoding) and seq2seq_convs2s.cpp (the convolutional model). Internal to engine/models.
#pragma once

#include "attn/mechanisms/attention.h"
#include "attn/mechanisms/convs2s.h"
#include "attn/models/seq2seq.h"
#include "beam_search.h"
#include "layers.h"

#include <vector>

namespace attn::models {

namespace bundled {

// ConvS2S (MODELS.md section 1, "ConvS2S"), every size d. Convolution taps as mechanisms/convs2s.h has them:
// a centred tap t reads position i + t - k / 2, a causal one i - t; each is d x 2d (torch's weight[:, :, t]
// transposed; the causal taps reversed).
struct ConvS2SParts {
  Matrix source_embedding, source_positions;  // [Vs, d], [max_source_length, d]
  std::vector<GatedConv> encoder;             // centred
  Matrix target_embedding, target_positions;  // [Vt, d], [max_target_length, d]
  struct Layer {
    GatedConv conv;         // causal
    Matrix attention_t;     // [d, d]: q = o W^T + b + g
    RowVector attention_b;  // [d]
  };
  std::vector<Layer> decoder;
  Matrix out_t;     // [d, Vt]
  RowVector out_b;  // [Vt]
};

// The speech model's encoder (MODELS.md section 6) and its location filters.
struct SpeechParts {
  RowVector mean, inverse_std;       // [bands]: frames are (x - mean) * inverse_std
  std::vector<BiGruWeights> layers;  // bidirectional GRU layers over the stacked frames
  Matrix location_t;                 // [width, a]: (L F)^T, the filters and their projection in one
};

}  // namespace bundled

struct Seq2SeqModel::Impl {
  Seq2SeqConfig config;
  bundled::VocabMap source_index;
  std::int64_t parameters = 0;
  std::vector<std::string> warnings;

  // Encoder.
  Matrix source_embedding;  // [Vs, e]
  bundled::BiGruWeights encoder;
  Matrix init_t;     // [2h, d]
  RowVector init_b;  // [d]

  // Decoder GRU cell. Its input is [emb(y) ; c_t] (Bahdanau) or [emb(y) ; h~_{t-1}] (Luong): the
  // embedding half of x W_ih^T + b_ih is a per-token table, the other half a product per step.
  bundled::GruWeights cell;
  Matrix embedding_gates;  // [Vt, 3d]
  Matrix feed_gates_t;     // [2h, 3d] (Bahdanau: c_t) or [d, 3d] (Luong: h~)

  // Attention.
  Matrix query_t;      // additive: W^T [d, a]; concat: the s_t columns of W, transposed [d, a]
  Matrix key_t;        // additive: U^T [2h, a]; concat: the H_j columns of W, transposed [2h, a];
                       // general: W^T [2h, d] (keys W H_j, so score_j = s_t . (W H_j))
  RowVector v;         // [a] (additive, concat)
  LocalWeights local;  // Wp [a, d], vp [a]

  // Luong: h~ = tanh(W_c [c ; s]).
  Matrix combine_c_t;  // [2h, d]
  Matrix combine_s_t;  // [d, d]

  // Output layer. Bahdanau: logits = s W_s + c W_c + table[y]; Luong: logits = h~ W + b.
  Matrix out_state_t;    // [d, Vt] (Luong: h~)
  Matrix out_context_t;  // [2h, Vt] (Bahdanau)
  Matrix out_embedding;  // [Vt, Vt] (Bahdanau: emb(y) W_e^T + b for each previous token y)
  RowVector out_b;       // [Vt] (Luong)

  // ConvS2S (every other member above stays empty).
  bundled::ConvS2SParts convs2s;
  // A speech model: its encoder (source_embedding and encoder stay empty) and location filters.
  bundled::SpeechParts speech;
};

// The runner's buffers; Seq2SeqRunner::Scratch is this (a private name the helpers below cannot use).
struct Seq2SeqBuffers {
  bundled::GruScratch gru;
  Matrix embedded;  // [S, e]
  Matrix H;         // [S, 2h] annotations
  Matrix keys;      // U H [S, a], the concat key half [S, a], or W H [S, d]

  // Live hypotheses, one row each; *_next are the rows being gathered for the next step.
  Matrix state, state_next;  // s [k, d]
  Matrix feed, feed_next;    // Luong h~ [k, d]

  Matrix query;      // [k, a]
  Matrix tanh_rows;  // [S, a]
  Matrix alpha;      // [k, S]
  Matrix context;    // [k, 2h]
  Matrix gi, gh;     // [k, 3d]
  Matrix logits;     // [k, Vt] -> log-softmax
  Vector positions;  // local-p: [k]

  // The search, and per node of its tree the attention row (and p_t) of the step that emitted it.
  // ConvS2S: the encoder's output z and the values z + e [S, d]; per step g, h, the convolution's input
  // rows, its output [k, 2d], o, the query [k, d]. `state` holds each hypothesis' layer inputs, [k, L T d].
  Matrix z, values, g, h, tap_rows, conv, o, query_c;
  // A speech model: the stacked frames, one layer's output, the windows of the previous alignment [S, width].
  Matrix layer_out, windows;

  AttentionShaping shaping;  // this run's (DecodeOptions::shaping)
  std::vector<Index> order;  // top-k's candidates

  bundled::BeamSearch search;
  std::vector<float> rows;  // nodes x S (ConvS2S: nodes x L S)
  std::vector<float> node_positions;
  std::vector<int> path;
};

namespace bundled {
// The GRU decoders' s_0 = tanh(W_init [fwd_{S-1} ; bwd_0] + b) from s.H, into s.state's row 0.
void initial_state(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s);
}  // namespace bundled

namespace bundled::convs2s {

// The tensors of a ConvS2S config into m.convs2s (MODELS.md's names and shapes).
Result<void> read(Seq2SeqModel::Impl& m, TensorReader& r);
// z and the values of the source ids.
void encode(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, const std::vector<int>& ids);
// Step t (the ids emitted so far) for the first B alive rows: each layer's attention row into s.alpha's columns
// [l S, (l + 1) S), the layers' inputs into s.state at position t, the logits into s.logits.
void step(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, Index B, int t);

}  // namespace bundled::convs2s

namespace bundled::speech {

// "attention": "location": the keys of a speech model's config.json into c.
Result<Seq2SeqConfig> read_config(const ConfigKeys& k, Seq2SeqConfig c);
// The encoder's tensors and the location filters (the decoder is Bahdanau's, read by seq2seq.cpp).
Result<void> read(Seq2SeqModel::Impl& m, TensorReader& r);
// H of the frames [S stack, bands] (already cut to whole steps), s_0 into s.state's row 0.
void encode(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, const Matrix& frames);
// The additive score with the location term for the first B rows: s.alpha(b, j) = v . tanh(query_b + keys_j +
// (F * s.feed_b)_j L^T), s.feed holding each hypothesis' previous alignment.
void scores(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, Index B);
// The scores in s.alpha's first B rows into weights, as s.shaping says (the defaults: the softmax), each row's
// window around the median of its previous alignment in s.feed.
void weights(Seq2SeqBuffers& s, Index B);

}  // namespace bundled::speech

}  // namespace attn::models
