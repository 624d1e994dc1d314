#include "attn/mechanisms/normalise.h"

#include "test_util.h"

#include <cmath>
#include <limits>

using namespace attn;
using attn::test::expect_near;
using attn::test::expect_rows_sum_to_one;
using attn::test::mat;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}

TEST(Softmax, MatchesHandComputedValues) {
  const Matrix w = softmax_rows(mat({{0, std::log(3.0f)}}));
  expect_near(w, mat({{0.25f, 0.75f}}));
}

TEST(Softmax, IsStableForHugeScores) {
  const Matrix w = softmax_rows(mat({{1000, 1000}, {-1000, 0}}));
  expect_near(w, mat({{0.5f, 0.5f}, {0.0f, 1.0f}}));
}

// Non-finite scores: NaN stays NaN (the models count it and warn; a uniform or zero row would pass it off as
// attention), +inf scores share the weight equally (the limit as they grow), a fully masked row is zero.
TEST(Softmax, NonFiniteScoresAreNotPassedOffAsAttention) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Matrix w = softmax_rows(mat({{0, nan, 1}, {kInf, 0, kInf}, {-kInf, -kInf, -kInf}, {1, 1, 1}}));
  for (Index j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(w(0, j))) << j;
  expect_near(Matrix(w.bottomRows(3)), mat({{0.5f, 0.0f, 0.5f}, {0, 0, 0}, {1.f / 3, 1.f / 3, 1.f / 3}}));
}

TEST(Softmax, TemperatureSharpensAndFlattens) {
  const Matrix s = mat({{1, 2, 3}});
  const Matrix cold = softmax_rows(s, 0.1f);
  const Matrix hot = softmax_rows(s, 100.0f);
  EXPECT_GT(cold(0, 2), 0.99f);
  EXPECT_NEAR(hot(0, 0), 1.0f / 3.0f, 0.01f);
  expect_near(softmax_rows(s, 2.0f), softmax_rows(s / 2.0f));
}

TEST(Masks, CausalHidesTheFuture) {
  const Matrix m = causal_mask(3, 3);
  EXPECT_EQ(m(0, 0), 0.0f);
  EXPECT_EQ(m(0, 1), -kInf);
  EXPECT_EQ(m(2, 2), 0.0f);
  EXPECT_EQ(m(1, 2), -kInf);
  const Matrix w = softmax_rows(Matrix::Ones(3, 3), 1.0f, m);
  expect_near(w, mat({{1, 0, 0}, {0.5f, 0.5f, 0}, {1.f / 3, 1.f / 3, 1.f / 3}}));
}

TEST(Masks, CausalAlignsAtTheEndWhenKeysOutnumberQueries) {
  // Two new queries after three cached keys: query 0 sees keys 0..3.
  const Matrix m = causal_mask(2, 5);
  EXPECT_EQ(m(0, 3), 0.0f);
  EXPECT_EQ(m(0, 4), -kInf);
  EXPECT_EQ(m(1, 4), 0.0f);
}

TEST(Masks, PaddingIsRespected) {
  const Matrix w = softmax_rows(mat({{5, 1, 9, 9}}), 1.0f, padding_mask(1, 4, 2));
  EXPECT_EQ(w(0, 2), 0.0f);
  EXPECT_EQ(w(0, 3), 0.0f);
  expect_rows_sum_to_one(w);
}

TEST(Masks, FullyMaskedRowGivesZerosNotNaN) {
  Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> keep(2, 3);
  keep << true, false, true, false, false, false;
  const Matrix w = softmax_rows(mat({{1, 2, 3}, {1, 2, 3}}), 1.0f, mask_from(keep));
  EXPECT_TRUE(w.allFinite());
  EXPECT_EQ(w.row(1).sum(), 0.0f);
  EXPECT_EQ(w(0, 1), 0.0f);
  EXPECT_NEAR(w(0, 0) + w(0, 2), 1.0f, 1e-6f);
  const Matrix sp = sparsemax_rows(mat({{1, 2, 3}, {1, 2, 3}}), 1.0f, mask_from(keep));
  EXPECT_TRUE(sp.allFinite());
  EXPECT_EQ(sp.row(1).sum(), 0.0f);
}

TEST(Masks, CombineAddsAndEmptyIsIdentity) {
  const Matrix a = causal_mask(2, 2);
  EXPECT_TRUE(combine_masks(a, Matrix()) == a);
  const Matrix both = combine_masks(a, padding_mask(2, 2, 1));
  EXPECT_EQ(both(1, 1), -kInf);
  EXPECT_EQ(both(1, 0), 0.0f);
}

TEST(Sparsemax, MatchesTheSimplexProjectionByHand) {
  // z = (1, 0.5, -1): tau = 0.25 -> (0.75, 0.25, 0).
  expect_near(sparsemax_rows(mat({{1, 0.5f, -1}})), mat({{0.75f, 0.25f, 0}}));
  // A clear winner takes everything.
  expect_near(sparsemax_rows(mat({{3, 0, 0}})), mat({{1, 0, 0}}));
  // Ties share equally.
  expect_near(sparsemax_rows(mat({{2, 2, 2, 2}})), mat({{0.25f, 0.25f, 0.25f, 0.25f}}));
}

TEST(Sparsemax, RowsSumToOneAndAreSparse) {
  const Matrix s = Matrix::Random(20, 30) * 3.0f;
  const Matrix w = sparsemax_rows(s);
  expect_rows_sum_to_one(w);
  EXPECT_GT((w.array() == 0.0f).count(), 100);
  EXPECT_GE(w.minCoeff(), 0.0f);
}

TEST(Softmax, ColumnSoftmaxNormalisesColumns) {
  const Matrix w = softmax_cols(Matrix::Random(4, 3));
  for (Index j = 0; j < 3; ++j) EXPECT_NEAR(w.col(j).sum(), 1.0f, 1e-6f);
}

TEST(Softmax, MatchesADoublePrecisionReferenceOnOddLengthsAndWideRanges) {
  // Lengths that leave a scalar tail after the 8-wide vector body; scores from -80 to +80 so that many
  // exponentials underflow, which must give finite non-negative weights, never NaN.
  for (Index cols : {1, 7, 8, 9, 31, 1031}) {
    const Matrix s = Matrix::Random(13, cols) * 80.0f;
    for (float t : {0.5f, 1.0f, 3.0f}) {
      const Matrix w = softmax_rows(s, t);
      for (Index i = 0; i < s.rows(); ++i) {
        const double mx = s.row(i).cast<double>().maxCoeff();
        double sum = 0.0;
        for (Index j = 0; j < cols; ++j) sum += std::exp((s(i, j) - mx) / t);
        for (Index j = 0; j < cols; ++j) {
          const double want = std::exp((s(i, j) - mx) / t) / sum;
          ASSERT_NEAR(w(i, j), want, 2e-7 + 2e-6 * want) << cols << " cols, T " << t << " at " << i << "," << j;
          ASSERT_TRUE(std::isfinite(w(i, j)) && w(i, j) >= 0.0f);
        }
      }
    }
  }
}
