#include "workbenches/transformer/transformer_attribution_job.h"

#include "attn/models/faithfulness.h"

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

// The deletion curve of this input (models::deletion_curve: the top-k tokens replaced, or deleted where the
// tokenizer has no token to replace with; the explained position and the special tokens never removed), at most
// kDeletionSteps + 1 points.
Result<DeletionCurve> deletionCurve(am::TransformerRunner& runner, const am::TransformerRun& run,
                                    const am::Attribution& a, const std::atomic<bool>* cancel) {
  am::FaithfulnessOptions o;
  o.position = a.position;
  o.token = a.token;
  o.steps = kDeletionSteps;
  o.cancel = cancel;
  auto curve = am::deletion_curve(runner, run, a.scores, o);
  if (!curve) {
    if (curve.error().kind != ErrorKind::Unsupported) return std::unexpected(curve.error());
    o.removal = am::FaithfulnessOptions::Removal::Delete;  // no token to replace with
    curve = am::deletion_curve(runner, run, a.scores, o);
    if (!curve) return std::unexpected(curve.error());
  }
  return DeletionCurve{std::move(curve->k), std::move(curve->probability), std::move(curve->removal)};
}

}  // namespace

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
    progress(kMethodPart, kBar);
    auto curve = deletionCurve(runner, *run, *a, cancel);
    if (!curve) return std::unexpected(curve.error());
    result.deletion = std::move(*curve);
  }
  result.attribution = std::move(*a);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  progress(kBar, kBar);
  return result;
}

}  // namespace attn::ui
