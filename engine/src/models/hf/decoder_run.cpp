// The decoder family's forward pass, incremental by construction: a run extends the runner's key/value cache by
// the tokens it has not seen, writing their rows of every head's map. A whole prompt is one extension, each
// generated token another, and a keystroke at the end of a text one more: the same code, so generation with
// the cache and a single forward over the same ids give the same maps (the parity tests check both).
//
// One layer on m new tokens: RMSNorm, the q/k/v products (decoder_impl.h's stored_linear, one sgemm each or one
// fused), per-head q/k norms, RoPE, then per (head, block of rows) scores against the cached keys of the head's
// key/value group, soft-capping, the causal (and sliding-window) mask, softmax written into the run's maps,
// context = P V; the output product, the gated MLP, residuals (Gemma: normalised first).
#include "decoder_impl.h"
#include "ggml_math.h"
#include "norm_math.h"
#include "row_streams.h"
#include "transformer_impl.h"
#include "hooks.h"
#include "../../mechanisms/exp_kernel.h"
#include "../../core/try.h"
#include "../../io/half.h"

#include "attn/on_demand_attention.h"
#include "attn/random.h"

#include <unsupported/Eigen/SpecialFunctions>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <optional>
#include <span>

namespace attn::models {

struct DecoderState {
  std::vector<int> ids;                          // the tokens whose keys and values the cache holds, from position 0
  Index capacity = 0;                            // positions the cache has room for
  std::vector<std::vector<float>> keys, values;  // per layer [kv_heads][capacity][head_dim]
  // The scratch, written before it is read: left uninitialised when grown (the FFN's is 400 MB at 32,768 tokens of
  // SmolLM2; zeroing it would be a stretch that reads no cancel flag).
  using Scratch = std::vector<float, detail::Uninitialised<float>>;
  Scratch x, xn, qkv, ctx, out, gu;
  std::vector<float> convert;
  std::vector<Scratch> scores;  // per thread: a block of score rows
  std::vector<Scratch> capped;  // per thread: one row of scores as the softmax saw them (on demand)
};

std::shared_ptr<DecoderState> make_decoder_state() { return std::make_shared<DecoderState>(); }

void DecoderWeights::embed_token(const DecoderSettings& s, int id, Index position, float* out) const {
  const Index d = embed.cols;
  embed.rows_to_float(id, 1, out);
  Eigen::Map<Eigen::ArrayXf> x(out, d);
  if (s.gemma) x *= static_cast<float>(std::sqrt(static_cast<double>(d)));
  if (s.gpt2) {  // llama.cpp's ggml_add of the position's row, in float
    thread_local std::vector<float> row;
    row.resize(static_cast<std::size_t>(d));
    positions.rows_to_float(position, 1, row.data());
    x += Eigen::Map<const Eigen::ArrayXf>(row.data(), d);
  }
}

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::OuterStride<>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

// Rows from which the per-row passes share the rows between threads.
constexpr Index kSharedRows = 64;

template <class F>
void for_new_rows(Index n, const F& f) {
#pragma omp parallel for schedule(static) if (n >= kSharedRows)
  for (Index i = 0; i < n; ++i) f(i);
}

float* grown(DecoderState::Scratch& v, Index n) {
  if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
  return v.data();
}

using Rope = RopeFrequencies;

Rope rope_for(const TransformerConfig& c, Index seq_len, bool local) { return rope_frequencies(c, seq_len, local); }

// RMSNorm of one row: llama.cpp's arithmetic for a GGUF file (ggml::rms_norm), the engine's otherwise. With a bias
// (GPT-2's input, post-attention and final norms) a LayerNorm: ggml::layer_norm, or the engine's.
void norm(const DecoderSettings& s, const float* in, float* out, const RowVector& w, Index d,
          const RowVector* bias = nullptr) {
  if (bias && bias->size()) {
    if (s.ggml_arithmetic) {
      ggml::layer_norm(in, out, w.data(), bias->data(), d, s.rms_eps);
    } else {
      layer_norm_row(in, out, w, *bias, d, s.rms_eps);
    }
    return;
  }
  if (s.ggml_arithmetic) {
    ggml::rms_norm(in, out, w.data(), d, s.rms_eps);
  } else {
    rms_norm(in, out, w, d, s.rms_eps);
  }
}

// Gemma 2's final soft cap, cap tanh(logit / cap), on every logit: for a GGUF file as llama.cpp's graph computes it
// (ggml_scale by the float 1 / cap, then libm's tanhf, ggml_scale by cap), else as the Hugging Face model does.
void soft_cap_logits(const DecoderSettings& s, Matrix& logits) {
  const float cap = s.final_softcap;
  if (cap <= 0.0f) return;
  if (s.ggml_arithmetic) {
    const float inv = 1.0f / cap;
    for (float& v : logits.reshaped()) v = std::tanh(v * inv) * cap;
  } else {
    logits.array() = (logits.array() / cap).tanh() * cap;
  }
}

// Whether a GGUF file's attention is llama.cpp's operation for operation (ggml::attention_row), with its F16 or F32
// cache (soft-capping included). The queries then stay unscaled where llama.cpp scales the scores.
bool ggml_attention(const DecoderSettings& s) { return s.ggml_arithmetic; }

// llama.cpp's query scale, 1 / sqrtf(head_dim) in float (query_scale squared is 1 / head_dim).
float ggml_query_scale(const DecoderSettings& s) {
  return 1.0f / std::sqrt(static_cast<float>(1.0 / (s.query_scale * s.query_scale)));
}

// The scale llama.cpp's softmax applies to the scores: 1 where it scaled the queries (ggml_scaled_queries).
float ggml_score_scale(const DecoderSettings& s) { return s.ggml_scaled_queries ? 1.0f : ggml_query_scale(s); }

// The cos and sin of positions [p0, p0 + rows): llama.cpp's tables (ggml::rope_tables) for a GGUF file's plain,
// linear or local RoPE, the engine's otherwise.
void position_tables(const TransformerConfig& c, const Rope& rope, bool local, Index p0, Index rows,
                     std::vector<float>& cos, std::vector<float>& sin) {
  const DecoderSettings& s = c.decoder;
  if (s.ggml_arithmetic && rope.factor == 1.0 &&
      (local || s.rope == RopeScaling::Default || s.rope == RopeScaling::Linear)) {
    const bool linear = !local && s.rope == RopeScaling::Linear;
    const float freq_scale = linear ? 1.0f / static_cast<float>(s.rope_factor) : 1.0f;
    ggml::rope_tables(local ? *s.local_rope_theta : s.rope_theta, freq_scale,
                      local ? std::span<const float>() : std::span<const float>(s.rope_freq_factors),
                      2 * static_cast<Index>(rope.inv.size()), p0, rows, cos, sin);
    return;
  }
  rope_tables(rope, p0, rows, cos, sin);
}

void add_bias(float* rows, Index n, Index ld, Index offset, const RowVector& bias) {
  if (bias.size() == 0) return;
  for (Index i = 0; i < n; ++i) ArrayMap(rows + i * ld + offset, bias.size()) += bias.transpose().array();
}

// act(h) in place over one row of f values (GPT-2's ungated MLP, and the gate of a gated one): llama.cpp's table GELU
// for a GGUF file.
void activate(float* h, Index f, GatedActivation act, bool ggml_arithmetic) {
  if (ggml_arithmetic && act == GatedActivation::GeluTanh) {
    ggml::gelu(h, f);
    return;
  }
  ArrayMap g(h, f);
  switch (act) {
    case GatedActivation::Silu: g = g / (1.0f + (-g).exp()); break;
    case GatedActivation::GeluTanh: {
      constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
      g = 0.5f * g * (1.0f + (k * (g + 0.044715f * g.cube())).tanh());
      break;
    }
    case GatedActivation::GeluErf: g = 0.5f * g * (1.0f + (g * 0.70710678118654752f).erf()); break;
  }
}

// act(gate) * up, in place over the gate half of each [gate | up] row: llama.cpp's fused SwiGLU and GeGLU for a GGUF
// file, else the activation then the product.
void gated(float* gu, Index n, Index f, GatedActivation act, bool ggml_arithmetic) {
  for_new_rows(n, [&](Index i) {
    float* g = gu + i * 2 * f;
    if (ggml_arithmetic && act == GatedActivation::Silu) {
      ggml::swiglu(g, g + f, f);
      return;
    }
    if (ggml_arithmetic && act == GatedActivation::GeluTanh) {
      ggml::geglu(g, g + f, f);
      return;
    }
    activate(g, f, act, false);
    ArrayMap(g, f) *= ConstArrayMap(g + f, f);
  });
}

// stored_linear over the rows in slices of kCancelRows, the cancel flag read before each: at 32,768 tokens one of a
// layer's products takes up to a second here, longer than a cancel may (200 ms).
constexpr Index kCancelRows = 4096;
void sliced_linear(const float* x, Index n, Index ldx, const StoredMatrix& w, float* y, Index ldy,
                   std::vector<float>& scratch, const std::atomic<bool>* cancel) {
  for (Index r0 = 0; r0 < n; r0 += kCancelRows) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return;
    stored_linear(x + r0 * ldx, std::min(kCancelRows, n - r0), ldx, w, y + r0 * ldy, ldy, scratch);
  }
}

