#include "attn/mechanisms/scores.h"

#include "attn/random.h"

#include <cassert>
#include <cmath>

namespace attn {

std::string_view to_string(ScoreKind kind) {
  switch (kind) {
    case ScoreKind::Dot: return "dot";
    case ScoreKind::ScaledDot: return "scaled dot";
    case ScoreKind::General: return "general";
    case ScoreKind::Concat: return "concat";
    case ScoreKind::Additive: return "additive";
    case ScoreKind::Cosine: return "cosine";
  }
  return "unknown";
}

Matrix dot_score(const MatrixCRef& q, const MatrixCRef& k) {
  assert(q.cols() == k.cols());
  Matrix s(q.rows(), k.rows());
  s.noalias() = q * k.transpose();
  return s;
}

Matrix scaled_dot_score(const MatrixCRef& q, const MatrixCRef& k) {
  Matrix s = dot_score(q, k);
  s *= 1.0f / std::sqrt(static_cast<float>(std::max<Index>(1, q.cols())));
  return s;
}

Matrix general_score(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& W) {
  assert(W.rows() == q.cols() && W.cols() == k.cols());
  Matrix qw(q.rows(), W.cols());
  qw.noalias() = q * W;
  Matrix s(q.rows(), k.rows());
  s.noalias() = qw * k.transpose();
  return s;
}

namespace {
// score(i, j) = v . tanh(a_i + b_j) for projected queries a (n x da) and keys b (m x da).
Matrix tanh_sum_score(const Matrix& a, const Matrix& b, const VectorCRef& v) {
  Matrix s(a.rows(), b.rows());
  Eigen::Array<float, 1, Eigen::Dynamic> row(a.cols());
  for (Index i = 0; i < a.rows(); ++i) {
    for (Index j = 0; j < b.rows(); ++j) {
      row = (a.row(i) + b.row(j)).array().tanh();
      s(i, j) = (row.matrix() * v)(0);
    }
  }
  return s;
}
}  // namespace

Matrix concat_score(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& W, const VectorCRef& v) {
  assert(W.cols() == q.cols() + k.cols() && W.rows() == v.size());
  // W [q; k] = W_q q + W_k k with W = [W_q W_k]: project each side once instead of every pair.
  Matrix a(q.rows(), W.rows());
  a.noalias() = q * W.leftCols(q.cols()).transpose();
  Matrix b(k.rows(), W.rows());
  b.noalias() = k * W.rightCols(k.cols()).transpose();
  return tanh_sum_score(a, b, v);
}

Matrix additive_score(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& W, const MatrixCRef& U,
                      const VectorCRef& v) {
  assert(W.cols() == q.cols() && U.cols() == k.cols() && W.rows() == U.rows() && W.rows() == v.size());
  Matrix a(q.rows(), W.rows());
  a.noalias() = q * W.transpose();
  Matrix b(k.rows(), U.rows());
  b.noalias() = k * U.transpose();
  return tanh_sum_score(a, b, v);
}

Matrix cosine_score(const MatrixCRef& q, const MatrixCRef& k) {
  Matrix s = dot_score(q, k);
  const Eigen::ArrayXf qn = q.rowwise().norm().array().max(1e-12f);
  const Eigen::ArrayXf kn = k.rowwise().norm().array().max(1e-12f);
  for (Index i = 0; i < s.rows(); ++i) s.row(i).array() /= qn(i) * kn.transpose();
  return s;
}

Matrix location_score(const MatrixCRef& q, const MatrixCRef& W) {
  assert(W.cols() == q.cols());
  Matrix s(q.rows(), W.rows());
  s.noalias() = q * W.transpose();
  return s;
}

Matrix score(ScoreKind kind, const MatrixCRef& q, const MatrixCRef& k, const ScoreWeights& w) {
  switch (kind) {
    case ScoreKind::Dot: return dot_score(q, k);
    case ScoreKind::ScaledDot: return scaled_dot_score(q, k);
    case ScoreKind::General: return general_score(q, k, w.W);
    case ScoreKind::Concat: return concat_score(q, k, w.W, w.v);
    case ScoreKind::Additive: return additive_score(q, k, w.W, w.U, w.v);
    case ScoreKind::Cosine: return cosine_score(q, k);
  }
  return dot_score(q, k);
}

ScoreWeights random_score_weights(ScoreKind kind, Index dq, Index dk, Index da, std::uint64_t seed) {
  ScoreWeights w;
  switch (kind) {
    case ScoreKind::General:
      // Near-identity plus noise keeps "similar words attend to each other" visible through W.
      w.W = Matrix::Identity(dq, dk) + xavier_uniform(dq, dk, mix_seed(seed, 1)) * 0.5f;
      break;
    case ScoreKind::Concat:
      w.W = xavier_uniform(da, dq + dk, mix_seed(seed, 2)) * 2.0f;
      w.v = xavier_uniform(da, 1, mix_seed(seed, 3)).col(0) * 4.0f;
      break;
    case ScoreKind::Additive:
      w.W = xavier_uniform(da, dq, mix_seed(seed, 4)) * 2.0f;
      w.U = xavier_uniform(da, dk, mix_seed(seed, 5)) * 2.0f;
      w.v = xavier_uniform(da, 1, mix_seed(seed, 6)).col(0) * 4.0f;
      break;
    case ScoreKind::Dot:
    case ScoreKind::ScaledDot:
    case ScoreKind::Cosine: break;
  }
  return w;
}

}  // namespace attn
