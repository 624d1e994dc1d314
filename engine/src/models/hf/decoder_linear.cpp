// The decoder's one product: activations times a weight kept as the checkpoint stores it (decoder_impl.h).
#include "decoder_impl.h"

#include "attn/io/ggml_types.h"
#include "../../io/half.h"

#include <Eigen/Core>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <type_traits>

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#endif

namespace attn::models {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::OuterStride<>;

// From this many activation rows on, a 16-bit matrix is widened in large chunks, each handed whole to a
// multi-threaded sgemm; below it (generation's one row) the threads share blocks of weight rows, each block
// widened into a buffer that stays in L2 and multiplied there.
constexpr Index kWideRows = 16;
// Floats per widened chunk for the wide path (16 MiB): bounded scratch, whatever the matrix.
constexpr Index kChunkFloats = Index{1} << 22;
// Weight rows per block for the wide path's parallel widening.
constexpr Index kBlockRows = 64;
// Up to this many activation rows (generation's one, a keystroke's few), the product is fused: each weight row is
// widened in registers and dotted with every activation row, one pass over the weights (which dominate: 270 MB of
// BF16 per token for a SmolLM2-135M), no second pass through a buffer and no BLAS call per block.
constexpr Index kFusedRows = 4;
// A fused product shares its rows between the threads only from this many weights on (the output embedding):
// measured here, a generated token's 200-odd small products (q, k, v, o, gate, up, down of 30 layers) each in its
// own parallel region ran 5x slower on 2 threads than on one, the threads' wake-ups costing more than the
// products.
constexpr Index kFusedParallelWeights = Index{1} << 22;

void half_to_float(const std::uint16_t* p, float* out, Index n) {
  Index i = 0;
#if defined(__AVX2__) && defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
  }
#endif
  for (; i < n; ++i) {
    Eigen::half h;
    h.x = p[i];
    out[i] = static_cast<float>(h);
  }
}

void bf16_to_float(const std::uint16_t* p, float* out, Index n) {
  for (Index i = 0; i < n; ++i) out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(p[i]) << 16);
}

float widen_one(const void* w, io::DType dtype, Index j) {
  switch (dtype) {
    case io::DType::BF16:
      return std::bit_cast<float>(static_cast<std::uint32_t>(static_cast<const std::uint16_t*>(w)[j]) << 16);
    case io::DType::F16: {
      Eigen::half h;
      h.x = static_cast<const std::uint16_t*>(w)[j];
      return static_cast<float>(h);
    }
    default: return static_cast<const float*>(w)[j];
  }
}

// dot(x, w) with w's 16-bit or 32-bit elements widened as they are loaded.
inline float fused_dot(const float* x, const void* w, io::DType dtype, Index n) {
  Index j = 0;
  float sum = 0.0f;
#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  const auto* h = static_cast<const std::uint16_t*>(w);
  const auto* f = static_cast<const float*>(w);
  const auto widen = [&](Index at) -> __m256 {
    switch (dtype) {
      case io::DType::BF16: {
        const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + at)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
      }
      case io::DType::F16: return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + at)));
      default: return _mm256_loadu_ps(f + at);
    }
  };
  for (; j + 16 <= n; j += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j), widen(j), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j + 8), widen(j + 8), acc1);
  }
  for (; j + 8 <= n; j += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j), widen(j), acc0);
  const __m256 acc = _mm256_add_ps(acc0, acc1);
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
  sum = _mm_cvtss_f32(s4);
#endif
  for (; j < n; ++j) sum += x[j] * widen_one(w, dtype, j);
  return sum;
}

}  // namespace

void StoredMatrix::rows_to_float(Index r0, Index count, float* out) const {
  const Index n = count * cols;
  switch (dtype) {
    case io::DType::F32: std::memcpy(out, static_cast<const float*>(data) + r0 * cols, sizeof(float) * n); break;
    case io::DType::F16: half_to_float(static_cast<const std::uint16_t*>(data) + r0 * cols, out, n); break;
    case io::DType::BF16: bf16_to_float(static_cast<const std::uint16_t*>(data) + r0 * cols, out, n); break;
    case io::DType::GGML: {
      // The loader checked that every row is a whole number of blocks of a type ggml_dequantize reads.
      const auto row_bytes = static_cast<std::size_t>(io::ggml_bytes(ggml_type, cols).value_or(0));
      const auto* begin = static_cast<const std::byte*>(data) + static_cast<std::size_t>(r0) * row_bytes;
      io::ggml_dequantize(static_cast<io::GgmlType>(ggml_type), {begin, static_cast<std::size_t>(count) * row_bytes},
                          {out, static_cast<std::size_t>(n)});
      break;
    }
    default: std::fill(out, out + n, 0.0f); break;  // the loader keeps only these four
  }
}

