#include "attn/mechanisms/transformer_xl.h"

#include "attn/mechanisms/blocks.h"
#include "attn/mechanisms/normalise.h"
#include "attn/random.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

namespace attn {

std::vector<TransformerXLLayer> random_transformer_xl_weights(Index d, int layers, std::uint64_t seed) {
  const float s = 1.0f / std::sqrt(static_cast<float>(d));
  const auto near_identity = [&](std::uint64_t k) {
    return Matrix(Matrix::Identity(d, d) + 0.5f * random_normal(d, d, k, s));
  };
  std::vector<TransformerXLLayer> out;
  for (int l = 0; l < layers; ++l) {
    const std::uint64_t base = mix_seed(seed, 200 + 10 * static_cast<std::uint64_t>(l));
    TransformerXLLayer w;
    w.Wq = near_identity(mix_seed(base, 1));
    w.Wk = near_identity(mix_seed(base, 2));
    w.Wr = random_normal(d, d, mix_seed(base, 3), s);
    w.Wv = near_identity(mix_seed(base, 4));
    w.Wo = near_identity(mix_seed(base, 5));
    w.u = random_normal(1, d, mix_seed(base, 6), 1.0f);
    w.v = random_normal(1, d, mix_seed(base, 7), 1.0f);
    out.push_back(std::move(w));
  }
  return out;
}

Matrix relative_encodings(Index count, Index d) {
  const Index half = d / 2;
  Matrix R = Matrix::Zero(count, d);
  for (Index k = 0; k < count; ++k) {
    for (Index i = 0; i < half; ++i) {
      const double f = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d));
      R(k, i) = static_cast<float>(std::sin(static_cast<double>(k) * f));
      R(k, half + i) = static_cast<float>(std::cos(static_cast<double>(k) * f));
    }
  }
  return R;
}

namespace {

// One layer over one segment: h (L x d) attends over [memory; h]; returns the layer's output (L x d).
Matrix xl_layer(const Matrix& memory, const Matrix& h, const TransformerXLLayer& w, const Matrix& R, XLAttention& out) {
  const Index M = memory.rows(), L = h.rows(), d = h.cols();
  Matrix context(M + L, d);
  context.topRows(M) = memory;
  context.bottomRows(L) = h;
  const Matrix q = h * w.Wq, k = context * w.Wk, value = context * w.Wv;
  const Matrix r = R.topRows(M + L) * w.Wr;  // row t: W_R R_t, distance t
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const Matrix ac = q * k.transpose(), qr = q * r.transpose();
  const RowVector uk = w.u * k.transpose(), vr = w.v * r.transpose();
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto& t : out.terms) t.setConstant(L, M + L, nan);
  Matrix logits = Matrix::Constant(L, M + L, -std::numeric_limits<float>::infinity());
  for (Index i = 0; i < L; ++i) {
    for (Index j = 0; j <= M + i; ++j) {  // causal: key j sits at or before query i's place M + i
      const Index distance = M + i - j;
      out.terms[0](i, j) = ac(i, j) * scale;
      out.terms[1](i, j) = qr(i, distance) * scale;
      out.terms[2](i, j) = uk(j) * scale;
      out.terms[3](i, j) = vr(distance) * scale;
      logits(i, j) = out.terms[0](i, j) + out.terms[1](i, j) + out.terms[2](i, j) + out.terms[3](i, j);
    }
  }
  out.memory = M;
  out.weights = softmax_rows(logits);
  Matrix next = h + (out.weights * value) * w.Wo;
  const Vector ones = Vector::Ones(d), zeros = Vector::Zero(d);
  layer_norm_inplace(next, ones, zeros);
  return next;
}

void record_segment(const std::vector<XLAttention>& layers, Index begin, Index L, std::size_t segment,
                    const TraceTag& tag) {
  Labels rows, cols;
  const bool labelled = tag.rows != nullptr;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const XLAttention& a = layers[l];
    if (labelled) {
      rows.assign(tag.rows->begin() + begin, tag.rows->begin() + begin + L);
      cols.clear();
      for (Index j = begin - a.memory; j < begin; ++j)
        cols.push_back("[m] " + (*tag.rows)[static_cast<std::size_t>(j)]);
      cols.insert(cols.end(), rows.begin(), rows.end());
    }
    TraceTag t = (labelled ? tag.with_labels(&rows, &cols) : tag).with_axes("segment", "memory | segment");
    t.layer = static_cast<int>(l);
    // Layers from 0 as in the Transformer tab; segments, like iterations and hops, from 1.
    const std::string suffix = " \u00b7 layer " + std::to_string(l) + " \u00b7 segment " + std::to_string(segment);
    t.named("attention" + suffix).record(a.weights);
    for (int k = 0; k < 4; ++k) t.named(kXLTermNames[k] + suffix).record(a.terms[static_cast<std::size_t>(k)]);
  }
}

}  // namespace

TransformerXLResult transformer_xl(const MatrixCRef& x, const std::vector<TransformerXLLayer>& layers,
                                   Index segment_length, const TraceTag& tag, const std::atomic<bool>* cancel,
                                   const std::function<void(int, int)>& progress) {
  assert(segment_length >= 1 && !layers.empty());
  const Index n = x.rows(), d = x.cols();
  const Matrix R = relative_encodings(2 * segment_length, d);
  TransformerXLResult result;
  result.output.resize(n, d);
  std::vector<Matrix> memory(layers.size(), Matrix(0, d));  // per layer: the previous segment's input to it
  const auto segments = static_cast<int>((n + segment_length - 1) / segment_length);
  for (Index begin = 0; begin < n; begin += segment_length) {
    if (cancel && cancel->load(std::memory_order_relaxed)) break;
    const Index L = std::min(segment_length, n - begin);
    std::vector<XLAttention> attention(layers.size());
    Matrix h = x.middleRows(begin, L);
    for (std::size_t l = 0; l < layers.size(); ++l) {
      Matrix next = xl_layer(memory[l], h, layers[l], R, attention[l]);
      memory[l] = std::move(h);
      h = std::move(next);
    }
    result.output.middleRows(begin, L) = h;
    if (tag.enabled()) record_segment(attention, begin, L, result.segments.size(), tag);
    result.segments.push_back(std::move(attention));
    if (progress) progress(static_cast<int>(result.segments.size()), segments);
  }
  return result;
}

}  // namespace attn
