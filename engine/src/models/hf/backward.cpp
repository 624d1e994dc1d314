// The backward pass (attn/models/attribution.h): every family's layers described by one plan (LayerPlan: pre- or
// post-norm, the q/k/v pieces, the decoders' per-head norms and RoPE, the MLP plain or gated, Gemma's extra norms),
// run forward over B stacked sequences keeping what the backward needs per layer, then backward from the target's
// logit. When every layer's cache would pass the budget, only each layer's input is kept and the layer is run again
// just before its backward (activation checkpointing).
#include "backward.h"

#include "backward_ops.h"
#include "norm_math.h"
#include "transformer_impl.h"
#include "../../core/try.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::models {

namespace detail_backward {
using namespace backward_ops;

struct Piece {
  Linear linear;
  Index column = 0;  // its first column in the output row
};

// One layer of any family, as its forward runs it.
struct LayerPlan {
  bool post = false;  // BERT/DistilBERT: norm1 after attention's residual, norm2 after the MLP's
  Norm norm1, norm2;
  std::vector<Piece> qkv;  // into [q | k | v]
  AttentionShape shape;
  // Decoders: per-head q/k norms, RoPE (tables [T][half]) and the query scale, on q and k after the products.
  bool positioned = false;
  Norm q_norm, k_norm;
  std::vector<float> cos, sin;
  Index half = 0;
  float q_scale = 1;
  Linear out;
  Norm post_attn;  // Gemma
  bool gated = false;
  std::vector<Piece> up;  // [gate | up] when gated, else fc1
  Index ffn = 0;
  Act act = Act::GeluErf;
  Linear down;
  Norm post_ffn;  // Gemma
};

// What a layer's backward reads, [B T rows, width] each.
struct LayerCache {
  Matrix x_in, h1, qkv_raw, qkv, z, o_raw, x_mid, h2, u, m_raw;
};

}  // namespace detail_backward

