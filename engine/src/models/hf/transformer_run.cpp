// The forward passes. One layer is four large GEMMs (fused QKV, output projection, FFN in and out),
// each a single sgemm over all tokens handed to OpenBLAS with its threads, plus per-head attention run
// as parallel (head, row block) tasks whose scores are written straight into the run's HeadStack and
// normalised there (no copy for float32 maps). Everything between the GEMMs (biases, GELU, residuals,
// layer norms) is one fused pass over the rows, parallel for long inputs.
#include "attn/models/transformer.h"
#include "norm_math.h"
#include "transformer_impl.h"
#include "hooks.h"
#include "attn/models/intervention.h"
#include "row_streams.h"
#include "../../core/nonfinite.h"
#include "../../core/try.h"

#include "../../mechanisms/exp_kernel.h"
#include "../../mechanisms/attention_tiles.h"

#include <unsupported/Eigen/SpecialFunctions>

#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <limits>
#include <numeric>

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#endif

namespace attn::models {

// A float buffer whose capacity only grows: a session re-running shorter inputs allocates nothing.
struct GrowingBuffer {
  std::vector<float, Eigen::aligned_allocator<float>> data;  // 32-byte aligned for the packed panels
  float* get(std::size_t n) {
    if (data.size() < n) data.resize(n);
    return data.data();
  }
};

namespace {

using Strided = Eigen::OuterStride<>;
using StridedMap = Eigen::Map<Matrix, 0, Strided>;
using ConstStridedMap = Eigen::Map<const Matrix, 0, Strided>;
using MatrixMapW = Eigen::Map<Matrix>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;
namespace tiles = detail::tiles;

// Rows at which the elementwise passes start to share rows between threads: below it, waking the
// second thread costs more than the pass.
constexpr Index kParallelRows = 256;
// Query rows per attention task: 32 rows of scores (64 KiB at 512 keys, 256 KiB at 2,048) stay in L2
// from the Q K^T tile through the softmax to the weights x V tile.
constexpr Index kRowBlock = 32;

// OpenBLAS's sgemm on two threads runs about a third slower when the row count is not a multiple of 16
// (here: [123 x 768] x [768 x 2304] at 77 GFLOP/s, [128 x 768] at 120). The layer GEMMs therefore run on
// the token rows rounded up to 16; the extra rows of their inputs are zero and their results unused.
constexpr Index kGemmRowMultiple = 16;
Index gemm_rows(Index n) { return (n + kGemmRowMultiple - 1) / kGemmRowMultiple * kGemmRowMultiple; }

template <class F>
void for_rows(Index n, const F& f) {
#pragma omp parallel for schedule(static) if (n >= kParallelRows)
  for (Index i = 0; i < n; ++i) f(i);
}

void to_half(const float* src, Eigen::half* dst, Index n) {
  Index j = 0;
#if defined(__AVX2__) && defined(__F16C__)
  auto* out = reinterpret_cast<std::uint16_t*>(dst);
  for (; j + 8 <= n; j += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), h);
  }
#endif
  for (; j < n; ++j) dst[j] = Eigen::half(src[j]);
}

// act(row + bias) in place.
void bias_activation(float* row, const RowVector& bias, Index f, Activation act) {
  ArrayMap h(row, f);
  h += bias.transpose().array();
  switch (act) {
    case Activation::GeluErf: h = 0.5f * h * (1.0f + (h * 0.70710678118654752f).erf()); break;
    case Activation::GeluTanh: {
      constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
      h = 0.5f * h * (1.0f + (k * (h + 0.044715f * h.cube())).tanh());
      break;
    }
    case Activation::Relu: h = h.max(0.0f); break;
  }
}

std::string format_probability(float p) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, p, std::chars_format::fixed, 3);
  return std::string(buf, r.ptr);
}

}  // namespace

// The runner's buffers (TransformerRunner::Scratch is this).
struct TransformerBuffers {
  GrowingBuffer x, xn, qkv, ctx, proj, ffn, packed, gather;
  std::vector<GrowingBuffer> scores;  // per thread: one row block of scores (F16 maps; on demand)
  std::vector<GrowingBuffer> capped;  // per thread: one row of scores as the softmax saw them (on demand)
  std::vector<float> key_bias;        // 0 or -inf per key (padding)
};

struct TransformerRunner::Scratch : TransformerBuffers {
  std::shared_ptr<DecoderState> decoder;  // the decoder family's key/value cache and buffers
  std::vector<Matrix> gpt2_cache;         // GPT-2 generation: per layer [positions, 2d], keys | values
};

TransformerRunner::TransformerRunner(std::shared_ptr<const TransformerModel> model)
    : model_(std::move(model)), scratch_(std::make_unique<Scratch>()) {}
TransformerRunner::~TransformerRunner() = default;
TransformerRunner::TransformerRunner(TransformerRunner&&) noexcept = default;
TransformerRunner& TransformerRunner::operator=(TransformerRunner&&) noexcept = default;

namespace {

struct Forward {
  const TransformerModel::Impl& m;
  TransformerBuffers& s;
  const RunOptions& options;
  TransformerRun& run;
  Index n = 0;
  Hooks* hooks = nullptr;                // interventions: capture and edits at each site (null: none)
  const TransformerRun* base = nullptr;  // a re-run: the layers before the first edited one are this run's

  Index d() const { return m.config.hidden; }

  // One row block of one head: scores S (rows x keys, row stride ld) -> softmax in place (key bias,
  // causal limit; masked and future keys exactly 0).
  static void softmax_block(float* S, Index ld, Index rows, Index r0, Index keys, bool causal, const float* key_bias) {
    for (Index i = 0; i < rows; ++i) {
      float* row = S + i * ld;
      const Index valid = causal ? r0 + i + 1 : keys;
      if (key_bias) ArrayMap(row, valid) += ConstArrayMap(key_bias, valid);
      // PropagateNaN: the max is NaN when a score is, in the same pass.
      const float shift = ConstArrayMap(row, valid).maxCoeff<Eigen::PropagateNaN>();
      if (std::isnan(shift) || shift == std::numeric_limits<float>::infinity()) {
        // Non-finite scores (from non-finite weights): the row is NaN, so the run warns and the views leave
        // it blank. (The exponential pass would make 0 of a NaN, and the row would pass for a uniform one.)
        ArrayMap(row, valid).setConstant(std::numeric_limits<float>::quiet_NaN());
        if (valid < keys) ArrayMap(row + valid, keys - valid).setZero();
        continue;
      }
      const float sum = detail::exp_shifted_sum(row, valid, shift, 1.0f);
      if (sum > 0.0f) {
        ArrayMap(row, valid) *= 1.0f / sum;
      } else {
        ArrayMap(row, valid).setConstant(1.0f / static_cast<float>(valid));  // every key masked: as torch
      }
      if (valid < keys) ArrayMap(row + valid, keys - valid).setZero();  // the future: exactly 0
    }
  }

  // softmax(Q_h K_h^T + key bias) for every head, into the run's maps; context = P V_h into ctx.
  // Tasks are (head, block of query rows), head-major so that consecutive tasks reuse one head's packed
  // keys and values from L2. Causal blocks only compute keys up to their last row.
  void attention(const float* qkv, float* ctx, HeadStack& maps, bool causal, const float* key_bias) {
    const Index D = d();
    const int H = m.config.heads;
    const Index dh = D / H;
    const Index blocks = (n + kRowBlock - 1) / kRowBlock;
    const Index tasks = blocks * H;
    const bool f16 = maps.precision() == Precision::F16;
    const int threads = omp_get_max_threads();
    if (f16) {
      s.scores.resize(static_cast<std::size_t>(threads));
      for (auto& b : s.scores) b.get(static_cast<std::size_t>(kRowBlock * n));
    }
    // Waking the second thread costs more than a tiny problem.
    const bool parallel = tasks > 1 && static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(D) > 5.0e5;
#ifdef ATTN_ATTENTION_TILES
    const Index packed_k = tiles::padded(n) * dh, packed_v = n * tiles::padded(dh);
    float* packed = s.packed.get(static_cast<std::size_t>((packed_k + packed_v) * H));
#endif
#pragma omp parallel if (parallel)
    {
#ifdef ATTN_ATTENTION_TILES
#pragma omp for schedule(static)
      for (int h = 0; h < H; ++h) {
        float* base = packed + h * (packed_k + packed_v);
        tiles::pack_keys(qkv + D + h * dh, n, dh, 3 * D, base);
        tiles::pack_values(qkv + 2 * D + h * dh, n, dh, 3 * D, base + packed_k);
      }
#endif
#pragma omp for schedule(dynamic)
      for (Index task = 0; task < tasks; ++task) {
        const int h = static_cast<int>(task / blocks);
        // Causal blocks grow with the row: the largest of each head first, so the schedule ends even.
        const Index b = causal ? blocks - 1 - task % blocks : task % blocks;
        const Index r0 = b * kRowBlock;
        const Index rows = std::min(kRowBlock, n - r0);
        const Index keys = causal ? r0 + rows : n;
        float* S;
        Index ld;
        if (f16) {
          S = s.scores[static_cast<std::size_t>(omp_get_thread_num())].data.data();
          ld = keys;
        } else {
          S = maps.f32(h) + r0 * n;  // straight into the run's map: no copy
          ld = n;
        }
        // 1/sqrt(d_h) is folded into Q's weights.
#ifdef ATTN_ATTENTION_TILES
        const float* base = packed + h * (packed_k + packed_v);
        tiles::tile_block(qkv + r0 * 3 * D + h * dh, 3 * D, rows, base, dh * tiles::kPanel, dh, keys, S, ld);
        softmax_block(S, ld, rows, r0, keys, causal, key_bias);
        tiles::tile_block(S, ld, rows, base + packed_k, n * tiles::kPanel, keys, dh, ctx + r0 * D + h * dh, D);
#else
        StridedMap scores(S, rows, keys, Strided(ld));
        ConstStridedMap q(qkv + r0 * 3 * D + h * dh, rows, dh, Strided(3 * D));
        ConstStridedMap k(qkv + D + h * dh, keys, dh, Strided(3 * D));
        ConstStridedMap v(qkv + 2 * D + h * dh, keys, dh, Strided(3 * D));
        scores.noalias() = q * k.transpose();
        softmax_block(S, ld, rows, r0, keys, causal, key_bias);
        StridedMap c(ctx + r0 * D + h * dh, rows, dh, Strided(D));
        c.noalias() = scores * v;
#endif
        // The stack is uninitialised: columns beyond `keys` (the causal future of the block) are set here.
        if (f16) {
          for (Index i = 0; i < rows; ++i) {
            Eigen::half* out = maps.f16(h) + (r0 + i) * n;
            to_half(S + i * ld, out, keys);
            std::fill(out + keys, out + n, Eigen::half(0.0f));
          }
        } else if (keys < n) {
          for (Index i = 0; i < rows; ++i) ArrayMap(S + i * ld + keys, n - keys).setZero();
        }
      }
    }
  }

