// IEEE binary16 to binary32, shared by the readers of stored weights (safetensors, GGUF's F16 tensors and the
// 16-bit scales inside its quantised blocks), so that every 16-bit float the engine reads widens the same way.
#pragma once

#include <bit>
#include <cstdint>

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

}  // namespace attn::io
