#include "attn/mechanisms/multi_head.h"

#include "attn/mechanisms/blocks.h"
#include "attn/random.h"

#include <algorithm>
#include <cstdint>
#include <cassert>
#include <cmath>
#include <limits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace attn {

MultiHeadWeights random_multi_head_weights(Index model_dim, int heads, std::uint64_t seed) {
  MultiHeadWeights w;
  w.heads = heads;
  w.Wq = xavier_uniform(model_dim, model_dim, mix_seed(seed, 21));
  w.Wk = xavier_uniform(model_dim, model_dim, mix_seed(seed, 22));
  w.Wv = xavier_uniform(model_dim, model_dim, mix_seed(seed, 23));
  w.Wo = xavier_uniform(model_dim, model_dim, mix_seed(seed, 24));
  w.bq = Vector::Zero(model_dim);
  w.bk = Vector::Zero(model_dim);
  w.bv = Vector::Zero(model_dim);
  w.bo = Vector::Zero(model_dim);
  return w;
}

namespace {

using Strided = Eigen::OuterStride<>;
using ConstBlockMap = Eigen::Map<const Matrix, 0, Strided>;
using BlockMap = Eigen::Map<Matrix, 0, Strided>;

#if defined(__AVX2__) && defined(__FMA__)
constexpr bool kAttentionKernel = true;
#else
constexpr bool kAttentionKernel = false;
#endif

// Rows per task of the BLAS path (no AVX2): the block is normalised and multiplied by V while it is
// still in cache. Measured at 2048 tokens, 2 threads (attention part, wall): 64 rows 156 ms, 128 rows
// 158 ms, 256 rows 131 ms; fewer rows make BLAS re-pack K and V more often.
constexpr Index kBlasRowBlock = 256;

// Rows per task of the AVX2 kernel: 32 rows of scores (256 KiB at 2048 keys) stay in L2 from the score
// tile through the softmax and the weights x V tile, and are then streamed to the kept weights once.
constexpr Index kKernelRowBlock = 32;
constexpr Index kPanel = 16;    // columns per packed panel: two 8-float registers
constexpr Index kTileRows = 6;  // rows per register tile: 6 x 16 accumulators use 12 of 16 registers

Index padded(Index n) { return (n + kPanel - 1) / kPanel * kPanel; }

#if defined(__AVX2__) && defined(__FMA__)

// Packing for the tile kernel: the right-hand operand in panels of kPanel columns, each panel `inner`
// rows of kPanel floats, zero past the last column, so the kernel reads it sequentially. For Q K^T the
// columns are keys (K^T: d_h x m, scaled by 1/(sqrt(d_h) T) once here); for weights x V they are V's d_h
// columns (V: m x d_h). `stride` is the row stride of K and V inside the all-heads projections.
void pack_keys(const float* k, Index m, Index dh, Index stride, float scale, float* out) {
  for (Index p = 0; p < padded(m) / kPanel; ++p) {
    float* dst = out + p * dh * kPanel;
    for (Index j = 0; j < kPanel; ++j) {
      const Index key = p * kPanel + j;
      for (Index d = 0; d < dh; ++d) dst[d * kPanel + j] = key < m ? k[key * stride + d] * scale : 0.0f;
    }
  }
}
void pack_values(const float* v, Index m, Index dh, Index stride, float* out) {
  for (Index p = 0; p < padded(dh) / kPanel; ++p) {
    float* dst = out + p * m * kPanel;
    for (Index j = 0; j < m; ++j) {
      for (Index c = 0; c < kPanel; ++c) {
        const Index col = p * kPanel + c;
        dst[j * kPanel + c] = col < dh ? v[j * stride + col] : 0.0f;
      }
    }
  }
}

// out[r][c] (+)= sum_i a[r][i] * panel[i][c] for R rows of `a` (row stride `astride`) over `inner` terms
// and one packed panel, writing n <= kPanel valid columns: the 6 x 16 FMA register tile of an sgemm
// micro-kernel. Both Q K^T (inner = d_h) and weights x V (inner = keys) have this shape once packed.
template <int R>
void tile(const float* a, Index astride, const float* panel, Index inner, Index n, bool accumulate, float* out,
          Index ostride) {
  // The row loops must unroll for `acc` to live in registers; GCC left it on the stack under -fPIC
  // (29 instead of 70 GFLOP/s), so the unrolling is asked for rather than hoped for.
  __m256 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (Index i = 0; i < inner; ++i) {
    const __m256 b0 = _mm256_load_ps(panel + i * kPanel);
    const __m256 b1 = _mm256_load_ps(panel + i * kPanel + 8);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * astride + i);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  // The accumulators go to a local tile in one simple loop: any branch on them in the epilogue made GCC
  // keep `acc` on the stack and store it on every step of the loop above (measured: 27 vs 87 GFLOP/s).
  alignas(32) float result[R][kPanel];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm256_store_ps(result[r], acc[r][0]);
    _mm256_store_ps(result[r] + 8, acc[r][1]);
  }
  for (int r = 0; r < R; ++r) {
    float* dst = out + r * ostride;
    if (n == kPanel) {
      __m256 lo = _mm256_load_ps(result[r]);
      __m256 hi = _mm256_load_ps(result[r] + 8);
      if (accumulate) {
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(dst));
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(dst + 8));
      }
      _mm256_storeu_ps(dst, lo);
      _mm256_storeu_ps(dst + 8, hi);
    } else {
      for (Index c = 0; c < n; ++c) dst[c] = accumulate ? dst[c] + result[r][c] : result[r][c];
    }
  }
}

