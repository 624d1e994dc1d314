// The integer and float kernels of ggml_products.h.
#include "ggml_products.h"

#include "amx_tiles.h"

#include "attn/io/ggml_types.h"
#include "../../io/half.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define ATTN_GGML_KERNELS 1
#endif

namespace attn::models::ggml {

namespace {

#if defined(ATTN_GGML_KERNELS)
// The quantised products: the activations quantised once (Q8_0, Q8_1, Q8_K), then integer products of 32 quants at a
// time (maddubs: unsigned x signed bytes to pairs of int16, madd to int32; or one VNNI instruction), each block's
// eight int32 lanes converted and scaled in float, as ggml's x86 vec_dot does for each type: the same lanes and the
// same float operations in the same order, so the same bits (Q4_K's kernel: the same integers, another float
// order). Q2_K rows llama.cpp does not repack (rows % 8 != 0), without a kernel, take decoder_linear.cpp's float
// product over rounded activations.

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// The sum of four int32 lanes (exact).
int hsum_i32(__m128i v) {
  v = _mm_add_epi32(v, _mm_unpackhi_epi64(v, v));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 1));
  return _mm_cvtsi128_si32(v);
}

// The exact total of eight int32 lanes.
int total_i32(__m256i v) { return hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1))); }

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
// Byte j is 0xFF where bit j of the little-endian 32-bit word at p is set (each byte keeps its own bit of the
// broadcast word).
__m256i bit_bytes(const std::uint8_t* p) {
  std::uint32_t bits;
  std::memcpy(&bits, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
  return _mm256_cmpeq_epi8(_mm256_or_si256(spread, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe)), _mm256_set1_epi64x(-1));
}
__m256i q5_0_quants(const std::uint8_t* b) {
  return _mm256_or_si256(nibbles(b + 6),
                         _mm256_andnot_si256(bit_bytes(b + 2), _mm256_set1_epi8(static_cast<char>(0xF0))));
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

// Q4_K's and Q5_K's eight 6-bit sub-block scales and mins from their 12 bytes at s (ggml's get_scale_min_k4):
// scales and mins 0-3 are the low six bits of bytes 0-3 and 4-7; 4-7 take their low four bits from bytes 8-11's
// nibbles and their top two from the spare top bits of bytes 0-3 (scales) and 4-7 (mins). Four 32-bit words at a
// time, as ggml's vec_dots do it (per super-block and row, this decoding was a sixth of a TinyLlama generation).
struct K4Scales {
  std::uint8_t scale[8], min[8];
};
[[gnu::always_inline]] inline K4Scales k4_scales(const std::uint8_t* s) {
  constexpr std::uint32_t k6 = 0x3f3f3f3f, k4 = 0x0f0f0f0f, k2 = 0x03030303;
  std::uint32_t w[3];
  std::memcpy(w, s, 12);
  const std::uint32_t out[4] = {w[0] & k6, (w[2] & k4) | (((w[0] >> 6) & k2) << 4), w[1] & k6,
                                ((w[2] >> 4) & k4) | (((w[1] >> 6) & k2) << 4)};
  K4Scales k;
  std::memcpy(k.scale, out, 8);
  std::memcpy(k.min, out + 2, 8);
  return k;
}

// sum_j min_j (the activations' sum over sub-block j), from a Q8_K block's sums of 16 (at a + 260): exact integers.
[[gnu::always_inline]] inline int k4_min_sum(const std::uint8_t* min, const std::uint8_t* a) {
  const __m256i sums16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 260));
  const __m128i pairs = _mm_hadd_epi16(_mm256_castsi256_si128(sums16), _mm256_extracti128_si256(sums16, 1));
  return hsum_i32(_mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(min))), pairs));
}

// One Q4_K super-block's quants (w: its 144 bytes) times a Q8_K block's (a: its 292 bytes), each sub-block's
// products times its 6-bit scale: eight int32 lanes whose total is the exact sum (ggml's vec_dot lanes).
[[gnu::always_inline]] inline __m256i k4_quant_lanes(const std::uint8_t* w, const std::uint8_t* a, const K4Scales& k) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  const std::uint8_t* q4 = w + 16;
  const std::uint8_t* q8 = a + 4;
  __m256i sumi = _mm256_setzero_si256();
  for (int j = 0; j < 4; ++j) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q4 + 32 * j));
    const __m256i lo = _mm256_and_si256(bits, low), hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low);
    const __m256i a_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * j));
    const __m256i a_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * j + 32));
    sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(lo, a_lo), _mm256_set1_epi16(k.scale[2 * j])));
    sumi = _mm256_add_epi32(sumi,
                            _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a_hi), _mm256_set1_epi16(k.scale[2 * j + 1])));
  }
  return sumi;
}

// What both Q4_K orders take of a super-block and its Q8_K block: the activations' scale, sum_j min_j (their sum over
// sub-block j) and the scaled quant products' lanes.
struct K4Block {
  float da;
  int min_sum;
  __m256i lanes;
};
[[gnu::always_inline]] inline K4Block k4_block(const std::uint8_t* w, const std::uint8_t* a) {
  K4Block b;
  std::memcpy(&b.da, a, 4);
  const K4Scales k = k4_scales(w + 4);
  b.min_sum = k4_min_sum(k.min, a);
  b.lanes = k4_quant_lanes(w, a, k);
  return b;
}

// A Q4_K row (144-byte super-blocks: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles)
// with a Q8_K row (292-byte blocks: float d, 256 int8, 16 int16 sums of 16).
float dot_q4_k(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.0f;
  for (Index b = 0; b < blocks; ++b, w += 144, a += 292) {
    const K4Block blk = k4_block(w, a);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(blk.da * half_at(w)), _mm256_cvtepi32_ps(blk.lanes), acc);
    mins += blk.da * half_at(w + 2) * static_cast<float>(blk.min_sum);
  }
  return hsum(acc) - mins;
}

// Q4_K rows as llama.cpp's x86 build multiplies them once repacked eight at a time (ggml_gemv_q4_K_8x8_q8_K, and
// ggml_gemm_q4_K_8x8_q8_K in the same order): per super-block the exact integer sums, of the quants times their
// sub-block scales and of the activations' sub-block sums times the mins, each converted and fused-multiply-added
// with d_w d_a (dmin_w d_a) into its own float, super-block after super-block; the mins' float subtracted at the end
// (no lanes to reduce). Used for the rows a product computes one at a time (generation; the row whose logits are
// read); a batch is q4_k_batch's, sixteen rows at a time, the same outputs.
//
// llama.cpp's AMX build (ggml-cpu/amx/mmq.cpp: its tiles' acc_C for a batch, tinygemm_kernel_vnni for one row) takes
// the same two integers per super-block into one float: the quants' term fused-multiply-added, then the mins' term
// fused-multiply-subtracted (kAmx).
template <bool kAmx>
float dot_q4_k_sums(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  float acc = 0.0f, mins = 0.0f;
  for (Index b = 0; b < blocks; ++b, w += 144, a += 292) {
    const K4Block blk = k4_block(w, a);
    const int total =
        hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(blk.lanes), _mm256_extracti128_si256(blk.lanes, 1)));
    acc = std::fma(static_cast<float>(total), half_at(w) * blk.da, acc);
    if constexpr (kAmx) {
      acc = std::fma(-static_cast<float>(blk.min_sum), half_at(w + 2) * blk.da, acc);
    } else {
      mins = std::fma(static_cast<float>(blk.min_sum), half_at(w + 2) * blk.da, mins);
    }
  }
  return acc - mins;
}

// A Q6_K row (210-byte super-blocks: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 group scales, f16 d)
// with a Q8_K row, summed as ggml's x86 vec_dot sums it: per super-block eight int32 lanes (lane k holds bytes 4k to
// 4k + 3 of each 32-quant chunk times their group's scale, less 32 x the scaled activation sums of groups 2k and
// 2k + 1: the quants are stored + 32), converted and fused-multiply-added with d_a d_w; the lanes reduced at the end.
// llama.cpp's AMX build (kAmx) takes each super-block's exact total instead, fused-multiply-added into one float.
template <bool kAmx>
float dot_q6_k(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  __m256 acc = _mm256_setzero_ps();
  float amx = 0.0f;
  const __m256i m15 = _mm256_set1_epi8(15);
  auto load = [](const std::uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  for (Index b = 0; b < blocks; ++b, w += 210, a += 292) {
    float da;
    std::memcpy(&da, a, 4);
    const float d = da * half_at(w + 208);
    const auto* scales = reinterpret_cast<const std::int8_t*>(w + 192);
    const __m256i offsets = _mm256_slli_epi32(
        _mm256_madd_epi16(load(a + 260),
                          _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)))),
        5);
    __m256i sumi = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half) {
      const __m256i lo0 = load(w + 64 * half), lo1 = load(w + 64 * half + 32), hi = load(w + 128 + 32 * half);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(lo0, m15), _mm256_slli_epi16(_mm256_and_si256(hi, _mm256_set1_epi8(3)), 4)),
          _mm256_or_si256(_mm256_and_si256(lo1, m15), _mm256_slli_epi16(_mm256_and_si256(hi, _mm256_set1_epi8(12)), 2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lo0, 4), m15), _mm256_and_si256(hi, _mm256_set1_epi8(48))),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lo1, 4), m15),
                          _mm256_srli_epi16(_mm256_and_si256(hi, _mm256_set1_epi8(static_cast<char>(0xC0))), 2))};
      for (int c = 0; c < 4; ++c) {
        const int g = 8 * half + 2 * c;  // the chunk's two groups of 16
        const __m256i sc = _mm256_set_m128i(_mm_set1_epi16(scales[g + 1]), _mm_set1_epi16(scales[g]));
        const __m256i p = _mm256_maddubs_epi16(q[c], load(a + 4 + 128 * half + 32 * c));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(sc, p));
      }
    }
    sumi = _mm256_sub_epi32(sumi, offsets);
    if constexpr (kAmx) {
      amx = std::fma(static_cast<float>(total_i32(sumi)), d, amx);
    } else {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
  }
  return kAmx ? amx : hsum(acc);
}

