#include "attn/mechanisms/blocks.h"

#include <cassert>
#include <cmath>
#include <numbers>

namespace attn {

void layer_norm_inplace(Eigen::Ref<Matrix> x, const VectorCRef& gamma, const VectorCRef& beta, float eps) {
  assert(gamma.size() == x.cols() && beta.size() == x.cols());
  const float inv_d = 1.0f / static_cast<float>(std::max<Index>(1, x.cols()));
  for (Index i = 0; i < x.rows(); ++i) {
    auto row = x.row(i).array();
    const float mean = row.sum() * inv_d;
    row -= mean;
    const float var = row.square().sum() * inv_d;
    row *= 1.0f / std::sqrt(var + eps);
    row = row * gamma.transpose().array() + beta.transpose().array();
  }
}

Matrix layer_norm(const MatrixCRef& x, const VectorCRef& gamma, const VectorCRef& beta, float eps) {
  Matrix y = x;
  layer_norm_inplace(y, gamma, beta, eps);
  return y;
}

float gelu(float x, GeluForm form) {
  if (form == GeluForm::Erf) return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(std::numbers::sqrt2 / 2.0)));
  constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

Matrix gelu(const MatrixCRef& x, GeluForm form) {
  Matrix y(x.rows(), x.cols());
  if (form == GeluForm::Erf) {
    y = x.unaryExpr([](float v) { return gelu(v, GeluForm::Erf); });
  } else {
    constexpr float k = 0.7978845608028654f;
    y = (0.5f * x.array() * (1.0f + (k * (x.array() + 0.044715f * x.array().cube())).tanh())).matrix();
  }
  return y;
}

void linear_into(Matrix& y, const MatrixCRef& x, const MatrixCRef& W, const VectorCRef& b) {
  assert(W.cols() == x.cols());
  y.resize(x.rows(), W.rows());
  y.noalias() = x * W.transpose();
  if (b.size() != 0) {
    assert(b.size() == W.rows());
    y.rowwise() += b.transpose();
  }
}

Matrix linear(const MatrixCRef& x, const MatrixCRef& W, const VectorCRef& b) {
  Matrix y;
  linear_into(y, x, W, b);
  return y;
}

Matrix feed_forward(const MatrixCRef& x, const MatrixCRef& W1, const VectorCRef& b1, const MatrixCRef& W2,
                    const VectorCRef& b2, Activation act) {
  Matrix h = linear(x, W1, b1);
  switch (act) {
    case Activation::Relu: h = h.cwiseMax(0.0f); break;
    case Activation::GeluErf: h = gelu(h, GeluForm::Erf); break;
    case Activation::GeluTanh: h = gelu(h, GeluForm::Tanh); break;
  }
  return linear(h, W2, b2);
}

Matrix sinusoidal_positions(Index n, Index d) {
  Matrix pe(n, d);
  for (Index pos = 0; pos < n; ++pos) {
    for (Index i = 0; i < d; ++i) {
      const double freq = std::pow(10000.0, -static_cast<double>(2 * (i / 2)) / static_cast<double>(d));
      const double a = static_cast<double>(pos) * freq;
      pe(pos, i) = static_cast<float>(i % 2 == 0 ? std::sin(a) : std::cos(a));
    }
  }
  return pe;
}

}  // namespace attn
