// A GGUF file's BF16 matrices as llama.cpp's x86 CPU backend multiplies them where the CPU has AVX512-BF16 (its
// sapphirerapids and zen4 libraries): the activations rounded to BF16 (ggml's vec_dot_type), then
// - one activation row (generation): ggml_vec_dot_bf16 (ggml-cpu/vec.cpp), two accumulators of 16 lanes, each
//   `_mm512_dpbf16_ps` over 32 pairs of elements at a time (64 per step), each reduced (`_mm512_reduce_add_ps`) and
//   the two summed in double with the leftover products (k % 64) before the result is rounded to float;
// - more rows: tinyBLAS<32, __m512, __m512bh> (llamafile/sgemm.cpp), one accumulator of 16 lanes per output, a
//   `_mm512_dpbf16_ps` per 32 elements, reduced at the end; for k a multiple of 32 (otherwise vec_dot, as there).
// The instruction itself, so its rounding (each pair's products added in turn, denormals flushed) is the same.
#include "ggml_products.h"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512BF16__)
#include <immintrin.h>
#define ATTN_GGML_BF16 1
#endif

namespace attn::models::ggml {

#if defined(ATTN_GGML_BF16)
namespace {

__m512bh load_bf16(const std::uint16_t* p) { return (__m512bh)_mm512_loadu_si512(p); }

// ggml_vec_dot_bf16 for four weight rows (k apart) and one activation row: each row's own two accumulators and
// reductions, as one row alone; four at a time for the dot products' latency.
void vec_dot_4x1(const std::uint16_t* x, const std::uint16_t* w, Index k, float* y, int rows) {
  const Index np = k & ~Index{63};
  __m512 c1[4], c2[4];
  for (int r = 0; r < 4; ++r) c1[r] = c2[r] = _mm512_setzero_ps();
  for (Index i = 0; i < np; i += 64) {
    const __m512bh x1 = load_bf16(x + i), x2 = load_bf16(x + i + 32);
    for (int r = 0; r < rows; ++r) {
      c1[r] = _mm512_dpbf16_ps(c1[r], load_bf16(w + r * k + i), x1);
      c2[r] = _mm512_dpbf16_ps(c2[r], load_bf16(w + r * k + i + 32), x2);
    }
  }
  for (int r = 0; r < rows; ++r) {
    double sum = 0.0;
    sum += static_cast<double>(_mm512_reduce_add_ps(c1[r]));
    sum += static_cast<double>(_mm512_reduce_add_ps(c2[r]));
    for (Index i = np; i < k; ++i) {
      const float a = std::bit_cast<float>(std::uint32_t{w[r * k + i]} << 16);
      const float b = std::bit_cast<float>(std::uint32_t{x[i]} << 16);
      sum += static_cast<double>(a * b);
    }
    y[r] = static_cast<float>(sum);
  }
}

// out[j] = _mm512_reduce_add_ps(v[j]) for 16 vectors, bit for bit: the same pairs added in the same tree (GCC's
// reduction: the upper 8 lanes onto the lower, then 4, then 2, then 1), each level on the 16 vectors at once.
void reduce_add_16(const __m512* v, float* out) {
  __m512 l1[8], l2[4], l3[2];
  for (int p = 0; p < 8; ++p) {  // [a lanes i + i+8, b lanes i + i+8]
    const __m512 a = v[2 * p], b = v[2 * p + 1];
    l1[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  for (int q = 0; q < 4; ++q) {  // a quarter per vector: lanes i + i+4
    const __m512 c = l1[2 * q], d = l1[2 * q + 1];
    l2[q] = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(3, 1, 3, 1)));
  }
  for (int r = 0; r < 2; ++r) {  // in each quarter: lanes i + i+2 of two vectors
    const __m512 e = l2[2 * r], f = l2[2 * r + 1];
    l3[r] = _mm512_add_ps(_mm512_shuffle_ps(e, f, _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_ps(e, f, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  // Lane 0 + lane 1: quarter m holds vectors m, 4 + m, 8 + m, 12 + m.
  const __m512 sums = _mm512_add_ps(_mm512_shuffle_ps(l3[0], l3[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                    _mm512_shuffle_ps(l3[0], l3[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_ps(out, _mm512_permutexvar_ps(order, sums));
}

// tinyBLAS's tile: kTokens activation rows times kRows weight rows (or fewer), one accumulator per output.
constexpr Index kRows = 4, kTokens = 4;
template <Index R, Index T>
void tile(const std::uint16_t* x, Index ldx, const std::uint16_t* w, Index k, float* y, Index ldy) {
  __m512 c[T][R];
  for (auto& row : c)
    for (__m512& v : row) v = _mm512_setzero_ps();
  for (Index l = 0; l < k; l += 32) {
    __m512bh wv[R];
    for (Index r = 0; r < R; ++r) wv[r] = load_bf16(w + r * k + l);
    for (Index t = 0; t < T; ++t) {
      const __m512bh xv = load_bf16(x + t * ldx + l);
      for (Index r = 0; r < R; ++r) c[t][r] = _mm512_dpbf16_ps(c[t][r], wv[r], xv);
    }
  }
  if constexpr (R * T == 16) {
    alignas(64) float sums[16];
    reduce_add_16(&c[0][0], sums);
    for (Index t = 0; t < T; ++t)
      for (Index r = 0; r < R; ++r) y[t * ldy + r] = sums[t * R + r];
  } else {
    for (Index t = 0; t < T; ++t)
      for (Index r = 0; r < R; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(c[t][r]);
  }
}

void one_row(const std::uint16_t* x, const std::uint16_t* w, Index rows, Index k, float* y) {
  const Index groups = (rows + 3) / 4;
#pragma omp parallel for schedule(static) if (rows * k >= kFusedParallelWeights)
  for (Index g = 0; g < groups; ++g) {
    const Index o = 4 * g;
    if (o + 4 * kFusedPrefetchRows < rows)
      prefetch_bytes(w + (o + 4 * kFusedPrefetchRows) * k, static_cast<std::size_t>(4 * k) * sizeof(std::uint16_t));
    vec_dot_4x1(x, w + o * k, k, y + o, static_cast<int>(std::min<Index>(4, rows - o)));
  }
}

// Blocks of activation rows stay in L2 while each thread's share of the weight rows passes.
void batch(const std::uint16_t* x, Index n, const std::uint16_t* w, Index rows, Index k, float* y, Index ldy) {
  blocked_rows(n, rows, kRows, 16 * kTokens, rows * k * n >= (1 << 16), [&](Index o, Index count, Index i0, Index i1) {
    const std::uint16_t* wg = w + o * k;
    Index i = i0;
    if (count == kRows) {
      for (; i + kTokens <= i1; i += kTokens) tile<kRows, kTokens>(x + i * k, k, wg, k, y + i * ldy + o, ldy);
    }
    for (; i < i1; ++i) {
      for (Index r = 0; r < count; ++r) tile<1, 1>(x + i * k, k, wg + r * k, k, y + i * ldy + o + r, ldy);
    }
  });
}

}  // namespace

bool bf16_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  if (!W.ggml_rounding || W.dtype != io::DType::BF16 || !W.file_rows.empty()) return false;
  const Index k = W.cols;
  // The activations as BF16: x holds them rounded already, so their upper halves.
  thread_local std::vector<std::uint16_t> xb;
  xb.resize(static_cast<std::size_t>(n * k));
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < k; ++j) {
      xb[static_cast<std::size_t>(i * k + j)] =
          static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(x[i * ldx + j]) >> 16);
    }
  }
  const auto* w = static_cast<const std::uint16_t*>(W.data);
  if (n >= 2 && k % 32 == 0) {
    batch(xb.data(), n, w, W.rows, k, y, ldy);
    return true;
  }
  for (Index i = 0; i < n; ++i) one_row(xb.data() + i * k, w, W.rows, k, y + i * ldy);
  return true;
}
#else
bool bf16_product(const float*, Index, Index, const StoredMatrix&, float*, Index) { return false; }
#endif

}  // namespace attn::models::ggml