// A Q3_K row (110-byte super-blocks: 32 bytes of high bits, 64 of low bit pairs, 12 bytes of 6-bit scales stored
// + 32, f16 d) with a Q8_K row, as ggml's x86 vec_dot: per super-block eight int32 lanes (each 32-quant chunk's
// low bit pairs dotted with the activations, less 4 x the activations where the high bit is clear, in int16 pairs,
// times the scales of its two groups of 16), converted and fused-multiply-added with d_a d_w; reduced at the end.
float dot_q3_k(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
  auto load = [](const std::uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  for (Index b = 0; b < blocks; ++b, w += 110, a += 292) {
    float da;
    std::memcpy(&da, a, 4);
    const float d = da * half_at(w + 108);
    // The sixteen scales: low four bits from bytes 0-7's nibbles, top two from byte 8 + i % 4's bit pair i / 4.
    constexpr std::uint32_t k4 = 0x0f0f0f0f, k2 = 0x03030303;
    std::uint32_t aux[3];
    std::memcpy(aux, w + 96, 12);
    const std::uint32_t packed[4] = {(aux[0] & k4) | ((aux[2] & k2) << 4), (aux[1] & k4) | (((aux[2] >> 2) & k2) << 4),
                                     ((aux[0] >> 4) & k4) | (((aux[2] >> 4) & k2) << 4),
                                     ((aux[1] >> 4) & k4) | (((aux[2] >> 6) & k2) << 4)};
    std::uint8_t stored[16];
    std::memcpy(stored, packed, 16);
    const __m256i hbits = load(w);
    __m256i sumi = _mm256_setzero_si256();
    for (int j = 0; j < 2; ++j) {
      const __m256i bits = load(w + 32 + 32 * j);
      for (int k = 0; k < 4; ++k) {
        const int bit = 4 * j + k, g = 8 * j + 2 * k;  // the high bit's index; the chunk's first group of 16
        const __m256i low = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), m3);
        const __m256i high =
            _mm256_slli_epi16(_mm256_srli_epi16(_mm256_andnot_si256(hbits, _mm256_slli_epi16(one, bit)), bit), 2);
        const __m256i q8 = load(a + 4 + 128 * j + 32 * k);
        const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(low, q8), _mm256_maddubs_epi16(high, q8));
        const __m256i sc = _mm256_set_m128i(_mm_set1_epi16(static_cast<std::int16_t>(stored[g + 1] - 32)),
                                            _mm_set1_epi16(static_cast<std::int16_t>(stored[g] - 32)));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(sc, p));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum(acc);
}

// Eight int32 sums of four unsigned x signed byte products each: one VNNI instruction where the CPU has it, else
// maddubs (pairs to int16, which cannot saturate: |w| <= 127 and |a| <= 127) and madd; the same integers either way.
inline __m256i unsigned_dot(__m256i u, __m256i s) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

// Q4_0 rows as llama.cpp's x86 build multiplies them once repacked eight at a time (ggml_gemv_q4_0_8x8_q8_0 and
// ggml_gemm_q4_0_8x8_q8_0, one row or a batch): each block's exact integer dot converted and fused-multiply-added
// with d_w d_a into one float per output, block after block (no lanes to reduce). Its AMX build sums Q4_0 and Q8_0
// rows so too (ggml-cpu/amx/mmq.cpp: acc_C after each tile's block, tinygemm_kernel_vnni for one row).
template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
float dot_block_sums(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  float acc = 0.0f;
  for (Index b = 0; b < blocks; ++b, w += kBytes, a += 34) {
    const __m256i qw = Quants(w);
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 2));
    const __m256i lanes = unsigned_dot(_mm256_sign_epi8(qw, qw), _mm256_sign_epi8(qa, qw));
    const int sum = hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1)));
    acc = std::fma(static_cast<float>(sum), half_at(w) * half_at(a), acc);
  }
  return acc;
}

// Q2_K rows as llama.cpp's x86 build multiplies them once repacked eight at a time (ggml_gemv_q2_K_8x8_q8_K, its
// gemm alike): per super-block (84 bytes: 16 scale|min nibble pairs, 64 bytes of 2-bit quants, f16 d, f16 dmin) the
// exact sums of each 16-element sub-block's quants times the activations times its 4-bit scale, and of its 4-bit
// min times the activations' sum of 16, each fused-multiply-added with d_w d_a (dmin_w d_a) into its own float; the
// mins' float subtracted at the end. Quant byte 32h + l holds, at bits 2j, element 128h + 32j + l.
float dot_q2_k_repacked(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  float acc = 0.0f, mins = 0.0f;
  const __m256i m3 = _mm256_set1_epi8(3);
  for (Index b = 0; b < blocks; ++b, w += 84, a += 292) {
    float da;
    std::memcpy(&da, a, 4);
    __m256i lanes = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 + 32 * h));
      for (int j = 0; j < 4; ++j) {
        const int sub = 8 * h + 2 * j;  // elements 0-15 of the 32: sub-block sub, 16-31: sub + 1
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * j), m3);
        const __m256i act = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 4 + 128 * h + 32 * j));
        const __m256i scale = _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(w[sub + 1] & 15)),
                                               _mm_set1_epi16(static_cast<short>(w[sub] & 15)));
        lanes = _mm256_add_epi32(lanes, _mm256_madd_epi16(_mm256_maddubs_epi16(q, act), scale));
      }
    }
    const __m256i mins16 = _mm256_cvtepu8_epi16(
        _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)), 4), _mm_set1_epi8(15)));
    const int min_sum =
        total_i32(_mm256_madd_epi16(mins16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 260))));
    acc = std::fma(static_cast<float>(total_i32(lanes)), half_at(w + 80) * da, acc);
    mins = std::fma(static_cast<float>(min_sum), half_at(w + 82) * da, mins);
  }
  return acc - mins;
}

// Whether llama.cpp's x86 build holds W's Q4_0 (or Q4_K) rows repacked (its optimal repack type needs rows % 8 == 0).
// (Not where its AMX buffer holds them: that buffer comes first.)
bool q4_0_repacked(const StoredMatrix& W) { return W.ggml_repacked && !W.ggml_amx && W.rows % 8 == 0; }
bool q4_k_repacked(const StoredMatrix& W) { return W.ggml_repacked && !W.ggml_amx && W.rows % 8 == 0; }
bool q2_k_repacked(const StoredMatrix& W) { return W.ggml_repacked && W.rows % 8 == 0; }

// ggml's scalar sum of a block term, s + a b, as the x86 build compiles it: GCC's default fp-contract for C makes
// it one fused multiply-add (objdump of node-llama-cpp's libggml-cpu-zen4.so: one vfmadd..ss in each of the Q4_1,
// Q5_1 and Q5_K vec_dots).
inline float offset_sum(float a, float b, float s) { return std::fma(a, b, s); }

// Q4_1 and Q5_1 rows (d, m, [qh,] nibbles) with a Q8_1 row (36-byte blocks: d, s = d sum q, 32 quants), as ggml's
// x86 vec_dot: each block's unsigned quants dotted with the activations' (eight int32 lanes) and fused-multiply-added
// with d_w d_a; the offsets m_w s_a summed apart, in block order, and added to the reduced lanes at the end.
template <bool kFifthBit>
float dot_q4_1_q5_1(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  constexpr std::size_t kBytes = kFifthBit ? 24 : 20;
  __m256 acc = _mm256_setzero_ps();
  float offsets = 0.0f;
  for (Index b = 0; b < blocks; ++b, w += kBytes, a += 36) {
    offsets = offset_sum(half_at(w + 2), half_at(a + 2), offsets);
    __m256i qw = nibbles(w + (kFifthBit ? 8 : 4));
    if constexpr (kFifthBit) qw = _mm256_or_si256(qw, _mm256_and_si256(bit_bytes(w + 4), _mm256_set1_epi8(0x10)));
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 4));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w) * half_at(a)), _mm256_cvtepi32_ps(unsigned_dot(qw, qa)), acc);
  }
  return hsum(acc) + offsets;
}

// Q4_1 rows as llama.cpp's AMX build multiplies them (acc_C for a tile's block, tinygemm_kernel_vnni for one row):
// each block's exact integer dot fused-multiply-added with d_w d_a, then m_w s_a fused-multiply-added, into one float.
float dot_q4_1_amx(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  float acc = 0.0f;
  for (Index b = 0; b < blocks; ++b, w += 20, a += 36) {
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 4));
    acc = std::fma(static_cast<float>(total_i32(unsigned_dot(nibbles(w + 4), qa))), half_at(w) * half_at(a), acc);
    acc = std::fma(half_at(w + 2), half_at(a + 2), acc);
  }
  return acc;
}

