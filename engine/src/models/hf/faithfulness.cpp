// Deletion and insertion curves and their areas (attn/models/faithfulness.h).
#include "attn/models/faithfulness.h"

#include "../../core/try.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attn::models {

namespace {

struct Setup {
  int position = 0;
  int token = 0;
  std::vector<int> ranked;  // removable positions, highest score first
  int replacement = -1;     // Replace only
  std::string removal;
};

// The id a removed token is replaced by, and why that one.
Result<std::pair<int, std::string>> replacement_for(const TransformerModel& model, int forced) {
  const TransformerConfig& c = model.config();
  const text::Tokenizer* tok = model.tokenizer();
  auto described = [&](int id, const std::string& why) {
    const std::string text = tok ? std::string(tok->token(id)) : std::to_string(id);
    return std::pair<int, std::string>{id, "replaced by " + text + " (id " + std::to_string(id) + "; " + why + ")"};
  };
  if (forced >= 0) {
    if (forced >= c.vocab_size)
      return fail(ErrorKind::OutOfRange, "faithfulness: replacement id " + std::to_string(forced) +
                                             " is out of the model's " + std::to_string(c.vocab_size) + " tokens");
    return described(forced, "as asked");
  }
  if (!tok)
    return fail(ErrorKind::Unsupported,
                "faithfulness: the model has no tokenizer, so no token to replace with; give "
                "the replacement id");
  const text::SpecialTokens& sp = tok->specials();
  const bool bert = c.family == Family::Bert || c.family == Family::DistilBert;
  if (bert && sp.mask) return described(*sp.mask, "the tokenizer's mask token");
  if (sp.pad) return described(*sp.pad, "the tokenizer's pad token");
  if (sp.unk) return described(*sp.unk, "the tokenizer's unknown token, it has no pad token");
  if (sp.eos) return described(*sp.eos, "the end-of-text token, as transformers pads GPT-2; no pad or unknown token");
  if (!c.decoder.eos.empty() && c.decoder.eos.front() >= 0 && c.decoder.eos.front() < c.vocab_size)
    return described(c.decoder.eos.front(),
                     "config.json's eos_token_id, as transformers pads GPT-2; the tokenizer "
                     "has no pad, unknown or end-of-text token");
  return fail(ErrorKind::Unsupported,
              "faithfulness: the tokenizer has no pad, unknown or end-of-text token to "
              "replace with; give the replacement id");
}

// The probability of `token` at `position` for `ids` (type ids alongside when given).
Result<double> probability(TransformerRunner& runner, const std::vector<int>& ids, const std::vector<int>& type_ids,
                           int position, int token, const std::atomic<bool>* cancel) {
  RunOptions o;
  o.top_k = 0;
  o.logits_position = position;
  o.cancel = cancel;
  ATTN_LET(run, runner.run_ids(ids, type_ids, o));
  if (run.logits.rows() < 1 || run.logits_from != position)
    return fail(ErrorKind::Unsupported, "faithfulness: the run kept no logits at position " + std::to_string(position));
  const auto row = run.logits.row(0);
  const double top = row.maxCoeff();
  double sum = 0;
  for (Index j = 0; j < row.size(); ++j) sum += std::exp(static_cast<double>(row(j)) - top);
  return std::exp(static_cast<double>(row(token)) - top) / sum;
}

Result<Setup> setup(TransformerRunner& runner, const TransformerRun& run, std::span<const float> scores,
                    const FaithfulnessOptions& options) {
  const TransformerModel& model = runner.model();
  const TransformerConfig& c = model.config();
  if (c.family == Family::Vit)
    return fail(ErrorKind::Unsupported, "faithfulness: text models only (ViT's patches are not removed here)");
  if (!model.has_prediction_head())
    return fail(ErrorKind::Unsupported, "faithfulness: the model has no prediction head, so no probability to follow");
  const int n = static_cast<int>(run.ids.size());
  if (n == 0) return fail(ErrorKind::OutOfRange, "faithfulness: the run has no tokens");
  if (static_cast<int>(scores.size()) != n)
    return fail(ErrorKind::Mismatch, "faithfulness: the ranking has " + std::to_string(scores.size()) + " scores for " +
                                         std::to_string(n) + " tokens");
  for (std::size_t i = 0; i < scores.size(); ++i)
    if (!std::isfinite(scores[i]))
      return fail(ErrorKind::OutOfRange, "faithfulness: score " + std::to_string(i) + " is not finite");
  Setup s;
  const text::Tokenizer* tok = model.tokenizer();
  s.position = options.position;
  if (s.position < 0) {
    if (c.causal()) {
      s.position = n - 1;
    } else {
      const auto mask = tok && tok->specials().mask ? std::find(run.ids.begin(), run.ids.end(), *tok->specials().mask)
                                                    : run.ids.end();
      if (mask == run.ids.end())
        return fail(ErrorKind::OutOfRange,
                    "faithfulness: the input has no [MASK] token, so there is no prediction "
                    "to follow; add one or give the position");
      s.position = static_cast<int>(mask - run.ids.begin());
    }
  }
  if (s.position >= n)
    return fail(ErrorKind::OutOfRange, "faithfulness: position " + std::to_string(s.position) +
                                           " is out of range (0 .. " + std::to_string(n - 1) + ")");
  if (options.token >= c.vocab_size)
    return fail(ErrorKind::OutOfRange, "faithfulness: token " + std::to_string(options.token) +
                                           " is out of the model's " + std::to_string(c.vocab_size) + " tokens");
  if (options.steps < 0)
    return fail(ErrorKind::OutOfRange, "faithfulness: steps " + std::to_string(options.steps) + " is negative");
  s.token = options.token;
  if (s.token < 0) {
    RunOptions o;
    o.top_k = 0;
    o.logits_position = s.position;
    ATTN_LET(full, runner.run_ids(run.ids, run.type_ids, o));
    if (full.logits.rows() < 1)
      return fail(ErrorKind::Unsupported,
                  "faithfulness: the run kept no logits at position " + std::to_string(s.position));
    Index best = 0;
    full.logits.row(0).maxCoeff(&best);
    s.token = static_cast<int>(best);
  }

  std::vector<bool> fixed(static_cast<std::size_t>(n), false);
  fixed[static_cast<std::size_t>(s.position)] = true;
  for (const int p : run.special_positions)
    if (p >= 0 && p < n) fixed[static_cast<std::size_t>(p)] = true;
  if (tok) {
    const auto& sp = tok->specials();
    for (int i = 0; i < n; ++i) {
      const int id = run.ids[static_cast<std::size_t>(i)];
      if (id == sp.cls || id == sp.sep || id == sp.bos) fixed[static_cast<std::size_t>(i)] = true;
    }
  }
  if (c.causal())
    for (int i = s.position + 1; i < n; ++i) fixed[static_cast<std::size_t>(i)] = true;
  s.ranked = rank_removable(scores, fixed);

  if (options.removal == FaithfulnessOptions::Removal::Replace) {
    ATTN_LET(r, replacement_for(model, options.replacement));
    s.replacement = r.first;
    s.removal = std::move(r.second);
  } else {
    s.removal = "deleted";
  }
  return s;
}

Result<FaithfulnessCurve> curve(TransformerRunner& runner, const TransformerRun& run, std::span<const float> scores,
                                const FaithfulnessOptions& options, bool insertion) {
  ATTN_LET(s, setup(runner, run, scores, options));
  FaithfulnessCurve out;
  out.insertion = insertion;
  out.position = s.position;
  out.token = s.token;
  out.ranked = s.ranked;
  out.replacement = s.replacement;
  out.removal = s.removal;
  out.k = curve_points(static_cast<int>(s.ranked.size()), options.steps);
  const std::size_t n = run.ids.size();
  std::vector<int> ids, types;
  const auto probability_without = [&](const std::vector<bool>& removed) -> Result<double> {
    ids.clear();
    types.clear();
    int position = s.position;
    for (std::size_t i = 0; i < n; ++i) {
      if (removed[i] && s.replacement < 0) {
        if (static_cast<int>(i) < s.position) --position;
        continue;
      }
      ids.push_back(removed[i] ? s.replacement : run.ids[i]);
      if (!run.type_ids.empty()) types.push_back(run.type_ids[i]);
    }
    return probability(runner, ids, types, position, s.token, options.cancel);
  };
  ATTN_ASSIGN(out.probability, curve_probabilities(out.ranked, out.k, static_cast<int>(n), insertion,
                                                   probability_without, options.cancel));
  return out;
}

}  // namespace