  // Attention kept on demand (RunOptions::Keep OnDemand or Both): the same softmax(Q_h K_h^T) by the decoders'
  // arithmetic, so that OnDemandLayer recomputes every weight exactly. Each head's queries and keys are kept; the
  // scores of blocks of kScoreBlock query rows aligned at 0 come from attention_scores (a causal block multiplied by
  // the keys up to its last row, a bidirectional one by all), and each row's softmax keeps its shift and 1 / sum and
  // streams the head's statistics; the weights also go into `maps` when the run keeps both. Context = P V_h into ctx.
  void attention_on_demand(const float* qkv, float* ctx, HeadStack* maps, OnDemandLayer& lazy, bool causal) {
    const Index D = d();
    const int H = m.config.heads;
    const Index dh = D / H;
    for_rows(n, [&](Index i) {
      const float* row = qkv + i * 3 * D;  // 1/sqrt(d_h) is folded into Q's weights
      for (int h = 0; h < H; ++h) {
        std::copy_n(row + h * dh, dh, lazy.query(h, i));
        std::copy_n(row + D + h * dh, dh, lazy.key(h, i));
      }
    });
    const Index blocks = (n + kScoreBlock - 1) / kScoreBlock;
    const Index tasks = blocks * H;
    const int threads = omp_get_max_threads();
    s.scores.resize(static_cast<std::size_t>(threads));
    s.capped.resize(static_cast<std::size_t>(threads));
    for (auto& b : s.scores) b.get(static_cast<std::size_t>(kScoreBlock * n));
    for (auto& b : s.capped) b.get(static_cast<std::size_t>(n));
    RowStreams streams;
    streams.reset(threads, H, n);
    const bool f16 = maps && maps->precision() == Precision::F16;
    const bool parallel = tasks > 1 && static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(D) > 5.0e5;
#pragma omp parallel for schedule(dynamic) if (parallel)
    for (Index task = 0; task < tasks; ++task) {
      const int h = static_cast<int>(task / blocks);
      // Causal blocks grow with the row: the largest of each head first, so the schedule ends even.
      const Index b = causal ? blocks - 1 - task % blocks : task % blocks;
      const Index r0 = b * kScoreBlock, rows = std::min(kScoreBlock, n - r0);
      const Index keys = causal ? r0 + rows : n;
      const auto thread = static_cast<std::size_t>(omp_get_thread_num());
      float* S = s.scores[thread].data.data();  // rows x keys at row stride n
      attention_scores(lazy.query(h, r0), dh, lazy.key(h, 0), dh, rows, keys, dh, S, n, n < 8);
      for (Index i = 0; i < rows; ++i) {
        const Index row = r0 + i;
        // Without maps only the keys the block's product reads need their zeros.
        const RowSoftmax r = softmax_row(S + i * n, row, 0, causal ? row : n - 1, maps ? n : keys, 0.0f,
                                         s.capped[thread].data.data(), streams.of(static_cast<int>(thread), h));
        lazy.set_row(h, row, r.shift, r.inv_sum);
      }
      StridedMap c(ctx + r0 * D + h * dh, rows, dh, Strided(D));
      block_product(c, StridedMap(S, rows, keys, Strided(n)),
                    ConstStridedMap(qkv + 2 * D + h * dh, keys, dh, Strided(3 * D)));
      for (Index i = 0; maps && i < rows; ++i) {
        if (f16) {
          to_half(S + i * n, maps->f16(h) + (r0 + i) * n, n);
        } else {
          std::copy_n(S + i * n, n, maps->f32(h) + (r0 + i) * n);
        }
      }
    }
    streams.add_to(lazy, n);
  }

  // x [n, d] holds the embeddings (already normalised for post-LN families). `last_rows`: the rows of
  // the last layer's output anyone reads (empty: none, only the maps are wanted; nullopt: every row).
  // Returns false when options.on_layer stopped the run.
  bool layers(float* x, std::optional<std::vector<Index>> last_rows) {
    const auto& c = m.config;
    const Index D = d();
    const bool post = m.post_ln();
    const float eps = c.layer_norm_eps;
    const bool causal = c.family == Family::Gpt2;
    const Index g = gemm_rows(n);  // x holds g rows too (the callers allocate them)
    float* xn = post ? x : s.xn.get(static_cast<std::size_t>(g * D));
    float* qkv = s.qkv.get(static_cast<std::size_t>(g * 3 * D));
    float* ctx = s.ctx.get(static_cast<std::size_t>(g * D));
    std::fill(xn + n * D, xn + g * D, 0.0f);  // the padding rows of the GEMM inputs (see gemm_rows)
    std::fill(ctx + n * D, ctx + g * D, 0.0f);
    MatrixMapW QKV(qkv, g, 3 * D), XN(xn, g, D), X(x, n, D);
    const float* key_bias = s.key_bias.empty() ? nullptr : s.key_bias.data();
    const Stage stage = causal ? Stage::Decoder : Stage::Encoder;
    const bool lazy = options.keep == RunOptions::Keep::OnDemand || options.keep == RunOptions::Keep::Both;
    const bool stored = options.keep != RunOptions::Keep::OnDemand;
    for (int l = 0; lazy && l < c.layers; ++l)
      run.on_demand.emplace_back(c.heads, c.heads, D / c.heads, n, causal, 0, 0.0f);
    if (hooks && hooks->active()) last_rows = std::nullopt;  // every row of every layer is an activation
    const int first = base ? reuse_base(x) : 0;
    if (first < 0) return false;
    const bool base_attention = base && hooks->attention_unchanged_at_first();

    if (!post) {
      const auto& w0 = m.layers[static_cast<std::size_t>(first)];
      for_rows(n, [&](Index i) { layer_norm_row(x + i * D, xn + i * D, w0.norm1_gamma, w0.norm1_beta, D, eps); });
    }
    if (options.hidden_states && !base) run.hidden_states.emplace_back(X);

    for (int l = first; l < c.layers; ++l) {
      const auto& w = m.layers[static_cast<std::size_t>(l)];
      if (hooks && hooks->at(Site::ResidPre, l, x, 0, n, D) && !post)
        for_rows(n, [&](Index i) { layer_norm_row(x + i * D, xn + i * D, w.norm1_gamma, w.norm1_beta, D, eps); });
      LayerAttention layer;
      layer.stage = stage;
      layer.layer = l;
      if (l == first && base_attention) {
        // Only the head outputs or later sites of this layer are edited: its attention is the base run's.
        layer.maps = base->attention.layers[static_cast<std::size_t>(l)].maps;
        MatrixMapW(ctx, n, D) = base->activations->z[static_cast<std::size_t>(l)];
      } else {
        // Q, K, V: one GEMM; the bias is the initial value of the accumulation (Eigen zeroes the
        // destination of `=` anyway).
        QKV.rowwise() = w.qkv_bias;
        QKV.noalias() += XN * w.qkv;
        if (stored) layer.maps = HeadStack(c.heads, n, n, options.precision, HeadStack::Init::Uninitialised);
        if (lazy) {
          attention_on_demand(qkv, ctx, stored ? &layer.maps : nullptr, run.on_demand[static_cast<std::size_t>(l)],
                              causal);
        } else {
          attention(qkv, ctx, layer.maps, causal, key_bias);
        }
      }
      if (hooks) hooks->at(Site::Z, l, ctx, 0, n, D);
      if (stored) run.attention.layers.push_back(std::move(layer));
      if (options.on_layer && !options.on_layer(run.attention)) return false;
      if (options.on_progress) options.on_progress(l + 1, c.layers, n);
      if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return false;

      const bool last = l + 1 == c.layers;
      const LayerWeights* next = last ? nullptr : &m.layers[static_cast<std::size_t>(l + 1)];
      if (!last || !last_rows) {
        finish_layer(x, xn, ctx, n, g, w, next, l);
      } else if (!last_rows->empty()) {
        // The last layer's output projection and FFN for the rows read afterwards only (GPT-2's last
        // token, ViT's class token, BERT's [MASK] positions), gathered into the front of the scratch.
        const Index r = static_cast<Index>(last_rows->size());
        float* gx = s.gather.get(static_cast<std::size_t>(3 * r * D));
        float* gxn = gx + r * D;
        float* gctx = gxn + r * D;
        for (Index k = 0; k < r; ++k) {
          const Index i = (*last_rows)[static_cast<std::size_t>(k)];
          std::copy_n(x + i * D, D, gx + k * D);
          std::copy_n(ctx + i * D, D, gctx + k * D);
        }
        finish_layer(gx, gxn, gctx, r, r, w, nullptr);
        for (Index k = 0; k < r; ++k) std::copy_n(gx + k * D, D, x + (*last_rows)[static_cast<std::size_t>(k)] * D);
      }
      if (options.hidden_states) run.hidden_states.emplace_back(X);
    }
    return true;
  }

