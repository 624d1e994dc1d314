// The entailment model's weights and its forward pass from embedded words, shared by entailment.cpp (config,
// loading, EntailmentRunner::run) and entailment_backward.cpp (attribute_words, whose backward pass reads what
// the forward records on a tape). Internal to engine/models.
#pragma once

#include "attn/models/entailment.h"
#include "layers.h"

#include <vector>

namespace attn::models {

struct EntailmentModel::Impl {
  EntailmentConfig config;
  bundled::VocabMap index;
  std::int64_t parameters = 0;
  std::vector<std::string> warnings;

  Matrix embedding;                          // [V, e]
  bundled::LstmWeights premise, hypothesis;  // e -> k
  Matrix W_y_t, W_h_t, W_r_t, W_t_t;         // [k, k], transposed (x W^T = x * W_t)
  RowVector w;                               // [k]
  Matrix W_p_t, W_x_t;                       // [k, k]
  Matrix classifier_t;                       // [k, labels]
  RowVector classifier_b;                    // [labels]
};

namespace entailment {

// The forward's buffers, reused across runs (EntailmentRunner's scratch).
struct Buffers {
  Matrix gates, step;          // [n, 4k], [1, 4k]
  Matrix c, h;                 // [1, k]
  Matrix Y, H, Yw;             // [L, k], [N, k], [L, k]
  Matrix query, tanh_rows, r;  // [1, k], [L, k], [1, k]
  Matrix scores, recurrent;    // [1, L], [1, k]
};

// What a backward pass needs of a forward beyond Buffers' Y and H: every pre-activation and state the
// derivatives are taken at.
struct Tape {
  Matrix premise_gates, hypothesis_gates;  // the LSTMs' pre-activations per word [L, 4k], [N, 4k]
  Matrix premise_cells, hypothesis_cells;  // c after each word [L, k], [N, k]
  std::vector<Matrix> tanh_rows;           // M_t per hypothesis word [L, k]
  Matrix recurrent;                        // tanh(r_{t-1} W^t) per hypothesis word [N, k]
  Matrix r;                                // r_0 = 0, ..., r_N [N + 1, k]
  RowVector hstar;                         // [k]
};

// The words' rows of the embedding [n, e].
Matrix embed(const EntailmentModel::Impl& m, const std::vector<int>& ids);

// The forward pass of one pair from its embedded words (premise [L, e], hypothesis [N, e], L and N at least
// 1): the attention rows into `attention` [N, L], the labels' logits returned. With a tape, also what the
// backward pass reads; the numbers are the same either way.
RowVector forward(const EntailmentModel::Impl& m, const MatrixCRef& premise, const MatrixCRef& hypothesis, Buffers& s,
                  Matrix& attention, Tape* tape = nullptr);

}  // namespace entailment

}  // namespace attn::models
