#include "attn/mechanisms/pooling.h"

#include "attn/mechanisms/blocks.h"
#include "test_util.h"

#include <cmath>

using namespace attn;
using attn::test::expect_near;
using attn::test::expect_rows_sum_to_one;
using attn::test::mat;

TEST(Pooling, MatchesTheFormulaByHand) {
  // W = I, b = 0, w = (1, 0): s_i = tanh(x_i0).
  PoolingWeights w{Matrix::Identity(2, 2), Vector::Zero(2), mat({{1, 0}}), {}};
  const Matrix x = mat({{1, 5}, {-1, 0}, {0, 3}});
  const PoolingResult r = attention_pooling(x, w, {});
  RowVector s(3);
  s << std::tanh(1.0f), std::tanh(-1.0f), 0.0f;
  const RowVector a = (s.array().exp() / s.array().exp().sum()).matrix();
  expect_near(r.weights, Matrix(a));
  expect_near(r.context, Matrix(a * x));
  EXPECT_EQ(r.pooled.size(), 2);
}

TEST(Pooling, MultiHeadConcatenatesOneContextPerHead) {
  const PoolingWeights w = random_pooling_weights(6, 5, 3, 10, 4);
  const Matrix x = Matrix::Random(7, 6);
  const PoolingResult r = attention_pooling(x, w, {});
  EXPECT_EQ(r.weights.rows(), 3);
  EXPECT_EQ(r.weights.cols(), 7);
  expect_rows_sum_to_one(r.weights);
  ASSERT_EQ(r.pooled.size(), 18);
  expect_near(Matrix(r.pooled.segment(6, 6)), Matrix(r.context.row(1)));
}

TEST(Pooling, PositionsChangeTheWeightsOfRepeatedInputs) {
  const PoolingWeights w = random_pooling_weights(8, 8, 1, 10, 4);
  const Matrix x = Matrix::Ones(5, 8);  // identical inputs: without positions every weight is 1/5
  PoolingParams p;
  expect_near(attention_pooling(x, w, p).weights, Matrix::Constant(1, 5, 0.2f));
  p.positions = PositionKind::Sinusoidal;
  const Matrix sin_w = attention_pooling(x, w, p).weights;
  EXPECT_GT(sin_w.maxCoeff() - sin_w.minCoeff(), 1e-3f);
  p.positions = PositionKind::Learned;
  const PoolingResult learned = attention_pooling(x, w, p);
  EXPECT_GT(learned.weights.maxCoeff() - learned.weights.minCoeff(), 1e-4f);
  // The pooled vector is a weighted sum of the inputs with their positions added.
  expect_near(learned.context, learned.weights * (x + w.positions.topRows(5)), 1e-5f);
}