template <int R>
void tile_rows_panel(const float* a, Index astride, Index rows, const float* panel, Index inner, Index n,
                     bool accumulate, float* out, Index ostride) {
  Index r = 0;
  for (; r + R <= rows; r += R) tile<R>(a + r * astride, astride, panel, inner, n, accumulate, out + r * ostride, ostride);
  const float* ar = a + r * astride;
  float* orow = out + r * ostride;
  switch (rows - r) {
    case 5: tile<5>(ar, astride, panel, inner, n, accumulate, orow, ostride); break;
    case 4: tile<4>(ar, astride, panel, inner, n, accumulate, orow, ostride); break;
    case 3: tile<3>(ar, astride, panel, inner, n, accumulate, orow, ostride); break;
    case 2: tile<2>(ar, astride, panel, inner, n, accumulate, orow, ostride); break;
    case 1: tile<1>(ar, astride, panel, inner, n, accumulate, orow, ostride); break;
    default: break;
  }
}

// out (rows x cols) = a (rows x inner) * B, B packed in panels of kPanel columns. The loops keep one panel
// chunk (at most kInnerChunk x 16 floats = 16 KiB) in L1 while every row tile of the block uses it; the
// inner dimension is cut into chunks that accumulate, so weights x V over 2048 keys stays in L1 too.
constexpr Index kInnerChunk = 256;
void tile_block(const float* a, Index astride, Index rows, const float* packed, Index inner, Index cols, float* out,
                Index ostride) {
  const Index panels = padded(cols) / kPanel;
  for (Index i0 = 0; i0 < inner; i0 += kInnerChunk) {
    const Index ic = std::min(kInnerChunk, inner - i0);
    for (Index p = 0; p < panels; ++p) {
      const Index n = std::min(kPanel, cols - p * kPanel);
      tile_rows_panel<kTileRows>(a + i0, astride, rows, packed + p * inner * kPanel + i0 * kPanel, ic, n, i0 > 0,
                                 out + p * kPanel, ostride);
    }
  }
}

// Copies a finished row to the kept weights with non-temporal stores: the 201 MB of weights at 2048 tokens
// go to memory once, without first being read for ownership or evicting the working set.
void stream_row(const float* src, float* dst, Index n) {
  Index j = 0;
  for (; j < n && (reinterpret_cast<std::uintptr_t>(dst + j) & 31) != 0; ++j) dst[j] = src[j];
  for (; j + 8 <= n; j += 8) _mm256_stream_ps(dst + j, _mm256_loadu_ps(src + j));
  for (; j < n; ++j) dst[j] = src[j];
}

#endif

}  // namespace

