// Attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", section 3): the layers'
// attention as a flow network, a node (l, i) per layer input l = 0..L and token i (l = L: the output) and an edge
// (l, j) -> (l + 1, i) of capacity A'_l[i][j], with A' as rollout() makes it (heads fused, A' = (1 - r) A + r I,
// rows renormalised to sum 1: attention_analysis.h's with_residual). Input token j's score is the maximum flow from
// (0, j) to (L, t), t the target query: one max-flow per input token, by the Boost Graph Library's push-relabel
// (Goldberg & Tarjan 1988). Each score is in [0, 1] (the sink takes at most row t of the last A', which sums to 1).
#pragma once

#include "attn/analysis/attention_analysis.h"
#include "attn/error.h"
#include "attn/layered_trace.h"

#include <atomic>
#include <functional>
#include <vector>

namespace attn::analysis {

// T max-flows over a graph of up to L x T^2 edges: seconds at 512 tokens, hours at 4,096 (the estimate below).
// Past the bound the input is refused (TooLarge) with the estimate, not left to run.
inline constexpr Index kFlowMaxTokens = 512;

struct AttentionFlow {
  std::vector<float> scores;  // [tokens]: the flow from each input token to the target, in [0, 1]
  double seconds = 0;         // wall time of the max-flows
  long long edges = 0;        // edges of the pruned graph (those that can carry flow to the target)
};

// The seconds `edges` x `sources` max-flow work is expected to take on two threads (the refusal's estimate).
double flow_seconds_estimate(long long edges, Index sources);

// `fused`: per layer (first to last) the head-fused attention [T, T], row = query, column = key; weights finite and
// >= 0. `target`: a query position of the last layer. `residual`: r of A' (0.5 in the paper). `cancel` is read
// between max-flows (Cancelled); `progress(done, of)` is called on the calling thread. Refused: no layers, maps that
// are not square or not all one size, a weight that is NaN, infinite or negative, the target outside the tokens,
// r outside [0, 1] (OutOfRange / Mismatch, with the figure), more than kFlowMaxTokens tokens (TooLarge).
Result<AttentionFlow> attention_flow(const std::vector<Matrix>& fused, Index target, float residual = 0.5f,
                                     const std::atomic<bool>* cancel = nullptr,
                                     const std::function<void(int, int)>& progress = {});
// The layers [first_layer, last_layer] of `options.stage` of a trace, fused and discarded as rollout() does.
Result<AttentionFlow> attention_flow(const LayeredTrace& trace, Index target, const RolloutOptions& options = {},
                                     const std::atomic<bool>* cancel = nullptr,
                                     const std::function<void(int, int)>& progress = {});

}  // namespace attn::analysis
