// Analysis of a layered trace: pure functions.
//   Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"), with the
//   options of vit-explain (jacobgil): heads fused by mean, max or min; a discard ratio that zeroes the
//   lowest fused weights of each layer (never the class token's own row-0 column-0 weight); the residual
//   connection as A' = (1 - r) A + r I with r = 0.5 in the paper; rows renormalised to sum 1; layers
//   multiplied from the first: R_l = A'_l R_{l-1}.
//   Head statistics: entropy of each row (nats) averaged over rows, mean attention distance |i - j|
//   weighted by attention (tokens; ViT: patch-grid Euclidean distance when given a grid), the largest
//   weight, and the mass on special positions ([CLS]/BOS, [SEP]) averaged over rows.
#pragma once

#include "attn/error.h"
#include "attn/layered_trace.h"
#include "attn/on_demand_attention.h"

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

namespace attn::analysis {

enum class HeadFusion { Mean, Max, Min };

struct RolloutOptions {
  HeadFusion fusion = HeadFusion::Mean;
  float discard_ratio = 0.0f;  // in [0, 1)
  float residual = 0.5f;       // r in [0, 1]
  int first_layer = 0;         // layers [first_layer, last_layer] of `stage` are rolled out
  int last_layer = -1;         // -1: the last layer
  Stage stage = Stage::Encoder;
};
// [tokens, tokens]; row i is how much token i's final representation draws on each input token.
// The whole product costs tokens^3 multiply-adds per layer: above kRolloutMaxTokens (a long dump) it is
// refused with the figures (TooLarge), not left to run for minutes.
inline constexpr Index kRolloutMaxTokens = 4096;
Result<Matrix> rollout(const LayeredTrace& trace, const RolloutOptions& options = {});
// One layer as rollout() sees it: the heads fused, the lowest weights discarded, the residual added
// (A' = (1 - r) A + r I), each row renormalised to sum 1 (a row left with no weight keeps the token on itself).
// Attention flow (attention_flow.h) builds its graph from the same A', so the two are comparable.
Matrix fuse_heads(const HeadStack& stack, HeadFusion fusion);
Matrix with_residual(Matrix fused, float discard_ratio, float residual);
// One row of the rollout of a run kept on demand, where no map is stored and the whole product is out of reach:
// query `query`'s row of R = A'_last ... A'_first with rollout()'s A' (heads fused, the residual, rows
// renormalised), a row vector carried from the last layer down and multiplied by each layer's A', recomputed in
// blocks of rows: only the rows the vector reaches (in a causal model those up to `query`). Equal to row `query` of
// rollout() over the stored maps (tested). The discard ratio must be 0 (it ranks every weight of a layer).
// Per layer it costs heads x (query + 1)^2 / 2 x head_dim multiply-adds in a causal model: seconds at 4,096 tokens,
// minutes at 32,768. `cancel` is read between blocks of rows (Cancelled); `progress(done, of)` is called on the
// calling thread after each layer. `options.stage` is not used (a run kept on demand has one stack of layers). The
// layers of a version-2 dump are verified first (OnDemandLayer::verify): a damaged head is the error.
Result<std::vector<float>> rollout_row(const std::vector<OnDemandLayer>& layers, Index query,
                                       const RolloutOptions& options = {}, const std::atomic<bool>* cancel = nullptr,
                                       const std::function<void(int, int)>& progress = {});

// Entropy and mean distance are defined on distributions: a head with a weight outside [0, 1] (an attention dump
// of scores or logits) has NaN for both, which the views show as "—"; the masses and max are still given.
struct HeadStats {
  int layer = 0, head = 0;
  float entropy = 0;        // mean row entropy, nats
  float max_entropy = 0;    // log(cols): the entropy of a uniform row, for scale
  float mean_distance = 0;  // attention-weighted |i - j| (tokens) or grid distance (patches)
  float max_weight = 0;     // largest single weight
  float first_mass = 0;     // mean mass on position 0 ([CLS] / BOS / class token)
  float special_mass = 0;   // mean mass on the other special positions ([SEP])
};
struct StatsOptions {
  Stage stage = Stage::Encoder;
  std::vector<int> special_positions;  // positions counted in special_mass (0 is always first_mass)
  int grid_rows = 0, grid_cols = 0;    // > 0: tokens 1.. are a patch grid (ViT)
  // Only this query row (a generated token): its own entropy, distance, largest weight and masses, not the mean
  // over every row. Outside the maps: no rows (every figure 0).
  std::optional<Index> query_row;
};
std::vector<HeadStats> head_statistics(const LayeredTrace& trace, const StatsOptions& options = {});
// The same figures of a run kept on demand, from the statistics its forward streamed (no map is recomputed):
// every layer and head. special_mass is the mass on `special_positions` other than 0 (the run's BOS/EOS/separator
// tokens), from the attention each token received: the mean over rows of a row's mass on them.
std::vector<HeadStats> streamed_statistics(const std::vector<OnDemandLayer>& layers,
                                           const std::vector<int>& special_positions = {});

}  // namespace attn::analysis