  // A re-run (TransformerRunner::rerun): the base run's maps of the layers before the first edited one, its
  // residual stream entering that layer into x, its hidden states up to there. Returns that layer, or -1 when
  // on_layer stopped the run.
  int reuse_base(float* x) {
    const auto& c = m.config;
    const int first = hooks->first_layer();
    const Activations& a = *base->activations;
    for (int l = 0; l < first; ++l) {
      run.attention.layers.push_back(base->attention.layers[static_cast<std::size_t>(l)]);
      if (options.on_layer && !options.on_layer(run.attention)) return -1;
      if (options.on_progress) options.on_progress(l + 1, c.layers, n);
    }
    MatrixMapW(x, n, d()) = a.resid_pre[static_cast<std::size_t>(first)];
    // The hidden states entering each layer are the residual stream there.
    for (int l = 0; options.hidden_states && l <= first; ++l)
      run.hidden_states.push_back(a.resid_pre[static_cast<std::size_t>(l)]);
    return first;
  }

  // The rest of a layer after attention, on `rows` rows: output projection, residual and norm, FFN,
  // residual and norm (post-LN), or the next layer's first norm into xn (pre-LN). The GEMMs run on
  // `gemm` >= rows rows, whose extra rows of xn (x for post-LN) and ctx are zero. `l`: the layer, for the hooks
  // (-1: rows gathered from the layer, no hooks).
  void finish_layer(float* x, float* xn, const float* ctx, Index rows, Index gemm, const LayerWeights& w,
                    const LayerWeights* next, int l = -1) {
    const auto& c = m.config;
    const Index D = d(), F = c.intermediate;
    const bool post = m.post_ln();
    const float eps = c.layer_norm_eps;
    float* proj = s.proj.get(static_cast<std::size_t>(gemm * D));
    float* ffn = s.ffn.get(static_cast<std::size_t>(gemm * F));
    Eigen::Map<const Matrix> CTX(ctx, gemm, D);
    MatrixMapW P(proj, gemm, D), FFN(ffn, gemm, F);
    // For post-LN families the normalised row is x itself; pre-LN normalises into xn.
    MatrixMapW XN(post ? x : xn, gemm, D);
    Hooks* h = l >= 0 ? hooks : nullptr;
    P.noalias() = CTX * w.out;
    // The block's output (projection + bias) is formed first for the hooks; x + (p + b) either way.
    for_rows(rows, [&](Index i) { ArrayMap(proj + i * D, D) += w.out_bias.transpose().array(); });
    if (h) h->at(Site::AttnOut, l, proj, 0, rows, D);
    for_rows(rows, [&](Index i) {
      ArrayMap r(x + i * D, D);
      r += ConstArrayMap(proj + i * D, D);
      layer_norm_row(x + i * D, post ? x + i * D : xn + i * D, post ? w.norm1_gamma : w.norm2_gamma,
                     post ? w.norm1_beta : w.norm2_beta, D, eps);
    });
    FFN.noalias() = XN * w.fc1;
    for_rows(rows, [&](Index i) { bias_activation(ffn + i * F, w.fc1_bias, F, c.activation); });
    P.noalias() = FFN * w.fc2;
    for_rows(rows, [&](Index i) { ArrayMap(proj + i * D, D) += w.fc2_bias.transpose().array(); });
    if (h) h->at(Site::MlpOut, l, proj, 0, rows, D);
    for_rows(rows, [&](Index i) {
      ArrayMap r(x + i * D, D);
      r += ConstArrayMap(proj + i * D, D);
      if (post) {
        layer_norm_row(x + i * D, x + i * D, w.norm2_gamma, w.norm2_beta, D, eps);
      } else if (next) {
        layer_norm_row(x + i * D, xn + i * D, next->norm1_gamma, next->norm1_beta, D, eps);
      }
    });
  }
};

// GPT-2 with a key/value cache (generation): tokens [p0, p1) of run.ids through every layer, their keys and
// values into `cache` (per layer [positions, 2d]: K | V, its rows [0, p0) already written), their rows of every
// layer's maps (run.attention, sized for every position) and hidden states written, the last row's logits into
// run.logits. The same arithmetic as Forward::layers over all rows: the parity tests compare the two.
struct Gpt2Extension {
  const TransformerModel::Impl& m;
  TransformerBuffers& s;
  std::vector<Matrix>& cache;
  TransformerRun& run;
  const RunOptions& options;

  void operator()(Index p0, Index p1) {
    const auto& c = m.config;
    const Index D = c.hidden, n = p1 - p0;
    const Index size = run.attention.layers.front().maps.cols();
    if (p0 == 0) cache.assign(static_cast<std::size_t>(c.layers), Matrix(size, 2 * D));
    for (Matrix& kv : cache) {
      if (kv.rows() < size) kv.conservativeResize(size, Eigen::NoChange);  // the maps grew with the tokens
    }
    float* x = s.x.get(static_cast<std::size_t>(n * D));
    float* xn = s.xn.get(static_cast<std::size_t>(n * D));
    float* qkv = s.qkv.get(static_cast<std::size_t>(n * 3 * D));
    float* ctx = s.ctx.get(static_cast<std::size_t>(n * D));
    for_rows(n, [&](Index i) {
      ArrayMap(x + i * D, D) = m.word.row(run.ids[static_cast<std::size_t>(p0 + i)]).transpose().array() +
                               m.positions.row(p0 + i).transpose().array();
    });
    std::vector<Matrix>* hidden = options.hidden_states ? &run.hidden_states : nullptr;
    const auto keep = [&](int index, const float* rows) {
      if (hidden) (*hidden)[static_cast<std::size_t>(index)].middleRows(p0, n) = Eigen::Map<const Matrix>(rows, n, D);
    };
    keep(0, x);
    const auto& first = m.layers.front();
    for_rows(n, [&](Index i) {
      layer_norm_row(x + i * D, xn + i * D, first.norm1_gamma, first.norm1_beta, D, c.layer_norm_eps);
    });
    Forward forward{m, s, options, run, n};
    for (int l = 0; l < c.layers; ++l) {
      const auto& w = m.layers[static_cast<std::size_t>(l)];
      MatrixMapW QKV(qkv, n, 3 * D);
      QKV.rowwise() = w.qkv_bias;
      QKV.noalias() += Eigen::Map<const Matrix>(xn, n, D) * w.qkv;
      cache[static_cast<std::size_t>(l)].middleRows(p0, n) = QKV.rightCols(2 * D);
      attention(cache[static_cast<std::size_t>(l)], qkv, ctx, run.attention.layers[static_cast<std::size_t>(l)].maps,
                p0, n);
      const LayerWeights* next = l + 1 < c.layers ? &m.layers[static_cast<std::size_t>(l + 1)] : nullptr;
      forward.finish_layer(x, xn, ctx, n, n, w, next);
      if (next) keep(l + 1, x);
    }
    // ln_f: the last hidden state after it (as transformers reports it), and the logits of the last row.
    for_rows(n,
             [&](Index i) { layer_norm_row(x + i * D, xn + i * D, m.final_gamma, m.final_beta, D, c.layer_norm_eps); });
    keep(c.layers, xn);
    run.logits = Eigen::Map<const RowVector>(xn + (n - 1) * D, D) * m.output_embedding().transpose();
    if (m.decoder_bias.size() == run.logits.cols()) run.logits.row(0) += m.decoder_bias;
  }

