// attnscope-cli run's checks that need no drawing: what a run kept on demand cannot draw, asked of the request before
// the forward (issue 42: 100,000 tokens ran about 10 minutes only to be refused at the end).
#pragma once

#include "cli/transformer_cli.h"
#include "workbenches/common/render_report.h"

#include "attn/core.h"
#include "attn/models/transformer.h"

#include <optional>
#include <vector>

namespace attn::ui {

// What a run whose attention is kept on demand cannot draw: the head mean and rollout (they need every map), and the
// head, model and overlay views (they need stored maps); nothing when the request can be met.
std::optional<RenderFailure> onDemandRefusal(const TransformerJob& job, const RenderSpec& spec, Index tokens);

// The tokens a model run of `job` would have: --ids as given, else the tokenizer's count with the family's special
// tokens, capped at the model's context; nullopt when the text cannot be tokenised (the run then says why).
std::optional<Index> jobTokens(const TransformerJob& job, const attn::models::TransformerModel& model,
                               const std::optional<std::vector<int>>& ids);

// The same refusal made before the forward, for a model run that will keep its attention on demand (--on-demand, or
// Keep::Auto's maps over 1 GiB: a long text), from the tokenizer's count and the engine's estimate (run_bytes).
std::optional<RenderFailure> refusedBeforeForward(const TransformerJob& job,
                                                  const attn::models::TransformerModel& model,
                                                  const std::optional<std::vector<int>>& ids);

}  // namespace attn::ui
