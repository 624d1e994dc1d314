// The backward pass's pieces (backward_ops.h).
#include "backward_ops.h"

#include "norm_math.h"
#include "row_streams.h"

#include "attn/on_demand_attention.h"

#include <unsupported/Eigen/SpecialFunctions>

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace attn::models::backward_ops {

namespace {

using Array = Eigen::ArrayXf;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;
using Strided = Eigen::OuterStride<>;
using MapS = Eigen::Map<Matrix, 0, Strided>;
using ConstMapS = Eigen::Map<const Matrix, 0, Strided>;

constexpr float kSqrtHalf = 0.70710678118654752f;
constexpr float kTanhK = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kInvSqrt2Pi = 0.3989422804014327f;

// Floats of a 16-bit weight widened at once in the backward's products (16 MiB).
constexpr Index kChunkFloats = Index{1} << 22;

}  // namespace

Act act_of(Activation a) {
  switch (a) {
    case Activation::GeluErf: return Act::GeluErf;
    case Activation::GeluTanh: return Act::GeluTanh;
    case Activation::Relu: return Act::Relu;
  }
  return Act::GeluErf;
}

Act act_of(GatedActivation a) {
  switch (a) {
    case GatedActivation::Silu: return Act::Silu;
    case GatedActivation::GeluTanh: return Act::GeluTanh;
    case GatedActivation::GeluErf: return Act::GeluErf;
  }
  return Act::Silu;
}

void act_forward(Act a, const float* in, float* out, Index n) {
  ConstArrayMap x(in, n);
  ArrayMap y(out, n);
  switch (a) {
    case Act::GeluErf: y = 0.5f * x * (1.0f + (x * kSqrtHalf).erf()); break;
    case Act::GeluTanh: y = 0.5f * x * (1.0f + (kTanhK * (x + 0.044715f * x.cube())).tanh()); break;
    case Act::Relu: y = x.max(0.0f); break;
    case Act::Silu: y = x / (1.0f + (-x).exp()); break;
  }
}

void act_backward(Act a, bool lrp, const float* in, const float* dy, float* dx, Index n) {
  ConstArrayMap x(in, n), g(dy, n);
  ArrayMap out(dx, n);
  if (lrp) {
    // The identity rule: relevance passes through, so the local "gradient" is f(x) / x; f'(0) = 1/2 (GELU, SiLU).
    Array f(n);
    act_forward(a, in, f.data(), n);
    const float at_zero = a == Act::Relu ? 0.0f : 0.5f;
    out = g * (x.abs() < 1e-6f).select(Array::Constant(n, at_zero), f / x);
    return;
  }
  switch (a) {
    case Act::GeluErf:
      out = g * (0.5f * (1.0f + (x * kSqrtHalf).erf()) + x * (-0.5f * x.square()).exp() * kInvSqrt2Pi);
      break;
    case Act::GeluTanh: {
      const Array t = (kTanhK * (x + 0.044715f * x.cube())).tanh();
      out = g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t.square()) * kTanhK * (1.0f + 3.0f * 0.044715f * x.square()));
      break;
    }
    case Act::Relu: out = g * (x > 0.0f).cast<float>(); break;
    case Act::Silu: {
      const Array s = 1.0f / (1.0f + (-x).exp());
      out = g * s * (1.0f + x * (1.0f - s));
      break;
    }
  }
}

void Norm::forward(const float* x, float* y, Index d) const {
  if (rms) {
    rms_norm(x, y, *gamma, d, eps);
  } else {
    layer_norm_row(x, y, *gamma, *beta, d, eps);
  }
}

void Norm::backward(bool lrp, const float* x, const float* dy, float* dx, Index d) const {
  ConstArrayMap X(x, d);
  const Array g = ConstArrayMap(dy, d) * gamma->transpose().array();
  ArrayMap out(dx, d);
  if (rms) {
    const float inv = rms_inverse(x, d, eps);
    if (lrp) {
      out += g * inv;
    } else {
      const Array xhat = X * inv;
      out += inv * (g - xhat * (g * xhat).mean());
    }
    return;
  }
  const float mean = X.sum() / static_cast<float>(d);
  const float var = (X - mean).square().sum() / static_cast<float>(d);
  const float inv = 1.0f / std::sqrt(var + eps);
  if (lrp) {
    out += inv * (g - g.mean());
  } else {
    const Array xhat = (X - mean) * inv;
    out += inv * (g - g.mean() - xhat * (g * xhat).mean());
  }
}

Index Linear::in() const { return stored ? stored->cols : dense->rows(); }
Index Linear::out() const { return stored ? stored->rows : dense->cols(); }

