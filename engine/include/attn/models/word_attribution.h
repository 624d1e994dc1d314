// Attribution for the bundled word models (the review classifiers of attn/models/classifier.h and the entailment
// model of attn/models/entailment.h): which input words a label's logit depends on, from a hand-written backward
// pass through the model's own forward (embedding -> recurrent or convolutional encoder -> attention -> classifier).
//
// The scalar explained is one label's logit (before the softmax). Scores are per word, in the run's word order
// (after truncation), summed over the embedding's dimensions:
//   gradient x input:      x_i . dF/dx_i at the input;
//   integrated gradients:  x_i . mean over steps of dF/dx at alpha x (alpha = (s + 1/2) / steps, the midpoint rule),
//                          from the zero embedding (every word's vector 0), so that the scores sum to about
//                          F(x) - F(0) (the gap says how far they miss).
// Unknown words (<unk>) are attributed like any other: their embedding is the <unk> row.
#pragma once

#include "attn/core.h"

#include <atomic>
#include <string>
#include <vector>

namespace attn::models {

enum class WordAttributionMethod { GradientXInput, IntegratedGradients };

// "grad-x-input", "integrated-gradients" (the names of attn/models/attribution.h's methods).
inline std::string word_method_name(WordAttributionMethod method) {
  return method == WordAttributionMethod::GradientXInput ? "grad-x-input" : "integrated-gradients";
}

struct WordAttributionOptions {
  WordAttributionMethod method = WordAttributionMethod::GradientXInput;
  int label = -1;  // the label whose logit is explained; -1: the run's prediction
  int steps = 32;  // integrated gradients: 1 .. 1024
  const std::atomic<bool>* cancel = nullptr;
};

struct WordAttribution {
  int label = 0;
  float value = 0;           // the label's logit at the input
  float baseline_value = 0;  // integrated gradients: the logit at the zero embedding (else 0)
  float gap = 0;             // integrated gradients: sum of all scores - (value - baseline_value) (else 0)
  // Classifiers: one score per word of ClassifierRun::input. Entailment: the premise's words, then the
  // hypothesis's (premise_words says where the hypothesis starts).
  Vector scores;
  int premise_words = 0;  // entailment only
};

}  // namespace attn::models
