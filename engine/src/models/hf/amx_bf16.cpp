// amx_bf16.h's products.
#include "amx_bf16.h"

#include "amx_tiles.h"
#include "attn/io/ggml_types.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace attn::models {

#if defined(ATTN_AMX_TILES)
namespace {

// Tiles 0-1: weights, 16 rows (pairs of elements) of 16 weight rows' two BF16 (64 bytes); 2-3: activations, 16 rows
// of 32 BF16; 4-7: sums, 16 x 16 float.
constexpr amx::TileShapes kBf16Tiles = {{16, 16, 16, 16, 16, 16, 16, 16}, {64, 64, 64, 64, 64, 64, 64, 64}};
constexpr Index kGroup = 32;                     // weight rows per group: two weight tiles
constexpr Index kBlock = 32;                     // activation rows per block: two activation tiles
constexpr std::size_t kPackBytes = 2 * 16 * 64;  // a group's two weight tiles for 32 elements

// Round-to-nearest-even float -> BF16 of 16 floats (no NaN among activations reaches here: the callers' rows are
// finite or the products NaN alike).
__m256i to_bf16(__m512 v) { return (__m256i)_mm512_cvtneps_pbh(v); }
__m512 from_bf16(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

// x's n rows split into three BF16 rows each (hi, mid, lo: x = hi + mid + lo to float's precision), parts[s] row i
// at parts + (s * rows + i) * cols, rows past n zero.
void split(const float* x, Index n, Index ldx, Index cols, Index rows, std::uint16_t* parts) {
#pragma omp parallel for schedule(static) if (n * cols >= (1 << 16))
  for (Index i = 0; i < rows; ++i) {
    std::uint16_t* hi = parts + i * cols;
    std::uint16_t* mid = parts + (rows + i) * cols;
    std::uint16_t* lo = parts + (2 * rows + i) * cols;
    if (i >= n) {
      std::fill(hi, hi + cols, 0);
      std::fill(mid, mid + cols, 0);
      std::fill(lo, lo + cols, 0);
      continue;
    }
    for (Index k = 0; k < cols; k += 16) {
      const __m512 v = _mm512_loadu_ps(x + i * ldx + k);
      const __m256i h = to_bf16(v);
      const __m512 r = _mm512_sub_ps(v, from_bf16(h));
      const __m256i m = to_bf16(r);
      const __m256i l = to_bf16(_mm512_sub_ps(r, from_bf16(m)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + k), h);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(mid + k), m);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + k), l);
    }
  }
}

// r[j] = column j of the 16 x 16 dwords r[0..15] (rows in, columns out): pairs, then quads within each 128-bit lane,
// then the lanes.
void transpose16(__m512i* r) {
  __m512i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // b[4i + c], lane L: column 4L + c of rows 4i to 4i + 3
    b[4 * i] = _mm512_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
    b[4 * i + 1] = _mm512_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
    b[4 * i + 2] = _mm512_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
    b[4 * i + 3] = _mm512_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
  }
  for (int c = 0; c < 4; ++c) {
    const __m512i x = _mm512_shuffle_i32x4(b[c], b[4 + c], 0x44), y = _mm512_shuffle_i32x4(b[c], b[4 + c], 0xEE);
    const __m512i u = _mm512_shuffle_i32x4(b[8 + c], b[12 + c], 0x44);
    const __m512i v = _mm512_shuffle_i32x4(b[8 + c], b[12 + c], 0xEE);
    r[c] = _mm512_shuffle_i32x4(x, u, 0x88);
    r[4 + c] = _mm512_shuffle_i32x4(x, u, 0xDD);
    r[8 + c] = _mm512_shuffle_i32x4(y, v, 0x88);
    r[12 + c] = _mm512_shuffle_i32x4(y, v, 0xDD);
  }
}