// A layer's products and per-row passes that do not depend on the rows' positions, shared by the extension of one
// run (Extension) and the re-runs of many sweep cells at once (CellBatch), whose rows are stacked: the input norm
// and the q/k/v products, and everything after the heads' outputs. `hook(site, rows, ld)` sees the attn_out and
// mlp_out rows (the interventions' sites).
struct LayerMath {
  const TransformerConfig& c;
  const DecoderSettings& s;
  DecoderState& st;
  const std::atomic<bool>* cancel;

  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
  void linear(const float* x, Index n, Index ldx, const StoredMatrix& w, float* y, Index ldy) const {
    sliced_linear(x, n, ldx, w, y, ldy, st.convert, cancel);
  }

  // RMSNorm of n rows of x into xn, then qkv [n, q | k | v] with the biases.
  void project_qkv(const DecoderLayerWeights& L, const float* x, float* xn, float* qkv, Index n) const {
    const Index d = c.hidden, qn = c.heads * s.head_dim, kvn = s.kv_heads * s.head_dim, width = qn + 2 * kvn;
    for_new_rows(n, [&](Index i) { norm(s, x + i * d, xn + i * d, L.input_norm, d, &L.input_norm_bias); });
    if (s.fused || s.gpt2) {
      linear(xn, n, d, L.q, qkv, width);
      add_bias(qkv, n, width, 0, L.q_bias);  // GPT-2's fused bias (Phi-3 has none)
      return;
    }
    linear(xn, n, d, L.q, qkv, width);
    linear(xn, n, d, L.k, qkv + qn, width);
    linear(xn, n, d, L.v, qkv + qn + kvn, width);
    add_bias(qkv, n, width, 0, L.q_bias);
    add_bias(qkv, n, width, qn, L.k_bias);
    add_bias(qkv, n, width, qn + kvn, L.v_bias);
  }

  // q/k norms, RoPE (the row's position's cos and sin) and the query scale on one row of qkv.
  // `scale_queries` false (ggml_attention): the queries stay unscaled for ggml::attention_row.
  void position_row(const DecoderLayerWeights& L, float* row, const float* cs, const float* sn, Index half,
                    bool scale_queries = true) const {
    const Index hd = s.head_dim, H = c.heads;
    const float scale = static_cast<float>(s.query_scale);
    for (Index h = 0; h < H + s.kv_heads; ++h) {
      float* v = row + h * hd;  // query heads, then key heads
      if (s.qk_norm) norm(s, v, v, h < H ? L.q_norm : L.k_norm, hd);
      if (s.ggml_arithmetic) {
        ggml::rotate(v, cs, sn, half);
      } else {
        rotate(v, cs, sn, half);
      }
      // llama.cpp's queries, scaled first where llama.cpp scales them; with its F16 cache, an F16 copy.
      const bool pre = h < H && s.ggml_arithmetic && s.ggml_scaled_queries;
      if (pre) ArrayMap(v, hd) *= ggml_query_scale(s);
      if (s.ggml_f16_cache) io::round_to_half(v, hd);
      if (h < H && scale_queries && !pre) ArrayMap(v, hd) *= scale;
    }
    if (s.ggml_f16_cache) io::round_to_half(row + (H + s.kv_heads) * hd, s.kv_heads * hd);  // the values
  }

  // After the heads' outputs ctx [n, heads * head_dim]: the output product, the residual, the MLP and its residual,
  // on n rows of x (xn and the state's out and gu as scratch).
  // `alone` (>= 0): the row whose logits are read, its MLP computed by itself, as llama.cpp's last layer computes
  // only the rows it outputs (inp_out_ids; its products then sum in one row's order). The hook then sees no rows.
  template <class Hook>
  void finish(const DecoderLayerWeights& L, float* x, float* xn, const float* ctx, Index n, const Hook& hook,
              Index alone = -1) const {
    const Index d = c.hidden, qn = c.heads * s.head_dim;
    float* out = grown(st.out, n * d);
    linear(ctx, n, qn, L.o, out, d);
    add_bias(out, n, d, 0, L.o_bias);
    if (s.gemma) for_new_rows(n, [&](Index i) { norm(s, out + i * d, out + i * d, L.post_attention_norm, d); });
    hook(Site::AttnOut, out, d);
    for_new_rows(n, [&](Index i) {
      ArrayMap(x + i * d, d) += ConstArrayMap(out + i * d, d);
      norm(s, x + i * d, xn + i * d, s.gemma ? L.pre_ffn_norm : L.post_attention_norm, d, &L.post_attention_norm_bias);
    });
    if (alone < 0 || n < 2) {
      mlp(L, x, xn, n, hook);
      return;
    }
    const auto none = [](Site, float*, Index) {};
    mlp(L, x, xn, alone, none);
    mlp(L, x + alone * d, xn + alone * d, 1, none);
    mlp(L, x + (alone + 1) * d, xn + (alone + 1) * d, n - alone - 1, none);
  }

  // GPT-2's first product and activation, act(up xn + b), into n rows of f floats.
  void ungated(const DecoderLayerWeights& L, const float* xn, Index n, float* h) const {
    const Index d = c.hidden, f = c.intermediate;
    linear(xn, n, d, L.up, h, f);
    add_bias(h, n, f, 0, L.up_bias);
    if (cancelled()) return;
    for_new_rows(n, [&](Index i) { activate(h + i * f, f, s.activation, s.ggml_arithmetic); });
  }

  // The MLP of n rows of x (their norms in xn) and its residual.
  template <class Hook>
  void mlp(const DecoderLayerWeights& L, float* x, const float* xn, Index n, const Hook& hook) const {
    if (n == 0) return;
    const Index d = c.hidden, f = c.intermediate;
    float* out = grown(st.out, n * d);
    float* gu = grown(st.gu, n * 2 * f);
    if (s.gpt2) {
      ungated(L, xn, n, gu);
    } else if (s.fused) {
      linear(xn, n, d, L.gate, gu, 2 * f);
    } else {
      linear(xn, n, d, L.gate, gu, 2 * f);
      linear(xn, n, d, L.up, gu + f, 2 * f);
      add_bias(gu, n, 2 * f, 0, L.gate_bias);
      add_bias(gu, n, 2 * f, f, L.up_bias);
    }
    if (cancelled()) return;
    if (!s.gpt2) gated(gu, n, f, s.activation, s.ggml_arithmetic);
    linear(gu, n, s.gpt2 ? f : 2 * f, L.down, out, d);
    add_bias(out, n, d, 0, L.down_bias);
    if (s.gemma) for_new_rows(n, [&](Index i) { norm(s, out + i * d, out + i * d, L.post_ffn_norm, d); });
    hook(Site::MlpOut, out, d);
    for_new_rows(n, [&](Index i) { ArrayMap(x + i * d, d) += ConstArrayMap(out + i * d, d); });
  }
};

