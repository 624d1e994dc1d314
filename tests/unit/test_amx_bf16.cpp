// BF16 products on AMX tiles (amx_bf16.h): within float rounding of the exact product, for a batch that is not a
// multiple of the tiles' 32 rows, and the same outputs whatever the batch (each row's sums do not depend on the
// others). Skipped where the CPU or the build has no AMX.
#include "attn/io/ggml_types.h"
#include "models/hf/amx_bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace attn::models {
namespace {

TEST(AmxBf16, ProductsAreTheExactProductToFloatRounding) {
  constexpr Index kRows = 64, kCols = 96, kN = 37;
  std::uint32_t state = 7;
  auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  auto uniform = [&] { return static_cast<float>(static_cast<int>(next() >> 8) - (1 << 23)) / (1 << 23); };
  std::vector<std::uint16_t> w(static_cast<std::size_t>(kRows * kCols));
  for (auto& v : w) {
    const float f = uniform();
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v = static_cast<std::uint16_t>(bits >> 16);
  }
  std::vector<float> x(static_cast<std::size_t>(kN * kCols));
  for (float& v : x) v = uniform() * 3.0f;
  StoredMatrix W;
  W.dtype = io::DType::BF16;
  W.data = w.data();
  W.rows = kRows;
  W.cols = kCols;
  std::vector<float> y(static_cast<std::size_t>(kN * kRows), -1.0f);
  if (!amx_bf16_product(x.data(), kN, kCols, W, y.data(), kRows)) GTEST_SKIP() << "no AMX here";
  auto weight = [&](Index o, Index k) {
    const std::uint32_t bits = static_cast<std::uint32_t>(w[static_cast<std::size_t>(o * kCols + k)]) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return static_cast<double>(f);
  };
  double worst = 0;
  for (Index i = 0; i < kN; ++i) {
    for (Index o = 0; o < kRows; ++o) {
      double exact = 0, scale = 0;
      for (Index k = 0; k < kCols; ++k) {
        exact += weight(o, k) * x[static_cast<std::size_t>(i * kCols + k)];
        scale += std::abs(weight(o, k) * x[static_cast<std::size_t>(i * kCols + k)]);
      }
      worst = std::max(worst, std::abs(y[static_cast<std::size_t>(i * kRows + o)] - exact) / scale);
    }
  }
  EXPECT_LT(worst, 1e-6) << "the largest error relative to sum |w x|";
  // Row 20 alone (a batch of 16 padded to 32 with zeros): its outputs are the batch's.
  std::vector<float> alone(static_cast<std::size_t>(16 * kRows));
  ASSERT_TRUE(amx_bf16_product(x.data() + 20 * kCols, 16, kCols, W, alone.data(), kRows));
  for (Index o = 0; o < kRows; ++o)
    EXPECT_EQ(alone[static_cast<std::size_t>(o)], y[static_cast<std::size_t>(20 * kRows + o)]);
  // Not taken: fewer rows than a tile, a GGUF matrix (llama.cpp's own order), a width not a multiple of 32.
  EXPECT_FALSE(amx_bf16_product(x.data(), 8, kCols, W, y.data(), kRows));
  W.ggml_rounding = true;
  EXPECT_FALSE(amx_bf16_product(x.data(), kN, kCols, W, y.data(), kRows));
  W.ggml_rounding = false;
  W.cols = 80;
  EXPECT_FALSE(amx_bf16_product(x.data(), kN, 80, W, y.data(), kRows));
}

}  // namespace
}  // namespace attn::models
