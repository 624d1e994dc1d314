#include "attn/mechanisms/scores.h"

#include "test_util.h"

#include <cmath>

using namespace attn;
using attn::test::expect_near;
using attn::test::mat;
using attn::test::vec;

TEST(Scores, DotIsQueryTimesKeyTranspose) {
  const Matrix q = mat({{1, 2}, {0, 1}});
  const Matrix k = mat({{3, 0}, {1, 1}, {-1, 2}});
  expect_near(dot_score(q, k), mat({{3, 3, 3}, {0, 1, 2}}));
}

TEST(Scores, ScaledDotDividesBySqrtD) {
  const Matrix q = mat({{1, 2, 3, 4}});
  const Matrix k = mat({{1, 1, 1, 1}});
  expect_near(scaled_dot_score(q, k), mat({{10.0f / 2.0f}}));
}

TEST(Scores, GeneralIsBilinear) {
  const Matrix q = mat({{1, 0}});
  const Matrix k = mat({{0, 1}, {1, 0}});
  const Matrix W = mat({{0, 2}, {3, 0}});  // q^T W k picks W(0,1) for k = e2
  expect_near(general_score(q, k, W), mat({{2, 0}}));
}

TEST(Scores, ConcatMatchesFormulaByHand) {
  const Matrix q = mat({{1, 0}});
  const Matrix k = mat({{0, 1}, {1, 1}});
  const Matrix W = mat({{1, 0, 0, 1}, {0, 1, 1, 0}});  // W [q; k] = (q0 + k1, q1 + k0)
  const Vector v = vec({1, -1});
  const float s0 = std::tanh(1.0f + 1.0f) - std::tanh(0.0f + 0.0f);
  const float s1 = std::tanh(1.0f + 1.0f) - std::tanh(0.0f + 1.0f);
  expect_near(concat_score(q, k, W, v), mat({{s0, s1}}));
}

TEST(Scores, AdditiveEqualsConcatWithSplitWeights) {
  const Matrix q = mat({{0.5f, -1.0f, 2.0f}, {1.0f, 0.0f, 0.0f}});
  const Matrix k = mat({{1, 2}, {-1, 0.5f}, {0, 0}, {3, 1}});
  const Matrix Wq = mat({{0.1f, 0.2f, 0.3f}, {-0.2f, 0.4f, 0.0f}});
  const Matrix Uk = mat({{0.5f, -0.5f}, {1.0f, 0.25f}});
  const Vector v = vec({0.7f, -1.3f});
  Matrix W(2, 5);
  W << Wq, Uk;
  const Matrix a = additive_score(q, k, Wq, Uk, v);
  expect_near(a, concat_score(q, k, W, v));
  // One entry by the formula.
  const float by_hand =
      (v.transpose() * (Wq * q.row(0).transpose() + Uk * k.row(3).transpose()).array().tanh().matrix())(0);
  EXPECT_NEAR(a(0, 3), by_hand, 1e-6f);
}

TEST(Scores, CosineIsScaleInvariantAndBounded) {
  const Matrix q = mat({{3, 4}, {0, 0}});
  const Matrix k = mat({{6, 8}, {-4, 3}});
  const Matrix s = cosine_score(q, k);
  EXPECT_NEAR(s(0, 0), 1.0f, 1e-6f);
  EXPECT_NEAR(s(0, 1), 0.0f, 1e-6f);
  EXPECT_TRUE(s.allFinite());  // a zero query gives zeros, not NaN
  EXPECT_NEAR(s(1, 0), 0.0f, 1e-6f);
}

TEST(Scores, LocationDependsOnQueryOnly) {
  const Matrix q = mat({{1, 2}});
  const Matrix W = mat({{1, 0}, {0, 1}, {1, 1}});
  expect_near(location_score(q, W), mat({{1, 2, 3}}));
}

TEST(Scores, DispatchAndRandomWeightsHaveTheRightShapes) {
  const Matrix q = Matrix::Random(3, 4);
  const Matrix k = Matrix::Random(5, 6);
  for (ScoreKind kind : {ScoreKind::General, ScoreKind::Concat, ScoreKind::Additive}) {
    const ScoreWeights w = random_score_weights(kind, 4, 6, 7, 1);
    const Matrix s = score(kind, q, k, w);
    EXPECT_EQ(s.rows(), 3);
    EXPECT_EQ(s.cols(), 5);
    EXPECT_TRUE(s.allFinite());
  }
  const Matrix q2 = Matrix::Random(3, 6);
  expect_near(score(ScoreKind::Dot, q2, k, {}), dot_score(q2, k));
}