// One extension of the cache: tokens [p0, p1) of run.ids, the cache holding [0, p0).
class Extension {
 public:
  // `lazy` (on demand): the layers' queries, keys and row statistics are kept there and `maps` is not used.
  Extension(const TransformerModel::Impl& m, DecoderState& st, TransformerRun& run, std::vector<HeadStack*> maps,
            std::vector<Matrix>* hidden, std::vector<OnDemandLayer>* lazy = nullptr)
      : m_(m), c_(m.config), s_(c_.decoder), w_(*m.lm_weights), st_(st), run_(run), maps_(std::move(maps)), lazy_(lazy),
        hidden_(hidden) {}

  // `before_layer(l)` before each layer, `layer_done(l)` after it (false cancels); the logits of the last new row,
  // or of every new row when `all_logits`, into `logits`.
  Result<void> operator()(Index p0, Index p1, bool all_logits, Matrix& logits,
                          const std::function<bool(int)>& layer_done,
                          const std::function<void(int)>& before_layer = {}) {
    const Index n = p1 - p0, d = c_.hidden;
    st_.ids.resize(static_cast<std::size_t>(p0));  // the cache's valid tokens while it is rewritten
    if (!reserve(p1)) return fail(ErrorKind::Cancelled, "cancelled");
    float* x = grown(st_.x, n * d);
    if (base_) {
      // A re-run: the base's residual stream entering the first edited layer, and its keys and values of the rows
      // before p0 in every layer from there.
      const Activations& a = *base_->activations;
      Eigen::Map<Matrix>(x, n, d) = a.resid_pre[static_cast<std::size_t>(first_)].middleRows(p0, n);
      const Index hd = s_.head_dim, cap = st_.capacity;
      for (int l = first_; l < c_.layers; ++l) {
        float* keys = st_.keys[static_cast<std::size_t>(l)].data();
        float* values = st_.values[static_cast<std::size_t>(l)].data();
        for (Index g = 0; g < s_.kv_heads; ++g) {
          for (Index i = 0; i < p0; ++i) {
            Eigen::Map<RowVector>(keys + (g * cap + i) * hd, hd) =
                a.keys[static_cast<std::size_t>(l)].row(i).segment(g * hd, hd);
            Eigen::Map<RowVector>(values + (g * cap + i) * hd, hd) =
                a.values[static_cast<std::size_t>(l)].row(i).segment(g * hd, hd);
          }
        }
      }
    } else {
      for_new_rows(n,
                   [&](Index i) { w_.embed_token(s_, run_.ids[static_cast<std::size_t>(p0 + i)], p0 + i, x + i * d); });
      keep_hidden(0, p0, n, x);
    }
    // llama.cpp computes the last layer's MLP only for the rows it outputs: the one row read (see LayerMath::finish).
    alone_ = s_.ggml_arithmetic && !all_logits && !hooks_ ? (logits_row_ >= p0 ? logits_row_ - p0 : n - 1) : -1;
    for (int l = first_; l < c_.layers; ++l) {
      if (before_layer) before_layer(l);
      layer(l, p0, n, x);
      if (cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
      keep_hidden(l + 1, p0, n, x);
      if (layer_done && !layer_done(l)) return fail(ErrorKind::Cancelled, "cancelled");
    }
    // The final norm (transformers' last hidden state is after it) and the output embedding.
    const Index first = all_logits ? 0 : logits_row_ >= p0 ? logits_row_ - p0 : n - 1;
    const Index rows = all_logits ? n : 1;
    float* xn = grown(st_.xn, rows * d);
    for (Index i = 0; i < rows; ++i) norm(s_, x + (first + i) * d, xn + i * d, w_.final_norm, d, &w_.final_norm_bias);
    if (hidden_) {
      Matrix& h = hidden_->back();
      for (Index i = 0; i < n; ++i) norm(s_, x + i * d, h.row(p0 + i).data(), w_.final_norm, d, &w_.final_norm_bias);
    }
    logits.resize(rows, c_.vocab_size);
    stored_linear(xn, rows, d, w_.output(), logits.data(), c_.vocab_size, st_.convert);
    soft_cap_logits(s_, logits);
    st_.ids.assign(run_.ids.begin(), run_.ids.begin() + p1);
    // The weights were read from the files' mappings: a file another process cut short meanwhile read zeros
    // (core/file_read_mapped.h), and this extension's maps and logits are refused, naming the file.
    for (const io::SafeTensors& file : w_.files) {
      if (auto ok = file.intact(); !ok) {
        st_.ids.clear();
        return std::unexpected(ok.error());
      }
    }
    return {};
  }

  // RunOptions::cancel.
  void set_cancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }
  // Interventions: capture and edits at each site; with `base`, a re-run from its activations starting at layer
  // `first` (whose attention is the base's when `base_attention`).
  void set_hooks(Hooks* hooks, const TransformerRun* base, int first, bool base_attention) {
    hooks_ = hooks;
    base_ = base;
    first_ = first;
    base_attention_ = base_attention;
  }
  // The position whose logits are kept when all_logits is false (-1: the last new one).
  void set_logits_row(Index row) { logits_row_ = row; }
  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }

  // Room in the cache for p1 positions (grown by doubling, the cached rows kept).
  // The cache grown to hold p1 tokens. False when cancelled half way (a 32,768-token cache is 1.5 GB of fresh pages
  // here, seconds where page faults are slow): the cache is then dropped, its layers disagreeing on their capacity.
  bool reserve(Index p1) {
    const Index hd = s_.head_dim, kv = s_.kv_heads;
    if (st_.keys.size() != static_cast<std::size_t>(c_.layers)) {
      st_.keys.assign(static_cast<std::size_t>(c_.layers), {});
      st_.values.assign(static_cast<std::size_t>(c_.layers), {});
      st_.capacity = 0;
    }
    if (p1 <= st_.capacity) return true;
    const Index cap = std::max<Index>(p1, std::min<Index>(2 * st_.capacity, c_.context()));
    const Index kept = std::min<Index>(static_cast<Index>(st_.ids.size()), st_.capacity);
    for (auto* cache : {&st_.keys, &st_.values}) {
      for (auto& layer : *cache) {
        if (cancelled()) {
          st_.keys.clear();
          st_.values.clear();
          st_.ids.clear();
          st_.capacity = 0;
          return false;
        }
        std::vector<float> bigger(static_cast<std::size_t>(kv * cap * hd));
        for (Index g = 0; g < kv && kept > 0; ++g) {
          std::copy_n(layer.data() + g * st_.capacity * hd, kept * hd, bigger.data() + g * cap * hd);
        }
        layer = std::move(bigger);
      }
    }
    st_.capacity = cap;
    return true;
  }

 private:
  void keep_hidden(int index, Index p0, Index n, const float* x) {
    // The last entry is written after the final norm; the others are the residual stream as it is.
    if (!hidden_ || index == c_.layers) return;
    Matrix& h = (*hidden_)[static_cast<std::size_t>(index)];
    for (Index i = 0; i < n; ++i) h.row(p0 + i) = Eigen::Map<const RowVector>(x + i * c_.hidden, c_.hidden);
  }

  LayerMath math() const { return {c_, s_, st_, cancel_}; }

  void layer(int l, Index p0, Index n, float* x) {
    const DecoderLayerWeights& L = w_.layers[static_cast<std::size_t>(l)];
    const Index d = c_.hidden, qn = c_.heads * s_.head_dim, width = qn + 2 * s_.kv_heads * s_.head_dim;
    const LayerMath lm = math();
    if (hooks_) hooks_->at(Site::ResidPre, l, x, p0, n, d);
    float* xn = grown(st_.xn, n * d);
    float* ctx = grown(st_.ctx, n * qn);
    if (base_ && l == first_ && base_attention_) {
      // Only the head outputs or later sites of this layer are edited: its attention is the base run's.
      Eigen::Map<Matrix>(ctx, n, qn) = base_->activations->z[static_cast<std::size_t>(l)].middleRows(p0, n);
    } else {
      float* qkv = grown(st_.qkv, n * width);
      lm.project_qkv(L, x, xn, qkv, n);
      position_queries_and_keys(l, L, p0, n, qkv);
      if (hooks_)
        hooks_->keep_cache(l, st_.keys[static_cast<std::size_t>(l)].data(),
                           st_.values[static_cast<std::size_t>(l)].data(), st_.capacity, p0, n);
      attention(l, p0, n, qkv, ctx);
      if (cancelled()) return;  // operator() fails the run
    }
    if (hooks_) hooks_->at(Site::Z, l, ctx, p0, n, qn);
    lm.finish(
        L, x, xn, ctx, n,
        [&](Site site, float* rows, Index ld) {
          if (hooks_) hooks_->at(site, l, rows, p0, n, ld);
        },
        l == c_.layers - 1 ? alone_ : -1);
  }

  // q/k norms, RoPE and the query scale on the new rows; their keys and values into the cache.
  void position_queries_and_keys(int l, const DecoderLayerWeights& L, Index p0, Index n, float* qkv) {
    const Index hd = s_.head_dim, H = c_.heads, KV = s_.kv_heads, qn = H * hd, kvn = KV * hd;
    const Index width = qn + 2 * kvn;
    const bool local = s_.local_rope_theta && s_.sliding[static_cast<std::size_t>(l)];
    const Rope rope = rope_for(c_, p0 + n, local);
    const Index half = static_cast<Index>(rope.inv.size());
    position_tables(c_, rope, local, p0, n, cos_, sin_);
    float* keys = st_.keys[static_cast<std::size_t>(l)].data();
    float* values = st_.values[static_cast<std::size_t>(l)].data();
    const Index cap = st_.capacity;
    const LayerMath lm = math();
    const bool exact = ggml_attention(s_) && !lazy_;  // attention() then takes llama.cpp's path, unscaled queries
    for_new_rows(n, [&](Index i) {
      float* row = qkv + i * width;
      lm.position_row(L, row, cos_.data() + i * half, sin_.data() + i * half, half, !exact);
      for (Index g = 0; g < KV; ++g) {
        std::copy_n(row + qn + g * hd, hd, keys + (g * cap + p0 + i) * hd);
        std::copy_n(row + qn + kvn + g * hd, hd, values + (g * cap + p0 + i) * hd);
      }
      if (lazy_) {
        OnDemandLayer& kept = (*lazy_)[static_cast<std::size_t>(l)];
        for (Index h = 0; h < H; ++h) std::copy_n(row + h * hd, hd, kept.query(static_cast<int>(h), p0 + i));
        for (Index g = 0; g < KV; ++g) std::copy_n(row + qn + g * hd, hd, kept.key(static_cast<int>(g), p0 + i));
      }
    });
  }

  // softmax over the visible keys of every new row of every head, into the maps (or, on demand, only each row's
  // shift, 1 / sum and streamed statistics); context into ctx.
  void attention(int l, Index p0, Index n, const float* qkv, float* ctx) {
    const Index hd = s_.head_dim, H = c_.heads, KV = s_.kv_heads, qn = H * hd, width = qn + 2 * KV * hd;
    const Index group = H / KV, cap = st_.capacity;
    const Index blocks = (n + kScoreBlock - 1) / kScoreBlock, tasks = blocks * H;
    const Index window = s_.sliding[static_cast<std::size_t>(l)] ? s_.window : 0;
    HeadStack* maps = maps_.empty() ? nullptr : maps_[static_cast<std::size_t>(l)];
    OnDemandLayer* lazy = lazy_ ? &(*lazy_)[static_cast<std::size_t>(l)] : nullptr;
    const Index cols = maps ? maps->cols() : lazy->tokens();
    const bool f16 = maps && maps->precision() == Precision::F16;
    const float* keys = st_.keys[static_cast<std::size_t>(l)].data();
    const float* values = st_.values[static_cast<std::size_t>(l)].data();
    const int threads = omp_get_max_threads();
    if (st_.scores.size() < static_cast<std::size_t>(threads)) st_.scores.resize(static_cast<std::size_t>(threads));
    if (st_.capped.size() < static_cast<std::size_t>(threads)) st_.capped.resize(static_cast<std::size_t>(threads));
    if (ggml_attention(s_) && !lazy) {
      ggml_attention_rows(l, p0, n, qkv, ctx, *maps);
      return;
    }
    RowStreams streams;
    if (lazy) streams.reset(threads, H, cols);
    // A few new rows (generation, a keystroke) stay on one thread: see decoder_linear.cpp's kFusedParallelWeights.
    const bool parallel =
        tasks > 1 && n >= 8 && static_cast<double>(n) * static_cast<double>(p0 + n) * static_cast<double>(qn) > 2e5;
#pragma omp parallel for schedule(dynamic) if (parallel)
    for (Index task = 0; task < tasks; ++task) {
      if (cancelled()) continue;  // the layer's result is dropped
      const Index h = task / blocks, r0 = (task % blocks) * kScoreBlock, rows = std::min(kScoreBlock, n - r0);
      const Index g = h / group;
      const Index keys_needed = p0 + r0 + rows;  // causal: the block's last row sees no further
      const auto thread = static_cast<std::size_t>(omp_get_thread_num());
      float* S = grown(st_.scores[thread], rows * cols);
      Eigen::Map<RowMajor, 0, Strided> scores(S, rows, keys_needed, Strided(cols));
      attention_scores(qkv + r0 * width + h * hd, width, keys + g * cap * hd, hd, rows, keys_needed, hd, S, cols,
                       n < 8);
      for (Index i = 0; i < rows; ++i) {
        const Index row = p0 + r0 + i;
        const Index lo = window > 0 ? std::max<Index>(0, row - window + 1) : 0;
        if (lazy) {
          // Without maps only the keys the block's product reads need their zeros.
          const RowSoftmax r =
              softmax_row(S + i * cols, row, lo, row, maps ? cols : keys_needed, s_.attn_softcap,
                          grown(st_.capped[thread], cols), streams.of(static_cast<int>(thread), static_cast<int>(h)));
          lazy->set_row(static_cast<int>(h), row, r.shift, r.inv_sum);
        } else {
          softmax_row(S + i * cols, row, lo, row, cols, s_.attn_softcap);
        }
      }
      for (Index i = 0; maps && i < rows; ++i) {
        const Index row = p0 + r0 + i;
        if (f16) {
          for (Index j = 0; j < cols; ++j)
            maps->f16(static_cast<int>(h))[row * cols + j] = Eigen::half(S[i * cols + j]);
        } else {
          std::copy_n(S + i * cols, cols, maps->f32(static_cast<int>(h)) + row * cols);
        }
      }
      // llama.cpp's product of the weights with an F16 value cache takes them in F16 (the maps keep them in float).
      for (Index i = 0; s_.ggml_f16_cache && i < rows; ++i) io::round_to_half(S + i * cols, keys_needed);
      Eigen::Map<const RowMajor> v(values + g * cap * hd, keys_needed, hd);
      Eigen::Map<RowMajor, 0, Strided> out(ctx + r0 * qn + h * hd, rows, hd, Strided(qn));
      block_product(out, scores, v);
    }
    if (lazy) streams.add_to(*lazy, n);
  }

  // A GGUF file's attention as llama.cpp computes it (ggml::attention_row), row by row; the maps get its softmax's
  // weights. The n new rows are llama.cpp's batch: it picks the order of the products as llama.cpp's does.
  void ggml_attention_rows(int l, Index p0, Index n, const float* qkv, float* ctx, HeadStack& maps) {
    const Index hd = s_.head_dim, H = c_.heads, qn = H * hd, width = qn + 2 * s_.kv_heads * hd;
    const Index group = H / s_.kv_heads, cap = st_.capacity, cols = maps.cols();
    const Index window = s_.sliding[static_cast<std::size_t>(l)] ? s_.window : 0;
    const bool f16 = maps.precision() == Precision::F16;
    const float* keys = st_.keys[static_cast<std::size_t>(l)].data();
    const float* values = st_.values[static_cast<std::size_t>(l)].data();
    const float scale = ggml_score_scale(s_);
    const bool pairs = s_.ggml_rope_pairs;  // the dot products of queries and keys in the file's order
    if (pairs) {
      paired_keys_.resize(static_cast<std::size_t>(s_.kv_heads * cap * hd));
      for (Index g = 0; g < s_.kv_heads; ++g)
        ggml::to_pairs(keys + g * cap * hd, paired_keys_.data() + g * cap * hd, p0 + n, hd);
      keys = paired_keys_.data();
    }
    // The keys transposed for ggml::attention_row's 16-key scores, 16 zero columns past the last, for a batch of 8
    // rows or more: for fewer (a generated token) the copy would cost as much as the scores it speeds up.
    const Index ld = p0 + n + 16;
    const bool transposed = n >= 8;
    if (transposed) {
      keys_t_.assign(static_cast<std::size_t>(s_.kv_heads * hd * ld), 0.0f);
      for (Index g = 0; g < s_.kv_heads; ++g)
        for (Index j = 0; j < p0 + n; ++j)
          for (Index d = 0; d < hd; ++d)
            keys_t_[static_cast<std::size_t>((g * hd + d) * ld + j)] = keys[(g * cap + j) * hd + d];
    }
    // A generated token's heads in parallel too once its context is long enough to pay for the hand-over.
    const bool parallel = H * n >= 2 && static_cast<double>(n) * static_cast<double>(p0 + n) * static_cast<double>(qn) >
                                            (transposed ? 2e5 : 5e4);
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
    for (Index task = 0; task < H * n; ++task) {
      if (cancelled()) continue;  // the layer's result is dropped
      const Index h = task / n, i = task % n, row = p0 + i, g = h / group;
      float* p = grown(st_.scores[static_cast<std::size_t>(omp_get_thread_num())], cols + 65 * hd);
      const ggml::AttentionRow a{keys + g * cap * hd,
                                 values + g * cap * hd,
                                 hd,
                                 scale,
                                 n,
                                 s_.attn_softcap,
                                 transposed ? keys_t_.data() + g * hd * ld : nullptr,
                                 ld,
                                 s_.ggml_f16_cache};
      const Index lo = window > 0 ? std::max<Index>(0, row - window + 1) : 0;
      const float* q = qkv + i * width + h * hd;
      if (pairs) {
        ggml::to_pairs(q, p + cols + 64 * hd, 1, hd);
        q = p + cols + 64 * hd;
      }
      ggml::attention_row(a, q, lo, row, p, ctx + i * qn + h * hd, p + cols);
      std::fill(p + row + 1, p + cols, 0.0f);
      if (f16) {
        for (Index j = 0; j < cols; ++j) maps.f16(static_cast<int>(h))[row * cols + j] = Eigen::half(p[j]);
      } else {
        std::copy_n(p, cols, maps.f32(static_cast<int>(h)) + row * cols);
      }
    }
  }

  const TransformerModel::Impl& m_;
  const TransformerConfig& c_;
  const DecoderSettings& s_;
  const DecoderWeights& w_;
  DecoderState& st_;
  TransformerRun& run_;
  std::vector<float> paired_keys_;  // ggml_attention_rows: the layer's keys in the file's order
  std::vector<float> keys_t_;       // ggml_attention_rows: the layer's keys transposed
  Index alone_ = -1;                // operator(): the row whose MLP the last layer computes alone
  std::vector<HeadStack*> maps_;
  std::vector<OnDemandLayer>* lazy_ = nullptr;  // on demand: the layers' queries, keys and row statistics
  std::vector<Matrix>* hidden_;
  std::vector<float> cos_, sin_;
  const std::atomic<bool>* cancel_ = nullptr;
  Hooks* hooks_ = nullptr;
  const TransformerRun* base_ = nullptr;
  int first_ = 0;
  bool base_attention_ = false;
  Index logits_row_ = -1;
};

