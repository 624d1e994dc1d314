#include "attn/mechanisms/efficient.h"

#include "attn/mechanisms/normalise.h"
#include "attn/random.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

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
  // Products into matrices first: handed to softmax_rows' Ref as `(A * B) * s`, Eigen evaluated them
  // coefficient by coefficient (a quarter of a 8,192-token run).
  r.P.noalias() = Q * (w.E * K).transpose();
  r.P *= scale;
  softmax_rows_inplace(r.P);
  r.implied.noalias() = r.P * w.E;
  r.full.noalias() = Q * K.transpose();
  r.full *= scale;
  softmax_rows_inplace(r.full);
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
  Matrix full = Q * K.transpose();
  full *= scale;
  softmax_rows_inplace(full);
  std::vector<float> out;
  for (const Index k : ks) {
    const Matrix E = random_normal(k, n, mix_seed(seed, 104), inv_sqrt(k));  // as random_linformer_weights
    Matrix P = Q * (E * K).transpose();
    P *= scale;
    softmax_rows_inplace(P);
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

ReformerWeights random_reformer_weights(Index d, int buckets, int hashes, std::uint64_t seed) {
  ReformerWeights w;
  w.Wqk = near_identity(d, mix_seed(seed, 131));
  w.Wv = near_identity(d, mix_seed(seed, 132));
  for (int r = 0; r < hashes; ++r) {
    w.rotations.push_back(
        random_normal(d, std::max(1, buckets / 2), mix_seed(seed, 140 + static_cast<std::uint64_t>(r)), 1.0f));
  }
  return w;
}

Index ReformerResult::key_begin(Index sorted_position, int chunk) const {
  return std::max<Index>(0, (sorted_position / chunk - 1) * chunk);
}

namespace {

// h(x) = argmax([x R; -x R]); the first of equal maxima, as torch.argmax.
std::vector<int> lsh_buckets(const Matrix& keys, const Matrix& rotation) {
  const Matrix projected = keys * rotation;
  const Index half = projected.cols();
  std::vector<int> out(static_cast<std::size_t>(keys.rows()));
  for (Index i = 0; i < keys.rows(); ++i) {
    Index best = 0;
    float top = projected(i, 0);
    for (Index c = 1; c < 2 * half; ++c) {
      const float v = c < half ? projected(i, c) : -projected(i, c - half);
      if (v > top) top = v, best = c;
    }
    out[static_cast<std::size_t>(i)] = static_cast<int>(best);
  }
  return out;
}

// One round: bucket, sort, and each query's softmax over its own chunk and the one before.
LshRound lsh_round(const Matrix& Q, const Matrix& K, const Matrix& rotation, int chunk, float scale) {
  const Index n = Q.rows();
  LshRound round;
  round.buckets = lsh_buckets(K, rotation);
  round.order.resize(static_cast<std::size_t>(n));
  std::iota(round.order.begin(), round.order.end(), Index{0});
  std::stable_sort(round.order.begin(), round.order.end(), [&](Index a, Index b) {
    return round.buckets[static_cast<std::size_t>(a)] < round.buckets[static_cast<std::size_t>(b)];
  });
  const Index m = chunk;
  round.local = Matrix::Zero(n, std::min<Index>(n, 2 * m));
  round.lse.resize(n);
  std::vector<float> logits(static_cast<std::size_t>(2 * m));
  for (Index s = 0; s < n; ++s) {
    const Index begin = std::max<Index>(0, (s / m - 1) * m), end = std::min<Index>(n, (s / m + 1) * m);
    const Index i = round.order[static_cast<std::size_t>(s)];
    float top = -std::numeric_limits<float>::infinity();
    for (Index t = begin; t < end; ++t) {
      const Index j = round.order[static_cast<std::size_t>(t)];
      const float l = j == i ? kReformerSelfLogit : Q.row(i).dot(K.row(j)) * scale;
      logits[static_cast<std::size_t>(t - begin)] = l;
      top = std::max(top, l);
    }
    float sum = 0.0f;
    for (Index t = begin; t < end; ++t) {
      const float e = std::exp(logits[static_cast<std::size_t>(t - begin)] - top);
      round.local(s, t - begin) = e;
      sum += e;
    }
    round.local.row(s).head(end - begin) /= sum;
    round.lse(i) = top + std::log(sum);
  }
  return round;
}

// The per-round maps in their sorted order, rows and columns labelled "word · b<bucket>".
void record_sorted_rounds(const ReformerResult& r, int chunk, const TraceTag& tag) {
  for (std::size_t k = 0; k < r.rounds.size(); ++k) {
    const LshRound& round = r.rounds[k];
    const Index n = round.local.rows();
    Matrix sorted = Matrix::Zero(n, n);
    for (Index s = 0; s < n; ++s) {
      const Index begin = r.key_begin(s, chunk), width = std::min<Index>(round.local.cols(), n - begin);
      sorted.row(s).segment(begin, width) = round.local.row(s).head(width);
    }
    Labels labels;
    if (tag.rows && static_cast<Index>(tag.rows->size()) == n) {
      for (const Index i : round.order) {
        labels.push_back((*tag.rows)[static_cast<std::size_t>(i)] + " \u00b7 b" +
                         std::to_string(round.buckets[static_cast<std::size_t>(i)]));
      }
    }
    const TraceTag t = labels.empty() ? tag.with_labels(nullptr, nullptr) : tag.with_labels(&labels, &labels);
    t.with_axes("sorted by bucket", "sorted by bucket")
        .named("sorted by bucket \u00b7 round " + std::to_string(k))
        .record(sorted);
  }
}

}  // namespace

ReformerResult reformer_attention(const MatrixCRef& x, const ReformerWeights& w, const ReformerParams& params,
                                  const TraceTag& tag) {
  assert(params.buckets >= 2 && params.buckets % 2 == 0 && params.chunk >= 1 && !w.rotations.empty());
  const Index n = x.rows(), d = x.cols();
  const float scale = inv_sqrt(d);
  const Matrix Q = x * w.Wqk;
  Matrix K = Q;
  for (Index i = 0; i < n; ++i) {
    const float norm = K.row(i).norm();
    if (norm > 0.0f) K.row(i) /= norm;
  }
  ReformerResult r;
  for (const Matrix& rotation : w.rotations) r.rounds.push_back(lsh_round(Q, K, rotation, params.chunk, scale));
  // exp(lse_r - logsumexp_r lse_r): each round's share of a query's attention.
  Matrix share(n, static_cast<Index>(r.rounds.size()));
  for (std::size_t k = 0; k < r.rounds.size(); ++k) share.col(static_cast<Index>(k)) = r.rounds[k].lse;
  for (Index i = 0; i < n; ++i) {
    const float top = share.row(i).maxCoeff();
    Eigen::RowVectorXf e = share.row(i);
    for (Index k = 0; k < e.size(); ++k) e(k) = std::exp(e(k) - top);
    share.row(i) = e / e.sum();
  }
  r.weights = Matrix::Zero(n, n);
  for (std::size_t k = 0; k < r.rounds.size(); ++k) {
    const LshRound& round = r.rounds[k];
    for (Index s = 0; s < n; ++s) {
      const Index i = round.order[static_cast<std::size_t>(s)], begin = r.key_begin(s, params.chunk);
      const Index width = std::min<Index>(round.local.cols(), n - begin);
      for (Index t = 0; t < width; ++t) {
        r.weights(i, round.order[static_cast<std::size_t>(begin + t)]) +=
            share(i, static_cast<Index>(k)) * round.local(s, t);
      }
    }
  }
  r.output = r.weights * (x * w.Wv);
  if (params.full) {
    r.full.noalias() = Q * K.transpose();
    r.full *= scale;
    r.full.diagonal().setConstant(kReformerSelfLogit);
    softmax_rows_inplace(r.full);
    // A key counts as seen when some round put it in the query's chunks, whatever weight it got there.
    r.missed = Vector::Zero(n);
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    std::vector<std::vector<Index>> keys(static_cast<std::size_t>(n));
    for (const LshRound& round : r.rounds) {
      for (Index s = 0; s < n; ++s) {
        const Index begin = r.key_begin(s, params.chunk),
                    end = std::min<Index>(n, (s / params.chunk + 1) * params.chunk);
        auto& list = keys[static_cast<std::size_t>(round.order[static_cast<std::size_t>(s)])];
        for (Index t = begin; t < end; ++t) list.push_back(round.order[static_cast<std::size_t>(t)]);
      }
    }
    for (Index i = 0; i < n; ++i) {
      for (const Index j : keys[static_cast<std::size_t>(i)]) seen[static_cast<std::size_t>(j)] = 1;
      float missed = 0.0f;
      for (Index j = 0; j < n; ++j) {
        if (!seen[static_cast<std::size_t>(j)]) missed += r.full(i, j);
      }
      r.missed(i) = missed;
      for (const Index j : keys[static_cast<std::size_t>(i)]) seen[static_cast<std::size_t>(j)] = 0;
    }
  }
  if (tag.enabled()) {
    tag.named("LSH attention").record(r.weights);
    if (params.full) tag.named("full attention").record(r.full);
    record_sorted_rounds(r, params.chunk, tag);
  }
  return r;
}

}  // namespace attn
