// Transformer building blocks against torch: layer norm, both GELUs, sinusoidal positions, the FFN.
#include "cases.h"
#include "fixture.h"

#include "attn/mechanisms/blocks.h"

#include <gtest/gtest.h>

namespace attn::parity {
namespace {

class LayerNormParity : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerNormParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "layer_norm");
  const Matrix x = fx.input("x");
  const Vector gamma = fx.input_vector("gamma", x.cols());
  const Vector beta = fx.input_vector("beta", x.cols());
  const auto eps = static_cast<float>(fx.number("eps"));
  const Matrix expected = fx.expected("y", x.rows(), x.cols());
  EXPECT_TRUE(all_near(expected, layer_norm(x, gamma, beta, eps))) << "layer_norm";
  Matrix inplace = x;
  layer_norm_inplace(inplace, gamma, beta, eps);
  EXPECT_TRUE(all_near(expected, inplace)) << "layer_norm_inplace";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LayerNormParity, ::testing::ValuesIn(kLayerNormCases), CaseName());

GeluForm gelu_form(const Fixture& fx) {
  const std::string form = fx.text("form");
  if (form == "erf") return GeluForm::Erf;
  if (form == "tanh") return GeluForm::Tanh;
  throw FixtureError(fx.path().string() + ": unknown GELU form " + form);
}

class GeluParity : public ::testing::TestWithParam<std::string> {};

TEST_P(GeluParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "gelu");
  const Matrix x = fx.input("x");
  const Matrix expected = fx.expected("y", x.rows(), x.cols());
  const GeluForm form = gelu_form(fx);
  EXPECT_TRUE(all_near(expected, gelu(x, form))) << "gelu(Matrix)";
  Matrix scalar(x.rows(), x.cols());
  for (Index r = 0; r < x.rows(); ++r) {
    for (Index c = 0; c < x.cols(); ++c) {
      scalar(r, c) = gelu(x(r, c), form);
    }
  }
  EXPECT_TRUE(all_near(expected, scalar)) << "gelu(float)";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GeluParity, ::testing::ValuesIn(kGeluCases), CaseName());

class SinusoidalParity : public ::testing::TestWithParam<std::string> {};

TEST_P(SinusoidalParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "sinusoidal");
  const Index n = fx.integer("n");
  const Index d = fx.integer("d");
  EXPECT_TRUE(all_near(fx.expected("positions", n, d), sinusoidal_positions(n, d)));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SinusoidalParity, ::testing::ValuesIn(kSinusoidalCases), CaseName());

class FeedForwardParity : public ::testing::TestWithParam<std::string> {};

TEST_P(FeedForwardParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "feed_forward");
  const Matrix x = fx.input("x");
  const Matrix W1 = fx.input("W1", kAny, x.cols());
  const Vector b1 = fx.input_vector("b1", W1.rows());
  const Matrix W2 = fx.input("W2", x.cols(), W1.rows());
  const Vector b2 = fx.input_vector("b2", W2.rows());
  const std::string act = fx.text("activation");
  Activation a = Activation::Relu;
  if (act == "gelu_erf") {
    a = Activation::GeluErf;
  } else if (act == "gelu_tanh") {
    a = Activation::GeluTanh;
  } else {
    ASSERT_EQ(act, "relu");
  }
  EXPECT_TRUE(all_near(fx.expected("y", x.rows(), W2.rows()), feed_forward(x, W1, b1, W2, b2, a))) << act;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FeedForwardParity, ::testing::ValuesIn(kFeedForwardCases), CaseName());

}  // namespace
}  // namespace attn::parity