// A Q5_K row (176-byte super-blocks: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 32 bytes of fifth bits,
// 128 of nibbles) with a Q8_K row, as ggml's x86 vec_dot: per super-block eight int32 lanes (sub-block s's 32
// quants, nibble + 16 x bit s of qh, times its scale), converted and fused-multiply-added with d_a d_w; the mins'
// term -d_a dmin sum_s m_s (sum of sub-block s's activations) summed apart and added at the end.
// llama.cpp's AMX build (kAmx) takes each super-block's two exact integers into one float, as for Q4_K
// (dot_q4_k_sums).
template <bool kAmx>
float dot_q5_k(const std::uint8_t* w, const std::uint8_t* a, Index blocks) {
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.0f, amx = 0.0f;
  const __m256i low = _mm256_set1_epi8(0x0F);
  auto load = [](const std::uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  for (Index b = 0; b < blocks; ++b, w += 176, a += 292) {
    float da;
    std::memcpy(&da, a, 4);
    const float d = da * half_at(w), dmin = -da * half_at(w + 2);
    const K4Scales k = k4_scales(w + 4);
    const std::uint8_t* scale = k.scale;
    const int min_sum = k4_min_sum(k.min, a);
    if constexpr (!kAmx) mins = offset_sum(dmin, static_cast<float>(min_sum), mins);
    const __m256i qh = load(w + 16);
    __m256i sumi = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i bits = load(w + 48 + 32 * j);
      for (int half = 0; half < 2; ++half) {
        const int sub = 2 * j + half;
        const __m256i fifth = _mm256_and_si256(qh, _mm256_set1_epi8(static_cast<char>(1 << sub)));
        const __m256i q = _mm256_add_epi8(_mm256_and_si256(half ? _mm256_srli_epi16(bits, 4) : bits, low),
                                          _mm256_slli_epi16(_mm256_srli_epi16(fifth, sub), 4));
        const __m256i p = _mm256_maddubs_epi16(q, load(a + 4 + 64 * j + 32 * half));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_set1_epi16(scale[sub]), p));
      }
    }
    if constexpr (kAmx) {
      amx = std::fma(static_cast<float>(total_i32(sumi)), d, amx);
      amx = std::fma(static_cast<float>(min_sum), dmin, amx);
    } else {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
  }
  return kAmx ? amx : hsum(acc) + mins;
}

// tinyBLAS_Q0 (llamafile_sgemm), which llama.cpp's x86 build uses for a batch of Q8_0 and Q5_0 products, computes each
// output exactly as dot_blocks32 does (one block's int32 lanes converted, fused-multiply-added with the two scales'
// float product, the 8 lanes reduced at the end); it only shares loads between a tile of outputs. So does this: kRows
// weight rows times kTokens activation rows, each weight block's quants unpacked once for the tile.
constexpr int kQ0Rows = 4, kQ0Tokens = 3;

template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes, int kRows, int kTokens>
void tile_blocks32(const std::uint8_t* w, std::size_t w_row, const std::uint8_t* a, std::size_t a_row, Index blocks,
                   float* y, Index ldy) {
  __m256 acc[kTokens][kRows] = {};
  for (Index b = 0; b < blocks; ++b) {
    __m256i qw[kRows], mag[kRows];
    float dw[kRows];
    for (int r = 0; r < kRows; ++r) {
      const std::uint8_t* blk = w + r * w_row + static_cast<std::size_t>(b) * kBytes;
      qw[r] = Quants(blk);
      mag[r] = _mm256_sign_epi8(qw[r], qw[r]);
      dw[r] = half_at(blk);
    }
    for (int t = 0; t < kTokens; ++t) {
      const std::uint8_t* blk = a + t * a_row + static_cast<std::size_t>(b) * 34;
      const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      const float da = half_at(blk);
      for (int r = 0; r < kRows; ++r) {
        const __m256i p = unsigned_dot(mag[r], _mm256_sign_epi8(qa, qw[r]));
        acc[t][r] = _mm256_fmadd_ps(_mm256_set1_ps(dw[r] * da), _mm256_cvtepi32_ps(p), acc[t][r]);
      }
    }
  }
  for (int t = 0; t < kTokens; ++t) {
    for (int r = 0; r < kRows; ++r) y[t * ldy + r] = hsum(acc[t][r]);
  }
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
// The same outputs, two activation rows to a 512-bit register (rows 2p and 2p + 1 in its halves), without the sign
// trick (AVX-512 has no vpsignb): the activations' quants are stored offset by 128 (unsigned, q8_offset) and each
// weight block's eight lane sums of 128 w subtracted as the dot's starting value, which leaves every int32 lane
// exactly the signed sum that tinyBLAS converts, so every float operation and its operands are tinyBLAS's.
constexpr int kQ0Pairs = 3;

// A weight block's operands for it, unpacked once per span of activation rows (q0_prepare), not once per tile: the
// quants broadcast to both halves and the dot's starting value; its scale apart (q0_prepare's d).
struct Q0Block {
  __m512i quants, start;
};

// Blocks [0, blocks) of the `rows` weight rows at w (w_row bytes apart) as tile_pairs32 reads them: block b of row r
// at out[b * rows + r], its scale at d[b * rows + r].
template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
void q0_prepare(const std::uint8_t* w, std::size_t w_row, Index rows, Index blocks, Q0Block* out, float* d) {
  const __m256i k128 = _mm256_set1_epi8(static_cast<char>(0x80));
  for (Index b = 0; b < blocks; ++b) {
    for (Index r = 0; r < rows; ++r) {
      const std::uint8_t* blk = w + static_cast<std::size_t>(r) * w_row + static_cast<std::size_t>(b) * kBytes;
      const __m256i q = Quants(blk);
      const __m256i offset = _mm256_dpbusd_epi32(_mm256_setzero_si256(), k128, q);
      out[b * rows + r] = {_mm512_broadcast_i64x4(q),
                           _mm512_broadcast_i64x4(_mm256_sub_epi32(_mm256_setzero_si256(), offset))};
      d[b * rows + r] = half_at(blk);
    }
  }
}

// a[i] and y[i] are activation row i's blocks and output row (y[i] null: computed, not stored); w and d the prepared
// blocks of `stride` rows (kRows of them from w).
template <int kRows, int kPairs>
void tile_pairs32(const Q0Block* w, const float* d, Index stride, const std::uint8_t* const* a, float* const* y,
                  Index blocks) {
  __m512 acc[kPairs][kRows];
  for (auto& pair : acc) {
    for (auto& v : pair) v = _mm512_setzero_ps();
  }
  for (Index b = 0; b < blocks; ++b) {
    const Q0Block* blk = w + b * stride;
    for (int p = 0; p < kPairs; ++p) {
      const std::uint8_t* lo = a[2 * p] + static_cast<std::size_t>(b) * 34;
      const std::uint8_t* hi = a[2 * p + 1] + static_cast<std::size_t>(b) * 34;
      const __m512i qa =
          _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo + 2))),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi + 2)), 1);
      const __m512 da =
          _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(half_at(lo)))),
                                              _mm256_castps_pd(_mm256_set1_ps(half_at(hi))), 1));
      for (int r = 0; r < kRows; ++r) {
        const __m512i sums = _mm512_dpbusd_epi32(blk[r].start, qa, blk[r].quants);
        acc[p][r] =
            _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(d[b * stride + r]), da), _mm512_cvtepi32_ps(sums), acc[p][r]);
      }
    }
  }
  for (int p = 0; p < kPairs; ++p) {
    for (int r = 0; r < kRows; ++r) {
      const __m512d v = _mm512_castps_pd(acc[p][r]);
      if (y[2 * p]) y[2 * p][r] = hsum(_mm256_castpd_ps(_mm512_castpd512_pd256(v)));
      if (y[2 * p + 1]) y[2 * p + 1][r] = hsum(_mm256_castpd_ps(_mm512_extractf64x4_pd(v, 1)));
    }
  }
}

// Q8_0 activation rows (34-byte blocks) with their quants offset by 128, as tile_pairs32 reads them.
void q8_offset(std::uint8_t* blocks, std::size_t count) {
  for (std::size_t b = 0; b < count; ++b) {
    std::uint8_t* q = blocks + b * 34 + 2;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                        _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)),
                                         _mm256_set1_epi8(static_cast<char>(0x80))));
  }
}

// A batch of Q4_K rows in llama.cpp's repacked order (ggml_gemm_q4_K_8x8_q8_K sums each output as
// dot_q4_k_sums does): sixteen weight rows at a time in the 32-bit lanes of a 512-bit register, as llama.cpp's
// repacking interleaves them, so one VNNI instruction multiplies four elements of sixteen rows by one token's four
// activations (broadcast) and each sub-block's sums are scaled per lane, with no horizontal sum. The integers are
// exact whatever their order; the float operations per output are dot_q4_k_sums', super-block after
// super-block.
constexpr int kK4Lanes = 16, kK4Tokens = 8;

// One super-block of sixteen rows (row r in lane r; rows past the matrix repeat its last).
struct K4Unpacked {
  __m512i quants[64];  // element group g: row r's quants of elements 4g to 4g + 3 in lane r (unsigned bytes)
  __m512i scale[8];    // sub-block j's 6-bit scale
  __m512i mins[4];     // the mins of sub-blocks 2p and 2p + 1 as two int16
  __m512 d, dmin;
};