// Weight rows w (cols BF16 each) of one group in the weight tiles' layout, 32 elements after 32: for each, two tiles
// of 16 x 16 dwords (pair p of row r at [p][r]): 16 rows' 64 bytes transposed in registers.
void pack(const std::uint16_t* w, Index cols, std::uint8_t* out) {
  for (Index kb = 0; kb < cols / 32; ++kb) {
    for (int h = 0; h < 2; ++h) {
      __m512i r[16];
      for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(w + (16 * h + i) * cols + 32 * kb);
      transpose16(r);
      std::uint8_t* o = out + static_cast<std::size_t>(kb) * kPackBytes + static_cast<std::size_t>(h) * 1024;
      for (int p = 0; p < 16; ++p) _mm512_storeu_si512(o + 64 * p, r[p]);
    }
  }
}

// Outputs [t0, t0 + 32) x 32: the split rows from `parts` (rows apart: rows, row length cols) times the packed group,
// into sums (32 x 32 float, row-major).
void tile(const std::uint8_t* packed, const std::uint16_t* parts, Index rows, Index cols, Index t0, float* sums) {
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  const long stride = static_cast<long>(cols * 2);
  for (Index kb = 0; kb < cols / 32; ++kb) {
    const std::uint8_t* p = packed + static_cast<std::size_t>(kb) * kPackBytes;
    _tile_loadd(0, p, 64);
    _tile_loadd(1, p + 1024, 64);
    for (int s = 0; s < 3; ++s) {
      const std::uint16_t* a = parts + (s * rows + t0) * cols + 32 * kb;
      _tile_loadd(2, a, stride);
      _tile_loadd(3, a + 16 * cols, stride);
      _tile_dpbf16ps(4, 2, 0);
      _tile_dpbf16ps(5, 2, 1);
      _tile_dpbf16ps(6, 3, 0);
      _tile_dpbf16ps(7, 3, 1);
    }
  }
  _tile_stored(4, sums, 128);
  _tile_stored(5, sums + 16, 128);
  _tile_stored(6, sums + 16 * 32, 128);
  _tile_stored(7, sums + 16 * 32 + 16, 128);
}

}  // namespace
#endif

bool amx_bf16_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
#if defined(ATTN_AMX_TILES)
  if (W.dtype != io::DType::BF16 || W.ggml_rounding || !W.file_rows.empty() || n < kAmxBf16MinRows ||
      W.cols % 32 != 0 || W.rows % kGroup != 0 || !io::cpu_has_amx())
    return false;
  const Index rows = (n + kBlock - 1) / kBlock * kBlock, cols = W.cols;
  thread_local std::vector<std::uint16_t> split_rows;
  split_rows.resize(static_cast<std::size_t>(3 * rows * cols));
  split(x, n, ldx, cols, rows, split_rows.data());
  const std::uint16_t* parts = split_rows.data();  // the parallel region uses the pointer: the buffer is this thread's
  const auto* w = static_cast<const std::uint16_t*>(W.data);
#pragma omp parallel if (n * W.rows * W.cols >= (1 << 20))
  {
    amx::configure(kBf16Tiles);
    thread_local std::vector<std::uint8_t> packed;
    packed.resize(static_cast<std::size_t>(cols / 32) * kPackBytes);
    alignas(64) float sums[kBlock * kGroup];
#pragma omp for schedule(static)
    for (Index g = 0; g < W.rows / kGroup; ++g) {
      pack(w + g * kGroup * cols, cols, packed.data());
      for (Index t0 = 0; t0 < n; t0 += kBlock) {
        tile(packed.data(), parts, rows, cols, t0, sums);
        for (Index t = t0; t < std::min(n, t0 + kBlock); ++t)
          std::memcpy(y + t * ldy + g * kGroup, sums + (t - t0) * kGroup, kGroup * sizeof(float));
      }
    }
  }
  return true;
#else
  (void)x, (void)n, (void)ldx, (void)W, (void)y, (void)ldy;
  return false;
#endif
}

}  // namespace attn::models
