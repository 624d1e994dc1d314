// The convolutional seq2seq model of tools/train/MODELS.md section 1 ("ConvS2S", Gehring et al. 2017), as
// tools/train/convs2s_torch.py trains it: loading, the encoder, and one decoder step for the rows of a beam.
//
// The encoder is mechanisms/convs2s.h's gated convolution, layer after layer. A decoder step computes only
// position t: each hypothesis keeps its layers' inputs at every earlier position (the state row), and the
// causal convolution of layer l reads the last k of them. Every product is bundled::multiply over the beam's
// rows, as the GRU decoders' are.
#include "seq2seq_impl.h"

#include "attn/mechanisms/normalise.h"

#include <cmath>
#include <string>

namespace attn::models::bundled::convs2s {

namespace {

constexpr float kHalf = 0.70710678118654752f;  // sqrt(1/2), the residual sums' scale

// A Conv1d weight [2d, d, k] as k taps d x 2d; causal taps reversed (tap t reads i - t).
Result<GatedConv> read_conv(TensorReader& r, const std::string& base, Index d, int kernel, bool causal) {
  Matrix flat;  // [2d, d k]: column c k + t is input channel c at torch tap t
  ATTN_ASSIGN(flat, r.flattened(base + ".weight", {2 * d, d, kernel}));
  GatedConv conv;
  for (int t = 0; t < kernel; ++t) {
    const int torch_tap = causal ? kernel - 1 - t : t;
    Matrix tap(d, 2 * d);
    for (Index c = 0; c < d; ++c) tap.row(c) = flat.col(c * kernel + torch_tap).transpose();
    conv.W.push_back(std::move(tap));
  }
  ATTN_ASSIGN(conv.b, r.vector(base + ".bias", 2 * d));
  return conv;
}

// GLU in place of the first d columns: out = A * sigmoid(B) for y = [A B].
void glu(const MatrixCRef& y, Eigen::Ref<Matrix> out) {
  const Index d = out.cols();
  for (Index i = 0; i < out.rows(); ++i) {
    for (Index c = 0; c < d; ++c) out(i, c) = y(i, c) / (1.0f + std::exp(-y(i, d + c)));
  }
}

}  // namespace

Result<void> read(Seq2SeqModel::Impl& m, TensorReader& r) {
  const auto& c = m.config;
  auto& p = m.convs2s;
  const Index d = c.embedding_size;
  const Index vs = static_cast<Index>(c.source_vocab.size()), vt = static_cast<Index>(c.target_vocab.size());
  ATTN_ASSIGN(p.source_embedding, r.matrix("encoder.embedding.weight", vs, d));
  ATTN_ASSIGN(p.source_positions, r.matrix("encoder.positions.weight", c.max_source_length, d));
  for (int l = 0; l < c.encoder_layers; ++l) {
    GatedConv conv;
    ATTN_ASSIGN(conv, read_conv(r, "encoder.convs." + std::to_string(l), d, c.encoder_kernel, false));
    p.encoder.push_back(std::move(conv));
  }
  ATTN_ASSIGN(p.target_embedding, r.matrix("decoder.embedding.weight", vt, d));
  ATTN_ASSIGN(p.target_positions, r.matrix("decoder.positions.weight", c.max_target_length, d));
  for (int l = 0; l < c.decoder_layers; ++l) {
    const std::string n = std::to_string(l);
    ConvS2SParts::Layer layer;
    ATTN_ASSIGN(layer.conv, read_conv(r, "decoder.convs." + n, d, c.decoder_kernel, true));
    ATTN_ASSIGN(layer.attention_t, r.linear_t("decoder.attention." + n + ".weight", d, d));
    ATTN_ASSIGN(layer.attention_b, r.vector("decoder.attention." + n + ".bias", d));
    p.decoder.push_back(std::move(layer));
  }
  ATTN_ASSIGN(p.out_t, r.linear_t("decoder.out.weight", vt, d));
  ATTN_ASSIGN(p.out_b, r.vector("decoder.out.bias", vt));
  return {};
}

void encode(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, const std::vector<int>& ids) {
  const auto& p = m.convs2s;
  const Index S = static_cast<Index>(ids.size()), d = m.config.embedding_size;
  Matrix e(S, d);
  for (Index j = 0; j < S; ++j) {
    e.row(j) = p.source_embedding.row(ids[static_cast<std::size_t>(j)]) + p.source_positions.row(j);
  }
  s.z = e;
  for (const GatedConv& conv : p.encoder) s.z = kHalf * (s.z + gated_convolution(s.z, conv, false));
  s.values = s.z + e;
}

void step(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, Index B, int t) {
  const auto& c = m.config;
  const auto& p = m.convs2s;
  const Index d = c.embedding_size, S = s.z.rows(), k = c.decoder_kernel;
  const Index positions = s.state.cols() / (Index{c.decoder_layers} * d);  // the T of the state's [L, T, d]
  const auto& tokens = s.search.tokens();

  s.g.resize(B, d);
  for (Index b = 0; b < B; ++b) {
    s.g.row(b) = p.target_embedding.row(tokens[static_cast<std::size_t>(b)]) + p.target_positions.row(t);
  }
  s.h = s.g;
  s.tap_rows.resize(B, d);
  s.conv.resize(B, 2 * d);
  s.o.resize(B, d);
  s.query_c.resize(B, d);
  for (Index l = 0; l < c.decoder_layers; ++l) {
    const auto& layer = p.decoder[static_cast<std::size_t>(l)];
    // This layer's input at position t joins the hypothesis' history.
    const Index base = l * positions * d;
    for (Index b = 0; b < B; ++b) s.state.row(b).segment(base + t * d, d) = s.h.row(b);
    // o = GLU(the causal convolution at t): tap i reads position t - i.
    s.conv = layer.conv.b.replicate(B, 1);
    for (Index i = 0; i < k && i <= t; ++i) {
      for (Index b = 0; b < B; ++b) s.tap_rows.row(b) = s.state.row(b).segment(base + (t - i) * d, d);
      multiply(s.conv, s.tap_rows, layer.conv.W[static_cast<std::size_t>(i)], true);
    }
    glu(s.conv, s.o);
    // q = o W^T + b + g; the layer's attention over z, its context over z + e.
    multiply(s.query_c, s.o, layer.attention_t);
    s.query_c.rowwise() += layer.attention_b;
    s.query_c += s.g;
    auto alpha = s.alpha.block(0, l * S, B, S);
    alpha.noalias() = s.query_c.lazyProduct(s.z.transpose());
    softmax_rows_inplace(alpha);
    multiply(s.context.topRows(B), alpha, s.values);
    s.h = kHalf * (s.h + s.o + s.context.topRows(B));
  }
  multiply(s.logits.topRows(B), s.h, p.out_t);
  s.logits.topRows(B).rowwise() += p.out_b;
}

}  // namespace attn::models::bundled::convs2s
