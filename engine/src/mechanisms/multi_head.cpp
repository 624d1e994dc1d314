#include "attn/mechanisms/multi_head.h"

#include "attn/mechanisms/blocks.h"
#include "attn/random.h"

#include "attention_tiles.h"

#include <algorithm>
#include <cstdint>
#include <cassert>
#include <cmath>
#include <limits>

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

namespace tiles = detail::tiles;

#ifdef ATTN_ATTENTION_TILES
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

// One call's inputs and sizes, shared by the threads of its parallel region: the queries, keys and values are
// already projected into r, the context (and the kept weights) are written there.
struct HeadPass {
  MultiHeadResult& r;
  const Matrix& mask;
  const MultiHeadParams& params;
  Index E, dh, n, m;
  int H;
  float scale;
  Index causal_shift;  // query i sees keys j <= i + shift, as causal_mask()
  bool sparse;
  Index row_block, blocks, tasks;
  Index packed_k, packed_v;  // floats of one head's packed keys and values (kernel path)

  // The scores of query rows r0 .. r0 + rows masked (the mask given, then causality) and normalised in place.
  void mask_and_normalise(BlockMap s, Index r0) const {
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
  }
};

#ifdef ATTN_ATTENTION_TILES

// Copies a finished row to the kept weights with non-temporal stores: the 201 MB of weights at 2048 tokens
// go to memory once, without first being read for ownership or evicting the working set.
void stream_row(const float* src, float* dst, Index n) {
  Index j = 0;
  for (; j < n && (reinterpret_cast<std::uintptr_t>(dst + j) & 31) != 0; ++j) dst[j] = src[j];
  for (; j + 8 <= n; j += 8) _mm256_stream_ps(dst + j, _mm256_loadu_ps(src + j));
  for (; j < n; ++j) dst[j] = src[j];
}

// The AVX2 kernel's share of the tasks of one thread (called inside the parallel region: its loops are the
// region's work-sharing loops). Each head's keys and values are packed once, then each task scores one block
// of queries of one head, normalises it while it is hot and multiplies it by the values.
void attend_tiled(const HeadPass& p) {
  MultiHeadResult& r = p.r;
  const Index E = p.E, dh = p.dh, n = p.n, m = p.m, row_block = p.row_block, blocks = p.blocks;
  const Index packed_k = p.packed_k, packed_v = p.packed_v;
  const Matrix& q = r.queries;
#pragma omp for schedule(static)
  for (int h = 0; h < p.H; ++h) {
    float* base = r.packed.data() + h * (packed_k + packed_v);
    tiles::pack_keys(r.keys.data() + h * dh, m, dh, E, base, p.scale);
    tiles::pack_values(r.values.data() + h * dh, m, dh, E, base + packed_k);
  }
  Matrix scratch(std::min(row_block, n), m);
#pragma omp for schedule(dynamic)
  for (Index task = 0; task < p.tasks; ++task) {
    // Head-major order: consecutive tasks reuse one head's packed keys and values (1 MiB at 2048
    // keys) from L2 instead of fetching another head's from L3.
    const int h = static_cast<int>(task / blocks);
    const Index r0 = (task % blocks) * row_block;
    const Index rows = std::min(row_block, n - r0);
    const float* base = r.packed.data() + h * (packed_k + packed_v);
    BlockMap s(scratch.data(), rows, m, Strided(m));
    tiles::tile_block(q.data() + r0 * E + h * dh, E, rows, base, dh * tiles::kPanel, dh, m, scratch.data(), m);
    p.mask_and_normalise(s, r0);
    tiles::tile_block(scratch.data(), m, rows, base + packed_k, m * tiles::kPanel, m, dh,
                      r.context.data() + r0 * E + h * dh, E);
    if (p.params.keep_weights) {
      float* dst = r.head_weights[static_cast<std::size_t>(h)].data() + r0 * m;
      for (Index i = 0; i < rows; ++i) stream_row(scratch.data() + i * m, dst + i * m, m);
    }
  }
  _mm_sfence();  // the streamed weights are visible to every thread after the region's barrier
}

#endif

// The BLAS path's share of the tasks of one thread (inside the parallel region, as attend_tiled): each task
// scores one block of queries of one head (into the kept weights, or a scratch block), normalises it and
// multiplies it by the head's values into its slice of the concatenated context.
void attend_blas(const HeadPass& p) {
  MultiHeadResult& r = p.r;
  const Index E = p.E, dh = p.dh, n = p.n, m = p.m, row_block = p.row_block;
  const int H = p.H;
  const float scale = p.scale;
  const Matrix& q = r.queries;
  const Matrix& k = r.keys;
  const Matrix& v = r.values;
  Matrix scratch;
  if (!p.params.keep_weights) scratch.resize(std::min(row_block, n), m);
#pragma omp for schedule(dynamic)
  for (Index task = 0; task < p.tasks; ++task) {
    const int h = static_cast<int>(task % H);
    const Index r0 = (task / H) * row_block;
    const Index rows = std::min(row_block, n - r0);
    ConstBlockMap qh(q.data() + r0 * E + h * dh, rows, dh, Strided(E));
    ConstBlockMap kh(k.data() + h * dh, m, dh, Strided(E));
    ConstBlockMap vh(v.data() + h * dh, m, dh, Strided(E));
    float* sdata = p.params.keep_weights ? r.head_weights[static_cast<std::size_t>(h)].data() + r0 * m : scratch.data();
    BlockMap s(sdata, rows, m, Strided(m));
    s.noalias() = (qh * scale) * kh.transpose();
    p.mask_and_normalise(s, r0);
    BlockMap ctx(r.context.data() + r0 * E + h * dh, rows, dh, Strided(E));
    ctx.noalias() = s * vh;
  }
}

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

  r.context.resize(n, E);
  if (params.keep_weights) {
    r.head_weights.resize(static_cast<std::size_t>(H));
    for (auto& hw : r.head_weights) hw.resize(n, m);  // a no-op when the shape is unchanged
  } else {
    r.head_weights.clear();
  }

  const Index row_block = kAttentionKernel ? kKernelRowBlock : kBlasRowBlock;
  const Index blocks = (n + row_block - 1) / row_block;
  const HeadPass pass{.r = r,
                      .mask = mask,
                      .params = params,
                      .E = E,
                      .dh = dh,
                      .n = n,
                      .m = m,
                      .H = H,
                      .scale = 1.0f / (std::sqrt(static_cast<float>(dh)) * params.temperature),
                      .causal_shift = m - n,
                      .sparse = params.normaliser == Normaliser::Sparsemax,
                      .row_block = row_block,
                      .blocks = blocks,
                      .tasks = blocks * H,
                      .packed_k = tiles::padded(m) * dh,
                      .packed_v = m * tiles::padded(dh)};
  // Waking a second thread costs more than a small lab-sized problem (measured: 3.9 ms instead of 0.4 ms
  // for 64 x 64 tokens on a busy machine), so threads start only when there is real work to share.
  const bool parallel =
      pass.tasks > 1 && static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(E) > 5.0e5;
  if constexpr (kAttentionKernel) r.packed.resize(static_cast<std::size_t>((pass.packed_k + pass.packed_v) * H));

#pragma omp parallel if (parallel)
  {
    if constexpr (kAttentionKernel) {
#ifdef ATTN_ATTENTION_TILES
      attend_tiled(pass);
#endif
    } else {
      attend_blas(pass);
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