// Super-block b of the rows at w (w_row bytes apart, `rows` of them, at most kK4Lanes).
void k4_unpack(const std::uint8_t* w, std::size_t w_row, Index rows, Index b, K4Unpacked& u) {
  alignas(64) std::int32_t offset[kK4Lanes], scale[8][kK4Lanes], mins[4][kK4Lanes];
  alignas(64) float d[kK4Lanes], dmin[kK4Lanes];
  const std::uint8_t* blocks = w + static_cast<std::size_t>(b) * 144;
  for (int r = 0; r < kK4Lanes; ++r) {
    offset[r] = static_cast<std::int32_t>(static_cast<std::size_t>(std::min<Index>(r, rows - 1)) * w_row);
    const std::uint8_t* blk = blocks + offset[r];
    d[r] = half_at(blk);
    dmin[r] = half_at(blk + 2);
    const K4Scales k = k4_scales(blk + 4);
    for (int j = 0; j < 8; ++j) scale[j][r] = k.scale[j];
    for (int p = 0; p < 4; ++p) mins[p][r] = k.min[2 * p] | (k.min[2 * p + 1] << 16);
  }
  const __m512i index = _mm512_load_si512(offset), low = _mm512_set1_epi8(0x0F);
  // Byte 4q of the quants holds elements 64 (q / 8) + 4 (q % 8) (low nibbles) and 32 further on (high nibbles).
  for (int q = 0; q < 32; ++q) {
    const __m512i v = _mm512_i32gather_epi32(index, blocks + 16 + 4 * q, 1);
    const int g = 16 * (q / 8) + q % 8;
    u.quants[g] = _mm512_and_si512(v, low);
    u.quants[g + 8] = _mm512_and_si512(_mm512_srli_epi32(v, 4), low);
  }
  for (int j = 0; j < 8; ++j) u.scale[j] = _mm512_load_si512(scale[j]);
  for (int p = 0; p < 4; ++p) u.mins[p] = _mm512_load_si512(mins[p]);
  u.d = _mm512_load_ps(d);
  u.dmin = _mm512_load_ps(dmin);
}

// kTokens activation rows' Q8_K blocks (a[t]; pairs[t]: their four sums of sub-blocks 2p and 2p + 1 as int16
// pairs) times the unpacked super-block, fused-multiply-added into sixteen outputs each (acc[t], mins[t]).
template <int kTokens>
void k4_tokens(const K4Unpacked& u, const std::uint8_t* const* a, const std::int32_t* const* pairs, __m512* acc,
               __m512* mins, bool amx) {
  __m512i total[kTokens];
  for (auto& v : total) v = _mm512_setzero_si512();
  for (int j = 0; j < 8; ++j) {
    __m512i part[kTokens];
    for (auto& v : part) v = _mm512_setzero_si512();
    for (int k = 0; k < 8; ++k) {
      const __m512i q = u.quants[8 * j + k];
      for (int t = 0; t < kTokens; ++t) {
        std::int32_t four;
        std::memcpy(&four, a[t] + 4 + 32 * j + 4 * k, 4);
        part[t] = _mm512_dpbusd_epi32(part[t], q, _mm512_set1_epi32(four));
      }
    }
    for (int t = 0; t < kTokens; ++t) total[t] = _mm512_add_epi32(total[t], _mm512_mullo_epi32(part[t], u.scale[j]));
  }
  for (int t = 0; t < kTokens; ++t) {
    __m512i min_sum = _mm512_madd_epi16(u.mins[0], _mm512_set1_epi32(pairs[t][0]));
    for (int p = 1; p < 4; ++p) {
      min_sum = _mm512_add_epi32(min_sum, _mm512_madd_epi16(u.mins[p], _mm512_set1_epi32(pairs[t][p])));
    }
    float da;
    std::memcpy(&da, a[t], 4);
    const __m512 scale = _mm512_set1_ps(da);
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total[t]), _mm512_mul_ps(u.d, scale), acc[t]);
    if (amx) {
      acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(min_sum), _mm512_mul_ps(u.dmin, scale), acc[t]);
    } else {
      mins[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(min_sum), _mm512_mul_ps(u.dmin, scale), mins[t]);
    }
  }
}
#endif

using RowDot = float (*)(const std::uint8_t*, const std::uint8_t*, Index);

// W's integer kernel and the activations' type, or nullptr.
RowDot integer_dot(const StoredMatrix& W, io::GgmlType& activations) {
  if (W.dtype != io::DType::GGML || !W.ggml_rounding) return nullptr;
  activations = io::GgmlType::Q8_0;
  switch (static_cast<io::GgmlType>(W.ggml_type)) {
    case io::GgmlType::Q8_0: return W.ggml_amx ? dot_block_sums<q8_0_quants, 34> : dot_blocks32<q8_0_quants, 34>;
    case io::GgmlType::Q4_0:
      return q4_0_repacked(W) || W.ggml_amx ? dot_block_sums<q4_0_quants, 18> : dot_blocks32<q4_0_quants, 18>;
    case io::GgmlType::Q5_0: return dot_blocks32<q5_0_quants, 22>;
    case io::GgmlType::Q4_K:
      activations = io::GgmlType::Q8_K;
      return W.ggml_amx ? dot_q4_k_sums<true> : q4_k_repacked(W) ? dot_q4_k_sums<false> : dot_q4_k;
    case io::GgmlType::Q6_K: activations = io::GgmlType::Q8_K; return W.ggml_amx ? dot_q6_k<true> : dot_q6_k<false>;
    case io::GgmlType::Q3_K: activations = io::GgmlType::Q8_K; return dot_q3_k;
    case io::GgmlType::Q2_K: activations = io::GgmlType::Q8_K; return q2_k_repacked(W) ? dot_q2_k_repacked : nullptr;
    case io::GgmlType::Q5_K: activations = io::GgmlType::Q8_K; return W.ggml_amx ? dot_q5_k<true> : dot_q5_k<false>;
    case io::GgmlType::Q4_1: activations = io::GgmlType::Q8_1; return W.ggml_amx ? dot_q4_1_amx : dot_q4_1_q5_1<false>;
    case io::GgmlType::Q5_1: activations = io::GgmlType::Q8_1; return dot_q4_1_q5_1<true>;
    default: return nullptr;
  }
}

bool integer_kernel(const StoredMatrix& W) {
  io::GgmlType unused;
  return integer_dot(W, unused) != nullptr;
}

// Bytes per row of `cols` activations quantised to `act`, and blocks per row.
std::size_t act_row_bytes(io::GgmlType act, Index cols) {
  return static_cast<std::size_t>(*io::ggml_bytes(static_cast<std::uint32_t>(act), cols));
}
Index act_blocks(io::GgmlType act, Index cols) { return cols / (act == io::GgmlType::Q8_K ? 256 : 32); }

// x's n rows (stride ldx, `cols` values) quantised as ggml quantises a product's activations (`act`), each row
// act_row_bytes long; with `offset` (Q8_0 only) the quants stored + 128, as tile_pairs32 reads them. The rows live
// in the calling thread's buffer until its next call.
const std::uint8_t* quantised_rows(io::GgmlType act, const float* x, Index n, Index ldx, Index cols, bool offset) {
  const std::size_t row_bytes = act_row_bytes(act, cols);
  thread_local std::vector<std::byte> quantised;
  quantised.resize(static_cast<std::size_t>(n) * row_bytes);
  std::byte* const out = quantised.data();  // the parallel loop uses the pointer: quantised is this thread's
#pragma omp parallel for schedule(static) if (n * cols >= (1 << 16))
  for (Index i = 0; i < n; ++i) {
    std::byte* row = out + static_cast<std::size_t>(i) * row_bytes;
    io::ggml_quantize_activations(act, {x + i * ldx, static_cast<std::size_t>(cols)}, {row, row_bytes});
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
    if (offset) q8_offset(reinterpret_cast<std::uint8_t*>(row), static_cast<std::size_t>(act_blocks(act, cols)));
#endif
  }
  (void)offset;
  return reinterpret_cast<const std::uint8_t*>(out);
}

// Four rows of 32-element blocks (Quants) times one Q8_0 activation row (a) in dot_block_sums' order: each block's
// four exact integer dots reduced together and fused-multiply-added with their d_w d_a, four outputs at a time (one
// row at a time, the horizontal sum per block and row was a fifth of a generated token), the next rows prefetched.
template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
void block_sums_rows4(const std::uint8_t* w, std::size_t w_row, const std::uint8_t* a, Index blocks, float* y) {
  __m128 acc = _mm_setzero_ps();
  for (Index b = 0; b < blocks; ++b, a += 34) {
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 2));
    __m256i lanes[4];
    alignas(16) float dw[4];
    for (int r = 0; r < 4; ++r) {
      const std::uint8_t* blk = w + static_cast<std::size_t>(r) * w_row + static_cast<std::size_t>(b) * kBytes;
      prefetch_bytes(blk + 4 * w_row, kBytes);
      const __m256i qw = Quants(blk);
      lanes[r] = unsigned_dot(_mm256_sign_epi8(qw, qw), _mm256_sign_epi8(qa, qw));
      dw[r] = half_at(blk);
    }
    const __m256i sums =
        _mm256_hadd_epi32(_mm256_hadd_epi32(lanes[0], lanes[1]), _mm256_hadd_epi32(lanes[2], lanes[3]));
    const __m128i total = _mm_add_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(total), _mm_mul_ps(_mm_load_ps(dw), _mm_set1_ps(half_at(a))), acc);
  }
  _mm_storeu_ps(y, acc);
}