void Linear::forward(const float* x, Index n, Index ldx, float* y, Index ldy, std::vector<float>& scratch) const {
  if (stored) {
    stored_linear(x, n, ldx, *stored, y, ldy, scratch);
  } else {
    MapS(y, n, out(), Strided(ldy)).noalias() = ConstMapS(x, n, in(), Strided(ldx)) * *dense;
  }
  if (bias && bias->size() == out()) MapS(y, n, out(), Strided(ldy)).rowwise() += *bias;
}

void Linear::backward(const float* dy, Index n, Index ldy, float* dx, Index ldx, std::vector<float>& scratch) const {
  const Index I = in(), O = out();
  MapS DX(dx, n, I, Strided(ldx));
  const ConstMapS DY(dy, n, O, Strided(ldy));
  if (dense) {
    DX.noalias() += DY * dense->transpose();
    return;
  }
  if (const float* w = stored->f32()) {
    DX.noalias() += DY * ConstMapS(w, O, I, Strided(I));
    return;
  }
  // A 16-bit matrix: widened a chunk of its rows (output features) at a time, each chunk's product added.
  const Index chunk = std::max<Index>(1, kChunkFloats / std::max<Index>(1, I));
  for (Index r0 = 0; r0 < O; r0 += chunk) {
    const Index rows = std::min(chunk, O - r0);
    if (scratch.size() < static_cast<std::size_t>(rows * I)) scratch.resize(static_cast<std::size_t>(rows * I));
    stored->rows_to_float(r0, rows, scratch.data());
    DX.noalias() += DY.middleCols(r0, rows) * ConstMapS(scratch.data(), rows, I, Strided(I));
  }
}

StoredMatrix stored_view(const Matrix& m) {
  StoredMatrix s;
  s.dtype = io::DType::F32;
  s.data = m.data();
  s.rows = m.rows();
  s.cols = m.cols();
  return s;
}

namespace {

// The scores of one block of query rows [r0, r0 + rows) of one head of sequence b over its first `keys` keys, made
// weights in place (the forward's softmax_row: soft-cap, causal and window mask); `raw` (when not null) keeps the
// scores before the cap.
void block_weights(const AttentionShape& s, const float* qkv, Index b, Index h, Index r0, Index rows, Index keys,
                   float* S, float* raw) {
  const Index W = s.width(), hd = s.dim, g = h / (s.heads / s.kv_heads), qn = s.heads * hd;
  const float* q = qkv + (b * s.T + r0) * W + h * hd;
  const float* k = qkv + b * s.T * W + qn + g * hd;
  attention_scores(q, W, k, W, rows, keys, hd, S, keys, rows < 8);
  if (raw) std::copy_n(S, rows * keys, raw);
  for (Index i = 0; i < rows; ++i) {
    const Index row = r0 + i;
    const Index hi = s.causal ? row : keys - 1;
    const Index lo = s.window > 0 ? std::max<Index>(0, row - s.window + 1) : 0;
    softmax_row(S + i * keys, row, lo, hi, keys, s.softcap);
  }
}

// Keys a block of query rows ending at row `end` (exclusive) sees.
Index keys_of(const AttentionShape& s, Index end) { return s.causal ? end : s.T; }

// Whether a layer's attention is worth a second thread: a few rows of a small model (a keystroke's work) run faster
// on one than with a parallel region's wake-up, as decoder_run.cpp's attention decides.
bool worth_threads(const AttentionShape& s) {
  return static_cast<double>(s.B) * s.heads * static_cast<double>(s.T) * static_cast<double>(s.T) * s.dim > 2e6;
}

struct Scratch {
  std::vector<float> S, raw, dP, dS;
  float* get(std::vector<float>& v, Index n) {
    if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
    return v.data();
  }
};

}  // namespace

