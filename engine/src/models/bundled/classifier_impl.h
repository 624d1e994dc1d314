// The classifiers' weights and the pieces of their forward pass that classifier.cpp (the runs) and
// classifier_backward.cpp (attribution, which differentiates the same forward) share. Internal to
// engine/models.
#pragma once

#include "attn/mechanisms/pooling.h"
#include "attn/models/classifier.h"
#include "layers.h"

#include <vector>

namespace attn::models {

struct ClassifierModel::Impl {
  ClassifierConfig config;
  bundled::VocabMap index;
  std::int64_t parameters = 0;
  std::vector<std::string> warnings;

  Matrix embedding;                 // [V, e]
  bundled::BiGruWeights words;      // e -> h (flat: the only encoder)
  PoolingWeights word_pool;         // W [a, 2h], b [a], w [r, a]
  bundled::BiGruWeights sentences;  // hierarchical: r 2h -> h
  PoolingWeights sentence_pool;     // hierarchical: w [1, a]
  bundled::LstmWeights lstm;        // LSTM: e -> h (gates i, f, g, o)
  Matrix conv_t;                    // CNN: [kernel e, channels], row (tap, input channel)
  RowVector conv_b;                 // CNN: [channels]
  Matrix classifier_t;              // [r 2h (flat), 2h (hierarchical), h (LSTM), channels (CNN); labels]
  RowVector classifier_b;
};

namespace classifier_forward {

// The rows of the embedding for `ids`: out [n, e].
void embed(const ClassifierModel::Impl& m, const std::vector<int>& ids, Matrix& out);

// One past the last word of sentence k, whose first word is `begin` (the words of a sentence are
// consecutive).
Index sentence_end(const std::vector<int>& sentence, Index begin, int k);

// The LSTM over the rows of `embedded` from zero states: `pre` [n, 4H] gets every step's pre-activations
// (input and recurrent halves and both biases; gates i, f, g, o), `cells` [n, H] (when given) every
// step's cell state. Returns the last hidden state.
RowVector lstm(const ClassifierModel::Impl& m, const MatrixCRef& embedded, Matrix& pre, Matrix* cells);

// The CNN's windows, row p the `kernel` embeddings around word p (zero outside the text): [n, kernel e].
void cnn_windows(const MatrixCRef& embedded, Index kernel, Matrix& windows);
// The convolution and ReLU of the windows, as [channels, words].
Matrix cnn_activations(const ClassifierModel::Impl& m, const Matrix& windows);
// Global max pooling over the words: every channel's maximum, and its winner (the first position that
// takes it).
RowVector cnn_max_pool(const Matrix& activations, std::vector<int>& winners);

}  // namespace classifier_forward

}  // namespace attn::models