// Re-runs of many sweep cells of one base run at once (decoder_rerun_cells). Each cell (a set of edits, its own
// Hooks) joins at its first edited layer with the base's residual stream of its rows: from its first edited
// position (a causal model's earlier rows are the base's) to the measured one (later rows cannot reach it), or to
// the last when it takes a head's mean over every position. At each layer the rows of every cell that has joined are
// stacked, so each weight is read and widened once per layer for all of them (one product of hundreds of rows, where
// one re-run per cell makes a product of a few dozen rows per cell: the widening of a 16-bit matrix and the small
// GEMMs' poor use of the cores cost more than the arithmetic); the positions' work (RoPE, the keys and values, the
// attention) is per cell, its keys and values before its first row the base's. The last layer's output and the
// final norm and output embedding are computed for the measured rows only.
class CellBatch {
 public:
  struct Cell {
    Hooks* hooks;
    int first;            // the first edited layer
    Index p0, rows;       // its rows [p0, p0 + rows) of the input
    Index offset = 0;     // where its rows start in the stacked buffers
    bool base_attention;  // its first layer's attention is the base's (only z or later sites edited there)
  };

  CellBatch(const TransformerModel::Impl& m, DecoderState& st, const TransformerRun& base, Index position,
            const std::atomic<bool>* cancel)
      : c_(m.config), s_(c_.decoder), w_(*m.lm_weights), st_(st), a_(*base.activations),
        n_(a_.resid_pre.front().rows()), position_(position), cancel_(cancel) {}

