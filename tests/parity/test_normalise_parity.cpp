// Softmax and sparsemax (with temperature and causal / padding / boolean masks) against torch.
#include "cases.h"
#include "fixture.h"

#include "attn/mechanisms/normalise.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn::parity {
namespace {

class NormaliseParity : public ::testing::TestWithParam<std::string> {};

// The engine's mask for the fixture's mask kind, built with the engine's own constructor.
Matrix engine_mask(const Fixture& fx, Index n, Index m) {
  const std::string kind = fx.text("mask");
  if (kind == "none") {
    return {};
  }
  if (kind == "causal") {
    return causal_mask(n, m);
  }
  if (kind == "padding") {
    return padding_mask(n, m, fx.integer("valid_keys"));
  }
  if (kind == "boolean") {
    return mask_from(fx.input_keep("keep", n, m));
  }
  throw FixtureError(fx.path().string() + ": unknown mask kind " + kind);
}

TEST_P(NormaliseParity, MaskMatchesKeepPattern) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "normalise");
  const Matrix scores = fx.input("scores");
  const Index n = scores.rows();
  const Index m = scores.cols();
  const Matrix mask = engine_mask(fx, n, m);
  if (fx.text("mask") == "none") {
    EXPECT_EQ(mask.size(), 0);
    EXPECT_FALSE(fx.has_input("keep"));
    return;
  }
  const BoolMatrix keep = fx.input_keep("keep", n, m);
  ASSERT_EQ(mask.rows(), n);
  ASSERT_EQ(mask.cols(), m);
  for (Index r = 0; r < n; ++r) {
    for (Index c = 0; c < m; ++c) {
      if (keep(r, c)) {
        EXPECT_EQ(mask(r, c), 0.0f) << "(" << r << ", " << c << ") should be kept";
      } else {
        EXPECT_TRUE(std::isinf(mask(r, c)) && mask(r, c) < 0)
            << "(" << r << ", " << c << ") should be -inf, is " << mask(r, c);
      }
    }
  }
}

TEST_P(NormaliseParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "normalise");
  const Matrix scores = fx.input("scores");
  const Matrix expected = fx.expected("weights", scores.rows(), scores.cols());
  const auto temperature = static_cast<float>(fx.number("temperature"));
  const Matrix mask = engine_mask(fx, scores.rows(), scores.cols());
  const std::string normaliser = fx.text("normaliser");
  ASSERT_TRUE(normaliser == "softmax" || normaliser == "sparsemax") << normaliser;
  const Normaliser kind = normaliser == "softmax" ? Normaliser::Softmax : Normaliser::Sparsemax;

  const Matrix direct =
      kind == Normaliser::Softmax ? softmax_rows(scores, temperature, mask) : sparsemax_rows(scores, temperature, mask);
  EXPECT_TRUE(all_near(expected, direct)) << (kind == Normaliser::Softmax ? "softmax_rows" : "sparsemax_rows");
  EXPECT_TRUE(all_near(expected, normalise_rows(kind, scores, temperature, mask))) << "normalise_rows";

  if (kind == Normaliser::Softmax && mask.size() == 0) {
    Matrix inplace = scores;
    softmax_rows_inplace(inplace, temperature);
    EXPECT_TRUE(all_near(expected, inplace)) << "softmax_rows_inplace";
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NormaliseParity, ::testing::ValuesIn(kNormaliseCases), CaseName());

}  // namespace
}  // namespace attn::parity
