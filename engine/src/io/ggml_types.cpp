#include "attn/io/ggml_types.h"

#include "attn/io/safetensors.h"
#include "half.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

namespace attn::io {

namespace {

static_assert(std::endian::native == std::endian::little, "GGUF blocks are little-endian");

constexpr std::int64_t QK_K = 256;

struct TypeRow {
  std::string_view name;  // empty: a number ggml never assigned
  std::int64_t block_elements;
  std::int64_t block_bytes;
  bool readable;
};

// ggml's type_traits (ggml/src/ggml.c, ggml 0.25.1) by number; tests/data/gguf_blocks/MANIFEST holds the
// library's own figures, which the unit test compares with these.
constexpr std::array<TypeRow, 43> kTypes{{
    {"F32", 1, 4, true},          {"F16", 1, 2, true},          {"Q4_0", 32, 18, true},
    {"Q4_1", 32, 20, true},       {"Q4_2", 0, 0, false},        {"Q4_3", 0, 0, false},
    {"Q5_0", 32, 22, true},       {"Q5_1", 32, 24, true},       {"Q8_0", 32, 34, true},
    {"Q8_1", 32, 36, false},      {"Q2_K", QK_K, 84, true},     {"Q3_K", QK_K, 110, true},
    {"Q4_K", QK_K, 144, true},    {"Q5_K", QK_K, 176, true},    {"Q6_K", QK_K, 210, true},
    {"Q8_K", QK_K, 292, true},    {"IQ2_XXS", QK_K, 66, false}, {"IQ2_XS", QK_K, 74, false},
    {"IQ3_XXS", QK_K, 98, false}, {"IQ1_S", QK_K, 50, false},   {"IQ4_NL", 32, 18, false},
    {"IQ3_S", QK_K, 110, false},  {"IQ2_S", QK_K, 82, false},   {"IQ4_XS", QK_K, 136, false},
    {"I8", 1, 1, false},          {"I16", 1, 2, false},         {"I32", 1, 4, false},
    {"I64", 1, 8, false},         {"F64", 1, 8, false},         {"IQ1_M", QK_K, 56, false},
    {"BF16", 1, 2, true},         {"Q4_0_4_4", 0, 0, false},    {"Q4_0_4_8", 0, 0, false},
    {"Q4_0_8_8", 0, 0, false},    {"TQ1_0", QK_K, 54, false},   {"TQ2_0", QK_K, 66, false},
    {"IQ4_NL_4_4", 0, 0, false},  {"IQ4_NL_4_8", 0, 0, false},  {"IQ4_NL_8_8", 0, 0, false},
    {"MXFP4", 32, 17, false},     {"NVFP4", 64, 36, false},     {"Q1_0", 128, 18, false},
    {"Q2_0", 64, 18, false},
}};

// From this many elements on, one span is shared between the OpenMP threads: below it (a norm's weights, a small
// matrix) waking the threads costs more than the work.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 18;

float f16_at(const std::uint8_t* p) {
  std::uint16_t h = 0;
  std::memcpy(&h, p, sizeof h);
  return half_to_float(h);
}

// Each block function widens one block, with ggml's products in ggml's order (the header says why any order would
// do).

void block_q4_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const std::uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
    y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

void block_q4_1(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const float m = f16_at(b + 2);
  const std::uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
    y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// Q5_0 and Q5_1 keep element j's fifth bit in bit j of a little-endian 32-bit word (j < 16 for the low nibbles,
// 16 + j for the high ones).
std::uint32_t fifth_bits(const std::uint8_t* p) {
  std::uint32_t qh = 0;
  std::memcpy(&qh, p, sizeof qh);
  return qh;
}

void block_q5_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const std::uint32_t qh = fifth_bits(b + 2);
  const std::uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int lo = static_cast<int>((qs[j] & 0x0Fu) | ((qh >> j) & 1u) << 4);
    const int hi = static_cast<int>((qs[j] >> 4) | ((qh >> (j + 16)) & 1u) << 4);
    y[j] = static_cast<float>(lo - 16) * d;
    y[j + 16] = static_cast<float>(hi - 16) * d;
  }
}

void block_q5_1(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const float m = f16_at(b + 2);
  const std::uint32_t qh = fifth_bits(b + 4);
  const std::uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const unsigned lo = (qs[j] & 0x0Fu) | ((qh >> j) & 1u) << 4;
    const unsigned hi = (qs[j] >> 4) | ((qh >> (j + 16)) & 1u) << 4;
    y[j] = static_cast<float>(lo) * d + m;
    y[j + 16] = static_cast<float>(hi) * d + m;
  }
}