// Up to kFusedRows activation rows times a Q8_0 or Q4_0 matrix llama.cpp's AMX buffer holds (rows a multiple of 32),
// four weight rows at a time (block_sums_rows4), the rows shared among the threads as fused_integer shares them.
template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
void fused_block_sums(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  const std::size_t act_row = act_row_bytes(io::GgmlType::Q8_0, W.cols);
  const auto w_row = static_cast<std::size_t>(*io::ggml_bytes(W.ggml_type, W.cols));
  const std::uint8_t* acts = quantised_rows(io::GgmlType::Q8_0, x, n, ldx, W.cols, false);
  const auto* base = static_cast<const std::uint8_t*>(W.data);
  const Index blocks = W.cols / 32;
#pragma omp parallel for schedule(static) if (W.rows * W.cols >= kFusedParallelWeights)
  for (Index g = 0; g < W.rows / 4; ++g) {
    for (Index i = 0; i < n; ++i) {
      float out[4];
      block_sums_rows4<Quants, kBytes>(base + static_cast<std::size_t>(4 * g) * w_row, w_row,
                                       acts + static_cast<std::size_t>(i) * act_row, blocks, out);
      std::copy(out, out + 4, y + i * ldy + 4 * g);
    }
  }
}

void fused_integer(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  io::GgmlType act;
  const RowDot dot = integer_dot(W, act);
  const std::size_t act_row = act_row_bytes(act, W.cols);
  const auto w_row = static_cast<std::size_t>(*io::ggml_bytes(W.ggml_type, W.cols));
  const std::uint8_t* acts = quantised_rows(act, x, n, ldx, W.cols, false);
  const auto* base = static_cast<const std::uint8_t*>(W.data);
  const Index blocks = act_blocks(act, W.cols);
#pragma omp parallel for schedule(static) if (W.rows * W.cols >= kFusedParallelWeights)
  for (Index o = 0; o < W.rows; ++o) {
    const std::uint8_t* row = base + static_cast<std::size_t>(o) * w_row;
    if (o + kFusedPrefetchRows < W.rows) prefetch_bytes(row + kFusedPrefetchRows * w_row, w_row);
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
constexpr Index kTileRows = 4, kTileTokens = 6;
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
// Four weight rows (k apart) times one activation row, each output lanes_1x1's (its own 16 lanes, the same fused
// multiply-adds in the same order), four chains at once (one at a time, each add waited on the one before).
template <class W>
void lanes_4x1(const float* x, const W* w, Index k, float* y) {
  __m256 lo[4], hi[4];
  for (int r = 0; r < 4; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
  for (Index l = 0; l < k; l += 16) {
    __m256 xl, xh;
    load16(x + l, xl, xh);
    for (int r = 0; r < 4; ++r) {
      __m256 wl, wh;
      load16(w + r * k + l, wl, wh);
      lo[r] = _mm256_fmadd_ps(wl, xl, lo[r]);
      hi[r] = _mm256_fmadd_ps(wh, xh, hi[r]);
    }
  }
  for (int r = 0; r < 4; ++r) y[r] = reduce16(lo[r], hi[r]);
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
    // ggml's `sumf += x[i]*y[i]` as GCC compiles it in llama.cpp's AVX-512 builds (its zen4 and sapphirerapids
    // libraries give the same bits): the products 16 at a time, then 8, each rounded and added in order; the last
    // fewer than 8 fused multiply-adds. Written out, since this compiler vectorises the loop by the CPU's tuning
    // (8 and 4 at a time for an Intel Xeon: another sum; stories260K's 172-wide products showed it).
    float sum = r;
    Index i = np;
    auto add_rounded = [&](const __m256 products) {
      alignas(32) float p[8];
      _mm256_store_ps(p, products);
      for (const float v : p) sum += v;
    };
    for (; k - i >= 16; i += 16) {
      add_rounded(_mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(w + i)));
      add_rounded(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(w + i + 8)));
    }
    if (k - i >= 8) {
      add_rounded(_mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(w + i)));
      i += 8;
    }
    for (; i < k; ++i) sum = std::fma(x[i], w[i], sum);
    return sum;
  }
}

// llama.cpp's AMX build multiplies the F16 matrices its AMX buffer holds (StoredMatrix::ggml_amx) with the float
// activations, unrounded, in tinyBLAS's 16 lanes for any number of rows (tinygemm_kernel_avx): `amx`.
template <class W>
void ggml_float_product(const float* x, Index n, Index ldx, const W* w, Index rows, Index k, float* y, Index ldy,
                        bool amx) {
  if ((n < 2 && !amx) || k % 16 != 0) {
#pragma omp parallel for schedule(static) if (rows * k >= kFusedParallelWeights || n >= 2)
    for (Index o = 0; o < rows; ++o) {
      for (Index i = 0; i < n; ++i) y[i * ldy + o] = vec_dot(x + i * ldx, w + o * k, k);
    }
    return;
  }
  if (n < 2) {  // the AMX build's lanes for one row (generation): threads only for the large products, as above
#pragma omp parallel for schedule(static) if (rows * k >= kFusedParallelWeights)
    for (Index g = 0; g < rows / 4; ++g) {
      if (4 * g + kFusedPrefetchRows * 4 < rows)
        prefetch_bytes(w + (4 * g + 4 * kFusedPrefetchRows) * k, static_cast<std::size_t>(4 * k) * sizeof(W));
      lanes_4x1(x, w + 4 * g * k, k, y + 4 * g);
    }
    for (Index o = rows / 4 * 4; o < rows; ++o) y[o] = lanes_1x1(x, w + o * k, k);
    return;
  }
  // Blocks of activation rows stay in L2 while every weight row passes (the activations, not the weights, would
  // otherwise be read from memory once per group of weight rows).
  constexpr Index kTokenBlock = kTileTokens * ((64 + kTileTokens - 1) / kTileTokens);  // whole tiles
  const auto block = [&](Index o, Index count, Index i0, Index i1) {
    // F16 rows widened once per block of activation rows (exactly: the products are the same), not per tile.
    const float* wf = nullptr;
    if constexpr (std::is_same_v<W, std::uint16_t>) {
      thread_local std::vector<float> widened;
      widened.resize(static_cast<std::size_t>(kTileRows * k));
      io::half_to_float(w + o * k, widened.data(), count * k);
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
  };
  blocked_rows(n, rows, kTileRows, kTokenBlock, rows * k * n >= (1 << 16), block);
}

bool ggml_float_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  if (!W.ggml_rounding) return false;
  if (const float* w = W.f32()) {
    ggml_float_product(x, n, ldx, w, W.rows, W.cols, y, ldy, false);
    return true;
  }
  if (W.dtype != io::DType::F16) return false;
  ggml_float_product(x, n, ldx, static_cast<const std::uint16_t*>(W.data), W.rows, W.cols, y, ldy, W.ggml_amx);
  return true;
}
// Outputs [i0, i1) x [o, o + rows) of a batch product (rows <= kQ0Rows): W's rows from w, the quantised activation
// rows from acts.
struct Q0Span {
  const std::uint8_t* w;
  std::size_t w_row;
  Index rows;
  const std::uint8_t* acts;
  std::size_t act_row;
  Index i0, i1, blocks;
  float* y;  // output (i0, o)
  Index ldy;
};

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
constexpr bool kQ0Offset = true;  // the activations' quants offset by 128 (tile_pairs32)

template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
void q0_span(const Q0Span& s) {
  thread_local std::vector<Q0Block> prepared;
  thread_local std::vector<float> scales;
  const auto count = static_cast<std::size_t>(s.blocks * s.rows);
  if (prepared.size() < count) prepared.resize(count), scales.resize(count);
  q0_prepare<Quants, kBytes>(s.w, s.w_row, s.rows, s.blocks, prepared.data(), scales.data());
  const std::uint8_t* a[2 * kQ0Pairs];
  float* y[2 * kQ0Pairs];
  auto row = [&](Index i) { return s.acts + static_cast<std::size_t>(i) * s.act_row; };
  auto out = [&](Index i) { return s.y + (i - s.i0) * s.ldy; };
  Index i = s.i0;
  if (s.rows == kQ0Rows) {
    for (; i + 2 * kQ0Pairs <= s.i1; i += 2 * kQ0Pairs) {
      for (int t = 0; t < 2 * kQ0Pairs; ++t) a[t] = row(i + t), y[t] = out(i + t);
      tile_pairs32<kQ0Rows, kQ0Pairs>(prepared.data(), scales.data(), kQ0Rows, a, y, s.blocks);
    }
  }
  // The rest a pair at a time (an odd last row paired with itself, its twin not stored).
  for (; i < s.i1; i += 2) {
    a[0] = row(i), y[0] = out(i);
    a[1] = i + 1 < s.i1 ? row(i + 1) : a[0], y[1] = i + 1 < s.i1 ? out(i + 1) : nullptr;
    if (s.rows == kQ0Rows) {
      tile_pairs32<kQ0Rows, 1>(prepared.data(), scales.data(), kQ0Rows, a, y, s.blocks);
      continue;
    }
    for (Index r = 0; r < s.rows; ++r) {
      float* yr[2] = {y[0] + r, y[1] ? y[1] + r : nullptr};
      tile_pairs32<1, 1>(prepared.data() + r, scales.data() + r, s.rows, a, yr, s.blocks);
    }
  }
}
#else
constexpr bool kQ0Offset = false;

