#include "attn/mechanisms/composite.h"

#include "attn/mechanisms/normalise.h"
#include "attn/random.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace attn {

MultiHopResult multi_hop_attention(const MatrixCRef& q0, const MatrixCRef& memory, const ScoreWeights& score_weights,
                                   const Matrix& update_W, const MultiHopParams& params, const TraceTag& tag) {
  MultiHopResult r;
  r.queries.emplace_back(q0);
  for (int hop = 0; hop < params.hops; ++hop) {
    const Matrix& q = r.queries.back();
    AttentionResult a = global_attention(q, memory, memory, score_weights, params.attention, {},
                                         tag.named("hop " + std::to_string(hop)));
    Matrix next;
    if (params.update == HopUpdate::Add) {
      next = q + a.context;
    } else {
      assert(update_W.rows() == q.cols() && update_W.cols() == q.cols() + a.context.cols());
      Matrix qc(q.rows(), q.cols() + a.context.cols());
      qc << q, a.context;
      next = (qc * update_W.transpose()).array().tanh().matrix();
    }
    r.hop_weights.push_back(std::move(a.weights));
    r.context = std::move(a.context);
    r.queries.push_back(std::move(next));
  }
  return r;
}

HierarchicalWeights random_hierarchical_weights(Index d, Index da, std::uint64_t seed) {
  return {random_pooling_weights(d, da, 1, 1, mix_seed(seed, 41)),
          random_pooling_weights(d, da, 1, 1, mix_seed(seed, 42))};
}

HierarchicalResult hierarchical_attention(const std::vector<Matrix>& sentences, const HierarchicalWeights& w,
                                          const PoolingParams& params, const TraceTag& tag) {
  const Index d = w.word.W.cols();
  HierarchicalResult r;
  r.sentence_vectors = Matrix::Zero(static_cast<Index>(sentences.size()), d);
  r.sentence_weights = RowVector::Zero(static_cast<Index>(sentences.size()));
  r.document = RowVector::Zero(d);
  std::vector<Index> present;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    if (sentences[i].rows() == 0) {
      r.word_weights.emplace_back();
      continue;
    }
    // Word-level positions restart in every sentence: no positions at this level.
    PoolingParams word_params = params;
    word_params.positions = PositionKind::None;
    PoolingResult pw = attention_pooling(sentences[i], w.word, word_params, {});
    r.word_weights.emplace_back(pw.weights.row(0));
    r.sentence_vectors.row(static_cast<Index>(i)) = pw.context.row(0);
    present.push_back(static_cast<Index>(i));
  }
  if (!present.empty()) {
    Matrix sv(static_cast<Index>(present.size()), d);
    for (std::size_t j = 0; j < present.size(); ++j) sv.row(static_cast<Index>(j)) = r.sentence_vectors.row(present[j]);
    PoolingParams sentence_params = params;
    sentence_params.positions = PositionKind::None;
    PoolingResult ps = attention_pooling(sv, w.sentence, sentence_params, {});
    for (std::size_t j = 0; j < present.size(); ++j)
      r.sentence_weights(present[j]) = ps.weights(0, static_cast<Index>(j));
    r.document = ps.context.row(0);
  }
  if (tag.enabled()) {
    // One 1 x words map per sentence, then the 1 x sentences map; the caller labels their axes.
    for (std::size_t i = 0; i < r.word_weights.size(); ++i) {
      if (r.word_weights[i].size() == 0) continue;
      TraceTag t = tag.named("word attention · sentence " + std::to_string(i));
      t.rows = nullptr;
      t.cols = nullptr;
      t.record(Matrix(r.word_weights[i]));
    }
    TraceTag t = tag.named("sentence attention");
    t.rows = nullptr;
    t.cols = nullptr;
    t.record(Matrix(r.sentence_weights));
  }
  return r;
}

AoAResult attention_over_attention(const MatrixCRef& doc, const MatrixCRef& query, const TraceTag& tag) {
  AoAResult r;
  r.M.resize(doc.rows(), query.rows());
  r.M.noalias() = doc * query.transpose();
  r.alpha = softmax_cols(r.M);
  r.beta = softmax_rows(r.M);
  r.beta_avg = r.beta.colwise().mean();
  r.s = r.alpha * r.beta_avg.transpose();
  if (tag.enabled()) {
    tag.named("alpha (query-to-document, column softmax)").record(r.alpha);
    tag.named("beta (document-to-query, row softmax)").record(r.beta);
    TraceTag t = tag.named("s = alpha · mean(beta)");
    t.rows = nullptr;
    t.record(Matrix(r.s.transpose()));
  }
  return r;
}

CapsuleWeights random_capsule_weights(Index classes, Index d, std::uint64_t seed) {
  CapsuleWeights w;
  w.queries = random_normal(classes, d, mix_seed(seed, 51), 1.0f / std::sqrt(static_cast<float>(d)));
  w.w = random_normal(classes, d, mix_seed(seed, 52), 1.0f);
  w.b = Vector::Zero(classes);
  return w;
}