  // `cells` in the order of their first layers (of those joining at one layer, the ones whose attention there is
  // the base's last); their logits at the measured position into `logits`, a row each.
  Result<void> operator()(std::vector<Cell>& cells, Matrix& logits) {
    const Index d = c_.hidden, hd = s_.head_dim, qn = c_.heads * hd, kvn = s_.kv_heads * hd;
    const Index width = qn + 2 * kvn;
    Index total = 0;
    for (Cell& cell : cells) {
      cell.offset = total;
      total += cell.rows;
    }
    float* x = grown(st_.x, total * d);
    float* xn = grown(st_.xn, total * d);
    float* qkv = grown(st_.qkv, total * width);
    float* ctx = grown(st_.ctx, total * qn);
    keys_.resize(cells.size());
    values_.resize(cells.size());
    for (std::size_t k = 0; k < cells.size(); ++k) {
      keys_[k].resize(static_cast<std::size_t>(s_.kv_heads * n_ * hd));
      values_[k].resize(static_cast<std::size_t>(s_.kv_heads * n_ * hd));
    }
    const LayerMath lm{c_, s_, st_, cancel_};
    std::size_t joined = 0;
    for (int l = cells.front().first; l < c_.layers; ++l) {
      const auto ul = static_cast<std::size_t>(l);
      for (; joined < cells.size() && cells[joined].first == l; ++joined) {
        const Cell& cell = cells[joined];
        Eigen::Map<Matrix>(x + cell.offset * d, cell.rows, d) = a_.resid_pre[ul].middleRows(cell.p0, cell.rows);
      }
      const std::span<Cell> active(cells.data(), joined);
      const Index rows = active.back().offset + active.back().rows;
      for (Cell& cell : active) cell.hooks->at(Site::ResidPre, l, x + cell.offset * d, cell.p0, cell.rows, d);
      const DecoderLayerWeights& L = w_.layers[ul];
      // The cells that join here with the base's attention are the last ones (a sweep's cells of one layer all are):
      // the rows before theirs are all that attend.
      std::size_t attending = active.size();
      while (attending > 0 && active[attending - 1].first == l && active[attending - 1].base_attention) --attending;
      const std::span<Cell> attend = active.first(attending);
      if (!attend.empty()) {
        lm.project_qkv(L, x, xn, qkv, attend.back().offset + attend.back().rows);
        if (lm.cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
        position_and_cache(l, L, attend, qkv, lm);
        attention(l, attend, qkv, ctx);
      }
      for (Cell& cell : active) {
        if (cell.first == l && cell.base_attention)
          Eigen::Map<Matrix>(ctx + cell.offset * qn, cell.rows, qn) = a_.z[ul].middleRows(cell.p0, cell.rows);
        cell.hooks->at(Site::Z, l, ctx + cell.offset * qn, cell.p0, cell.rows, qn);
      }
      const auto each_cell = [&](Site site, float* at, Index ld) {
        for (Cell& cell : active) cell.hooks->at(site, l, at + cell.offset * ld, cell.p0, cell.rows, ld);
      };
      if (l + 1 < c_.layers) {
        lm.finish(L, x, xn, ctx, rows, each_cell);
      } else {
        // The last layer: only the measured rows go on (the others' keys and values were all it needed of them).
        std::vector<Cell> measured(active.begin(), active.end());
        for (std::size_t k = 0; k < measured.size(); ++k) {
          const Cell& cell = active[k];
          const Index from = cell.offset + position_ - cell.p0, to = static_cast<Index>(k);
          std::copy_n(x + from * d, d, x + to * d);
          std::copy_n(ctx + from * qn, qn, ctx + to * qn);
          measured[k].offset = to;
          measured[k].p0 = position_;
          measured[k].rows = 1;
        }
        lm.finish(L, x, xn, ctx, static_cast<Index>(measured.size()), [&](Site site, float* at, Index ld) {
          for (Cell& cell : measured) cell.hooks->at(site, l, at + cell.offset * ld, cell.p0, 1, ld);
        });
      }
      if (lm.cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
    }
    const auto count = static_cast<Index>(cells.size());
    for (Index k = 0; k < count; ++k) norm(s_, x + k * d, xn + k * d, w_.final_norm, d, &w_.final_norm_bias);
    logits.resize(count, c_.vocab_size);
    stored_linear(xn, count, d, w_.output(), logits.data(), c_.vocab_size, st_.convert);
    soft_cap_logits(s_, logits);
    for (const io::SafeTensors& file : w_.files) ATTN_TRY(file.intact());
    return {};
  }

 private:
  // Each cell's rows positioned (RoPE at their positions in the input), their keys and values into the cell's cache
  // of this layer after the base's keys and values of the rows before them.
  void position_and_cache(int l, const DecoderLayerWeights& L, std::span<Cell> active, float* qkv,
                          const LayerMath& lm) {
    const Index hd = s_.head_dim, qn = c_.heads * hd, kvn = s_.kv_heads * hd, width = qn + 2 * kvn;
    const bool local = s_.local_rope_theta && s_.sliding[static_cast<std::size_t>(l)];
    const Rope rope = rope_for(c_, n_, local);  // the input's length, as the base run's (dynamic scaling)
    const Index half = static_cast<Index>(rope.inv.size());
    position_tables(c_, rope, local, 0, n_, cos_, sin_);
    const Matrix& base_keys = a_.keys[static_cast<std::size_t>(l)];
    const Matrix& base_values = a_.values[static_cast<std::size_t>(l)];
#pragma omp parallel for schedule(dynamic)
    for (std::size_t k = 0; k < active.size(); ++k) {
      const Cell& cell = active[k];
      float* keys = keys_[k].data();
      float* values = values_[k].data();
      for (Index i = 0; i < cell.rows; ++i) {
        const Index p = cell.p0 + i;
        float* row = qkv + (cell.offset + i) * width;
        lm.position_row(L, row, cos_.data() + p * half, sin_.data() + p * half, half, !ggml_attention(s_));
        for (Index g = 0; g < s_.kv_heads; ++g) {
          std::copy_n(row + qn + g * hd, hd, keys + (g * n_ + p) * hd);
          std::copy_n(row + qn + kvn + g * hd, hd, values + (g * n_ + p) * hd);
        }
      }
      for (Index g = 0; g < s_.kv_heads; ++g) {
        for (Index p = 0; p < cell.p0; ++p) {
          Eigen::Map<RowVector>(keys + (g * n_ + p) * hd, hd) = base_keys.row(p).segment(g * hd, hd);
          Eigen::Map<RowVector>(values + (g * n_ + p) * hd, hd) = base_values.row(p).segment(g * hd, hd);
        }
      }
    }
  }

  // Every cell's rows' attention over its cache (causal, the layer's window and soft-cap), their heads' outputs
  // into ctx.
  void attention(int l, std::span<Cell> active, const float* qkv, float* ctx) {
    const Index hd = s_.head_dim, H = c_.heads, qn = H * hd, width = qn + 2 * s_.kv_heads * hd;
    const Index group = H / s_.kv_heads;
    const Index window = s_.sliding[static_cast<std::size_t>(l)] ? s_.window : 0;
    std::vector<std::array<Index, 3>> tasks;  // cell, head, first row of a block
    for (std::size_t k = 0; k < active.size(); ++k)
      for (Index h = 0; h < H; ++h)
        for (Index r0 = 0; r0 < active[k].rows; r0 += kScoreBlock) tasks.push_back({static_cast<Index>(k), h, r0});
    const int threads = omp_get_max_threads();
    if (st_.scores.size() < static_cast<std::size_t>(threads)) st_.scores.resize(static_cast<std::size_t>(threads));
#pragma omp parallel for schedule(dynamic)
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const auto [k, h, r0] = tasks[t];
      const Cell& cell = active[static_cast<std::size_t>(k)];
      const Index rows = std::min(kScoreBlock, cell.rows - r0), g = h / group;
      const Index keys_needed = cell.p0 + r0 + rows;
      float* S = grown(st_.scores[static_cast<std::size_t>(omp_get_thread_num())], rows * keys_needed);
      const float* keys = keys_[static_cast<std::size_t>(k)].data() + g * n_ * hd;
      const float* values = values_[static_cast<std::size_t>(k)].data() + g * n_ * hd;
      if (ggml_attention(s_)) {
        // llama.cpp's arithmetic, its batch the whole input's (as run_ids of the edited input).
        // The file's order of the query and key dimensions (ggml_rope_pairs): a paired copy of the keys.
        const Index extra = s_.ggml_rope_pairs ? (keys_needed + 1) * hd : 0;
        float* p = grown(st_.scores[static_cast<std::size_t>(omp_get_thread_num())], keys_needed + 64 * hd + extra);
        float* paired = p + keys_needed + 64 * hd;
        if (extra) ggml::to_pairs(keys, paired + hd, keys_needed, hd);
        const ggml::AttentionRow a{
            extra ? paired + hd : keys, values, hd, ggml_score_scale(s_), n_, s_.attn_softcap, nullptr, Index{0},
            s_.ggml_f16_cache};
        for (Index i = 0; i < rows; ++i) {
          const Index row = cell.p0 + r0 + i;
          const Index lo = window > 0 ? std::max<Index>(0, row - window + 1) : 0;
          const float* q = qkv + (cell.offset + r0 + i) * width + h * hd;
          if (extra) {
            ggml::to_pairs(q, paired, 1, hd);
            q = paired;
          }
          ggml::attention_row(a, q, lo, row, p, ctx + (cell.offset + r0 + i) * qn + h * hd, p + keys_needed);
        }
        continue;
      }
      attention_scores(qkv + (cell.offset + r0) * width + h * hd, width, keys, hd, rows, keys_needed, hd, S,
                       keys_needed, rows < 8);
      for (Index i = 0; i < rows; ++i) {
        const Index row = cell.p0 + r0 + i;
        const Index lo = window > 0 ? std::max<Index>(0, row - window + 1) : 0;
        softmax_row(S + i * keys_needed, row, lo, row, keys_needed, s_.attn_softcap);
        if (s_.ggml_f16_cache) io::round_to_half(S + i * keys_needed, keys_needed);  // as the runner's attention
      }
      Eigen::Map<const RowMajor> scores(S, rows, keys_needed);
      Eigen::Map<const RowMajor> v(values, keys_needed, hd);
      Eigen::Map<RowMajor, 0, Strided> out(ctx + (cell.offset + r0) * qn + h * hd, rows, hd, Strided(qn));
      block_product(out, scores, v);
    }
  }

  const TransformerConfig& c_;
  const DecoderSettings& s_;
  const DecoderWeights& w_;
  DecoderState& st_;
  const Activations& a_;
  Index n_, position_;
  const std::atomic<bool>* cancel_;
  std::vector<std::vector<float>> keys_, values_;  // per cell: this layer's [kv_heads][tokens][head_dim]
  std::vector<float> cos_, sin_;
};

// How many leading tokens of `run` the cache and `previous` can supply (0: none).
Index reusable(const TransformerModel::Impl& m, const DecoderState& st, const TransformerRun& run,
               const RunOptions& o) {
  const TransformerRun* prev = o.previous;
  const auto& c = m.config;
  if (o.keep != RunOptions::Keep::Maps) return 0;
  if (!prev || prev->ids != st.ids || prev->attention.layers.size() != static_cast<std::size_t>(c.layers)) return 0;
  if (prev->attention.layers.front().maps.precision() != o.precision) return 0;
  if (o.hidden_states && prev->hidden_states.size() != static_cast<std::size_t>(c.layers) + 1) return 0;
  const Index n = static_cast<Index>(run.ids.size());
  if (c.decoder.rope == RopeScaling::Dynamic && n > c.max_positions) return 0;
  const auto mismatch = std::mismatch(prev->ids.begin(), prev->ids.end(), run.ids.begin(), run.ids.end());
  const Index common = static_cast<Index>(mismatch.first - prev->ids.begin());
  return std::min(common, n - 1);  // the last token is always computed: its logits are the prediction
}

// Rows [0, keep) of layer l's maps of `prev` into `to` (already sized), the rest of those rows zero: done just
// before the layer is computed, so that the layer in view of a keystroke does not wait for every layer's copy.
void copy_prefix(const TransformerRun& prev, std::size_t l, HeadStack& to, Index keep) {
  const HeadStack& from = prev.attention.layers[l].maps;
#pragma omp parallel for schedule(static) if (keep * keep * to.heads() > (1 << 18))
  for (int h = 0; h < to.heads(); ++h) {
    for (Index r = 0; r < keep; ++r) {
      if (to.precision() == Precision::F16) {
        const Eigen::half* src = from.f16(h) + r * from.cols();
        Eigen::half* dst = to.f16(h) + r * to.cols();
        std::copy_n(src, keep, dst);
        std::fill(dst + keep, dst + to.cols(), Eigen::half(0.0f));
      } else {
        const float* src = from.f32(h) + r * from.cols();
        float* dst = to.f32(h) + r * to.cols();
        std::copy_n(src, keep, dst);
        std::fill(dst + keep, dst + to.cols(), 0.0f);
      }
    }
  }
}

std::vector<HeadStack> make_stacks(const TransformerConfig& c, Index size, Precision precision) {
  std::vector<HeadStack> stacks;
  for (int l = 0; l < c.layers; ++l)
    stacks.emplace_back(c.heads, size, size, precision, HeadStack::Init::Uninitialised);
  return stacks;
}

void predict(const TransformerModel::Impl& m, TransformerRun& run, int k) {
  if (k <= 0 || run.logits.rows() == 0) return;
  if (run.logits_from + run.logits.rows() != static_cast<Index>(run.ids.size())) return;  // not the last position's
  Prediction p;
  p.position = static_cast<int>(run.ids.size()) - 1;
  p.top = top_k(run.logits.bottomRows(1), k, m.tokenizer.get(), nullptr);
  run.predictions.push_back(std::move(p));
}

// The next token from the last row of `logits` (decoder_torch's greedy rule: the first maximum).
int choose(const RowVector& logits, const GenerateOptions& g, SplitMix64& rng, float& probability) {
  const Index v = logits.size();
  const float t = g.temperature > 0.0f ? g.temperature : 1.0f;
  const double mx = logits.maxCoeff();
  std::vector<double> p(static_cast<std::size_t>(v));
  double sum = 0;
  for (Index i = 0; i < v; ++i) sum += p[static_cast<std::size_t>(i)] = std::exp((logits[i] - mx) / t);
  for (double& e : p) e /= sum;
  if (g.temperature <= 0.0f) {
    Index best = 0;
    logits.maxCoeff(&best);
    probability = static_cast<float>(p[static_cast<std::size_t>(best)]);
    return static_cast<int>(best);
  }
  std::vector<int> order(static_cast<std::size_t>(v));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
  std::size_t keep =
      g.top_k > 0 ? std::min<std::size_t>(order.size(), static_cast<std::size_t>(g.top_k)) : order.size();
  double mass = 0;
  for (std::size_t i = 0; i < keep; ++i) {
    mass += p[static_cast<std::size_t>(order[i])];
    if (mass >= g.top_p) {
      keep = i + 1;
      break;
    }
  }
  mass = 0;
  for (std::size_t i = 0; i < keep; ++i) mass += p[static_cast<std::size_t>(order[i])];
  double u = static_cast<double>(rng.uniform()) * mass;
  int chosen = order[keep - 1];
  for (std::size_t i = 0; i < keep; ++i) {
    u -= p[static_cast<std::size_t>(order[i])];
    if (u < 0) {
      chosen = order[i];
      break;
    }
  }
  probability = static_cast<float>(p[static_cast<std::size_t>(chosen)]);
  return chosen;
}

std::vector<Matrix> make_hidden(const TransformerConfig& c, Index rows) {
  return std::vector<Matrix>(static_cast<std::size_t>(c.layers) + 1, Matrix::Zero(rows, c.hidden));
}

}  // namespace