void block_q8_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const auto* qs = reinterpret_cast<const std::int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(qs[j]) * d;
}

// Q2_K: 16 groups of 16; group g's scale is the low nibble of scales[g], its min the high one. The 2-bit quants of
// each half (128 elements) sit in 32 bytes, group pair (2k, 2k + 1) of the half in bit pair k of bytes 0-15 and
// 16-31.
void block_q2_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* scales = b;
  const float d = f16_at(b + 80);
  const float dmin = f16_at(b + 82);
  for (int g = 0; g < 16; ++g) {
    const float dl = d * static_cast<float>(scales[g] & 0x0F);
    const float ml = dmin * static_cast<float>(scales[g] >> 4);
    const std::uint8_t* q = b + 16 + 32 * (g / 8) + 16 * (g % 2);
    const int shift = 2 * ((g % 8) / 2);
    float* out = y + 16 * g;
    for (int l = 0; l < 16; ++l) out[l] = dl * static_cast<float>((q[l] >> shift) & 3) - ml;
  }
}

// Q3_K's sixteen 6-bit scales: the low four bits of scale i in the low (i < 8) or high nibble of byte i % 8, the
// top two in bit pair i / 4 of byte 8 + i % 4; the stored value is the scale + 32.
std::array<int, 16> q3_k_scales(const std::uint8_t* s) {
  std::array<int, 16> out{};
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? s[i] & 0x0F : s[i - 8] >> 4;
    const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
    out[static_cast<std::size_t>(i)] = (low | high << 4) - 32;
  }
  return out;
}

// Q3_K: the 2-bit quants are laid out as Q2_K's; the third bit of group g's element l is bit g / 2 of
// hmask[l + 16 * (g % 2)], and a clear bit subtracts 4.
void block_q3_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* hmask = b;
  const std::array<int, 16> scales = q3_k_scales(b + 96);
  const float d = f16_at(b + 108);
  for (int g = 0; g < 16; ++g) {
    const float dl = d * static_cast<float>(scales[static_cast<std::size_t>(g)]);
    const std::uint8_t* q = b + 32 + 32 * (g / 8) + 16 * (g % 2);
    const std::uint8_t* h = hmask + 16 * (g % 2);
    const int shift = 2 * ((g % 8) / 2);
    const unsigned bit = 1u << (g / 2);
    float* out = y + 16 * g;
    for (int l = 0; l < 16; ++l) {
      const int v = ((q[l] >> shift) & 3) - ((h[l] & bit) ? 0 : 4);
      out[l] = dl * static_cast<float>(v);
    }
  }
}

// Q4_K and Q5_K's eight 6-bit (scale, min) pairs in 12 bytes (ggml's get_scale_min_k4): pairs 0-3 in the low six
// bits of bytes 0-3 and 4-7; pairs 4-7 take their low four bits from byte 8 + j's nibbles and their top two from
// the spare top bits of bytes j and 4 + j.
struct ScaleMin {
  std::array<float, 8> scale;
  std::array<float, 8> min;
};