  // Rows [p0, p0 + n) of every head: softmax(q K^T) over the keys up to each row, into the maps; P V into ctx.
  void attention(const Matrix& kv, const float* qkv, float* ctx, HeadStack& maps, Index p0, Index n) {
    const Index D = m.config.hidden, H = m.config.heads, dh = D / H, cols = maps.cols();
    const Index blocks = (n + kRowBlock - 1) / kRowBlock, tasks = blocks * H;
    const bool f16 = maps.precision() == Precision::F16;
    const int threads = omp_get_max_threads();
    s.scores.resize(static_cast<std::size_t>(threads));
    for (auto& b : s.scores) b.get(static_cast<std::size_t>(kRowBlock * cols));
    const bool parallel =
        tasks > 1 && static_cast<double>(n) * static_cast<double>(p0 + n) * static_cast<double>(D) > 5e5;
#pragma omp parallel for schedule(dynamic) if (parallel)
    for (Index task = 0; task < tasks; ++task) {
      const Index h = task / blocks, r0 = (task % blocks) * kRowBlock, rows = std::min(kRowBlock, n - r0);
      const Index keys = p0 + r0 + rows;  // causal: the block's last row sees no further
      float* S = s.scores[static_cast<std::size_t>(omp_get_thread_num())].data.data();
      StridedMap scores(S, rows, keys, Strided(cols));
      ConstStridedMap q(qkv + r0 * 3 * D + h * dh, rows, dh, Strided(3 * D));
      ConstStridedMap k(kv.data() + h * dh, keys, dh, Strided(2 * D));
      ConstStridedMap v(kv.data() + D + h * dh, keys, dh, Strided(2 * D));
      StridedMap out(ctx + r0 * D + h * dh, rows, dh, Strided(D));
      block_product(scores, q, k.transpose());
      Forward::softmax_block(S, cols, rows, p0 + r0, keys, true, nullptr);
      block_product(out, scores, v);
      for (Index i = 0; i < rows; ++i) {
        const Index row = p0 + r0 + i;
        if (f16) {
          Eigen::half* dst = maps.f16(static_cast<int>(h)) + row * cols;
          to_half(S + i * cols, dst, keys);
          std::fill(dst + keys, dst + cols, Eigen::half(0.0f));
        } else {
          float* dst = maps.f32(static_cast<int>(h)) + row * cols;
          std::copy_n(S + i * cols, keys, dst);
          std::fill(dst + keys, dst + cols, 0.0f);
        }
      }
    }
  }
};

}  // namespace

std::vector<Prediction::Candidate> top_k(const RowVector& logits, int k, const text::Tokenizer* tok,
                                         const std::vector<std::string>* labels) {
  const Index v = logits.size();
  const float mx = logits.maxCoeff();
  double sum = 0;
  for (Index i = 0; i < v; ++i) sum += std::exp(static_cast<double>(logits[i] - mx));
  std::vector<int> idx(static_cast<std::size_t>(v));
  std::iota(idx.begin(), idx.end(), 0);
  const auto kk = static_cast<std::size_t>(std::clamp<Index>(k, 0, v));
  // NaN (from non-finite weights) ranks last, so that the order stays a strict weak ordering.
  const auto score = [&](int i) { return std::isnan(logits[i]) ? -std::numeric_limits<float>::infinity() : logits[i]; };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(kk), idx.end(),
                    [&](int a, int b) { return score(a) > score(b) || (score(a) == score(b) && a < b); });
  std::vector<Prediction::Candidate> out;
  for (std::size_t i = 0; i < kk; ++i) {
    Prediction::Candidate cand;
    cand.id = idx[i];
    cand.probability = static_cast<float>(std::exp(static_cast<double>(logits[idx[i]] - mx)) / sum);
    if (tok) {
      cand.text = tok->display(cand.id);
    } else if (labels && static_cast<std::size_t>(cand.id) < labels->size()) {
      cand.text = (*labels)[static_cast<std::size_t>(cand.id)];
    } else if (labels) {
      cand.text = "LABEL_" + std::to_string(cand.id);
    } else {
      cand.text = std::to_string(cand.id);
    }
    out.push_back(std::move(cand));
  }
  return out;
}

std::string token_label(const text::Tokenizer* tok, int id) {
  if (!tok) return std::to_string(id);
  // WordPiece keeps the vocabulary entry ("##ing" shows it continues a word); byte-level BPE decodes
  // its bytes ("Ġworld" -> " world").
  if (tok->kind() == text::TokenizerKind::WordPiece) return std::string(tok->token(id));
  return tok->display(id);
}

namespace {

Index token_limit(const TransformerConfig& c, const RunOptions& o) {
  Index limit = c.context();
  if (o.max_tokens && *o.max_tokens > 0) limit = std::min<Index>(limit, *o.max_tokens);
  return limit;
}

}  // namespace

namespace {

// Non-finite weights make non-finite maps: the run says so (core/nonfinite.h).
void warn_nonfinite(TransformerRun& run) {
  std::int64_t bad = 0, total = 0;
  for (const LayerAttention& l : run.attention.layers) {
    bad += l.maps.nonfinite();
    total += static_cast<std::int64_t>(l.maps.heads()) * l.maps.rows() * l.maps.cols();
  }
  if (auto w = detail::nonfinite_attention_warning(bad, total)) run.warnings.push_back(std::move(*w));
}

}  // namespace

namespace {

// What every run_ids starts with: the ids checked against the vocabulary (and type ids against the segments),
// truncated to the positions with a warning, labelled, and the special tokens' positions noted.
Result<TransformerRun> start_run(const TransformerModel::Impl& m, const std::vector<int>& ids_in,
                                 const std::vector<int>& type_ids_in, const RunOptions& options) {
  const auto& c = m.config;
  if (c.family == Family::Vit) return fail(ErrorKind::Unsupported, "run_ids: a ViT model takes an image (run_image)");
  if (ids_in.empty()) return fail(ErrorKind::OutOfRange, "run_ids: no tokens");
  if (!type_ids_in.empty() && type_ids_in.size() != ids_in.size())
    return fail(ErrorKind::Mismatch, "run_ids: " + std::to_string(type_ids_in.size()) + " type ids for " +
                                         std::to_string(ids_in.size()) + " tokens");
  if (!options.attention_mask.empty() && options.attention_mask.size() != ids_in.size())
    return fail(ErrorKind::Mismatch, "run_ids: attention mask of " + std::to_string(options.attention_mask.size()) +
                                         " for " + std::to_string(ids_in.size()) + " tokens");
  TransformerRun run;
  const Index limit = token_limit(c, options);
  const Index n = std::min<Index>(static_cast<Index>(ids_in.size()), limit);
  if (n < static_cast<Index>(ids_in.size())) {
    run.warnings.push_back("input truncated to " + std::to_string(n) + " tokens (of " + std::to_string(ids_in.size()) +
                           ")" + (n == c.context() ? " (the model's context)" : ""));
  }
  run.ids.assign(ids_in.begin(), ids_in.begin() + n);
  if (!type_ids_in.empty()) run.type_ids.assign(type_ids_in.begin(), type_ids_in.begin() + n);
  for (Index i = 0; i < n; ++i) {
    const int id = run.ids[static_cast<std::size_t>(i)];
    if (id < 0 || id >= c.vocab_size)
      return fail(ErrorKind::OutOfRange, "token id " + std::to_string(id) + " at position " + std::to_string(i) +
                                             " is outside the vocabulary (" + std::to_string(c.vocab_size) + ")");
    if (!run.type_ids.empty()) {
      const int t = run.type_ids[static_cast<std::size_t>(i)];
      if (c.family == Family::Bert && (t < 0 || t >= c.type_vocab_size))
        return fail(ErrorKind::OutOfRange, "type id " + std::to_string(t) + " at position " + std::to_string(i) +
                                               " is outside 0.." + std::to_string(c.type_vocab_size - 1));
    }
  }
  const text::Tokenizer* tok = m.tokenizer.get();
  if (run.attention.tokens.empty()) {
    for (Index i = 0; i < n; ++i)
      run.attention.tokens.push_back(token_label(tok, run.ids[static_cast<std::size_t>(i)]));
    run.attention.spans.assign(static_cast<std::size_t>(n), Span{});
  }
  if (tok) {
    const auto& sp = tok->specials();
    for (Index i = 0; i < n; ++i) {
      const int id = run.ids[static_cast<std::size_t>(i)];
      if (id == sp.cls || id == sp.sep || id == sp.bos || id == sp.eos)
        run.special_positions.push_back(static_cast<int>(i));
    }
  }

  return run;
}

}  // namespace

