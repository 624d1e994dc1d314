#include "attn/mechanisms/attention.h"

#include "attn/random.h"

#include <cassert>
#include <cmath>

namespace attn {

namespace {

Matrix context_of(const Matrix& weights, const MatrixCRef& v) {
  Matrix c(weights.rows(), v.cols());
  c.noalias() = weights * v;
  return c;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

AttentionResult global_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                                 const ScoreWeights& score_weights, const GlobalParams& params, const Matrix& mask,
                                 const TraceTag& tag) {
  assert(k.rows() == v.rows());
  AttentionResult r;
  r.weights = normalise_rows(params.normaliser, score(params.score, q, k, score_weights), params.temperature, mask);
  r.context = context_of(r.weights, v);
  tag.record(r.weights);
  return r;
}

AttentionResult location_attention(const MatrixCRef& q, const MatrixCRef& v, const MatrixCRef& W,
                                   const GlobalParams& params, const TraceTag& tag) {
  assert(W.rows() == v.rows());
  AttentionResult r;
  r.weights = normalise_rows(params.normaliser, location_score(q, W), params.temperature);
  r.context = context_of(r.weights, v);
  tag.record(r.weights);
  return r;
}

LocalParams local_defaults(LocalKind kind) {
  LocalParams p;
  p.kind = kind;
  p.gaussian = kind == LocalKind::Predictive;
  return p;
}

LocalWeights random_local_weights(Index d, Index dp, std::uint64_t seed) {
  LocalWeights w;
  w.Wp = xavier_uniform(dp, d, mix_seed(seed, 11)) * 2.0f;
  w.vp = xavier_uniform(dp, 1, mix_seed(seed, 12)).col(0) * 4.0f;
  return w;
}

LocalResult local_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                            const ScoreWeights& score_weights, const LocalWeights& local_weights,
                            const LocalParams& params, const TraceTag& tag) {
  const Index n = q.rows();
  const Index m = k.rows();
  const float D = static_cast<float>(std::max(0, params.window));
  const float sigma = params.sigma > 0.0f ? params.sigma : std::max(D / 2.0f, 1e-3f);

  LocalResult r;
  r.positions.resize(n);
  if (params.kind == LocalKind::Monotonic) {
    // Luong et al. assume monotonic alignment, p_t = t; clamp so a longer target still has a window.
    for (Index t = 0; t < n; ++t) r.positions(t) = static_cast<float>(std::min<Index>(t, std::max<Index>(0, m - 1)));
  } else {
    assert(local_weights.Wp.cols() == q.cols() && local_weights.Wp.rows() == local_weights.vp.size());
    Matrix h(n, local_weights.Wp.rows());
    h.noalias() = q * local_weights.Wp.transpose();
    const Vector z = h.array().tanh().matrix() * local_weights.vp;
    // p_t = S sigmoid(.) in [0, S] (eq. 9). Positions are 0-based, so p_t = S sits just past the last key,
    // which its window still reaches for D >= 1.
    for (Index t = 0; t < n; ++t) r.positions(t) = static_cast<float>(m) * sigmoid(z(t));
  }

  // Keys outside [p_t - D, p_t + D] are masked before normalising, so the window's weights sum to 1.
  Matrix mask = Matrix::Zero(n, m);
  for (Index t = 0; t < n; ++t) {
    for (Index s = 0; s < m; ++s) {
      if (std::abs(static_cast<float>(s) - r.positions(t)) > D) mask(t, s) = -std::numeric_limits<float>::infinity();
    }
  }
  r.weights = softmax_rows(score(params.score, q, k, score_weights), params.temperature, mask);
  if (params.gaussian) {
    for (Index t = 0; t < n; ++t) {
      for (Index s = 0; s < m; ++s) {
        const float d = static_cast<float>(s) - r.positions(t);
        r.weights(t, s) *= std::exp(-d * d / (2.0f * sigma * sigma));
      }
    }
  }
  r.context = context_of(r.weights, v);
  tag.record(r.weights);
  return r;
}

Matrix hard_argmax(const MatrixCRef& weights) {
  Matrix out = Matrix::Zero(weights.rows(), weights.cols());
  for (Index i = 0; i < weights.rows(); ++i) {
    if (weights.cols() == 0 || !(weights.row(i).maxCoeff() > 0.0f)) continue;
    Index j = 0;
    weights.row(i).maxCoeff(&j);
    out(i, j) = 1.0f;
  }
  return out;
}

Matrix hard_sample(const MatrixCRef& weights, std::uint64_t seed) {
  Matrix out = Matrix::Zero(weights.rows(), weights.cols());
  SplitMix64 rng(seed);
  for (Index i = 0; i < weights.rows(); ++i) {
    // One draw per row whether or not the row is empty, so row i's sample depends only on (seed, i).
    const double u = static_cast<double>(rng.next() >> 11) * (1.0 / 9007199254740992.0);
    double total = 0.0;
    for (Index j = 0; j < weights.cols(); ++j) total += std::max(0.0f, weights(i, j));
    if (!(total > 0.0)) continue;
    const double target = u * total;
    double acc = 0.0;
    Index chosen = -1;
    for (Index j = 0; j < weights.cols(); ++j) {
      const double w = std::max(0.0f, weights(i, j));
      if (w <= 0.0) continue;
      chosen = j;  // the last key with mass, so rounding at the top still lands on a valid key
      acc += w;
      if (target < acc) break;
    }
    out(i, chosen) = 1.0f;
  }
  return out;
}

HardResult hard_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                          const ScoreWeights& score_weights, const GlobalParams& params, HardMode mode,
                          std::uint64_t seed, const TraceTag& tag) {
  HardResult r;
  r.soft_weights = normalise_rows(params.normaliser, score(params.score, q, k, score_weights), params.temperature);
  r.weights = mode == HardMode::Argmax ? hard_argmax(r.soft_weights) : hard_sample(r.soft_weights, seed);
  r.context = context_of(r.weights, v);
  tag.record(r.weights);
  tag.named("soft weights (the distribution)").record(r.soft_weights);
  return r;
}

GatedResult gated_attention(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& v,
                            const ScoreWeights& score_weights, const GlobalParams& params, const GateWeights& gate,
                            const TraceTag& tag) {
  assert(gate.w.size() == q.cols());
  GatedResult r;
  r.weights = normalise_rows(params.normaliser, score(params.score, q, k, score_weights), params.temperature);
  r.beta.resize(q.rows());
  for (Index t = 0; t < q.rows(); ++t) r.beta(t) = sigmoid(q.row(t).dot(gate.w.transpose()) + gate.b);
  r.context = context_of(r.weights, v);
  r.context.array().colwise() *= r.beta.array();
  tag.record(r.weights);
  return r;
}

}  // namespace attn
