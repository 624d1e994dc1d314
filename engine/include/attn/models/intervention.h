// Causal analysis on a transformer: head ablation, activation patching between a clean and a corrupted input,
// the metrics that measure them and the sweeps over every head, layer and position (TransformerLens's
// conventions; tools/parity/interventions_torch.py is the reference written from the same definitions).
//
//   Head ablation: z of head (l, h) replaced at every position by 0 (Zero), by its mean over the run's positions
//     (Mean: taken over the z the ablated run itself computes at layer l), or by the same head's z in a second
//     input's run of the same token count (Resample).
//   Patching: a run of the corrupted input in which one activation is the clean run's: resid_pre of layer l at
//     position p; z of head (l, h) at every position or at p; attn_out or mlp_out of layer l at p.
//   The measured logits: causal models at the last position unless one is given; BERT/DistilBERT at a chosen
//     ([MASK]) position; ViT the classifier's.
//   Metrics: logit = logits[answer]; logprob = log_softmax(logits)[answer]; logit_diff = logits[answer] -
//     logits[wrong]; kl = KL(P_clean || P_run) (natural log). A patch's normalised recovery is
//     (metric(patched) - metric(corrupted)) / (metric(clean) - metric(corrupted)); for kl metric(clean) = 0.
// A sweep's cells are re-runs of the corrupted run (TransformerRunner::rerun_cells): nothing before the patched layer
// (nor, in a decoder, before the patched position) is recomputed, and a decoder runs its cells in batches, their rows
// stacked into one product per weight and layer.
#pragma once

#include "attn/models/transformer.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::models {

enum class Metric { Logit, LogProb, LogitDiff, KL };
// "logit", "logprob", "logit-diff", "kl".
std::optional<Metric> parse_metric(std::string_view name);
const char* metric_name(Metric metric);

struct MetricSpec {
  Metric kind = Metric::LogitDiff;
  int answer = -1;  // token id (ViT: class index); every metric but kl
  int wrong = -1;   // logit-diff only
};
// The metric of `logits` (one row of the measured position); `clean` is the clean run's row (kl).
double metric_value(const MetricSpec& metric, const RowVector& logits, const RowVector& clean);
// The measured row of a run's logits: RunOptions::logits_position's (or the family's own) row.
Result<RowVector> measured_logits(const TransformerRun& run, int position);

enum class AblationMode { Zero, Mean, Resample };
std::optional<AblationMode> parse_ablation_mode(std::string_view name);  // "zero", "mean", "resample"
const char* ablation_mode_name(AblationMode mode);

struct HeadRef {
  int layer = 0, head = 0;
  bool operator==(const HeadRef&) const = default;
};
// "L.H[,L.H...]" (indices from 0), checked against the model's layers and heads; the error names the item.
Result<std::vector<HeadRef>> parse_heads(std::string_view text, const TransformerConfig& config);
// The edits that ablate `heads`: Resample takes `source` (the second input's activations, same token count).
std::vector<Edit> ablation_edits(const std::vector<HeadRef>& heads, AblationMode mode,
                                 const Activations* source = nullptr);

enum class Sweep {
  Heads,             // z of each head, every position: [layers][heads]
  HeadsPositions,    // z of each head at each position: [layers][heads][positions]
  LayersPositions,   // resid_pre of each layer at each position: [layers][positions]
  AttnOutPositions,  // attn_out of each layer at each position: [layers][positions]
  MlpOutPositions,   // mlp_out of each layer at each position: [layers][positions]
};
// "heads", "heads-positions", "layers-positions", "attn-out-positions", "mlp-out-positions".
std::optional<Sweep> parse_sweep(std::string_view name);
const char* sweep_name(Sweep sweep);

struct SweepCell {
  int layer = 0, head = -1, position = -1;  // -1: not a dimension of this sweep
};

struct SweepResult {
  Sweep kind = Sweep::Heads;
  int layers = 0, heads = 1, positions = 1;  // heads 1 when not a dimension, positions likewise
  std::vector<double> values;                // recovery, [layer][head][position]; NaN until computed
  int done = 0;                              // cells computed
  double at(int layer, int head, int position) const {
    return values[(static_cast<std::size_t>(layer) * heads + head) * positions + position];
  }
};

// A clean and a corrupted run of the same token count, captured (RunOptions::capture) with the measured position's
// logits, and the metric: what every patch of a sweep is measured against.
class Patching {
 public:
  // Refused: runs without activations, different token counts (both said), a metric without its tokens or with ids
  // outside the logits, a metric the two runs do not tell apart (nothing to recover).
  static Result<Patching> make(TransformerRun clean, TransformerRun corrupt, const MetricSpec& metric, int position);

  const TransformerRun& clean() const { return clean_; }
  const TransformerRun& corrupt() const { return corrupt_; }
  const MetricSpec& metric() const { return metric_; }
  int position() const { return position_; }  // the measured position
  double clean_metric() const { return clean_metric_; }
  double corrupt_metric() const { return corrupt_metric_; }
  int tokens() const;

  // The edit that patches `cell` of `sweep` with the clean run's values.
  Edit edit(Sweep sweep, const SweepCell& cell) const;
  // The metric of the corrupted run with `edits`, and the normalised recovery of that value.
  Result<double> metric_with(TransformerRunner& runner, const std::vector<Edit>& edits,
                             const std::atomic<bool>* cancel = nullptr) const;
  double recovery(double metric) const;

  // Every cell of `sweep` (layer-major), one re-run each; `on_cell` after each (the cell, its recovery, the result so
  // far) may stop the sweep by returning false, as may `cancel` (read between cells and between the layers of one):
  // the result then holds the cells done.
  Result<SweepResult> sweep(TransformerRunner& runner, Sweep sweep,
                            const std::function<bool(const SweepCell&, double, const SweepResult&)>& on_cell = {},
                            const std::atomic<bool>* cancel = nullptr) const;

 private:
  Patching() = default;
  TransformerRun clean_, corrupt_;
  MetricSpec metric_;
  int position_ = -1;
  RowVector clean_logits_;
  double clean_metric_ = 0, corrupt_metric_ = 0;
};

}  // namespace attn::models