namespace {

// x's n rows (stride ldx) rounded as ggml rounds the activations of a product with W (io::ggml_round_activations)
// into `out` (stride W.cols); false when W's products are not rounded (float32 weights, rounding off).
bool round_activations(const float* x, Index n, Index ldx, const StoredMatrix& W, std::vector<float>& out) {
  if (!W.ggml_rounding || W.dtype == io::DType::F32) return false;
  const io::GgmlType type = W.dtype == io::DType::GGML  ? static_cast<io::GgmlType>(W.ggml_type)
                            : W.dtype == io::DType::F16 ? io::GgmlType::F16
                                                        : io::GgmlType::BF16;
  if (out.size() < static_cast<std::size_t>(n * W.cols)) out.resize(static_cast<std::size_t>(n * W.cols));
  bool rounded = true;
#pragma omp parallel for schedule(static) reduction(&& : rounded) if (n * W.cols >= (1 << 16))
  for (Index i = 0; i < n; ++i) {
    float* row = out.data() + i * W.cols;
    std::copy(x + i * ldx, x + i * ldx + W.cols, row);
    rounded = io::ggml_round_activations(type, {row, static_cast<std::size_t>(W.cols)}) && rounded;
  }
  return rounded;
}

// Q4_1 and Q5_1: y += sum_b m_b (s_b - sum of the rounded block b) per row (io::ggml_q8_1_offsets): the weights'
// offsets times the activations' block sums as ggml keeps them. x is the activations before rounding.
void add_q8_1_offsets(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  const auto type = static_cast<io::GgmlType>(W.ggml_type);
  if (W.dtype != io::DType::GGML || !W.ggml_rounding || (type != io::GgmlType::Q4_1 && type != io::GgmlType::Q5_1))
    return;
  const Index blocks = W.cols / 32;
  const std::size_t block_bytes = type == io::GgmlType::Q4_1 ? 20 : 24;
  std::vector<float> offsets(static_cast<std::size_t>(n * blocks));
  for (Index i = 0; i < n; ++i) {
    io::ggml_q8_1_offsets({x + i * ldx, static_cast<std::size_t>(W.cols)},
                          {offsets.data() + i * blocks, static_cast<std::size_t>(blocks)});
  }
  const auto* base = static_cast<const std::uint8_t*>(W.data);
#pragma omp parallel for schedule(static) if (W.rows * n >= (1 << 14))
  for (Index o = 0; o < W.rows; ++o) {
    const std::uint8_t* row = base + static_cast<std::size_t>(o * blocks) * block_bytes;
    for (Index i = 0; i < n; ++i) {
      float sum = 0.0f;
      for (Index b = 0; b < blocks; ++b) {
        std::uint16_t m;
        std::memcpy(&m, row + static_cast<std::size_t>(b) * block_bytes + 2, 2);
        sum += io::half_to_float(m) * offsets[static_cast<std::size_t>(i * blocks + b)];
      }
      y[i * ldy + o] += sum;
    }
  }
}

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
// Q8_0, Q4_0, Q5_0 and Q4_K rows with a few activation rows (generation), multiplied as ggml's AVX2 vec_dot does:
// the activations quantised once (Q8_0, Q8_K), then integer products of 32 quants at a time (maddubs: unsigned x
// signed bytes to pairs of int16, madd to int32), each block's sum scaled in float. The integer sums are exactly
// ggml's; only the order of the float sums differs. The other types take fused_blocks.

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

float half_at(const std::uint8_t* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// The 32 quants of a Q4_0/Q5_0 block as signed bytes: nibble j (element j low, j + 16 high), minus 8 (Q4_0); with
// Q5_0's fifth bit (bit j of qh) it is nibble + 16 bit - 16, i.e. the nibble with 0xF0 or'd in where the bit is 0.
__m256i nibbles(const std::uint8_t* qs) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
}
__m256i q4_0_quants(const std::uint8_t* b) { return _mm256_sub_epi8(nibbles(b + 2), _mm256_set1_epi8(8)); }
__m256i q5_0_quants(const std::uint8_t* b) {
  std::uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  // Byte j of `set` is 0xFF where bit j of qh is set (each byte keeps its own bit of the broadcast word).
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(qh)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
  const __m256i set =
      _mm256_cmpeq_epi8(_mm256_or_si256(spread, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe)), _mm256_set1_epi64x(-1));
  return _mm256_or_si256(nibbles(b + 6), _mm256_andnot_si256(set, _mm256_set1_epi8(static_cast<char>(0xF0))));
}
__m256i q8_0_quants(const std::uint8_t* b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2)); }