std::size_t run_bytes(const TransformerConfig& c, Index n, const RunOptions& o, RunOptions::Keep* resolved) {
  using Keep = RunOptions::Keep;
  const double N = static_cast<double>(n), L = c.layers, H = c.heads, hd = c.head_dim(), d = c.hidden;
  const bool decoder = c.family == Family::Decoder;
  const double kv = decoder ? c.decoder.kv_heads : H;
  const double maps = L * H * N * N * (o.precision == Precision::F16 ? 2.0 : 4.0);
  Keep keep = o.keep;
  if (keep == Keep::Auto)
    keep = c.family != Family::Vit && maps > static_cast<double>(o.on_demand_above) ? Keep::OnDemand : Keep::Maps;
  if (resolved) *resolved = keep;
  double bytes = 0;
  if (keep != Keep::OnDemand) bytes += maps;
  // Queries, keys, the rows' shift and 1 / sum, and what every key receives.
  if (keep != Keep::Maps) bytes += L * ((H + kv) * N * hd * 4.0 + H * N * 12.0);
  if (o.hidden_states) bytes += (L + 1) * N * d * 4.0;
  if (o.all_logits) bytes += N * c.vocab_size * 4.0;
  if (decoder) bytes += 2.0 * L * kv * N * hd * 4.0;                                           // the key/value cache
  if (o.capture) bytes += L * N * (3.0 * d + H * hd + (decoder ? 2.0 * kv * hd : 0.0)) * 4.0;  // the activations
  // Working buffers: the residual stream and its projections, and the score rows of two threads.
  bytes += N * (4.0 * d + (H + 2 * kv) * hd + 2.0 * c.intermediate) * 4.0 + 2.0 * 256 * N * 4.0;
  // Saturated: a hostile config's figures (10^21 bytes) do not fit a size_t, and converting them would be undefined.
  constexpr double kMax = static_cast<double>(std::numeric_limits<std::size_t>::max() / 2);
  return bytes < kMax ? static_cast<std::size_t>(bytes) : static_cast<std::size_t>(kMax);
}

std::size_t generate_bytes(const TransformerConfig& c, Index prompt, Index fresh, const RunOptions& o) {
  RunOptions maps = o;
  maps.keep = RunOptions::Keep::Maps;
  maps.all_logits = false;
  const Index n = prompt + std::max<Index>(0, fresh);
  const double N = static_cast<double>(n), L = c.layers, H = c.heads;
  double bytes = static_cast<double>(run_bytes(c, n, maps));
  bytes +=
      0.25 * L * H * N * N * (o.precision == Precision::F16 ? 2.0 : 4.0);  // the last doubling: old maps beside new
  if (c.family == Family::Gpt2) bytes += L * N * 2.0 * c.hidden * 4.0;     // its key/value cache (run_bytes: decoders')
  constexpr double kMax = static_cast<double>(std::numeric_limits<std::size_t>::max() / 2);
  return bytes < kMax ? static_cast<std::size_t>(bytes) : static_cast<std::size_t>(kMax);
}

namespace {

// /proc/meminfo's MemAvailable (bytes); 0 when it cannot be read.
std::size_t available_memory() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  std::size_t kib = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "MemAvailable: %zu kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib * 1024;
}