ScaleMin k4_scales(const std::uint8_t* s, float d, float dmin) {
  ScaleMin out{};
  for (int j = 0; j < 8; ++j) {
    int sc = 0;
    int m = 0;
    if (j < 4) {
      sc = s[j] & 63;
      m = s[j + 4] & 63;
    } else {
      sc = (s[j + 4] & 0x0F) | (s[j - 4] >> 6) << 4;
      m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
    out.scale[static_cast<std::size_t>(j)] = d * static_cast<float>(sc);
    out.min[static_cast<std::size_t>(j)] = dmin * static_cast<float>(m);
  }
  return out;
}

// Q4_K: sub-blocks of 32; sub-blocks 2c and 2c + 1 are the low and high nibbles of bytes 32c to 32c + 31.
void block_q4_k(const std::uint8_t* b, float* y) {
  const ScaleMin sm = k4_scales(b + 4, f16_at(b), f16_at(b + 2));
  const std::uint8_t* qs = b + 16;
  for (int c = 0; c < 4; ++c) {
    const std::uint8_t* q = qs + 32 * c;
    const auto lo = static_cast<std::size_t>(2 * c);
    float* out = y + 64 * c;
    for (int l = 0; l < 32; ++l) out[l] = sm.scale[lo] * static_cast<float>(q[l] & 0x0F) - sm.min[lo];
    for (int l = 0; l < 32; ++l) out[32 + l] = sm.scale[lo + 1] * static_cast<float>(q[l] >> 4) - sm.min[lo + 1];
  }
}

// Q5_K: Q4_K's nibbles plus a fifth bit: bit s of qh[l] for sub-block s's element l.
void block_q5_k(const std::uint8_t* b, float* y) {
  const ScaleMin sm = k4_scales(b + 4, f16_at(b), f16_at(b + 2));
  const std::uint8_t* qh = b + 16;
  const std::uint8_t* qs = b + 48;
  for (int c = 0; c < 4; ++c) {
    const std::uint8_t* q = qs + 32 * c;
    const auto lo = static_cast<std::size_t>(2 * c);
    const int shift = 2 * c;
    float* out = y + 64 * c;
    for (int l = 0; l < 32; ++l) {
      const unsigned v = (q[l] & 0x0Fu) | ((qh[l] >> shift) & 1u) << 4;
      out[l] = sm.scale[lo] * static_cast<float>(v) - sm.min[lo];
    }
    for (int l = 0; l < 32; ++l) {
      const unsigned v = (q[l] >> 4) | ((qh[l] >> (shift + 1)) & 1u) << 4;
      out[32 + l] = sm.scale[lo + 1] * static_cast<float>(v) - sm.min[lo + 1];
    }
  }
}

// Q6_K: per half (128 elements) 64 bytes of low nibbles and 32 of high bit pairs; quarter k of the half takes the
// low (k even) or high nibble of ql[l + 32 * (k % 2)] and bit pair k of qh[l]; group of 16 g has the int8 scale
// scales[g].
void block_q6_k(const std::uint8_t* b, float* y) {
  const auto* scales = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = f16_at(b + 208);
  for (int half = 0; half < 2; ++half) {
    const std::uint8_t* ql = b + 64 * half;
    const std::uint8_t* qh = b + 128 + 32 * half;
    for (int k = 0; k < 4; ++k) {
      const std::uint8_t* low = ql + 32 * (k % 2);
      const int nibble = 4 * (k / 2);
      for (int part = 0; part < 2; ++part) {
        const float ds = d * static_cast<float>(scales[8 * half + 2 * k + part]);
        float* out = y + 128 * half + 32 * k + 16 * part;
        for (int l = 16 * part; l < 16 * part + 16; ++l) {
          const int v = static_cast<int>(((low[l] >> nibble) & 0x0Fu) | ((qh[l] >> (2 * k)) & 3u) << 4) - 32;
          out[l - 16 * part] = ds * static_cast<float>(v);
        }
      }
    }
  }
}

void block_q8_k(const std::uint8_t* b, float* y) {
  float d = 0.0f;
  std::memcpy(&d, b, sizeof d);
  const auto* qs = reinterpret_cast<const std::int8_t*>(b + 4);
  for (int j = 0; j < QK_K; ++j) y[j] = d * static_cast<float>(qs[j]);
}

using BlockFn = void (*)(const std::uint8_t*, float*);

// Blocks are independent, so the threads take contiguous runs of them. The block function is a template argument
// so that it is inlined into the loop.
template <BlockFn Block>
void dequantize_blocks(std::span<const std::byte> blocks, std::span<float> out, const GgmlTypeInfo& info) {
  const auto* in = reinterpret_cast<const std::uint8_t*>(blocks.data());
  float* y = out.data();
  const std::int64_t count = static_cast<std::int64_t>(out.size()) / info.block_elements;
  const std::int64_t bytes = info.block_bytes;
  const std::int64_t elements = info.block_elements;
  if (count * elements < kParallelElements) {
    // Not even an inactive parallel region: the decoder widens one row at a time while generating, over a
    // hundred thousand calls per token, and entering a region (if false included) costs more than a row.
    for (std::int64_t i = 0; i < count; ++i) Block(in + i * bytes, y + i * elements);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) Block(in + i * bytes, y + i * elements);
}

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(std::uint32_t type) {
  if (type >= kTypes.size()) return std::nullopt;
  const TypeRow& row = kTypes[type];
  return GgmlTypeInfo{row.name, row.block_elements, row.block_bytes, row.readable};
}

std::string ggml_type_name(std::uint32_t type) {
  if (const auto info = ggml_type_info(type)) return std::string(info->name);
  return "unknown type " + std::to_string(type);
}

std::optional<std::int64_t> ggml_bytes(std::uint32_t type, std::int64_t elements) {
  const auto info = ggml_type_info(type);
  if (!info || info->block_elements == 0 || elements < 0 || elements % info->block_elements != 0) return std::nullopt;
  const std::int64_t blocks = elements / info->block_elements;
  if (blocks > std::numeric_limits<std::int64_t>::max() / info->block_bytes) return std::nullopt;
  return blocks * info->block_bytes;
}

bool ggml_dequantize(GgmlType type, std::span<const std::byte> blocks, std::span<float> out) {
  const auto info = ggml_type_info(static_cast<std::uint32_t>(type));
  if (!info || !info->readable || out.size() > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
    return false;
  const auto bytes = ggml_bytes(static_cast<std::uint32_t>(type), static_cast<std::int64_t>(out.size()));
  if (!bytes || static_cast<std::uint64_t>(*bytes) != blocks.size()) return false;
  // The unquantised types widen as the safetensors reader's do: exactly, at any alignment.
  switch (type) {
    case GgmlType::F32: return convert_to_float(DType::F32, blocks, out);
    case GgmlType::F16: return convert_to_float(DType::F16, blocks, out);
    case GgmlType::BF16: return convert_to_float(DType::BF16, blocks, out);
    default: break;
  }
  switch (type) {
    case GgmlType::Q4_0: dequantize_blocks<block_q4_0>(blocks, out, *info); break;
    case GgmlType::Q4_1: dequantize_blocks<block_q4_1>(blocks, out, *info); break;
    case GgmlType::Q5_0: dequantize_blocks<block_q5_0>(blocks, out, *info); break;
    case GgmlType::Q5_1: dequantize_blocks<block_q5_1>(blocks, out, *info); break;
    case GgmlType::Q8_0: dequantize_blocks<block_q8_0>(blocks, out, *info); break;
    case GgmlType::Q2_K: dequantize_blocks<block_q2_k>(blocks, out, *info); break;
    case GgmlType::Q3_K: dequantize_blocks<block_q3_k>(blocks, out, *info); break;
    case GgmlType::Q4_K: dequantize_blocks<block_q4_k>(blocks, out, *info); break;
    case GgmlType::Q5_K: dequantize_blocks<block_q5_k>(blocks, out, *info); break;
    case GgmlType::Q6_K: dequantize_blocks<block_q6_k>(blocks, out, *info); break;
    case GgmlType::Q8_K: dequantize_blocks<block_q8_k>(blocks, out, *info); break;
    default: return false;  // a type the table calls readable and this switch does not know: a defect, refused
  }
  return true;
}

std::optional<GgmlType> ggml_vec_dot_type(GgmlType weights) {
  switch (weights) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16: return weights;
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
    case GgmlType::Q8_0: return GgmlType::Q8_0;
    case GgmlType::Q4_1:
    case GgmlType::Q5_1: return GgmlType::Q8_1;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K: return GgmlType::Q8_K;
    default: return std::nullopt;
  }
}

namespace {

// A rounded quant as x86's cvtps_epi32 and saturating packs make it: NaN (an activation that is not finite) becomes
// -128, as there; finite values are within [-127, 127] by construction.
std::uint8_t to_int8(float r) {
  if (std::isnan(r)) return 0x80;
  return static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp(r, -128.0f, 127.0f)));
}