namespace {

using namespace backward_ops;
using detail_backward::LayerCache;
using detail_backward::LayerPlan;
using detail_backward::Piece;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

template <class F>
void each_row(Index n, const F& f) {
#pragma omp parallel for schedule(static) if (n >= 64)
  for (Index i = 0; i < n; ++i) f(i);
}

Index up_width(const LayerPlan& p) { return p.gated ? 2 * p.ffn : p.ffn; }

std::size_t cache_floats_per_row(const LayerPlan& p, Index d) {
  const Index qn = p.shape.heads * p.shape.dim;
  return static_cast<std::size_t>(6 * d + (p.positioned ? 2 : 1) * p.shape.width() + qn + up_width(p));
}

// q/k norms, RoPE and the query scale of row i (position i mod T), as the decoders' forward does (LayerMath).
void position_row(const LayerPlan& p, const float* raw, float* row, Index t) {
  const Index hd = p.shape.dim, H = p.shape.heads, KV = p.shape.kv_heads;
  std::copy_n(raw, p.shape.width(), row);
  for (Index h = 0; h < H + KV; ++h) {
    float* v = row + h * hd;
    const Norm& nm = h < H ? p.q_norm : p.k_norm;
    if (nm) nm.forward(v, v, hd);
    rotate(v, p.cos.data() + t * p.half, p.sin.data() + t * p.half, p.half);
    if (h < H) ArrayMap(v, hd) *= p.q_scale;
  }
}

// The backward of position_row: dq/dk after positions (in `d`, overwritten) -> before.
void position_row_backward(const LayerPlan& p, bool lrp, const float* raw, float* d, Index t) {
  const Index hd = p.shape.dim, H = p.shape.heads, KV = p.shape.kv_heads;
  std::vector<float> dv(static_cast<std::size_t>(hd));
  for (Index h = 0; h < H + KV; ++h) {
    float* g = d + h * hd;
    if (h < H) ArrayMap(g, hd) *= p.q_scale;
    rotate(g, p.cos.data() + t * p.half, p.sin.data() + t * p.half, p.half, true);
    const Norm& nm = h < H ? p.q_norm : p.k_norm;
    if (!nm) continue;
    std::fill(dv.begin(), dv.end(), 0.0f);
    nm.backward(lrp, raw + h * hd, g, dv.data(), hd);
    std::copy(dv.begin(), dv.end(), g);
  }
}

// One layer forward on x [n, d] in place, filling `c`.
void layer_forward(const LayerPlan& p, Matrix& x, LayerCache& c, std::vector<float>& scratch) {
  const Index n = x.rows(), d = x.cols(), W = p.shape.width(), qn = p.shape.heads * p.shape.dim, T = p.shape.T;
  c.x_in = x;
  const Matrix* attn_in = &c.x_in;
  if (!p.post) {
    c.h1.resize(n, d);
    each_row(n, [&](Index i) { p.norm1.forward(x.row(i).data(), c.h1.row(i).data(), d); });
    attn_in = &c.h1;
  }
  Matrix& qkv_target = p.positioned ? c.qkv_raw : c.qkv;
  qkv_target.resize(n, W);
  for (const Piece& piece : p.qkv)
    piece.linear.forward(attn_in->data(), n, d, qkv_target.data() + piece.column, W, scratch);
  if (p.positioned) {
    c.qkv.resize(n, W);
    each_row(n, [&](Index i) { position_row(p, c.qkv_raw.row(i).data(), c.qkv.row(i).data(), i % T); });
  }
  c.z.resize(n, qn);
  attention_forward(p.shape, c.qkv.data(), c.z.data());
  Matrix o(n, d);
  p.out.forward(c.z.data(), n, qn, o.data(), d, scratch);
  if (p.post_attn) {
    c.o_raw = o;
    each_row(n, [&](Index i) { p.post_attn.forward(c.o_raw.row(i).data(), o.row(i).data(), d); });
  }
  c.x_mid = c.x_in + o;
  c.h2.resize(n, d);
  each_row(n, [&](Index i) { (p.post ? p.norm1 : p.norm2).forward(c.x_mid.row(i).data(), c.h2.row(i).data(), d); });
  const Index U = up_width(p), f = p.ffn;
  c.u.resize(n, U);
  for (const Piece& piece : p.up) piece.linear.forward(c.h2.data(), n, d, c.u.data() + piece.column, U, scratch);
  Matrix a(n, f);
  each_row(n, [&](Index i) {
    act_forward(p.act, c.u.row(i).data(), a.row(i).data(), f);
    if (p.gated) a.row(i).array() *= c.u.row(i).tail(f).array();
  });
  Matrix m(n, d);
  p.down.forward(a.data(), n, f, m.data(), d, scratch);
  if (p.post_ffn) {
    c.m_raw = m;
    each_row(n, [&](Index i) { p.post_ffn.forward(c.m_raw.row(i).data(), m.row(i).data(), d); });
  }
  if (p.post) {
    c.m_raw = c.h2 + m;  // LayerNorm 2's input
    each_row(n, [&](Index i) { p.norm2.forward(c.m_raw.row(i).data(), x.row(i).data(), d); });
  } else {
    x = c.x_mid + m;
  }
}

// The MLP's backward: dm (what it added) -> dh2 (its input).
void mlp_backward(const LayerPlan& p, bool lrp, const LayerCache& c, Matrix& dm, Matrix& dh2,
                  std::vector<float>& scratch) {
  const Index n = dm.rows(), d = dm.cols(), f = p.ffn, U = up_width(p);
  if (p.post_ffn) {
    Matrix raw = Matrix::Zero(n, d);
    each_row(n,
             [&](Index i) { p.post_ffn.backward(lrp, c.m_raw.row(i).data(), dm.row(i).data(), raw.row(i).data(), d); });
    dm = std::move(raw);
  }
  Matrix da = Matrix::Zero(n, f);
  p.down.backward(dm.data(), n, d, da.data(), f, scratch);
  Matrix du(n, U);
  const float share = lrp && p.gated ? 0.5f : 1.0f;  // the uniform rule on act(gate) x up
  each_row(n, [&](Index i) {
    if (p.gated) {
      Eigen::ArrayXf g(f), act(f);
      const Eigen::ArrayXf dup_in = da.row(i).transpose().array() * share;
      act_forward(p.act, c.u.row(i).data(), act.data(), f);
      g = dup_in * c.u.row(i).tail(f).transpose().array();
      act_backward(p.act, lrp, c.u.row(i).data(), g.data(), du.row(i).data(), f);
      du.row(i).tail(f) = (dup_in * act).transpose();
    } else {
      act_backward(p.act, lrp, c.u.row(i).data(), da.row(i).data(), du.row(i).data(), f);
    }
  });
  dh2.setZero(n, d);
  for (const Piece& piece : p.up) piece.linear.backward(du.data() + piece.column, n, U, dh2.data(), d, scratch);
}

// The attention block's backward: do (what it added) -> the gradient at its input, added to `dx`.
void attention_block_backward(const LayerPlan& p, bool lrp, int l, const LayerCache& c, Matrix& dout, Matrix& dx,
                              Matrix* dz_keep, const BackwardOptions& o, std::vector<float>& scratch) {
  const Index n = dout.rows(), d = dout.cols(), W = p.shape.width(), qn = p.shape.heads * p.shape.dim;
  if (p.post_attn) {
    Matrix raw = Matrix::Zero(n, d);
    each_row(n, [&](Index i) {
      p.post_attn.backward(lrp, c.o_raw.row(i).data(), dout.row(i).data(), raw.row(i).data(), d);
    });
    dout = std::move(raw);
  }
  Matrix dz = Matrix::Zero(n, qn);
  p.out.backward(dout.data(), n, d, dz.data(), qn, scratch);
  if (dz_keep) *dz_keep = dz.topRows(p.shape.T);
  Matrix dqkv = Matrix::Zero(n, W);
  attention_backward(p.shape, lrp, l, c.qkv.data(), dz.data(), dqkv.data(), o.on_attention, o.cancel);
  if (p.positioned)
    each_row(
        n, [&](Index i) { position_row_backward(p, lrp, c.qkv_raw.row(i).data(), dqkv.row(i).data(), i % p.shape.T); });
  if (p.post) {
    for (const Piece& piece : p.qkv) piece.linear.backward(dqkv.data() + piece.column, n, W, dx.data(), d, scratch);
    return;
  }
  Matrix dh1 = Matrix::Zero(n, d);
  for (const Piece& piece : p.qkv) piece.linear.backward(dqkv.data() + piece.column, n, W, dh1.data(), d, scratch);
  each_row(n, [&](Index i) { p.norm1.backward(lrp, c.x_in.row(i).data(), dh1.row(i).data(), dx.row(i).data(), d); });
}

// One layer backward: dx (at its output) -> at its input, in place.
void layer_backward(const LayerPlan& p, bool lrp, int l, const LayerCache& c, Matrix& dx, Matrix* dz_keep,
                    const BackwardOptions& o, std::vector<float>& scratch) {
  const Index n = dx.rows(), d = dx.cols();
  if (p.post) {
    // x_out = LN2(h2 + m); h2 = LN1(x_in + o).
    Matrix ds2 = Matrix::Zero(n, d);
    each_row(n, [&](Index i) { p.norm2.backward(lrp, c.m_raw.row(i).data(), dx.row(i).data(), ds2.row(i).data(), d); });
    Matrix dm = ds2, dh2;
    mlp_backward(p, lrp, c, dm, dh2, scratch);
    dh2 += ds2;
    Matrix ds1 = Matrix::Zero(n, d);
    each_row(n,
             [&](Index i) { p.norm1.backward(lrp, c.x_mid.row(i).data(), dh2.row(i).data(), ds1.row(i).data(), d); });
    dx = ds1;
    attention_block_backward(p, lrp, l, c, ds1, dx, dz_keep, o, scratch);
    return;
  }
  // x_mid = x_in + attn(norm1(x_in)); x_out = x_mid + mlp(norm2(x_mid)).
  Matrix dm = dx, dh2;
  mlp_backward(p, lrp, c, dm, dh2, scratch);
  each_row(n, [&](Index i) { p.norm2.backward(lrp, c.x_mid.row(i).data(), dh2.row(i).data(), dx.row(i).data(), d); });
  Matrix dout = dx;
  attention_block_backward(p, lrp, l, c, dout, dx, dz_keep, o, scratch);
}

}  // namespace

