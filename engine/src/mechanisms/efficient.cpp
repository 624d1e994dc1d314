#include "attn/mechanisms/efficient.h"

#include "attn/mechanisms/normalise.h"
#include "attn/random.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace attn {

namespace {

float inv_sqrt(Index d) { return 1.0f / std::sqrt(static_cast<float>(std::max<Index>(1, d))); }

// Near-identity projections plus seeded noise, as the Lab's other self-attention draws them: similar words
// still attend to each other with model-free embeddings.
Matrix near_identity(Index d, std::uint64_t seed) {
  return Matrix::Identity(d, d) + 0.5f * random_normal(d, d, seed, inv_sqrt(d));
}

float relative_error(const Matrix& approx, const Matrix& exact) {
  const float norm = exact.norm();
  return norm > 0.0f ? (approx - exact).norm() / norm : 0.0f;
}

}  // namespace

LinformerWeights random_linformer_weights(Index d, Index n, Index k, std::uint64_t seed) {
  LinformerWeights w;
  w.Wq = near_identity(d, mix_seed(seed, 101));
  w.Wk = near_identity(d, mix_seed(seed, 102));
  w.Wv = near_identity(d, mix_seed(seed, 103));
  // N(0, 1/k) entries, as the paper's Johnson-Lindenstrauss argument draws them.
  w.E = random_normal(k, n, mix_seed(seed, 104), inv_sqrt(k));
  w.F = random_normal(k, n, mix_seed(seed, 105), inv_sqrt(k));
  return w;
}

LinformerResult linformer_attention(const MatrixCRef& x, const LinformerWeights& w, const TraceTag& tag) {
  assert(w.E.cols() == x.rows() && w.F.cols() == x.rows() && w.E.rows() >= 1);
  const Index d = x.cols();
  const Matrix Q = x * w.Wq, K = x * w.Wk, V = x * w.Wv;
  const float scale = inv_sqrt(d);
  LinformerResult r;
  r.P = softmax_rows((Q * (w.E * K).transpose()) * scale);
  r.implied = r.P * w.E;
  r.full = softmax_rows((Q * K.transpose()) * scale);
  r.output = r.P * (w.F * V);
  r.error = relative_error(r.implied, r.full);
  if (tag.enabled()) {
    tag.named("projected (n x k)").record(r.P);
    tag.named("implied (P E)").record(r.implied);
    tag.named("full attention").record(r.full);
  }
  return r;
}

std::vector<float> linformer_error_curve(const MatrixCRef& x, const std::vector<Index>& ks, std::uint64_t seed) {
  // Q, K and full attention once (their weights do not depend on k); for each k only E, P and P E.
  const Index d = x.cols(), n = x.rows();
  const LinformerWeights w = random_linformer_weights(d, n, 1, seed);
  const Matrix Q = x * w.Wq, K = x * w.Wk;
  const float scale = inv_sqrt(d);
  const Matrix full = softmax_rows((Q * K.transpose()) * scale);
  std::vector<float> out;
  for (const Index k : ks) {
    const Matrix E = random_normal(k, n, mix_seed(seed, 104), inv_sqrt(k));  // as random_linformer_weights
    const Matrix P = softmax_rows((Q * (E * K).transpose()) * scale);
    out.push_back(relative_error(P * E, full));
  }
  return out;
}

SynthesizerWeights random_synthesizer_weights(Index d, Index n, Index k, std::uint64_t seed,
                                              std::optional<SynthesizerKind> only) {
  using Kind = SynthesizerKind;
  const auto uses = [&](std::initializer_list<Kind> kinds) {
    return !only || std::find(kinds.begin(), kinds.end(), *only) != kinds.end();
  };
  SynthesizerWeights w;
  if (uses({Kind::Dense, Kind::Mixture})) {
    w.W1 = random_normal(d, d, mix_seed(seed, 111), inv_sqrt(d));
    w.b1 = RowVector::Zero(d);
    w.W2 = random_normal(d, n, mix_seed(seed, 112), 3.0f * inv_sqrt(d));
    w.b2 = RowVector::Zero(n);
  }
  if (uses({Kind::Random, Kind::Mixture})) w.R = random_normal(n, n, mix_seed(seed, 113), 1.0f);
  if (uses({Kind::FactorizedRandom})) {
    w.R1 = random_normal(n, k, mix_seed(seed, 114), inv_sqrt(k));
    w.R2 = random_normal(n, k, mix_seed(seed, 115), 1.0f);
  }
  if (uses({Kind::FactorizedDense})) {
    const Index a = static_cast<Index>(std::ceil(std::sqrt(static_cast<double>(n))));
    const Index b = (n + a - 1) / a;
    w.Wa = random_normal(d, a, mix_seed(seed, 116), 3.0f * inv_sqrt(d));
    w.Wb = random_normal(d, b, mix_seed(seed, 117), 1.0f * inv_sqrt(d));
  }
  if (uses({Kind::Mixture})) {
    w.Wq = near_identity(d, mix_seed(seed, 118));
    w.Wk = near_identity(d, mix_seed(seed, 119));
  }
  w.Wv = near_identity(d, mix_seed(seed, 120));
  return w;
}

namespace {

Matrix dense_logits(const MatrixCRef& x, const SynthesizerWeights& w) {
  const Matrix hidden = ((x * w.W1).rowwise() + w.b1).cwiseMax(0.0f);  // relu(W1 x_i + b1)
  return (hidden * w.W2).rowwise() + w.b2;
}

// C_i[p] = A_i[p mod a] * B_i[p div a]: A_i = x_i W_a tiled b times, times B_i = x_i W_b with each element
// repeated a times; the first n of the a * b products are token i's logits.
Matrix factorized_dense_logits(const MatrixCRef& x, const SynthesizerWeights& w) {
  const Matrix A = x * w.Wa, B = x * w.Wb;
  const Index n = x.rows(), a = A.cols();
  Matrix out(n, n);
  for (Index i = 0; i < n; ++i) {
    for (Index p = 0; p < n; ++p) out(i, p) = A(i, p % a) * B(i, p / a);
  }
  return out;
}

}  // namespace

SynthesizerResult synthesizer_attention(const MatrixCRef& x, const SynthesizerWeights& w, SynthesizerKind kind,
                                        const TraceTag& tag) {
  assert(w.Wv.rows() == x.cols());
  SynthesizerResult r;
  Matrix dense, dot;  // Mixture's parts
  switch (kind) {
    case SynthesizerKind::Dense: r.logits = dense_logits(x, w); break;
    case SynthesizerKind::Random: r.logits = w.R; break;
    case SynthesizerKind::FactorizedDense: r.logits = factorized_dense_logits(x, w); break;
    case SynthesizerKind::FactorizedRandom: r.logits = w.R1 * w.R2.transpose(); break;
    case SynthesizerKind::Mixture:
      dense = dense_logits(x, w);
      dot = (x * w.Wq) * (x * w.Wk).transpose() * inv_sqrt(x.cols());
      r.logits = (dense + w.R + dot) / 3.0f;
      break;
  }
  r.weights = softmax_rows(r.logits);
  r.output = r.weights * (x * w.Wv);
  if (tag.enabled()) {
    tag.named("synthesised").record(r.weights);
    if (kind == SynthesizerKind::Mixture) {
      tag.named("dense").record(softmax_rows(dense));
      tag.named("random").record(softmax_rows(w.R));
      tag.named("dot product").record(softmax_rows(dot));
    }
  }
  return r;
}

}  // namespace attn