// quantize_row_q8_0 on x86 (ggml-cpu/arch/x86/quants.c; Q8_1's d and quants are the same): d = max|x| / 127
// stored as f16, q = round-to-even(x 127 / max|x|). A 34-byte Q8_0 block per 32 values.
void quantize_q8_0(const float* x, std::int64_t n, std::uint8_t* out) {
  for (std::int64_t b = 0; b < n; b += 32, out += 34) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
    // 32 at a time, as ggml's own AVX code: the largest |x| (a NaN passed over, as std::max passes it over), the
    // products rounded to even and converted (cvtps_epi32), saturated to int8. The same bytes (a NaN: -128).
    const __m512 lo = _mm512_loadu_ps(x + b), hi = _mm512_loadu_ps(x + b + 16);
    const __m512 largest = _mm512_max_ps(_mm512_abs_ps(hi), _mm512_max_ps(_mm512_abs_ps(lo), _mm512_setzero_ps()));
    const float big = _mm512_reduce_max_ps(largest);
    const std::uint16_t dh = float_to_half(big / 127.0f);
    std::memcpy(out, &dh, 2);
    const __m512 scale = _mm512_set1_ps(big != 0.0f ? 127.0f / big : 0.0f);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2),
                     _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(lo, scale))));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 18),
                     _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(hi, scale))));
    continue;