namespace detail_backward {

struct HeadPlan {
  Norm norm1;    // GPT-2, ViT: the final LayerNorm; decoders: the final RMSNorm
  Linear dense;  // BERT/DistilBERT: the MLM transform
  Act act = Act::GeluErf;
  Norm norm2;         // BERT/DistilBERT: the transform's LayerNorm
  StoredMatrix view;  // an output embedding kept as Matrix, seen as stored
  Linear out;
  float softcap = 0;
};

struct Plans {
  std::vector<LayerPlan> layers;
  HeadPlan head;
  Index d = 0;
};

}  // namespace detail_backward

namespace {

using detail_backward::HeadPlan;
using detail_backward::Plans;

void decoder_layer_plan(const TransformerModel::Impl& m, int l, Index T, LayerPlan& p) {
  const TransformerConfig& c = m.config;
  const DecoderSettings& s = c.decoder;
  const DecoderLayerWeights& L = m.lm_weights->layers[static_cast<std::size_t>(l)];
  const auto rms = [&](const RowVector& w) { return w.size() ? Norm{true, &w, nullptr, s.rms_eps} : Norm{}; };
  const Index hd = s.head_dim, qn = c.heads * hd, kvn = s.kv_heads * hd;
  p.norm1 = rms(L.input_norm);
  p.norm2 = rms(s.gemma ? L.pre_ffn_norm : L.post_attention_norm);
  if (s.gpt2) {  // LayerNorms with biases
    p.norm1 = Norm{false, &L.input_norm, &L.input_norm_bias, s.rms_eps};
    p.norm2 = Norm{false, &L.post_attention_norm, &L.post_attention_norm_bias, s.rms_eps};
  }
  if (s.fused || s.gpt2) {
    p.qkv = {{Linear{&L.q, nullptr, L.q_bias.size() ? &L.q_bias : nullptr}, 0}};
  } else {
    p.qkv = {{Linear{&L.q, nullptr, &L.q_bias}, 0},
             {Linear{&L.k, nullptr, &L.k_bias}, qn},
             {Linear{&L.v, nullptr, &L.v_bias}, qn + kvn}};
  }
  const bool sliding = s.sliding[static_cast<std::size_t>(l)];
  p.shape = {1, T, c.heads, s.kv_heads, hd, true, sliding ? static_cast<Index>(s.window) : 0, s.attn_softcap};
  p.positioned = true;
  if (s.qk_norm) {
    p.q_norm = rms(L.q_norm);
    p.k_norm = rms(L.k_norm);
  }
  const RopeFrequencies rope = rope_frequencies(c, T, s.local_rope_theta && sliding);
  p.half = static_cast<Index>(rope.inv.size());
  rope_tables(rope, 0, T, p.cos, p.sin);
  p.q_scale = static_cast<float>(s.query_scale);
  p.out = Linear{&L.o, nullptr, &L.o_bias};
  if (s.gemma) {
    p.post_attn = rms(L.post_attention_norm);
    p.post_ffn = rms(L.post_ffn_norm);
  }
  p.gated = !s.gpt2;
  p.ffn = c.intermediate;
  if (s.gpt2) {
    p.up = {{Linear{&L.up, nullptr, &L.up_bias}, 0}};
  } else if (s.fused) {
    p.up = {{Linear{&L.gate, nullptr, nullptr}, 0}};
  } else {
    p.up = {{Linear{&L.gate, nullptr, &L.gate_bias}, 0}, {Linear{&L.up, nullptr, &L.up_bias}, p.ffn}};
  }
  p.act = act_of(s.activation);
  p.down = Linear{&L.down, nullptr, &L.down_bias};
}

void family_layer_plan(const TransformerModel::Impl& m, int l, Index T, LayerPlan& p) {
  const TransformerConfig& c = m.config;
  const LayerWeights& w = m.layers[static_cast<std::size_t>(l)];
  const float eps = c.layer_norm_eps;
  p.post = m.post_ln();
  p.norm1 = Norm{false, &w.norm1_gamma, &w.norm1_beta, eps};
  p.norm2 = Norm{false, &w.norm2_gamma, &w.norm2_beta, eps};
  p.qkv = {{Linear{nullptr, &w.qkv, &w.qkv_bias}, 0}};
  p.shape = {1, T, c.heads, c.heads, c.hidden / c.heads, c.family == Family::Gpt2, 0, 0.0f};
  p.out = Linear{nullptr, &w.out, &w.out_bias};
  p.ffn = c.intermediate;
  p.up = {{Linear{nullptr, &w.fc1, &w.fc1_bias}, 0}};
  p.act = act_of(c.activation);
  p.down = Linear{nullptr, &w.fc2, &w.fc2_bias};
}

void head_plan(const TransformerModel::Impl& m, HeadPlan& h) {
  const TransformerConfig& c = m.config;
  const float eps = c.layer_norm_eps;
  switch (c.family) {
    case Family::Decoder:
      h.norm1 = c.decoder.gpt2
                    ? Norm{false, &m.lm_weights->final_norm, &m.lm_weights->final_norm_bias, c.decoder.rms_eps}
                    : Norm{true, &m.lm_weights->final_norm, nullptr, c.decoder.rms_eps};
      h.out = Linear{&m.lm_weights->output(), nullptr, nullptr};
      h.softcap = c.decoder.final_softcap;
      break;
    case Family::Gpt2:
      h.norm1 = Norm{false, &m.final_gamma, &m.final_beta, eps};
      h.view = stored_view(m.output_embedding());
      h.out = Linear{&h.view, nullptr, &m.decoder_bias};
      break;
    case Family::Bert:
    case Family::DistilBert:
      h.dense = Linear{nullptr, &m.head_dense, &m.head_dense_bias};
      h.act = act_of(c.activation);
      h.norm2 = Norm{false, &m.head_gamma, &m.head_beta, eps};
      h.view = stored_view(m.output_embedding());
      h.out = Linear{&h.view, nullptr, &m.decoder_bias};
      break;
    case Family::Vit:
      h.norm1 = Norm{false, &m.final_gamma, &m.final_beta, eps};
      h.out = Linear{nullptr, &m.classifier, &m.classifier_bias};
      break;
  }
}

}  // namespace