// A row of 32-element blocks (f16 d first, then the quants Quants reads) with a Q8_0 row (34-byte blocks).
template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
float dot_blocks32(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (Index b = 0; b < blocks; ++b, w += kBytes, a += 34) {
    const __m256i qw = Quants(w);
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 2));
    // |w| (unsigned) times a with w's sign: the signed product, in the instruction's unsigned x signed form.
    const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(qw, qw), _mm256_sign_epi8(qa, qw)), ones);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w) * half_at(a)), _mm256_cvtepi32_ps(p), acc);
  }
  return hsum(acc);
}

// A Q4_K row (144-byte super-blocks: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles)
// with a Q8_K row (292-byte blocks: float d, 256 int8, 16 int16 sums of 16).
float dot_q4_k(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.0f;
  const __m256i low = _mm256_set1_epi8(0x0F);
  for (Index b = 0; b < blocks; ++b, w += 144, a += 292) {
    float da;
    std::memcpy(&da, a, 4);
    const std::uint8_t* s = w + 4;
    std::int16_t bsums[16];
    std::memcpy(bsums, a + 260, sizeof bsums);
    int msum = 0;
    std::int16_t scale[8];
    for (int j = 0; j < 8; ++j) {
      const int sc = j < 4 ? s[j] & 63 : (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
      const int m = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
      scale[j] = static_cast<std::int16_t>(sc);
      msum += m * (bsums[2 * j] + bsums[2 * j + 1]);
    }
    const std::uint8_t* q4 = w + 16;
    const std::uint8_t* q8 = a + 4;
    __m256i sumi = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q4 + 32 * j));
      const __m256i lo = _mm256_and_si256(bits, low), hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low);
      const __m256i a_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * j));
      const __m256i a_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * j + 32));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(lo, a_lo), _mm256_set1_epi16(scale[2 * j])));
      sumi = _mm256_add_epi32(sumi,
                              _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a_hi), _mm256_set1_epi16(scale[2 * j + 1])));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(da * half_at(w)), _mm256_cvtepi32_ps(sumi), acc);
    mins += da * half_at(w + 2) * static_cast<float>(msum);
  }
  return hsum(acc) - mins;
}

using RowDot = float (*)(const std::uint8_t*, const std::uint8_t*, Index);

// W's integer kernel and the activations' type, or nullptr.
RowDot integer_dot(const StoredMatrix& W, io::GgmlType& activations) {
  if (W.dtype != io::DType::GGML || !W.ggml_rounding) return nullptr;
  activations = io::GgmlType::Q8_0;
  switch (static_cast<io::GgmlType>(W.ggml_type)) {
    case io::GgmlType::Q8_0: return dot_blocks32<q8_0_quants, 34>;
    case io::GgmlType::Q4_0: return dot_blocks32<q4_0_quants, 18>;
    case io::GgmlType::Q5_0: return dot_blocks32<q5_0_quants, 22>;
    case io::GgmlType::Q4_K: activations = io::GgmlType::Q8_K; return dot_q4_k;
    default: return nullptr;
  }
}

bool integer_kernel(const StoredMatrix& W) {
  io::GgmlType unused;
  return integer_dot(W, unused) != nullptr;
}

void fused_integer(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  io::GgmlType act;
  const RowDot dot = integer_dot(W, act);
  const auto act_row = static_cast<std::size_t>(*io::ggml_bytes(static_cast<std::uint32_t>(act), W.cols));
  const auto w_row = static_cast<std::size_t>(*io::ggml_bytes(W.ggml_type, W.cols));
  thread_local std::vector<std::byte> quantised;
  quantised.resize(static_cast<std::size_t>(n) * act_row);
  for (Index i = 0; i < n; ++i) {
    io::ggml_quantize_activations(act, {x + i * ldx, static_cast<std::size_t>(W.cols)},
                                  {quantised.data() + static_cast<std::size_t>(i) * act_row, act_row});
  }
  const auto* acts = reinterpret_cast<const std::uint8_t*>(quantised.data());
  const auto* base = static_cast<const std::uint8_t*>(W.data);
  const Index blocks = W.cols / (act == io::GgmlType::Q8_K ? 256 : 32);
#pragma omp parallel for schedule(static) if (W.rows * W.cols >= kFusedParallelWeights)
  for (Index o = 0; o < W.rows; ++o) {
    const std::uint8_t* row = base + static_cast<std::size_t>(o) * w_row;
    for (Index i = 0; i < n; ++i) y[i * ldy + o] = dot(row, acts + static_cast<std::size_t>(i) * act_row, blocks);
  }
}

