#include "attn/mechanisms/blocks.h"

#include "test_util.h"

#include <cmath>

using namespace attn;
using attn::test::expect_near;
using attn::test::mat;
using attn::test::vec;

TEST(LayerNorm, NormalisesEachRowThenScalesAndShifts) {
  const Matrix x = mat({{1, 2, 3, 4}, {2, 2, 2, 2}});
  const Matrix y = layer_norm(x, vec({1, 1, 1, 1}), vec({0, 0, 0, 0}), 0.0f);
  const float sd = std::sqrt(1.25f);
  expect_near(y.row(0), mat({{-1.5f / sd, -0.5f / sd, 0.5f / sd, 1.5f / sd}}));
  const Matrix z = layer_norm(x, vec({2, 2, 2, 2}), vec({1, 1, 1, 1}));
  expect_near(z.row(1), mat({{1, 1, 1, 1}}));  // constant row: eps keeps it finite
}

TEST(Gelu, BothFormsMatchKnownValues) {
  EXPECT_NEAR(gelu(1.0f, GeluForm::Erf), 0.8413447f, 1e-6f);
  EXPECT_NEAR(gelu(-1.0f, GeluForm::Erf), -0.1586553f, 1e-6f);
  EXPECT_NEAR(gelu(1.0f, GeluForm::Tanh), 0.8411920f, 1e-6f);
  EXPECT_EQ(gelu(0.0f, GeluForm::Tanh), 0.0f);
  const Matrix x = mat({{-3, -0.5f, 0, 0.5f, 3}});
  const Matrix e = gelu(x, GeluForm::Erf);
  for (Index j = 0; j < 5; ++j) EXPECT_NEAR(e(0, j), gelu(x(0, j), GeluForm::Erf), 1e-7f);
  EXPECT_GT((gelu(x, GeluForm::Tanh) - e).cwiseAbs().maxCoeff(), 1e-5f);  // they are different functions
}

TEST(FeedForward, IsTwoLinearsAroundTheActivation) {
  const Matrix x = mat({{1, -1}});
  const Matrix W1 = mat({{1, 0}, {0, 1}, {1, 1}});
  const Matrix W2 = mat({{1, 1, 1}});
  const Matrix y = feed_forward(x, W1, vec({0, 0, 0}), W2, vec({0.5f}), Activation::Relu);
  EXPECT_NEAR(y(0, 0), 1.0f + 0.0f + 0.0f + 0.5f, 1e-6f);
}

TEST(Positions, SinusoidalMatchesThePaper) {
  const Matrix pe = sinusoidal_positions(3, 4);
  EXPECT_NEAR(pe(0, 0), 0.0f, 1e-7f);
  EXPECT_NEAR(pe(0, 1), 1.0f, 1e-7f);
  EXPECT_NEAR(pe(2, 0), std::sin(2.0f), 1e-6f);
  EXPECT_NEAR(pe(2, 3), std::cos(2.0f / 100.0f), 1e-6f);  // 10000^(2/4) = 100
}
