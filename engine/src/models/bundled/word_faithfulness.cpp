// Deletion and insertion curves for the bundled word models (attn/models/word_faithfulness.h).
#include "attn/models/word_faithfulness.h"

#include "layers.h"
#include "../../core/try.h"

#include <cmath>
#include <string>

namespace attn::models {

namespace {

// The checks every word-model curve makes; the label followed.
Result<int> check_word_curve(std::size_t words, std::span<const float> scores, const std::vector<float>& probabilities,
                             int predicted, const WordFaithfulnessOptions& options) {
  if (words == 0) return fail(ErrorKind::OutOfRange, "faithfulness: the run has no words");
  if (scores.size() != words)
    return fail(ErrorKind::Mismatch, "faithfulness: the ranking has " + std::to_string(scores.size()) + " scores for " +
                                         std::to_string(words) + " words");
  for (std::size_t i = 0; i < scores.size(); ++i)
    if (!std::isfinite(scores[i]))
      return fail(ErrorKind::OutOfRange, "faithfulness: score " + std::to_string(i) + " is not finite");
  if (options.steps < 0)
    return fail(ErrorKind::OutOfRange, "faithfulness: steps " + std::to_string(options.steps) + " is negative");
  const int labels = static_cast<int>(probabilities.size());
  if (options.label < -1 || options.label >= labels)
    return fail(ErrorKind::OutOfRange, "faithfulness: label " + std::to_string(options.label) +
                                           " is out of range (0 .. " + std::to_string(labels - 1) + ")");
  return options.label < 0 ? predicted : options.label;
}

// The curve over `n` words, `removable` of them (the first ones) rankable; `probability` re-runs the model.
Result<FaithfulnessCurve> word_curve(std::span<const float> scores, int n, int removable, int label, bool insertion,
                                     const WordFaithfulnessOptions& options, const RemovedProbability& probability) {
  FaithfulnessCurve out;
  out.insertion = insertion;
  out.position = -1;
  out.token = label;
  std::vector<bool> fixed(static_cast<std::size_t>(n), false);
  for (int i = removable; i < n; ++i) fixed[static_cast<std::size_t>(i)] = true;
  out.ranked = rank_removable(scores, fixed);
  out.replacement = bundled::kUnknownId;
  out.removal = "replaced by <unk> (id " + std::to_string(bundled::kUnknownId) + "; the models' unknown word)";
  out.k = curve_points(static_cast<int>(out.ranked.size()), options.steps);
  ATTN_ASSIGN(out.probability, curve_probabilities(out.ranked, out.k, n, insertion, probability, options.cancel));
  return out;
}

// `ids` with the flagged ones (from `offset` on in `removed`) replaced by <unk>.
std::vector<int> unknown_where_removed(const std::vector<int>& ids, const std::vector<bool>& removed,
                                       std::size_t offset) {
  std::vector<int> out = ids;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (removed[offset + i]) out[i] = bundled::kUnknownId;
  return out;
}

Result<FaithfulnessCurve> classifier_curve(ClassifierRunner& runner, const ClassifierRun& run,
                                           std::span<const float> scores, const WordFaithfulnessOptions& options,
                                           bool insertion) {
  ATTN_LET(label, check_word_curve(run.ids.size(), scores, run.probabilities, run.predicted, options));
  const auto probability = [&](const std::vector<bool>& removed) -> Result<double> {
    ATTN_LET(r, runner.run_ids(run.input, unknown_where_removed(run.ids, removed, 0)));
    if (r.probabilities.size() != run.probabilities.size())
      return fail(ErrorKind::Mismatch, "faithfulness: the run is of a model with another number of labels");
    return static_cast<double>(r.probabilities[static_cast<std::size_t>(label)]);
  };
  const int n = static_cast<int>(run.ids.size());
  return word_curve(scores, n, n, label, insertion, options, probability);
}

Result<FaithfulnessCurve> entailment_curve(EntailmentRunner& runner, const EntailmentRun& run,
                                           std::span<const float> scores, const WordFaithfulnessOptions& options,
                                           bool insertion) {
  const std::size_t premise = run.premise_ids.size();
  ATTN_LET(label,
           check_word_curve(premise + run.hypothesis_ids.size(), scores, run.probabilities, run.predicted, options));
  const auto probability = [&](const std::vector<bool>& removed) -> Result<double> {
    ATTN_LET(r, runner.run_ids(run.premise, run.hypothesis, unknown_where_removed(run.premise_ids, removed, 0),
                               unknown_where_removed(run.hypothesis_ids, removed, premise)));
    if (r.probabilities.size() != run.probabilities.size())
      return fail(ErrorKind::Mismatch, "faithfulness: the run is of a model with another number of labels");
    return static_cast<double>(r.probabilities[static_cast<std::size_t>(label)]);
  };
  const int n = static_cast<int>(scores.size());
  return word_curve(scores, n, options.premise_only ? static_cast<int>(premise) : n, label, insertion, options,
                    probability);
}

}  // namespace

Result<FaithfulnessCurve> deletion_curve(ClassifierRunner& runner, const ClassifierRun& run,
                                         std::span<const float> scores, const WordFaithfulnessOptions& options) {
  return classifier_curve(runner, run, scores, options, false);
}

Result<FaithfulnessCurve> insertion_curve(ClassifierRunner& runner, const ClassifierRun& run,
                                          std::span<const float> scores, const WordFaithfulnessOptions& options) {
  return classifier_curve(runner, run, scores, options, true);
}

Result<FaithfulnessCurve> deletion_curve(EntailmentRunner& runner, const EntailmentRun& run,
                                         std::span<const float> scores, const WordFaithfulnessOptions& options) {
  return entailment_curve(runner, run, scores, options, false);
}

Result<FaithfulnessCurve> insertion_curve(EntailmentRunner& runner, const EntailmentRun& run,
                                          std::span<const float> scores, const WordFaithfulnessOptions& options) {
  return entailment_curve(runner, run, scores, options, true);
}

}  // namespace attn::models