std::shared_ptr<const detail_backward::Plans> make_plans(const TransformerModel::Impl& m, Index T, Index B) {
  auto plans = std::make_shared<Plans>();
  plans->d = m.config.hidden;
  plans->layers.resize(static_cast<std::size_t>(m.config.layers));
  for (int l = 0; l < m.config.layers; ++l) {
    LayerPlan& p = plans->layers[static_cast<std::size_t>(l)];
    if (m.config.family == Family::Decoder) {
      decoder_layer_plan(m, l, T, p);
    } else {
      family_layer_plan(m, l, T, p);
    }
    p.shape.B = B;
  }
  head_plan(m, plans->head);
  return plans;
}

namespace {

// The head on one row: the logits, and what its backward needs.
struct HeadRow {
  RowVector x, y1, y2, a, y3, logits_raw, logits;
};

void head_forward(const HeadPlan& h, const float* x, Index d, HeadRow& r, std::vector<float>& scratch) {
  r.x = Eigen::Map<const RowVector>(x, d);
  r.y1 = r.x;
  if (h.norm1) h.norm1.forward(r.x.data(), r.y1.data(), d);
  const RowVector* last = &r.y1;
  if (h.dense.dense) {
    r.y2.resize(d);
    h.dense.forward(r.y1.data(), 1, d, r.y2.data(), d, scratch);
    r.a.resize(d);
    act_forward(h.act, r.y2.data(), r.a.data(), d);
    r.y3.resize(d);
    h.norm2.forward(r.a.data(), r.y3.data(), d);
    last = &r.y3;
  }
  r.logits_raw.resize(h.out.out());
  h.out.forward(last->data(), 1, d, r.logits_raw.data(), h.out.out(), scratch);
  r.logits = r.logits_raw;
  if (h.softcap > 0.0f) r.logits = (r.logits_raw.array() / h.softcap).tanh() * h.softcap;
}

// dlogits -> the gradient at the head's input row, into dx.
void head_backward(const HeadPlan& h, bool lrp, const HeadRow& r, const RowVector& dlogits, float* dx, Index d,
                   std::vector<float>& scratch) {
  RowVector g = dlogits;
  if (h.softcap > 0.0f) {
    const Eigen::ArrayXf raw = r.logits_raw.transpose().array(), cap = r.logits.transpose().array();
    if (lrp) {
      g.array() *= (raw.abs() < 1e-6f).select(1.0f, cap / raw).transpose();
    } else {
      g.array() *= (1.0f - (cap / h.softcap).square()).transpose();
    }
  }
  RowVector dlast = RowVector::Zero(d);
  h.out.backward(g.data(), 1, g.size(), dlast.data(), d, scratch);
  RowVector dy1 = RowVector::Zero(d);
  if (h.dense.dense) {
    RowVector da = RowVector::Zero(d), dy2(d);
    h.norm2.backward(lrp, r.a.data(), dlast.data(), da.data(), d);
    act_backward(h.act, lrp, r.y2.data(), da.data(), dy2.data(), d);
    h.dense.backward(dy2.data(), 1, d, dy1.data(), d, scratch);
  } else {
    dy1 = dlast;
  }
  if (h.norm1) {
    h.norm1.backward(lrp, r.x.data(), dy1.data(), dx, d);
  } else {
    Eigen::Map<RowVector>(dx, d) += dy1;
  }
}

// F and dF/dlogits for one row of logits.
float target_value(const AttributionTarget& t, int token, const RowVector& logits, RowVector& dlogits) {
  dlogits = RowVector::Zero(logits.size());
  dlogits(token) = 1.0f;
  switch (t.kind) {
    case AttributionTarget::Kind::Logit: return logits(token);
    case AttributionTarget::Kind::LogitDiff: dlogits(t.other) -= 1.0f; return logits(token) - logits(t.other);
    case AttributionTarget::Kind::LogProb: {
      const float mx = logits.maxCoeff();
      const Eigen::ArrayXf e = (logits.array() - mx).exp().transpose();
      const float sum = e.sum();
      dlogits.array() -= (e / sum).transpose();
      return logits(token) - mx - std::log(sum);
    }
  }
  return 0;
}

}  // namespace

