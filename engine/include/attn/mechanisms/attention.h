// Query-key-value attention over a source: global, local (Luong et al. 2015, sec. 3.2), hard and gated
// soft attention (Xu et al. 2015). Every function returns weights (n x m) and context (n x dv) and
// records the weights through the TraceTag.
#pragma once

#include "attn/core.h"
#include "attn/mechanisms/normalise.h"
#include "attn/mechanisms/scores.h"
#include "attn/trace.h"

#include <cstdint>

namespace attn {

struct AttentionResult {
  Matrix weights;  // n x m, rows = queries
  Matrix context;  // n x dv
};

struct GlobalParams {
  ScoreKind score = ScoreKind::ScaledDot;
  Normaliser normaliser = Normaliser::Softmax;
  float temperature = 1.0f;
};

// softmax(score(Q, K) / T + mask) V.
AttentionResult global_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                                 const ScoreWeights& score_weights, const GlobalParams& params, const Matrix& mask = {},
                                 const TraceTag& tag = {});

// Location-based (Luong et al. 2015, eq. 8): a_t = softmax(W_a h_t), scores from the query alone.
// W: m x d (one row per source position).
AttentionResult location_attention(const MatrixCRef& q, const MatrixCRef& v, const MatrixCRef& W,
                                   const GlobalParams& params, const TraceTag& tag = {});

enum class LocalKind {
  Monotonic,   // local-m: p_t = t
  Predictive,  // local-p: p_t = S * sigmoid(v_p^T tanh(W_p h_t))
};

struct LocalParams {
  LocalKind kind = LocalKind::Predictive;
  ScoreKind score = ScoreKind::General;
  float temperature = 1.0f;
  int window = 2;       // D: keys s with |s - p_t| <= D are visible
  float sigma = -1.0f;  // Gaussian width; <= 0 means D / 2 as in the paper
  // Multiply the windowed softmax by exp(-(s - p_t)^2 / (2 sigma^2)). The paper does this for local-p
  // (eq. 10) and not for local-m; the default follows the paper (set in local_defaults()).
  bool gaussian = true;
};
LocalParams local_defaults(LocalKind kind);

struct LocalWeights {
  Matrix Wp;  // dp x d   (local-p only)
  Vector vp;  // dp
};
LocalWeights random_local_weights(Index d, Index dp, std::uint64_t seed);

struct LocalResult : AttentionResult {
  Vector positions;  // p_t for every query row
};

LocalResult local_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                            const ScoreWeights& score_weights, const LocalWeights& local_weights,
                            const LocalParams& params, const TraceTag& tag = {});

// Hard attention: one key per query, chosen from soft weights.
Matrix hard_argmax(const MatrixCRef& weights);
// Samples key j with probability weights(i, j) (rows renormalised; an all-zero row stays zero).
Matrix hard_sample(const MatrixCRef& weights, std::uint64_t seed);

enum class HardMode { Argmax, Sample };
struct HardResult : AttentionResult {
  Matrix soft_weights;  // the distribution the choice was made from
};
HardResult hard_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                          const ScoreWeights& score_weights, const GlobalParams& params, HardMode mode,
                          std::uint64_t seed, const TraceTag& tag = {});

// Soft attention with a gating scalar beta_t = sigmoid(w_beta . h_t + b_beta) per query (Xu et al. 2015,
// sec. 4.2.1): context_t = beta_t * sum_i alpha_ti v_i.
struct GateWeights {
  Vector w;  // d (query size)
  float b = 0.0f;
};
struct GatedResult : AttentionResult {
  Vector beta;  // one gate per query
};
GatedResult gated_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                            const ScoreWeights& score_weights, const GlobalParams& params, const GateWeights& gate,
                            const TraceTag& tag = {});

}  // namespace attn