#endif
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b + j]));
    const std::uint16_t d = float_to_half(amax / 127.0f);
    std::memcpy(out, &d, 2);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    for (int j = 0; j < 32; ++j) out[2 + j] = to_int8(std::nearbyint(x[b + j] * id));
  }
}

// quantize_row_q8_1 on x86: Q8_0's d and quants, then s = f16(d sum q) with the float d = max|x| / 127 (not the
// stored f16 one). A 36-byte block (d, s, 32 quants) per 32 values.
void quantize_q8_1(const float* x, std::int64_t n, std::uint8_t* out) {
  std::uint8_t block[34];
  for (std::int64_t b = 0; b < n; b += 32, out += 36) {
    quantize_q8_0(x + b, 32, block);
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b + j]));
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += static_cast<std::int8_t>(block[2 + j]);
    const std::uint16_t s = float_to_half(amax / 127.0f * static_cast<float>(sum));
    std::memcpy(out, block, 2);
    std::memcpy(out + 2, &s, 2);
    std::memcpy(out + 4, block + 2, 32);
  }
}

// quantize_row_q8_K_ref: float d = 1 / (-127 / x_max), x_max the first value of largest magnitude; q =
// min(127, round-to-even(x (-127 / x_max))); the 16 sums of 16 quants. A 292-byte block per 256 values.
#if defined(__AVX512F__) && defined(__AVX512BW__)
// The same block sixteen values at a time, for finite values (false otherwise, out untouched): the largest magnitude
// by a vector max, its first position by a compare, the products rounded to even as nearbyint does, each vector of 16
// quants one of the 16 sums. The bytes are the scalar loop's (tests/unit/test_ggml_products.cpp: llama.cpp's).
bool quantize_q8_k_block16(const float* x, std::uint8_t* out) {
  __m512 amax = _mm512_setzero_ps();
  __mmask16 finite = 0xFFFF;
  for (int k = 0; k < 16; ++k) {
    const __m512 v = _mm512_loadu_ps(x + 16 * k);
    finite &= _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(std::numeric_limits<float>::max()), _CMP_LE_OQ);
    amax = _mm512_max_ps(amax, _mm512_abs_ps(v));
  }
  if (finite != 0xFFFF) return false;
  const float m = _mm512_reduce_max_ps(amax);
  std::memset(out, 0, 292);
  if (m == 0.0f) return true;
  float max = m;
  for (int k = 0; k < 16; ++k) {
    const __mmask16 at = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * k)), _mm512_set1_ps(m), _CMP_EQ_OQ);
    if (at) {
      max = x[16 * k + std::countr_zero(static_cast<unsigned>(at))];
      break;
    }
  }
  const float iscale = -127.0f / max, d = 1.0f / iscale;
  std::memcpy(out, &d, 4);
  for (int k = 0; k < 16; ++k) {
    const __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * k), _mm512_set1_ps(iscale)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512i q =
        _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(r, _mm512_set1_ps(-128.0f)), _mm512_set1_ps(127.0f)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 + 16 * k), _mm512_cvtepi32_epi8(q));
    const auto sum16 = static_cast<std::int16_t>(_mm512_reduce_add_epi32(q));
    std::memcpy(out + 260 + 2 * k, &sum16, 2);
  }
  return true;
}
#endif