std::vector<int> rank_removable(std::span<const float> scores, const std::vector<bool>& fixed) {
  std::vector<int> ranked;
  for (std::size_t i = 0; i < scores.size(); ++i)
    if (i >= fixed.size() || !fixed[i]) ranked.push_back(static_cast<int>(i));
  std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) {
    return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
  });
  return ranked;
}

std::vector<int> curve_points(int K, int steps) {
  std::vector<int> k;
  if (steps <= 0 || steps >= K) {
    k.resize(static_cast<std::size_t>(K + 1));
    std::iota(k.begin(), k.end(), 0);
    return k;
  }
  for (int i = 0; i <= steps; ++i) {
    const int v = static_cast<int>(std::lround(static_cast<double>(i) * K / steps));
    if (k.empty() || k.back() != v) k.push_back(v);
  }
  return k;
}

Result<std::vector<double>> curve_probabilities(const std::vector<int>& ranked, const std::vector<int>& k, int n,
                                                bool insertion, const RemovedProbability& probability,
                                                const std::atomic<bool>* cancel) {
  std::vector<double> out;
  std::vector<bool> removed(static_cast<std::size_t>(n));
  for (const int points : k) {
    if (cancel && cancel->load()) return fail(ErrorKind::Cancelled, "faithfulness: cancelled");
    std::fill(removed.begin(), removed.end(), false);
    if (insertion) {
      // Everything that may be removed is, except the top k.
      for (std::size_t r = static_cast<std::size_t>(points); r < ranked.size(); ++r)
        removed[static_cast<std::size_t>(ranked[r])] = true;
    } else {
      for (int r = 0; r < points; ++r) removed[static_cast<std::size_t>(ranked[static_cast<std::size_t>(r)])] = true;
    }
    ATTN_LET(p, probability(removed));
    out.push_back(p);
  }
  return out;
}

Result<FaithfulnessCurve> deletion_curve(TransformerRunner& runner, const TransformerRun& run,
                                         std::span<const float> scores, const FaithfulnessOptions& options) {
  return curve(runner, run, scores, options, false);
}

Result<FaithfulnessCurve> insertion_curve(TransformerRunner& runner, const TransformerRun& run,
                                          std::span<const float> scores, const FaithfulnessOptions& options) {
  return curve(runner, run, scores, options, true);
}

double deletion_aopc(std::span<const double> probability) {
  if (probability.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (const double p : probability) sum += probability.front() - p;
  return sum / static_cast<double>(probability.size());
}

double insertion_area(std::span<const double> probability) {
  if (probability.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(probability.begin(), probability.end(), 0.0) / static_cast<double>(probability.size());
}

double aopc(const FaithfulnessCurve& curve) {
  return curve.insertion ? insertion_area(curve.probability) : deletion_aopc(curve.probability);
}

}  // namespace attn::models