void attention_forward(const AttentionShape& s, const float* qkv, float* z) {
  const Index W = s.width(), hd = s.dim, qn = s.heads * hd, kvn = s.kv_heads * hd, group = s.heads / s.kv_heads;
  const Index blocks = (s.T + kScoreBlock - 1) / kScoreBlock, tasks = s.B * s.heads * blocks;
  std::vector<Scratch> scratch(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel for schedule(dynamic) if (tasks > 1 && worth_threads(s))
  for (Index task = 0; task < tasks; ++task) {
    const Index b = task / (s.heads * blocks), h = (task / blocks) % s.heads, r0 = (task % blocks) * kScoreBlock;
    const Index rows = std::min(kScoreBlock, s.T - r0), keys = keys_of(s, r0 + rows), g = h / group;
    Scratch& sc = scratch[static_cast<std::size_t>(omp_get_thread_num())];
    float* S = sc.get(sc.S, rows * keys);
    block_weights(s, qkv, b, h, r0, rows, keys, S, nullptr);
    const ConstMapS P(S, rows, keys, Strided(keys));
    const ConstMapS V(qkv + b * s.T * W + qn + kvn + g * hd, keys, hd, Strided(W));
    MapS Z(z + (b * s.T + r0) * qn + h * hd, rows, hd, Strided(qn));
    block_product(Z, P, V);
  }
}

namespace {

// The backward of one head of sequence b: dQ of its rows into dqkv, its dK and dV added to the group's columns
// (the caller runs the heads of one group on one thread).
void head_backward(const AttentionShape& s, bool lrp, int layer, Index b, Index h, const float* qkv, const float* dz,
                   float* dqkv, const BackwardOptions::AttentionBlock& on_block, Scratch& sc) {
  const Index W = s.width(), hd = s.dim, qn = s.heads * hd, kvn = s.kv_heads * hd, g = h / (s.heads / s.kv_heads);
  const float* base = qkv + b * s.T * W;
  float* dbase = dqkv + b * s.T * W;
  const ConstMapS K(base + qn + g * hd, s.T, hd, Strided(W)), V(base + qn + kvn + g * hd, s.T, hd, Strided(W));
  MapS dK(dbase + qn + g * hd, s.T, hd, Strided(W)), dV(dbase + qn + kvn + g * hd, s.T, hd, Strided(W));
  const float value_share = lrp ? 0.5f : 1.0f, score_share = lrp ? 0.25f : 1.0f;
  for (Index r0 = 0; r0 < s.T; r0 += kScoreBlock) {
    const Index rows = std::min(kScoreBlock, s.T - r0), keys = keys_of(s, r0 + rows);
    float* S = sc.get(sc.S, rows * keys);
    float* raw = s.softcap > 0.0f ? sc.get(sc.raw, rows * keys) : nullptr;
    block_weights(s, qkv, b, h, r0, rows, keys, S, raw);
    const ConstMapS P(S, rows, keys, Strided(keys));
    const ConstMapS dZ(dz + (b * s.T + r0) * qn + h * hd, rows, hd, Strided(qn));
    MapS dP(sc.get(sc.dP, rows * keys), rows, keys, Strided(keys));
    block_product(dP, dZ, V.topRows(keys).transpose());
    if (on_block && b == 0) on_block(layer, static_cast<int>(h), r0, rows, keys, S, dP.data(), keys);
    MapS dS(sc.get(sc.dS, rows * keys), rows, keys, Strided(keys));
    for (Index i = 0; i < rows; ++i) {
      const float D = (P.row(i).array() * dP.row(i).array()).sum();
      dS.row(i).array() = P.row(i).array() * (dP.row(i).array() - D) * score_share;
      if (raw) {
        // The soft-cap c tanh(x / c): its derivative 1 - tanh^2, or AttnLRP's identity rule capped / raw.
        auto capped = (Eigen::Map<const Eigen::ArrayXf>(raw + i * keys, keys) / s.softcap).tanh() * s.softcap;
        const auto x = Eigen::Map<const Eigen::ArrayXf>(raw + i * keys, keys);
        if (lrp) {
          dS.row(i).array() *= (x.abs() < 1e-6f).select(1.0f, capped / x).transpose();
        } else {
          dS.row(i).array() *= (1.0f - (capped / s.softcap).square()).transpose();
        }
      }
    }
    const ConstMapS Q(base + r0 * W + h * hd, rows, hd, Strided(W));
    MapS dQ(dbase + r0 * W + h * hd, rows, hd, Strided(W));
    dQ.noalias() += dS * K.topRows(keys);
    dK.topRows(keys).noalias() += dS.transpose() * Q;
    dV.topRows(keys).noalias() += value_share * (P.transpose() * dZ);
  }
}

}  // namespace

void attention_backward(const AttentionShape& s, bool lrp, int layer, const float* qkv, const float* dz, float* dqkv,
                        const BackwardOptions::AttentionBlock& on_block, const std::atomic<bool>* cancel) {
  const Index group = s.heads / s.kv_heads, tasks = s.B * s.kv_heads;
  std::vector<Scratch> scratch(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel for schedule(dynamic) if (tasks > 1 && worth_threads(s))
  for (Index task = 0; task < tasks; ++task) {
    if (cancel && cancel->load(std::memory_order_relaxed)) continue;
    const Index b = task / s.kv_heads, g = task % s.kv_heads;
    Scratch& sc = scratch[static_cast<std::size_t>(omp_get_thread_num())];
    for (Index h = g * group; h < (g + 1) * group; ++h) head_backward(s, lrp, layer, b, h, qkv, dz, dqkv, on_block, sc);
  }
}

}  // namespace attn::models::backward_ops
