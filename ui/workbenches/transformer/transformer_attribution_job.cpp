#include "workbenches/transformer/transformer_attribution_job.h"

#include "attn/text/tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace attn::ui {

namespace am = attn::models;

namespace {

// The probability of `token` in the run's logits row of `position` (the row it kept: RunOptions::logits_position).
double targetProbability(const am::TransformerRun& run, int position, int token) {
  if (run.logits.rows() == 0 || token < 0 || token >= run.logits.cols()) return std::nan("");
  const Index row = std::clamp<Index>(position - run.logits_from, 0, run.logits.rows() - 1);
  const auto logits = run.logits.row(row);
  const double top = logits.maxCoeff();
  double sum = 0;
  for (Index i = 0; i < logits.cols(); ++i) sum += std::exp(double(logits(i)) - top);
  return std::exp(double(logits(token)) - top) / sum;
}

// Row `position` of every head's map (layer-major); empty when the run kept no maps (attention on demand).
Matrix explainedAttentionRows(const am::TransformerRun& run, int position, int& layers, int& heads) {
  const auto& trace = run.attention;
  layers = int(trace.layers.size());
  heads = layers > 0 ? trace.layers.front().maps.heads() : 0;
  const Index n = Index(trace.tokens.size());
  if (layers == 0 || heads == 0 || position < 0 || position >= n) return {};
  Matrix rows = Matrix::Zero(Index(layers) * heads, n);
  for (int l = 0; l < layers; ++l) {
    const auto& maps = trace.layers[std::size_t(l)].maps;
    if (maps.precision() != Precision::F32 || maps.rows() <= position || maps.heads() != heads) return {};
    for (int h = 0; h < heads; ++h) {
      const float* row = maps.f32(h) + Index(position) * maps.cols();
      for (Index k = 0; k < std::min(n, maps.cols()); ++k) rows(Index(l) * heads + h, k) = row[k];
    }
  }
  return rows;
}

// k = 0 .. m, or kDeletionSteps + 1 points evenly spread over it.
std::vector<int> deletionStepCounts(int m) {
  std::vector<int> ks;
  if (m <= kDeletionSteps) {
    ks.resize(std::size_t(m) + 1);
    std::iota(ks.begin(), ks.end(), 0);
    return ks;
  }
  for (int i = 0; i <= kDeletionSteps; ++i) ks.push_back(int(std::lround(double(i) * m / kDeletionSteps)));
  return ks;
}

Result<DeletionCurve> deletionCurve(const AttributionJob& job, am::TransformerRunner& runner,
                                    const am::TransformerRun& run, const am::Attribution& a, double base,
                                    const std::atomic<bool>* cancel, const std::function<void(int)>& step) {
  const auto* tokenizer = job.model->tokenizer();
  const auto& specials = tokenizer->specials();
  // BERT reads a [MASK] as "unknown here"; a decoder's pad token (when its tokenizer has one) as little as any.
  std::optional<int> replacement = job.model->config().causal() ? specials.pad : specials.mask;
  if (!replacement) replacement = job.model->config().causal() ? specials.mask : specials.pad;
  DeletionCurve curve;
  curve.how = replacement ? "replaced by \u201c" + tokenizer->display(*replacement) + "\u201d" : "deleted";
  const auto order = deletionOrder(a.scores, a.position, run.special_positions);
  for (const int k : deletionStepCounts(int(order.size()))) {
    if (cancel && cancel->load()) return fail(ErrorKind::Cancelled, "attribution: cancelled");
    double p = base;
    if (k > 0) {
      std::vector<bool> gone(run.ids.size(), false);
      for (int j = 0; j < k; ++j) gone[std::size_t(order[std::size_t(j)])] = true;
      std::vector<int> ids, types;
      int position = a.position;
      for (std::size_t i = 0; i < run.ids.size(); ++i) {
        const int type = i < run.type_ids.size() ? run.type_ids[i] : 0;
        if (gone[i] && !replacement) {
          if (int(i) < a.position) --position;
          continue;
        }
        ids.push_back(gone[i] ? *replacement : run.ids[i]);
        types.push_back(type);
      }
      am::RunOptions options;
      options.top_k = 0;
      options.keep = am::RunOptions::Keep::Auto;
      options.logits_position = position;
      options.cancel = cancel;
      auto again = runner.run_ids(ids, run.type_ids.empty() ? std::vector<int>{} : types, options);
      if (!again) return std::unexpected(again.error());
      p = targetProbability(*again, position, a.token);
    }
    curve.removed.push_back(k);
    curve.probability.push_back(p);
    step(k);
  }
  return curve;
}

}  // namespace

std::vector<int> deletionOrder(const std::vector<float>& scores, int position, const std::vector<int>& keep) {
  std::vector<int> order;
  for (int i = 0; i < int(scores.size()); ++i) {
    if (i != position && std::find(keep.begin(), keep.end(), i) == keep.end()) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return scores[std::size_t(a)] > scores[std::size_t(b)]; });
  return order;
}

Result<AttributionResult> computeAttribution(const AttributionJob& job, const std::atomic<bool>* cancel,
                                             const std::function<void(int, int)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  am::TransformerRunner runner(job.model);
  am::RunOptions options;
  options.top_k = 0;
  options.keep = am::RunOptions::Keep::Auto;
  options.logits_position = job.target.position;
  options.cancel = cancel;
  const bool vision = job.image != nullptr;
  options.capture = vision;  // a ViT's backward starts from the captured embeddings
  auto run = vision ? runner.run_image(*job.image, options) : runner.run_ids(job.ids, job.type_ids, options);
  if (!run) return std::unexpected(run.error());
  // The method's own steps take the first 60 % of the bar, the deletion curve the rest.
  constexpr int kBar = 1000, kMethodPart = 600;
  auto attribute = job.options;
  attribute.cancel = cancel;
  attribute.progress = [&](int done, int of) { progress(of > 0 ? kMethodPart * done / of : 0, kBar); };
  auto a = am::attribute(*job.model, *run, job.target, attribute);
  if (!a) return std::unexpected(a.error());
  AttributionResult result;
  result.tokens = run->attention.tokens;
  result.attentionRows = explainedAttentionRows(*run, a->position, result.layers, result.heads);
  result.probability = targetProbability(*run, a->position, a->token);
  if (!job.deletion || vision || !job.model->tokenizer()) {
    result.deletionNote = vision ? "a photo has no tokens to remove" : "no tokenizer to replace tokens with";
  } else {
    const int n = int(run->ids.size());
    auto curve = deletionCurve(job, runner, *run, *a, result.probability, cancel,
                               [&](int k) { progress(kMethodPart + (kBar - kMethodPart) * k / std::max(1, n), kBar); });
    if (!curve) return std::unexpected(curve.error());
    result.deletion = std::move(*curve);
  }
  result.attribution = std::move(*a);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  progress(kBar, kBar);
  return result;
}

}  // namespace attn::ui