Result<void> decoder_run(const TransformerModel::Impl& m, DecoderState& st, TransformerRun& run,
                         const RunOptions& options, Hooks* hooks, const TransformerRun* base) {
  const auto& c = m.config;
  const Index n = static_cast<Index>(run.ids.size());
  // Interventions compute every token (a capture keeps them all; edits must not reach the next keystroke's cache),
  // except a re-run, which starts at the first edited layer and row.
  Index keep = hooks ? 0 : reusable(m, st, run, options);
  int first = 0;
  bool base_attention = false;
  if (base) {
    if (options.hidden_states && base->hidden_states.size() != static_cast<std::size_t>(c.layers) + 1)
      return fail(ErrorKind::Mismatch, "rerun: hidden states asked, but the base run kept none");
    first = hooks->first_layer();
    keep = hooks->first_position(true);
    if (options.all_logits) keep = 0;
    if (options.logits_position >= 0) keep = std::min<Index>(keep, options.logits_position);
    keep = std::min(keep, n - 1);
    base_attention = hooks->attention_unchanged_at_first();
  }
  const TransformerRun* from = base ? base : options.previous;  // the maps and hidden states of the rows kept
  const bool lazy = options.keep != RunOptions::Keep::Maps, stored = options.keep != RunOptions::Keep::OnDemand;
  if (lazy) {
    const DecoderSettings& d = c.decoder;
    for (int l = 0; l < c.layers; ++l) {
      const Index window = d.sliding[static_cast<std::size_t>(l)] ? d.window : 0;
      run.on_demand.emplace_back(c.heads, d.kv_heads, d.head_dim, n, true, window, d.attn_softcap);
      if (options.cancel && options.cancel->load(std::memory_order_relaxed))
        return fail(ErrorKind::Cancelled, "cancelled");
    }
  }
  std::vector<HeadStack> stacks = stored ? make_stacks(c, n, options.precision) : std::vector<HeadStack>{};
  if (options.hidden_states) run.hidden_states = make_hidden(c, n);
  std::vector<Matrix>* hidden = options.hidden_states ? &run.hidden_states : nullptr;
  if (keep > 0 && hidden) {
    for (std::size_t i = 0; i < hidden->size(); ++i) (*hidden)[i].topRows(keep) = from->hidden_states[i].topRows(keep);
  }
  if (base && hidden) {
    // Every row entering the layers up to the first edited one is the base's residual stream.
    for (int l = 0; l <= first; ++l)
      (*hidden)[static_cast<std::size_t>(l)] = base->activations->resid_pre[static_cast<std::size_t>(l)];
  }
  std::vector<HeadStack*> maps;
  for (auto& s : stacks) maps.push_back(&s);
  Extension extend(m, st, run, maps, hidden, lazy ? &run.on_demand : nullptr);
  extend.set_cancel(options.cancel);
  extend.set_hooks(hooks, base, first, base_attention);
  extend.set_logits_row(options.logits_position);
  const auto done = [&](int l) {
    if (stored) run.attention.layers.push_back({Stage::Decoder, l, std::move(stacks[static_cast<std::size_t>(l)])});
    if (options.on_layer && !options.on_layer(run.attention)) return false;
    if (options.on_progress) options.on_progress(l + 1, c.layers, n - keep);
    return true;
  };
  const auto copy = [&](int l) {
    // A re-run's first edited layer keeps the base's attention whole when only its head outputs or later change.
    const Index rows = base && l == first && base_attention ? n : keep;
    if (rows > 0) copy_prefix(*from, static_cast<std::size_t>(l), stacks[static_cast<std::size_t>(l)], rows);
  };
  for (int l = 0; l < first; ++l) {  // a re-run's layers before the first edited one: the base's
    copy_prefix(*base, static_cast<std::size_t>(l), stacks[static_cast<std::size_t>(l)], n);
    if (!done(l)) return fail(ErrorKind::Cancelled, "cancelled");
  }
  auto ran = extend(keep, n, options.all_logits, run.logits, done, copy);
  if (hooks && hooks->edits()) st.ids.clear();  // the cache holds edited keys and values: no later run reuses it
  ATTN_TRY(std::move(ran));
  run.logits_from =
      options.all_logits ? 0 : static_cast<int>(options.logits_position >= 0 ? options.logits_position : n - 1);
  run.reused_tokens = base ? 0 : static_cast<int>(keep);
  predict(m, run, options.top_k);
  return {};
}