void multi_head_attention_into(MultiHeadResult& r, const MatrixCRef& xq, const MatrixCRef& xkv,
                               const MultiHeadWeights& w, const MultiHeadParams& params, const Matrix& mask,
                               const TraceTag& tag) {
  const Index E = w.model_dim();
  const int H = w.heads;
  const Index dh = w.head_dim();
  const Index n = xq.rows();
  const Index m = xkv.rows();
  assert(H > 0 && dh * H == w.Wq.rows() && xq.cols() == E && xkv.cols() == E);
  assert(mask.size() == 0 || (mask.rows() == n && mask.cols() == m));

  // Projections: three large GEMMs (OpenBLAS or Eigen threads them itself).
  linear_into(r.queries, xq, w.Wq, w.bq);
  linear_into(r.keys, xkv, w.Wk, w.bk);
  linear_into(r.values, xkv, w.Wv, w.bv);
  const Matrix& q = r.queries;
  const Matrix& k = r.keys;
  const Matrix& v = r.values;

  const bool sparse = params.normaliser == Normaliser::Sparsemax;
  const float scale = 1.0f / (std::sqrt(static_cast<float>(dh)) * params.temperature);
  const Index causal_shift = m - n;  // query i sees keys j <= i + shift, as causal_mask()

  r.context.resize(n, E);
  if (params.keep_weights) {
    r.head_weights.resize(static_cast<std::size_t>(H));
    for (auto& hw : r.head_weights) hw.resize(n, m);  // a no-op when the shape is unchanged
  } else {
    r.head_weights.clear();
  }

  const Index row_block = kAttentionKernel ? kKernelRowBlock : kBlasRowBlock;
  const Index blocks = (n + row_block - 1) / row_block;
  const Index tasks = blocks * H;
  // Waking a second thread costs more than a small lab-sized problem (measured: 3.9 ms instead of 0.4 ms
  // for 64 x 64 tokens on a busy machine), so threads start only when there is real work to share.
  const bool parallel = tasks > 1 && static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(E) > 5.0e5;
  const Index packed_k = padded(m) * dh;
  const Index packed_v = m * padded(dh);
  if constexpr (kAttentionKernel) r.packed.resize(static_cast<std::size_t>((packed_k + packed_v) * H));

  auto mask_and_normalise = [&](BlockMap s, Index r0) {
    if (mask.size() != 0) s += mask.middleRows(r0, s.rows());
    if (params.causal) {
      for (Index i = 0; i < s.rows(); ++i) {
        const Index first_hidden = std::max<Index>(0, r0 + i + causal_shift + 1);
        if (first_hidden < m) s.row(i).tail(m - first_hidden).setConstant(-std::numeric_limits<float>::infinity());
      }
    }
    if (sparse) {
      s = sparsemax_rows(s, 1.0f);
    } else {
      softmax_rows_inplace(s);
    }
  };

  // Each task: the scores of one block of queries of one head, normalised while the block is hot, then
  // multiplied by the head's values into its slice of the concatenated context.
#pragma omp parallel if (parallel)
  {
    if constexpr (kAttentionKernel) {
#if defined(__AVX2__) && defined(__FMA__)
#pragma omp for schedule(static)
      for (int h = 0; h < H; ++h) {
        float* base = r.packed.data() + h * (packed_k + packed_v);
        pack_keys(k.data() + h * dh, m, dh, E, scale, base);
        pack_values(v.data() + h * dh, m, dh, E, base + packed_k);
      }
      Matrix scratch(std::min(row_block, n), m);
#pragma omp for schedule(dynamic)
      for (Index task = 0; task < tasks; ++task) {
        // Head-major order: consecutive tasks reuse one head's packed keys and values (1 MiB at 2048
        // keys) from L2 instead of fetching another head's from L3.
        const int h = static_cast<int>(task / blocks);
        const Index r0 = (task % blocks) * row_block;
        const Index rows = std::min(row_block, n - r0);
        const float* base = r.packed.data() + h * (packed_k + packed_v);
        BlockMap s(scratch.data(), rows, m, Strided(m));
        tile_block(q.data() + r0 * E + h * dh, E, rows, base, dh, m, scratch.data(), m);
        mask_and_normalise(s, r0);
        tile_block(scratch.data(), m, rows, base + packed_k, m, dh, r.context.data() + r0 * E + h * dh, E);
        if (params.keep_weights) {
          float* dst = r.head_weights[static_cast<std::size_t>(h)].data() + r0 * m;
          for (Index i = 0; i < rows; ++i) stream_row(scratch.data() + i * m, dst + i * m, m);
        }
      }
      _mm_sfence();  // the streamed weights are visible to every thread after the region's barrier
#endif
    } else {
      Matrix scratch;
      if (!params.keep_weights) scratch.resize(std::min(row_block, n), m);
#pragma omp for schedule(dynamic)
      for (Index task = 0; task < tasks; ++task) {
        const int h = static_cast<int>(task % H);
        const Index r0 = (task / H) * row_block;
        const Index rows = std::min(row_block, n - r0);
        ConstBlockMap qh(q.data() + r0 * E + h * dh, rows, dh, Strided(E));
        ConstBlockMap kh(k.data() + h * dh, m, dh, Strided(E));
        ConstBlockMap vh(v.data() + h * dh, m, dh, Strided(E));
        float* sdata = params.keep_weights ? r.head_weights[static_cast<std::size_t>(h)].data() + r0 * m : scratch.data();
        BlockMap s(sdata, rows, m, Strided(m));
        s.noalias() = (qh * scale) * kh.transpose();
        mask_and_normalise(s, r0);
        BlockMap ctx(r.context.data() + r0 * E + h * dh, rows, dh, Strided(E));
        ctx.noalias() = s * vh;
      }
    }
  }

  linear_into(r.output, r.context, w.Wo, w.bo);
  if (tag.enabled() && params.keep_weights) {
    for (int h = 0; h < H; ++h) tag.record(r.head_weights[static_cast<std::size_t>(h)], h);
  }
}

MultiHeadResult multi_head_attention(const MatrixCRef& xq, const MatrixCRef& xkv, const MultiHeadWeights& w,
                                     const MultiHeadParams& params, const Matrix& mask, const TraceTag& tag) {
  MultiHeadResult r;
  multi_head_attention_into(r, xq, xkv, w, params, mask, tag);
  return r;
}

}  // namespace attn