template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
void q0_span(const Q0Span& s) {
  Index i = s.i0;
  if (s.rows == kQ0Rows) {
    for (; i + kQ0Tokens <= s.i1; i += kQ0Tokens) {
      tile_blocks32<Quants, kBytes, kQ0Rows, kQ0Tokens>(s.w, s.w_row, s.acts + static_cast<std::size_t>(i) * s.act_row,
                                                        s.act_row, s.blocks, s.y + (i - s.i0) * s.ldy, s.ldy);
    }
  }
  for (; i < s.i1; ++i) {
    for (Index r = 0; r < s.rows; ++r) {
      s.y[(i - s.i0) * s.ldy + r] =
          dot_blocks32<Quants, kBytes>(s.w + r * s.w_row, s.acts + static_cast<std::size_t>(i) * s.act_row, s.blocks);
    }
  }
}
#endif

// Types llama.cpp's x86 build multiplies with vec_dot for a batch too: every output its own row dot.
template <RowDot kDot>
void dot_span(const Q0Span& s) {
  for (Index i = s.i0; i < s.i1; ++i) {
    const std::uint8_t* a = s.acts + static_cast<std::size_t>(i) * s.act_row;
    for (Index r = 0; r < s.rows; ++r) s.y[(i - s.i0) * s.ldy + r] = kDot(s.w + r * s.w_row, a, s.blocks);
  }
}

using SpanFn = void (*)(const Q0Span&);

// How llama.cpp's x86 build multiplies a batch with W, where the engine does the same: the activations' type, the
// kernel, and the elements per activation block.
struct BatchKernel {
  io::GgmlType activations;
  SpanFn span;
  bool offset;  // the Q8_0 activations' quants offset by 128 (tile_pairs32)
};

// tinyBLAS_Q0 for Q8_0, Q5_0 and Q4_0 not repacked; vec_dot for Q4_1, Q5_1, Q3_K, Q5_K and Q6_K. (Repacked Q4_K
// rows have their own kernel, q4_k_batch; repacked Q2_K rows sum as one row does, dot_q2_k_repacked.)
std::optional<BatchKernel> batch_kernel(const StoredMatrix& W) {
  if (W.dtype != io::DType::GGML || !W.ggml_rounding) return std::nullopt;
  switch (static_cast<io::GgmlType>(W.ggml_type)) {
    case io::GgmlType::Q8_0:
      if (W.ggml_amx) return BatchKernel{io::GgmlType::Q8_0, dot_span<dot_block_sums<q8_0_quants, 34>>, false};
      return BatchKernel{io::GgmlType::Q8_0, q0_span<q8_0_quants, 34>, kQ0Offset};
    case io::GgmlType::Q5_0: return BatchKernel{io::GgmlType::Q8_0, q0_span<q5_0_quants, 22>, kQ0Offset};
    case io::GgmlType::Q4_0:
      // Repacked rows: their order one output at a time measured 0.28x llama.cpp's interleaved gemm on a 512-token
      // prompt (SmolLM2-135M shape; the float product 0.58x), so a batch takes the float product: ulps off
      // llama.cpp's, which the test files' F16 cache absorbs (within 2.2e-15 of its logits).
      if (q4_0_repacked(W)) return std::nullopt;
      if (W.ggml_amx) return BatchKernel{io::GgmlType::Q8_0, dot_span<dot_block_sums<q4_0_quants, 18>>, false};
      return BatchKernel{io::GgmlType::Q8_0, q0_span<q4_0_quants, 18>, kQ0Offset};
    case io::GgmlType::Q6_K:
      return BatchKernel{io::GgmlType::Q8_K, W.ggml_amx ? dot_span<dot_q6_k<true>> : dot_span<dot_q6_k<false>>, false};
    case io::GgmlType::Q3_K: return BatchKernel{io::GgmlType::Q8_K, dot_span<dot_q3_k>, false};
    case io::GgmlType::Q2_K:
      if (!q2_k_repacked(W)) return std::nullopt;
      return BatchKernel{io::GgmlType::Q8_K, dot_span<dot_q2_k_repacked>, false};
    case io::GgmlType::Q5_K:
      return BatchKernel{io::GgmlType::Q8_K, W.ggml_amx ? dot_span<dot_q5_k<true>> : dot_span<dot_q5_k<false>>, false};
    case io::GgmlType::Q4_1:
      return BatchKernel{io::GgmlType::Q8_1, W.ggml_amx ? dot_span<dot_q4_1_amx> : dot_span<dot_q4_1_q5_1<false>>,
                         false};
    case io::GgmlType::Q5_1: return BatchKernel{io::GgmlType::Q8_1, dot_span<dot_q4_1_q5_1<true>>, false};
    default: return std::nullopt;
  }
}

// A batch of products in llama.cpp's arithmetic (batch_kernel): the activations quantised once, then each thread's
// share of the weight rows, kQ0Rows at a time, against blocks of 256 activation rows (which stay in L2), each group's
// blocks unpacked once per block of activation rows (with AVX-512: q0_prepare; blocks of 64 rows were 2 % slower).
void integer_batch(const float* x, Index n, Index ldx, const StoredMatrix& W, const BatchKernel& k, float* y,
                   Index ldy) {
  const std::size_t act_row = act_row_bytes(k.activations, W.cols);
  const auto w_row = static_cast<std::size_t>(*io::ggml_bytes(W.ggml_type, W.cols));
  const Index blocks = act_blocks(k.activations, W.cols), groups = (W.rows + kQ0Rows - 1) / kQ0Rows;
  const std::uint8_t* acts = quantised_rows(k.activations, x, n, ldx, W.cols, k.offset);
  const auto* base = static_cast<const std::uint8_t*>(W.data);
  constexpr Index kChunk = 256;
#pragma omp parallel if (n * W.rows * W.cols >= (1 << 20))
  {
    const int threads = omp_get_num_threads(), me = omp_get_thread_num();
    const Index g0 = groups * me / threads, g1 = groups * (me + 1) / threads;
    for (Index c0 = 0; c0 < n; c0 += kChunk) {
      for (Index g = g0; g < g1; ++g) {
        const Index o = g * kQ0Rows;
        k.span({base + static_cast<std::size_t>(o) * w_row, w_row, std::min<Index>(kQ0Rows, W.rows - o), acts, act_row,
                c0, std::min(n, c0 + kChunk), blocks, y + c0 * ldy + o, ldy});
      }
    }
  }
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
// A batch of products with repacked Q4_K rows (k4_tokens): the activations quantised to Q8_K once, then each
// thread's share of sixteen-row groups against blocks of 64 activation rows, each super-block of a group unpacked
// once per block of rows.
void q4_k_batch(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  const std::size_t act_row = act_row_bytes(io::GgmlType::Q8_K, W.cols);
  const auto w_row = static_cast<std::size_t>(*io::ggml_bytes(W.ggml_type, W.cols));
  const Index blocks = W.cols / 256, groups = (W.rows + kK4Lanes - 1) / kK4Lanes;
  const std::uint8_t* acts = quantised_rows(io::GgmlType::Q8_K, x, n, ldx, W.cols, false);
  // Each Q8_K block's sums of its eight sub-blocks (two sums of 16 each), paired as k4_tokens reads them.
  std::vector<std::int32_t> pairs(static_cast<std::size_t>(n * blocks) * 4);
  for (Index i = 0; i < n * blocks; ++i) {
    std::int16_t sums[16];
    std::memcpy(sums, acts + static_cast<std::size_t>(i / blocks) * act_row + (i % blocks) * 292 + 260, 32);
    for (int p = 0; p < 4; ++p) {
      const auto lo = static_cast<std::uint16_t>(sums[4 * p] + sums[4 * p + 1]);
      const auto hi = static_cast<std::uint16_t>(sums[4 * p + 2] + sums[4 * p + 3]);
      pairs[static_cast<std::size_t>(i) * 4 + p] =
          static_cast<std::int32_t>(lo | (static_cast<std::uint32_t>(hi) << 16));
    }
  }
  const auto* base = static_cast<const std::uint8_t*>(W.data);
  constexpr Index kChunk = 256;
#pragma omp parallel if (n * W.rows * W.cols >= (1 << 20))
  {
    const int threads = omp_get_num_threads(), me = omp_get_thread_num();
    const Index g0 = groups * me / threads, g1 = groups * (me + 1) / threads;
    K4Unpacked u;
    __m512 acc[2 * kChunk];  // each token's two sums (quants, mins) of its sixteen outputs
    for (Index c0 = 0; c0 < n; c0 += kChunk) {
      const Index tokens = std::min(kChunk, n - c0);
      for (Index g = g0; g < g1; ++g) {
        const Index o = g * kK4Lanes, rows = std::min<Index>(kK4Lanes, W.rows - o);
        std::fill(std::begin(acc), std::end(acc), _mm512_setzero_ps());
        for (Index b = 0; b < blocks; ++b) {
          k4_unpack(base + static_cast<std::size_t>(o) * w_row, w_row, rows, b, u);
          const std::uint8_t* a[kK4Tokens];
          const std::int32_t* p[kK4Tokens];
          auto point = [&](Index t0, int count) {
            for (int t = 0; t < count; ++t) {
              const Index i = c0 + t0 + t;
              a[t] = acts + static_cast<std::size_t>(i) * act_row + static_cast<std::size_t>(b) * 292;
              p[t] = pairs.data() + static_cast<std::size_t>(i * blocks + b) * 4;
            }
          };
          Index t0 = 0;
          for (; t0 + kK4Tokens <= tokens; t0 += kK4Tokens) {
            point(t0, kK4Tokens);
            k4_tokens<kK4Tokens>(u, a, p, acc + t0, acc + kChunk + t0, W.ggml_amx);
          }
          for (; t0 < tokens; ++t0) {
            point(t0, 1);
            k4_tokens<1>(u, a, p, acc + t0, acc + kChunk + t0, W.ggml_amx);
          }
        }
        const __mmask16 keep = static_cast<__mmask16>((1u << rows) - 1);
        for (Index t = 0; t < tokens; ++t) {
          _mm512_mask_storeu_ps(y + (c0 + t) * ldy + o, keep, _mm512_sub_ps(acc[t], acc[kChunk + t]));
        }
      }
    }
  }
}
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
// A few activation rows times repacked Q4_K rows (generation), four weight rows at a time, each row's super-block
// read 64 bytes at a time: the low nibbles of quant bytes 0-63 are sub-blocks 0 and 2, the high ones 1 and 3 (bytes
// 64-127: 4 and 6, 5 and 7), so the activations are rearranged once per row into that order (K4Activations) and
// each 512-bit maddubs multiplies two sub-blocks, its int16 pairs scaled by their sub-blocks' scales (one shuffle of
// the broadcast scales) in a madd. The four rows' exact totals and min sums are reduced together and take
// dot_q4_k_sums' float operations, four lanes at a time: the same outputs.
constexpr std::size_t kK4ActBytes = 320;
constexpr std::size_t kK4PrefetchRows = 4;  // a rearranged block: 256 quants, 8 int16 sub-block sums, float d

// Q8_K rows (act_row bytes apart) rearranged, each `blocks` blocks of kK4ActBytes, into out.
void k4_activations(const std::uint8_t* q8k, Index n, std::size_t act_row, Index blocks, std::uint8_t* out) {
  static constexpr int kOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};
  for (Index i = 0; i < n; ++i) {
    for (Index b = 0; b < blocks; ++b) {
      const std::uint8_t* a = q8k + static_cast<std::size_t>(i) * act_row + static_cast<std::size_t>(b) * 292;
      std::uint8_t* o = out + static_cast<std::size_t>(i * blocks + b) * kK4ActBytes;
      for (int s = 0; s < 8; ++s) std::memcpy(o + 32 * s, a + 4 + 32 * kOrder[s], 32);
      std::int16_t sums16[16], sums[8];
      std::memcpy(sums16, a + 260, 32);
      for (int s = 0; s < 8; ++s) sums[s] = static_cast<std::int16_t>(sums16[2 * s] + sums16[2 * s + 1]);
      std::memcpy(o + 256, sums, 16);
      std::memcpy(o + 272, a, 4);
    }
  }
}