Result<void> decoder_rerun_cells(const TransformerModel::Impl& m, DecoderState& st, const TransformerRun& base,
                                 const std::vector<std::vector<Edit>>& cells, Index position,
                                 const std::atomic<bool>* cancel, Matrix& logits) {
  const Index n = base.activations->resid_pre.front().rows();
  std::vector<Hooks> hooks;
  hooks.reserve(cells.size());
  std::vector<CellBatch::Cell> batch;
  for (const auto& edits : cells) {
    Hooks& h = hooks.emplace_back(m.config, n, edits, false);
    const bool mean = std::any_of(edits.begin(), edits.end(), [](const Edit& e) { return e.kind == Edit::Kind::Mean; });
    const Index p0 = std::min<Index>(h.first_position(true), position);
    batch.push_back({&h, h.first_layer(), p0, (mean ? n : position + 1) - p0, 0, h.attention_unchanged_at_first()});
  }
  // By first layer; of those joining at one layer, the ones with the base's attention there last (CellBatch).
  std::stable_sort(batch.begin(), batch.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first, a.base_attention) < std::pair(b.first, b.base_attention);
  });
  Matrix sorted;
  CellBatch run(m, st, base, position, cancel);
  ATTN_TRY(run(batch, sorted));  // the cache is untouched (the cells keep their own keys and values)
  logits.resize(sorted.rows(), sorted.cols());
  for (std::size_t k = 0; k < batch.size(); ++k)
    logits.row(batch[k].hooks - hooks.data()) = sorted.row(static_cast<Index>(k));
  return {};
}

