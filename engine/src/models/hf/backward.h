// The backward pass's driver (backward.cpp), for attribution.cpp: plans of a model's layers for B stacked sequences
// of T tokens, and one forward-and-backward over them from the embedding layer's output. Internal to engine/src/models.
#pragma once

#include "attn/models/attribution.h"

#include <functional>
#include <memory>
#include <vector>

namespace attn::models {

namespace detail_backward {
struct Plans;
}

// The layers and the head of `m` as the backward runs them, for B sequences of T tokens.
std::shared_ptr<const detail_backward::Plans> make_plans(const TransformerModel::Impl& m, Index T, Index B);

struct PassRequest {
  Index T = 0;       // tokens per sequence
  int position = 0;  // the explained row of each sequence
  int token = -1;    // -1: the first sequence's most likely token
  AttributionTarget target;
  BackwardRule rule = BackwardRule::Gradient;
  bool checkpointed = false;  // keep each layer's input only, and run it again before its backward
  BackwardOptions options;
  Gradients* keep = nullptr;  // sequence 0's residual streams, their gradients and the heads' output gradients
  std::function<void(int done, int of)> on_layer;  // after each layer's backward
};

struct PassResult {
  std::vector<float> values;  // F of each sequence
  int token = 0;
  Matrix dx0;  // [B T, d]: dF/dx0 (AttnLRP: the modified gradient)
};

// Bytes one pass over `rows` stacked rows keeps (estimated), every layer's cache kept or checkpointed.
std::size_t pass_bytes(const detail_backward::Plans& plans, Index rows, bool checkpointed);

// x0 [B T, d]: the embedding layer's output of each sequence, stacked.
Result<PassResult> run_pass(const detail_backward::Plans& plans, Matrix x0, const PassRequest& request);

}  // namespace attn::models
