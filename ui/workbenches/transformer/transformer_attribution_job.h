// What the Transformer tab's Attribution view computes on its worker thread (issue 44), without widgets: the tab's
// input run again (its ids, or a ViT's photo with RunOptions::capture), one attribution method for one target
// (attn::models::attribute), the attention row of the explained position for every head, and the deletion curve of
// this input: the top-k tokens of the method's ranking replaced by the pad or [MASK] token (deleted when the
// tokenizer has neither), k = 0 .. n in at most kDeletionSteps even steps, the target's probability re-measured.
#pragma once

#include "attn/error.h"
#include "attn/models/attribution.h"
#include "attn/models/transformer.h"
#include "attn/vision/image.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::ui {

inline constexpr int kDeletionSteps = 20;

// Copied from the GUI thread before the worker starts: every field a value or an immutable shared object.
struct AttributionJob {
  std::shared_ptr<const attn::models::TransformerModel> model;
  std::vector<int> ids, type_ids;            // text: the input (a generated step: the ids before its token)
  std::shared_ptr<const attn::Image> image;  // ViT
  attn::models::AttributionTarget target;    // position -1: the family's own
  attn::models::AttributeOptions options;    // cancel and progress are set by the worker
  bool deletion = true;                      // also the deletion curve (text models)
};

struct DeletionCurve {
  std::vector<int> removed;         // k: tokens replaced (or deleted)
  std::vector<double> probability;  // the target's probability after removing them
  std::string how;                  // "replaced by [MASK]", "deleted", ...
};

struct AttributionResult {
  attn::models::Attribution attribution;
  std::vector<std::string> tokens;  // the run's tokens, one per score
  int layers = 0, heads = 0;
  // [layers x heads, tokens]: row l * heads + h the attention of the explained position over the tokens in that head;
  // empty when the run kept its attention on demand.
  attn::Matrix attentionRows;
  double probability = 0;  // the target's probability at the input
  std::optional<DeletionCurve> deletion;
  std::string deletionNote;  // why there is no curve (short: the plot's axis line)
  double seconds = 0;        // all of it: the run, the method and the curve
};

// Runs the job; `progress` (done, of) from this thread; `cancel` stops it with an error of kind Cancelled.
attn::Result<AttributionResult> computeAttribution(const AttributionJob& job, const std::atomic<bool>* cancel,
                                                   const std::function<void(int, int)>& progress);

}  // namespace attn::ui