// llama.cpp's products with F32 and F16 weights (ggml_compute_forward_mul_mat), summed in its order: tinyBLAS
// (llamafile_sgemm) for a batch of two or more rows whose length is a multiple of 16: 16 lanes of fused
// multiply-adds, 16 values apart, reduced as _mm512_reduce_add_ps; otherwise ggml_vec_dot_f16 / ggml_vec_dot_f32
// for each output: 4 x 16 lanes over blocks of 64, the lanes added pairwise and reduced, then the rest added (in
// double for F16, in float for F32). Each 16 lanes are two 8-lane halves here: a fused multiply-add rounds once at
// any width, so the sums are the AVX-512 build's. Checked against llama.cpp in tests/parity/test_gguf_parity.cpp.
void load16(const float* p, __m256& lo, __m256& hi) {
  lo = _mm256_loadu_ps(p);
  hi = _mm256_loadu_ps(p + 8);
}
void load16(const std::uint16_t* p, __m256& lo, __m256& hi) {
  lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)));
}
float reduce16(__m256 lo, __m256 hi) { return hsum(_mm256_add_ps(lo, hi)); }
float widen(std::uint16_t h) { return _cvtsh_ss(h); }

// tinyBLAS's tile: kTileTokens activation rows times kTileRows weight rows, every output its own 16 lanes (one
// AVX-512 register, or two AVX2 halves).
#if defined(__AVX512F__)
constexpr Index kTileRows = 3, kTileTokens = 4;
__m512 load16z(const float* p) { return _mm512_loadu_ps(p); }
template <class W>
void lanes_tile(const float* x, Index ldx, const W* w, Index k, float* y, Index ldy) {
  __m512 a[kTileTokens][kTileRows];
  for (auto& row : a)
    for (__m512& v : row) v = _mm512_setzero_ps();
  for (Index l = 0; l < k; l += 16) {
    __m512 wv[kTileRows];
    for (Index r = 0; r < kTileRows; ++r) wv[r] = load16z(w + r * k + l);
    for (Index t = 0; t < kTileTokens; ++t) {
      const __m512 xv = _mm512_loadu_ps(x + t * ldx + l);
      for (Index r = 0; r < kTileRows; ++r) a[t][r] = _mm512_fmadd_ps(wv[r], xv, a[t][r]);
    }
  }
  for (Index t = 0; t < kTileTokens; ++t)
    for (Index r = 0; r < kTileRows; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(a[t][r]);
}
#else
constexpr Index kTileRows = 2, kTileTokens = 2;
template <class W>
void lanes_tile(const float* x, Index ldx, const W* w, Index k, float* y, Index ldy) {
  __m256 a[kTileTokens][kTileRows][2];
  for (auto& t : a)
    for (auto& r : t) r[0] = r[1] = _mm256_setzero_ps();
  for (Index l = 0; l < k; l += 16) {
    __m256 wl[kTileRows], wh[kTileRows];
    for (Index r = 0; r < kTileRows; ++r) load16(w + r * k + l, wl[r], wh[r]);
    for (Index t = 0; t < kTileTokens; ++t) {
      __m256 xl, xh;
      load16(x + t * ldx + l, xl, xh);
      for (Index r = 0; r < kTileRows; ++r) {
        a[t][r][0] = _mm256_fmadd_ps(wl[r], xl, a[t][r][0]);
        a[t][r][1] = _mm256_fmadd_ps(wh[r], xh, a[t][r][1]);
      }
    }
  }
  for (Index t = 0; t < kTileTokens; ++t)
    for (Index r = 0; r < kTileRows; ++r) y[t * ldy + r] = reduce16(a[t][r][0], a[t][r][1]);
}
#endif
template <class W>
float lanes_1x1(const float* x, const W* w, Index k) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  for (Index l = 0; l < k; l += 16) {
    __m256 wl, wh, xl, xh;
    load16(w + l, wl, wh);
    load16(x + l, xl, xh);
    lo = _mm256_fmadd_ps(wl, xl, lo);
    hi = _mm256_fmadd_ps(wh, xh, hi);
  }
  return reduce16(lo, hi);
}
template <class W>
float vec_dot(const float* x, const W* w, Index k) {
  const Index np = k & ~Index{63};
  __m256 lo[4] = {}, hi[4] = {};
  for (Index i = 0; i < np; i += 64) {
    for (int c = 0; c < 4; ++c) {
      __m256 wl, wh, xl, xh;
      load16(w + i + 16 * c, wl, wh);
      load16(x + i + 16 * c, xl, xh);
      lo[c] = _mm256_fmadd_ps(xl, wl, lo[c]);
      hi[c] = _mm256_fmadd_ps(xh, wh, hi[c]);
    }
  }
  const float r = reduce16(_mm256_add_ps(_mm256_add_ps(lo[0], lo[2]), _mm256_add_ps(lo[1], lo[3])),
                           _mm256_add_ps(_mm256_add_ps(hi[0], hi[2]), _mm256_add_ps(hi[1], hi[3])));
  if constexpr (std::is_same_v<W, std::uint16_t>) {
    double sum = r;
    for (Index i = np; i < k; ++i) sum += static_cast<double>(x[i] * widen(w[i]));
    return static_cast<float>(sum);
  } else {
    float sum = r;
    for (Index i = np; i < k; ++i) sum += x[i] * w[i];  // not contracted (ISO C++: -ffp-contract=off)
    return sum;
  }
}

