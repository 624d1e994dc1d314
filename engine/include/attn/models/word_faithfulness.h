// Faithfulness of a word ranking for the bundled word models (the review classifiers of attn/models/classifier.h and
// the entailment model of attn/models/entailment.h): the deletion and insertion curves of attn/models/faithfulness.h,
// following the probability of one label instead of a next token.
//
// Removal replaces a word by <unk> (id 1): the models' unknown word, which training put in for 3% of its words, so
// "a word the model cannot read" is an input it has seen; the sentence structure (and the hierarchical model's
// sentences) stays. Every word is removable, in a pair the premise's and the hypothesis's alike unless only the
// premise's are asked for (the words the word-by-word attention weighs). Each point is one run of the perturbed ids
// (ClassifierRunner::run_ids, EntailmentRunner::run_ids) on the caller's runner. The curve's `position` is -1 and its
// `token` the label.
#pragma once

#include "attn/error.h"
#include "attn/models/classifier.h"
#include "attn/models/entailment.h"
#include "attn/models/faithfulness.h"

#include <atomic>
#include <span>

namespace attn::models {

struct WordFaithfulnessOptions {
  int label = -1;             // the label whose probability is followed; -1: the run's prediction
  int steps = 0;              // as FaithfulnessOptions::steps
  bool premise_only = false;  // entailment: remove premise words only (the hypothesis's scores are not read)
  const std::atomic<bool>* cancel = nullptr;
};

// `scores`: one per word of the run (the order of WordAttribution::scores: an entailment run's premise words, then
// its hypothesis words). Errors: scores of another length, a non-finite score, a label out of range, a run of
// another model (its ids out of this one's vocabulary).
Result<FaithfulnessCurve> deletion_curve(ClassifierRunner& runner, const ClassifierRun& run,
                                         std::span<const float> scores, const WordFaithfulnessOptions& options = {});
Result<FaithfulnessCurve> insertion_curve(ClassifierRunner& runner, const ClassifierRun& run,
                                          std::span<const float> scores, const WordFaithfulnessOptions& options = {});
Result<FaithfulnessCurve> deletion_curve(EntailmentRunner& runner, const EntailmentRun& run,
                                         std::span<const float> scores, const WordFaithfulnessOptions& options = {});
Result<FaithfulnessCurve> insertion_curve(EntailmentRunner& runner, const EntailmentRun& run,
                                          std::span<const float> scores, const WordFaithfulnessOptions& options = {});

}  // namespace attn::models