std::string gigabytes(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

// Refuses a run over the memory limit before it allocates anything: the estimate, the limit and how many tokens
// would fit. Resolves Keep::Auto in `o`.
Result<void> check_memory(const TransformerConfig& c, Index n, RunOptions& o) {
  RunOptions::Keep keep = o.keep;
  const std::size_t need = run_bytes(c, n, o, &keep);
  const std::size_t limit = o.memory_limit > 0 ? o.memory_limit : available_memory();
  o.keep = keep;
  if (limit == 0 || need <= limit) return {};
  Index lo = 0, hi = n;  // the most tokens whose estimate fits
  while (lo < hi) {
    const Index mid = (lo + hi + 1) / 2;
    if (run_bytes(c, mid, o) <= limit) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const bool maps = keep != RunOptions::Keep::OnDemand;
  return fail(ErrorKind::OutOfRange,
              "this run of " + std::to_string(n) + " tokens needs about " + gigabytes(need) +
                  (maps ? " (every layer's attention maps kept)" : " (attention kept on demand)") + ", more than the " +
                  gigabytes(limit) + (o.memory_limit > 0 ? " allowed" : " this machine has available") + "; up to " +
                  std::to_string(lo) + " tokens would fit");
}

// A generation's estimate (generate_bytes) against the budget, before anything is allocated: the request refused
// over it with the figure, the limit and the new tokens that would fit. Both figures are kept in the run (the CLI
// prints them).
Result<void> check_generation_memory(const TransformerConfig& c, const GenerateOptions& g, const RunOptions& o,
                                     TransformerRun& run) {
  const Index prompt = static_cast<Index>(run.ids.size());
  const Index fresh = std::clamp<Index>(g.max_new_tokens, 0, std::max<Index>(0, c.context() - prompt));
  const std::size_t need = generate_bytes(c, prompt, fresh, o);
  const std::size_t limit = o.memory_limit > 0 ? o.memory_limit : available_memory();
  run.memory_estimate = need;
  run.memory_budget = limit;
  if (limit == 0 || need <= limit) return {};
  Index lo = 0, hi = fresh;  // the most new tokens whose estimate fits
  while (lo < hi) {
    const Index mid = (lo + hi + 1) / 2;
    if (generate_bytes(c, prompt, mid, o) <= limit) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return fail(ErrorKind::TooLarge, "generating " + with_commas(fresh) + " new tokens after a prompt of " +
                                       with_commas(prompt) + " needs about " + gigabytes(need) +
                                       " (every layer's attention maps over " + with_commas(prompt + fresh) +
                                       " tokens, grown as they come, and the key/value cache), more than the " +
                                       gigabytes(limit) +
                                       (o.memory_limit > 0 ? " allowed" : " this machine has available") + "; up to " +
                                       with_commas(lo) + " new tokens would fit");
}

// The attention mask as a bias per key (0, or -inf for padding); GPT-2 ignores it. Attention on demand takes no
// padding.
Result<void> set_key_bias(const TransformerConfig& c, const RunOptions& options, Index n, TransformerBuffers& s) {
  s.key_bias.clear();
  if (options.attention_mask.empty() || c.family == Family::Gpt2) return {};
  s.key_bias.assign(static_cast<std::size_t>(n), 0.0f);
  for (Index j = 0; j < n; ++j)
    if (options.attention_mask[static_cast<std::size_t>(j)] == 0)
      s.key_bias[static_cast<std::size_t>(j)] = -std::numeric_limits<float>::infinity();
  if (options.keep != RunOptions::Keep::Maps &&
      std::find(options.attention_mask.begin(), options.attention_mask.end(), 0) != options.attention_mask.end())
    return fail(ErrorKind::Unsupported,
                "run_ids: attention on demand takes no padding (the attention mask has padded keys); run the "
                "real tokens alone, or keep the maps");
  return {};
}

// The embeddings of the run's tokens into x [n, D]: word + position (+ token type for BERT), normalised after
// (BERT, DistilBERT) or not (GPT-2, whose layers normalise first).
void embed_tokens(const TransformerModel::Impl& m, const TransformerRun& run, Index n, float* x) {
  const auto& c = m.config;
  const Index D = c.hidden;
  for_rows(n, [&](Index i) {
    ArrayMap r(x + i * D, D);
    r = m.word.row(run.ids[static_cast<std::size_t>(i)]).transpose().array() + m.positions.row(i).transpose().array();
    if (c.family == Family::Bert) {
      const int t = run.type_ids.empty() ? 0 : run.type_ids[static_cast<std::size_t>(i)];
      r += m.types.row(t).transpose().array();
    }
    if (m.post_ln()) layer_norm_row(x + i * D, x + i * D, m.embed_gamma, m.embed_beta, D, c.layer_norm_eps);
  });
}

// The rows of the last layer's output read after the layers: the last token (GPT-2's prediction), the [MASK]
// positions (BERT's), RunOptions::logits_position, every row (nullopt) for hidden states or every position's logits,
// none for the maps alone.
std::optional<std::vector<Index>> rows_read_after(const TransformerModel::Impl& m, const TransformerRun& run,
                                                  const RunOptions& options, Index n) {
  if (options.hidden_states || (m.has_head && options.all_logits)) return std::nullopt;
  std::vector<Index> rows;
  const text::Tokenizer* tok = m.tokenizer.get();
  if (m.has_head) {
    if (m.config.family == Family::Gpt2) {
      rows.push_back(n - 1);
    } else if (tok && tok->specials().mask) {
      for (Index i = 0; i < n; ++i)
        if (run.ids[static_cast<std::size_t>(i)] == *tok->specials().mask) rows.push_back(i);
    }
    if (options.logits_position >= 0 && std::find(rows.begin(), rows.end(), options.logits_position) == rows.end())
      rows.push_back(options.logits_position);
  }
  return rows;
}

// The head's logits of `rows` rows of x (after the last layer) into out [rows, vocab]: GPT-2's ln_f and output
// embedding; BERT's masked-language-model transform and decoder.
void text_logits(const TransformerModel::Impl& m, const float* x, const std::vector<Index>& rows, Matrix& out) {
  const auto& c = m.config;
  const Index D = c.hidden, r = static_cast<Index>(rows.size());
  Matrix t(r, D);
  for (Index k = 0; k < r; ++k) {
    const float* row = x + rows[static_cast<std::size_t>(k)] * D;
    if (c.family == Family::Gpt2) {
      layer_norm_row(row, t.row(k).data(), m.final_gamma, m.final_beta, D, c.layer_norm_eps);
    } else {
      t.row(k) = Eigen::Map<const RowVector>(row, D);
    }
  }
  if (c.family != Family::Gpt2) {
    Matrix h = t * m.head_dense;
    for (Index k = 0; k < r; ++k) {
      h.row(k) += m.head_dense_bias;
      bias_activation(h.row(k).data(), RowVector::Zero(D), D, c.activation);
      layer_norm_row(h.row(k).data(), t.row(k).data(), m.head_gamma, m.head_beta, D, c.layer_norm_eps);
    }
  }
  out.noalias() = t * m.output_embedding().transpose();
  if (m.decoder_bias.size() == out.cols()) out.rowwise() += m.decoder_bias;
}

// The logits a run keeps (TransformerRun::logits): every row with all_logits, else the one asked for or the family's
// own (GPT-2: the last position; BERT: the first [MASK], none without one).
void keep_logits(const TransformerModel::Impl& m, const float* x, Index n, const RunOptions& options,
                 TransformerRun& run) {
  if (!m.has_head) return;
  std::vector<Index> rows;
  if (options.all_logits) {
    rows.resize(static_cast<std::size_t>(n));
    std::iota(rows.begin(), rows.end(), Index{0});
  } else if (options.logits_position >= 0) {
    rows.push_back(options.logits_position);
  } else if (m.config.family == Family::Gpt2) {
    rows.push_back(n - 1);
  } else if (const text::Tokenizer* tok = m.tokenizer.get(); tok && tok->specials().mask) {
    const auto mask = std::find(run.ids.begin(), run.ids.end(), *tok->specials().mask);
    if (mask != run.ids.end()) rows.push_back(mask - run.ids.begin());
  }
  if (rows.empty()) return;
  text_logits(m, x, rows, run.logits);
  run.logits_from = static_cast<int>(rows.front());
}

// GPT-2's ln_f and next-token prediction. ln_f is applied on every row only when the hidden states are asked
// for (transformers reports the last hidden state after ln_f); the prediction needs the last row alone.
void gpt2_head(const TransformerModel::Impl& m, const float* x, Index n, const RunOptions& options,
               TransformerRun& run) {
  const auto& c = m.config;
  const Index D = c.hidden;
  if (options.hidden_states) {
    Matrix& h = run.hidden_states.back();
    for (Index i = 0; i < n; ++i)
      layer_norm_row(x + i * D, h.row(i).data(), m.final_gamma, m.final_beta, D, c.layer_norm_eps);
  }
  keep_logits(m, x, n, options, run);
  if (m.has_head && options.top_k > 0) {
    Matrix last;
    text_logits(m, x, {n - 1}, last);
    Prediction p;
    p.position = static_cast<int>(n - 1);
    p.top = top_k(last.row(0), options.top_k, m.tokenizer.get(), nullptr);
    run.predictions.push_back(std::move(p));
  }
}

// BERT's masked-language-model head: a prediction at every [MASK] position.
void masked_lm_head(const TransformerModel::Impl& m, float* x, Index n, const RunOptions& options,
                    TransformerRun& run) {
  const text::Tokenizer* tok = m.tokenizer.get();
  keep_logits(m, x, n, options, run);
  if (!m.has_head || options.top_k <= 0 || !tok || !tok->specials().mask) return;
  const int mask = *tok->specials().mask;
  for (Index i = 0; i < n; ++i) {
    if (run.ids[static_cast<std::size_t>(i)] != mask) continue;
    Matrix logits;
    text_logits(m, x, {i}, logits);
    Prediction p;
    p.position = static_cast<int>(i);
    p.top = top_k(logits.row(0), options.top_k, tok, nullptr);
    run.predictions.push_back(std::move(p));
  }
}

// ViT's classifier on the class token: its logits (one row) and the top classes.
void vit_head(const TransformerModel::Impl& m, const float* x, const RunOptions& options, TransformerRun& run) {
  const auto& c = m.config;
  if (!m.has_head) return;
  RowVector cls(c.hidden);
  layer_norm_row(x, cls.data(), m.final_gamma, m.final_beta, c.hidden, c.layer_norm_eps);
  RowVector logits = cls * m.classifier;
  logits += m.classifier_bias;
  run.logits = logits;
  run.logits_from = 0;
  if (options.top_k <= 0) return;
  Prediction pred;
  pred.position = 0;
  pred.top = top_k(logits, options.top_k, nullptr, &c.labels);
  for (const auto& cand : pred.top) run.labels.push_back(cand.text + " (" + format_probability(cand.probability) + ")");
  run.predictions.push_back(std::move(pred));
}

// Interventions need every layer's maps (not attention on demand) and edits that fit the model and the input.
Result<void> check_interventions(const TransformerConfig& c, Index n, const RunOptions& o) {
  if (o.logits_position < -1 || o.logits_position >= n)
    return fail(ErrorKind::OutOfRange, "logits position " + std::to_string(o.logits_position) + " is outside 0.." +
                                           std::to_string(n - 1) + " (the input's tokens)");
  if (!o.capture && o.edits.empty()) return {};
  if (o.keep != RunOptions::Keep::Maps)
    return fail(ErrorKind::Unsupported,
                "interventions (captured activations, edits) run with every layer's maps kept, not attention on "
                "demand: this input of " +
                    std::to_string(n) + " tokens is too long for them");
  return check_edits(c, n, o.edits);
}

// A re-run's base: a run of this model made with capture (its activations and maps of every layer).
Result<void> check_base(const TransformerConfig& c, const TransformerRun& base) {
  if (!base.activations || base.activations->resid_pre.size() != static_cast<std::size_t>(c.layers) ||
      base.attention.layers.size() != static_cast<std::size_t>(c.layers))
    return fail(ErrorKind::Mismatch,
                "rerun: the base run kept no activations of this model (run it with capture and its maps)");
  return {};
}

}  // namespace

Result<TransformerRun> TransformerRunner::run_ids(const std::vector<int>& ids_in, const std::vector<int>& type_ids_in,
                                                  const RunOptions& options_in) {
  try {
    const auto& m = model_->impl();
    const auto& c = m.config;
    auto started = start_run(m, ids_in, type_ids_in, options_in);
    if (!started) return started;
    TransformerRun run = std::move(*started);
    const Index n = static_cast<Index>(run.ids.size());
    RunOptions options = options_in;
    ATTN_TRY(check_memory(c, n, options));
    ATTN_TRY(check_interventions(c, n, options));
    Hooks hooks(c, n, options.edits, options.capture);
    if (c.family == Family::Decoder) {
      if (!scratch_->decoder) scratch_->decoder = make_decoder_state();
      auto ok = decoder_run(m, *scratch_->decoder, run, options, hooks.active() ? &hooks : nullptr);
      if (!ok) return std::unexpected(ok.error());
      run.activations = hooks.take();
      warn_nonfinite(run);
      warn_nonfinite_predictions(run);
      return run;
    }
    auto& s = *scratch_;
    float* x = s.x.get(static_cast<std::size_t>(gemm_rows(n) * c.hidden));
    ATTN_TRY(set_key_bias(c, options, n, s));
    embed_tokens(m, run, n, x);
    Forward f{m, s, options, run, n, hooks.active() ? &hooks : nullptr};
    if (!f.layers(x, rows_read_after(m, run, options, n))) return fail(ErrorKind::Cancelled, "cancelled");
    if (c.family == Family::Gpt2) {
      gpt2_head(m, x, n, options, run);
    } else {
      masked_lm_head(m, x, n, options, run);
    }
    run.activations = hooks.take();
    warn_nonfinite(run);
    warn_nonfinite_predictions(run);
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge,
                "out of memory: the input is too long for this machine (try float16 maps or fewer tokens)");
  }
}

namespace {

// A text tokenised for the model, its special tokens added and truncated to the positions.
struct PreparedText {
  std::vector<int> ids, types;
  Labels labels;
  std::vector<Span> spans;
  std::string warning;
  int dropped = 0;  // tokens cut off at the limit
};

// A decoder's text: the tokens its tokenizer gives the model (tokenizer.json's post-processor, or
// tokenizer_config.json's add_bos_token: Llama's <s>, nothing for Qwen), the start kept when it is too long.
Result<PreparedText> prepare_decoder_text(const text::Tokenizer& tok, std::string_view text, std::string_view pair,
                                          Index limit, bool context) {
  if (!pair.empty())
    return fail(ErrorKind::Unsupported,
                "a second text (a pair) is for models that read two, such as BERT; this decoder reads one");
  auto encoded = tok.encode_for_model(text);
  if (!encoded) return std::unexpected(encoded.error());
  PreparedText p;
  const std::size_t given = encoded->tokens.size();
  if (static_cast<Index>(given) > limit) {
    encoded->tokens.resize(static_cast<std::size_t>(limit));
    p.dropped = static_cast<int>(given - static_cast<std::size_t>(limit));
    p.warning = "text truncated to " + std::to_string(limit) + " tokens (" + std::to_string(given - limit) +
                " dropped; " + (context ? "the model's context" : "the token limit") + ")";
  }
  for (const auto& t : encoded->tokens) {
    p.ids.push_back(t.id);
    p.types.push_back(0);
    p.labels.push_back(token_label(&tok, t.id));
    p.spans.push_back(t.span);
  }
  if (p.ids.empty()) return fail(ErrorKind::OutOfRange, "run_text: the text gives no tokens");
  return p;
}

Result<PreparedText> prepare_text(const TransformerModel::Impl& m, std::string_view text, std::string_view pair,
                                  const RunOptions& options) {
  const auto& c = m.config;
  const text::Tokenizer* tok = m.tokenizer.get();
  if (c.family == Family::Vit) return fail(ErrorKind::Unsupported, "run_text: a ViT model takes an image (run_image)");
  if (!tok && m.tokenizer_error) {
    // The cause, with its file and place: "vocab.txt:3: ..." rather than only "no tokenizer".
    Error e = *m.tokenizer_error;
    e.reason = "the model's tokenizer cannot be read, so only token ids can be run: " + e.reason;
    return std::unexpected(std::move(e));
  }
  if (!tok) {
    return fail(ErrorKind::Unsupported,
                "run_text: the model has no tokenizer (tokenizer.json, tokenizer.model, "
                "vocab.txt, or vocab.json + merges.txt)");
  }
  if (c.family == Family::Decoder) {
    const Index limit = token_limit(c, options);
    return prepare_decoder_text(*tok, text, pair, limit, limit == c.context());
  }
  auto a = tok->encode(text);
  if (!a) return std::unexpected(a.error());
  std::vector<text::Token> b;
  if (!pair.empty()) {
    auto eb = tok->encode(pair);
    if (!eb) return std::unexpected(eb.error());
    b = std::move(*eb);
  }
  const Index limit = token_limit(c, options);
  std::string warning;
  const auto& sp = tok->specials();

  std::vector<int> ids, types;
  Labels labels;
  std::vector<Span> spans;
  auto push = [&](int id, Span span, int type, std::string label) {
    ids.push_back(id);
    types.push_back(type);
    labels.push_back(std::move(label));
    spans.push_back(span);
  };
  const std::size_t given = a->size() + b.size();
  if (c.causal()) {
    if (!b.empty()) {
      a->insert(a->end(), b.begin(), b.end());  // GPT-2 has no segments: the pair simply follows
      b.clear();
    }
    if (static_cast<Index>(a->size()) > limit) a->resize(static_cast<std::size_t>(limit));
    for (const auto& t : *a) push(t.id, t.span, 0, token_label(tok, t.id));
  } else {
    if (!sp.cls || !sp.sep) return fail(ErrorKind::Unsupported, "run_text: the vocabulary has no [CLS] or [SEP] token");
    const Index specials = b.empty() ? 2 : 3;
    if (limit <= specials) return fail(ErrorKind::OutOfRange, "run_text: max_tokens leaves no room for text");
    // Longest first, as transformers' default truncation strategy.
    while (static_cast<Index>(a->size() + b.size()) > limit - specials) {
      if (a->size() >= b.size()) {
        a->pop_back();
      } else {
        b.pop_back();
      }
    }
    const int segment_b = c.family == Family::Bert ? 1 : 0;
    push(*sp.cls, {}, 0, token_label(tok, *sp.cls));
    for (const auto& t : *a) push(t.id, t.span, 0, token_label(tok, t.id));
    push(*sp.sep, {}, 0, token_label(tok, *sp.sep));
    if (!pair.empty()) {
      for (const auto& t : b) push(t.id, t.span, segment_b, token_label(tok, t.id));
      push(*sp.sep, {}, segment_b, token_label(tok, *sp.sep));
    }
  }
  if (ids.empty()) {
    return fail(ErrorKind::OutOfRange,
                "run_text: the text gives no tokens: it is empty, or holds only what the tokenizer drops (white "
                "space, control characters, combining marks with nothing to combine with)");
  }
  const std::size_t kept = a->size() + b.size();
  if (kept < given) {
    warning = "text truncated to " + std::to_string(ids.size()) + " tokens (" + std::to_string(given - kept) +
              " dropped; " + (limit == c.context() ? "the model's context" : "the token limit") + ")";
  }
  return PreparedText{std::move(ids),   std::move(types),   std::move(labels),
                      std::move(spans), std::move(warning), static_cast<int>(given - kept)};
}

}  // namespace

Result<TransformerRun> TransformerRunner::run_text(std::string_view text, std::string_view pair,
                                                   const RunOptions& options) {
  const auto& c = model_->impl().config;
  auto prepared = prepare_text(model_->impl(), text, pair, options);
  if (!prepared) return std::unexpected(prepared.error());
  auto& p = *prepared;
  auto run = run_ids(p.ids, c.family == Family::Bert ? p.types : std::vector<int>{}, options);
  if (!run) return run;
  run->attention.tokens = std::move(p.labels);
  run->attention.spans = std::move(p.spans);
  if (c.family == Family::Bert) run->type_ids = std::move(p.types);
  run->truncated_tokens = p.dropped;
  if (!p.warning.empty()) run->warnings.insert(run->warnings.begin(), p.warning);
  return run;
}

Result<TransformerRun> TransformerRunner::generate(const std::vector<int>& prompt, const GenerateOptions& generation,
                                                   const RunOptions& options) {
  try {
    const auto& m = model_->impl();
    if (!m.config.causal()) {
      return fail(ErrorKind::Unsupported, "generate: " + model_->description() +
                                              " does not generate: it is not a causal language model (GPT-2 and "
                                              "the decoders llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3 are)");
    }
    if (!m.has_head) {
      return fail(ErrorKind::Unsupported, "generate: the checkpoint has no language-model head to predict with");
    }
    auto started = start_run(m, prompt, {}, options);
    if (!started) return started;
    TransformerRun run = std::move(*started);
    if (auto fits = check_generation_memory(m.config, generation, options, run); !fits) {
      return std::unexpected(fits.error());
    }
    Result<void> ok;
    if (m.config.family == Family::Decoder) {
      if (!scratch_->decoder) scratch_->decoder = make_decoder_state();
      ok = decoder_generate(m, *scratch_->decoder, run, generation, options);
    } else {
      Gpt2Extension extend{m, *scratch_, scratch_->gpt2_cache, run, options};
      ok = generate_with(m, run, generation, options, [&](Index p0, Index p1) -> Result<void> {
        extend(p0, p1);
        return {};
      });
    }
    if (!ok) return std::unexpected(ok.error());
    warn_nonfinite(run);
    warn_nonfinite_predictions(run);
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory: the prompt and the tokens to generate do not fit in memory");
  }
}

Result<TransformerRun> TransformerRunner::generate_text(std::string_view prompt, const GenerateOptions& generation,
                                                        const RunOptions& options) {
  auto prepared = prepare_text(model_->impl(), prompt, {}, options);
  if (!prepared) return std::unexpected(prepared.error());
  auto& p = *prepared;
  auto run = generate(p.ids, generation, options);
  if (!run) return run;
  // The prompt's labels and spans from the text; the generated tokens keep theirs.
  std::copy(p.labels.begin(), p.labels.end(), run->attention.tokens.begin());
  std::copy(p.spans.begin(), p.spans.end(), run->attention.spans.begin());
  if (!p.warning.empty()) run->warnings.insert(run->warnings.begin(), p.warning);
  return run;
}

Result<TransformerRun> TransformerRunner::run_image(const Image& image_in, const RunOptions& options_in) {
  try {
    const auto& m = model_->impl();
    const auto& c = m.config;
    if (c.family != Family::Vit) return fail(ErrorKind::Unsupported, "run_image: the model takes text, not an image");
    // A ViT's maps are small (197 tokens at 224 pixels): always kept; its statistics are over the patch grid, which
    // the streamed statistics of attention on demand are not.
    if (options_in.keep == RunOptions::Keep::OnDemand || options_in.keep == RunOptions::Keep::Both)
      return fail(ErrorKind::Unsupported,
                  "run_image: a ViT keeps its attention maps (attention on demand is for text)");
    RunOptions options = options_in;
    options.keep = RunOptions::Keep::Maps;
    options.logits_position = -1;  // the class token's
    if (image_in.empty()) return fail(ErrorKind::OutOfRange, "run_image: empty image");
    const int C = c.num_channels, size = c.image_size, p = c.patch_size;
    // Channels: grey is replicated, alpha dropped.
    Image image;
    if (image_in.channels == C) {
      image = image_in;
    } else if (image_in.channels == 1 || image_in.channels >= C) {
      image = Image(image_in.width, image_in.height, C);
      for (int ch = 0; ch < C; ++ch)
        std::copy_n(image_in.plane(image_in.channels == 1 ? 0 : ch), image_in.plane_size(), image.plane(ch));
    } else {
      return fail(ErrorKind::Mismatch, "run_image: the image has " + std::to_string(image_in.channels) +
                                           " channels, the model wants " + std::to_string(C));
    }
    if (image.width != size || image.height != size) image = resize_bilinear(image, size, size);
    for (int ch = 0; ch < C; ++ch) {
      const float mean = ch < static_cast<int>(c.image_mean.size()) ? c.image_mean[static_cast<std::size_t>(ch)] : 0.5f;
      const float sd = ch < static_cast<int>(c.image_std.size()) ? c.image_std[static_cast<std::size_t>(ch)] : 0.5f;
      image.channel(ch).array() = (image.channel(ch).array() - mean) / sd;
    }
    const int grid = size / p;
    const Index patches = static_cast<Index>(grid) * grid;
    const Index n = patches + 1, D = c.hidden, K = static_cast<Index>(C) * p * p;

    // Patch embedding: the stride-p convolution as one product over the flattened patches.
    Matrix flat(patches, K);
    for (int gy = 0; gy < grid; ++gy)
      for (int gx = 0; gx < grid; ++gx) {
        float* dst = flat.row(gy * grid + gx).data();
        for (int ch = 0; ch < C; ++ch)
          for (int y = 0; y < p; ++y)
            for (int x = 0; x < p; ++x) *dst++ = image.at(ch, gy * p + y, gx * p + x);
      }
    auto& s = *scratch_;
    float* x = s.x.get(static_cast<std::size_t>(gemm_rows(n) * D));
    MatrixMapW X(x, n, D);
    X.row(0) = m.class_token;
    X.bottomRows(patches).rowwise() = m.patch_bias;
    X.bottomRows(patches).noalias() += flat * m.patch;
    X += m.positions;
    s.key_bias.clear();

    TransformerRun run;
    run.grid_rows = run.grid_cols = grid;
    run.special_positions = {0};
    run.attention.tokens.push_back("[CLS]");
    for (int gy = 0; gy < grid; ++gy)
      for (int gx = 0; gx < grid; ++gx) run.attention.tokens.push_back(std::to_string(gy) + "," + std::to_string(gx));
    run.attention.spans.assign(static_cast<std::size_t>(n), Span{});

    // The class token is the only row of the last layer's output the classifier reads.
    std::optional<std::vector<Index>> last_rows;
    if (!options.hidden_states) {
      last_rows.emplace();
      if (m.has_head) last_rows->push_back(0);
    }
    ATTN_TRY(check_interventions(c, n, options));
    Hooks hooks(c, n, options.edits, options.capture);
    Forward f{m, s, options, run, n, hooks.active() ? &hooks : nullptr};
    if (!f.layers(x, last_rows)) return fail(ErrorKind::Cancelled, "cancelled");
    vit_head(m, x, options, run);
    run.activations = hooks.take();
    warn_nonfinite(run);
    warn_nonfinite_predictions(run);
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while running the model");
  }
}

Result<TransformerRun> TransformerRunner::rerun(const TransformerRun& base, const RunOptions& options_in) {
  try {
    const auto& m = model_->impl();
    const auto& c = m.config;
    ATTN_TRY(check_base(c, base));
    if (options_in.edits.empty()) return fail(ErrorKind::Mismatch, "rerun: no edits to make");
    if (options_in.capture) return fail(ErrorKind::Unsupported, "rerun: a re-run captures nothing (the base does)");
    const Index n = base.activations->resid_pre.front().rows();
    RunOptions options = options_in;
    if (options.keep == RunOptions::Keep::Auto) options.keep = RunOptions::Keep::Maps;
    options.precision = base.attention.layers.front().maps.precision();  // the base's maps are copied
    ATTN_TRY(check_memory(c, n, options));
    ATTN_TRY(check_interventions(c, n, options));
    TransformerRun run;
    run.ids = base.ids;
    run.type_ids = base.type_ids;
    run.attention.tokens = base.attention.tokens;
    run.attention.spans = base.attention.spans;
    run.special_positions = base.special_positions;
    run.grid_rows = base.grid_rows;
    run.grid_cols = base.grid_cols;
    run.warnings = base.warnings;
    Hooks hooks(c, n, options.edits, false);
    if (c.family == Family::Decoder) {
      if (!scratch_->decoder) scratch_->decoder = make_decoder_state();
      ATTN_TRY(decoder_run(m, *scratch_->decoder, run, options, &hooks, &base));
    } else {
      auto& s = *scratch_;
      float* x = s.x.get(static_cast<std::size_t>(gemm_rows(n) * c.hidden));
      ATTN_TRY(set_key_bias(c, options, n, s));
      Forward f{m, s, options, run, n, &hooks, &base};
      if (!f.layers(x, std::nullopt)) return fail(ErrorKind::Cancelled, "cancelled");
      if (c.family == Family::Vit) {
        vit_head(m, x, options, run);
      } else if (c.family == Family::Gpt2) {
        gpt2_head(m, x, n, options, run);
      } else {
        masked_lm_head(m, x, n, options, run);
      }
    }
    warn_nonfinite(run);
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while re-running the model");
  }
}

namespace {

// A decoder's cells per batch: up to kBatchFlops of products per layer (a layer of a batch then takes some 100 ms
// here, the cancel's bound, and a sweep's heatmap fills in batch by batch), at most kBatchCells cells, their keys
// and values at most kBatchCacheBytes.
constexpr double kBatchFlops = 4e9;
constexpr std::size_t kBatchCells = 256;
constexpr double kBatchCacheBytes = 256.0 * 1024 * 1024;

}  // namespace

Result<void> TransformerRunner::rerun_cells(const TransformerRun& base, const std::vector<std::vector<Edit>>& cells,
                                            int position, const CellsDone& on_done, const std::atomic<bool>* cancel) {
  try {
    const auto& m = model_->impl();
    const auto& c = m.config;
    ATTN_TRY(check_base(c, base));
    const Index n = base.activations->resid_pre.front().rows();
    const bool vit = c.family == Family::Vit;
    if (!vit && (position < -1 || position >= n))
      return fail(ErrorKind::OutOfRange, "logits position " + std::to_string(position) + " is outside 0.." +
                                             std::to_string(n - 1) + " (the input's tokens)");
    for (std::size_t k = 0; k < cells.size(); ++k) {
      if (cells[k].empty()) return fail(ErrorKind::Mismatch, "rerun: cell " + std::to_string(k) + " has no edits");
      ATTN_TRY(check_edits(c, n, cells[k]));
    }
    if (c.family != Family::Decoder) {
      RunOptions o;
      o.top_k = 0;
      o.cancel = cancel;
      o.logits_position = vit ? -1 : position;
      o.memory_limit = std::numeric_limits<std::size_t>::max() / 2;  // the base passed the check
      Matrix row;
      for (std::size_t k = 0; k < cells.size(); ++k) {
        if (cancel && cancel->load(std::memory_order_relaxed)) return fail(ErrorKind::Cancelled, "cancelled");
        o.edits = cells[k];
        TransformerRun run;
        ATTN_ASSIGN(run, rerun(base, o));
        RowVector logits;
        ATTN_ASSIGN(logits, measured_logits(run, vit ? -1 : position));
        row = logits;
        if (!on_done(k, row)) return {};
      }
      return {};
    }
    if (!scratch_->decoder) scratch_->decoder = make_decoder_state();
    const Index pos = position < 0 ? n - 1 : position;
    const DecoderSettings& d = c.decoder;
    const double row_flops = 2.0 * static_cast<double>(c.hidden) *
                             (static_cast<double>(c.heads + 2 * d.kv_heads) * d.head_dim +
                              static_cast<double>(c.heads) * d.head_dim + 3.0 * static_cast<double>(c.intermediate));
    const double cache_bytes = 2.0 * 4.0 * static_cast<double>(d.kv_heads * d.head_dim) * static_cast<double>(n);
    std::size_t first = 0;
    while (first < cells.size()) {
      std::size_t end = first;
      double rows = 0;
      while (end < cells.size() && end - first < kBatchCells) {
        const Index p0 = std::min<Index>(Hooks(c, n, cells[end], false).first_position(true), pos);
        const double more = static_cast<double>(n - p0);  // at most (a mean takes every row)
        if (end > first && ((rows + more) * row_flops > kBatchFlops ||
                            static_cast<double>(end - first + 1) * cache_bytes > kBatchCacheBytes))
          break;
        rows += more;
        ++end;
      }
      const std::vector<std::vector<Edit>> batch(cells.begin() + static_cast<std::ptrdiff_t>(first),
                                                 cells.begin() + static_cast<std::ptrdiff_t>(end));
      Matrix logits;
      ATTN_TRY(decoder_rerun_cells(m, *scratch_->decoder, base, batch, pos, cancel, logits));
      if (!on_done(first, logits)) return {};
      first = end;
    }
    return {};
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while re-running the model");
  }
}

}  // namespace attn::models