// For each of the four 512-bit products, the byte pairs that spread the broadcast scales (int16 lane s of every
// 128-bit lane: scale s) over its two sub-blocks' int16 pairs: sub-blocks 0 and 2, 1 and 3, 4 and 6, 5 and 7.
alignas(64) constexpr std::array<std::int8_t, 256> kK4PickScale = [] {
  std::array<std::int8_t, 256> t{};
  constexpr int kSub[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};
  for (int p = 0; p < 4; ++p) {
    for (int i = 0; i < 64; ++i) t[64 * p + i] = static_cast<std::int8_t>(2 * kSub[p][i < 32 ? 0 : 1] + (i & 1));
  }
  return t;
}();

// Rows w, w + w_row, w + 2 w_row, w + 3 w_row times one rearranged activation row: y[0..3].
void q4_k_rows4(const std::uint8_t* w, std::size_t w_row, const std::uint8_t* act, Index blocks, float* y, bool amx) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512i pick_scale[4];
  for (int p = 0; p < 4; ++p) pick_scale[p] = _mm512_load_si512(kK4PickScale.data() + 64 * p);
  __m128 acc = _mm_setzero_ps(), mins = _mm_setzero_ps();
  for (Index b = 0; b < blocks; ++b) {
    const std::uint8_t* a = act + static_cast<std::size_t>(b) * kK4ActBytes;
    const __m128i sub_sums = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 256));
    float da;
    std::memcpy(&da, a + 272, 4);
    __m128i totals[4], min_sums[4];
    alignas(16) std::uint16_t d[8] = {}, dmin[8] = {};
    for (int r = 0; r < 4; ++r) {
      const std::uint8_t* blk = w + static_cast<std::size_t>(r) * w_row + static_cast<std::size_t>(b) * 144;
      // The next four rows' block, fetched while these are multiplied (the rows stream from memory in generation).
      prefetch_bytes(blk + kK4PrefetchRows * w_row, 144);
      std::memcpy(&d[r], blk, 2);
      std::memcpy(&dmin[r], blk + 2, 2);
      const K4Scales k = k4_scales(blk + 4);
      const __m512i scales =
          _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.scale))));
      const __m512i q0 = _mm512_loadu_si512(blk + 16), q1 = _mm512_loadu_si512(blk + 80);
      const __m512i nib[4] = {_mm512_and_si512(q0, m4), _mm512_and_si512(_mm512_srli_epi16(q0, 4), m4),
                              _mm512_and_si512(q1, m4), _mm512_and_si512(_mm512_srli_epi16(q1, 4), m4)};
      __m512i sum = _mm512_setzero_si512();
      for (int p = 0; p < 4; ++p) {
        const __m512i pairs = _mm512_maddubs_epi16(nib[p], _mm512_loadu_si512(a + 64 * p));
        sum = _mm512_add_epi32(sum, _mm512_madd_epi16(pairs, _mm512_shuffle_epi8(scales, pick_scale[p])));
      }
      const __m256i half = _mm256_add_epi32(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64(sum, 1));
      totals[r] = _mm_add_epi32(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
      min_sums[r] =
          _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.min))), sub_sums);
    }
    const __m128i total = _mm_hadd_epi32(_mm_hadd_epi32(totals[0], totals[1]), _mm_hadd_epi32(totals[2], totals[3]));
    const __m128i min_sum =
        _mm_hadd_epi32(_mm_hadd_epi32(min_sums[0], min_sums[1]), _mm_hadd_epi32(min_sums[2], min_sums[3]));
    const __m128 scale = _mm_set1_ps(da);
    const __m128 dw = _mm_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d)));
    const __m128 dm = _mm_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(dmin)));
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(total), _mm_mul_ps(dw, scale), acc);
    if (amx) {
      acc = _mm_fnmadd_ps(_mm_cvtepi32_ps(min_sum), _mm_mul_ps(dm, scale), acc);
    } else {
      mins = _mm_fmadd_ps(_mm_cvtepi32_ps(min_sum), _mm_mul_ps(dm, scale), mins);
    }
  }
  _mm_storeu_ps(y, _mm_sub_ps(acc, mins));
}
#endif
#endif

#if defined(ATTN_AMX_TILES)
// A batch of Q8_0 (or Q4_0) products on AMX tiles, in llama.cpp's AMX order (dot_block_sums: each block's exact integer
// dot fused-multiply-added with d_w d_a into one float per output, block after block), as its AMX build computes them:
// one tile instruction multiplies a block of 16 activation rows by the same block of 16 weight rows (16 x 16 x 32),
// and its 256 integer sums are converted and accumulated in float by AVX-512. Two weight tiles and two activation
// tiles give four sum tiles (32 x 32 outputs) per block.
constexpr int kAmxRows = 16;

// Tiles 0-1: weights, 8 rows of 64 bytes (16 weight rows' 4-byte groups, group by group); 2-3: activations, 16
// rows of 32 bytes; 4-7: sums, 16 rows of 16 int32.
constexpr amx::TileShapes kQ0Tiles = {{8, 8, 16, 16, 16, 16, 16, 16}, {64, 64, 32, 32, 64, 64, 64, 64}};

// Weight rows o to o + 32 (w: row o, w_row bytes apart; blocks of kBytes, quants as signed bytes by Quants) in the
// weight tiles' layout, block after block: for each block and half, 8 x 16 dwords (group q of row r at [q][r]) then
// the 16 rows' scales as float.
constexpr std::size_t kAmxPackBytes = 2 * (512 + 64);
template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
void amx_pack(const std::uint8_t* w, std::size_t w_row, Index blocks, std::uint8_t* out) {
  alignas(64) std::uint8_t quants[kAmxRows][32];
  alignas(64) std::int32_t offset[kAmxRows];
  for (int r = 0; r < kAmxRows; ++r) offset[r] = 32 * r;
  const __m512i index = _mm512_load_si512(offset);
  for (int h = 0; h < 2; ++h) {
    for (Index b = 0; b < blocks; ++b) {
      std::uint8_t* o = out + static_cast<std::size_t>(b) * kAmxPackBytes + static_cast<std::size_t>(h) * 576;
      float d[kAmxRows];
      for (int r = 0; r < kAmxRows; ++r) {
        const std::uint8_t* blk =
            w + static_cast<std::size_t>(h * kAmxRows + r) * w_row + static_cast<std::size_t>(b) * kBytes;
        _mm256_store_si256(reinterpret_cast<__m256i*>(quants[r]), Quants(blk));
        d[r] = half_at(blk);
      }
      for (int q = 0; q < 8; ++q) _mm512_storeu_si512(o + 64 * q, _mm512_i32gather_epi32(index, quants[0] + 4 * q, 1));
      std::memcpy(o + 512, d, 64);
    }
  }
}

