// IEEE binary16 to binary32, shared by the readers of stored weights (safetensors, GGUF's F16 tensors and the
// 16-bit scales inside its quantised blocks), so that every 16-bit float the engine reads widens the same way.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace attn::io {

// Exact: every half is a float. Infinities keep their sign and NaNs their payload.
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | mantissa << 13);
  if (exponent != 0) return std::bit_cast<float>(sign | (exponent + 112) << 23 | mantissa << 13);
  // Zero and subnormals: mantissa x 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
}

// Binary32 to binary16, rounded to nearest even as x86's vcvtps2ph (F16C, ggml's GGML_CPU_FP32_TO_FP16) rounds:
// overflow to infinity, subnormal halves kept, NaNs quieted with their payload's top bits.
inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
  if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // 65520 and up: infinity
  if (a >= 0x38800000u) {                                                   // 2^-14 and up: a normal half
    return static_cast<std::uint16_t>(sign | ((a + 0xFFFu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
  }
  // A subnormal half: the magnitude in units of 2^-24, rounded to nearest even (exact scaling, one rounding).
  const float units = std::bit_cast<float>(a) * 0x1p24f;
  return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(units)));
}

// Binary32 to bfloat16, rounded to nearest even as ggml's GGML_FP32_TO_BF16 does; NaNs quieted.
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 64u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

// n halves widened into out: 8 at a time with F16C.
inline void half_to_float(const std::uint16_t* p, float* out, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
  }
#endif
  for (; i < n; ++i) out[i] = half_to_float(p[i]);
}

// Each of n floats rounded to the nearest half (float_to_half) and widened back, in place: 8 at a time with F16C.
inline void round_to_half(float* v, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(v + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) v[i] = half_to_float(float_to_half(v[i]));
}

}  // namespace attn::io