namespace {

// The maps' first size in a generation: the prompt and up to this many new tokens; then doubled as tokens arrive.
constexpr Index kFirstGeneratedRows = 64;

// Every layer's maps and the hidden states resized to `to` rows and columns: rows [0, rows_done) kept (their first
// columns, the rest zero), later rows left for the extension to write. How a generation's maps grow as tokens
// arrive, and shrink to the tokens there are when it stops early.
void resize_generation(TransformerRun& run, const TransformerConfig& c, Precision precision, Index rows_done,
                       Index to) {
  for (auto& layer : run.attention.layers) {
    const HeadStack& from = layer.maps;
    const Index keep = std::min(rows_done, to), cols = std::min(from.cols(), to);
    HeadStack resized(c.heads, to, to, precision, HeadStack::Init::Uninitialised);
    for (int h = 0; h < c.heads; ++h) {
      for (Index r = 0; r < keep; ++r) {
        if (precision == Precision::F16) {
          Eigen::half* dst = resized.f16(h) + r * to;
          std::copy_n(from.f16(h) + r * from.cols(), cols, dst);
          std::fill(dst + cols, dst + to, Eigen::half(0.0f));
        } else {
          float* dst = resized.f32(h) + r * to;
          std::copy_n(from.f32(h) + r * from.cols(), cols, dst);
          std::fill(dst + cols, dst + to, 0.0f);
        }
      }
    }
    layer.maps = std::move(resized);
  }
  for (Matrix& h : run.hidden_states) {
    const Index old = h.rows();
    h.conservativeResize(to, Eigen::NoChange);
    if (to > old) h.bottomRows(to - old).setZero();
  }
}

}  // namespace

Result<void> generate_with(const TransformerModel::Impl& m, TransformerRun& run, const GenerateOptions& g,
                           const RunOptions& options, const std::function<Result<void>(Index p0, Index p1)>& extend) {
  const auto& c = m.config;
  const Index prompt = static_cast<Index>(run.ids.size());
  Index steps = std::max(0, g.max_new_tokens);
  if (prompt + steps > c.context()) {
    steps = c.context() - prompt;
    run.warnings.push_back("generation stops at " + std::to_string(c.context()) + " tokens (the model's context): " +
                           std::to_string(steps) + " new tokens of " + std::to_string(g.max_new_tokens));
  }
  const Index size = prompt + steps;
  // The maps grow with the tokens (doubling): a generation asked for 12,000 tokens that stops at its end token after
  // 40 never holds the maps of 12,000 (its estimate, checked before, is of the whole request).
  Index capacity = std::min(size, prompt + std::min(steps, kFirstGeneratedRows));
  for (auto& s : make_stacks(c, capacity, options.precision)) {
    run.attention.layers.push_back({Stage::Decoder, static_cast<int>(run.attention.layers.size()), std::move(s)});
  }
  if (options.hidden_states) run.hidden_states = make_hidden(c, capacity);
  ATTN_TRY(extend(0, prompt));
  run.prompt_tokens = static_cast<int>(prompt);
  SplitMix64 rng(g.seed);
  const text::Tokenizer* tok = m.tokenizer.get();
  for (Index step = 0; step < steps; ++step) {
    float probability = 0;
    const int id = choose(run.logits.bottomRows(1), g, rng, probability);
    const Index pos = prompt + step;
    if (options.top_k > 0) {
      run.step_predictions.push_back(
          {static_cast<int>(pos - 1), top_k(run.logits.bottomRows(1), options.top_k, tok, nullptr)});
    }
    run.ids.push_back(id);
    run.attention.tokens.push_back(token_label(tok, id));
    run.attention.spans.push_back(Span{});
    run.generated_probability.push_back(probability);
    if (pos + 1 > capacity) {
      capacity = std::min(size, std::max(pos + 1, 2 * capacity));
      resize_generation(run, c, options.precision, pos, capacity);
    }
    ATTN_TRY(extend(pos, pos + 1));
    const bool eos = std::find(c.decoder.eos.begin(), c.decoder.eos.end(), id) != c.decoder.eos.end();
    if (g.on_token && !g.on_token(static_cast<int>(pos), id, probability)) break;
    if (g.stop_at_eos && eos) break;
  }
  const Index final_size = static_cast<Index>(run.ids.size());
  // The maps and hidden states to the tokens there are.
  if (final_size < capacity) resize_generation(run, c, options.precision, final_size, final_size);
  run.logits_from = static_cast<int>(final_size - 1);
  predict(m, run, options.top_k);
  return {};
}

Result<void> decoder_generate(const TransformerModel::Impl& m, DecoderState& st, TransformerRun& run,
                              const GenerateOptions& g, const RunOptions& options) {
  std::optional<Extension> extension;  // made once generate_with has sized the maps
  return generate_with(m, run, g, options, [&](Index p0, Index p1) -> Result<void> {
    if (!extension) {
      std::vector<HeadStack*> maps;
      for (auto& layer : run.attention.layers) maps.push_back(&layer.maps);
      extension.emplace(m, st, run, maps, options.hidden_states ? &run.hidden_states : nullptr);
      st.ids.clear();
      extension->reserve(run.attention.layers.front().maps.rows());  // no cancel flag here: always true
    }
    return (*extension)(p0, p1, false, run.logits, {});
  });
}

}  // namespace attn::models