void quantize_q8_k(const float* x, std::int64_t n, std::uint8_t* out) {
  for (std::int64_t b = 0; b < n; b += QK_K, out += 292) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
    if (quantize_q8_k_block16(x + b, out)) continue;
#endif
    float amax = 0.0f, max = 0.0f;
    for (std::int64_t j = 0; j < QK_K; ++j) {
      if (std::fabs(x[b + j]) > amax) {
        amax = std::fabs(x[b + j]);
        max = x[b + j];
      }
    }
    std::memset(out, 0, 292);
    if (amax == 0.0f) continue;
    const float iscale = -127.0f / max, d = 1.0f / iscale;
    std::memcpy(out, &d, 4);
    std::uint8_t* q = out + 4;
    for (std::int64_t j = 0; j < QK_K; ++j) q[j] = to_int8(std::nearbyint(iscale * x[b + j]));
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += static_cast<std::int8_t>(q[g * 16 + j]);
      const auto sum16 = static_cast<std::int16_t>(sum);
      std::memcpy(out + 260 + 2 * g, &sum16, 2);
    }
  }
}

}  // namespace

bool ggml_quantize_activations(GgmlType vec_dot_type, std::span<const float> x, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(x.size());
  const auto bytes = ggml_bytes(static_cast<std::uint32_t>(vec_dot_type), n);
  if (!bytes || static_cast<std::uint64_t>(*bytes) != out.size()) return false;
  auto* o = reinterpret_cast<std::uint8_t*>(out.data());
  switch (vec_dot_type) {
    case GgmlType::Q8_0: quantize_q8_0(x.data(), n, o); return true;
    case GgmlType::Q8_1: quantize_q8_1(x.data(), n, o); return true;
    case GgmlType::Q8_K: quantize_q8_k(x.data(), n, o); return true;
    default: return false;
  }
}

namespace {

// Byte offsets of each block's f16 scales (ggml-common.h); Q8_K's one scale is a float at 0.
std::span<const int> f16_scales(GgmlType type) {
  static constexpr int kD[] = {0}, kDM[] = {0, 2}, kQ2K[] = {80, 82}, kQ3K[] = {108}, kQ6K[] = {208};
  switch (type) {
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
    case GgmlType::Q8_0: return kD;
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K: return kDM;
    case GgmlType::Q2_K: return kQ2K;
    case GgmlType::Q3_K: return kQ3K;
    case GgmlType::Q6_K: return kQ6K;
    default: return {};
  }
}

}  // namespace