namespace {

// p_c = sigmoid(w_c . r_c + b_c), capsule p_c r_c, from the contexts r_c.
void gate_capsules(CapsuleResult& r, const CapsuleWeights& w) {
  r.probabilities.resize(r.contexts.rows());
  r.capsules.resize(r.contexts.rows(), r.contexts.cols());
  for (Index c = 0; c < r.contexts.rows(); ++c) {
    const float z = w.w.row(c).dot(r.contexts.row(c)) + w.b(c);
    r.probabilities(c) = 1.0f / (1.0f + std::exp(-z));
    r.capsules.row(c) = r.probabilities(c) * r.contexts.row(c);
  }
}

}  // namespace

CapsuleResult capsule_attention(const MatrixCRef& x, const CapsuleWeights& w, const GlobalParams& params,
                                const TraceTag& tag) {
  assert(w.queries.cols() == x.cols() && w.w.rows() == w.queries.rows() && w.b.size() == w.queries.rows());
  AttentionResult a = global_attention(w.queries, x, x, ScoreWeights{}, params, {}, tag);
  CapsuleResult r;
  r.weights = std::move(a.weights);
  r.contexts = std::move(a.context);
  gate_capsules(r, w);
  return r;
}

MultiHeadCapsuleResult multi_head_capsule_attention(const MatrixCRef& x, const CapsuleWeights& w, int heads,
                                                    const GlobalParams& params, const TraceTag& tag) {
  const Index d = x.cols(), dh = d / heads, classes = w.queries.rows();
  assert(heads >= 1 && d % heads == 0 && w.queries.cols() == d);
  MultiHeadCapsuleResult r;
  r.contexts.resize(classes, d);
  r.weights = Matrix::Zero(classes, x.rows());
  for (int h = 0; h < heads; ++h) {
    const Index at = h * dh;
    AttentionResult a = global_attention(w.queries.middleCols(at, dh), x.middleCols(at, dh), x.middleCols(at, dh),
                                         ScoreWeights{}, params, {});
    if (tag.enabled()) tag.record(a.weights, h);
    r.contexts.middleCols(at, dh) = a.context;  // r_c = concat over heads
    r.weights += a.weights / static_cast<float>(heads);
    r.heads.push_back(std::move(a.weights));
  }
  gate_capsules(r, w);
  return r;
}

RowVector squash(const RowVector& s) {
  const float n2 = s.squaredNorm();
  if (n2 == 0.0f) return s;
  return (n2 / (1.0f + n2) / std::sqrt(n2)) * s;
}

Matrix capsule_predictions(const MatrixCRef& u, Index out_capsules, Index out_dim, std::uint64_t seed) {
  const Index n = u.rows(), d_in = u.cols();
  Matrix out(out_capsules * n, out_dim);
  // Uniform entries with variance 1 / d_in: a 512-word sentence needs 1.5 million of them (3 capsules x 16 x 64
  // per word), and a uniform draw is several times cheaper than a Box-Muller normal.
  const float a = std::sqrt(3.0f / static_cast<float>(std::max<Index>(1, d_in)));
  Matrix W(out_dim, d_in);
  for (Index j = 0; j < out_capsules; ++j) {
    for (Index i = 0; i < n; ++i) {
      const std::uint64_t stream = static_cast<std::uint64_t>(j) * 1000003u + static_cast<std::uint64_t>(i);
      SplitMix64 g(mix_seed(seed, 90 + stream));
      for (Index e = 0; e < W.size(); ++e) W.data()[e] = (2.0f * g.uniform() - 1.0f) * a;  // W_ij
      out.row(j * n + i).noalias() = u.row(i) * W.transpose();
    }
  }
  return out;
}

RoutingResult dynamic_routing(const MatrixCRef& predictions, Index out_capsules, int iterations, const TraceTag& tag) {
  assert(out_capsules > 0 && iterations >= 1 && predictions.rows() % out_capsules == 0);
  const Index J = out_capsules, n = predictions.rows() / out_capsules, d = predictions.cols();
  const auto u_hat = [&](Index j, Index i) { return predictions.row(j * n + i); };
  RoutingResult r;
  Matrix b = Matrix::Zero(J, n);
  r.outputs = Matrix::Zero(J, d);
  for (int t = 0; t < iterations; ++t) {
    r.logits.push_back(b);
    Matrix c = softmax_cols(b);  // c_i = softmax over j: each column sums to 1
    for (Index j = 0; j < J; ++j) {
      RowVector s = RowVector::Zero(d);
      for (Index i = 0; i < n; ++i) s.noalias() += c(j, i) * u_hat(j, i);
      r.outputs.row(j) = squash(s);
    }
    for (Index j = 0; j < J; ++j) {
      for (Index i = 0; i < n; ++i) b(j, i) += u_hat(j, i).dot(r.outputs.row(j));
    }
    if (tag.enabled()) tag.named("iteration " + std::to_string(t)).record(c);
    r.coupling.push_back(std::move(c));
  }
  r.lengths = r.outputs.rowwise().norm();
  return r;
}

}  // namespace attn
