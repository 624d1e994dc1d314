// Register-tiled products for per-head attention (AVX2 + FMA): Q_h K_h^T and weights x V_h for a block of
// query rows, with K_h and V_h packed once per head into panels of 16 columns. Internal to the engine:
// used by engine/src/mechanisms/multi_head.cpp and engine/src/models/hf/transformer_run.cpp.
//
// Why not sgemm per head: the products are thin (inner dimension d_h = 64 for Q K^T, output width 64
// for weights x V) and OpenBLAS re-packs K_h and V_h for every row block; measured in a BERT-base forward
// at 512 tokens the per-head sgemm path ran at about half the speed of the layer's large GEMMs.
#pragma once

#include "attn/core.h"

#include <algorithm>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ATTN_ATTENTION_TILES 1
#endif

namespace attn::detail::tiles {

constexpr Index kPanel = 16;    // columns per packed panel: two 8-float registers
constexpr Index kTileRows = 6;  // rows per register tile: 6 x 16 accumulators use 12 of 16 registers

inline Index padded(Index n) { return (n + kPanel - 1) / kPanel * kPanel; }

#ifdef ATTN_ATTENTION_TILES

// Packing for the tile kernel: the right-hand operand in panels of kPanel columns, each panel `inner`
// rows of kPanel floats, zero past the last column, so the kernel reads it sequentially. For Q K^T the
// columns are keys (K^T: d_h x m, optionally scaled, e.g. by 1/(sqrt(d_h) T), once here); for weights x V
// they are V's d_h columns (V: m x d_h). `stride` is the row stride of K and V inside the all-heads
// projections.

// K^T (d_h x m) in panels of kPanel keys: panel p holds d_h rows of 16 floats, each key times `scale`.
// Size padded(m) * dh.
inline void pack_keys(const float* k, Index m, Index dh, Index stride, float* out, float scale = 1.0f) {
  for (Index p = 0; p < padded(m) / kPanel; ++p) {
    float* dst = out + p * dh * kPanel;
    for (Index j = 0; j < kPanel; ++j) {
      const Index key = p * kPanel + j;
      if (key < m) {
        // Multiplying by 1 is exact, and the pass is bound by its strided stores, so no branch on scale.
        for (Index d = 0; d < dh; ++d) dst[d * kPanel + j] = k[key * stride + d] * scale;
      } else {
        for (Index d = 0; d < dh; ++d) dst[d * kPanel + j] = 0.0f;
      }
    }
  }
}
// V (m x d_h) in panels of kPanel columns: panel p holds m rows of 16 floats. Size m * padded(dh).
inline void pack_values(const float* v, Index m, Index dh, Index stride, float* out) {
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
inline void tile(const float* a, Index astride, const float* panel, Index inner, Index n, bool accumulate, float* out,
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
inline void tile_rows_panel(const float* a, Index astride, Index rows, const float* panel, Index inner, Index n,
                            bool accumulate, float* out, Index ostride) {
  Index r = 0;
  for (; r + R <= rows; r += R)
    tile<R>(a + r * astride, astride, panel, inner, n, accumulate, out + r * ostride, ostride);
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

// out (rows x cols, row stride ostride) = a (rows x inner) * B, B packed in panels of kPanel columns,
// panel p starting at packed + p * panel_stride with kPanel floats per inner index. panel_stride is
// inner * kPanel for a whole packed operand; it is larger when only the first `inner` rows of each panel
// are used (a causal block reads the first `keys` rows of V's panels). The loops keep one panel chunk (at
// most kInnerChunk x 16 floats = 16 KiB) in L1 while every row tile of the block uses it; the inner
// dimension is cut into chunks that accumulate, so weights x V over 2048 keys stays in L1 too.
constexpr Index kInnerChunk = 256;
inline void tile_block(const float* a, Index astride, Index rows, const float* packed, Index panel_stride, Index inner,
                       Index cols, float* out, Index ostride) {
  const Index panels = padded(cols) / kPanel;
  for (Index i0 = 0; i0 < inner; i0 += kInnerChunk) {
    const Index ic = std::min(kInnerChunk, inner - i0);
    for (Index p = 0; p < panels; ++p) {
      const Index n = std::min(kPanel, cols - p * kPanel);
      tile_rows_panel<kTileRows>(a + i0, astride, rows, packed + p * panel_stride + i0 * kPanel, ic, n, i0 > 0,
                                 out + p * kPanel, ostride);
    }
  }
}

#endif

}  // namespace attn::detail::tiles