template <class W>
void ggml_float_product(const float* x, Index n, Index ldx, const W* w, Index rows, Index k, float* y, Index ldy) {
  if (n < 2 || k % 16 != 0) {
#pragma omp parallel for schedule(static) if (rows * k >= kFusedParallelWeights || n >= 2)
    for (Index o = 0; o < rows; ++o) {
      for (Index i = 0; i < n; ++i) y[i * ldy + o] = vec_dot(x + i * ldx, w + o * k, k);
    }
    return;
  }
  // Blocks of kTokenBlock activation rows stay in L2 while every weight row passes (the activations, not the
  // weights, would otherwise be read from memory once per group of weight rows).
  constexpr Index kTokenBlock = 64;
  const Index groups = (rows + kTileRows - 1) / kTileRows;
  for (Index i0 = 0; i0 < n; i0 += kTokenBlock) {
    const Index i1 = std::min(n, i0 + kTokenBlock);
#pragma omp parallel for schedule(static) if (rows * k * (i1 - i0) >= (1 << 16))
    for (Index g = 0; g < groups; ++g) {
      const Index o = g * kTileRows, count = std::min(kTileRows, rows - o);
      // F16 rows widened once per block of activation rows (exactly: the products are the same), not per tile.
      const float* wf = nullptr;
      if constexpr (std::is_same_v<W, std::uint16_t>) {
        thread_local std::vector<float> widened;
        widened.resize(static_cast<std::size_t>(kTileRows * k));
        half_to_float(w + o * k, widened.data(), count * k);
        wf = widened.data();
      } else {
        wf = w + o * k;
      }
      Index i = i0;
      if (count == kTileRows) {
        for (; i + kTileTokens <= i1; i += kTileTokens) lanes_tile(x + i * ldx, ldx, wf, k, y + i * ldy + o, ldy);
      }
      for (; i < i1; ++i) {
        for (Index r = 0; r < count; ++r) y[i * ldy + o + r] = lanes_1x1(x + i * ldx, wf + r * k, k);
      }
    }
  }
}

bool ggml_float_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  if (!W.ggml_rounding) return false;
  if (const float* w = W.f32()) {
    ggml_float_product(x, n, ldx, w, W.rows, W.cols, y, ldy);
    return true;
  }
  if (W.dtype != io::DType::F16) return false;
  ggml_float_product(x, n, ldx, static_cast<const std::uint16_t*>(W.data), W.rows, W.cols, y, ldy);
  return true;
}
#else
bool integer_kernel(const StoredMatrix&) { return false; }
void fused_integer(const float*, Index, Index, const StoredMatrix&, float*, Index) {}
bool ggml_float_product(const float*, Index, Index, const StoredMatrix&, float*, Index) { return false; }
#endif