bool ggml_count_nonfinite(GgmlType type, std::span<const std::byte> blocks, std::int64_t& nan, std::int64_t& inf) {
  const auto info = ggml_type_info(static_cast<std::uint32_t>(type));
  if (!info || !info->readable || info->block_elements <= 1 || blocks.size() % info->block_bytes != 0) return false;
  const auto* p = reinterpret_cast<const std::uint8_t*>(blocks.data());
  const auto scales = f16_scales(type);
  // A scale's exponent bits tested as they are (all ones: NaN or infinity), without widening it to float: the load
  // scans every block of a file. First every block's scales in one branch-free pass: a tested bit is OR-ed in, not
  // branched on (opening a 1.17 GB Q8_0 file, the branching test per block took 0.3 s of CPU, a sixth of the wall
  // time); only where some scale is not finite are the blocks dequantised and counted, below.
  const std::size_t step = static_cast<std::size_t>(info->block_bytes);
  std::uint32_t any = 0;
  for (std::size_t at = 0; at < blocks.size(); at += step) {
    for (const int off : scales) {
      std::uint16_t h;
      std::memcpy(&h, p + at + static_cast<std::size_t>(off), 2);
      any |= static_cast<std::uint32_t>((h & 0x7C00u) == 0x7C00u);
    }
    if (type == GgmlType::Q8_K) {
      std::uint32_t d;
      std::memcpy(&d, p + at, 4);
      any |= static_cast<std::uint32_t>((d & 0x7F800000u) == 0x7F800000u);
    }
  }
  if (any == 0) return true;
  const auto finite_scales = [&](const std::uint8_t* b) {
    if (type == GgmlType::Q8_K) {
      std::uint32_t d;
      std::memcpy(&d, b, 4);
      if ((d & 0x7F800000u) == 0x7F800000u) return false;
    }
    for (const int off : scales) {
      std::uint16_t h;
      std::memcpy(&h, b + off, 2);
      if ((h & 0x7C00u) == 0x7C00u) return false;
    }
    return true;
  };
  for (std::size_t at = 0; at < blocks.size(); at += static_cast<std::size_t>(info->block_bytes)) {
    if (finite_scales(p + at)) continue;  // integer quants times finite scales: every value finite
    std::vector<float> values(static_cast<std::size_t>(info->block_elements));
    ggml_dequantize(type, blocks.subspan(at, static_cast<std::size_t>(info->block_bytes)), values);
    for (const float v : values) {
      if (!std::isfinite(v)) (std::isnan(v) ? nan : inf) += 1;
    }
  }
  return true;
}

bool ggml_q8_1_offsets(std::span<const float> x, std::span<float> out) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (n % 32 != 0 || out.size() != static_cast<std::size_t>(n / 32)) return false;
  std::uint8_t block[36];  // a Q8_1 block: d, s, 32 quants
  for (std::int64_t b = 0; b < n; b += 32) {
    quantize_q8_1(x.data() + b, 32, block);
    std::uint16_t h;
    std::memcpy(&h, block, 2);
    const float d = half_to_float(h);
    float rounded = 0.0f;
    for (int j = 0; j < 32; ++j) rounded += d * static_cast<float>(static_cast<std::int8_t>(block[4 + j]));
    std::memcpy(&h, block + 2, 2);
    const float s = half_to_float(h);
    out[static_cast<std::size_t>(b / 32)] = s - rounded;
  }
  return true;
}

bool ggml_round_activations(GgmlType weights, std::span<float> x) {
  const auto type = ggml_vec_dot_type(weights);
  if (!type) return false;
  const auto n = static_cast<std::int64_t>(x.size());
  float* p = x.data();
  switch (*type) {
    case GgmlType::F32: return true;
    case GgmlType::F16: round_to_half(p, n); return true;
    case GgmlType::BF16:
      for (std::int64_t i = 0; i < n; ++i) p[i] = bf16_to_float(float_to_bf16(p[i]));
      return true;
    default: break;
  }
  // Q8_1's d and quants are Q8_0's; its f16 block sum s = f16(d sum q), which ggml's Q4_1/Q5_1 products use for the
  // weights' offsets m, is not a property of a value: a float product over the rounded values takes m's term with
  // f16(d) sum q instead (a relative difference within 2^-11 of that term).
  const GgmlType blocks = *type == GgmlType::Q8_K ? GgmlType::Q8_K : GgmlType::Q8_0;
  const auto size = ggml_bytes(static_cast<std::uint32_t>(blocks), n);
  if (!size) return false;
  thread_local std::vector<std::byte> q;
  q.resize(static_cast<std::size_t>(*size));
  return ggml_quantize_activations(blocks, x, q) && ggml_dequantize(blocks, q, x);
}
bool cpu_has_amx() {
  static const bool amx = [] {
#if defined(__x86_64__) && defined(__linux__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool vnni = (c >> 11) & 1u, amx_tile = (d >> 24) & 1u, amx_int8 = (d >> 25) & 1u;
    if (!vnni || !amx_tile || !amx_int8) return false;
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;  // <asm/prctl.h>, the kernel's xfeature number
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return amx;
}

}  // namespace attn::io