// Outputs [t0, t0 + 32) x 32 of the packed rows: acts (rows act_row bytes apart, at least 32 of them) times pack.
void amx_tile(const std::uint8_t* pack, const std::uint8_t* acts, std::size_t act_row, Index blocks, float (*acc)[32]) {
  alignas(64) std::int32_t sums[4][kAmxRows * kAmxRows];
  for (Index b = 0; b < blocks; ++b) {
    const std::uint8_t* p = pack + static_cast<std::size_t>(b) * kAmxPackBytes;
    const std::uint8_t* a = acts + static_cast<std::size_t>(b) * 34;
    _tile_loadd(0, p, 64);
    _tile_loadd(1, p + 576, 64);
    _tile_loadd(2, a + 2, static_cast<long>(act_row));
    _tile_loadd(3, a + 2 + kAmxRows * act_row, static_cast<long>(act_row));
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
    _tile_dpbssd(4, 2, 0);
    _tile_dpbssd(5, 2, 1);
    _tile_dpbssd(6, 3, 0);
    _tile_dpbssd(7, 3, 1);
    _tile_stored(4, sums[0], 64);
    _tile_stored(5, sums[1], 64);
    _tile_stored(6, sums[2], 64);
    _tile_stored(7, sums[3], 64);
    const __m512 dw[2] = {_mm512_loadu_ps(p + 512), _mm512_loadu_ps(p + 576 + 512)};
    for (int t = 0; t < 2 * kAmxRows; ++t) {
      const __m512 da = _mm512_set1_ps(half_at(a + static_cast<std::size_t>(t) * act_row));
      for (int h = 0; h < 2; ++h) {
        const std::int32_t* sum = sums[2 * (t / kAmxRows) + h] + (t % kAmxRows) * kAmxRows;
        const __m512 v = _mm512_cvtepi32_ps(_mm512_load_si512(sum));
        _mm512_storeu_ps(acc[t] + 16 * h,
                         _mm512_fmadd_ps(v, _mm512_mul_ps(dw[h], da), _mm512_loadu_ps(acc[t] + 16 * h)));
      }
    }
  }
}

// y[n, W.rows] = x W^T for a Q8_0 or Q4_0 matrix llama.cpp's AMX buffer holds (W.rows a multiple of 32), on AMX
// tiles: each thread's share of 32-row groups packed once and multiplied by every 32 activation rows (the last ones
// padded with zero rows).
template <__m256i (*Quants)(const std::uint8_t*), std::size_t kBytes>
void amx_batch(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  const std::size_t act_row = act_row_bytes(io::GgmlType::Q8_0, W.cols);
  const auto w_row = static_cast<std::size_t>(*io::ggml_bytes(W.ggml_type, W.cols));
  const Index blocks = W.cols / 32, groups = W.rows / 32, padded = (n + 31) / 32 * 32;
  const std::uint8_t* q = quantised_rows(io::GgmlType::Q8_0, x, n, ldx, W.cols, false);
  // The rows and their zero padding in this thread's buffer, kept between products (a new one each time cost its
  // pages' faults and zeroing: a tenth of a 512-token prompt).
  thread_local std::vector<std::uint8_t> acts;
  acts.resize(static_cast<std::size_t>(padded) * act_row);
  std::memcpy(acts.data(), q, static_cast<std::size_t>(n) * act_row);
  std::fill(acts.begin() + static_cast<std::ptrdiff_t>(n * static_cast<Index>(act_row)), acts.end(), 0);
  const std::uint8_t* rows = acts.data();  // the parallel region uses the pointer: acts is this thread's
  const auto* base = static_cast<const std::uint8_t*>(W.data);
#pragma omp parallel if (n * W.rows * W.cols >= (1 << 20))
  {
    amx::configure(kQ0Tiles);
    thread_local std::vector<std::uint8_t> pack;
    pack.resize(static_cast<std::size_t>(blocks) * kAmxPackBytes);
    alignas(64) float acc[32][32];
#pragma omp for schedule(static)
    for (Index g = 0; g < groups; ++g) {
      amx_pack<Quants, kBytes>(base + static_cast<std::size_t>(32 * g) * w_row, w_row, blocks, pack.data());
      for (Index t0 = 0; t0 < n; t0 += 32) {
        std::memset(acc, 0, sizeof(acc));
        amx_tile(pack.data(), rows + static_cast<std::size_t>(t0) * act_row, act_row, blocks, acc);
        for (Index t = t0; t < std::min(n, t0 + 32); ++t)
          std::copy(acc[t - t0], acc[t - t0] + 32, y + t * ldy + 32 * g);
      }
    }
  }
}
#endif
}  // namespace

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
// Up to kFusedRows activation rows times repacked Q4_K rows (q4_k_rows4), the weight rows shared among the threads.
void fused_q4_k(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  const std::size_t act_row = act_row_bytes(io::GgmlType::Q8_K, W.cols);
  const auto w_row = static_cast<std::size_t>(*io::ggml_bytes(W.ggml_type, W.cols));
  const Index blocks = W.cols / 256;
  const std::uint8_t* q8k = quantised_rows(io::GgmlType::Q8_K, x, n, ldx, W.cols, false);
  thread_local std::vector<std::uint8_t> rearranged;
  rearranged.resize(static_cast<std::size_t>(n * blocks) * kK4ActBytes);
  k4_activations(q8k, n, act_row, blocks, rearranged.data());
  const std::uint8_t* acts = rearranged.data();
  const auto* base = static_cast<const std::uint8_t*>(W.data);
#pragma omp parallel for schedule(static) if (W.rows * W.cols >= kFusedParallelWeights)
  for (Index g = 0; g < W.rows / 4; ++g) {
    for (Index i = 0; i < n; ++i) {
      float out[4];
      q4_k_rows4(base + static_cast<std::size_t>(4 * g) * w_row, w_row,
                 acts + static_cast<std::size_t>(i * blocks) * kK4ActBytes, blocks, out, W.ggml_amx);
      std::copy(out, out + 4, y + i * ldy + 4 * g);
    }
  }
}
#endif

bool integer_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
#if defined(ATTN_GGML_KERNELS)
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
  if (W.dtype == io::DType::GGML && W.ggml_rounding && static_cast<io::GgmlType>(W.ggml_type) == io::GgmlType::Q4_K &&
      (q4_k_repacked(W) || W.ggml_amx)) {
    (n <= kFusedRows ? fused_q4_k : q4_k_batch)(x, n, ldx, W, y, ldy);
    return true;
  }
#endif
  if (n <= kFusedRows && W.dtype == io::DType::GGML && W.ggml_rounding && W.ggml_amx) {
    const auto type = static_cast<io::GgmlType>(W.ggml_type);
    if (type == io::GgmlType::Q8_0 || type == io::GgmlType::Q4_0) {
      (type == io::GgmlType::Q8_0 ? fused_block_sums<q8_0_quants, 34> : fused_block_sums<q4_0_quants, 18>)(x, n, ldx, W,
                                                                                                           y, ldy);
      return true;
    }
  }
  if (n <= kFusedRows && integer_kernel(W)) {
    fused_integer(x, n, ldx, W, y, ldy);
    return true;
  }
#if defined(ATTN_AMX_TILES)
  if (W.dtype == io::DType::GGML && W.ggml_amx && io::cpu_has_amx()) {
    const auto type = static_cast<io::GgmlType>(W.ggml_type);
    if (type == io::GgmlType::Q8_0 || type == io::GgmlType::Q4_0) {
      (type == io::GgmlType::Q8_0 ? amx_batch<q8_0_quants, 34> : amx_batch<q4_0_quants, 18>)(x, n, ldx, W, y, ldy);
      return true;
    }
  }
#endif
  if (const auto kernel = batch_kernel(W)) {
    integer_batch(x, n, ldx, W, *kernel, y, ldy);
    return true;
  }
#else
  (void)x, (void)n, (void)ldx, (void)W, (void)y, (void)ldy;
#endif
  return false;
}

bool ggml_amx_holds(io::DType dtype, std::uint32_t ggml_type, Index rows, Index cols) {
  if (rows % 32 != 0) return false;
  if (dtype == io::DType::F16) return cols % 16 == 0;
  if (dtype != io::DType::GGML) return false;
  switch (static_cast<io::GgmlType>(ggml_type)) {
    case io::GgmlType::Q4_0:
    case io::GgmlType::Q4_1:
    case io::GgmlType::Q8_0: return cols % 32 == 0;
    case io::GgmlType::Q4_K:
    case io::GgmlType::Q5_K:
    case io::GgmlType::Q6_K: return cols % 256 == 0;
    default: return false;
  }
}

bool float_product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
#if defined(ATTN_GGML_KERNELS)
  return ggml_float_product(x, n, ldx, W, y, ldy);
#else
  (void)x, (void)n, (void)ldx, (void)W, (void)y, (void)ldy;
  return false;
#endif
}

}  // namespace attn::models::ggml