// The fused product for ggml blocks: each weight row dequantised into a buffer in L1 and dotted with every row.
void fused_blocks(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
#pragma omp parallel if (W.rows * W.cols >= kFusedParallelWeights)
  {
    thread_local std::vector<float> row;
    if (row.size() < static_cast<std::size_t>(W.cols)) row.resize(static_cast<std::size_t>(W.cols));
#pragma omp for schedule(static)
    for (Index o = 0; o < W.rows; ++o) {
      W.rows_to_float(o, 1, row.data());
      for (Index i = 0; i < n; ++i) y[i * ldy + o] = fused_dot(x + i * ldx, row.data(), io::DType::F32, W.cols);
    }
  }
}

}  // namespace

namespace {

// The product itself, x as given (stored_linear rounds it first where llama.cpp does).
void product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy,
             std::vector<float>& scratch) {
  if (ggml_float_product(x, n, ldx, W, y, ldy)) return;  // a GGUF file's F32 or F16 matrix: llama.cpp's sums
  Eigen::Map<const RowMajor, 0, Strided> X(x, n, W.cols, Strided(ldx));
  Eigen::Map<RowMajor, 0, Strided> Y(y, n, W.rows, Strided(ldy));
  if (const float* w = W.f32()) {
    Y.noalias() = X * Eigen::Map<const RowMajor>(w, W.rows, W.cols).transpose();
    return;
  }
  if (n >= kWideRows) {
    const Index chunk = std::max<Index>(kBlockRows, kChunkFloats / std::max<Index>(W.cols, 1));
    const Index rows = std::min(chunk, W.rows);
    if (scratch.size() < static_cast<std::size_t>(rows * W.cols))
      scratch.resize(static_cast<std::size_t>(rows * W.cols));
    for (Index r0 = 0; r0 < W.rows; r0 += rows) {
      const Index count = std::min(rows, W.rows - r0);
      const Index blocks = (count + kBlockRows - 1) / kBlockRows;
#pragma omp parallel for schedule(static) if (count * W.cols >= (1 << 16))
      for (Index b = 0; b < blocks; ++b) {
        const Index b0 = b * kBlockRows;
        W.rows_to_float(r0 + b0, std::min(kBlockRows, count - b0), scratch.data() + b0 * W.cols);
      }
      Y.middleCols(r0, count).noalias() = X * Eigen::Map<const RowMajor>(scratch.data(), count, W.cols).transpose();
    }
    return;
  }
  if (n <= kFusedRows && W.dtype == io::DType::GGML) {
    fused_blocks(x, n, ldx, W, y, ldy);
    return;
  }
  if (n <= kFusedRows) {
    const std::size_t element = io::dtype_size(W.dtype);
    const auto* base = static_cast<const std::byte*>(W.data);
#pragma omp parallel for schedule(static) if (W.rows * W.cols >= kFusedParallelWeights)
    for (Index o = 0; o < W.rows; ++o) {
      const void* row = base + static_cast<std::size_t>(o * W.cols) * element;
      for (Index i = 0; i < n; ++i) y[i * ldy + o] = fused_dot(x + i * ldx, row, W.dtype, W.cols);
    }
    return;
  }
  const Index blocks = (W.rows + kBlockRows - 1) / kBlockRows;
#pragma omp parallel if (W.rows * W.cols >= (1 << 16))
  {
    thread_local std::vector<float> buffer;
    if (buffer.size() < static_cast<std::size_t>(kBlockRows * W.cols)) {
      buffer.resize(static_cast<std::size_t>(kBlockRows * W.cols));
    }
#pragma omp for schedule(static)
    for (Index b = 0; b < blocks; ++b) {
      const Index r0 = b * kBlockRows, count = std::min(kBlockRows, W.rows - r0);
      W.rows_to_float(r0, count, buffer.data());
      Y.middleCols(r0, count).noalias() = X * Eigen::Map<const RowMajor>(buffer.data(), count, W.cols).transpose();
    }
  }
}

}  // namespace

void stored_linear(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy,
                   std::vector<float>& scratch) {
  if (n <= kFusedRows && integer_kernel(W)) {
    fused_integer(x, n, ldx, W, y, ldy);
    return;
  }
  thread_local std::vector<float> rounded;
  if (round_activations(x, n, ldx, W, rounded)) {
    product(rounded.data(), n, W.cols, W, y, ldy, scratch);
    add_q8_1_offsets(x, n, ldx, W, y, ldy);
  } else {
    product(x, n, ldx, W, y, ldy, scratch);
  }
}

}  // namespace attn::models