// The estimate of one pass's memory: every layer's cache kept, or (checkpointed) each layer's input and one cache.
std::size_t pass_bytes(const detail_backward::Plans& plans, Index rows, bool checkpointed) {
  std::size_t per_row = 0;
  for (const LayerPlan& p : plans.layers) per_row = std::max(per_row, cache_floats_per_row(p, plans.d));
  const std::size_t layers = plans.layers.size();
  const std::size_t r = static_cast<std::size_t>(rows), d = static_cast<std::size_t>(plans.d);
  const std::size_t kept = checkpointed ? layers * r * d + r * per_row : layers * r * per_row;
  return 4 * (kept + 8 * r * d);
}

Result<PassResult> run_pass(const detail_backward::Plans& plans, Matrix x0, const PassRequest& q) {
  const Index d = plans.d, n = x0.rows(), T = q.T, B = n / T;
  const bool lrp = q.rule == BackwardRule::AttnLrp;
  const std::size_t L = plans.layers.size();
  std::vector<float> scratch;
  std::vector<LayerCache> caches(q.checkpointed ? 1 : L);
  std::vector<Matrix> inputs(q.checkpointed ? L : 0);
  Matrix x = std::move(x0);
  const auto cancelled = [&] { return q.options.cancel && q.options.cancel->load(std::memory_order_relaxed); };
  for (std::size_t l = 0; l < L; ++l) {
    if (cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
    if (q.checkpointed) inputs[l] = x;
    layer_forward(plans.layers[l], x, caches[q.checkpointed ? 0 : l], scratch);
  }
  PassResult r;
  r.values.resize(static_cast<std::size_t>(B));
  Matrix dx = Matrix::Zero(n, d);
  int token = q.token;
  std::vector<HeadRow> heads(static_cast<std::size_t>(B));
  for (Index b = 0; b < B; ++b)
    head_forward(plans.head, x.row(b * T + q.position).data(), d, heads[static_cast<std::size_t>(b)], scratch);
  if (token < 0) heads.front().logits.maxCoeff(&token);  // the first sequence's own prediction
  const Index outputs = heads.front().logits.size();
  if (token >= outputs)
    return fail(ErrorKind::OutOfRange, "attribute: token " + std::to_string(token) + " is out of the model's " +
                                           std::to_string(outputs) + " outputs");
  for (Index b = 0; b < B; ++b) {
    const HeadRow& head = heads[static_cast<std::size_t>(b)];
    RowVector dlogits;
    r.values[static_cast<std::size_t>(b)] = target_value(q.target, token, head.logits, dlogits);
    head_backward(plans.head, lrp, head, dlogits, dx.row(b * T + q.position).data(), d, scratch);
  }
  r.token = token;
  if (q.keep) {
    q.keep->resid.assign(L + 1, {});
    q.keep->resid_grad.assign(L + 1, {});
    q.keep->z_grad.assign(L, {});
    q.keep->resid[L] = x.topRows(T);
    q.keep->resid_grad[L] = dx.topRows(T);
  }
  for (std::size_t k = L; k-- > 0;) {
    if (cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
    LayerCache& c = caches[q.checkpointed ? 0 : k];
    if (q.checkpointed) {
      Matrix again = inputs[k];
      layer_forward(plans.layers[k], again, c, scratch);
    }
    layer_backward(plans.layers[k], lrp, static_cast<int>(k), c, dx, q.keep ? &q.keep->z_grad[k] : nullptr, q.options,
                   scratch);
    if (q.keep) {
      q.keep->resid[k] = c.x_in.topRows(T);
      q.keep->resid_grad[k] = dx.topRows(T);
    }
    if (q.on_layer) q.on_layer(static_cast<int>(L - k), static_cast<int>(L));
  }
  if (cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
  r.dx0 = std::move(dx);
  return r;
}

}  // namespace attn::models
