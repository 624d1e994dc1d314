#include "attn/mechanisms/normalise.h"

#include "exp_kernel.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace attn {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

std::string_view to_string(Normaliser kind) {
  switch (kind) {
    case Normaliser::Softmax: return "softmax";
    case Normaliser::Sparsemax: return "sparsemax";
  }
  return "unknown";
}

Matrix causal_mask(Index n, Index m) {
  Matrix mask = Matrix::Zero(n, m);
  const Index shift = m - n;
  for (Index i = 0; i < n; ++i) {
    const Index first_hidden = std::max<Index>(0, i + shift + 1);
    if (first_hidden < m) mask.row(i).tail(m - first_hidden).setConstant(kNegInf);
  }
  return mask;
}

Matrix padding_mask(Index n, Index m, Index valid_keys) {
  Matrix mask = Matrix::Zero(n, m);
  const Index start = std::clamp<Index>(valid_keys, 0, m);
  if (start < m) mask.rightCols(m - start).setConstant(kNegInf);
  return mask;
}

Matrix mask_from(const Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& keep) {
  return keep.select(Matrix::Zero(keep.rows(), keep.cols()), Matrix::Constant(keep.rows(), keep.cols(), kNegInf));
}

Matrix combine_masks(const Matrix& a, const Matrix& b) {
  if (a.size() == 0) return b;
  if (b.size() == 0) return a;
  assert(a.rows() == b.rows() && a.cols() == b.cols());
  return a + b;
}

void softmax_rows_inplace(Eigen::Ref<Matrix> s, float temperature) {
  const float inv_t = 1.0f / temperature;
  for (Index i = 0; i < s.rows(); ++i) {
    auto row = s.row(i);
    if (row.hasNaN()) {  // NaN scores (from non-finite weights): NaN weights, which callers count and report
      row.setConstant(std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const float mx = row.maxCoeff();
    if (mx == -std::numeric_limits<float>::infinity()) {  // every key masked: nothing to attend to
      row.setZero();
      continue;
    }
    if (!std::isfinite(mx)) {  // +inf scores (an overflow): the limit, equal weight on each of them
      const auto top = (row.array() == mx).cast<float>().eval();
      row = top / top.sum();
      continue;
    }
    // Rows of a row-major Ref are contiguous.
    const float sum = detail::exp_shifted_sum(row.data(), row.size(), mx, inv_t);
    row *= 1.0f / sum;
  }
}

Matrix softmax_rows(const MatrixCRef& scores, float temperature, const Matrix& mask) {
  Matrix s = scores * (1.0f / temperature);
  if (mask.size() != 0) {
    assert(mask.rows() == s.rows() && mask.cols() == s.cols());
    s += mask;
  }
  softmax_rows_inplace(s);
  return s;
}

Matrix softmax_cols(const MatrixCRef& scores) {
  Matrix t = scores.transpose();
  softmax_rows_inplace(t);
  return t.transpose();
}

Matrix sparsemax_rows(const MatrixCRef& scores, float temperature, const Matrix& mask) {
  Matrix out = Matrix::Zero(scores.rows(), scores.cols());
  std::vector<float> z;
  for (Index i = 0; i < scores.rows(); ++i) {
    z.clear();
    for (Index j = 0; j < scores.cols(); ++j) {
      const float m = mask.size() ? mask(i, j) : 0.0f;
      const float v = scores(i, j) / temperature + m;
      if (std::isfinite(v)) z.push_back(v);
    }
    if (z.empty()) continue;
    // tau from the sorted scores: the largest k with 1 + k z_(k) > sum_{r<=k} z_(r).
    std::sort(z.begin(), z.end(), std::greater<>());
    double cumsum = 0.0, tau = 0.0;
    for (std::size_t k = 0; k < z.size(); ++k) {
      cumsum += z[k];
      const double t = (cumsum - 1.0) / static_cast<double>(k + 1);
      if (z[k] > t) tau = t;
    }
    for (Index j = 0; j < scores.cols(); ++j) {
      const float m = mask.size() ? mask(i, j) : 0.0f;
      const float v = scores(i, j) / temperature + m;
      if (std::isfinite(v)) out(i, j) = std::max(0.0f, static_cast<float>(v - tau));
    }
  }
  return out;
}

Matrix normalise_rows(Normaliser kind, const MatrixCRef& scores, float temperature, const Matrix& mask) {
  return kind == Normaliser::Sparsemax ? sparsemax_rows(scores, temperature, mask)
                                       : softmax_rows(scores, temperature, mask);
}

}  // namespace attn
