#include "attn/mechanisms/convs2s.h"

#include "attn/mechanisms/normalise.h"
#include "attn/random.h"

#include <cassert>
#include <cmath>
#include <string>

namespace attn {

namespace {

GatedConv random_gated_conv(Index d, int kernel, std::uint64_t seed) {
  GatedConv c;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d * kernel));
  for (int t = 0; t < kernel; ++t) {
    c.W.push_back(random_normal(d, 2 * d, mix_seed(seed, static_cast<std::uint64_t>(t)), scale));
  }
  c.b = RowVector::Zero(2 * d);
  return c;
}

}  // namespace

ConvS2SWeights random_convs2s_weights(Index d, int layers, int kernel, std::uint64_t seed) {
  ConvS2SWeights w;
  w.encoder = random_gated_conv(d, kernel, mix_seed(seed, 300));
  for (int l = 0; l < layers; ++l) {
    const std::uint64_t base = mix_seed(seed, 310 + static_cast<std::uint64_t>(l));
    ConvS2SWeights::Layer layer;
    layer.conv = random_gated_conv(d, kernel, mix_seed(base, 1));
    // Near the identity: the layer's state still points at the words it came from.
    layer.Wd = Matrix::Identity(d, d) + random_normal(d, d, mix_seed(base, 2), 0.5f / std::sqrt(static_cast<float>(d)));
    layer.bd = RowVector::Zero(d);
    w.layers.push_back(std::move(layer));
  }
  return w;
}

Matrix gated_convolution(const MatrixCRef& x, const GatedConv& conv, bool causal) {
  const Index n = x.rows(), d = x.cols(), k = static_cast<Index>(conv.W.size());
  assert(k >= 1 && conv.W[0].rows() == d && conv.W[0].cols() == 2 * d);
  Matrix y = conv.b.replicate(n, 1);
  for (Index t = 0; t < k; ++t) {
    // Tap t reads position i - t (causal) or i + t - k / 2 (centred).
    const Index shift = causal ? -t : t - k / 2;
    const Index first = std::max<Index>(0, -shift), last = std::min<Index>(n, n - shift);  // i with 0 <= i + shift < n
    if (last > first)
      y.middleRows(first, last - first).noalias() += x.middleRows(first + shift, last - first) * conv.W[t];
  }
  Matrix out(n, d);
  for (Index i = 0; i < n; ++i) {
    for (Index c = 0; c < d; ++c) out(i, c) = y(i, c) / (1.0f + std::exp(-y(i, d + c)));  // A * sigmoid(B)
  }
  return out;
}

ConvS2SResult convs2s_attention(const MatrixCRef& g, const MatrixCRef& e, const ConvS2SWeights& w,
                                const TraceTag& tag) {
  ConvS2SResult r;
  r.z = e + gated_convolution(e, w.encoder, false);
  const Matrix values = r.z + e;  // z_j + e_j: what each attention reads out
  Matrix h = g;
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const auto& layer = w.layers[l];
    const Matrix o = gated_convolution(h, layer.conv, true);
    const Matrix d = ((o * layer.Wd).rowwise() + layer.bd) + g;
    Matrix a = d * r.z.transpose();
    softmax_rows_inplace(a);
    h += o + a * values;
    // The layer is in the name, so that the Lab's step slider walks the layers as one series.
    if (tag.enabled()) tag.named("attention \u00b7 decoder layer " + std::to_string(l)).record(a);
    r.weights.push_back(std::move(a));
  }
  r.output = std::move(h);
  return r;
}

}  // namespace attn
